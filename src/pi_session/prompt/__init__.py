"""System prompt building: project context files, skills and the prompt text
(pi's ``core/system-prompt.js``, ``core/skills.js`` and ``loadProjectContextFiles``)."""

from .context_files import CONTEXT_FILE_NAMES, ContextFile, load_project_context_files
from .skills import (
    LoadSkillsResult,
    Skill,
    SkillDiagnostic,
    escape_xml,
    format_skills_for_prompt,
    load_skill_from_file,
    load_skills,
    load_skills_from_dir,
    parse_frontmatter,
)
from .system_prompt import (
    DEFAULT_TOOL_GUIDELINES,
    DEFAULT_TOOL_SNIPPETS,
    DEFAULT_TOOLS,
    BuildSystemPromptOptions,
    DocsLocations,
    build_system_prompt,
    format_context_files,
)

__all__ = [
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "load_project_context_files",
    "LoadSkillsResult",
    "Skill",
    "SkillDiagnostic",
    "escape_xml",
    "format_skills_for_prompt",
    "load_skill_from_file",
    "load_skills",
    "load_skills_from_dir",
    "parse_frontmatter",
    "DEFAULT_TOOL_GUIDELINES",
    "DEFAULT_TOOL_SNIPPETS",
    "DEFAULT_TOOLS",
    "BuildSystemPromptOptions",
    "DocsLocations",
    "build_system_prompt",
    "format_context_files",
]
