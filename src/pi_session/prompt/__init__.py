"""System prompt building: project context files, skills and the sectioned
prompt (pi 1.6's ``core/system-prompt.js``, ``core/skills.js`` and
``loadProjectContextFiles``)."""

from ._paths import normalize_text
from .context_files import CONTEXT_FILE_NAMES, ContextFile, load_project_context_files
from .skills import (
    SKILL_READ_TOOLS,
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
    SECTION_NAME_RE,
    BuildSystemPromptOptions,
    DocsLocations,
    build_system_prompt,
    build_system_prompt_sections,
    build_system_prompt_state,
    package_docs_locations,
    PACKAGE_DIR_ENV,
    describe_system_prompt,
    diff_system_prompt_sections,
    format_context_files,
    render_system_prompt_state,
    skill_read_tool,
)

__all__ = [
    "normalize_text",
    "CONTEXT_FILE_NAMES",
    "ContextFile",
    "load_project_context_files",
    "SKILL_READ_TOOLS",
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
    "SECTION_NAME_RE",
    "BuildSystemPromptOptions",
    "DocsLocations",
    "build_system_prompt",
    "build_system_prompt_sections",
    "build_system_prompt_state",
    "package_docs_locations",
    "PACKAGE_DIR_ENV",
    "describe_system_prompt",
    "diff_system_prompt_sections",
    "format_context_files",
    "render_system_prompt_state",
    "skill_read_tool",
]
