"""Appends, torn tails, atomic rewrites and permissions."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import orjson
import pytest

from pi_session import storage
from pi_session.manager.session_manager import SessionManager
from pi_session.storage import migrate_file
from pi_session.storage import (
    AppendError,
    Durability,
    SessionFileError,
    append_lines,
    atomic_rewrite,
    create_file,
    ensure_dir,
    read_session_file,
)
from storage_helpers import assistant, make_session, user


def lines_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_session_dirs_0700_and_file_0600(tmp_path: Path) -> None:
    sessions = tmp_path / "agent" / "sessions" / "--proj--"
    path = make_session(sessions)
    assert mode(path) == 0o600
    for d in (tmp_path / "agent", tmp_path / "agent" / "sessions", sessions):
        assert mode(d) == 0o700, d


def test_ensure_dir_keeps_existing_modes(tmp_path: Path) -> None:
    existing = tmp_path / "open"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    ensure_dir(existing / "a" / "b")
    assert mode(existing) == 0o755
    assert mode(existing / "a") == 0o700 and mode(existing / "a" / "b") == 0o700


def test_fork_clone_and_migration_backup_modes(tmp_path: Path) -> None:
    path = make_session(tmp_path / "s")
    forked = SessionManager.fork_from(path, "/other", session_dir=tmp_path / "f" / "g")
    assert mode(forked.get_session_file()) == 0o600
    assert mode(tmp_path / "f") == 0o700 and mode(tmp_path / "f" / "g") == 0o700
    m = SessionManager.open(path)
    new = m.create_branched_session(m.get_leaf_id())
    assert new is not None and mode(new) == 0o600
    v1 = tmp_path / "s" / "old.jsonl"
    v1.write_bytes(b'{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
                   b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n')
    os.chmod(v1, 0o600)
    result = migrate_file(v1)
    assert mode(v1) == 0o600 and mode(Path(result["backup"])) == 0o600


def test_append_is_one_line_per_entry(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    before = lines_of(path)
    m = SessionManager.open(path)
    new_id = m.append_message(user("more"))
    after = lines_of(path)
    assert after[: len(before)] == before
    assert len(after) == len(before) + 1
    assert orjson.loads(after[-1])["id"] == new_id


def test_torn_fragment_moved_to_side_file_before_append(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    good = path.read_bytes()
    fragment = b'{"type":"message","id":"abcd0123","parentId":null,"tim'
    with open(path, "ab") as f:
        f.write(fragment)
    m = SessionManager.open(path)
    assert any(p.kind == "torn-tail" for p in m.problems)
    assert path.read_bytes() == good + fragment  # opening changes nothing
    new_id = m.append_message(user("after the crash"))
    data = path.read_bytes()
    assert data.startswith(good)
    assert orjson.loads(data[len(good):])["id"] == new_id
    sides = list(tmp_path.glob(path.name + ".torn-*"))
    assert len(sides) == 1 and sides[0].read_bytes() == fragment
    assert mode(sides[0]) == 0o600
    assert any("torn" in note and sides[0].name in note for note in m.notes)
    assert not read_session_file(path).problems


def test_complete_last_line_without_newline_gets_one(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-1])  # drop the final newline only
    m = SessionManager.open(path)
    m.append_message(user("x"))
    assert path.read_bytes().startswith(data)
    assert not list(tmp_path.glob("*.torn-*"))
    assert any("no newline" in n for n in m.notes)


def test_torn_nul_tail(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    good = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b"\x00" * 4096)
    append_lines(path, [b'{"type":"custom","customType":"x","id":"00000001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z"}\n'])
    assert path.read_bytes().startswith(good)
    assert not read_session_file(path).problems


def test_torn_only_line_refused_unless_header(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"sess')
    with pytest.raises(SessionFileError):
        append_lines(path, [b'{"type":"message"}\n'])
    assert path.read_bytes() == b'{"type":"sess'
    header = b'{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n'
    append_lines(path, [header])
    assert path.read_bytes() == header


def test_partial_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_session(tmp_path)
    good = path.read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def flaky_write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:  # second line: write half of it, then fail
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(storage.append.os, "write", flaky_write)
    line = b'{"type":"custom","customType":"x","id":"0000000%d","parentId":null,"timestamp":"t"}\n'
    with pytest.raises(AppendError) as info:
        append_lines(path, [line % 1, line % 2])
    monkeypatch.undo()
    assert info.value.lines_written == 1
    assert path.read_bytes() == good + line % 1


def test_manager_does_not_rewrite_entries_after_partial_failure(tmp_path: Path) -> None:
    from pi_session.stores import FailingHandle, FileHandle, SessionHandle
    from pi_session.storage import AppendResult

    class WritesOneLineThenFails(FailingHandle):
        """The first line of the next append reaches the file, then the disk fails."""

        broken = False

        def append(self, lines, **options) -> AppendResult:  # type: ignore[override]
            if not self.broken:
                return super().append(lines, **options)
            self.broken = False
            self.inner.append(lines[:1], durability=options.get("durability", Durability.ENTRY))
            raise AppendError(Path(self.location), 1, OSError(errno.EIO, "I/O error"))

    handle = WritesOneLineThenFails(FileHandle(tmp_path / "s.jsonl"))
    assert isinstance(handle, SessionHandle)
    m = SessionManager.open(handle)
    m.append_message(user("q"))
    m.append_message(assistant("a"))
    path = m.get_session_file()
    calls = len(handle.calls)
    m.save()  # nothing pending: no call
    assert len(handle.calls) == calls
    handle.broken = True
    with pytest.raises(AppendError):
        m.append_message(user("one"))
    m.append_message(user("two"))
    texts = [orjson.loads(l).get("message", {}).get("content") for l in lines_of(path)]
    assert texts.count("one") == 1 and texts.count("two") == 1
    assert [e["id"] for e in m.get_entries()] == [orjson.loads(l)["id"] for l in lines_of(path)[1:]]


def test_create_file_never_clobbers(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        create_file(path, [b"new\n"])
    assert path.read_bytes() == b"keep"
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]


def test_atomic_rewrite_refuses_changed_or_missing_file(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    st = os.stat(path)
    with open(path, "ab") as f:
        f.write(b'{"type":"custom","customType":"x","id":"00000009","parentId":null,"timestamp":"t"}\n')
    data = path.read_bytes()
    with pytest.raises(SessionFileError):
        atomic_rewrite(path, [b"x\n"], backup_tag="t", expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns)
    assert path.read_bytes() == data
    missing = tmp_path / "gone.jsonl"
    with pytest.raises(FileNotFoundError):
        atomic_rewrite(missing, [b"x\n"], backup_tag=None)
    assert not missing.exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_atomic_rewrite_keeps_backup_and_mode(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    old = path.read_bytes()
    backup = atomic_rewrite(path, [b"new\n"], backup_tag="repair")
    assert backup == path.with_name(path.name + ".repair.bak")
    assert backup.read_bytes() == old and path.read_bytes() == b"new\n"
    assert mode(path) == 0o600
    backup2 = atomic_rewrite(path, [b"newer\n"], backup_tag="repair")
    assert backup2 != backup and backup2.read_bytes() == b"new\n"


def test_batch_durability_and_flush(tmp_path: Path) -> None:
    m = SessionManager.create("/p", session_dir=tmp_path, durability="batch")
    m.append_message(user("q"))
    m.append_message(assistant("a"))
    for i in range(20):
        m.append_message(user(str(i)))
    m.flush()
    assert len(lines_of(m.get_session_file())) == 23


def test_write_atomic_replaces_whole_with_mode_0600_and_no_temp_left(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")
    os.chmod(target, 0o644)
    storage.write_atomic(target, [b"new ", b"content"])
    assert target.read_bytes() == b"new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_write_atomic_without_replace_refuses_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        storage.write_atomic(target, [b"other"], replace=False)
    assert target.read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_write_atomic_guard_sees_the_written_temp_and_can_refuse(tmp_path: Path) -> None:
    import contextlib

    target = tmp_path / ".index"
    target.write_bytes(b"old")
    seen: list[str] = []

    @contextlib.contextmanager
    def refuse(tmp: Path):  # type: ignore[no-untyped-def]
        seen.append(tmp.name)
        assert tmp.read_bytes() == b"new"
        raise RuntimeError("changed meanwhile")
        yield

    with pytest.raises(RuntimeError):
        storage.write_atomic(target, [b"new"], guard=refuse)
    assert target.read_bytes() == b"old"
    assert len(seen) == 1 and seen[0].startswith(".index.") and seen[0].endswith(".tmp")  # no second dot
    assert sorted(p.name for p in tmp_path.iterdir()) == [".index"]


def test_a_read_only_file_is_never_written_even_by_root(tmp_path: Path) -> None:
    """``chmod a-w`` means "keep this as it is": opening a read-only v1 file
    migrates it in memory only (no rewrite, no backup, a note), appends and
    repairs refuse with PermissionError, and the bytes never change, also
    for root (who could write it; this suite runs as root in CI)."""
    v1 = tmp_path / "old.jsonl"
    data = (b'{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
            b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n')
    v1.write_bytes(data)
    os.chmod(v1, 0o444)
    m = SessionManager.open(v1)
    assert m.file_version == 1 and [e["type"] for e in m.get_entries()] == ["message"]
    assert any("migrated in memory only" in n and "read-only" in n for n in m.notes), m.notes
    with pytest.raises(PermissionError):
        m.append_message({"role": "user", "content": "more", "timestamp": 2})
    with pytest.raises(PermissionError):
        append_lines(v1, [b'{"type":"custom","id":"c1","parentId":null,"timestamp":"2025-01-01T00:00:02.000Z","customType":"x"}\n'])
    with pytest.raises(PermissionError):
        migrate_file(v1)
    assert v1.read_bytes() == data and mode(v1) == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]  # no backup, no temp file left
    # a v3 file: reading works, appends refuse
    v3 = make_session(tmp_path / "s")
    before = v3.read_bytes()
    os.chmod(v3, 0o400)
    m3 = SessionManager.open(v3)
    assert m3.build_session_context()["messages"]
    with pytest.raises(PermissionError):
        m3.append_message({"role": "user", "content": "more", "timestamp": 2})
    assert v3.read_bytes() == before and m3.get_leaf_id() == m3.get_entries()[-1]["id"]
