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

__all__ = [
    "CutPointResult",
    "find_valid_cut_points",
    "find_turn_start_index",
    "find_cut_point",
    "keep_tool_calls_with_results",
]

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


def _role(entry: Mapping[str, Any]) -> str | None:
    """The role of a message entry's message; None when the message is not
    an object or its role is not a string (malformed entries)."""
    msg = entry.get("message")
    role = msg.get("role") if isinstance(msg, Mapping) else None
    return role if isinstance(role, str) else None


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
    return _finish_cut(entries, start, cut)


def _finish_cut(entries: Sequence[Mapping[str, Any]], start: int, cut: int) -> CutPointResult:
    """Move a cut back over non-message entries and work out its turn."""
    while cut > start:
        prev_type = entries[cut - 1].get("type")
        if prev_type in ("compaction", "message"):
            break
        cut -= 1
    cut_entry = entries[cut]
    is_user = cut_entry.get("type") == "message" and _role(cut_entry) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut, start)
    return CutPointResult(cut, turn_start, not is_user and turn_start != -1)


def _tool_call_ids(entry: Mapping[str, Any]) -> list[str]:
    if entry.get("type") != "message":
        return []
    msg = entry.get("message")
    if not isinstance(msg, Mapping) or msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
        return []
    return [
        b["id"]
        for b in msg["content"]
        if isinstance(b, Mapping) and b.get("type") == "toolCall" and isinstance(b.get("id"), str)
    ]


def keep_tool_calls_with_results(
    entries: Sequence[Mapping[str, Any]], start: int, end: int, cut: CutPointResult
) -> CutPointResult:
    """Beyond pi: move a cut back so that no kept tool result loses its call.

    pi never cuts at a tool result, but a user or bashExecution message
    standing between a tool call and its result (a hand edit, an extension,
    a steering message) can still be a cut point, and the kept result then
    answers a call that was summarized away, which model APIs reject. When
    a tool result at or after the cut answers a call made in ``[start,
    cut)``, the cut moves back to the assistant message holding the earliest
    such call (then over non-message entries, as pi does), and the turn is
    worked out again. Calls before ``start`` were summarized by an earlier
    compaction and cannot be brought back; the provider adapters repair
    those.

    Returns:
        ``cut`` itself when no result is orphaned (pi's choice), else the
        moved cut.
    """
    kept_results: set[str] = set()
    for entry in entries[cut.first_kept_entry_index : end]:
        if entry.get("type") == "message":
            msg = entry.get("message")
            if isinstance(msg, Mapping) and msg.get("role") == "toolResult" and isinstance(msg.get("toolCallId"), str):
                kept_results.add(msg["toolCallId"])
    if not kept_results:
        return cut
    earliest = None
    for i in range(cut.first_kept_entry_index - 1, start - 1, -1):
        if any(call_id in kept_results for call_id in _tool_call_ids(entries[i])):
            earliest = i
    if earliest is None:
        return cut
    return _finish_cut(entries, start, earliest)
