"""The session handle: one contract run against every backend
(memory, files, SQLite, PostgreSQL via ``postgres_url``), write failures
injected through :class:`pi_session.stores.FailingHandle` (the manager
takes the entry back out and keeps its leaf), and the planned-leaf guard of
``append_compaction_result`` through every store."""

from __future__ import annotations

import errno
import warnings

import pytest

from pi_session import SessionManager
from pi_session.compaction import CompactionResult
from pi_session.core.jsonio import dumps_line, loads
from pi_session.storage import AppendError, LeafMovedError
from pi_session.stores import FailingHandle, FileHandle, MemoryHandle, SessionHandle, open_store

USER = {"role": "user", "content": "hello", "timestamp": 1}
ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "timestamp": 2}


def _header(sid: str = "h-one") -> dict:
    return {"type": "session", "version": 3, "id": sid, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/work/p"}


def _entry(eid: str, parent: str | None, text: str = "x") -> bytes:
    return dumps_line(
        {"type": "message", "id": eid, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": text, "timestamp": 1}}
    )


@pytest.fixture(params=["memory", "file", "sqlite", "postgres"])
def handles(request, tmp_path):
    """``make(header) -> (new handle, reopen() -> another handle of it)``:
    the second handle is a second writer of the same session."""
    if request.param == "memory":
        def make(header):
            handle = MemoryHandle()
            return handle, lambda: handle

        yield make
        return
    if request.param == "file":
        url = str(tmp_path / "sessions")
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/sessions.db"
    else:
        url = request.getfixturevalue("postgres_url")
    store = open_store(url)

    def make(header):
        return store.new_handle(header), lambda: store.handle(header["id"])

    yield make
    store.close()


def test_create_read_size_and_exclusive_create(handles):
    header = _header()
    handle, reopen = handles(header)
    assert isinstance(handle, SessionHandle)
    assert not handle.exists() and handle.size() is None
    lines = [dumps_line(header), _entry("a1", None)]
    assert handle.create(lines) == sum(map(len, lines))
    assert handle.exists() and handle.size() == sum(map(len, lines))
    sf = reopen().read()
    assert sf.header == header and [e["id"] for e in sf.entries] == ["a1"] and sf.size == handle.size()
    with pytest.raises(FileExistsError):
        handle.create(lines)
    assert reopen().size() == sum(map(len, lines))  # nothing written by the refused create


def test_append_and_the_stale_leaf_protocol(handles):
    header = _header()
    handle, reopen = handles(header)
    size = handle.create([dumps_line(header), _entry("a1", None)])
    result = handle.append([_entry("a2", "a1")], expected_size=size, on_grown=lambda f: pytest.fail("no other writer"))
    assert result.foreign == [] and result.size == size + len(_entry("a2", "a1"))
    known = result.size

    reopen().append([_entry("b1", "a2", "other")])  # another writer
    seen: list[list[bytes]] = []

    def follow(foreign):
        seen.append(foreign)
        return [_entry("a3", "b1")]  # re-chained onto the other writer's entry

    result = handle.append([_entry("a3", "a2")], expected_size=known, on_grown=follow)
    assert seen == [[_entry("b1", "a2", "other")]] and result.foreign == seen[0]
    sf = reopen().read()
    assert [(e["id"], e["parentId"]) for e in sf.entries] == [("a1", None), ("a2", "a1"), ("b1", "a2"), ("a3", "b1")]
    assert result.size == sf.size

    reopen().append([_entry("b2", "a3", "other")])

    class Refused(Exception):
        pass

    def refuse(_foreign):
        raise Refused

    before = reopen().size()
    with pytest.raises(Refused):
        handle.append([_entry("a4", "a3")], expected_size=result.size, on_grown=refuse)
    assert reopen().size() == before  # nothing written


def test_read_lines_from_reads_what_was_appended_since_and_the_tail(handles):
    header = _header()
    handle, reopen = handles(header)
    lines = [dumps_line(header), _entry("a1", None), _entry("a2", "a1")]
    size = handle.create(lines)
    whole = reopen().read_lines_from(0)
    assert whole.lines == lines and whole.start == 0 and whole.size == size and whole.stamp == reopen().stamp()
    assert reopen().read_lines_from(size).lines == []
    reopen().append([_entry("b1", "a2", "other")])
    since = handle.read_lines_from(size)
    assert since.lines == [_entry("b1", "a2", "other")] and since.start == size and since.size == size + len(since.lines[0])
    middle = handle.read_lines_from(len(lines[0]) + 3)  # inside a1's line: from the next line on
    assert middle.lines == [lines[2], since.lines[0]] and middle.start == len(lines[0]) + len(lines[1])


def test_delete_with_an_expected_size_refuses_a_session_appended_to_since(store_url):
    from pi_session.stores import SessionChangedError

    store = open_store(store_url)
    header = _header("to-delete")
    size = store.create([dumps_line(header), _entry("a1", None)])
    del size
    known = store.read_lines_from("to-delete", 0).size
    store.append("to-delete", [_entry("a2", "a1")])
    with pytest.raises(SessionChangedError):
        store.delete("to-delete", expected_size=known)
    assert store.exists("to-delete")
    assert store.delete("to-delete", expected_size=store.read_lines_from("to-delete", 0).size)
    assert not store.exists("to-delete")
    assert not store.delete("to-delete", expected_size=0)
    store.close()


def test_a_failing_handle_fails_once_then_forwards():
    inner = MemoryHandle()
    handle = FailingHandle(inner)
    header = _header()
    handle.fail("create")
    with pytest.raises(OSError):
        handle.create([dumps_line(header)])
    assert not inner.exists()
    handle.create([dumps_line(header)])
    handle.fail("append", after_writing=True)
    with pytest.raises(AppendError) as info:
        handle.append([_entry("a1", None)])
    assert info.value.lines_written == 1 and inner.lines[-1] == _entry("a1", None)
    with pytest.raises(ValueError):
        handle.fail("create", after_writing=True)


# ----------------------------------------------------------------------
# the manager through the seam


def test_failed_first_write_in_memory_takes_the_entry_back():
    handle = FailingHandle(MemoryHandle())
    sm = SessionManager.open(handle)
    a = sm.append_model_change("p", "m")
    assert handle.calls == []  # nothing written before the first message
    handle.fail("create", OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(OSError, match="No space"):
        sm.append_message(USER)
    assert sm.get_leaf_id() == a and [e["id"] for e in sm.get_entries()] == [a]
    assert not handle.exists()
    b = sm.append_message(USER)
    assert [r["id"] for r in map(loads, handle.inner.lines)][1:] == [a, b]


def test_failed_append_to_a_database_session_keeps_the_leaf(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    sm = SessionManager.create("/work/p", store=store)
    first = sm.append_message(USER)
    handle = FailingHandle(store.handle(sm.get_session_id()))
    wrapped = SessionManager.open(handle)
    assert wrapped.get_leaf_id() == first
    handle.fail("append", OSError(errno.EIO, "connection lost"))
    with pytest.raises(AppendError):
        wrapped.append_message(ASSISTANT)
    assert wrapped.get_leaf_id() == first and len(wrapped.get_entries()) == 1
    handle.fail("append")
    with pytest.raises(AppendError):
        wrapped.branch_with_summary(None, "summary")
    assert wrapped.get_leaf_id() == first
    assert [e["id"] for e in store.read(sm.get_session_id()).entries] == [first]
    second = wrapped.append_message(ASSISTANT)
    assert [e["id"] for e in store.read(sm.get_session_id()).entries] == [first, second]


def test_in_memory_sessions_stay_unpersisted():
    sm = SessionManager.in_memory("/work/p")
    sm.append_message(USER)
    assert not sm.is_persisted() and sm.get_session_file() is None and sm.get_session_location() is None
    assert sm.stats().size_bytes == 0


# ----------------------------------------------------------------------
# the planned-leaf guard, on every store


def _result(first_kept: str) -> CompactionResult:
    return CompactionResult(summary="the summary", first_kept_entry_id=first_kept, tokens_before=100)


def test_planned_leaf_guard_on_every_store(store_url):
    writer = SessionManager.create("/work/guard", store=store_url)
    root = writer.append_message(USER)
    tip = writer.append_message(ASSISTANT)
    location = writer.get_session_location()
    sid = writer.get_session_id()
    planner = SessionManager.open(sid, store=store_url)
    planned = planner.get_leaf_id()
    assert planned == tip

    # another writer continues the planned path: the compaction follows it
    follow_up = writer.append_message(USER)
    cid = planner.append_compaction_result(_result(root), planned_leaf_id=planned)
    assert planner.get_entry(cid)["parentId"] == follow_up
    assert [e["id"] for e in SessionManager.open(sid, store=store_url).get_entries()][-1] == cid

    # another writer moves onto a side branch: nothing is written
    planned = planner.get_leaf_id()
    writer = SessionManager.open(sid, store=store_url)
    writer.branch(root)
    writer.append_message({"role": "user", "content": "a side branch", "timestamp": 5})
    before = [e["id"] for e in SessionManager.open(sid, store=store_url).get_entries()]
    with pytest.raises(LeafMovedError) as info:
        planner.append_compaction_result(_result(root), planned_leaf_id=planned)
    assert info.value.planned_leaf_id == planned
    assert [e["id"] for e in SessionManager.open(sid, store=store_url).get_entries()] == before
    assert str(location) in str(info.value)

    # the leaf moved in this process: refused before anything is written
    planner.branch(root)
    with pytest.raises(LeafMovedError):
        planner.append_compaction_result(_result(root), planned_leaf_id=planned)


def test_planned_leaf_guard_on_a_plain_file(tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionManager.open(FileHandle(path))
    root = writer.append_message(USER)
    writer.append_message(ASSISTANT)
    planner = SessionManager.open(path)
    planned = planner.get_leaf_id()
    writer.branch(root)
    writer.append_message({"role": "user", "content": "elsewhere", "timestamp": 5})
    data = path.read_bytes()
    with pytest.raises(LeafMovedError):
        planner.append_compaction_result(_result(root), planned_leaf_id=planned)
    assert path.read_bytes() == data


def test_estimate_context_tokens_is_a_deprecated_alias():
    sm = SessionManager.in_memory("/work/p")
    sm.append_message(USER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = sm.estimate_context_tokens()
    assert [w.category for w in caught] == [DeprecationWarning]
    assert old == sm.estimate_projected_context_tokens()
