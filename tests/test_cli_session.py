"""End-to-end: the real ``pi-session`` console script on session files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import GOLDENS
from pi_session import SessionManager, read_session_file
from pi_session.core.jsonio import dumps_line
from pi_session.core.paths import encode_cwd

SESSIONS = GOLDENS / "sessions"
DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl"


def no_traceback(result):
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


@pytest.fixture
def session(tmp_path):
    dst = tmp_path / "s.jsonl"
    shutil.copy(SESSIONS / "pi-3.jsonl", dst)
    return dst


def test_tree_marks_leaf_and_labels(cli, tmp_path):
    demo = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, demo)
    result = cli("tree", str(demo))
    assert result.returncode == 0, result.stderr
    assert "← leaf" in result.stdout
    assert "[tax rounding decision]" in result.stdout and "[task]" in result.stdout
    assert "├─" in result.stdout  # the abandoned attempt is a branch
    assert demo.read_bytes() == DEMO.read_bytes()


def test_tree_stays_flat_on_a_long_linear_session(cli, tmp_path):
    sm = SessionManager.create("/p", tmp_path / "d")
    for i in range(2500):
        sm.append_message({"role": "user", "content": f"q{i}", "timestamp": i})
        sm.append_message({"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}], "api": "x", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}, "stopReason": "stop", "timestamp": i})
    result = cli("tree", str(sm.get_session_file()))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 5000
    assert max(len(line) - len(line.lstrip()) for line in lines) <= 2  # no staircase


def test_context_json_leaf_options(cli, session):
    goldens = json.loads((SESSIONS / "pi-3.context.json").read_text())
    out = json.loads(cli("context", str(session), "--leaf", "null", "--json").stdout)
    assert out == goldens["null"]
    bad = cli("context", str(session), "--leaf", "nothere", "--json")
    assert bad.returncode != 0 and "nothere" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    no_traceback(bad)


def test_human_context_output(cli, tmp_path):
    demo = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, demo)
    result = cli("context", str(demo))
    assert result.returncode == 0
    assert "user" in result.stdout and "assistant" in result.stdout and "→ read(" in result.stdout


def test_info_json(cli, session):
    data = json.loads(cli("info", str(session), "--json").stdout)
    sf = read_session_file(session)
    assert data["entries"] == len(sf.entries) and data["id"] == sf.header["id"] and data["problems"] == []


def _put_in_agent_dir(tmp_path, src: Path, cwd="/work/project") -> Path:
    directory = tmp_path / "agent" / "sessions" / encode_cwd(cwd)
    directory.mkdir(parents=True, exist_ok=True)
    dst = directory / src.name
    shutil.copy(src, dst)
    return dst


def test_session_id_prefix_resolution(cli, tmp_path):
    a = SessionManager.create("/work/project", tmp_path / "agent" / "sessions" / encode_cwd("/work/project"))
    a.append_message({"role": "user", "content": "x", "timestamp": 1})
    a.save()
    sid = a.get_session_id()
    ok = cli("info", sid[:18], "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["id"] == sid
    unknown = cli("info", "ffffffff-dead")
    assert unknown.returncode != 0 and "no session id starts with" in unknown.stderr
    no_traceback(unknown)
    b = SessionManager.create("/work/project", tmp_path / "agent" / "sessions" / encode_cwd("/work/project"))
    b.append_message({"role": "user", "content": "y", "timestamp": 1})
    b.save()
    ambiguous = cli("info", "0")
    assert ambiguous.returncode != 0 and "ambiguous" in ambiguous.stderr
    for escape in ("../../etc/passwd", "..", "/etc/shadow", "a/b"):
        result = cli("info", escape)
        assert result.returncode != 0
        no_traceback(result)


def test_ls_lists_sessions_like_pi(cli, tmp_path, oracle):
    for name in ("pi-1", "pi-2", "gen-3"):
        _put_in_agent_dir(tmp_path, SESSIONS / f"{name}.jsonl")
    directory = tmp_path / "agent" / "sessions" / encode_cwd("/work/project")
    ours = json.loads(cli("ls", "--cwd", "/work/project", "--json").stdout)
    theirs = json.loads(oracle("list", str(directory)))
    assert ours == theirs
    all_ = json.loads(cli("ls", "--all", "--json").stdout)
    assert all_ == theirs
    human = cli("ls", "--all")
    assert human.returncode == 0 and "msgs" in human.stdout


def test_label_and_name_append_one_line_each(cli, session):
    before = session.read_bytes()
    entry_id = read_session_file(session).entries[0]["id"]
    assert cli("label", str(session), entry_id, "checkpoint").returncode == 0
    assert cli("name", str(session), "  Nice name ").returncode == 0
    after = session.read_bytes()
    assert after.startswith(before)
    added = after[len(before):].splitlines()
    assert len(added) == 2
    label, info = (json.loads(x) for x in added)
    assert label["type"] == "label" and label["targetId"] == entry_id and label["label"] == "checkpoint"
    assert info == {**info, "type": "session_info", "name": "Nice name"}
    sm = SessionManager.open(session, read_only=True)
    assert sm.get_label(entry_id) == "checkpoint" and sm.get_session_name() == "Nice name"
    missing = cli("label", str(session), "zzzzzzzz", "x")
    assert missing.returncode != 0 and session.read_bytes() == after
    no_traceback(missing)


def test_clone_writes_only_the_path(cli, session, tmp_path):
    sm = SessionManager.open(session, read_only=True)
    leaf = sm.get_entries()[5]["id"]
    result = cli("clone", str(session), "--leaf", leaf, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    clone = SessionManager.open(out["path"], read_only=True)
    assert clone.get_header()["parentSession"] == str(session)
    path_ids = [e["id"] for e in sm.get_branch(leaf) if e["type"] != "label"]
    assert [e["id"] for e in clone.get_entries() if e["type"] != "label"] == path_ids
    sm.branch(leaf)
    assert clone.build_session_context()["messages"] == sm.build_session_context()["messages"]


def test_fork_to_another_cwd(cli, session, tmp_path):
    result = cli("fork", str(session), "--cwd", "/other/project", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    forked = Path(out["path"])
    assert forked.parent == tmp_path / "agent" / "sessions" / encode_cwd("/other/project")
    assert (forked.stat().st_mode & 0o777) == 0o600
    assert (forked.parent.stat().st_mode & 0o777) == 0o700
    original = read_session_file(session)
    copy = read_session_file(forked)
    assert copy.entries == original.entries and copy.header["cwd"] == "/other/project"


def test_fork_into_a_store_of_files_goes_under_its_root(cli, session, tmp_path):
    store = tmp_path / "team-sessions"
    store.mkdir()
    for where in (("--store", str(store)), ()):
        result = cli(*where, "fork", str(session), "--cwd", "/other/project", "--json")
        assert result.returncode == 0, result.stderr
        root = store if where else tmp_path / "agent" / "sessions"
        assert Path(json.loads(result.stdout)["path"]).parent == root / encode_cwd("/other/project")
    listed = json.loads(cli("--store", str(store), "ls", "--all", "--json").stdout)
    assert len(listed if isinstance(listed, list) else listed["sessions"]) == 1


def test_migrate_command(cli, tmp_path, fixture_copy):
    path = fixture_copy("large-session.jsonl")
    before = path.read_bytes()
    result = cli("migrate", str(path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "large-session.jsonl.v1.bak").read_bytes() == before
    assert read_session_file(path).version == 3
    again = cli("migrate", str(path))
    assert "nothing to do" in again.stdout


# --- damaged files -----------------------------------------------------------


def _valid_lines():
    return (SESSIONS / "pi-2.jsonl").read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize(
    "damage, line",
    [
        (lambda ls: ls[:3] + [b'{"type":"message","id":"x\n'] + ls[3:], 4),
        (lambda ls: ls[:-1] + [ls[-1][:-10]], None),
        (lambda ls: ls[:2] + [b"\x00" * 64 + b"\n"] + ls[2:], 3),
        (lambda ls: ls[:2] + [b"\n"] + ls[2:], 3),
    ],
    ids=["malformed-middle", "torn-tail", "nul-run", "blank"],
)
def test_damaged_but_readable(cli, tmp_path, damage, line):
    lines = damage(_valid_lines())
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"".join(lines))
    before = path.read_bytes()
    for command in (["tree"], ["context", "--json"], ["info"]):
        result = cli(command[0], str(path), *command[1:])
        assert result.returncode == 0, result.stderr
        no_traceback(result)
        assert str(path) in result.stderr and "warning" in result.stderr
        if line:
            assert f"{path}:{line}:" in result.stderr
    assert path.read_bytes() == before


def test_parent_cycle_is_reported_not_hanging(cli, tmp_path):
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    entries = [
        {"type": "message", "id": "aaaaaaaa", "parentId": "bbbbbbbb", "timestamp": "2025-01-01T00:00:00.000Z", "message": {"role": "user", "content": "a", "timestamp": 1}},
        {"type": "message", "id": "bbbbbbbb", "parentId": "aaaaaaaa", "timestamp": "2025-01-01T00:00:00.000Z", "message": {"role": "user", "content": "b", "timestamp": 1}},
    ]
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(dumps_line(r) for r in [header, *entries]))
    result = cli("context", str(path), "--json")
    assert result.returncode == 0 and "cycle" in result.stderr
    # the link that closes the loop (b's parent a, b coming last) is cut: b is a root
    assert [m["content"] for m in json.loads(result.stdout)["messages"]] == ["b"]
    at_a = json.loads(cli("context", str(path), "--leaf", "aaaaaaaa", "--json").stdout)
    assert [m["content"] for m in at_a["messages"]] == ["b", "a"]
    assert cli("tree", str(path)).returncode == 0


@pytest.mark.parametrize(
    "content",
    [b"\x00" * 4096, b"hello world\n", b'{"type":"message","id":"a"}\n', b"\xff\xfe\x00garbage", b"[1,2,3]\n"],
    ids=["nul-file", "text", "no-header", "binary", "array"],
)
def test_unreadable_files_fail_with_one_line(cli, tmp_path, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    for command in ("tree", "context", "info", "label"):
        args = [command, str(path)] + (["aaaaaaaa", "x"] if command == "label" else [])
        result = cli(*args)
        assert result.returncode != 0
        no_traceback(result)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0]
    assert path.read_bytes() == content


def test_directory_and_missing_file(cli, tmp_path):
    for arg in (str(tmp_path), str(tmp_path / "nope.jsonl")):
        result = cli("tree", arg)
        assert result.returncode != 0 and len(result.stderr.strip().splitlines()) == 1
        no_traceback(result)


def test_id_prefix_never_follows_a_symlink_out_of_the_sessions_dir(cli, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    sm = SessionManager.create("/x", outside)
    sm.append_message({"role": "user", "content": "x", "timestamp": 1})
    sm.save()
    sessions = tmp_path / "agent" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "--x--").symlink_to(outside)
    result = cli("info", sm.get_session_id()[:20])
    assert result.returncode != 0 and "outside" in result.stderr
    no_traceback(result)
    assert cli("info", str(sm.get_session_file())).returncode == 0


def test_v1_ids_are_stable_and_usable_before_migration(cli, fixture_copy):
    path = fixture_copy("large-session.jsonl")
    before = path.read_bytes()
    first = json.loads(cli("info", str(path), "--json").stdout)["leafId"]
    assert json.loads(cli("info", str(path), "--json").stdout)["leafId"] == first
    assert cli("context", str(path), "--leaf", first, "--json").returncode == 0
    bad = cli("label", str(path), "nothere1", "x")
    assert bad.returncode != 0 and path.read_bytes() == before  # a failing command changes nothing
    ok = cli("label", str(path), first, "here")
    assert ok.returncode == 0, ok.stderr
    assert SessionManager.open(path, read_only=True).get_label(first) == "here"


def test_tree_json_of_a_deep_chain_is_linear_in_size(cli, tmp_path):
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    n = 20_000
    lines = [dumps_line(header)]
    for i in range(n):
        lines.append(dumps_line({"type": "message", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None,
                                 "timestamp": "2025-01-01T00:00:00.000Z", "message": {"role": "user", "content": "x", "timestamp": i}}))
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(lines))
    result = cli("tree", str(path), "--json", "--nested")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) < 100 * n  # the indented layout would be ~200 MB
    data = _deep_json(result.stdout)
    depth, node = 0, data["roots"][0]
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == n - 1 and data["leafId"] == f"{n - 1:08x}"


def _deep_json(text):
    """json.loads of very deep JSON: in a thread with a big stack and a raised recursion limit."""
    import sys
    import threading

    out = {}
    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()

    def work():
        out["v"] = json.loads(text)

    sys.setrecursionlimit(200_000)
    threading.stack_size(512 * 1024 * 1024)
    try:
        t = threading.Thread(target=work)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    return out["v"]


def test_tree_json_of_a_real_pi_session_reads_with_json_load(cli, fixture_copy):
    """issue 27 item 11: ``tree --json`` is the flat shape by default (one
    object per entry, with role and timestamp), so Python's json module reads
    a real pi session; pi's nested layout needs ``--nested``."""
    path = fixture_copy("large-session.jsonl")
    result = cli("tree", str(path), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # the nested layout raised RecursionError here
    entries = data["entries"]
    assert len(entries) == len(SessionManager.open(path, read_only=True).get_entries())
    first = entries[0]
    assert first["role"] == "user" and first["timestamp"] == "2025-11-20T23:33:01.550Z" and first["depth"] == 0
    assert {row["role"] for row in entries} >= {"user", "assistant", "toolResult"}
    assert all(row["role"] is None for row in entries if row["type"] != "message")
    assert entries[-1]["id"] == data["leafId"] and entries[-1]["onPath"]
    nested = cli("tree", str(path), "--json", "--nested")
    assert nested.returncode == 0 and _deep_json(nested.stdout)["roots"][0]["id"] == first["id"]
    both = cli("tree", str(path), "--json", "--nested", "--flat")
    assert both.returncode != 0 and "--nested" in both.stderr
    no_traceback(both)
