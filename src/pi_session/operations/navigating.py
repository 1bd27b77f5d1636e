"""Navigation with a branch summary: plan, summarize the branch left,
move (the summary only on the planned leaf)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..manager.session_manager import SessionManager
from ..session.context_edits import edits_left_out
from ..core.text import plural
from .errors import LeafMovedError, OperationError

if TYPE_CHECKING:
    from ..compaction import BranchSummaryResult
    from ..llm import Summarizer
    from ..compaction.navigation import NavigationPlan, NavigationResult

__all__ = ["summarize_branch", "navigate_session", "already_there_message", "clone_warning"]


async def summarize_branch(
    plan: NavigationPlan,
    summarizer: Summarizer,
    *,
    reserve_tokens: int,
    context_window: int = 128000,
    custom_instructions: str | None = None,
) -> BranchSummaryResult | None:
    """Summarize the branch a move leaves behind (pi's
    ``generateBranchSummary`` over the plan's ``entries_to_summarize``,
    within ``context_window`` minus ``reserve_tokens``, in tokens).

    The empty ``branch_summary`` records of earlier moves are left out of
    what is summarized: they hold no text.

    Returns:
        The summary, or None (no summarizer call) when the branch has
        nothing to summarize (:attr:`NavigationPlan.has_content_to_summarize`
        is False: no entries, or only labels, state changes and empty
        records of earlier moves). pi 1.6 would store "No content to
        summarize" then; pi-session stores no summary.

    Raises:
        pi_session.llm.SummarizerError: the summarizer failed.
    """
    from ..compaction import generate_branch_summary

    if plan.is_noop or not plan.has_content_to_summarize:
        return None
    return await generate_branch_summary(
        list(plan.summarizable_entries),
        summarizer,
        context_window=context_window,
        reserve_tokens=reserve_tokens,
        custom_instructions=custom_instructions,
    )


def navigate_session(writer: SessionManager, plan: NavigationPlan, summary: BranchSummaryResult | None = None) -> NavigationResult:
    """Move the leaf to the plan's target and record the move as a
    ``branch_summary`` entry at the new position, with ``summary`` or empty
    (pi leaves an empty one out of the context; a file's leaf is its last
    entry, so the move must be an entry). With a summary, the leaf must
    still be the planned one: a summary of a branch is never written after
    another branch (same policy as :func:`commit_compaction`).

    Nothing is written when the leaf is already where the move would put it
    (:attr:`NavigationPlan.already_there`, e.g. the second of two moves to
    the same entry) and there is no summary: the result's
    ``summary_entry_id`` is None and the writer's leaf stays.

    Raises:
        LeafMovedError: with a summary, the leaf moved (nothing written).
        OperationError: the target is gone.
        OSError: the write failed.
    """
    if summary is not None and writer.get_leaf_id() != plan.old_leaf_id:
        raise LeafMovedError(writer.get_session_location() or "<session>", plan.old_leaf_id, writer.get_leaf_id(), 0, by_other_writer=True, what="branch summary")
    if summary is None:
        if writer.get_leaf_id() != plan.old_leaf_id:  # planned on an older read: the move from the leaf as it is now
            try:
                plan = writer.plan_navigation(plan.target_id)
            except KeyError as exc:  # EntryNotFoundError: one line naming the session
                raise OperationError(str(exc)) from None
        if plan.already_there:
            from ..adapters import unanswered_tool_calls
            from ..compaction.navigation import NavigationResult

            unanswered = unanswered_tool_calls(writer.build_session_context()["messages"])
            return NavigationResult(
                plan.target_id, plan.old_leaf_id, plan.new_leaf_id, None, plan.editor_text,
                unanswered_tool_call_ids=tuple(u["toolCallId"] for u in unanswered),
            )
    try:
        return writer.navigate(
            plan.target_id,
            summary=summary.summary if summary is not None else "",
            details=summary.details if summary is not None else None,
            usage=summary.usage if summary is not None else None,
        )
    except KeyError:
        raise OperationError(
            f"{writer.get_session_location()}: entry {plan.new_leaf_id or plan.target_id} is gone; the session file was not changed"
        ) from None


def already_there_message(plan: NavigationPlan) -> str:
    """What a move to where the leaf already is says (nothing is written;
    :attr:`NavigationPlan.already_there`), for the CLI and ``browse``."""
    where = f"entry {plan.new_leaf_id}" if plan.new_leaf_id is not None else "the start of the session"
    below = f" (below the empty record of an earlier move, {plan.old_leaf_id})" if plan.old_leaf_id != plan.new_leaf_id else ""
    return f"already at {where}: the leaf is where this move would put it{below}; nothing written"


def clone_warning(manager: SessionManager, entry_id: str) -> str | None:
    """The warning for a clone of the path root→``entry_id``, or None: the
    context edits it leaves out of entries it keeps
    (:func:`pi_session.session.context_edits.edits_left_out`), whose original (e.g.
    redacted) content the clone's model context shows again."""
    left_out = edits_left_out(manager.get_branch(entry_id), manager.get_entries_of_type("context_edit"))
    if not left_out:
        return None
    targets = sorted({str(e["targetId"]) for e in left_out})
    replaced = any(e.get("replacement") is not None for e in left_out)
    omitted = any(e.get("replacement") is None for e in left_out)
    how = " or ".join(w for w, yes in (("replaced", replaced), ("omitted", omitted)) if yes)
    return (
        f"the clone leaves out {plural(len(left_out), 'context edit')} ({', '.join(str(e.get('id')) for e in left_out)}) "
        f"that {how} {plural(len(targets), 'entry', 'entries')} it keeps ({', '.join(targets)}): the clone's model "
        "context shows their original content again (e.g. a redacted secret); clone a later entry, or edit the clone"
    )
