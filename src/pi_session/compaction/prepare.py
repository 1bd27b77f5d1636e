"""Planning a compaction (pi 1.6's ``prepareCompaction``):
what to summarize, what to keep, and the file operations to list. Pure; no
model calls.

The plan works on the session projection (the context entries with their
messages after context edits), so edited content is what gets summarized,
omitted entries contribute nothing, and ``system`` messages (prompt state,
which the compaction entry snapshots) are never summarized."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..session.context import context_entries_and_edits, get_current_system_message
from ..entries.source import entry_source
from ..session.settings import CompactionSettings, coerce_compaction_settings
from ..session.tokens import calculate_context_tokens, estimate_tokens, get_assistant_usage, usage_trusted
from .cut_point import CutPointResult, EntriesView, EntryView, cut_in_view, keep_pairs_in_view, kept_result_ids
from .file_ops import FileOps, FileOpsCollector, compute_file_lists, summary_file_lists
from ..entries.records import UNDEFINED
from ..entries.questions import COMPACTION, SYSTEM

__all__ = ["CompactionPreparation", "ProjectionItems", "prepare_compaction"]



@dataclass
class CompactionPreparation:
    """Everything :func:`pi_session.compaction.compact` needs.

    Attributes:
        first_kept_entry_id: id of the first entry kept verbatim.
        messages_to_summarize: agent messages (after context edits) from the
            span start up to the cut (or up to the turn start for a split
            turn); compaction entries and system messages left out.
        turn_prefix_messages: for a split turn, the messages from the turn
            start up to the cut; else empty.
        is_split_turn: the cut falls inside a turn.
        tokens_before: estimated context size (tokens) before compacting
            (a float only when recorded usage numbers are fractional).
        previous_summary: the previous compaction's summary, or None.
        file_ops: read/written/edited paths from the summarized messages and
            the previous compaction's details (unless it came from a hook).
        settings: the compaction settings used.
        first_kept_entry_index: index of the first kept entry in
            :attr:`projection_entries`.
        turn_start_index: index there of the turn start (split turns), else -1.
        boundary_start: index there where the summarized span starts.
        projection_entries: the projection items (``{"sourceEntry",
            "messages"}``) the plan was made on, as a read-only sequence
            that builds each item when it is read (a list when built by
            hand).
    """

    first_kept_entry_id: str
    messages_to_summarize: list[dict[str, Any]]
    turn_prefix_messages: list[dict[str, Any]]
    is_split_turn: bool
    tokens_before: int | float
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    first_kept_entry_index: int = 0
    turn_start_index: int = -1
    boundary_start: int = 0
    projection_entries: Sequence[dict[str, Any]] = field(default_factory=list, repr=False)
    _previous_summary_raw: Any = field(default=UNDEFINED, repr=False)

    @property
    def file_lists(self) -> dict[str, list[Any]]:
        """``{"readFiles", "modifiedFiles"}`` from :attr:`file_ops`."""
        return compute_file_lists(self.file_ops)

    @property
    def summary_file_lists(self) -> dict[str, list[Any]]:
        """The file lists the summary carries (beyond pi): :attr:`file_lists`
        without the read paths the summarized messages show to be
        directories (:func:`pi_session.compaction.file_ops.summary_file_lists`)."""
        return summary_file_lists(self.file_ops, [*self.messages_to_summarize, *self.turn_prefix_messages])

    def to_json(self) -> dict[str, Any]:
        """The object ``pi-oracle prepare`` prints: ``firstKeptEntryId,
        messagesToSummarize, turnPrefixMessages, isSplitTurn, tokensBefore,
        previousSummary`` (absent when there is none), ``fileOps{read, written,
        edited}`` (sorted), ``settings{enabled, reserveTokens,
        keepRecentTokens}``, ``fileLists{readFiles, modifiedFiles}``."""
        out: dict[str, Any] = {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": self.messages_to_summarize,
            "turnPrefixMessages": self.turn_prefix_messages,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
        }
        raw = self._previous_summary_raw
        if raw is UNDEFINED:  # built by hand, or no previous summary on the path
            if self.previous_summary is not None:
                out["previousSummary"] = self.previous_summary
        else:  # as found in the previous compaction entry (may be null)
            out["previousSummary"] = raw
        out["fileOps"] = self.file_ops.to_json()
        out["settings"] = self.settings.to_json()
        out["fileLists"] = self.file_lists
        return out


class ProjectionItems(Sequence[dict[str, Any]]):
    """The items of a session projection (``{"sourceEntry", "messages"}``,
    as :func:`pi_session.session.context.build_session_projection` gives them),
    each built when it is read, so that planning a compaction of a long
    path does not build one per entry. Compares equal to a list of the same
    items."""

    def __init__(self, view: EntryView) -> None:
        self._view = view

    def __len__(self) -> int:
        return len(self._view.sources)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("projection item index out of range")
        return self._item(i)

    def _item(self, i: int) -> dict[str, Any]:
        return {"sourceEntry": self._view.sources[i], "messages": self._view.messages_of(i)}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ProjectionItems, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<ProjectionItems of {len(self)} entries>"


def _summary_spans(
    view: EntryView, start: int, cut: CutPointResult, file_ops: FileOpsCollector
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages to summarize, turn prefix) for ``cut``: the messages after
    edits of the items in ``[start, history end)`` and, for a split turn,
    ``[turn start, first kept)``, without ``system`` ones (prompt state, not
    conversation); their file operations go to ``file_ops`` on the way. A
    compaction contributes messages (its summary, which is the previous
    summary) only at position 0, which is never in the summarized span."""
    first_kept = cut.first_kept_entry_index
    history_end = cut.turn_start_index if cut.is_split_turn else first_kept
    history = view.messages_in(start, history_end, without_system=True, visit=file_ops.add)
    if not cut.is_split_turn:
        return history, []
    return history, view.messages_in(history_end, first_kept, without_system=True, visit=file_ops.add)


def _previous_file_ops(prev: Mapping[str, Any] | None) -> FileOps:
    """File operations carried over from the previous compaction's
    ``details`` (unless it came from a hook); empty without one."""
    file_ops = FileOps()
    if prev is not None and not prev.get("fromHook") and prev.get("details"):
        file_ops.add_details(prev.get("details"))
    return file_ops


def _projected_tokens(view: EntryView, branch_entries: Sequence[Mapping[str, Any]]) -> int | float:
    """``estimate_projected_context_tokens(projection, branch_entries)["tokens"]``
    (:func:`pi_session.session.tokens.estimate_projected_context_tokens`, pi 1.6's
    ``estimateProjectedContextTokens``) for the projection ``view`` shows,
    without building it: the walk back to the last usable usage only reads
    the entries after it."""
    sources = view.sources
    usage = None
    source = None
    trailing = 0
    for i in range(len(sources) - 1, -1, -1):
        messages = view.messages_of(i)
        for j in range(len(messages) - 1, -1, -1):
            usage = get_assistant_usage(messages[j])
            if usage:
                source = sources[i]
                break
            trailing += estimate_tokens(messages[j])
        if usage:
            break
    if usage and usage_trusted(source, branch_entries):
        return calculate_context_tokens(usage) + trailing
    system = get_current_system_message(_all_messages(view))
    tokens = estimate_tokens(system) if system is not None else 0
    for _i, m in view.iter_messages(0, len(sources)):
        if not ((m.__class__ is dict or isinstance(m, Mapping)) and m.get("role") == SYSTEM):
            tokens += estimate_tokens(m)
    return tokens


def _all_messages(view: EntryView) -> Iterable[Any]:
    return (m for _i, m in view.iter_messages(0, len(view.sources)))


def prepare_compaction(
    path_entries: Sequence[Mapping[str, Any]],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    *,
    keep_tool_pairs: bool = True,
) -> CompactionPreparation | None:
    """Plan a compaction of a root→leaf path (pi 1.6's ``prepareCompaction``).

    Args:
        path_entries: the entries from the root to the leaf.
        settings: compaction settings: a :class:`CompactionSettings`, a
            pi-style mapping ``{"enabled", "reserveTokens",
            "keepRecentTokens"}`` (see
            :func:`pi_session.session.settings.coerce_compaction_settings`), or None
            for the defaults. The preparation holds them as
            :class:`CompactionSettings`.
        keep_tool_pairs: beyond pi, see below.

    Returns:
        A :class:`CompactionPreparation`, or None when the path ends with a
        compaction, when there is nothing to summarize (both message lists
        empty: an empty path, or everything since the last compaction fits
        in ``keep_recent_tokens``), or when the first kept entry has no
        string id (an unmigrated v1 session, or a malformed entry).

    Never raises on malformed entries (wrong-typed fields count as absent;
    see :mod:`pi_session.session.tokens` and :func:`pi_session.session.context.build_session_projection`).

    How (pi 1.6 prepareCompaction): the path's projection is built; the previous
    compaction is the one at projection position 0 when it contributes
    messages (one omitted by a context edit is ignored), its summary is
    ``previous_summary`` and the span starts right after it, at its kept
    entries. ``tokens_before`` is
    :func:`pi_session.session.tokens.estimate_projected_context_tokens`. The cut is
    :func:`~pi_session.compaction.cut_point.find_projected_cut_point` with
    ``keep_recent_tokens``. The messages to summarize and the turn prefix
    are the projected messages (edited content; omitted entries, compaction
    entries and ``system`` messages contribute nothing; an empty branch
    summary contributes nothing). File operations come from the previous
    compaction's details (unless it came from a hook) and from the tool
    calls of the summarized and turn-prefix messages and the ``nestedCalls``
    of their tool results.

    Cost: the projection is not built; each entry's messages are worked
    out where they are needed (the cut walks back from the end over the
    kept entries only), so beyond a few scans of the path the work is one
    pass over the summarized messages (collecting them and their file
    operations). :attr:`CompactionPreparation.projection_entries` builds
    its items when read.

    Beyond pi (``keep_tool_pairs``, on by default): when pi's cut would keep a
    tool result whose call is summarized away, the cut moves back to that
    call (see :func:`pi_session.compaction.cut_point.keep_tool_calls_with_results`).
    On sessions where this does not happen, which is every session pi's own
    agent loop writes, the result is pi's exactly; pass
    ``keep_tool_pairs=False`` for pi's cut in every case.
    """
    settings = coerce_compaction_settings(settings)
    # everything below reads the path from the end: of a lazily read one
    # (SessionManager.prepare_compaction) only what it reads is decoded
    entries = entry_source(path_entries)
    if entries and entries[-1].get("type") == COMPACTION:
        return None
    # the projection, each entry's messages worked out only when needed
    context_entries, edits = context_entries_and_edits(entries)
    view = EntriesView(context_entries, edits, all_leading=False)
    # the previous compaction counts when it contributes messages, which
    # only the one at position 0 can do
    previous_raw: Any = UNDEFINED
    prev: Mapping[str, Any] | None = None
    start = 0
    if context_entries and view.is_compaction(0) and view.messages_of(0):
        prev = context_entries[0]
        previous_raw = prev.get("summary", UNDEFINED)
        start = 1
    end = len(context_entries)
    tokens_before = _projected_tokens(view, entries)
    cut = cut_in_view(view, start, end, settings.keep_recent_tokens, projected=True)
    # One pass over the summarized messages lists their file operations and
    # (beyond pi, keep_tool_pairs) spots a call whose result is kept; only
    # then does the cut move (rare) and the spans get worked out again.
    kept_results = kept_result_ids(view, cut.first_kept_entry_index, end) if keep_tool_pairs else set()
    collector = FileOpsCollector(_previous_file_ops(prev), kept_results)
    to_summarize, prefix = _summary_spans(view, start, cut, collector)
    if collector.watched_call_seen:
        cut = keep_pairs_in_view(view, start, end, cut)
        collector = FileOpsCollector(_previous_file_ops(prev))
        to_summarize, prefix = _summary_spans(view, start, cut, collector)
    file_ops = collector.file_ops
    if cut.first_kept_entry_index >= end:
        return None
    first_kept_id = context_entries[cut.first_kept_entry_index].get("id")
    if not first_kept_id or not isinstance(first_kept_id, str):
        return None
    if not to_summarize and not prefix:
        return None
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_raw if isinstance(previous_raw, str) else None,
        file_ops=file_ops,
        settings=settings,
        first_kept_entry_index=cut.first_kept_entry_index,
        turn_start_index=cut.turn_start_index,
        boundary_start=start,
        projection_entries=ProjectionItems(view),
        _previous_summary_raw=previous_raw,
    )
