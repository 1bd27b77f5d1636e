"""Creating a session is idempotent under races: writers
that start the same new session id at once end with ONE session holding
every writer's entries; the losers continue the winner's session.

Real processes on the default directory layout (``session_dir=``), a file
store, SQLite and PostgreSQL. No sleeps: each worker opens its
``PiSession`` (so every one of them has found no session with the id), says
``ready`` on its stdout and waits for ``go`` on its stdin (a pipe is the
barrier); then all of them write their first items at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
from process_barrier import release_together
import pytest

from pi_session import SessionManager
from pi_session.storage import ConcurrentAppendError
from pi_session.stores import open_store

WRITERS = 4
ITEMS = 3

_WORKER = r"""
import asyncio, json, sys
from pi_session.integrations.openai_agents import PiSession
from pi_session.session.settings import CompactionSettings
cwd, kind, where, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
options = {"session_dir": where} if kind == "dir" else {"store": where}
session = PiSession("raced-new", cwd=cwd, settings=CompactionSettings(), **options)
assert asyncio.run(session.get_items()) == []  # opened: no session with this id yet
print("ready", flush=True)
sys.stdin.readline()  # go
for i in range(n):
    asyncio.run(session.add_items([{"role": "user", "content": f"{tag}:{i}"}]))
print(json.dumps([item["content"] for item in asyncio.run(session.get_items())]), flush=True)
"""


def _env() -> dict[str, str]:
    src = str(Path(__file__).parents[1] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _race(cwd: Path, kind: str, where: str) -> list[list[str]]:
    """WRITERS processes start session ``raced-new`` at once; each one's
    items as it sees them at the end."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(cwd), kind, where, f"w{k}", str(ITEMS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for k in range(WRITERS)
    ]
    release_together(procs)
    seen = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-3000:]
        seen.append(json.loads(out))
    return seen


def _check(seen: list[list[str]], contents: list[str]) -> None:
    expected = {f"w{k}:{i}" for k in range(WRITERS) for i in range(ITEMS)}
    assert sorted(contents) == sorted(expected)  # every item of every writer, once
    for k, items in enumerate(seen):  # each writer's own items, in its order, in what it sees
        own = [c for c in items if c.startswith(f"w{k}:")]
        assert own == [f"w{k}:{i}" for i in range(ITEMS)]


def _one_path(manager: SessionManager) -> list[str]:
    """The contents of the user messages on the leaf's path; the entry ids
    are unique and every entry is on that one path (no second root)."""
    entries = manager.get_entries()
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    branch = manager.get_branch()
    assert [e["id"] for e in branch] == ids
    return [e["message"]["content"] for e in branch if e["type"] == "message"]


def test_processes_starting_one_new_id_in_a_session_dir_share_one_file(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    seen = _race(tmp_path, "dir", str(directory))
    files = sorted(directory.glob("*.jsonl"))
    assert [f.name.split("_", 1)[1] for f in files] == ["raced-new.jsonl"], files  # one file, pi's name
    headers = [orjson.loads(line) for line in files[0].read_bytes().splitlines() if b'"type":"session"' in line]
    assert len(headers) == 1 and headers[0]["id"] == "raced-new"
    _check(seen, _one_path(SessionManager.open(files[0], read_only=True)))


@pytest.mark.parametrize("backend", ["file", "sqlite", "postgres"])
def test_processes_starting_one_new_id_in_a_store_share_one_session(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "file":
        url = str(tmp_path / "store")
    elif backend == "sqlite":
        url = f"sqlite:///{tmp_path}/sessions.db"
    else:
        url = request.getfixturevalue("postgres_url")
    seen = _race(tmp_path, "store", url)
    store = open_store(url)
    try:
        assert [s["id"] for s in store.list()] == ["raced-new"]
        if backend == "file":
            assert len(list((tmp_path / "store").rglob("*.jsonl"))) == 1
        manager = SessionManager.open("raced-new", store=store, read_only=True)
        _check(seen, _one_path(manager))
    finally:
        store.close()


# ---------------------------------------------------------------------------
# SessionManager: the first write finds the id taken


USER = {"role": "user", "content": "hi", "timestamp": 1}


def test_a_manager_whose_new_id_was_created_meanwhile_continues_that_session(tmp_path: Path) -> None:
    """Two managers start id ``x`` (neither written): the second one's first
    write continues the first one's session, onto its leaf, in its file;
    its own header is dropped and the pending entries before the message
    (a model change) come along."""
    a = SessionManager.create(str(tmp_path), tmp_path, id="x")
    b = SessionManager.create(str(tmp_path), tmp_path, id="x")
    a.append_message({**USER, "content": "from a"})
    b.append_model_change("p", "m")
    b_message = b.append_message({**USER, "content": "from b"})
    assert b.get_session_file() == a.get_session_file()
    assert [p.name for p in tmp_path.glob("*.jsonl")] == [a.get_session_file().name]
    assert b.get_header() == a.get_header()
    assert any("created session x first" in note for note in b.notes), b.notes
    reopened = SessionManager.open(a.get_session_file(), read_only=True)
    assert [e["type"] for e in reopened.get_branch()] == ["message", "model_change", "message"]
    assert reopened.get_leaf_id() == b_message == b.get_leaf_id()
    assert [e["id"] for e in reopened.get_entries()] == [e["id"] for e in b.get_entries()]
    # both go on writing to the one session, each following the other
    a.append_message({**USER, "content": "a again"})
    b.append_message({**USER, "content": "b again"})
    assert _one_path(SessionManager.open(a.get_session_file(), read_only=True)) == ["from a", "from b", "a again", "b again"]


def test_a_joining_manager_renames_an_entry_id_the_session_holds(tmp_path: Path) -> None:
    """An id of the joining manager's pending entries that the winner's
    session holds already gets a new id (references to it follow), so the
    ids stay unique."""
    b = SessionManager.create(str(tmp_path), tmp_path, id="x")
    taken = b.append_model_change("p", "m")
    label = b.append_label_change(taken, "mine")
    winner = [
        {"type": "session", "version": 3, "id": "x", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": str(tmp_path)},
        {"type": "message", "id": taken, "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z", "message": USER},
    ]
    (tmp_path / "2025-01-01T00-00-00-000Z_x.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in winner))
    b.append_message({**USER, "content": "from b"})
    reopened = SessionManager.open(tmp_path / "2025-01-01T00-00-00-000Z_x.jsonl", read_only=True)
    branch = reopened.get_branch()
    assert [e["type"] for e in branch] == ["message", "model_change", "label", "message"]
    renamed = branch[1]["id"]
    assert renamed != taken and branch[2]["targetId"] == renamed and branch[2]["parentId"] == renamed
    assert branch[1]["parentId"] == taken and reopened.get_label(renamed) == "mine"
    assert [e["id"] for e in b.get_entries()] == [e["id"] for e in reopened.get_entries()]
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def test_a_strict_manager_whose_new_id_was_created_meanwhile_writes_nothing(tmp_path: Path) -> None:
    a = SessionManager.create(str(tmp_path), tmp_path, id="x")
    b = SessionManager.create(str(tmp_path), tmp_path, id="x", concurrent="strict")
    a.append_message(USER)
    before = a.get_session_file().read_bytes()
    with pytest.raises(ConcurrentAppendError):
        b.append_message(USER)
    assert a.get_session_file().read_bytes() == before and len(list(tmp_path.glob("*.jsonl"))) == 1
    assert b.get_entries() == []


def test_a_file_with_the_id_in_its_name_that_is_not_that_session_is_refused(tmp_path: Path) -> None:
    b = SessionManager.create(str(tmp_path), tmp_path, id="x")
    other = tmp_path / "2025-01-01T00-00-00-000Z_x.jsonl"
    other.write_bytes(orjson.dumps({"type": "session", "version": 3, "id": "y", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}) + b"\n")
    with pytest.raises(FileExistsError, match="x"):
        b.append_message(USER)
    assert len(list(tmp_path.glob("*.jsonl"))) == 1 and b.get_entries() == []


def test_a_manager_in_a_database_store_continues_a_session_created_meanwhile(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    a = SessionManager.create(str(tmp_path), id="x", store=url)
    b = SessionManager.create(str(tmp_path), id="x", store=url)
    a.append_message({**USER, "content": "from a"})
    b.append_message({**USER, "content": "from b"})
    assert _one_path(SessionManager.open("x", store=url, read_only=True)) == ["from a", "from b"]

