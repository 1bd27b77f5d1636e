"""pi-session: the session system of the pi coding agent, in Python.

Pure functions (context building, token estimates, cut points, compaction
and branch-summary preparation, serialization, the system prompt) and one
class that does I/O, :class:`SessionManager`.

Importing the package is cheap: each public name is imported from its
module on first use (PEP 562), so ``import pi_session.storage`` does not
load the summarizers or the prompt builder.
"""

# no `from __future__ import annotations`: that imports the __future__ module,
# which start-up has not loaded, and a Ctrl-C landing in that import would
# show a traceback through this file before main() runs (the annotations
# here are valid at run time)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
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
    from .session.context import (
        UNSET,
        build_context_entries,
        build_session_context,
        build_session_projection,
        convert_to_llm,
        get_current_system_message,
    )
    from .llm import Summarizer, SummarizerError, SummaryRequest
    from .errors import PiSessionError
    from .manager.session_manager import SessionManager
    from .storage.versions import migrate_session_entries
    from .compaction.navigation import NavigationPlan, NavigationResult, plan_navigation
    from .prompt import (
        BuildSystemPromptOptions,
        LoadSkillsResult,
        Skill,
        build_system_prompt,
        build_system_prompt_sections,
        build_system_prompt_state,
        diff_system_prompt_sections,
        format_skills_for_prompt,
        load_project_context_files,
        load_skills,
    )
    from .entries.records import CURRENT_SESSION_VERSION
    from .session.stats import SessionStats
    from .storage import (
        Durability,
        LineProblem,
        SessionFile,
        SessionFileError,
        migrate_file,
        parse_session_entries,
        read_session_file,
    )
    from .session.tokens import (
        calculate_context_tokens,
        estimate_context_tokens,
        estimate_projected_context_tokens,
        estimate_tokens,
        get_last_assistant_usage,
        should_compact,
        usage_is_stale,
    )
    from .session.tree import SessionTree, TreeNode

# module -> the public names it provides (what the imports above list)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "compaction": (
        "CompactionPreparation", "CompactionResult", "collect_entries_for_branch_summary", "compact",
        "find_cut_point", "find_turn_start_index", "generate_branch_summary", "prepare_branch_entries",
        "prepare_compaction", "serialize_conversation",
    ),
    "session.context": (
        "UNSET", "build_context_entries", "build_session_context", "build_session_projection", "convert_to_llm",
        "get_current_system_message",
    ),
    "errors": ("PiSessionError",),
    "llm": ("Summarizer", "SummarizerError", "SummaryRequest"),
    "manager.session_manager": ("SessionManager",),
    "storage.versions": ("migrate_session_entries",),
    "compaction.navigation": ("NavigationPlan", "NavigationResult", "plan_navigation"),
    "prompt": (
        "BuildSystemPromptOptions", "LoadSkillsResult", "Skill", "build_system_prompt", "build_system_prompt_sections",
        "build_system_prompt_state", "diff_system_prompt_sections", "format_skills_for_prompt",
        "load_project_context_files", "load_skills",
    ),
    "entries.records": ("CURRENT_SESSION_VERSION",),
    "session.stats": ("SessionStats",),
    "storage": (
        "Durability", "LineProblem", "SessionFile", "SessionFileError", "migrate_file", "parse_session_entries",
        "read_session_file",
    ),
    "session.tokens": (
        "calculate_context_tokens", "estimate_context_tokens", "estimate_projected_context_tokens", "estimate_tokens",
        "get_last_assistant_usage", "should_compact", "usage_is_stale",
    ),
    "session.tree": ("SessionTree", "TreeNode"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Import a public name from its module on first use (then cached)."""
    import importlib

    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
