"""Planning a compaction (pi 1.6's ``prepareCompaction``, SPEC-pi-1.6 §9):
what to summarize, what to keep, and the file operations to list. Pure; no
model calls.

The plan works on the session projection (the context entries with their
messages after context edits), so edited content is what gets summarized,
omitted entries contribute nothing, and ``system`` messages (prompt state,
which the compaction entry snapshots) are never summarized."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import projection_from_path
from ..settings import CompactionSettings, coerce_compaction_settings
from ..tokens import estimate_projected_context_tokens
from .cut_point import find_projected_cut_point, keep_projected_tool_calls_with_results
from .file_ops import FileOps, compute_file_lists, extract_file_ops_from_message

__all__ = ["CompactionPreparation", "prepare_compaction"]

_ABSENT: Any = object()


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
        tokens_before: estimated context size (tokens) before compacting.
        previous_summary: the previous compaction's summary, or None.
        file_ops: read/written/edited paths from the summarized messages and
            the previous compaction's details (unless it came from a hook).
        settings: the compaction settings used.
        first_kept_entry_index: index of the first kept entry in
            :attr:`projection_entries`.
        turn_start_index: index there of the turn start (split turns), else -1.
        boundary_start: index there where the summarized span starts.
        projection_entries: the projection items (``{"sourceEntry",
            "messages"}``) the plan was made on.
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
    projection_entries: list[dict[str, Any]] = field(default_factory=list, repr=False)
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


def _messages_for_summary(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What one projection item gives the summarizer: nothing for a
    compaction (its summary is the previous summary), else its messages
    after edits without ``system`` ones (prompt state, not conversation)."""
    if item["sourceEntry"].get("type") == "compaction":
        return []
    return [m for m in item["messages"] if not (isinstance(m, Mapping) and m.get("role") == "system")]


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
            :func:`pi_session.settings.coerce_compaction_settings`), or None
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
    see :mod:`pi_session.tokens` and :func:`pi_session.context.build_session_projection`).

    How (SPEC-pi-1.6 §9): the path's projection is built; the previous
    compaction is the one at projection position 0 when it contributes
    messages (one omitted by a context edit is ignored), its summary is
    ``previous_summary`` and the span starts right after it, at its kept
    entries. ``tokens_before`` is
    :func:`pi_session.tokens.estimate_projected_context_tokens`. The cut is
    :func:`~pi_session.compaction.cut_point.find_projected_cut_point` with
    ``keep_recent_tokens``. The messages to summarize and the turn prefix
    are the projected messages (edited content; omitted entries, compaction
    entries and ``system`` messages contribute nothing; an empty branch
    summary contributes nothing). File operations come from the previous
    compaction's details (unless it came from a hook) and from the tool
    calls of the summarized and turn-prefix messages and the ``nestedCalls``
    of their tool results.

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
    projection = projection_from_path(entries)
    items = projection["entries"]
    prev_index = next(
        (i for i, item in enumerate(items) if item["sourceEntry"].get("type") == "compaction" and item["messages"]),
        -1,
    )
    previous_raw: Any = _ABSENT
    start = 0
    if prev_index >= 0:
        previous_raw = items[prev_index]["sourceEntry"].get("summary", _ABSENT)
        start = prev_index + 1
    end = len(items)
    tokens_before = estimate_projected_context_tokens(projection, entries)["tokens"]
    cut = find_projected_cut_point(items, start, end, settings.keep_recent_tokens)
    if keep_tool_pairs:
        cut = keep_projected_tool_calls_with_results(items, start, end, cut)
    if cut.first_kept_entry_index >= len(items):
        return None
    first_kept_id = items[cut.first_kept_entry_index]["sourceEntry"].get("id")
    if not first_kept_id or not isinstance(first_kept_id, str):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = [m for item in items[start:history_end] for m in _messages_for_summary(item)]
    prefix: list[dict[str, Any]] = []
    if cut.is_split_turn:
        prefix = [
            m for item in items[cut.turn_start_index : cut.first_kept_entry_index] for m in _messages_for_summary(item)
        ]
    if not to_summarize and not prefix:
        return None
    file_ops = FileOps()
    if prev_index >= 0:
        prev = items[prev_index]["sourceEntry"]
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
        projection_entries=items,
        _previous_summary_raw=previous_raw,
    )
