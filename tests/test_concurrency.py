"""Several processes appending to one session at once (issue 5): every entry
present exactly once, every line valid JSON, no interleaved bytes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from pi_session.repair import check_session
from pi_session.storage import read_session_file
from storage_helpers import make_session

APPENDER = r'''
import os, sys, time
from pi_session.manager import SessionManager
session, go, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = SessionManager.open(session, durability="none")
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(n):
    # sizes vary so that some lines are larger than a pipe buffer / page
    m.append_message({"role": "user", "content": f"{tag}:{i}:" + "y" * ((i * 7919) % 9000), "timestamp": 1})
print("done", flush=True)
'''


@pytest.mark.parametrize("processes, per_process", [(2, 400), (8, 150)])
def test_concurrent_appenders(tmp_path: Path, processes: int, per_process: int) -> None:
    session = make_session(tmp_path / "s", n=2)
    before = len(read_session_file(session).entries)
    script = tmp_path / "appender.py"
    script.write_text(APPENDER)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, str(script), str(session), str(go), f"p{k}", str(per_process)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for k in range(processes)
    ]
    time.sleep(0.5)  # let them import and open the session
    go.write_text("go")
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
import os, sys, time
from pi_session.storage import SessionFileError, atomic_rewrite, iter_lines, read_session_file
session, go, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.001)
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
    go = tmp_path / "go"
    (tmp_path / "appender.py").write_text(APPENDER)
    (tmp_path / "rewriter.py").write_text(REWRITER)
    appenders = [
        subprocess.Popen([sys.executable, str(tmp_path / "appender.py"), str(session), str(go), f"p{k}", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for k in range(3)
    ]
    rewriter = subprocess.Popen([sys.executable, str(tmp_path / "rewriter.py"), str(session), str(go), "60"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    go.write_text("go")
    for proc in [*appenders, rewriter]:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
    contents = [r.get("message", {}).get("content", "") for r in map(orjson.loads, session.read_bytes().splitlines())]
    got = {c.split(":", 2)[0] + ":" + c.split(":", 2)[1] for c in contents if isinstance(c, str) and c.startswith("p")}
    assert got == {f"p{k}:{i}" for k in range(3) for i in range(300)}
    assert len([c for c in contents if isinstance(c, str) and c.startswith("p")]) == 900


def test_append_waiting_for_the_lock_follows_a_rename(tmp_path: Path) -> None:
    """Deterministic version of the race above: an append blocked on the lock
    while the file is replaced must reopen and write to the new file."""
    import os
    import threading

    from pi_session import storage

    session = make_session(tmp_path / "s", n=2)
    replacement = session.read_bytes()
    line = b'{"type":"custom","customType":"x","id":"0000abcd","parentId":null,"timestamp":"t"}\n'
    with storage._locked_append_fd(session) as (_fd, _created):
        worker = threading.Thread(target=storage.append_lines, args=(session, [line]))
        worker.start()
        time.sleep(0.3)  # the worker now waits for the lock on the old inode
        assert worker.is_alive()
        tmp = session.with_name("replacement.tmp")
        tmp.write_bytes(replacement)
        os.replace(tmp, session)
    worker.join(10)
    assert session.read_bytes() == replacement + line


TURN_WRITER = r'''
import os, sys, time
from pi_session.manager import SessionManager
from pi_session.storage import ConcurrentAppendError
session, tag, mode, events = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def wait(name):
    while not os.path.exists(os.path.join(events, name)):
        time.sleep(0.001)

def signal(name):
    open(os.path.join(events, name), "w").close()

m = SessionManager.open(session, concurrent=mode)
signal(f"opened-{tag}")
wait(f"go-{tag}")
try:
    m.append_message({"role": "user", "content": f"{tag} asks", "timestamp": 1})
    m.append_message({"role": "assistant", "content": [{"type": "text", "text": f"{tag} answers"}], "api": "x", "provider": "p",
                      "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                      "stopReason": "stop", "timestamp": 2})
    print("notes", len(m.notes), flush=True)
except ConcurrentAppendError as exc:
    print("refused", exc.count, flush=True)
signal(f"done-{tag}")
'''


def _two_writers(tmp_path: Path, mode_b: str) -> tuple[Path, str, str]:
    """Processes A and B open one session; A writes a turn; then B, whose
    leaf is now stale, writes its turn. Events are files, no sleeps."""
    session = make_session(tmp_path / "s", n=2)
    events = tmp_path / "events"
    events.mkdir()
    script = tmp_path / "writer.py"
    script.write_text(TURN_WRITER)

    def start(tag: str, mode: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(script), str(session), tag, mode, str(events)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def wait(name: str) -> None:
        deadline = time.monotonic() + 120
        while not (events / name).exists():
            assert time.monotonic() < deadline, name
            time.sleep(0.005)

    a, b = start("A", "follow"), start("B", mode_b)
    wait("opened-A")
    wait("opened-B")  # both read the file before A writes
    (events / "go-A").touch()
    out_a, err_a = a.communicate(timeout=120)
    assert a.returncode == 0, err_a.decode()
    (events / "go-B").touch()
    out_b, err_b = b.communicate(timeout=120)
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
