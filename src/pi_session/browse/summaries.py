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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..cli.render import plural
from .actions import ActionError, Outcome, one_line as _one_line, open_read, open_write as _open_write, save as _save

if TYPE_CHECKING:
    from ..compaction import BranchSummaryResult, CompactionPreparation, CompactionResult
    from ..llm import Summarizer
    from ..navigation import NavigationPlan

__all__ = [
    "SummarizerConfig",
    "plan_navigation",
    "describe_navigation",
    "summarize_branch",
    "navigate",
    "plan_compaction",
    "describe_compaction",
    "summarize_compaction",
    "write_compaction",
    "run_in_thread",
]

T = TypeVar("T")


@dataclass(frozen=True)
class SummarizerConfig:
    """The summarizer options of ``navigate --summarize`` and ``compact``:
    provider (None: by API key, else extractive), model, base URL, seconds
    per request and retries (None: the defaults)."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None

    def make(self) -> tuple[Summarizer, str | None]:
        """Build the summarizer as the CLI does.

        Returns:
            ``(summarizer, note)``: the note says why the extractive
            summarizer was chosen, when it was chosen for lack of a key.

        Raises:
            ActionError: unknown provider, or a provider without its key.
        """
        from ..llm import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, SummarizerError, make_summarizer

        try:
            summarizer = make_summarizer(
                self.provider,
                self.model,
                self.base_url,
                timeout=DEFAULT_TIMEOUT if self.timeout is None else self.timeout,
                max_retries=DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries,
            )
        except SummarizerError as exc:
            raise ActionError(str(exc)) from None
        return summarizer, getattr(summarizer, "fallback_reason", None)


def plan_navigation(path: Path, entry_id: str) -> NavigationPlan:
    """What moving the leaf to ``entry_id`` would do (nothing written).

    Raises:
        ActionError: no such entry.
    """
    try:
        return open_read(path).plan_navigation(entry_id)
    except KeyError:
        raise ActionError(f"{path}: no entry with id {entry_id}") from None


def describe_navigation(plan: NavigationPlan) -> str:
    """The confirmation text for a move: where the leaf goes, how many
    entries the branch left holds, and the text handed back for a user
    message target."""
    where = f"entry {plan.new_leaf_id}" if plan.new_leaf_id is not None else "the start of the session"
    lines = [f"Move the leaf from {plan.old_leaf_id} to {where}."]
    count = len(plan.entries_to_summarize)
    lines.append(
        f"The branch left behind has {plural(count, 'entry', 'entries')}; a summary of it can be stored at the new position."
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
    --summarize`` does (branch-summary settings of ``cwd``).

    Returns:
        The summary, or None when the branch has nothing to summarize.

    Raises:
        ActionError: the summarizer failed.
    """
    from ..compaction import generate_branch_summary
    from ..llm import SummarizerError
    from ..settings import load_settings

    entries = list(plan.entries_to_summarize)
    if not entries:
        return None
    reserve = load_settings(cwd).branch_summary.reserve_tokens
    try:
        return await generate_branch_summary(entries, summarizer, context_window=context_window, reserve_tokens=reserve)
    except SummarizerError as exc:
        raise ActionError(f"summary failed: {_one_line(str(exc))}; the session file was not changed") from None


def navigate(path: Path, entry_id: str, summary: BranchSummaryResult | None = None) -> Outcome:
    """Move the leaf to ``entry_id`` and record the move as a
    ``branch_summary`` entry at the new position, with ``summary`` or empty
    (as ``pi-session navigate``: a file's leaf is its last entry).

    Raises:
        ActionError: no such entry (anymore), or the write failed.
    """
    manager = _open_write(path)
    try:
        moved = manager.navigate(
            entry_id,
            summary=summary.summary if summary is not None else "",
            details=summary.details if summary is not None else None,
            usage=summary.usage if summary is not None else None,
        )
    except KeyError:
        raise ActionError(f"{path}: entry {entry_id} is gone; the session file was not changed") from None
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager)
    if moved.summary_entry_id is None:
        return Outcome(f"already at {entry_id}", notes, select_id=entry_id)
    where = moved.new_leaf_id if moved.new_leaf_id is not None else "the start of the session"
    what = "with a summary of the branch left" if summary is not None else "(an empty branch_summary entry records the move)"
    extra = list(notes)
    if moved.unanswered_tool_call_ids:
        count = len(moved.unanswered_tool_call_ids)
        extra.append(f"{plural(count, 'tool call')} at the new position {'has' if count == 1 else 'have'} no result")
    return Outcome(f"moved the leaf to {where} {what}", tuple(extra), select_id=moved.summary_entry_id)


def plan_compaction(path: Path) -> tuple[CompactionPreparation | None, str]:
    """What ``pi-session compact`` would do at the leaf, with the
    compaction settings of the session's cwd.

    Returns:
        ``(preparation, text)``: the text describes the plan for a
        confirmation, or says why there is nothing to compact
        (preparation None).
    """
    from ..compaction import prepare_compaction
    from ..settings import load_settings
    from ..tokens import estimate_tokens

    manager = open_read(path)
    settings = load_settings(manager.get_cwd()).compaction
    branch = manager.get_branch()
    prep = prepare_compaction(branch, settings)
    if prep is None:
        if not branch:
            return None, "Nothing to compact: the session is empty."
        if branch[-1].get("type") == "compaction":
            return None, "Nothing to compact: the session already ends with a compaction."
        return None, "Nothing to compact: the recent messages fit in the kept tokens (compaction.keepRecentTokens)."
    return prep, describe_compaction(prep, estimate_tokens)


def describe_compaction(prep: CompactionPreparation, estimate: Callable[[Any], int]) -> str:
    """The confirmation text for a compaction plan: what is summarized, what
    is kept, the tokens before."""
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    kept_items = prep.projection_entries[prep.first_kept_entry_index :]
    kept = sum(len(item["messages"]) for item in kept_items)
    kept_tokens = sum(estimate(m) for item in kept_items for m in item["messages"])
    lines = [
        f"Summarize {plural(summarized, 'message')} of the current branch into a compaction entry "
        f"({prep.tokens_before:,} tokens before).",
        f"Kept verbatim from entry {prep.first_kept_entry_id}: {plural(kept, 'message')} (~{kept_tokens:,} tokens).",
    ]
    if prep.previous_summary:
        lines.append("The previous compaction summary is merged in.")
    return "\n".join(lines)


async def summarize_compaction(prep: CompactionPreparation, summarizer: Summarizer) -> CompactionResult:
    """Write the compaction summary (nothing is written to the session).

    Raises:
        ActionError: the summarizer failed.
    """
    from ..compaction import CompactionCancelled, compact
    from ..llm import SummarizerError

    try:
        return await compact(prep, summarizer)
    except SummarizerError as exc:
        raise ActionError(f"summary failed: {_one_line(str(exc))}; the session file was not changed") from None
    except CompactionCancelled:
        raise ActionError("compaction cancelled; the session file was not changed") from None


def write_compaction(path: Path, result: CompactionResult) -> Outcome:
    """Append the compaction entry, as ``pi-session compact`` does.

    Raises:
        ActionError: the write failed.
    """
    manager = _open_write(path)
    try:
        new_id = manager.append_compaction_result(result)
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager)
    return Outcome(f"compacted: compaction entry {new_id}, kept from {result.first_kept_entry_id}", notes, select_id=new_id)


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
