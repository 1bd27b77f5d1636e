"""pi-session: the session system of the pi coding agent, in Python.

Pure functions (context building, token estimates, cut points, compaction
and branch-summary preparation, serialization, the system prompt) and one
class that does I/O, :class:`SessionManager`.
"""

from .compaction import (
    CompactionPreparation,
    CompactionResult,
    collect_entries_for_branch_summary,
    compact,
    find_cut_point,
    find_turn_start_index,
    generate_branch_summary,
    prepare_branch_entries,
    prepare_compaction,
    serialize_conversation,
)
from .context import UNSET, build_session_context, convert_to_llm
from .llm import Summarizer, SummarizerError, SummaryRequest
from .manager import SessionManager
from .migrate import migrate_file, migrate_session_entries
from .prompt import (
    BuildSystemPromptOptions,
    LoadSkillsResult,
    Skill,
    build_system_prompt,
    format_skills_for_prompt,
    load_project_context_files,
    load_skills,
)
from .records import CURRENT_SESSION_VERSION
from .storage import Durability, LineProblem, SessionFile, SessionFileError, parse_session_entries, read_session_file
from .tokens import calculate_context_tokens, estimate_context_tokens, estimate_tokens, get_last_assistant_usage, should_compact
from .tree import SessionTree, TreeNode

__all__ = [
    "CURRENT_SESSION_VERSION",
    "UNSET",
    "BuildSystemPromptOptions",
    "CompactionPreparation",
    "CompactionResult",
    "Durability",
    "LineProblem",
    "LoadSkillsResult",
    "SessionFile",
    "SessionFileError",
    "SessionManager",
    "SessionTree",
    "Skill",
    "Summarizer",
    "SummarizerError",
    "SummaryRequest",
    "TreeNode",
    "build_session_context",
    "build_system_prompt",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compact",
    "convert_to_llm",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "find_turn_start_index",
    "format_skills_for_prompt",
    "generate_branch_summary",
    "get_last_assistant_usage",
    "load_project_context_files",
    "load_skills",
    "migrate_file",
    "migrate_session_entries",
    "parse_session_entries",
    "prepare_branch_entries",
    "prepare_compaction",
    "read_session_file",
    "serialize_conversation",
    "should_compact",
]
__version__ = "0.1.0"
