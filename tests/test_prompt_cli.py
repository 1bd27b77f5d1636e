"""``pi-session system-prompt``: in-process through typer's CliRunner, plus one
run of the real console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pi_session.cli import prompt_cmds
from pi_session.prompt import BuildSystemPromptOptions, describe_system_prompt
from test_prompt_system import PROMPTS, structure
from test_prompt_trees import CLI_FLAGS, GOLDENS, PROMPT_SCENARIOS, build_all, normalise

SCRIPT = shutil.which("pi-session") or str(Path(sys.executable).parent / "pi-session")
CTX_GOLDEN = json.loads((GOLDENS / "context_files.json").read_text())
SKILLS_GOLDEN = json.loads((GOLDENS / "skills.json").read_text())

app = typer.Typer()
prompt_cmds.register(app)


@app.callback()
def _group() -> None:
    """Keep ``system-prompt`` a subcommand (typer runs a lone command directly)."""


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "root"
    root.mkdir()
    build_all(root)
    return root


@pytest.fixture
def run(tree: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree / "agent"))
    monkeypatch.setenv("HOME", str(tree / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("PI_PACKAGE_DIR", raising=False)

    def invoke(*args: str, agent: str = "agent"):
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree / agent))
        return CliRunner().invoke(app, ["system-prompt", *args])

    return invoke


def plain(files: list[dict]) -> list[dict]:
    return [dict(f, content=f["content"].replace("\r\n", "\n").replace("\r", "\n")) for f in files]


def test_json_output(tree: Path, run) -> None:
    cwd = tree / "proj" / "a" / "b" / "c" / "d"
    res = run("--cwd", str(cwd), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out) == {"sections", "order", "state", "text", "contextFiles", "skills", "diagnostics"}
    assert out["order"] == ["preamble", "tools", "rules", "project_context", "skills", "cwd"]
    assert normalise(out["contextFiles"], tree) == plain(CTX_GOLDEN["deep"])
    user_skills = [s for s in SKILLS_GOLDEN["defaults"]["skills"] if "/agent/skills/" in s["filePath"]]
    assert normalise(out["skills"], tree) == user_skills
    kinds = {(d["type"], normalise(d["path"], tree)) for d in out["diagnostics"]}
    assert ("warning", "<ROOT>/agent/skills/bad-yaml/SKILL.md") in kinds
    assert not any(d["path"].endswith("b/AGENTS.md") for d in out["diagnostics"])  # a directory: skipped silently
    # The CLI's result is exactly the library's for the same inputs.
    assert {k: out[k] for k in ("sections", "order", "state", "text")} == describe_system_prompt(
        BuildSystemPromptOptions(
            cwd=str(cwd),
            tool_snippets=dict(line[2:].split(": ", 1) for line in out["sections"]["tools"].split("\n")[1:5]),
            tool_guidelines={t: list(g) for t, g in prompt_cmds.DEFAULT_TOOL_GUIDELINES.items() if t != "ls"},
            context_files=out["contextFiles"],
            skills=out["skills"],
        )
    )


def test_flags_give_pis_structure(run, tmp_path: Path) -> None:
    """The options the flags build agree with pi 1.6 on the same options
    (given pi's package directory, which pi names in its docs section)."""
    (tmp_path / "README.md").write_text("pi\n")
    res = run(*CLI_FLAGS, "--docs", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    options = PROMPT_SCENARIOS["cli-flags"]
    assert structure(json.loads(res.stdout), options) == structure(PROMPTS["cli-flags"]["result"], options)


def test_plain_output_has_no_stray_blank_lines(tree: Path, run) -> None:
    res = run("--cwd", str(tree / "proj" / "a"))
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert text.endswith(f"<cwd>\n{tree}/proj/a\n</cwd>\n")
    assert "\n\n\n" not in text
    assert "\n\n</project_instructions>" not in text and "\r" not in text
    assert f'<project_instructions path="{tree}/proj/AGENTS.md">\nproject root\nwith CRLF\n</project_instructions>' in text
    assert "Current date" not in text
    assert "<name>good-one</name>" in text and "<name>hidden-skill</name>" not in text


def test_docs_section_only_for_pis_package_dir(tree: Path, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = ("--cwd", str(tree), "--json", "--no-skills", "--no-context-files")
    out = json.loads(run(*base).stdout)
    # by default no docs section, and never pi-session's own README
    assert "docs" not in out["sections"]
    assert "README.md" not in out["text"] and "pi-session" not in out["text"]
    pkg = tmp_path / "pi-pkg"
    for sub in ("docs", "examples"):
        (pkg / sub).mkdir(parents=True)
    (pkg / "README.md").write_text("pi\n")
    docs = json.loads(run(*base, "--docs", str(pkg)).stdout)["sections"]["docs"]
    assert all(f"{pkg}/{name}" in docs for name in ("README.md", "docs", "examples"))
    # pi's own override of its package directory counts too; --docs '' turns it off
    monkeypatch.setenv("PI_PACKAGE_DIR", str(pkg))
    assert f"{pkg}/README.md" in json.loads(run(*base).stdout)["sections"]["docs"]
    assert "docs" not in json.loads(run(*base, "--docs", "").stdout)["sections"]
    bad = run(*base, "--docs", str(tmp_path / "missing"))
    assert bad.exit_code != 0 and "missing: --docs: not a directory" in bad.stderr


def test_tools_and_hidden_tools(tree: Path, run) -> None:
    res = run("--cwd", str(tree / "proj"), "--tools", "bash,grep,mytool", "--no-skills", "--json")
    out = json.loads(res.stdout)
    listed = out["sections"]["tools"].split("\n\n")[0].split("\n")[1:]
    assert [line.split(":")[0] for line in listed] == ["- bash", "- grep"]
    res = run("--cwd", str(tree / "proj"), "--tools", "bash,grep,mytool", "--no-skills")
    assert "mytool" in res.stderr
    # without a reader no skills section; with bash as reader there is one
    assert "skills" not in json.loads(run("--cwd", str(tree / "proj"), "--tools", "edit", "--json").stdout)["sections"]
    assert "skills" in json.loads(run("--cwd", str(tree / "proj"), "--tools", "bash", "--json").stdout)["sections"]
    hidden = json.loads(run("--cwd", str(tree / "proj"), "--tools", "read,edit", "--hide-tool", "read", "--json").stdout)
    assert "- read:" not in hidden["sections"]["tools"] and "skills" in hidden["sections"]
    none = json.loads(run("--cwd", str(tree / "proj"), "--tools", "", "--json").stdout)
    assert none["sections"]["tools"].startswith("<tools>\n(none)\n")


def test_custom_force_append_sections(tree: Path, run, tmp_path: Path) -> None:
    custom = tmp_path / "custom.md"
    custom.write_bytes(b"\xef\xbb\xbfMY OWN\r\nPROMPT")
    res = run("--cwd", str(tree / "proj" / "a"), "--custom-prompt", str(custom), "--append", "EXTRA",
              "--no-context-files", "--no-skills", "--section", "notes=N1", "--date", "2024-01-02")
    assert res.exit_code == 0, res.output
    assert res.stdout == f"MY OWN\nPROMPT\n\n<addendum>\nEXTRA\n</addendum>\n\n<cwd>\n{tree}/proj/a\n</cwd>\n\n<notes>\nN1\n</notes>\n"
    forced = tmp_path / "forced.md"
    forced.write_text("WHOLE\n\nPROMPT")
    res = run("--cwd", str(tree), "--force", str(forced), "--json")
    out = json.loads(res.stdout)
    assert out["state"] == {"content": "WHOLE\n\nPROMPT"} and out["text"] == "WHOLE\n\nPROMPT"
    assert run("--cwd", str(tree), "--force", str(forced)).stdout == "WHOLE\n\nPROMPT\n"


def test_previous_gives_a_patch(tree: Path, run, tmp_path: Path) -> None:
    first = json.loads(run("--cwd", str(tree / "proj"), "--json").stdout)["sections"]
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(first))
    same = json.loads(run("--cwd", str(tree / "proj"), "--json", "--previous", str(prev)).stdout)
    assert same["patch"] is None
    moved = json.loads(run("--cwd", str(tree / "proj" / "a"), "--json", "--previous", str(prev), "--no-skills").stdout)
    assert list(moved["patch"]) == ["project_context", "cwd", "skills"] and moved["patch"]["skills"] is None


def test_no_skills_keeps_explicit_skill_paths(tree: Path, run) -> None:
    """pi: --no-skills turns off the default places; --skill paths still load."""
    res = run("--cwd", str(tree / "proj"), "--no-skills", "--skill", str(tree / "extra" / "single.md"),
              "--skill", "../extra/top", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [s["name"] for s in out["skills"]] == ["single", "top"]
    assert "<name>single</name>" in out["sections"]["skills"]
    both = json.loads(run("--cwd", str(tree / "proj"), "--skill", "../extra/top", "--json").stdout)
    assert "top" in [s["name"] for s in both["skills"]] and "proj-skill" in [s["name"] for s in both["skills"]]
    nothing = json.loads(run("--cwd", str(tree / "proj"), "--no-skills", "--json").stdout)
    assert nothing["skills"] == [] and "skills" not in nothing["sections"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--custom-prompt", "/nonexistent/prompt.md"], "/nonexistent/prompt.md"),
        (["--force", "/nonexistent/forced.md"], "/nonexistent/forced.md"),
        (["--cwd", "/nonexistent/dir"], "/nonexistent/dir"),
        (["--section", "Bad=x"], "'Bad'"),
        (["--section", "preamble=x"], "preamble"),
        (["--section", "noequals"], "--section"),
        (["--tool-guideline", "=x"], "--tool-guideline"),
        (["--previous", "/nonexistent/prev.json"], "/nonexistent/prev.json"),
    ],
)
def test_errors_are_one_line(tree: Path, run, args: list[str], needle: str) -> None:
    res = run("--cwd", str(tree / "proj"), *args) if "--cwd" not in args else run(*args)
    assert res.exit_code == 1
    assert res.stdout == ""
    err = res.stderr.strip()
    assert "\n" not in err and needle in err and "Traceback" not in err


def test_bad_previous_json(tree: Path, run, tmp_path: Path) -> None:
    for text in ("{not json", "[1, 2]", '{"a": 1}'):
        prev = tmp_path / "prev.json"
        prev.write_text(text)
        res = run("--cwd", str(tree / "proj"), "--previous", str(prev))
        assert res.exit_code == 1 and str(prev) in res.stderr and "Traceback" not in res.stderr


def test_missing_agent_dir_is_fine(tree: Path, run) -> None:
    res = run("--cwd", str(tree / "upper" / "x"), "--json", agent="does-not-exist")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert normalise(out["contextFiles"], tree) == CTX_GOLDEN["upper"]
    assert out["skills"] == [] and out["diagnostics"] == []


def test_console_script(tree: Path) -> None:
    """The real entry point: plain output on stdout, warnings on stderr."""
    env = dict(os.environ, PI_CODING_AGENT_DIR=str(tree / "agent"), HOME=str(tree / "home"), COLUMNS="200")
    proc = subprocess.run([SCRIPT, "system-prompt", "--cwd", str(tree / "proj")], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(f"<cwd>\n{tree}/proj\n</cwd>\n")
    assert "bad-yaml/SKILL.md" in proc.stderr and "Traceback" not in proc.stderr
