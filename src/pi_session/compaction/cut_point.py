"""Where to cut a session for compaction (pi's ``findCutPoint`` and helpers).

All indices are positions in the ``entries`` list given (normally the
root→leaf path); token counts are :func:`pi_session.tokens.estimate_tokens`
estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..tokens import estimate_tokens

__all__ = ["CutPointResult", "find_valid_cut_points", "find_turn_start_index", "find_cut_point"]

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True)
class CutPointResult:
    """Result of :func:`find_cut_point`.

    Attributes:
        first_kept_entry_index: index of the first entry kept verbatim.
        turn_start_index: for a split turn, index of the entry that started
            the turn; -1 otherwise.
        is_split_turn: the cut falls inside a turn (not at a user message).
    """

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool

    def to_json(self) -> dict[str, Any]:
        """``{firstKeptEntryIndex, turnStartIndex, isSplitTurn}`` as pi names them."""
        return {
            "firstKeptEntryIndex": self.first_kept_entry_index,
            "turnStartIndex": self.turn_start_index,
            "isSplitTurn": self.is_split_turn,
        }


def _role(entry: Mapping[str, Any]) -> Any:
    msg = entry.get("message")
    return msg.get("role") if isinstance(msg, Mapping) else None


def find_valid_cut_points(entries: Sequence[Mapping[str, Any]], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where a kept region may begin: message
    entries holding a user, assistant, bashExecution, custom, branchSummary
    or compactionSummary message, and ``custom_message`` and
    ``branch_summary`` entries. Never a toolResult (it must follow its call)."""
    points = []
    for i in range(start, end):
        entry = entries[i]
        etype = entry.get("type")
        if etype == "message":
            if _role(entry) in _CUT_ROLES:
                points.append(i)
        elif etype in ("branch_summary", "custom_message"):
            points.append(i)
    return points


def find_turn_start_index(entries: Sequence[Mapping[str, Any]], entry_index: int, start: int) -> int:
    """Index of the entry that started the turn containing ``entry_index``:
    the nearest entry at or before it (not before ``start``) that is a user
    or bashExecution message, a ``custom_message`` or a ``branch_summary``;
    -1 if none."""
    for i in range(entry_index, start - 1, -1):
        entry = entries[i]
        etype = entry.get("type")
        if etype in ("branch_summary", "custom_message"):
            return i
        if etype == "message" and _role(entry) in _TURN_START_ROLES:
            return i
    return -1


def find_cut_point(
    entries: Sequence[Mapping[str, Any]], start: int, end: int, keep_recent_tokens: int
) -> CutPointResult:
    """Choose the cut keeping about ``keep_recent_tokens`` tokens (pi's
    ``findCutPoint``).

    Walks message entries in ``[start, end)`` from the newest, summing
    estimates; at the first entry where the sum reaches ``keep_recent_tokens``
    the cut is the first valid cut point at or after it (if the sum never
    reaches it, the first valid cut point). The cut then moves back over
    non-message entries (model changes, labels, ...), stopping at a message
    or a compaction. A cut not at a user message splits a turn when a turn
    start is found before it.

    Returns:
        A :class:`CutPointResult`; with no valid cut point in the range,
        ``(start, -1, False)``.
    """
    points = find_valid_cut_points(entries, start, end)
    if not points:
        return CutPointResult(start, -1, False)
    cut = points[0]
    total = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":
            continue
        msg = entry.get("message")
        total += estimate_tokens(msg if isinstance(msg, Mapping) else {})
        if total >= keep_recent_tokens:
            for p in points:
                if p >= i:
                    cut = p
                    break
            break
    while cut > start:
        prev_type = entries[cut - 1].get("type")
        if prev_type in ("compaction", "message"):
            break
        cut -= 1
    cut_entry = entries[cut]
    is_user = cut_entry.get("type") == "message" and _role(cut_entry) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut, start)
    return CutPointResult(cut, turn_start, not is_user and turn_start != -1)
