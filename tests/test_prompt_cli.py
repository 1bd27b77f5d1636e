"""End-to-end tests of ``pi-session system-prompt`` through the real console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_session.prompt import build_system_prompt
from test_prompt_trees import GOLDENS, build_all, normalise

SCRIPT = shutil.which("pi-session") or str(Path(sys.executable).parent / "pi-session")
CTX_GOLDEN = json.loads((GOLDENS / "context_files.json").read_text())
SKILLS_GOLDEN = json.loads((GOLDENS / "skills.json").read_text())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "root"
    root.mkdir()
    build_all(root)
    return root


def run(root: Path, *args: str, agent: str = "agent") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(root / agent), HOME=str(root / "home"), COLUMNS="200")
    return subprocess.run([SCRIPT, "system-prompt", *args], capture_output=True, text=True, env=env, timeout=60)


def test_json_output_matches_pi_loaders(tree: Path) -> None:
    proc = run(tree, "--cwd", str(tree / "proj" / "a" / "b" / "c" / "d"), "--json", "--date", "2024-01-02")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"prompt", "contextFiles", "skills", "diagnostics"}
    assert normalise(out["contextFiles"], tree) == CTX_GOLDEN["deep"]
    # user skills + (no project skills from this cwd): same as pi for the agent dir
    user_skills = [s for s in SKILLS_GOLDEN["defaults"]["skills"] if "/agent/skills/" in s["filePath"]]
    assert normalise(out["skills"], tree) == user_skills
    kinds = {(d["type"], normalise(d["path"], tree)) for d in out["diagnostics"]}
    assert ("warning", "<ROOT>/proj/a/b/AGENTS.md") in kinds
    assert ("warning", "<ROOT>/agent/skills/bad-yaml/SKILL.md") in kinds
    prompt = out["prompt"]
    assert prompt.endswith(f"\nCurrent date: 2024-01-02\nCurrent working directory: {tree}/proj/a/b/c/d")
    for f in out["contextFiles"]:
        assert f"\n## {f['path']}\n\n{f['content']}\n\n" in prompt
    assert "<name>good-one</name>" in prompt and "<name>hidden-skill</name>" not in prompt
    # The CLI's prompt is exactly the library's for the same inputs.
    assert prompt == build_system_prompt(
        cwd=str(tree / "proj/a/b/c/d"),
        selected_tools=["read", "bash", "edit", "write"],
        tool_snippets=_snippets(prompt),
        prompt_guidelines=_caller_guidelines(),
        context_files=out["contextFiles"],
        skills=out["skills"],
        date=__import__("datetime").date(2024, 1, 2),
    )


def _snippets(prompt: str) -> dict[str, str]:
    block = prompt.split("Available tools:\n", 1)[1].split("\n\n", 1)[0]
    return dict(line[2:].split(": ", 1) for line in block.split("\n"))


def _caller_guidelines() -> list[str]:
    from pi_session.prompt import DEFAULT_TOOL_GUIDELINES

    return [g for t in ("read", "bash", "edit", "write") for g in DEFAULT_TOOL_GUIDELINES.get(t, ())]


def test_plain_output_and_warnings(tree: Path) -> None:
    proc = run(tree, "--cwd", str(tree / "proj"))
    assert proc.returncode == 0
    assert proc.stdout.rstrip("\n").endswith(f"Current working directory: {tree}/proj")
    assert "Available tools:\n- read: " in proc.stdout
    assert "bad-yaml/SKILL.md" in proc.stderr and "Traceback" not in proc.stderr
    assert "<name>proj-skill</name>" in proc.stdout


def test_tools_option(tree: Path) -> None:
    proc = run(tree, "--cwd", str(tree / "proj"), "--tools", "bash,grep,mytool", "--no-skills")
    assert proc.returncode == 0
    tools = _snippets(proc.stdout)
    assert list(tools) == ["bash", "grep"]
    assert "mytool" in proc.stderr
    assert "<available_skills>" not in proc.stdout
    # without read no skills block even when skills exist
    proc = run(tree, "--cwd", str(tree / "proj"), "--tools", "bash")
    assert "<available_skills>" not in proc.stdout
    proc = run(tree, "--cwd", str(tree / "proj"), "--tools", "", "--json")
    assert "Available tools:\n(none)\n" in json.loads(proc.stdout)["prompt"]


def test_custom_prompt_and_append(tree: Path, tmp_path: Path) -> None:
    custom = tmp_path / "custom.md"
    custom.write_text("MY OWN PROMPT")
    proc = run(tree, "--cwd", str(tree / "proj" / "a"), "--custom-prompt", str(custom), "--append", "EXTRA",
               "--no-context-files", "--no-skills")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert proc.stdout.startswith("MY OWN PROMPT\n\nEXTRA\nCurrent date: ")
    assert lines[4] == f"Current working directory: {tree}/proj/a"


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--custom-prompt", "/nonexistent/prompt.md"], "/nonexistent/prompt.md"),
        (["--cwd", "/nonexistent/dir"], "/nonexistent/dir"),
        (["--date", "yesterday"], "--date"),
    ],
)
def test_errors_are_one_line(tree: Path, args: list[str], needle: str) -> None:
    proc = run(tree, *args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    err = proc.stderr.strip()
    assert "\n" not in err and needle in err and "Traceback" not in err


def test_missing_agent_dir_is_fine(tree: Path) -> None:
    proc = run(tree, "--cwd", str(tree / "upper" / "x"), "--json", agent="does-not-exist")
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert normalise(out["contextFiles"], tree) == CTX_GOLDEN["upper"]
    assert out["skills"] == [] and out["diagnostics"] == []
