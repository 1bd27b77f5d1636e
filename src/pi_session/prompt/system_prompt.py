"""The system prompt builder (pi's ``buildSystemPrompt`` in ``core/system-prompt.js``).

Section order of the default prompt:

1. introduction (our wording), ``Available tools:`` with one ``- name: snippet``
   line per selected tool that has a snippet (else ``(none)``), a note that
   other tools may exist;
2. ``Guidelines:`` -- a file-exploration rule chosen by the tools present, the
   caller's guidelines, two fixed rules; trimmed, empty ones dropped,
   duplicates removed keeping the first;
3. a documentation section (where the harness's own docs live);
4. the appended text, ``# Project Context`` with ``## <path>`` per context
   file, the skills block (only when ``read`` is among the tools), then
   ``Current date: YYYY-MM-DD`` and ``Current working directory: <cwd>``.

A custom prompt replaces sections 1-3 and keeps section 4.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .context_files import ContextFile
from .skills import Skill, format_skills_for_prompt

__all__ = [
    "BuildSystemPromptOptions",
    "DocsLocations",
    "DEFAULT_TOOLS",
    "DEFAULT_TOOL_SNIPPETS",
    "DEFAULT_TOOL_GUIDELINES",
    "build_system_prompt",
    "default_docs_locations",
    "format_context_files",
]

DEFAULT_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Tools assumed when the caller selects none (pi's default set)."""

DEFAULT_TOOL_SNIPPETS: dict[str, str] = {
    "read": "Show the contents of a file",
    "bash": "Run a shell command in bash (ls, grep, find and the like)",
    "edit": "Change a file by replacing exact pieces of its text; several separate replacements fit in one call",
    "write": "Create a file or replace its whole content",
    "grep": "Search inside files for a pattern (honours .gitignore)",
    "find": "Look up files by glob pattern (honours .gitignore)",
    "ls": "List what a directory contains",
}
"""One-line descriptions of pi's built-in tools, in our own words."""

DEFAULT_TOOL_GUIDELINES: dict[str, tuple[str, ...]] = {
    "read": ("Open files with read rather than with cat or sed.",),
    "edit": (
        "Use edit for targeted changes; each edits[].oldText has to match the file exactly",
        "Several changes to one file belong in a single edit call with several edits[] items, not in several calls",
        "Every edits[].oldText is looked up in the file as it was before the call, so edits must not overlap or"
        " nest; join changes that sit close together into one edit.",
        "Make each edits[].oldText as short as it can be while staying unique in the file; leave out unchanged"
        " surroundings.",
    ),
    "write": ("Reserve write for new files or for rewriting a file completely.",),
}
"""Per-tool guidelines a harness passes as ``prompt_guidelines`` (our wording)."""

_INTRO = (
    "You are an experienced software engineer working as a coding assistant inside pi, a harness for coding"
    " agents. You help the user by looking at files, running commands, changing code and creating new files."
)
_OTHER_TOOLS = "Depending on the project, further custom tools may be available besides the ones above."
_BASH_ONLY = "Do file work such as ls, rg and find through bash"
_PREFER_TOOLS = "To explore files, favour the grep/find/ls tools over bash (they are quicker and honour .gitignore)"
_ALWAYS = ("Keep your answers short", "Write file paths out in full when you work with files")
_PROJECT_CONTEXT_INTRO = "Instructions and conventions that come with this project:"


@dataclass(frozen=True)
class DocsLocations:
    """Where the harness's own documentation lives (shown in the prompt)."""

    readme: str
    docs: str
    examples: str


def default_docs_locations() -> DocsLocations:
    """Documentation of this package: ``README.md``, ``docs/`` and
    ``examples/`` of the project checkout (``src`` layout), or of the
    installed package directory when there is no checkout around it."""
    here = Path(__file__).resolve()
    checkout = here.parents[3]
    root = checkout if (checkout / "pyproject.toml").exists() else here.parents[1]
    return DocsLocations(str(root / "README.md"), str(root / "docs"), str(root / "examples"))


@dataclass
class BuildSystemPromptOptions:
    """Options of :func:`build_system_prompt`, pi's ``BuildSystemPromptOptions``
    in snake_case.

    * ``cwd``: working directory shown at the end (``\\`` becomes ``/``).
    * ``custom_prompt``: replaces the default text (sections 1-3).
    * ``selected_tools``: tool names; ``None`` means pi's default set
      (:data:`DEFAULT_TOOLS`).
    * ``tool_snippets``: ``{tool name: one-line description}``; only tools with
      a snippet are listed.
    * ``prompt_guidelines``: extra guideline sentences.
    * ``append_system_prompt``: text added after the main prompt.
    * ``context_files``: ``[{path, content}]`` (see ``load_project_context_files``).
    * ``skills``: :class:`Skill` objects or pi's skill JSON.
    * ``date`` (beyond pi): the date to show; default today, local time.
    * ``docs`` (beyond pi): documentation locations; default
      :func:`default_docs_locations`.
    """

    cwd: str = ""
    custom_prompt: str | None = None
    selected_tools: Sequence[str] | None = None
    tool_snippets: Mapping[str, str] | None = None
    prompt_guidelines: Sequence[str] | None = None
    append_system_prompt: str | None = None
    context_files: Sequence[ContextFile | Mapping[str, str]] | None = None
    skills: Sequence[Skill | Mapping[str, Any]] | None = None
    date: _dt.date | None = None
    docs: DocsLocations | None = None

    _CAMEL = {
        "customPrompt": "custom_prompt",
        "selectedTools": "selected_tools",
        "toolSnippets": "tool_snippets",
        "promptGuidelines": "prompt_guidelines",
        "appendSystemPrompt": "append_system_prompt",
        "contextFiles": "context_files",
    }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BuildSystemPromptOptions":
        """Accept pi's camelCase JSON (``customPrompt``, ``selectedTools``,
        ``toolSnippets``, ``promptGuidelines``, ``appendSystemPrompt``,
        ``contextFiles``, ``skills``, ``cwd``) or snake_case keys. ``date`` may
        be a ``YYYY-MM-DD`` string. Unknown keys raise ``ValueError``."""
        names = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = cls._CAMEL.get(key, key)
            if name not in names or name.startswith("_"):
                raise ValueError(f"unknown system prompt option {key!r}")
            kwargs[name] = value
        if isinstance(kwargs.get("date"), str):
            kwargs["date"] = _dt.date.fromisoformat(kwargs["date"])
        if isinstance(kwargs.get("docs"), Mapping):
            kwargs["docs"] = DocsLocations(**kwargs["docs"])
        return cls(**kwargs)


def format_context_files(context_files: Iterable[Mapping[str, str]]) -> str:
    """The ``# Project Context`` block: ``""`` for no files, else two newlines,
    the heading, an introduction line, and per file ``## <path>``, an empty
    line, its content and two newlines. Pure function."""
    files = list(context_files)
    if not files:
        return ""
    parts = [f"\n\n# Project Context\n\n{_PROJECT_CONTEXT_INTRO}\n\n"]
    parts += [f"## {f['path']}\n\n{f['content']}\n\n" for f in files]
    return "".join(parts)


def _guidelines(tools: Sequence[str], extra: Iterable[str]) -> list[str]:
    ordered: dict[str, None] = {}

    def add(text: str) -> None:
        ordered.setdefault(text, None)

    has_bash = "bash" in tools
    has_explorers = any(t in tools for t in ("grep", "find", "ls"))
    if has_bash and not has_explorers:
        add(_BASH_ONLY)
    elif has_bash:
        add(_PREFER_TOOLS)
    for item in extra:
        text = item.strip()
        if text:
            add(text)
    for text in _ALWAYS:
        add(text)
    return list(ordered)


def _default_text(tools: Sequence[str], snippets: Mapping[str, str], guidelines: list[str], docs: DocsLocations) -> str:
    visible = [name for name in tools if snippets.get(name)]
    tools_list = "\n".join(f"- {name}: {snippets[name]}" for name in visible) if visible else "(none)"
    guideline_lines = "\n".join(f"- {g}" for g in guidelines)
    return (
        f"{_INTRO}\n\n"
        f"Available tools:\n{tools_list}\n\n"
        f"{_OTHER_TOOLS}\n\n"
        f"Guidelines:\n{guideline_lines}\n\n"
        "Harness documentation (consult it only when the user asks about the harness itself, its sessions,"
        " compaction, skills or command line):\n"
        f"- Overview: {docs.readme}\n"
        f"- Further documents: {docs.docs}\n"
        f"- Examples: {docs.examples}\n"
        "- For a topic question, find the matching document first, then the related examples\n"
        "- Read the relevant documents before you change anything related to the harness\n"
        "- Read documents to the end and follow their links to related documents"
    )


def build_system_prompt(options: BuildSystemPromptOptions | Mapping[str, Any] | None = None, **kwargs: Any) -> str:
    """Build the system prompt (pi's ``buildSystemPrompt``).

    ``options`` is a :class:`BuildSystemPromptOptions`, a mapping in pi's
    camelCase or in snake_case, or keyword arguments. Returns the prompt text
    (no trailing newline; it ends with the working-directory line). Pure
    apart from reading today's date when ``date`` is not given.

    Raises ``ValueError`` for unknown option names."""
    if options is None:
        opts = BuildSystemPromptOptions.from_dict(kwargs)
    elif isinstance(options, BuildSystemPromptOptions):
        opts = options
    else:
        opts = BuildSystemPromptOptions.from_dict({**options, **kwargs})
    day = opts.date or _dt.date.today()
    date_text = f"{day.year:04d}-{day.month:02d}-{day.day:02d}"
    cwd = (opts.cwd or "").replace("\\", "/")
    context = format_context_files(opts.context_files or [])
    skills = list(opts.skills or [])
    append = f"\n\n{opts.append_system_prompt}" if opts.append_system_prompt else ""

    if opts.custom_prompt:
        prompt = opts.custom_prompt + append + context
        if (opts.selected_tools is None or "read" in opts.selected_tools) and skills:
            prompt += format_skills_for_prompt(skills)
    else:
        tools = list(opts.selected_tools) if opts.selected_tools is not None else list(DEFAULT_TOOLS)
        guidelines = _guidelines(tools, opts.prompt_guidelines or [])
        prompt = _default_text(tools, opts.tool_snippets or {}, guidelines, opts.docs or default_docs_locations())
        prompt += append + context
        if "read" in tools and skills:
            prompt += format_skills_for_prompt(skills)
    prompt += f"\nCurrent date: {date_text}"
    prompt += f"\nCurrent working directory: {cwd}"
    return prompt
