"""Compaction and branch summaries (pi 1.6 compaction and branch summarization).

The summary format is one table (:mod:`~pi_session.compaction.summary_format`:
:data:`SECTIONS`); the summarizer interface is
:mod:`~pi_session.compaction.summarizer` (implemented by
:mod:`pi_session.llm`, which depends on this package, never the reverse).

Pure planning (:func:`find_cut_point`, :func:`prepare_compaction`,
:func:`prepare_branch_entries`, :func:`serialize_conversation`) and the async
summary writers (:func:`compact`, :func:`generate_branch_summary`) that call a
:class:`pi_session.llm.Summarizer`.
"""

from ..session.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)
from .branch_summary import (
    BRANCH_SUMMARY_PREAMBLE,
    BranchEntries,
    BranchPreparation,
    BranchSummaryResult,
    collect_entries_for_branch_summary,
    generate_branch_summary,
    prepare_branch_entries,
)
from .cut_point import (
    CutPointResult,
    find_cut_point,
    find_projected_cut_point,
    find_turn_start_index,
    find_valid_cut_points,
    keep_projected_tool_calls_with_results,
    keep_tool_calls_with_results,
)
from .file_ops import FileOps, compute_file_lists, extract_file_ops_from_message, format_file_operations
from .prepare import CompactionPreparation, prepare_compaction
from .serialize import TOOL_RESULT_MAX_CHARS, serialize_conversation, truncate_for_summary
from .summarizer import Summarizer, SummarizerError, SummaryRequest, SummaryText
from .summary_format import (
    FILE_LIST_TAGS,
    HISTORY_FORMAT,
    SECTIONS,
    TURN_PREFIX_FORMAT,
    TURN_PREFIX_SECTIONS,
    SummaryFormat,
    SummarySection,
    ensure_sections,
    format_template,
    parse_summary_sections,
)
from .summary import (
    SPLIT_TURN_SEPARATOR,
    SUMMARY_SECTIONS,
    SUMMARY_SYSTEM_PROMPT,
    BeforeCompactHook,
    CompactionCancelled,
    CompactionResult,
    build_summary_request,
    compact,
)

__all__ = [
    "FILE_LIST_TAGS",
    "HISTORY_FORMAT",
    "SECTIONS",
    "TURN_PREFIX_FORMAT",
    "TURN_PREFIX_SECTIONS",
    "Summarizer",
    "SummarizerError",
    "SummaryFormat",
    "SummaryRequest",
    "SummarySection",
    "SummaryText",
    "ensure_sections",
    "format_template",
    "parse_summary_sections",
    "BRANCH_SUMMARY_PREAMBLE",
    "SPLIT_TURN_SEPARATOR",
    "SUMMARY_SECTIONS",
    "SUMMARY_SYSTEM_PROMPT",
    "TOOL_RESULT_MAX_CHARS",
    "BeforeCompactHook",
    "BranchEntries",
    "BranchPreparation",
    "BranchSummaryResult",
    "CompactionCancelled",
    "CompactionPreparation",
    "CompactionResult",
    "CutPointResult",
    "FileOps",
    "build_summary_request",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compact",
    "compute_file_lists",
    "estimate_context_tokens",
    "estimate_tokens",
    "extract_file_ops_from_message",
    "find_cut_point",
    "find_projected_cut_point",
    "find_turn_start_index",
    "find_valid_cut_points",
    "format_file_operations",
    "generate_branch_summary",
    "get_last_assistant_usage",
    "prepare_branch_entries",
    "keep_projected_tool_calls_with_results",
    "keep_tool_calls_with_results",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
    "truncate_for_summary",
]
