"""What ``pi-session browse`` does with a summarizer: navigate (optionally
storing a summary of the branch left) and compact. Library calls, no UI.

As in ``pi-session navigate`` and ``compact``: the plan is made on the
session read read-only, the summary is written next (a coroutine; the UI
runs it with :func:`run_in_thread`, which keeps the screen responsive and
can be cancelled), and only then is the file opened for writing. A failure
or a cancel leaves the file unchanged.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import operations
from ..operations import CompactionPlan, OperationError, SummarizerConfig, one_line
from ..storage import SessionFileError
from ..render.terminal import plural
from .actions import Outcome, open_read, open_write, save

if TYPE_CHECKING:
    from ..compaction import BranchSummaryResult
    from ..llm import Summarizer
    from ..compaction.navigation import NavigationPlan

__all__ = [
    "SummarizerConfig",
    "describe_navigation",
    "summarize_branch",
    "navigate",
    "plan_compaction",
    "describe_compaction",
    "compact",
    "run_in_thread",
]

T = TypeVar("T")


def describe_navigation(plan: NavigationPlan) -> str:
    """The confirmation text for a move: where the leaf goes, how many
    entries the branch left holds, and the text handed back for a user
    message target."""
    where = f"entry {plan.new_leaf_id}" if plan.new_leaf_id is not None else "the start of the session"
    lines = [f"Move the leaf from {plan.old_leaf_id} to {where}."]
    count = len(plan.entries_to_summarize)
    lines.append(
        f"The branch left behind has {plural(count, 'entry', 'entries')}; a summary of it can be stored at the new position."
        if plan.has_content_to_summarize
        else f"The branch left behind holds no messages ({plural(count, 'entry', 'entries')}): nothing to summarize."
        if count
        else "The branch left behind has no entries of its own: nothing to summarize."
    )
    if plan.editor_text is not None:
        lines.append("The target is a user message: the leaf goes to its parent, so the message can be sent again.")
    return "\n".join(lines)


async def summarize_branch(
    cwd: str, plan: NavigationPlan, summarizer: Summarizer, *, context_window: int = 128000
) -> BranchSummaryResult | None:
    """Summarize the branch a move leaves behind, as ``pi-session navigate
    --summarize`` does (:func:`pi_session.operations.summarize_branch` with
    the branch-summary settings of ``cwd``).

    Returns:
        The summary, or None when the branch has nothing to summarize
        (:attr:`NavigationPlan.has_content_to_summarize` is False).

    Raises:
        OperationError: the summarizer failed.
    """
    from ..llm import SummarizerError
    from ..session.settings import load_settings

    if not plan.has_content_to_summarize:
        return None
    reserve = load_settings(cwd).branch_summary.reserve_tokens
    try:
        return await operations.summarize_branch(plan, summarizer, reserve_tokens=reserve, context_window=context_window)
    except SummarizerError as exc:
        raise OperationError(f"summary failed: {one_line(str(exc))}; the session file was not changed") from None


def navigate(path: Path, entry_id: str, summary: BranchSummaryResult | None = None, plan: NavigationPlan | None = None) -> Outcome:
    """Move the leaf to ``entry_id`` and record the move as a
    ``branch_summary`` entry at the new position, with ``summary`` or empty
    (as ``pi-session navigate``: :func:`pi_session.operations.navigate_session`).

    Args:
        plan: the plan ``summary`` was written for (default: planned now);
            with a summary, nothing is written when the leaf moved since.

    Nothing is written when the leaf is already where the move would put
    it (:attr:`NavigationPlan.already_there`).

    Raises:
        OperationError: no such entry (anymore), the leaf moved, or the write failed.
    """
    if plan is None:
        try:
            plan = open_read(path).plan_navigation(entry_id)
        except KeyError as exc:  # EntryNotFoundError: one line naming the session
            raise OperationError(str(exc)) from None
    if plan.is_noop:
        return Outcome(f"already at {entry_id}", select_id=entry_id)
    if plan.already_there and summary is None:
        return Outcome(operations.already_there_message(plan), select_id=plan.old_leaf_id)
    manager = open_write(path)
    try:
        moved = operations.navigate_session(manager, plan, summary)
    except (OperationError, SessionFileError) as exc:  # SessionFileError: e.g. the file was deleted meanwhile
        raise OperationError(one_line(str(exc))) from None
    except OSError as exc:
        raise OperationError(f"{path}: {exc.strerror or exc}") from None
    notes = save(manager)
    if moved.summary_entry_id is None:
        return Outcome(f"already at {entry_id}: nothing written", notes, select_id=entry_id)
    where = moved.new_leaf_id if moved.new_leaf_id is not None else "the start of the session"
    what = "with a summary of the branch left" if summary is not None else "(an empty branch_summary entry records the move)"
    extra = list(notes)
    if moved.unanswered_tool_call_ids:
        count = len(moved.unanswered_tool_call_ids)
        extra.append(f"{plural(count, 'tool call')} at the new position {'has' if count == 1 else 'have'} no result")
    return Outcome(f"moved the leaf to {where} {what}", tuple(extra), select_id=moved.summary_entry_id)


def plan_compaction(path: Path) -> tuple[CompactionPlan | None, str]:
    """What ``pi-session compact`` would do at the leaf, with the
    compaction settings of the session's cwd
    (:func:`pi_session.operations.plan_compaction`).

    Returns:
        ``(plan, text)``: the text describes the plan for a confirmation,
        or says why there is nothing to compact (plan None).
    """
    manager = open_read(path)
    settings, _warnings = operations.compaction_settings(manager.get_cwd())
    plan = operations.plan_compaction(manager, settings, keep_source=operations.keep_recent_source(manager.get_cwd(), flag=None))
    if plan.preparation is None:
        return None, plan.reason
    return plan, describe_compaction(plan)


def describe_compaction(plan: CompactionPlan) -> str:
    """The confirmation text for a compaction plan: what is summarized, what
    is kept, the context's size (every number estimated from the messages'
    text, so they add up; pi's recorded ``tokensBefore`` counts the system
    prompt and tools too)."""
    from ..session.tokens import estimate_tokens

    prep = plan.preparation
    assert prep is not None
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    kept_items = prep.projection_entries[prep.first_kept_entry_index :]
    kept = sum(len(item["messages"]) for item in kept_items)
    kept_tokens = sum(estimate_tokens(m) for item in kept_items for m in item["messages"])
    before = sum(estimate_tokens(m) for item in prep.projection_entries for m in item["messages"])
    lines = [
        f"Summarize {plural(summarized, 'message')} of the current branch into a compaction entry "
        f"(context ~{before:,} tokens, estimated as the kept part is).",
        f"Kept verbatim from entry {prep.first_kept_entry_id}: {plural(kept, 'message')} (~{kept_tokens:,} tokens).",
    ]
    if prep.previous_summary:
        lines.append("The previous compaction summary is merged in.")
    return "\n".join(lines)


async def compact(path: Path, plan: CompactionPlan, summarizer: Summarizer) -> Outcome:
    """Summarize and write the compaction of ``plan``, as ``pi-session
    compact`` does (:func:`pi_session.operations.compact_session`): the
    file is opened for writing only once the summary is ready, and the
    entry is written only if the leaf is still where the plan was made (or
    the path continues it).

    Raises:
        OperationError: the summarizer failed or a hook cancelled; the leaf
            moved meanwhile; the write failed (the file is unchanged).
    """
    from ..compaction import CompactionCancelled
    from ..llm import SummarizerError

    try:
        done = await operations.compact_session(plan.manager or open_read(path), summarizer, plan=plan, open_writer=lambda: open_write(path))
    except SummarizerError as exc:
        raise OperationError(f"summary failed: {one_line(str(exc))}; the session file was not changed") from None
    except CompactionCancelled:
        raise OperationError("compaction cancelled; the session file was not changed") from None
    except (OperationError, SessionFileError) as exc:  # SessionFileError: e.g. the file was deleted meanwhile
        raise OperationError(one_line(str(exc))) from None
    except OSError as exc:
        raise OperationError(f"{path}: {exc.strerror or exc}") from None
    assert done is not None  # the plan has a preparation
    notes = tuple(one_line(n) for n in done.manager.notes)
    return Outcome(f"compacted: compaction entry {done.entry_id}, kept from {done.result.first_kept_entry_id}", notes, select_id=done.entry_id)


async def run_in_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` on its own event loop in a daemon
    thread and wait for it without blocking the caller's loop (the UI stays
    responsive while a summarizer works). Cancelling the wait cancels the
    coroutine in its thread (a model request is abandoned).

    Returns:
        The coroutine's result; its exception is raised here.
    """
    outer = asyncio.get_running_loop()
    done: asyncio.Future[T] = outer.create_future()
    inner = asyncio.new_event_loop()
    task = inner.create_task(make())

    def finish(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def target() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            asyncio.set_event_loop(inner)
            result = inner.run_until_complete(task)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
            error = exc
        finally:
            inner.close()
        try:
            outer.call_soon_threadsafe(finish, result, error)
        except RuntimeError:  # the waiting loop is gone (the app quit)
            pass

    threading.Thread(target=target, name="pi-session-browse-summary", daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        try:
            inner.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # finished meanwhile
            pass
        raise
