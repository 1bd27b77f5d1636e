"""Where to cut a session for compaction (pi 1.6's ``findCutPoint``, its
projected cut, and helpers).

Two flavours share the rules (pi 1.6 compaction):

- the raw cut (:func:`find_cut_point`, pi's exported ``findCutPoint``) over
  raw entries, each seen through the messages it contributes before context
  edits (:func:`pi_session.session.context.entry_messages`, compactions included);
- the projected cut (:func:`find_projected_cut_point`, what pi 1.6's
  ``prepareCompaction`` uses; pi does not export it) over the items of a
  :func:`pi_session.session.context.build_session_projection` — messages after
  edits, so an omitted entry is neither a cut point nor a turn start and
  adds no tokens — with pi 1.6's recovery-omission rule (a cut that would
  keep only an omitted failed attempt moves past it).

Rules: cut points are entries (not compactions) with a user, assistant,
bashExecution, custom, branchSummary or compactionSummary message; turn
starts are entries (not compactions) with a user, bashExecution, custom,
branchSummary or compactionSummary message. Walking back from the end, every
entry's message tokens count (custom_message, branch_summary and compaction
entries too); at the first entry where the sum reaches the budget the cut is
the first cut point at or after it, else the **last** cut point. The cut
then moves back over entries without messages, stopping at a compaction. A
cut at a turn start never splits a turn.

All indices are positions in the list given; token counts are
:func:`pi_session.session.tokens.estimate_tokens` estimates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..session.context import entry_messages, projected_messages
from ..entries import CUT_POINT_ROLES, TURN_START_ROLES
from ..entries.questions import MESSAGE, SYSTEM, is_assistant, is_compaction, is_context_edit, is_message, is_system, is_tool_result
from ..session.tokens import estimate_tokens
from ..entries.records import UNDEFINED

__all__ = [
    "CutPointResult",
    "find_valid_cut_points",
    "find_turn_start_index",
    "find_cut_point",
    "find_projected_cut_point",
    "keep_tool_calls_with_results",
    "keep_projected_tool_calls_with_results",
    "EntryView",
    "ItemsView",
    "EntriesView",
    "cut_in_view",
    "kept_result_ids",
    "keep_pairs_in_view",
]



@dataclass(frozen=True)
class CutPointResult:
    """Result of :func:`find_cut_point` / :func:`find_projected_cut_point`.

    Attributes:
        first_kept_entry_index: index of the first entry kept verbatim.
        turn_start_index: for a split turn, index of the entry that started
            the turn; -1 otherwise.
        is_split_turn: the cut falls inside a turn (the cut entry does not
            start a turn and a turn start precedes it in the range).
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


def _is_map(value: Any) -> bool:
    """An object (a dict, fast, or any mapping)."""
    return value.__class__ is dict or (value is not None and isinstance(value, Mapping))


def _roles(messages: Sequence[Any]) -> list[str]:
    """The string roles of ``messages`` (a malformed role, e.g. a list, is
    no role)."""
    out = []
    for m in messages:
        role = m.get("role") if _is_map(m) else None
        if isinstance(role, str):
            out.append(role)
    return out


class EntryView:
    """A sequence of entries seen as (source entry, messages) pairs.

    Subclasses say where the messages come from (:meth:`messages_of`); the
    searches below only look at the entries they need, so a cut near the
    end of a long path costs little."""

    sources: Sequence[Mapping[str, Any]]

    def messages_of(self, i: int) -> Sequence[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def iter_messages(self, begin: int, end: int) -> Iterator[tuple[int, Any]]:
        """(index, message) for every message of the entries in
        ``[begin, end)``, in order."""
        for i in range(begin, end):
            for m in self.messages_of(i):
                yield i, m

    def messages_in(
        self, begin: int, end: int, *, without_system: bool = False, visit: Callable[[Any], None] | None = None
    ) -> list[Any]:
        """The messages of the entries in ``[begin, end)`` as one list,
        ``system`` ones left out if asked; ``visit`` is called on each."""
        out = [
            m
            for _i, m in self.iter_messages(begin, end)
            if not (without_system and is_system(m))
        ]
        if visit is not None:
            for m in out:
                visit(m)
        return out

    def is_compaction(self, i: int) -> bool:
        return is_compaction(self.sources[i])

    def is_cut_point(self, i: int) -> bool:
        return not self.is_compaction(i) and any(r in CUT_POINT_ROLES for r in _roles(self.messages_of(i)))

    def is_turn_start(self, i: int) -> bool:
        return not self.is_compaction(i) and any(r in TURN_START_ROLES for r in _roles(self.messages_of(i)))

    def tokens(self, i: int) -> int:
        return sum(estimate_tokens(m) for m in self.messages_of(i))


class ItemsView(EntryView):
    """Projection items ``[{"sourceEntry", "messages"}, ...]`` as given."""

    def __init__(self, items: Sequence[Mapping[str, Any]]) -> None:
        self.items = items
        self.sources = [item["sourceEntry"] for item in items]

    def messages_of(self, i: int) -> Sequence[Any]:
        return self.items[i]["messages"]


class EntriesView(EntryView):
    """Entries whose messages are worked out when asked for, never kept:
    :func:`pi_session.session.context.projected_messages` with ``edits`` (none for
    raw entries); ``leading`` is every entry (raw: compactions count their
    summary wherever they are) or only the first (a projection)."""

    def __init__(
        self, sources: Sequence[Mapping[str, Any]], edits: Mapping[Any, Any], *, all_leading: bool
    ) -> None:
        self.sources = sources
        self.edits = edits
        self.all_leading = all_leading

    def messages_of(self, i: int) -> list[dict[str, Any]]:
        return projected_messages(self.sources[i], self.edits, leading=self.all_leading or i == 0)

    def messages_in(
        self, begin: int, end: int, *, without_system: bool = False, visit: Callable[[Any], None] | None = None
    ) -> list[Any]:
        """As :meth:`EntryView.messages_in`, with ``visit`` called on each
        message put in the list (in order), so that a caller reading the
        messages anyway (compaction planning lists their file operations)
        makes no second pass over them."""
        out: list[Any] = []
        append = out.append
        sources = self.sources
        edits = self.edits
        for i in range(begin, end):
            entry = sources[i]
            # fast path: an unedited message entry contributes its message as it is
            if entry.get("type") == MESSAGE:
                msg = entry.get("message")
                if msg.__class__ is dict and msg.get("content") is not None:
                    eid = entry.get("id") if edits else None
                    if not edits or eid.__hash__ is None or eid not in edits:
                        if not (without_system and msg.get("role") == SYSTEM):
                            append(msg)
                            if visit is not None:
                                visit(msg)
                        continue
            for m in self.messages_of(i):
                if not (without_system and is_system(m)):
                    append(m)
                    if visit is not None:
                        visit(m)
        return out


def _raw_view(entries: Sequence[Mapping[str, Any]]) -> EntryView:
    return EntriesView(entries, {}, all_leading=True)


def _projected_view(items: Sequence[Mapping[str, Any]]) -> EntryView:
    return ItemsView(items)


def find_valid_cut_points(entries: Sequence[Mapping[str, Any]], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where a kept region may begin (pi 1.6):
    entries other than compactions that contribute a user, assistant,
    bashExecution, custom, branchSummary or compactionSummary message
    (message, custom_message and non-empty branch_summary entries). Never a
    toolResult (it must follow its call) nor a system message."""
    view = _raw_view(entries)
    return [i for i in range(start, end) if view.is_cut_point(i)]


def find_turn_start_index(entries: Sequence[Mapping[str, Any]], entry_index: int, start: int) -> int:
    """Index of the entry that started the turn containing ``entry_index``
    (pi 1.6's ``findTurnStartIndex``): the nearest entry at or before it
    (not before ``start``) that is not a compaction and contributes a user,
    bashExecution, custom, branchSummary or compactionSummary message; -1
    if none."""
    return _turn_start(_raw_view(entries), entry_index, start)


def _turn_start(view: EntryView, entry_index: int, start: int) -> int:
    for i in range(entry_index, start - 1, -1):
        if view.is_turn_start(i):
            return i
    return -1


def find_cut_point(
    entries: Sequence[Mapping[str, Any]], start: int, end: int, keep_recent_tokens: int
) -> CutPointResult:
    """Choose the cut keeping about ``keep_recent_tokens`` tokens of raw
    entries (pi 1.6's exported ``findCutPoint``; see the module docs for the
    rules). Entries are seen through their messages before context edits;
    compaction entries count their summary (and snapshot) tokens but are
    never cut points or turn starts.

    Returns:
        A :class:`CutPointResult`; with no valid cut point in the range,
        ``(start, -1, False)``.
    """
    return cut_in_view(_raw_view(entries), start, end, keep_recent_tokens, projected=False)


def find_projected_cut_point(
    items: Sequence[Mapping[str, Any]], start: int, end: int, keep_recent_tokens: int
) -> CutPointResult:
    """The cut pi 1.6's ``prepareCompaction`` makes, over
    the items ``[{"sourceEntry", "messages"}, ...]`` of a session projection
    (messages after context edits).

    The rules of :func:`find_cut_point`, plus one between the budget walk and
    the move back: when the budget was reached and every item after the cut
    is either intrinsically invisible (its entry contributes no messages even
    before edits, or is a ``context_edit``) or omitted by an edit, at least
    one omitted item is an assistant message, none is a compaction, and no
    ``context_edit`` after the cut replaces (non-null) an entry outside that
    omitted set, the cut moves to the next item: the last visible input
    (typically the prompt whose answer failed and was omitted) is then
    summarized as a split-turn prefix instead of kept.

    Returns:
        A :class:`CutPointResult` of item indices.
    """
    return cut_in_view(_projected_view(items), start, end, keep_recent_tokens, projected=True)


def cut_in_view(view: EntryView, start: int, end: int, keep: int, *, projected: bool) -> CutPointResult:
    """The cut point of ``view`` in ``[start, end)`` keeping at least
    ``keep`` tokens (pi 1.6 findCutPoint): walking back from the end, the
    first cut point at or after the entry where the kept tokens reach
    ``keep`` (else the last one before it); all of the range when it never
    does. ``projected``: a trailing recovery-omission entry moves the cut
    one further. Indices are the view's."""
    cut = -1
    total = 0
    exceeded = False
    for i in range(end - 1, start - 1, -1):
        tokens = view.tokens(i)
        if tokens == 0:
            continue
        total += tokens
        if total >= keep:
            exceeded = True
            # the first cut point at or after i, else the last one (before i)
            cut = _next_cut_point(view, i, end)
            if cut < 0:
                cut = _previous_cut_point(view, i - 1, start)
            break
    if not exceeded:
        cut = _next_cut_point(view, start, end)
    if cut < 0:  # no cut point in the range
        return CutPointResult(start, -1, False)
    if projected and exceeded and _recovery_omission_suffix(view, cut + 1, end):
        cut += 1
    return _finish_cut(view, start, cut)


def _next_cut_point(view: EntryView, begin: int, end: int) -> int:
    """The first cut point in ``[begin, end)``, or -1."""
    for i in range(begin, end):
        if view.is_cut_point(i):
            return i
    return -1


def _previous_cut_point(view: EntryView, last: int, start: int) -> int:
    """The last cut point in ``[start, last]``, or -1."""
    for i in range(last, start - 1, -1):
        if view.is_cut_point(i):
            return i
    return -1


def _recovery_omission_suffix(view: EntryView, begin: int, end: int) -> bool:
    """pi 1.6 prepareCompaction's recovery-omission rule: the items in ``[begin, end)`` are only a failed attempt that was
    omitted from the context, and the edits that omitted it."""

    def intrinsically_visible(i: int) -> bool:
        source = view.sources[i]
        return not is_context_edit(source) and bool(entry_messages(source, leading=True))

    def omitted(i: int) -> bool:
        return intrinsically_visible(i) and not view.messages_of(i)

    suffix = range(begin, end)
    omitted_ids = {view.sources[i].get("id") for i in suffix if omitted(i)}
    for i in suffix:
        source = view.sources[i]
        if is_context_edit(source) and source.get("replacement", UNDEFINED) is not None:
            target = source.get("targetId")
            if target.__hash__ is None or target not in omitted_ids:
                return False
    has_omitted_assistant = False
    for i in suffix:
        source = view.sources[i]
        if is_compaction(source) or (intrinsically_visible(i) and not omitted(i)):
            return False
        if is_message(source) and omitted(i):
            if is_assistant(source.get("message")):
                has_omitted_assistant = True
    return has_omitted_assistant




def _finish_cut(view: EntryView, start: int, cut: int) -> CutPointResult:
    """Move a cut back over entries without messages (stopping at a
    compaction) and work out its turn."""
    while cut > start:
        prev = cut - 1
        if view.is_compaction(prev) or view.messages_of(prev):
            break
        cut -= 1
    if cut >= len(view.sources):
        return CutPointResult(cut, -1, False)
    if view.is_turn_start(cut):
        return CutPointResult(cut, -1, False)
    turn_start = _turn_start(view, cut, start)
    return CutPointResult(cut, turn_start, turn_start != -1)


def kept_result_ids(view: EntryView, begin: int, end: int) -> set[str]:
    """The (string) ``toolCallId`` of every toolResult message in ``[begin,
    end)`` that no assistant message earlier in that range called: the kept
    results whose call, if anywhere, was made before ``begin``. A result
    answering a call kept with it does not count, even when an earlier,
    summarized call used the same id (some providers reuse ids)."""
    called: set[str] = set()
    ids: set[str] = set()
    for _i, msg in view.iter_messages(begin, end):
        if not _is_map(msg):
            continue
        if is_assistant(msg):
            called.update(_call_ids(msg))
        elif is_tool_result(msg):
            call_id = msg.get("toolCallId")
            if isinstance(call_id, str) and call_id not in called:
                ids.add(call_id)
    return ids


def keep_pairs_in_view(view: EntryView, start: int, end: int, cut: CutPointResult) -> CutPointResult:
    """``cut`` moved back so that every tool result it keeps also keeps the
    assistant message that made the call (``cut`` itself when nothing
    moves). A result's call is the latest call with its id before it; the
    cut moves only when that call is summarized (in ``[start, cut)``), to
    the earliest such call, and again while the results that move brings
    back into the kept part have summarized calls of their own."""
    while True:
        kept_results = kept_result_ids(view, cut.first_kept_entry_index, end)
        if not kept_results:
            return cut
        earliest = _earliest_matching_call(view, start, cut.first_kept_entry_index, kept_results)
        if earliest < 0:
            return cut
        cut = _finish_cut(view, start, earliest)


def _call_ids(msg: Mapping[str, Any]) -> list[str]:
    """The (string) ids of the tool calls of an assistant message."""
    content = msg.get("content")
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if _is_map(block) and block.get("type") == "toolCall":
            call_id = block.get("id")
            if isinstance(call_id, str):
                out.append(call_id)
    return out


def _earliest_matching_call(view: EntryView, begin: int, end: int, call_ids: set[str]) -> int:
    """For each id of ``call_ids``, the last entry in ``[begin, end)`` with an
    assistant message calling it (the call a later result answers); the
    smallest of those indices, or -1 when none is there."""
    last: dict[str, int] = {}
    for i, msg in view.iter_messages(begin, end):
        if is_assistant(msg):
            for call_id in _call_ids(msg):
                if call_id in call_ids:
                    last[call_id] = i
    return min(last.values(), default=-1)


def keep_tool_calls_with_results(
    entries: Sequence[Mapping[str, Any]], start: int, end: int, cut: CutPointResult
) -> CutPointResult:
    """Beyond pi: move a raw cut back so that no kept tool result loses its call.

    pi never cuts at a tool result, but a user, bashExecution or custom
    message standing between a tool call and its result (a hand edit, an
    extension, a steering message) can still be a cut point, and the kept
    result then answers a call that was summarized away, which model APIs
    reject. When a tool result at or after the cut answers a call made in
    ``[start, cut)`` (its call being the latest call with its id before it,
    so a result whose call is kept never moves the cut, whatever an earlier
    call with the same id), the cut moves back to the entry holding the
    earliest such call (then over entries without messages, as pi does), and
    the turn is worked out again. When pi's cut separates no call from its
    result, the cut is pi's. Calls before ``start`` were summarized by an
    earlier compaction and cannot be brought back; the provider adapters
    repair those.

    Returns:
        ``cut`` itself when no result is orphaned (pi's choice), else the
        moved cut.
    """
    return keep_pairs_in_view(_raw_view(entries), start, end, cut)


def keep_projected_tool_calls_with_results(
    items: Sequence[Mapping[str, Any]], start: int, end: int, cut: CutPointResult
) -> CutPointResult:
    """:func:`keep_tool_calls_with_results` over projection items (the calls
    and results as the context shows them, after edits)."""
    return keep_pairs_in_view(_projected_view(items), start, end, cut)
