"""pi 0.58.3's ``packages/coding-agent/test/system-prompt.test.ts`` against
:func:`pi_session.prompt.build_system_prompt`.

The prompt's prose is our own (an already-decided difference), so where pi's
test looks for pi's sentence these check the section and the rule it stands
for. Decided by pi 1.6 (see ``README.md``): the default tools are listed only
with the snippets the caller passes; without any the tools section says
``(none)``, as pi 1.6 does."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from pi_session.prompt import DEFAULT_TOOL_SNIPPETS, DEFAULT_TOOLS, build_system_prompt, build_system_prompt_sections
from shared_paths import ORACLE, needs_oracle

# the option sets of pi's cases (camelCase, as pi takes them)
PI_CASES: dict[str, dict[str, Any]] = {
    "no-tools": {"selectedTools": [], "contextFiles": [], "skills": []},
    "default-tools": {"contextFiles": [], "skills": []},
    "default-tools-snippets": {"contextFiles": [], "skills": [], "toolSnippets": DEFAULT_TOOL_SNIPPETS},
    "custom-snippet": {
        "selectedTools": ["read", "dynamic_tool"],
        "toolSnippets": {"dynamic_tool": "Run dynamic test behavior"},
        "contextFiles": [],
        "skills": [],
    },
    "guideline": {
        "selectedTools": ["read", "dynamic_tool"],
        "promptGuidelines": ["Use dynamic_tool for project summaries."],
        "contextFiles": [],
        "skills": [],
    },
    "guidelines-dedup": {
        "selectedTools": ["read", "dynamic_tool"],
        "promptGuidelines": ["Use dynamic_tool for summaries.", "  Use dynamic_tool for summaries.  ", "   "],
        "contextFiles": [],
        "skills": [],
    },
}


def section(prompt: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*?)\n</{name}>", prompt, re.S)
    assert found is not None, f"no <{name}> section"
    return found.group(1)


def bullets(body: str) -> list[str]:
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]


def test_system_prompt_without_tools_lists_none() -> None:
    prompt = build_system_prompt(selected_tools=[], context_files=[], skills=[])
    assert section(prompt, "tools").startswith("(none)\n")
    assert "<tools>\n(none)" in prompt


def test_system_prompt_without_tools_still_asks_for_clear_file_paths() -> None:
    prompt = build_system_prompt(selected_tools=[], context_files=[], skills=[])
    rules = bullets(section(prompt, "rules"))
    assert any("file paths" in rule for rule in rules)


def test_system_prompt_default_tools_are_listed_with_their_snippets() -> None:
    # pi 0.58 had built-in snippets for the default tools; in pi 1.6 (and
    # here) a tool is listed only with a snippet the caller passes: without
    # one the default set lists (none) (pi-oracle system-prompt)
    bare = build_system_prompt(context_files=[], skills=[])
    assert section(bare, "tools").startswith("(none)\n")
    prompt = build_system_prompt(context_files=[], skills=[], tool_snippets=DEFAULT_TOOL_SNIPPETS)
    tools = section(prompt, "tools")
    for name in ("read", "bash", "edit", "write"):
        assert name in DEFAULT_TOOLS
        assert f"- {name}:" in tools


def test_system_prompt_lists_a_custom_tool_with_its_snippet() -> None:
    prompt = build_system_prompt(
        selected_tools=["read", "dynamic_tool"],
        tool_snippets={"dynamic_tool": "Run dynamic test behavior"},
        context_files=[],
        skills=[],
    )
    assert "- dynamic_tool: Run dynamic test behavior" in section(prompt, "tools")


def test_system_prompt_adds_prompt_guidelines_to_the_rules() -> None:
    prompt = build_system_prompt(
        selected_tools=["read", "dynamic_tool"],
        prompt_guidelines=["Use dynamic_tool for project summaries."],
        context_files=[],
        skills=[],
    )
    assert "Use dynamic_tool for project summaries." in bullets(section(prompt, "rules"))


def test_system_prompt_trims_and_deduplicates_prompt_guidelines() -> None:
    prompt = build_system_prompt(
        selected_tools=["read", "dynamic_tool"],
        prompt_guidelines=["Use dynamic_tool for summaries.", "  Use dynamic_tool for summaries.  ", "   "],
        context_files=[],
        skills=[],
    )
    assert len(re.findall(r"- Use dynamic_tool for summaries\.", prompt)) == 1
    assert "" not in bullets(section(prompt, "rules"))


def shape(sections: dict[str, str]) -> dict[str, Any]:
    """What does not depend on the prose: the section order, the listed
    tools, and how many rules there are (with the caller's rules as given)."""
    tools = bullets(sections["tools"].removeprefix("<tools>\n").removesuffix("\n</tools>"))
    rules = bullets(sections["rules"].removeprefix("<rules>\n").removesuffix("\n</rules>"))
    return {"order": list(sections), "tools": tools, "rules": len(rules), "dynamic": [r for r in rules if "dynamic" in r]}


@needs_oracle
def test_system_prompt_cases_have_pi16_structure(tmp_path: Path) -> None:
    calls = []
    for name, options in PI_CASES.items():
        file = tmp_path / f"{name}.json"
        file.write_text(json.dumps({"cwd": "/proj", **options}))
        calls.append(["system-prompt-sections", str(file)])
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    env = {**os.environ, "PI_ORACLE_PI": "1.6.0"}
    proc = subprocess.run(
        [str(ORACLE), "batch", str(tmp_path / "calls.json")], capture_output=True, text=True, check=True, env=env
    )
    for (name, options), answer in zip(PI_CASES.items(), json.loads(proc.stdout), strict=True):
        # pi names its package's documentation; ours does when given it
        pi_docs = {"readme": "/pi/README.md", "docs": "/pi/docs", "examples": "/pi/examples"}
        ours = build_system_prompt_sections({"cwd": "/proj", **options, "docs": pi_docs})
        assert shape(ours) == shape(answer["json"]["sections"]), name
