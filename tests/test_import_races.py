"""``pi-session import`` under concurrency and after a torn last line
(issue 22, items 6 and 7), on every store (a file store, SQLite,
PostgreSQL), through the real console script.

Several importers are started together: each is a small Python gate that
says ``ready`` and waits for ``go`` on its stdin (a pipe is the barrier, no
sleeps), then execs the real ``pi-session`` console script.

Item 6: importers of the same directory find each other's sessions (never
"failed … exists already"), and importers of the same grown sessions find
each other's appended lines (never a false "conflict").

Item 7: a session file with a torn last line (a crash cut the record short,
no newline) is imported; the writer that opens it next repairs it (pi: a
newline after the fragment; pi-session: the fragment moved aside) and goes
on; importing it again brings the new entries (``updated``), and once more
finds nothing to do (``unchanged``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from process_barrier import release_together
import pytest

from pi_session import SessionManager
from pi_session.core.jsonio import dumps_line
from pi_session.stores import open_store
from pi_session.stores.file import FileStore

PI_SESSION = Path(sys.executable).with_name("pi-session")
GATE = "import os, sys\nprint('ready', flush=True)\nsys.stdin.readline()\nos.execv(sys.argv[1], sys.argv[1:])\n"
CWDS = ("/work/p0", "/work/p1", "/work/p2")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PI_SESSION_STORE")}


def _header(sid: str, cwd: str) -> bytes:
    return dumps_line({"type": "session", "version": 3, "id": sid, "timestamp": "2025-01-02T03:04:05.000Z", "cwd": cwd})


def _message(eid: str, parent: str | None, text: str) -> bytes:
    return dumps_line(
        {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": "2025-01-02T03:04:06.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1735787046000},
        }
    )


def _entries(sid: str, start: int, stop: int) -> bytes:
    return b"".join(_message(f"{sid}-e{i}", f"{sid}-e{i - 1}" if i else None, f"message {i} of {sid}") for i in range(start, stop))


def _source(tmp_path: Path, per_cwd: int) -> dict[str, Path]:
    """Session files as pi keeps them: one directory per cwd, two entries each."""
    files: dict[str, Path] = {}
    for k, cwd in enumerate(CWDS):
        directory = tmp_path / "src" / f"--work-p{k}--"
        directory.mkdir(parents=True)
        for i in range(per_cwd):
            sid = f"s{k}-{i:03d}"
            path = directory / f"2025-01-02T03-04-05-000Z_{sid}.jsonl"
            path.write_bytes(_header(sid, cwd) + _entries(sid, 0, 2))
            files[sid] = path
    return files


def _import_at_once(store_url: str, source: Path, processes: int) -> list[tuple[int, list[dict], str]]:
    """``processes`` × ``pi-session --store URL import --json SOURCE``, let go
    together; (exit status, results, stderr) of each."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", GATE, str(PI_SESSION), "--store", store_url, "import", "--json", str(source)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
        )
        for _ in range(processes)
    ]
    release_together(procs)
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        done.append((proc.returncode, json.loads(out) if out.strip() else [], err.decode()))
    return done


def _stored(store_url: str) -> dict[str, bytes]:
    with open_store(store_url) as store:
        return {str(info["id"]): b"".join(store.read_lines(str(info["id"]))) for info in store.list(with_text=False)}


def _file_store_ids(root: Path) -> list[str]:
    """The session id of every file of a file store (duplicates kept)."""
    return sorted(json.loads(p.read_bytes().split(b"\n", 1)[0])["id"] for p in root.rglob("*.jsonl"))


@pytest.mark.parametrize("round_", range(3))
def test_importers_of_one_directory_at_once_find_each_others_sessions(store_url: str, tmp_path: Path, round_: int) -> None:
    """Four ``pi-session import`` of the same directory at once: each
    session is imported by one of them and ``unchanged`` for the others;
    none fails (before: "failed … the file exists already" in the file
    store, whose directory memo missed files another importer created in
    the same clock tick)."""
    files = _source(tmp_path, per_cwd=60)
    done = _import_at_once(store_url, tmp_path / "src", processes=4)
    for status, results, err in done:
        assert status == 0, err[-2000:]
        assert sorted(r["id"] for r in results) == sorted(files)
        assert {r["status"] for r in results} <= {"imported", "unchanged"}, [r for r in results if r["status"] not in ("imported", "unchanged")][:3]
    imported = [r["id"] for _status, results, _err in done for r in results if r["status"] == "imported"]
    assert sorted(imported) == sorted(files)  # each exactly once
    assert _stored(store_url) == {sid: path.read_bytes() for sid, path in files.items()}
    if not store_url.startswith(("sqlite:", "postgresql:")):
        assert _file_store_ids(Path(store_url)) == sorted(files)


@pytest.mark.parametrize("round_", range(3))
def test_importers_of_grown_sessions_at_once_find_each_others_lines(store_url: str, tmp_path: Path, round_: int) -> None:
    """The sessions were imported; pi went on with them; four importers at
    once bring the new lines: each session is ``updated`` by one of them
    and ``unchanged`` for the others (before: a "conflict" for whoever came
    second, as the lines the first one appended were not re-read and
    compared)."""
    files = _source(tmp_path, per_cwd=40)
    first = subprocess.run([str(PI_SESSION), "--store", store_url, "import", str(tmp_path / "src")], capture_output=True, text=True, env=_env(), timeout=300)
    assert first.returncode == 0, first.stderr
    for sid, path in files.items():
        with path.open("ab") as f:
            f.write(_entries(sid, 2, 6))
    done = _import_at_once(store_url, tmp_path / "src", processes=4)
    for status, results, err in done:
        assert status == 0, (err[-2000:], [r for r in results if r["status"] not in ("updated", "unchanged")][:3])
        assert {r["status"] for r in results} <= {"updated", "unchanged"}
    updated = [r for _status, results, _err in done for r in results if r["status"] == "updated"]
    assert sorted(r["id"] for r in updated) == sorted(files)  # each by one importer
    assert {r["appended"] for r in updated} == {4}
    assert _stored(store_url) == {sid: path.read_bytes() for sid, path in files.items()}


# --- item 7: a torn last line, repaired and continued -----------------------

TORN = b'{"type":"message","id":"t-e2","parentId":"t-e1","timestamp":"2025-01-02T03:04:0'


def _torn_source(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "2025-01-02T03-04-05-000Z_torn-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(_header("torn-1", "/work/p") + _message("t-e0", None, "zero") + _message("t-e1", "t-e0", "one") + TORN)
    return path


def _import(store_url: str, path: Path) -> dict:
    done = subprocess.run([str(PI_SESSION), "--store", store_url, "import", "--json", str(path)], capture_output=True, text=True, env=_env(), timeout=300)
    (result,) = json.loads(done.stdout)
    assert done.returncode == (1 if result["status"] in ("conflict", "failed") else 0), done.stderr
    return result


def _entry_ids(store_url: str, sid: str) -> list[str]:
    with open_store(store_url) as store:
        return [e["id"] for e in store.read(sid).entries]


def _continue_with_pi_session(path: Path) -> list[str]:
    """pi-session opens the file and goes on: its first append moves the
    torn fragment aside (``.torn-<offset>``) and starts on a fresh line."""
    manager = SessionManager.open(path)
    ids = [manager.append_message({"role": "user", "content": f"after repair {i}", "timestamp": 1735787050000 + i}) for i in range(3)]
    assert TORN not in path.read_bytes()
    return ids


def _continue_with_pi(path: Path, oracle) -> list[str]:
    """pi itself (the oracle, pi 1.6) opens the file and goes on: it ends
    the torn line with a newline (SPEC-pi-1.6 §3) and appends after it."""
    spec = path.parent.parent / "spec.json"
    ops = [["appendMessage", {"role": "user", "content": f"after repair {i}", "timestamp": 1735787050000 + i}] for i in range(3)]
    spec.write_text(json.dumps({"open": str(path), "persist": True, "ops": ops}))
    out = json.loads(oracle("ops", str(spec), pi="1.6.0"))
    (text,) = out["fileText"].values()
    path.write_text(text)
    assert TORN + b"\n" in path.read_bytes()
    return [r for r in out["results"]]


@pytest.mark.parametrize("writer", ["pi-session", "pi"])
def test_a_torn_last_line_repaired_and_continued_is_imported_again(store_url: str, tmp_path: Path, writer: str, request) -> None:
    """Import a file whose last line is torn; the next writer repairs it
    and appends; import again: the new entries arrive (``updated``, no
    conflict), and a third import has nothing to do. Before: a
    "conflict" on every later import (the store's unterminated fragment
    was compared as raw bytes)."""
    path = _torn_source(tmp_path)
    first = _import(store_url, path)
    assert first["status"] == "imported" and [p["kind"] for p in first["problems"]] == ["torn-tail"]
    assert _entry_ids(store_url, "torn-1") == ["t-e0", "t-e1"]  # the fragment is no entry
    if writer == "pi":
        new = _continue_with_pi(path, request.getfixturevalue("oracle"))
    else:
        new = _continue_with_pi_session(path)
    again = _import(store_url, path)
    assert again["status"] == "updated", again
    assert _entry_ids(store_url, "torn-1") == ["t-e0", "t-e1", *new]
    assert _import(store_url, path)["status"] == "unchanged"
    assert _entry_ids(store_url, "torn-1") == ["t-e0", "t-e1", *new]
    if writer == "pi":  # pi kept the fragment as a line of its own: the store holds the file byte for byte
        assert _stored(store_url)["torn-1"] == path.read_bytes()


# --- item 6: the file store's directory memo ----------------------------------


def test_a_file_created_in_the_same_clock_tick_is_found(tmp_path: Path) -> None:
    """Another process creates a session file in the same clock tick as the
    change this store's listing saw (here: the directory's mtime put back,
    as a coarse clock leaves it): the store still finds it (a listing made
    within ``RACY_NS`` of its directory's mtime is not trusted to say "no
    such session"). Before: "no session" until the directory changed again."""
    store = FileStore(tmp_path / "root")
    store.create([_header("first", "/work/p"), _message("e1", None, "hi")])
    directory = store.path_of("first").parent
    assert not store.exists("second")  # listed now
    tick = directory.stat().st_mtime_ns
    FileStore(tmp_path / "root").create([_header("second", "/work/p"), _message("e1", None, "hi")])
    os.utime(directory, ns=(tick, tick))
    assert store.exists("second") and store.read("second").header["id"] == "second"


def test_creating_many_sessions_lists_their_directory_a_few_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The racy rule costs no listing per create: this store's own creates
    keep their directory's memo current, so importing N sessions stays
    linear."""
    store = FileStore(tmp_path / "root")
    scans: list[str] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": (scans.append(str(p)), real(p))[1])
    for i in range(60):
        store.create([_header(f"s-{i:03d}", "/work/p"), _message("e1", None, "hi")])
    assert len(scans) <= 6, scans  # a few (racy first listings, the creation check), never one per create
    assert all(store.exists(f"s-{i:03d}") for i in range(60)) and not store.exists("s-999")
