"""Navigation with a branch summary: plan, summarize the branch left,
move (the summary only on the planned leaf)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..manager import SessionManager
from .errors import LeafMoved, OperationError

if TYPE_CHECKING:
    from ..compaction import BranchSummaryResult
    from ..llm import Summarizer
    from ..navigation import NavigationPlan, NavigationResult

__all__ = ["plan_navigation", "summarize_branch", "navigate_session"]


def plan_navigation(manager: SessionManager, entry_id: str) -> NavigationPlan:
    """What moving the leaf to ``entry_id`` would do (pi's ``navigateTree``
    plan; nothing written).

    Raises:
        OperationError: no such entry.
    """
    try:
        return manager.plan_navigation(entry_id)
    except KeyError:
        raise OperationError(f"{manager.get_session_location()}: no entry with id {entry_id}") from None


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

    Returns:
        The summary, or None when the branch has nothing to summarize.

    Raises:
        pi_session.llm.SummarizerError: the summarizer failed.
    """
    from ..compaction import generate_branch_summary

    entries = list(plan.entries_to_summarize)
    if plan.is_noop or not entries:
        return None
    return await generate_branch_summary(
        entries,
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

    Raises:
        LeafMoved: with a summary, the leaf moved (nothing written).
        OperationError: the target is gone.
        OSError: the write failed.
    """
    if summary is not None and writer.get_leaf_id() != plan.old_leaf_id:
        raise LeafMoved(writer.get_session_location(), plan.old_leaf_id, writer.get_leaf_id(), by_other_writer=True, what="branch summary")
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
