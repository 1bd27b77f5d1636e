"""Stores under attack: passwords with the characters libpq reads
as part of them never shown (real PostgreSQL, the real console script),
read-only commands that never write to another program's SQLite database,
SQLite write failures (a full database) reported as themselves, and a new
SQLite store opened by several threads at once."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from pi_session.core import jsonio
from storage_helpers import stored_session_lines
from pi_session.stores import StoreError, open_store
from pi_session.stores.postgres import PostgresStore

PI_SESSION = Path(sys.executable).with_name("pi-session")
SECRET_HEAD, SECRET_TAIL = "Sekr", "Et9xq"


_session = stored_session_lines


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_SESSION_STORE")}
    return subprocess.run([str(PI_SESSION), *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


# --- item 1: passwords libpq accepts are masked in every form ---------------

CHARS = ["#", "?", "@", "/", ":", "%40", " ", "'"]


def _forms(postgres_url: str, char: str, dbname: str) -> list[str]:
    """The URL-userinfo, query-parameter and (the last two) conninfo forms
    of a login with the password ``SECRET_HEAD + char + SECRET_TAIL`` to
    ``dbname``."""
    parts = urlsplit(postgres_url)
    host = parse_qs(parts.query)["host"][0]
    user = parts.username or ""
    password = SECRET_HEAD + char + SECRET_TAIL
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    query_value = password.replace("&", "%26").replace(" ", "%20")
    return [
        f"postgresql://{user}:{password}@/{dbname}?host={host}",
        f"postgresql://{user}@/{dbname}?host={host}&password={query_value}",
        f"host={host} user={user} password='{quoted}' dbname={dbname}",
        f"host={host} user={user} password = '{quoted}' dbname={dbname}",
    ]


def _assert_no_secret(text: str) -> None:
    assert SECRET_HEAD not in text and SECRET_TAIL not in text, text


@pytest.mark.parametrize("char", CHARS)
def test_password_with_any_character_is_masked_in_connection_errors(postgres_url: str, char: str) -> None:
    """A database that does not exist makes libpq fail (the test server
    trusts any password); the error and its URL never show the password."""
    for url in _forms(postgres_url, char, "pi_no_such_database"):
        with pytest.raises(StoreError) as info:
            PostgresStore(url)
        message = str(info.value)
        _assert_no_secret(message)
        assert "\n" not in message and "***" in message, message


@pytest.mark.parametrize("char", CHARS)
def test_password_with_any_character_is_masked_by_ls(postgres_url: str, char: str, tmp_path: Path) -> None:
    """``pi-session --store URL ls`` (the real console script), on a
    database that exists and one that does not: the paths it lists and
    whatever it reports never show the password."""
    with open_store(postgres_url) as store:
        store.create(_session("s-1"))
    dbname = urlsplit(postgres_url).path.lstrip("/")
    for url in _forms(postgres_url, char, dbname)[:2] + _forms(postgres_url, char, "pi_no_such_database")[:2]:
        for args in (["--store", url, "ls", "--all"], ["--store", url, "ls", "--all", "--json"]):
            done = _run(*args, cwd=tmp_path)
            _assert_no_secret(done.stdout + done.stderr)
            if done.returncode == 0:
                assert "s-1" in done.stdout
            else:
                assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# --- item 4: a read-only command never writes to a SQLite database -----------


def _foreign_db(path: Path) -> None:
    """Another program's SQLite database (rollback journal, one table)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('keep me')")
    conn.commit()
    conn.close()


def _state(path: Path) -> tuple[bytes, list[tuple[str, str]], str, list[str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        schema = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()
    return path.read_bytes(), schema, mode, sorted(p.name for p in path.parent.iterdir())


@pytest.mark.parametrize("command", [["ls"], ["ls", "--all"], ["info", "abc"], ["tree", "abc"]])
def test_read_only_commands_never_write_to_another_programs_database(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "other.db"
    _foreign_db(db)
    before = _state(db)
    done = _run("--store", f"sqlite:///{db}", *command, cwd=tmp_path)
    assert _state(db) == before
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a pi-session store" in lines[0], done.stderr


def test_read_only_commands_never_write_to_an_empty_database(tmp_path: Path) -> None:
    """An empty database (e.g. made by ``sqlite3 x.db 'VACUUM'``) reads as an
    empty store; the first write creates the schema and switches to WAL."""
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()
    db.write_bytes(b"")
    before = _state(db)
    assert _run("--store", f"sqlite:///{db}", "ls", "--all", cwd=tmp_path).returncode == 0
    assert _state(db) == before
    with open_store(f"sqlite:///{db}") as store:
        assert store.list() == [] and store.find("") == [] and not store.exists("s-1")
        assert _state(db) == before
        store.create(_session("s-1"))
    _, schema, mode, _ = _state(db)
    assert mode == "wal" and "pi_meta" in [name for name, _ in schema]


# --- item 10: a failed SQLite write is reported as itself ---------------------

FILE_LIMIT = 200_000  # bytes a file may grow to (RLIMIT_FSIZE): the "disk" is full past it


def _file_limit() -> None:
    """In the child: files cannot grow past FILE_LIMIT (writes past it fail
    with EFBIG, as on a full disk; SIGXFSZ ignored so the write fails
    instead of killing the process)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


_LIBRARY_WRITE = """
import sys
import threading
from pi_session.core import jsonio
from pi_session.stores import StoreError, open_store
header = {"type": "session", "version": 3, "id": "big", "timestamp": "2025-01-02T03:04:05.000Z", "cwd": "/work/p"}
user = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-01-02T03:04:06.000Z",
        "message": {"role": "user", "content": "x" * 1_000_000, "timestamp": 1735787046000}}
store = open_store(sys.argv[1])
for call in (lambda: store.create([jsonio.dumps_line(header), jsonio.dumps_line(user)]),
             lambda: store.append("small", [jsonio.dumps_line({**user, "id": "e2", "parentId": "e1"})])):
    try:
        call()
    except StoreError as exc:
        print("StoreError:", exc)
    except BaseException as exc:
        print("RAW", type(exc).__module__, type(exc).__name__, exc)
print("still readable:", [s["id"] for s in store.list()])
"""


def test_a_full_disk_raises_store_error_with_sqlites_own_message(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as store:
        store.create(_session("small"))
    done = subprocess.run(
        [sys.executable, "-c", _LIBRARY_WRITE, url], capture_output=True, text=True, timeout=120, preexec_fn=_file_limit
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) == 3 and out[2] == "still readable: ['small']", done.stdout
    for line in out[:2]:
        assert line.startswith("StoreError: ") and "rollback" not in line, done.stdout
        assert line.endswith(("disk I/O error", "database or disk is full")), done.stdout
    with open_store(url) as store:
        assert [s["id"] for s in store.list()] == ["small"]


def test_a_full_disk_is_reported_by_import_as_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as store:
        store.create(_session("small"))
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(_session("big", "x" * 1_000_000)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_SESSION_STORE")}
    done = subprocess.run(
        [str(PI_SESSION), "--store", url, "import", str(big)],
        capture_output=True, text=True, timeout=120, env=env, preexec_fn=_file_limit,
    )
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    text = done.stdout + done.stderr
    assert "internal error" not in text and "rollback" not in text, text
    assert "disk I/O error" in text or "database or disk is full" in text, text


def test_threads_opening_a_new_sqlite_store_at_once(tmp_path: Path) -> None:
    """Threads released together by a barrier open (and write to) the same
    new database: none fails with "database is locked" (the WAL switch is
    retried). Two threads, many new databases: the race is narrow (before
    the fix about 1 round in 60 failed)."""
    for round_ in range(400):
        url = f"sqlite:///{tmp_path}/new{round_}.db"
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                barrier.wait()
                with open_store(url) as store:
                    store.create(_session(f"t{n}"))
                    store.list()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], f"round {round_}: {errors[0]}"
        with open_store(url) as store:
            assert sorted(store.find("t")) == ["t0", "t1"]


@pytest.mark.parametrize("conninfo", ["host=/tmp dbname=pi", "dbname=pi password=hunter2", " service = pi"])
def test_a_libpq_connection_string_is_refused_not_taken_as_a_directory(tmp_path: Path, conninfo: str) -> None:
    """``--store "host=/tmp dbname=pi"`` would create a directory ``host=``
    (with ``tmp dbname=pi`` inside) and import into it: refused with one
    line that shows the URL form instead, password masked."""
    with pytest.raises(StoreError, match="connection string is not a store URL"):
        open_store(conninfo)
    result = _run("import", str(tmp_path / "nothing"), "--store", conninfo, cwd=tmp_path)
    assert result.returncode == 1 and "postgresql://" in result.stderr and "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # a real directory of that name (or a path object) is still a directory
    (tmp_path / "host=x").mkdir()
    assert open_store(str(tmp_path / "host=x")) is not None
