"""The system-prompt command."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from ..core.paths import agent_dir as default_agent_dir
from ..prompt import (
    DEFAULT_TOOL_GUIDELINES,
    DEFAULT_TOOL_SNIPPETS,
    DEFAULT_TOOLS,
    PACKAGE_DIR_ENV,
    BuildSystemPromptOptions,
    SkillDiagnostic,
    describe_system_prompt,
    load_project_context_files,
    load_skills,
)
from ..prompt import normalize_text
from ..prompt.context_files import ContextFileDiagnostic
from .common import fail, print_json, warn


def _parse_tools(spec: str | None) -> list[str]:
    if spec is None:
        return list(DEFAULT_TOOLS)
    tools: list[str] = []
    for raw in spec.split(","):
        name = raw.strip()
        if name and name not in tools:
            tools.append(name)
    return tools


def _pairs(values: list[str], option: str, what: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            fail(f"{option}: expected {what}=TEXT, got {value!r}")
        pairs.append((key.strip(), text))
    return pairs


def _read_text_file(path: str, what: str) -> str:
    """A prompt file as an editor wrote it: UTF-8, no byte-order mark, ``\\n``
    line ends; a regular file of at most :data:`MAX_PROMPT_FILE` bytes (a
    device such as /dev/urandom would never end)."""
    import os
    import stat

    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                fail(f"{path}: cannot read {what}: not a regular file")
            data = fh.read(MAX_PROMPT_FILE + 1)
    except OSError as exc:
        fail(f"{path}: cannot read {what}: {exc.strerror or exc}")
    if len(data) > MAX_PROMPT_FILE:
        fail(f"{path}: cannot read {what}: larger than {MAX_PROMPT_FILE // (1 << 20)} MiB")
    return normalize_text(data.decode("utf-8", errors="replace"))


MAX_PROMPT_FILE = 8 << 20
"""Largest prompt file ``system-prompt`` reads, in bytes."""


def _read_previous(path: str) -> dict[str, str | None]:
    from ..core.jsonio import loads

    try:
        with open(path, "rb") as fh:
            value = loads(fh.read())
    except OSError as exc:
        fail(f"{path}: cannot read previous sections: {exc.strerror or exc}")
    except ValueError as exc:
        fail(f"{path}: not JSON: {exc}")
    if not isinstance(value, dict) or not all(isinstance(v, str) or v is None for v in value.values()):
        fail(f"{path}: previous sections must be a JSON object of section name -> text or null")
    return value


def system_prompt(
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Working directory (default: the current one)."),
    tools: Optional[str] = typer.Option(
        None, "--tools", help="Comma-separated tool names (default: read,bash,edit,write; '' for none)."
    ),
    hide_tool: list[str] = typer.Option(
        [], "--hide-tool", help="A selected tool that requests do not declare (repeatable): not listed, adds no rules."
    ),
    tool_guideline: list[str] = typer.Option(
        [], "--tool-guideline", help="TOOL=TEXT: a rule that applies while TOOL is declared (repeatable)."
    ),
    guideline: list[str] = typer.Option([], "--guideline", help="A further rule for the rules section (repeatable)."),
    custom_prompt: Optional[str] = typer.Option(
        None, "--custom-prompt", help="File whose text replaces the default preamble (and drops tools, rules, docs)."
    ),
    docs: Optional[str] = typer.Option(
        None,
        "--docs",
        metavar="DIR",
        help=f"pi's package directory (README.md, docs/, examples/) for the docs section, as pi names its own;"
        f" default ${PACKAGE_DIR_ENV} when set, else no docs section ('' for none).",
    ),
    force: Optional[str] = typer.Option(
        None, "--force", help="File whose text is the whole prompt, verbatim (no sections)."
    ),
    append: Optional[str] = typer.Option(None, "--append", help="Text for the addendum section."),
    section: list[str] = typer.Option(
        [], "--section", help="NAME=TEXT: an extra section, or a new body for a built-in one (repeatable)."
    ),
    skill: list[str] = typer.Option(
        [], "--skill", help="Skill directory or .md file (repeatable); loaded even with --no-skills."
    ),
    no_skills: bool = typer.Option(False, "--no-skills", help="Do not load skills from the default places."),
    no_context_files: bool = typer.Option(False, "--no-context-files", help="Do not load AGENTS.md/CLAUDE.md files."),
    previous: Optional[str] = typer.Option(
        None, "--previous", help="JSON file of earlier sections; --json then adds the patch from them."
    ),
    date: Optional[str] = typer.Option(None, "--date", hidden=True, help="Ignored: prompts carry no date any more."),
    as_json: bool = typer.Option(
        False, "--json", help="Print {sections, order, state, text[, patch], contextFiles, skills, diagnostics}."
    ),
) -> None:
    """Print the system prompt for a directory: named sections (tools, rules,
    docs, addendum, project context, skills, cwd) joined by blank lines.
    The docs section names pi's documentation and is there only with
    --docs DIR (or $PI_PACKAGE_DIR): a prompt for another agent has none.

    The agent dir is $PI_CODING_AGENT_DIR, else ~/.pi/agent. Problems with
    context files or skills are printed as warnings (or listed under
    "diagnostics" with --json); they do not make the command fail."""
    del date  # accepted for old scripts; pi 1.6 prompts have no date line
    work_dir = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    if not os.path.isdir(work_dir):
        fail(f"{work_dir}: not a directory")
    agent = os.fspath(default_agent_dir())

    custom_text = _read_text_file(custom_prompt, "custom prompt") if custom_prompt is not None else None
    forced = _read_text_file(force, "forced prompt") if force is not None else None
    previous_sections = _read_previous(previous) if previous is not None else None
    docs_dir = docs if docs is not None else os.environ.get(PACKAGE_DIR_ENV) or None
    if docs_dir and not os.path.isdir(docs_dir):
        where = "--docs" if docs is not None else f"${PACKAGE_DIR_ENV}"
        fail(f"{docs_dir}: {where}: not a directory")

    tool_names = _parse_tools(tools)
    hidden = [t.strip() for t in hide_tool if t.strip()]
    declared = [t for t in tool_names if t not in hidden]
    unknown = [t for t in declared if t not in DEFAULT_TOOL_SNIPPETS]
    if unknown and not as_json and custom_text is None and forced is None:
        warn(f"no description for tool(s) {', '.join(unknown)}; they are not listed in the prompt")
    guidelines: dict[str, list[str]] = {t: list(DEFAULT_TOOL_GUIDELINES.get(t, ())) for t in tool_names}
    for tool, text in _pairs(tool_guideline, "--tool-guideline", "TOOL"):
        guidelines.setdefault(tool, []).append(text)
    extra_sections = dict(_pairs(section, "--section", "NAME"))

    context_diagnostics: list[ContextFileDiagnostic] = []
    context_files = [] if no_context_files else load_project_context_files(work_dir, agent, diagnostics=context_diagnostics)
    diagnostics: list[ContextFileDiagnostic | SkillDiagnostic] = list(context_diagnostics)
    skills = []
    if not no_skills or skill:
        # pi: --no-skills drops the default places, explicitly given paths still load
        result = load_skills(cwd=work_dir, agent_dir=agent, skill_paths=skill, include_defaults=not no_skills)
        skills = result.skills
        diagnostics.extend(result.diagnostics)

    options = BuildSystemPromptOptions(
        cwd=work_dir,
        custom_prompt=custom_text,
        force_system_prompt=forced,
        selected_tools=tool_names,
        hidden_tools=hidden,
        tool_snippets={t: DEFAULT_TOOL_SNIPPETS[t] for t in tool_names if t in DEFAULT_TOOL_SNIPPETS},
        tool_guidelines=guidelines,
        prompt_guidelines=guideline,
        append_system_prompt=append,
        sections=extra_sections,
        context_files=context_files,
        skills=skills,
        docs=docs_dir or None,
    )
    try:
        described = describe_system_prompt(options, previous_sections)
    except ValueError as exc:
        fail(f"--section: {exc}")

    if as_json:
        described.update(
            contextFiles=context_files, skills=[s.to_dict() for s in skills], diagnostics=diagnostics
        )
        print_json(described)
        return
    for diag in diagnostics:
        warn(f"{diag.get('path', '')}: {diag['message']}")
    text = described["text"]
    sys.stdout.write(text + "\n" if text else "")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("system-prompt")(system_prompt)
