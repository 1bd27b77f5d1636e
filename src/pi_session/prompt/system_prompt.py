"""The system prompt builder (pi 1.6's ``core/system-prompt.js``).

The prompt is an ordered map of named sections
(:func:`build_system_prompt_sections`). ``preamble`` is plain text; every
other section is its body wrapped in a tag of its own name,
``<name>\\n...\\n</name>``, so that a later system message can replace one
section by name (:func:`diff_system_prompt_sections`). Built-in sections, in
order:

1. ``preamble`` -- the custom prompt, or an introduction (our wording);
2. ``tools`` (default prompt only) -- ``- name: snippet`` per declared tool
   that has a snippet, or ``(none)``; a note that more tools may exist;
3. ``rules`` (default prompt only) -- ``- `` bullets: a file-operations rule
   chosen by the shell tools declared, each declared tool's guidelines, the
   caller's guidelines, two fixed rules; trimmed, empty ones dropped,
   duplicates removed keeping the first;
4. ``docs`` (default prompt only, and only when the caller names the
   harness's documentation: ``docs``, see :func:`package_docs_locations`)
   -- where pi's own documentation is; a prompt for another agent has none;
5. ``addendum`` -- the appended text, when non-empty;
6. ``project_context`` -- a heading line, then one
   ``<project_instructions path="PATH">`` block per context file;
7. ``skills`` -- the skills block, when a tool can read skill files;
8. ``cwd`` -- the working directory, ``\\`` turned into ``/``;

then the caller's extra ``sections``. The text of the prompt is the sections
joined by blank lines (:func:`render_system_prompt_state`). All prose is
pi-session's own; names, tags, order and the rules' selection logic are
pi's.
"""

from __future__ import annotations

import re
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .context_files import ContextFile
from .skills import Skill, format_skills_for_prompt

DEFAULT_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Tools assumed when the caller selects none (pi's default set)."""

DEFAULT_TOOL_SNIPPETS: dict[str, str] = {
    "read": "Show the contents of a file",
    "bash": "Run a shell command in bash (ls, grep, find and the like)",
    "powershell": "Run a PowerShell command",
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
"""Per-tool guidelines a harness passes as ``tool_guidelines`` (our wording)."""

SECTION_NAME_RE = re.compile(r"[a-z][a-z0-9_-]*")
"""What an extra section's name must match in full (pi's rule); ``preamble`` is reserved."""

_INTRO = (
    "You are an experienced software engineer working as a coding assistant inside pi, a harness for coding"
    " agents. You help the user by looking at files, running commands, changing code and creating new files."
)
_OTHER_TOOLS = "Depending on the project, further custom tools may be available besides the ones above."
_FILE_OPS = {
    "bash": "Do file work such as ls, rg and find through bash",
    "powershell": "Do file work such as listing, searching for and finding files through PowerShell",
    "both": "Do file work such as listing, searching for and finding files through bash or PowerShell",
}
_ALWAYS = ("Keep your answers short", "Write file paths out in full when you work with files")
_PROJECT_CONTEXT_INTRO = "Instructions and conventions that come with this project:"
_EXPLORERS = ("grep", "find", "ls")


@dataclass(frozen=True)
class DocsLocations:
    """Where the harness's own documentation lives (named in the ``docs``
    section): pi's ``README.md``, its ``docs/`` and ``examples/``
    directories. Each field is a path; ``None`` leaves that line out, and
    with all three ``None`` there is no ``docs`` section."""

    readme: str | None
    docs: str | None
    examples: str | None


PACKAGE_DIR_ENV = "PI_PACKAGE_DIR"
"""The environment variable pi reads for its package directory (where its
``README.md``, ``docs/`` and ``examples/`` are); ``pi-session system-prompt``
takes it as the default of ``--docs``."""


def package_docs_locations(package_dir: str | os.PathLike[str]) -> DocsLocations:
    """The documentation of a harness package directory laid out as pi's
    npm package is (pi's ``getReadmePath``/``getDocsPath``/
    ``getExamplesPath``): ``README.md``, ``docs/`` and ``examples/`` in it,
    as absolute paths, each ``None`` when it does not exist. Reads the
    filesystem (existence checks only); never raises."""
    root = Path(os.path.abspath(os.fspath(package_dir)))

    def existing(path: Path) -> str | None:
        try:
            return str(path) if path.exists() else None
        except OSError:
            return None

    return DocsLocations(existing(root / "README.md"), existing(root / "docs"), existing(root / "examples"))


@dataclass
class BuildSystemPromptOptions:
    """Options of the builder, pi's ``BuildSystemPromptOptions`` in snake_case.

    * ``cwd``: working directory (the ``cwd`` section; ``\\`` becomes ``/``).
    * ``custom_prompt``: replaces the default ``preamble`` and drops the
      ``tools``, ``rules`` and ``docs`` sections; ``""`` means none.
    * ``force_system_prompt``: the whole prompt, verbatim; the state then has
      no sections (``""`` also counts: an empty prompt).
    * ``selected_tools``: tool names; ``None`` means pi's default set
      (:data:`DEFAULT_TOOLS`).
    * ``hidden_tools``: selected tools whose declarations requests leave out;
      they are not listed and add no rules (a hidden reader still makes the
      skills section appear, naming no tool).
    * ``tool_snippets``: ``{tool name: one-line description}``; only declared
      tools with a snippet are listed.
    * ``tool_guidelines``: ``{tool name: [rule, ...]}``; used for declared
      tools, in ``selected_tools`` order.
    * ``prompt_guidelines``: further rules, after the tools' ones.
    * ``append_system_prompt``: the ``addendum`` section's body.
    * ``sections``: ``{name: body}`` extra sections, in order, after ``cwd``;
      empty bodies are skipped; a built-in name replaces that section's body
      where it stands (or adds it at the end when the built-in one is absent).
    * ``context_files``: ``[{path, content}]`` (see ``load_project_context_files``).
    * ``skills``: :class:`Skill` objects or pi's skill JSON.
    * ``docs``: where the harness's (pi's) documentation is, for the
      ``docs`` section: :class:`DocsLocations`, or pi's package directory
      (a path, see :func:`package_docs_locations`). ``None`` (the default)
      means no ``docs`` section: a library user building their own agent's
      prompt gets none. pi always names its own install directory there;
      pass it to get pi's sections.
    * ``date`` (kept for callers of older versions): ignored; pi 1.6 prompts
      carry no date.
    """

    cwd: str = ""
    custom_prompt: str | None = None
    selected_tools: Sequence[str] | None = None
    tool_snippets: Mapping[str, str] | None = None
    prompt_guidelines: Sequence[str] | None = None
    append_system_prompt: str | None = None
    context_files: Sequence[ContextFile | Mapping[str, str]] | None = None
    skills: Sequence[Skill | Mapping[str, Any]] | None = None
    date: Any = None
    docs: DocsLocations | str | os.PathLike[str] | None = None
    # new in pi 1.6 (after the older fields, so positional use keeps working)
    force_system_prompt: str | None = None
    hidden_tools: Sequence[str] | None = None
    tool_guidelines: Mapping[str, Sequence[str]] | None = None
    sections: Mapping[str, str] | None = None

    _CAMEL = {
        "customPrompt": "custom_prompt",
        "forceSystemPrompt": "force_system_prompt",
        "selectedTools": "selected_tools",
        "hiddenTools": "hidden_tools",
        "toolSnippets": "tool_snippets",
        "toolGuidelines": "tool_guidelines",
        "promptGuidelines": "prompt_guidelines",
        "appendSystemPrompt": "append_system_prompt",
        "contextFiles": "context_files",
    }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BuildSystemPromptOptions":
        """Accept pi's camelCase JSON (``customPrompt``, ``forceSystemPrompt``,
        ``selectedTools``, ``hiddenTools``, ``toolSnippets``,
        ``toolGuidelines``, ``promptGuidelines``, ``appendSystemPrompt``,
        ``sections``, ``contextFiles``, ``skills``, ``cwd``) or snake_case keys;
        ``docs`` may be a ``{readme, docs, examples}`` mapping or pi's
        package directory (a string). Unknown keys raise ``ValueError``."""
        names = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = cls._CAMEL.get(key, key)
            if name not in names or name.startswith("_"):
                raise ValueError(f"unknown system prompt option {key!r}")
            kwargs[name] = value
        if isinstance(kwargs.get("docs"), Mapping):
            kwargs["docs"] = DocsLocations(**{k: kwargs["docs"].get(k) for k in ("readme", "docs", "examples")})
        return cls(**kwargs)


def _options(
    options: BuildSystemPromptOptions | Mapping[str, Any] | None, kwargs: Mapping[str, Any]
) -> BuildSystemPromptOptions:
    if options is None:
        return BuildSystemPromptOptions.from_dict(kwargs)
    if isinstance(options, BuildSystemPromptOptions):
        if not kwargs:
            return options
        changes = BuildSystemPromptOptions.from_dict(kwargs)
        names = [BuildSystemPromptOptions._CAMEL.get(key, key) for key in kwargs]
        return replace(options, **{name: getattr(changes, name) for name in names})
    return BuildSystemPromptOptions.from_dict({**options, **kwargs})


def _without_trailing_lines(text: str) -> str:
    """``text`` without its final line break and any blank (whitespace-only)
    lines after the last line with text; spaces ending that line stay."""
    body = text.rstrip()
    tail = text[len(body) :]
    breaks = [i for i in (tail.find("\n"), tail.find("\r")) if i >= 0]
    return body + tail[: min(breaks)] if breaks else text


def format_context_files(context_files: Iterable[ContextFile | Mapping[str, str]]) -> str:
    """The body of the ``project_context`` section: ``""`` for no files, else
    a heading line (our wording) and per file
    ``<project_instructions path="PATH">\\nCONTENT\\n</project_instructions>``,
    parts joined by blank lines. The path is written as given (pi does not
    escape it). Beyond pi: trailing line breaks and blank lines of a file's
    content are left out, so no blank line stands before the closing tag
    (pi keeps them). Pure function."""
    files = list(context_files)
    if not files:
        return ""
    parts = [_PROJECT_CONTEXT_INTRO]
    for f in files:
        content = _without_trailing_lines(f["content"])
        parts.append(f'<project_instructions path="{f["path"]}">\n{content}\n</project_instructions>')
    return "\n\n".join(parts)


def _rules(declared: Sequence[str], tool_guidelines: Mapping[str, Sequence[str]], extra: Iterable[str]) -> str:
    ordered: dict[str, None] = {}

    def add(text: str) -> None:
        text = text.strip()
        if text:
            ordered.setdefault(text, None)

    bash, powershell = "bash" in declared, "powershell" in declared
    if (bash or powershell) and not any(t in declared for t in _EXPLORERS):
        add(_FILE_OPS["both" if bash and powershell else "bash" if bash else "powershell"])
    for name in declared:
        for text in tool_guidelines.get(name) or ():
            add(text)
    for text in extra:
        add(text)
    for text in _ALWAYS:
        add(text)
    return "\n".join(f"- {text}" for text in ordered)


def _tools(declared: Sequence[str], snippets: Mapping[str, str]) -> str:
    listed = [f"- {name}: {snippets[name]}" for name in declared if snippets.get(name)]
    return ("\n".join(listed) if listed else "(none)") + "\n\n" + _OTHER_TOOLS


def _docs_locations(docs: DocsLocations | str | os.PathLike[str] | None) -> DocsLocations | None:
    if docs is None or isinstance(docs, DocsLocations):
        return docs
    return package_docs_locations(docs)


def _docs(docs: DocsLocations) -> str:
    lines = [
        "Documentation of pi, the harness you run in (open it only when the user asks about pi itself: its"
        " extensions, skills, themes, prompt templates, SDK, settings or terminal interface):"
    ]
    if docs.readme:
        lines.append(f"- Overview: {docs.readme}")
    if docs.docs:
        lines.append(f"- Further documents: {docs.docs}")
    if docs.examples:
        lines.append(f"- Examples (extensions, custom tools, SDK use): {docs.examples}")
    lines.append(
        "- Paths inside these documents (docs/..., examples/...) are relative to the directories above, not to"
        " the working directory"
    )
    lines.append("- Before changing pi itself or extending it, read the relevant documents and examples to the end")
    return "\n".join(lines)


def skill_read_tool(selected_tools: Sequence[str], hidden_tools: Sequence[str] = ()) -> str | None:
    """Which loading hint the skills section uses (pi's choice): ``"read"``
    when read is declared (selected, not hidden), else ``"bash"`` when bash
    is, else ``"indirect"`` when read or bash is selected but hidden, else
    ``None`` (no skills section). Pure function."""
    declared = [t for t in selected_tools if t not in hidden_tools]
    for tool in ("read", "bash"):
        if tool in declared:
            return tool
    if any(t in selected_tools for t in ("read", "bash")):
        return "indirect"
    return None


def _check_section_names(sections: Mapping[str, str]) -> None:
    for name in sections:
        if not isinstance(name, str) or not SECTION_NAME_RE.fullmatch(name) or name == "preamble":
            raise ValueError(
                f"invalid system prompt section name {name!r}: names are lower-case letters, digits, '_' and '-',"
                " start with a letter, and 'preamble' is reserved"
            )


def build_system_prompt_sections(
    options: BuildSystemPromptOptions | Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, str]:
    """The prompt's sections, in order (pi's ``buildSystemPromptSections``).

    ``options`` is a :class:`BuildSystemPromptOptions`, a mapping in pi's
    camelCase or in snake_case, or keyword arguments (which also override
    the fields of a given options object). Returns
    ``{name: text}`` in prompt order: ``preamble`` as plain text, every other
    section as ``<name>\\nBODY\\n</name>`` (order and presence rules in the
    module docstring). ``force_system_prompt`` plays no part here.

    Raises ``ValueError`` for unknown option names and for an extra section
    whose name does not match :data:`SECTION_NAME_RE` or is ``preamble``.
    Pure apart from :func:`package_docs_locations` (existence checks) when
    ``docs`` is a directory."""
    opts = _options(options, kwargs)
    extra = dict(opts.sections or {})
    _check_section_names(extra)
    selected = list(opts.selected_tools) if opts.selected_tools is not None else list(DEFAULT_TOOLS)
    hidden = list(opts.hidden_tools or ())
    declared = [t for t in selected if t not in hidden]

    bodies: dict[str, str] = {}
    if opts.custom_prompt:
        bodies["preamble"] = opts.custom_prompt
    else:
        bodies["preamble"] = _INTRO
        bodies["tools"] = _tools(declared, opts.tool_snippets or {})
        bodies["rules"] = _rules(declared, opts.tool_guidelines or {}, opts.prompt_guidelines or ())
        docs = _docs_locations(opts.docs)
        if docs is not None and (docs.readme or docs.docs or docs.examples):
            bodies["docs"] = _docs(docs)
    if opts.append_system_prompt:
        bodies["addendum"] = opts.append_system_prompt
    if opts.context_files:
        bodies["project_context"] = format_context_files(opts.context_files)
    tool = skill_read_tool(selected, hidden)
    if tool is not None and opts.skills:
        block = format_skills_for_prompt(opts.skills, tool).strip()
        if block:
            bodies["skills"] = block
    bodies["cwd"] = (opts.cwd or "").replace("\\", "/")
    for name, body in extra.items():
        if body:
            bodies[name] = body  # a built-in name keeps its place (dict order)

    return {name: body if name == "preamble" else f"<{name}>\n{body}\n</{name}>" for name, body in bodies.items()}


def build_system_prompt_state(
    options: BuildSystemPromptOptions | Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    """The prompt as a system message carries it (pi's
    ``buildSystemPromptState``): ``{"content": forced}`` when
    ``force_system_prompt`` is set (even to ``""``), else
    ``{"content": "", "sections": build_system_prompt_sections(...)}``.
    Raises as :func:`build_system_prompt_sections`."""
    opts = _options(options, kwargs)
    if opts.force_system_prompt is not None:
        return {"content": opts.force_system_prompt}
    return {"content": "", "sections": build_system_prompt_sections(opts)}


def render_system_prompt_state(state: Mapping[str, Any]) -> str:
    """The text of a prompt state (pi's ``getSystemMessageText``):
    ``content`` (a string, or a list of ``{type: "text", text}`` blocks),
    then each value of ``sections`` that is not ``None``, non-empty parts
    joined by ``"\\n\\n"``. Pure function."""
    content = state.get("content") or ""
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    parts = [content, *(v for v in (state.get("sections") or {}).values() if v is not None)]
    return "\n\n".join(p for p in parts if p)


def build_system_prompt(options: BuildSystemPromptOptions | Mapping[str, Any] | None = None, **kwargs: Any) -> str:
    """The system prompt text (pi's ``buildSystemPrompt``): the render of
    :func:`build_system_prompt_state` -- a forced prompt verbatim, else the
    sections joined by blank lines (no trailing newline; the default prompt
    ends with the ``cwd`` section or the last extra section).

    Raises ``ValueError`` for unknown option names and bad section names."""
    return render_system_prompt_state(build_system_prompt_state(options, **kwargs))


def diff_system_prompt_sections(
    previous: Mapping[str, str | None], current: Mapping[str, str]
) -> dict[str, str | None] | None:
    """What a system message must carry to turn ``previous`` into ``current``
    (pi's ``diffSystemPromptSections``): every section of ``current`` whose
    text differs from ``previous`` (or is new), in ``current``'s order, then
    ``None`` for every name of ``previous`` that ``current`` lacks. Returns
    ``None`` when nothing changed. Pure function."""
    patch: dict[str, str | None] = {name: text for name, text in current.items() if previous.get(name) != text}
    for name in previous:
        if name not in current:
            patch[name] = None
    return patch or None


def describe_system_prompt(
    options: BuildSystemPromptOptions | Mapping[str, Any],
    previous: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Everything about one prompt, in the shape of pi-oracle's
    ``system-prompt-sections``: ``{sections, order, state, text}`` (sections
    as :func:`build_system_prompt_sections`, ``order`` their names, ``state``
    as :func:`build_system_prompt_state`, ``text`` as
    :func:`build_system_prompt`), plus ``patch`` (a patch or ``None``) when
    ``previous`` sections are given. The sections are built even for a forced
    prompt (as the oracle does).

    Raises ``ValueError`` as :func:`build_system_prompt_sections` (the oracle
    prints ``{error}`` instead)."""
    opts = options if isinstance(options, BuildSystemPromptOptions) else BuildSystemPromptOptions.from_dict(options)
    sections = build_system_prompt_sections(opts)
    state: dict[str, Any] = {"content": "", "sections": sections}
    if opts.force_system_prompt is not None:
        state = {"content": opts.force_system_prompt}
    result: dict[str, Any] = {
        "sections": sections,
        "order": list(sections),
        "state": state,
        "text": render_system_prompt_state(state),
    }
    if previous is not None:
        result["patch"] = diff_system_prompt_sections(previous, sections)
    return result
