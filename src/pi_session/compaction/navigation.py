"""Tree navigation as pi 1.6's ``AgentSession.navigateTree`` does it:
where the leaf goes when the user picks an entry, and what the branch left
behind holds for a summary.

:func:`plan_navigation` is pure (it reads a session tree, writes nothing);
:meth:`pi_session.SessionManager.navigate` applies a plan and does the I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .branch_summary import collect_entries_for_branch_summary, prepare_branch_entries
from ..session.context import text_content
from ..errors import PiSessionError
from ..session.tree import parent_id_of
from ..entries.questions import BRANCH_SUMMARY, CUSTOM_MESSAGE, MESSAGE, USER

__all__ = ["NavigationPlan", "NavigationResult", "EntryNotFoundError", "plan_navigation", "navigation_target", "is_move_marker"]


def is_move_marker(entry: Mapping[str, Any]) -> bool:
    """True for an empty ``branch_summary``: the record of a move without a
    summary (a file's leaf is its last entry), which pi leaves out of the
    context."""
    return entry.get("type") == BRANCH_SUMMARY and not entry.get("summary")


class EntryNotFoundError(PiSessionError, KeyError):
    """A move to an entry the session does not hold
    (:meth:`pi_session.SessionManager.plan_navigation`); a ``KeyError`` too.
    ``str(error)`` is the one line, naming the session and the id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class NavigationPlan:
    """What moving to ``target_id`` would do, before anything is written.

    Attributes:
        target_id: the entry the user picked.
        old_leaf_id: the leaf before the move (None: an empty position).
        new_leaf_id: where the leaf goes: the target's parent for a user
            message or a ``custom_message`` target (None: before the first
            entry), else the target itself; the old leaf when the target is
            the leaf (:attr:`is_noop`).
        editor_text: for a user message or ``custom_message`` target, its
            text (text blocks joined), handed back for editing; else None
            (also None for a no-op).
        entries_to_summarize: the entries of the branch left behind, from
            just below the deepest common ancestor down to the old leaf,
            oldest first (pi's ``collectEntriesForBranchSummary``); empty when
            the target is the leaf.
        common_ancestor_id: the deepest entry on both paths, or None.
        already_there: the leaf is already where the move would put it:
            the old leaf is ``new_leaf_id``, or an empty ``branch_summary``
            below it (the record of an earlier move, left out of the
            context; a chain of them counts the same). Moving would change
            neither the context nor the position, so
            :func:`pi_session.operations.navigate_session` writes nothing
            (pi, whose moves without a summary write nothing, ends in the
            same place). False for :attr:`is_noop`.
    """

    target_id: str
    old_leaf_id: str | None
    new_leaf_id: str | None
    editor_text: str | None
    entries_to_summarize: tuple[Mapping[str, Any], ...] = ()
    common_ancestor_id: str | None = None
    already_there: bool = False

    @property
    def summarizable_entries(self) -> tuple[Mapping[str, Any], ...]:
        """:attr:`entries_to_summarize` without the empty ``branch_summary``
        entries that record earlier moves (they hold no text)."""
        return tuple(e for e in self.entries_to_summarize if not is_move_marker(e))

    @property
    def has_content_to_summarize(self) -> bool:
        """True when the branch left holds a message to summarize (pi's
        ``prepareBranchEntries`` finds one in :attr:`summarizable_entries`);
        False for a branch of only labels, state changes or the empty
        records of earlier moves: a summary of it would say nothing."""
        return bool(self.summarizable_entries) and bool(prepare_branch_entries(self.summarizable_entries).messages)

    @property
    def is_noop(self) -> bool:
        """True when the target is the leaf: pi does nothing then."""
        return self.target_id == self.old_leaf_id


@dataclass(frozen=True)
class NavigationResult:
    """What :meth:`pi_session.SessionManager.navigate` did.

    Attributes:
        target_id: the entry the user picked.
        old_leaf_id: the leaf before the move.
        new_leaf_id: the leaf position the move chose (see
            :class:`NavigationPlan`); when a ``branch_summary`` was
            appended, the manager's leaf is that entry, a child of it.
        summary_entry_id: the appended ``branch_summary`` entry's id, or None
            (nothing appended: no summary given, or the target was the leaf).
        editor_text: as in :class:`NavigationPlan`.
        summarized_entry_ids: ids of the plan's ``entries_to_summarize`` when
            a non-empty summary was stored, else empty.
        unanswered_tool_call_ids: ids of tool calls in the context at the new
            position that get no result in position (e.g. answered on the
            branch left behind); provider adapters answer them with an error.
    """

    target_id: str
    old_leaf_id: str | None
    new_leaf_id: str | None
    summary_entry_id: str | None
    editor_text: str | None
    summarized_entry_ids: tuple[str, ...] = ()
    unanswered_tool_call_ids: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self, *, leaf_id: str | None, summary_entry: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The move as ``pi-session navigate --json`` prints it.

        Args:
            leaf_id: the session's leaf after the move (the appended
                ``branch_summary`` entry, when one was).
            summary_entry: the ``branch_summary`` entry holding a summary,
                or None (no summary, or the empty record of a move).

        Returns:
            ``oldLeafId``, ``newLeafId`` (``leaf_id``), ``targetId``,
            ``summaryEntry``, ``editorText``, ``summarizedEntryIds``,
            ``unansweredToolCalls``.
        """
        return {
            "oldLeafId": self.old_leaf_id,
            "newLeafId": leaf_id,
            "targetId": self.target_id,
            "summaryEntry": summary_entry,
            "editorText": self.editor_text,
            "summarizedEntryIds": list(self.summarized_entry_ids),
            "unansweredToolCalls": list(self.unanswered_tool_call_ids),
        }


def navigation_target(target: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Where the leaf goes for ``target`` (pi's ``navigateTree``).

    Args:
        target: the picked entry.

    Returns:
        ``(new_leaf_id, editor_text)``: for a user message or a
        ``custom_message``, its parent's id (None for a root) and its text;
        for any other entry, its own id and None.
    """
    if target.get("type") == MESSAGE:
        message = target.get("message")
        if isinstance(message, dict) and message.get("role") == USER:
            return parent_id_of(target), text_content(message.get("content"))
    elif target.get("type") == CUSTOM_MESSAGE:
        return parent_id_of(target), text_content(target.get("content"))
    return target.get("id"), None


def plan_navigation(source: Any, old_leaf_id: str | None, target_id: str) -> NavigationPlan:
    """Plan a move from ``old_leaf_id`` to ``target_id`` without writing.

    Args:
        source: a ``SessionManager`` (``get_branch``/``get_entry``) or a
            :class:`pi_session.session.tree.SessionTree` (``branch``/``by_id``).
        old_leaf_id: the current leaf (None: an empty position).
        target_id: the entry to move to.

    Returns:
        A :class:`NavigationPlan`.

    Raises:
        KeyError: ``target_id`` is not an entry of the session.
    """
    target = source.get_entry(target_id) if hasattr(source, "get_entry") else source.by_id.get(target_id)
    if target is None:
        raise KeyError(f"Entry {target_id} not found")
    if target_id == old_leaf_id:  # pi does nothing: the leaf stays
        return NavigationPlan(target_id, old_leaf_id, old_leaf_id, None)
    new_leaf_id, editor_text = navigation_target(target)
    collected = collect_entries_for_branch_summary(source, old_leaf_id, target_id)
    return NavigationPlan(
        target_id,
        old_leaf_id,
        new_leaf_id,
        editor_text,
        tuple(collected.entries),
        collected.common_ancestor_id,
        _position(source, old_leaf_id) == new_leaf_id,
    )


def _position(source: Any, leaf_id: str | None) -> str | None:
    """Where ``leaf_id`` stands once the empty ``branch_summary`` records of
    earlier moves below it are skipped."""
    get = source.get_entry if hasattr(source, "get_entry") else source.by_id.get
    seen: set[str] = set()
    while leaf_id is not None and leaf_id not in seen:
        entry = get(leaf_id)
        if entry is None or not is_move_marker(entry):
            break
        seen.add(leaf_id)
        leaf_id = parent_id_of(entry)
    return leaf_id
