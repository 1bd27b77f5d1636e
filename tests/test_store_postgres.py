"""What is particular to the PostgreSQL store (the behaviour shared by every
store is tests/test_stores.py): credentials from the URL or libpq's
environment and never shown, parameterised queries, the schema created once
by processes racing to create it, text PostgreSQL cannot hold, a pool that
survives ``fork``. Against a real server (conftest ``postgres_url``)."""

from __future__ import annotations

import multiprocessing
import os
import time
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from pi_session.core import jsonio
from storage_helpers import stored_session_lines
from pi_session.search import index_for
from pi_session.stores import StoreError, open_store
from pi_session.stores.postgres import PostgresStore


_session = stored_session_lines


def test_password_never_shown_in_errors() -> None:
    url = "postgresql://alice:s3cr3t-pw@/db?host=/nonexistent-pi-session-dir"
    with pytest.raises(StoreError) as info:
        open_store(url)
    message = str(info.value)
    assert "s3cr3t-pw" not in message and "repr" not in message
    assert "postgresql://alice:***@/db" in message
    assert "cannot connect" in message and "\n" not in message


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://alice:s3cr3t  pw@db.invalid/x", "s3cr3t"),  # libpq refuses the spaces, quoting the password
        ("postgresql://alice:s3cr3t%zz@db.invalid/x", "s3cr3t"),  # a bad percent escape, quoted too
        ("postgresql://alice@db.invalid/x?password=s3cr3t%zz", "s3cr3t"),
        ("postgresql://alice:s3cr3t%20pw@/x?host=/nonexistent-pi-session-dir&bogus=1", "s3cr3t"),
    ],
)
def test_password_never_shown_when_the_url_does_not_parse(url: str, secret: str) -> None:
    """Libpq quotes the part of a URL it cannot parse, which can be the
    password itself; no server is needed to see it."""
    with pytest.raises(StoreError) as info:
        open_store(url)
    message = str(info.value)
    assert secret not in message, message
    assert "cannot connect" in message and "\n" not in message


def test_store_url_is_masked(postgres_url: str) -> None:
    parts = urlsplit(postgres_url)
    with_password = parts._replace(netloc=f"{parts.username}:hunter2@{parts.hostname or ''}").geturl()
    with open_store(with_password) as store:  # trust auth: any password is accepted
        assert "hunter2" not in store.url and "hunter2" not in repr(store)
        store.create(_session("s-1"))
        assert "hunter2" not in store.list()[0]["path"]


def test_credentials_from_the_environment(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = urlsplit(postgres_url)
    monkeypatch.setenv("PGHOST", parse_qs(parts.query)["host"][0])
    monkeypatch.setenv("PGUSER", parts.username or "")
    monkeypatch.setenv("PGDATABASE", parts.path.lstrip("/"))
    with open_store("postgresql://") as store:
        store.create(_session("from-env"))
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT id FROM pi_sessions").fetchall() == [("from-env",)]


def test_queries_are_parameterised(postgres_url: str) -> None:
    evil = "x'); DROP TABLE pi_records; --%s?"
    with open_store(postgres_url) as store:
        store.create(_session(evil, text="100% '; DELETE FROM pi_sessions; -- ?"))
        assert store.find("x'") == [evil]
        assert store.resolve("x')") == evil
        assert b"".join(store.read_lines(evil)) == b"".join(_session(evil, text="100% '; DELETE FROM pi_sessions; -- ?"))
        assert store.list()[0]["firstMessage"] == "100% '; DELETE FROM pi_sessions; -- ?"
        assert store.delete(evil) and store.list() == []


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_text_a_database_cannot_hold_is_kept_in_the_line(backend: str, request: pytest.FixtureRequest, tmp_path) -> None:
    """Text columns hold no lone surrogates (not UTF-8) and, in PostgreSQL,
    no NUL: the listing shows U+FFFD there, the stored line keeps the exact
    bytes (a shared-layer rule, so SQLite is checked too)."""
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else f"sqlite:///{tmp_path}/s.db"
    lines = _session("odd", text="a\x00b \ud800 c")
    with open_store(url) as store:
        store.create(lines)
        assert list(store.read_lines("odd")) == lines
        first = store.list()[0]["firstMessage"]
        assert first == ("a\ufffdb \ufffd c" if backend == "postgres" else "a\x00b \ufffd c")
        assert store.read("odd").entries[0]["message"]["content"] == "a\x00b \ud800 c"


def _open_and_create(url: str, session_id: str) -> str:
    with open_store(url) as store:
        store.create(_session(session_id))
        return session_id


def test_processes_creating_the_schema_at_once(postgres_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(6) as pool:
        ids = pool.starmap(_open_and_create, [(postgres_url, f"race-{i}") for i in range(6)])
    with open_store(postgres_url) as store:
        assert sorted(i["id"] for i in store.list()) == sorted(ids)
        assert store.find("race-", limit=10) == sorted(ids)


def test_schema_is_created_once_and_reused(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        index_for(store).close()  # the search index, written by each create
        store.create(_session("kept"))
    with open_store(postgres_url) as store:
        assert store.exists("kept")
    with psycopg.connect(postgres_url) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert tables == {"pi_meta", "pi_sessions", "pi_records", "pi_blobs"} | {  # and the search index
        "pi_search_sessions", "pi_search_docs", "pi_search_files", "pi_search_edits", "pi_search_marks"}
    with psycopg.connect(postgres_url) as conn:
        if conn.info.server_version >= 140000:  # large lines are compressed with lz4
            row = conn.execute("SELECT attcompression FROM pg_attribute WHERE attrelid = 'pi_records'::regclass AND attname = 'line'").fetchone()
            assert row == ("l",)


def _backend_pid(store: PostgresStore) -> int:
    with store._transaction(write=False) as cur:
        return int(cur.execute("SELECT pg_backend_pid()").fetchone()[0])


def test_a_forked_child_gets_its_own_connections(postgres_url: str) -> None:
    """After ``fork`` the child opens new connections (a connection shared
    across fork would be corrupted); the parent's keep working."""
    with open_store(postgres_url) as store:
        assert isinstance(store, PostgresStore)
        store.create(_session("parent"))
        parent_backend = _backend_pid(store)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                store.create(_session("child"))
                os.write(write_end, str(_backend_pid(store)).encode())
                code = 0 if store.exists("parent") else 2
            finally:
                os._exit(code)
        os.close(write_end)
        child_backend = int(os.read(read_end, 100) or b"0")
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert child_backend not in (0, parent_backend)
        assert sorted(i["id"] for i in store.list()) == ["child", "parent"]


def test_a_closed_store_says_so(postgres_url: str) -> None:
    store = open_store(postgres_url)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list()


def test_ls_reads_only_the_sessions_table(postgres_url: str) -> None:
    """``list(with_text=False)`` (what ``ls`` asks for) answers from
    ``pi_sessions`` alone: a role that may not read ``pi_records`` can list;
    asking for the messages' text needs ``pi_records``."""
    with open_store(postgres_url) as store:
        store.create(_session("s-a", "first"))
        store.create(_session("s-b", "second"))
    role = "pi_lister_" + urlsplit(postgres_url).path.rsplit("_", 1)[1][:8]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
        conn.execute(f'GRANT SELECT ON pi_sessions, pi_meta TO "{role}"')
    try:
        parts = urlsplit(postgres_url)
        lister_url = parts._replace(netloc=f"{role}@{parts.hostname or ''}").geturl()
        with open_store(lister_url) as store:
            infos = store.list(with_text=False)
            assert sorted(i["firstMessage"] for i in infos) == ["first", "second"]
            assert all("allMessagesText" not in i for i in infos)
            with pytest.raises(StoreError, match="permission denied"):
                store.list(with_text=True)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')


def test_connections_the_server_dropped_are_replaced(postgres_url: str) -> None:
    """A server restart or failover ends pooled connections; the next
    operation gets a fresh one instead of an error."""
    with open_store(postgres_url) as store:
        assert isinstance(store, PostgresStore)
        store.create(_session("before"))
        dropped = _backend_pid(store)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            pids = [r[0] for r in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )]
            assert dropped in pids
            for pid in pids:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            deadline = time.monotonic() + 30
            while admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone()[0]:
                assert time.monotonic() < deadline, "backends not terminated"
                time.sleep(0.01)
        assert store.exists("before")  # no error
        store.create(_session("after"))
        assert _backend_pid(store) != dropped
        assert sorted(i["id"] for i in store.list()) == ["after", "before"]
