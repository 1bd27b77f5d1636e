"""What a new user trips over (issue: red make test, unreadable JSON, wrong
reassurances, noisy output): each item keeps a test here. In-process through
typer's CliRunner unless the console script itself matters."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from pi_session.cli.app import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _agent_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("COLUMNS", "120")


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


HEADER = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0002", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}


def chain(tmp_path, n: int):
    """A linear session of n user messages."""
    lines = [json.dumps(HEADER)]
    parent = None
    for i in range(n):
        eid = f"{i:08x}"
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                                 "message": {"role": "user", "content": f"m{i}", "timestamp": i}}))
        parent = eid
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_tree_json_flat_reads_with_json_module_at_any_depth(tmp_path):
    path = chain(tmp_path, 2500)
    nested = run("tree", path, "--json", "--nested")
    assert nested.exit_code == 0
    with pytest.raises(RecursionError):
        json.loads(nested.stdout)  # pi's nested layout: too deep for Python's json module
    result = run("tree", path, "--json")  # the flat shape is the default
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["leafId"] == f"{2499:08x}"
    entries = data["entries"]
    assert len(entries) == 2500
    assert entries[0] == {"id": "00000000", "parentId": None, "depth": 0, "type": "message", "role": "user",
                          "timestamp": "2026-01-01T00:00:00.000Z", "label": None, "onPath": True, "children": ["00000001"]}
    assert entries[-1]["depth"] == 2499 and entries[-1]["children"] == []


def test_tree_flat_matches_the_nested_tree(tmp_path):
    from conftest import GOLDENS

    path = GOLDENS / "projection" / "gen16-011.jsonl"
    nested = json.loads(run("tree", path, "--json", "--nested").stdout)
    flat = json.loads(run("tree", path, "--json").stdout)["entries"]
    assert json.loads(run("tree", path, "--json", "--flat").stdout)["entries"] == flat
    rows = []

    def walk(nodes, parent, depth):
        for node in nodes:
            rows.append((node["id"], parent, depth, node["type"], node["label"], [c["id"] for c in node["children"]]))
            walk(node["children"], node["id"], depth + 1)

    walk(nested["roots"], None, 0)
    assert [(r["id"], r["parentId"], r["depth"], r["type"], r["label"], r["children"]) for r in flat] == rows
    on_path = [r["id"] for r in flat if r["onPath"]]
    assert on_path[-1] == nested["leafId"]
    assert run("tree", path, "--flat").exit_code != 0  # --flat needs --json
    assert run("tree", path, "--nested").exit_code != 0  # so does --nested


def test_tree_marks_failed_tool_results(tmp_path):
    lines = [HEADER,
             {"type": "message", "id": "t1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
              "message": {"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "text", "text": "boom"}], "isError": True, "timestamp": 1}},
             {"type": "message", "id": "t2", "parentId": "t1", "timestamp": "2026-01-01T00:00:00.000Z",
              "message": {"role": "toolResult", "toolCallId": "d", "toolName": "bash", "content": [{"type": "text", "text": "fine"}], "isError": False, "timestamp": 2}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = run("tree", path).stdout
    assert "bash: ✗ failed: boom" in out
    assert "bash: fine" in out


@pytest.mark.parametrize("command", ["info", "tree", "context", "tokens", "export"])
def test_empty_and_missing_files_fail_with_one_line(tmp_path, command):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    for path, words in (
        (empty, "empty file"),
        (tmp_path / "missing.jsonl", "no such session file"),
        (tmp_path / "dir.jsonl", "a directory, not a session file"),
        (tmp_path / "dangling.jsonl", "gone.jsonl, which does not exist"),
    ):
        result = run(command, path)
        assert result.exit_code != 0, (command, path)
        assert words in result.output
        assert "Traceback" not in result.output
    assert empty.read_bytes() == b""


def test_help_is_written_for_people():
    for command in ("info", "tree", "context", "edit", "label", "export", "navigate", "compact", "fork", "clone"):
        out = run(command, "--help").stdout
        usage = next(line for line in out.splitlines() if "Usage:" in line)
        assert "{" not in usage and "SESSION" in usage, usage
        assert "``" not in out
    out = run("export", "--help").stdout
    assert "written atomically and never replaces a session file" in " ".join(out.split())
    out = run("system-prompt", "--help").stdout
    assert "list[" not in out and "--skill" in out


def test_fork_defaults_to_the_current_directory(tmp_path, monkeypatch):
    path = chain(tmp_path, 3)
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    result = run("fork", path, "--json")
    assert result.exit_code == 0, result.output
    new = json.loads(result.stdout)["path"]
    header = json.loads(open(new).readline())
    assert header["cwd"] == os.fspath(project)


def test_export_errors_name_the_users_file(tmp_path):
    from conftest import GOLDENS

    target = tmp_path / "missing" / "dir" / "x.html"
    result = run("export", GOLDENS / "projection" / "case-edits.jsonl", "-o", target)
    assert result.exit_code == 1
    assert f"{target}: directory {target.parent} does not exist" in " ".join(result.output.split())
    assert ".tmp" not in result.output


def test_info_shows_the_files_own_version(fixture_copy):
    path = fixture_copy("large-session.jsonl")
    before = path.read_bytes()
    data = json.loads(run("info", path, "--json").stdout)
    assert data["version"] == 1
    assert "version       1 (read as version 3" in run("info", path).stdout
    assert path.read_bytes() == before  # info never migrates


def _v1_session(fixture_copy):
    return fixture_copy("large-session.jsonl")


def test_failed_compact_on_a_v1_file_really_leaves_it_unchanged(fixture_copy, tmp_path):
    """A compact whose summary fails (no server) must not have migrated the
    file first: 'the session file was not changed' is then true."""
    path = _v1_session(fixture_copy)
    before = path.read_bytes()
    result = run("compact", path, "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--max-retries", "0", "--timeout", "5")
    assert result.exit_code == 1
    assert "the session file was not changed" in result.output
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.bak"))


def test_compact_prints_a_short_report(fixture_copy):
    path = _v1_session(fixture_copy)
    result = run("compact", path, "--provider", "extractive", "--keep-recent-tokens", "2000")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Compacted " in out and "Context: " in out
    assert "--show-summary" in out
    assert len(out.splitlines()) < 25  # not the whole summary
    assert "migrated from version 1" in result.output  # what opening for the write did to the file
    path = _v1_session(fixture_copy)  # a fresh copy
    full = run("compact", path, "--provider", "extractive", "--keep-recent-tokens", "500", "--show-summary")
    assert full.exit_code == 0 and "--show-summary" not in full.stdout and "## Next Steps" in full.stdout


def test_tokens_window_must_be_positive_and_a_reserve_larger_than_it_is_explained(tmp_path):
    path = chain(tmp_path, 3)
    assert run("tokens", path, "--window", "0").exit_code != 0
    out = run("tokens", path, "--window", "1000").stdout
    assert "the reserve is larger than the window" in out and "would trigger on any context" in " ".join(out.split())


def test_counts_use_the_right_number(tmp_path):
    from pi_session.cli.render import plural

    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(2, "entry", "entries") == "2 entries"
    assert plural(1200, "message") == "1,200 messages"
    path = chain(tmp_path, 1)
    out = run("export", path, "--format", "md", "-o", tmp_path / "x.md").output
    assert "exported 1 entry to" in out


def test_usage_from_before_a_compaction_is_not_trusted(tmp_path):
    """Issue: after compact, tokens must not report the pre-compaction usage
    (190,000) and 'would compact: yes' again, in the library and the CLI."""
    from pi_session import SessionManager, should_compact

    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    for i in range(6):
        sm.append_message({"role": "user", "content": f"question {i} " + "x" * 4000, "timestamp": i})
        sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "answer " * 300}], "api": "x",
                           "provider": "p", "model": "m", "usage": {"input": 190000, "output": 10, "cacheRead": 0,
                           "cacheWrite": 0, "totalTokens": 190000}, "stopReason": "stop", "timestamp": i})
    settings = {"enabled": True, "reserveTokens": 16384}
    assert should_compact(sm.estimate_projected_context_tokens()["tokens"], 200000, settings)
    path = sm.get_session_file()
    assert run("compact", path, "--provider", "extractive", "--keep-recent-tokens", "2000").exit_code == 0
    reopened = SessionManager.open(path, read_only=True)
    est = reopened.estimate_projected_context_tokens()
    assert est["lastUsageIndex"] is None and est["tokens"] < 20000
    assert not should_compact(est["tokens"], 200000, settings)
    out = run("tokens", path).stdout
    assert "would compact" in out and "no" in out.split("would compact")[1].split("\n")[0]
    data = json.loads(run("tokens", path, "--json").stdout)
    assert data["projectedShouldCompact"] is False


def test_arguments_that_are_not_utf8_are_refused(tmp_path):
    """Bytes that are not UTF-8 reach Python as lone surrogates; they must
    never be written into a session (real console script: argv bytes)."""
    import subprocess
    import sys
    from pathlib import Path as _P

    path = chain(tmp_path, 2)
    before = path.read_bytes()
    exe = _P(sys.executable).parent / "pi-session"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    for args in ([b"name", bytes(path), b"bad\xff"], [b"edit", bytes(path), b"00000000", b"--replace", b"x\xfe"]):
        res = subprocess.run([bytes(exe), *args], capture_output=True, env=env)
        assert res.returncode == 1 and b"not valid UTF-8" in res.stderr, res.stderr
    assert path.read_bytes() == before


def test_sanitize_escapes_bidirectional_overrides():
    from pi_session.cli.render import sanitize

    assert sanitize("evil\u202eexe.txt") == "evil\\u202eexe.txt"


def test_compact_on_a_v1_file_says_once_what_happened_to_it(fixture_copy):
    path = _v1_session(fixture_copy)
    result = run("compact", path, "--provider", "extractive")
    assert result.exit_code == 0, result.output
    assert "migrated in memory only" not in result.output
    assert result.output.count("migrated from version 1") == 1


def test_write_commands_say_where_a_torn_line_went(tmp_path):
    path = chain(tmp_path, 2)
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"tor')  # a crash mid-append
    result = run("name", path, "hello")
    assert result.exit_code == 0, result.output
    assert ".torn-" in result.output  # the command line hears of it, not just manager.notes
