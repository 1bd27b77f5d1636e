"""Planning a compaction (pi's ``prepareCompaction``): what to summarize,
what to keep, and the file operations to list. Pure; no model calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import build_session_context, message_from_entry
from ..settings import CompactionSettings, coerce_compaction_settings
from ..tokens import estimate_context_tokens
from .cut_point import find_cut_point, keep_tool_calls_with_results
from .file_ops import FileOps, compute_file_lists, extract_file_ops_from_message

__all__ = ["CompactionPreparation", "prepare_compaction"]

_ABSENT: Any = object()


@dataclass
class CompactionPreparation:
    """Everything :func:`pi_session.compaction.compact` needs.

    Attributes:
        first_kept_entry_id: id of the first entry kept verbatim.
        messages_to_summarize: agent messages from the span start up to the
            cut (or up to the turn start for a split turn), compaction
            entries left out.
        turn_prefix_messages: for a split turn, the messages from the turn
            start up to the cut; else empty.
        is_split_turn: the cut falls inside a turn.
        tokens_before: estimated context size (tokens) before compacting.
        previous_summary: the previous compaction's summary, or None.
        file_ops: read/written/edited paths from the summarized messages and
            the previous compaction's details (unless it came from a hook).
        settings: the compaction settings used.
        first_kept_entry_index: index of the first kept entry in the path.
        turn_start_index: index of the turn start (split turns), else -1.
        boundary_start: index in the path where the summarized span starts.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[dict[str, Any]]
    turn_prefix_messages: list[dict[str, Any]]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    first_kept_entry_index: int = 0
    turn_start_index: int = -1
    boundary_start: int = 0
    _previous_summary_raw: Any = field(default=_ABSENT, repr=False)

    @property
    def file_lists(self) -> dict[str, list[Any]]:
        """``{"readFiles", "modifiedFiles"}`` from :attr:`file_ops`."""
        return compute_file_lists(self.file_ops)

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
        if raw is _ABSENT:  # built by hand, or no previous summary on the path
            if self.previous_summary is not None:
                out["previousSummary"] = self.previous_summary
        else:  # as found in the previous compaction entry (may be null)
            out["previousSummary"] = raw
        out["fileOps"] = self.file_ops.to_json()
        out["settings"] = self.settings.to_json()
        out["fileLists"] = self.file_lists
        return out


def _compaction_message(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    return message_from_entry(entry, include_compaction=False)


def prepare_compaction(
    path_entries: Sequence[Mapping[str, Any]],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    *,
    keep_tool_pairs: bool = True,
) -> CompactionPreparation | None:
    """Plan a compaction of a root→leaf path (pi's ``prepareCompaction``).

    Args:
        path_entries: the entries from the root to the leaf.
        settings: compaction settings: a :class:`CompactionSettings`, a
            pi-style mapping ``{"enabled", "reserveTokens",
            "keepRecentTokens"}`` (see
            :func:`pi_session.settings.coerce_compaction_settings`), or None
            for the defaults. The preparation holds them as
            :class:`CompactionSettings`.

    Returns:
        A :class:`CompactionPreparation`, or None when the path is empty,
        ends with a compaction, or the first kept entry has no string id
        (an unmigrated v1 session, or a malformed entry).

    Never raises on malformed entries (wrong-typed fields count as absent;
    see :mod:`pi_session.tokens` and :func:`pi_session.context.build_session_context`).

    The span to work on starts at the previous compaction's
    ``firstKeptEntryId`` (or just after that compaction when the id is not
    on the path); the cut is :func:`find_cut_point` with
    ``keep_recent_tokens``; ``tokens_before`` is
    :func:`estimate_context_tokens` over the context the whole path builds.

    Beyond pi (``keep_tool_pairs``, on by default): when pi's cut would keep a
    tool result whose call is summarized away, the cut moves back to that
    call (see :func:`pi_session.compaction.cut_point.keep_tool_calls_with_results`).
    On sessions where this does not happen, which is every session pi's own
    agent loop writes, the result is pi's exactly; pass
    ``keep_tool_pairs=False`` for pi's cut in every case.
    """
    settings = coerce_compaction_settings(settings)
    entries = list(path_entries)
    if entries and entries[-1].get("type") == "compaction":
        return None
    prev_index = -1
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].get("type") == "compaction":
            prev_index = i
            break
    previous_raw: Any = _ABSENT
    start = 0
    if prev_index >= 0:
        prev = entries[prev_index]
        previous_raw = prev.get("summary", _ABSENT)
        first_kept = prev.get("firstKeptEntryId")
        found = next((i for i, e in enumerate(entries) if e.get("id") == first_kept), -1)
        start = found if found >= 0 else prev_index + 1
    end = len(entries)
    tokens_before = estimate_context_tokens(build_session_context(entries)["messages"])["tokens"]
    cut = find_cut_point(entries, start, end, settings.keep_recent_tokens)
    if keep_tool_pairs:
        cut = keep_tool_calls_with_results(entries, start, end, cut)
    if cut.first_kept_entry_index >= len(entries):
        return None
    first_kept_id = entries[cut.first_kept_entry_index].get("id")
    if not first_kept_id or not isinstance(first_kept_id, str):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = [m for m in map(_compaction_message, entries[start:history_end]) if m is not None]
    prefix: list[dict[str, Any]] = []
    if cut.is_split_turn:
        prefix = [
            m
            for m in map(_compaction_message, entries[cut.turn_start_index : cut.first_kept_entry_index])
            if m is not None
        ]
    file_ops = FileOps()
    if prev_index >= 0:
        prev = entries[prev_index]
        if not prev.get("fromHook") and prev.get("details"):
            file_ops.add_details(prev.get("details"))
    for msg in to_summarize:
        extract_file_ops_from_message(msg, file_ops)
    for msg in prefix:
        extract_file_ops_from_message(msg, file_ops)
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
        _previous_summary_raw=previous_raw,
    )
