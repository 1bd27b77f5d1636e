"""SessionManager unit tests: write behaviour, constructors, accessors."""

from __future__ import annotations

import json
import os
import time

import pytest

from pi_session import SessionFileError, SessionManager, read_session_file
from pi_session.jsonio import dumps_line

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


def test_open_missing_file_starts_a_session_there(tmp_path):
    path = tmp_path / "new.jsonl"
    sm = SessionManager.open(path)
    assert sm.get_session_file() == path and not path.exists()
    sm.append_message(USER)
    sm.append_message(ASSISTANT)
    assert lines(path)[0]["type"] == "session"


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
