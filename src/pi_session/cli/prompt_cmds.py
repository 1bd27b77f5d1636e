"""The system-prompt command."""

from __future__ import annotations

import datetime as _dt
import os
import sys
from typing import Any, Optional

import typer

from ..paths import agent_dir as default_agent_dir
from ..prompt import (
    DEFAULT_TOOL_GUIDELINES,
    DEFAULT_TOOL_SNIPPETS,
    DEFAULT_TOOLS,
    BuildSystemPromptOptions,
    build_system_prompt,
    load_project_context_files,
    load_skills,
)
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


def system_prompt(
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Working directory (default: the current one)."),
    tools: Optional[str] = typer.Option(
        None, "--tools", help="Comma-separated tool names (default: read,bash,edit,write; '' for none)."
    ),
    custom_prompt: Optional[str] = typer.Option(
        None, "--custom-prompt", help="File whose text replaces the default prompt text."
    ),
    append: Optional[str] = typer.Option(None, "--append", help="Text appended after the main prompt."),
    skill: list[str] = typer.Option([], "--skill", help="Extra skill directory or .md file (repeatable)."),
    no_skills: bool = typer.Option(False, "--no-skills", help="Do not load any skills."),
    no_context_files: bool = typer.Option(False, "--no-context-files", help="Do not load AGENTS.md/CLAUDE.md."),
    date: Optional[str] = typer.Option(None, "--date", help="Date to show, YYYY-MM-DD (default: today)."),
    as_json: bool = typer.Option(False, "--json", help="Print {prompt, contextFiles, skills, diagnostics}."),
) -> None:
    """Print the system prompt for a directory (tools, guidelines, AGENTS.md/CLAUDE.md, skills).

    The agent dir is $PI_CODING_AGENT_DIR, else ~/.pi/agent. Problems with
    context files or skills are printed as warnings (or listed under
    "diagnostics" with --json); they do not make the command fail."""
    work_dir = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    if not os.path.isdir(work_dir):
        fail(f"{work_dir}: not a directory")
    agent = os.fspath(default_agent_dir())

    custom_text: str | None = None
    if custom_prompt is not None:
        try:
            with open(custom_prompt, encoding="utf-8", errors="replace", newline="") as fh:
                custom_text = fh.read()
        except OSError as exc:
            fail(f"{custom_prompt}: cannot read custom prompt: {exc.strerror or exc}")

    day: _dt.date | None = None
    if date is not None:
        try:
            day = _dt.date.fromisoformat(date)
        except ValueError:
            fail(f"--date: expected YYYY-MM-DD, got {date!r}")

    tool_names = _parse_tools(tools)
    unknown = [t for t in tool_names if t not in DEFAULT_TOOL_SNIPPETS]
    if unknown and not as_json:
        warn(f"no description for tool(s) {', '.join(unknown)}; they are not listed in the prompt")
    guidelines = [g for t in tool_names for g in DEFAULT_TOOL_GUIDELINES.get(t, ())]

    diagnostics: list[dict[str, Any]] = []
    context_files = [] if no_context_files else load_project_context_files(work_dir, agent, diagnostics=diagnostics)
    skills = []
    if not no_skills:
        result = load_skills(cwd=work_dir, agent_dir=agent, skill_paths=skill)
        skills = result.skills
        diagnostics.extend(result.diagnostics)

    options = BuildSystemPromptOptions(
        cwd=work_dir,
        custom_prompt=custom_text,
        selected_tools=tool_names,
        tool_snippets={t: DEFAULT_TOOL_SNIPPETS[t] for t in tool_names if t in DEFAULT_TOOL_SNIPPETS},
        prompt_guidelines=guidelines,
        append_system_prompt=append,
        context_files=context_files,
        skills=skills,
        date=day,
    )
    prompt = build_system_prompt(options)

    if as_json:
        print_json(
            {
                "prompt": prompt,
                "contextFiles": context_files,
                "skills": [s.to_dict() for s in skills],
                "diagnostics": diagnostics,
            }
        )
        return
    for diag in diagnostics:
        warn(f"{diag.get('path', '')}: {diag['message']}")
    sys.stdout.write(prompt + "\n")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("system-prompt")(system_prompt)
