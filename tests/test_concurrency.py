"""Several processes appending to one session at once: every entry
present exactly once, every line valid JSON, no interleaved bytes.

No sleeps: a worker process says ``ready`` on its stdout once it has opened
the session and waits for ``go`` on its stdin (a pipe is the barrier); the
thread test waits for an event set when the thread reaches the lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from pi_session.check.repair import check_session
from pi_session.storage import read_session_file
from storage_helpers import make_session

APPENDER = r'''
import sys
from pi_session.manager.session_manager import SessionManager
session, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = SessionManager.open(session, durability="none")
print("ready", flush=True)
sys.stdin.readline()  # go
for i in range(n):
    # sizes vary so that some lines are larger than a pipe buffer / page
    m.append_message({"role": "user", "content": f"{tag}:{i}:" + "y" * ((i * 7919) % 9000), "timestamp": 1})
print("done", flush=True)
'''


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _ready_then_go(procs: list[subprocess.Popen]) -> None:
    """Wait until every worker said ``ready``, then let them all go at once."""
    for proc in procs:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line == b"ready\n", (line, proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "")  # type: ignore[union-attr]
    for proc in procs:
        proc.stdin.write(b"go\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]


@pytest.mark.parametrize("processes, per_process", [(2, 400), (8, 150)])
def test_concurrent_appenders(tmp_path: Path, processes: int, per_process: int) -> None:
    session = make_session(tmp_path / "s", n=2)
    before = len(read_session_file(session).entries)
    script = tmp_path / "appender.py"
    script.write_text(APPENDER)
    procs = [_start(str(script), str(session), f"p{k}", str(per_process)) for k in range(processes)]
    _ready_then_go(procs)
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
        assert out == b"done\n"
    data = session.read_bytes()
    assert data.endswith(b"\n")
    texts = []
    for raw in data[:-1].split(b"\n"):
        record = orjson.loads(raw)  # every line is valid JSON
        message = record.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str) and message["content"].startswith("p"):
            texts.append(message["content"].split(":", 2)[0] + ":" + message["content"].split(":", 2)[1])
    expected = {f"p{k}:{i}" for k in range(processes) for i in range(per_process)}
    assert len(texts) == len(expected) and set(texts) == expected  # each exactly once
    sf = read_session_file(session)
    assert not sf.problems
    assert len(sf.entries) == before + processes * per_process
    ids = [e["id"] for e in sf.entries]
    assert len(set(ids)) == len(ids)
    assert not check_session(session).fixable
    # every writer chained onto the real last entry: one path holds everything
    from pi_session import SessionManager

    reopened = SessionManager.open(session, read_only=True)
    assert len(reopened.get_branch()) == len(sf.entries)


REWRITER = r'''
import sys
from pi_session.storage import SessionFileError, atomic_rewrite, iter_lines, read_session_file
session, n = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()  # go
done = refused = 0
while done < n:
    sf = read_session_file(session, migrate=False)
    lines = [raw + b"\n" for _n, raw, _nl in iter_lines(session)]
    try:
        atomic_rewrite(session, lines, backup_tag=None, expect_size=sf.size, expect_mtime_ns=sf.mtime_ns)
        done += 1
    except SessionFileError:
        refused += 1  # an append came in between: nothing was changed
print("done", done, refused, flush=True)
'''


def test_appends_survive_concurrent_atomic_rewrites(tmp_path: Path) -> None:
    """An append racing an atomic rewrite (migration, repair) must land in
    the new file, never in the replaced inode."""
    session = make_session(tmp_path / "s", n=2)
    (tmp_path / "appender.py").write_text(APPENDER)
    (tmp_path / "rewriter.py").write_text(REWRITER)
    appenders = [_start(str(tmp_path / "appender.py"), str(session), f"p{k}", "300") for k in range(3)]
    rewriter = _start(str(tmp_path / "rewriter.py"), str(session), "60")
    _ready_then_go([*appenders, rewriter])
    for proc in [*appenders, rewriter]:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
    contents = [r.get("message", {}).get("content", "") for r in map(orjson.loads, session.read_bytes().splitlines())]
    got = {c.split(":", 2)[0] + ":" + c.split(":", 2)[1] for c in contents if isinstance(c, str) and c.startswith("p")}
    assert got == {f"p{k}:{i}" for k in range(3) for i in range(300)}
    assert len([c for c in contents if isinstance(c, str) and c.startswith("p")]) == 900


def test_append_waiting_for_the_lock_follows_a_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic version of the race above: an append blocked on the lock
    while the file is replaced must reopen and write to the new file."""
    import fcntl
    import os
    import threading

    from pi_session import storage

    session = make_session(tmp_path / "s", n=2)
    old_inode = session.stat().st_ino
    replacement = session.read_bytes()
    line = b'{"type":"custom","customType":"x","id":"0000abcd","parentId":null,"timestamp":"t"}\n'
    at_lock = threading.Event()  # set when the worker asks for the lock
    locked_inodes: list[int] = []
    real_flock = fcntl.flock

    def flock(fd: int, operation: int) -> None:
        if threading.current_thread() is worker and operation == fcntl.LOCK_EX:
            locked_inodes.append(os.fstat(fd).st_ino)
            at_lock.set()
        real_flock(fd, operation)

    worker = threading.Thread(target=storage.append_lines, args=(session, [line]))
    monkeypatch.setattr(fcntl, "flock", flock)
    with storage.locked_append_fd(session) as (_fd, _created):
        worker.start()
        assert at_lock.wait(60)  # the worker opened the old inode and waits for its lock
        tmp = session.with_name("replacement.tmp")
        tmp.write_bytes(replacement)
        os.replace(tmp, session)
    worker.join(60)
    assert not worker.is_alive()
    assert locked_inodes[0] == old_inode and locked_inodes[-1] == session.stat().st_ino != old_inode
    assert session.read_bytes() == replacement + line


TURN_WRITER = r'''
import sys
from pi_session.manager.session_manager import SessionManager
from pi_session.storage import ConcurrentAppendError
session, tag, mode = sys.argv[1], sys.argv[2], sys.argv[3]

m = SessionManager.open(session, concurrent=mode)
print("ready", flush=True)
sys.stdin.readline()  # go
try:
    m.append_message({"role": "user", "content": f"{tag} asks", "timestamp": 1})
    m.append_message({"role": "assistant", "content": [{"type": "text", "text": f"{tag} answers"}], "api": "x", "provider": "p",
                      "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                      "stopReason": "stop", "timestamp": 2})
    print("notes", len(m.notes), flush=True)
except ConcurrentAppendError as exc:
    print("refused", exc.count, flush=True)
'''


def _two_writers(tmp_path: Path, mode_b: str) -> tuple[Path, str, str]:
    """Processes A and B open one session; A writes a turn; then B, whose
    leaf is now stale, writes its turn. Pipes are the barriers, no sleeps."""
    session = make_session(tmp_path / "s", n=2)
    script = tmp_path / "writer.py"
    script.write_text(TURN_WRITER)
    a, b = _start(str(script), str(session), "A", "follow"), _start(str(script), str(session), "B", mode_b)
    for proc in (a, b):  # both read the file before A writes
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line == b"ready\n", proc.stderr.read().decode()[-2000:] if proc.poll() is not None else line  # type: ignore[union-attr]
    out_a, err_a = a.communicate(b"go\n", timeout=120)
    assert a.returncode == 0, err_a.decode()
    out_b, err_b = b.communicate(b"go\n", timeout=120)
    assert b.returncode == 0, err_b.decode()
    return session, out_a.decode(), out_b.decode()


def test_a_stale_writer_chains_onto_the_real_last_entry(tmp_path: Path) -> None:
    from pi_session import SessionManager

    session, out_a, out_b = _two_writers(tmp_path, "follow")
    assert out_a == "notes 0\n"
    assert out_b == "notes 1\n"  # B was told
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
             for m in SessionManager.open(session, read_only=True).build_session_context()["messages"]]
    assert texts[-4:] == ["A asks", "A answers", "B asks", "B answers"]  # A's turn is not on a side branch
    assert not check_session(session).problems


def test_a_strict_writer_refuses_and_writes_nothing(tmp_path: Path) -> None:
    session, _out_a, out_b = _two_writers(tmp_path, "strict")
    assert out_b == "refused 2\n"
    text = session.read_text()
    assert "A answers" in text and "B asks" not in text
