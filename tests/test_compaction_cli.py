"""CLI: tokens, compact, navigate (module registered on a private typer app)."""

from __future__ import annotations

import json
import shutil

import pytest
import typer
from typer.testing import CliRunner

from compaction_golden_util import GOLDENS, SESSIONS, load_golden, load_session
from pi_session.cli import compact_cmds

app = typer.Typer()
compact_cmds.register(app)
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


def copy(tmp_path, name="gen-003.jsonl"):
    dst = tmp_path / name
    shutil.copy(SESSIONS / name, dst)
    return dst


def run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result


def stdout_json(result):
    return json.loads(result.stdout)


CLI_GOLDEN_SESSIONS = [
    "fixture-before-compaction",
    "fixture-large-session",
    "gen-003",
    "gen16-000",
    "gen16-003",
    "gen16-007",
    "gen16-014",
    "gen16-022",
    "crafted-recovery",
    "crafted-turn-starts",
    "crafted-split-after-compaction",
    "crafted-edits",
]


@pytest.mark.parametrize("name", CLI_GOLDEN_SESSIONS)
def test_tokens_json_matches_oracle_golden(tmp_path, name):
    """``tokens --json`` = pi 1.6's ``tokens`` (with ``projected`` and
    ``projectedShouldCompact``) for every golden case of the session."""
    f = copy(tmp_path, f"{name}.jsonl")
    golden = load_golden(GOLDENS / f"{name}.golden.json.gz")
    checked = 0
    for case in golden["cases"]:
        if case["cmd"] != "tokens":
            continue
        args = ["tokens", f, "--json"]
        for key in ("leaf", "window", "reserve"):
            if key in case["opts"]:
                args += [f"--{key}", case["opts"][key]]
        res = run(*args)
        assert res.exit_code == 0, res.output
        out = stdout_json(res)
        assert "projected" in out and "projectedShouldCompact" in out
        assert out == case["out"], case["opts"]
        checked += 1
    assert checked >= 2
    human = run("tokens", f)
    assert human.exit_code == 0 and "context tokens" in human.stdout


@pytest.mark.parametrize("name", CLI_GOLDEN_SESSIONS)
def test_compact_dry_run_json_matches_oracle_prepare(tmp_path, name):
    """``compact --dry-run --json`` = pi 1.6's ``prepare`` (``null`` when
    there is nothing to summarize) for the golden cases at the leaf."""
    f = copy(tmp_path, f"{name}.jsonl")
    golden = load_golden(GOLDENS / f"{name}.golden.json.gz")
    checked = 0
    for case in golden["cases"]:
        if case["cmd"] != "prepare" or "leaf" in case["opts"]:
            continue
        args = ["compact", f, "--dry-run", "--json"]
        if "keep" in case["opts"]:
            args += ["--keep-recent-tokens", case["opts"]["keep"]]
        if "reserve" in case["opts"]:
            args += ["--reserve-tokens", case["opts"]["reserve"]]
        res = run(*args)
        assert res.exit_code == 0, res.output
        assert stdout_json(res) == case["out"], case["opts"]
        checked += 1
    assert checked >= 3


def test_compact_dry_run_human(tmp_path):
    f = copy(tmp_path)
    before = f.read_bytes()
    human = run("compact", f, "--dry-run", "--keep-recent-tokens", 300)
    assert human.exit_code == 0 and "tokens before" in human.stdout and "tokens after" in human.stdout
    assert f.read_bytes() == before
    # nothing to summarize: said so, nothing written
    g = copy(tmp_path, "crafted-split-after-compaction.jsonl")
    before = g.read_bytes()
    for args in (["--dry-run"], ["--provider", "extractive"]):
        human = run("compact", g, "--keep-recent-tokens", 5000, *args)
        assert human.exit_code == 0 and "Nothing to compact" in human.stdout
        assert g.read_bytes() == before


def test_compact_with_extractive_appends_entry(tmp_path):
    f = copy(tmp_path)
    res = run("compact", f, "--keep-recent-tokens", 300, "--provider", "extractive", "--json", "--instructions", "tests")
    assert res.exit_code == 0, res.output
    out = stdout_json(res)
    _h, entries = load_session(f)
    last = entries[-1]
    assert last["type"] == "compaction" and last["id"] == out["id"]
    assert "fromHook" not in last
    assert last["firstKeptEntryId"] == out["firstKeptEntryId"]
    assert "## Goal" in last["summary"] and "## Critical Context" in last["summary"]
    assert out["tokensAfter"] < out["tokensBefore"]
    # now the path ends with a compaction: nothing to do, file untouched
    size = f.stat().st_size
    again = run("compact", f, "--json")
    assert again.exit_code == 0 and stdout_json(again) is None
    assert f.stat().st_size == size


def test_compact_bad_session_is_one_line_error(tmp_path):
    bad = tmp_path / "nope.jsonl"
    res = run("compact", bad, "--dry-run")
    assert res.exit_code != 0
    assert "Traceback" not in res.output
    res = run("compact", copy(tmp_path), "--keep-recent-tokens", -1)
    assert res.exit_code != 0


def test_navigate_with_and_without_summary(tmp_path):
    f = copy(tmp_path, "gen-004.jsonl")
    _h, entries = load_session(f)
    leaf = entries[-1]["id"]
    # target: an assistant message on the path of the leaf, a few steps up
    from pi_session.session.tree import SessionTree

    path = SessionTree(entries).branch(leaf)
    target = next(e for e in reversed(path[:-5]) if e["type"] == "message" and e["message"]["role"] == "assistant")
    res = run("navigate", f, target["id"], "--summarize", "--provider", "extractive", "--json")
    assert res.exit_code == 0, res.output
    out = stdout_json(res)
    _h, after = load_session(f)
    summary = after[-1]
    assert summary["type"] == "branch_summary" and summary["parentId"] == target["id"]
    assert summary["fromId"] == leaf and summary["summary"]  # pi 1.6: the leaf left behind
    assert out["summaryEntry"]["id"] == summary["id"] and out["newLeafId"] == summary["id"]
    assert set(summary["details"]) == {"readFiles", "modifiedFiles"}
    assert out["summarizedEntryIds"][-1] == leaf
    # without --summarize: the move is persisted with an empty branch_summary
    first_user = next(e for e in path if e["type"] == "message" and e["message"]["role"] == "user")
    res = run("navigate", f, first_user["id"], "--json")
    assert res.exit_code == 0, res.output
    out = stdout_json(res)
    assert out["summaryEntry"] is None and out["editorText"] is not None
    _h, after = load_session(f)
    assert after[-1]["type"] == "branch_summary" and after[-1]["summary"] == ""
    assert after[-1]["parentId"] == first_user["parentId"]
    # unknown id
    res = run("navigate", f, "ffffffff")
    assert res.exit_code != 0 and "ffffffff" in res.output


def test_compact_uses_settings_files(tmp_path):
    f = copy(tmp_path)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 300, "reserveTokens": 8192}}))
    golden = load_golden(GOLDENS / "gen-003.golden.json.gz")
    case = next(c for c in golden["cases"] if c["cmd"] == "prepare" and c["opts"] == {"keep": 300, "reserve": 8192})
    res = run("compact", f, "--dry-run", "--json")
    assert res.exit_code == 0, res.output
    assert stdout_json(res) == case["out"]
    # a broken settings file: warning naming it, defaults used, still exit 0
    (agent / "settings.json").write_text("{nope")
    res = run("compact", f, "--dry-run")
    assert res.exit_code == 0
    assert "settings.json" in res.output and "ignoring" in res.output


def test_tokens_after_compaction_shows_the_message_estimate(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "pi-session"
    demo = tmp_path / "demo.jsonl"
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl", demo)
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    run = lambda *a: subprocess.run([str(exe), *a], capture_output=True, text=True, env=env)  # noqa: E731
    before = run("tokens", str(demo))
    assert "note:" not in before.stdout
    assert run("compact", str(demo), "--keep-recent-tokens", "4000", "--provider", "extractive").returncode == 0
    after = run("tokens", str(demo))
    assert "before the latest compaction" in after.stdout

    def estimate(text):
        line = next(line for line in text.splitlines() if line.startswith("context tokens"))
        return int(line.split()[-1].replace(",", ""))

    assert estimate(after.stdout) < estimate(before.stdout) / 2


@pytest.mark.parametrize("option", [["--provider", "bogus"], ["--timeout", "-5"], ["--max-retries", "-1"]])
def test_summarizer_options_are_checked_before_any_work(tmp_path, cli, option):
    """A bad summarizer option is refused also when there is nothing to
    compact (it said "Nothing to compact" and exited 0) and before a
    navigation moves anything; the file is not touched."""
    path = copy(tmp_path)
    before = path.read_bytes()
    res = cli("compact", str(path), "--keep-recent-tokens", "999999999", *option)
    assert res.returncode == 1 and "Nothing to compact" not in res.stdout, (res.stdout, res.stderr)
    assert res.stderr.startswith(f"pi-session: {option[0]}")
    first = json.loads(cli("tree", str(path), "--json").stdout)["entries"][0]["id"]
    res = cli("navigate", str(path), first, "--summarize", *option)
    assert res.returncode == 1 and res.stderr.startswith(f"pi-session: {option[0]}"), res.stderr
    assert path.read_bytes() == before
