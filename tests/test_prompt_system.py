"""build_system_prompt: structure compared with pi's (goldens), plus unit and
property tests. pi's prose differs from ours, so prompts are reduced to a
structure (sections, tool lines, guideline slots, context and skills blocks,
footer) before comparing."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_session.prompt import (
    DEFAULT_TOOLS,
    BuildSystemPromptOptions,
    DocsLocations,
    Skill,
    build_system_prompt,
    format_context_files,
)
from test_prompt_trees import GOLDENS, ORACLE, PROMPT_SCENARIOS

GOLDEN = json.loads((GOLDENS / "system_prompt.json").read_text())
DATE_RE = re.compile(r"^Current date: \d{4}-\d{2}-\d{2}$")


def structure(prompt: str, options: dict) -> dict:
    """Reduce a prompt to what must agree with pi: everything but the prose."""
    cut = prompt.rindex("\nCurrent date: ")
    body, footer = prompt[:cut], prompt[cut + 1 :].split("\n")
    assert len(footer) == 2 and DATE_RE.match(footer[0]), footer
    out: dict = {"footer": ["<DATE>", footer[1]]}

    out["skills_xml"] = None
    idx = body.find("\n\n<available_skills>\n")
    if idx >= 0:
        pre = body[:idx]
        start = pre.rindex("\n\n")
        out["skills_intro_lines"] = len(pre[start + 2 :].split("\n"))
        out["skills_xml"] = body[idx + 2 :]
        body = pre[:start]

    out["context"] = None
    marker = "\n\n# Project Context\n\n"
    cidx = body.find(marker)
    if cidx >= 0:
        block = body[cidx + len(marker) :]
        intro, _, sections = block.partition("\n\n")
        out["context_intro_lines"] = len(intro.split("\n"))
        out["context"] = sections
        body = body[:cidx]

    append = options.get("appendSystemPrompt")
    if append:
        assert body.endswith("\n\n" + append)
        body = body[: -len(append) - 2]
        out["append"] = append

    if options.get("customPrompt"):
        out["main"] = {"custom": body}
        return out
    paragraphs = body.split("\n\n")
    assert len(paragraphs) == 5, paragraphs
    intro, tools, note, guidelines, docs = paragraphs
    caller = {g.strip() for g in options.get("promptGuidelines", []) if g.strip()}
    glines = guidelines.split("\n")
    out["main"] = {
        "intro_lines": len(intro.split("\n")),
        "tools": tools,
        "note_lines": len(note.split("\n")),
        "guidelines_header": len(glines[0]) > 0 and not glines[0].startswith("- "),
        "guidelines": [
            f"caller:{line[2:]}" if line[2:] in caller else "builtin" for line in glines[1:]
        ],
        "guideline_lines_are_bullets": all(line.startswith("- ") for line in glines[1:]),
        "docs_header": not docs.split("\n")[0].startswith("- "),
        "docs_bullets": sum(1 for line in docs.split("\n")[1:] if line.startswith("- ")),
        "docs_lines": len(docs.split("\n")),
    }
    return out


@pytest.mark.parametrize("name", sorted(PROMPT_SCENARIOS))
def test_structure_matches_pi(name: str) -> None:
    case = GOLDEN[name]
    assert case["options"] == PROMPT_SCENARIOS[name], "goldens are stale: regenerate them"
    ours = build_system_prompt(case["options"])
    assert structure(ours, case["options"]) == structure(case["prompt"], case["options"])


def test_goldens_cover_the_guideline_rules() -> None:
    # The golden set must exercise each file-exploration rule and its absence.
    counts = {n: structure(GOLDEN[n]["prompt"], GOLDEN[n]["options"])["main"]["guidelines"] for n in
              ("no-tools", "bash-only", "bash-grep", "ls-no-bash")}
    assert len(counts["no-tools"]) == 2
    assert len(counts["ls-no-bash"]) == 2
    assert len(counts["bash-only"]) == 3
    assert len(counts["bash-grep"]) == 3


def test_structure_detects_differences() -> None:
    opts = PROMPT_SCENARIOS["guidelines"]
    base = structure(build_system_prompt(opts), opts)
    fewer = dict(opts, promptGuidelines=["first"])
    assert structure(build_system_prompt(fewer), opts) != base
    no_bash = dict(opts, selectedTools=["read", "ls"])
    assert structure(build_system_prompt(no_bash), opts) != base


# --------------------------------------------------------------------------- unit tests

D = dt.date(2024, 3, 5)
DOCS = DocsLocations("/d/README.md", "/d/docs", "/d/examples")


def build(**kw) -> str:
    kw.setdefault("cwd", "/w")
    kw.setdefault("date", D)
    kw.setdefault("docs", DOCS)
    return build_system_prompt(BuildSystemPromptOptions(**kw))


def test_footer_date_and_cwd() -> None:
    text = build(cwd="C:\\a\\b")
    assert text.endswith("\nCurrent date: 2024-03-05\nCurrent working directory: C:/a/b")


def test_default_date_is_today() -> None:
    assert f"Current date: {dt.date.today().isoformat()}" in build_system_prompt({"cwd": "/x"})


def test_tools_listed_only_with_snippets_in_selected_order() -> None:
    text = build(selected_tools=["write", "read", "zzz"], tool_snippets={"read": "R", "write": "W", "bash": "B"})
    assert "Available tools:\n- write: W\n- read: R\n\n" in text
    assert "- bash: B" not in text
    assert "Available tools:\n(none)\n" in build(selected_tools=["read"])


def test_default_tool_set_is_pis() -> None:
    assert DEFAULT_TOOLS == ("read", "bash", "edit", "write")
    text = build(tool_snippets={t: t.upper() for t in ("read", "bash", "edit", "write", "grep")})
    assert "- read: READ\n- bash: BASH\n- edit: EDIT\n- write: WRITE\n\n" in text


def guideline_lines(text: str) -> list[str]:
    block = text.split("Guidelines:\n", 1)[1].split("\n\n", 1)[0]
    return [line[2:] for line in block.split("\n")]


def test_caller_guidelines_trimmed_deduplicated_in_order() -> None:
    lines = guideline_lines(build(selected_tools=["read"], prompt_guidelines=[" b ", "a", "b", "", "  ", "c"]))
    assert lines[:3] == ["b", "a", "c"]
    assert len(lines) == 5


def test_custom_prompt_keeps_append_context_skills_footer() -> None:
    skill = Skill("s", "desc", "/s/SKILL.md", "/s")
    text = build(
        custom_prompt="MINE",
        append_system_prompt="MORE",
        context_files=[{"path": "/p/AGENTS.md", "content": "C"}],
        skills=[skill],
        prompt_guidelines=["never shown"],
    )
    assert text.startswith("MINE\n\nMORE\n\n# Project Context\n\n")
    assert "## /p/AGENTS.md\n\nC\n\n" in text
    assert "<name>s</name>" in text
    assert "never shown" not in text and "Available tools" not in text
    # custom prompt: skills shown when no tool list is given or it has read
    assert "<available_skills>" not in build(custom_prompt="MINE", skills=[skill], selected_tools=["bash"])
    assert "<available_skills>" in build(custom_prompt="MINE", skills=[skill], selected_tools=["read"])
    # default prompt: default tool set includes read
    assert "<available_skills>" in build(skills=[skill])
    assert "<available_skills>" not in build(skills=[skill], selected_tools=[])


def test_empty_custom_prompt_means_default() -> None:
    assert build(custom_prompt="") == build()


def test_context_block_format() -> None:
    assert format_context_files([]) == ""
    block = format_context_files([{"path": "/a", "content": "x"}, {"path": "/b", "content": "y"}])
    assert block.startswith("\n\n# Project Context\n\n")
    assert block.endswith("## /a\n\nx\n\n## /b\n\ny\n\n")


def test_options_accept_camel_and_snake_case_and_reject_unknown() -> None:
    a = build_system_prompt({"cwd": "/w", "selectedTools": ["bash"], "date": "2024-03-05"})
    b = build_system_prompt(cwd="/w", selected_tools=["bash"], date=D)
    assert a == b
    with pytest.raises(ValueError, match="unknownOption"):
        build_system_prompt({"cwd": "/w", "unknownOption": 1})


@given(st.lists(st.text(alphabet="ab \t", max_size=4), max_size=8))
def test_guidelines_property(items: list[str]) -> None:
    lines = guideline_lines(build(selected_tools=["read"], prompt_guidelines=items))
    assert len(lines) == len(set(lines))
    expected: list[str] = []
    for item in items:
        if item.strip() and item.strip() not in expected:
            expected.append(item.strip())
    assert lines[: len(expected)] == expected
    assert len(lines) == len(expected) + 2


# --------------------------------------------------------------------------- live oracle


@pytest.mark.oracle
@pytest.mark.skipif(shutil.which("node") is None or not ORACLE.exists(), reason="node or pi-oracle missing")
def test_live_oracle_structure(tmp_path: Path) -> None:
    options = {
        "cwd": "/live",
        "selectedTools": ["read", "bash", "find"],
        "toolSnippets": {"read": "r", "find": "f"},
        "promptGuidelines": ["one", "two", "one"],
        "appendSystemPrompt": "tail",
        "contextFiles": [{"path": "/x/AGENTS.md", "content": "c"}],
        "skills": [{"name": "k", "description": "d", "filePath": "/k/SKILL.md", "baseDir": "/k"}],
    }
    path = tmp_path / "o.json"
    path.write_text(json.dumps(options))
    theirs = subprocess.run([str(ORACLE), "system-prompt", str(path)], capture_output=True, text=True, check=True).stdout
    assert structure(build_system_prompt(options), options) == structure(theirs, options)
