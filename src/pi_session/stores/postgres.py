"""The PostgreSQL store: sessions in a PostgreSQL database shared by many
processes and machines, through psycopg 3 and a connection pool
(:mod:`psycopg_pool`). Everything else (schema, queries, transactions, the
stale-leaf rule) is :class:`pi_session.stores.sql.SQLStore`; this module
supplies the dialect: ``%s`` parameters, ``BYTEA`` lines, the session row
locked with ``SELECT ... FOR UPDATE`` at the start of every append (writers
of one session queue on that row; writers of different sessions do not wait
for each other), and an advisory lock around schema creation. Pooled
connections are checked before use (one empty round trip), so one the
server dropped (restart, failover) is replaced instead of failing.

Credentials come from the URL (``postgresql://user:password@host:port/db``,
any libpq URL or ``key=value`` conninfo) or from libpq's environment
(``PGHOST``, ``PGPORT``, ``PGUSER``, ``PGPASSWORD``, ``PGDATABASE``,
``~/.pgpass``...): ``postgresql://`` alone uses the environment. They are
never shown: :attr:`PostgresStore.url` and every message carry the URL with
its password masked (:func:`pi_session.stores.base.mask_url`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from .base import KEYWORD_PASSWORD, QUERY_PASSWORD, URL_PASSWORD, SessionNotFoundError, StoreError, mask_url
from .sql import SCHEMA_VERSION, SQLStore

__all__ = ["PostgresStore"]

# pg_advisory_xact_lock key for schema creation: processes that create the
# schema at once wait for each other (CREATE ... IF NOT EXISTS alone races).
_SCHEMA_LOCK_KEY = 0x70695F73  # "pi_s"

# pools a forked child inherited: kept referenced, never closed (closing
# them would end the parent's connections; see PostgresStore._pool_for_process)
_INHERITED: list[ConnectionPool[Any]] = []


def _secrets(url: str) -> tuple[str, ...]:
    """The password(s) a URL or conninfo string holds, in every form an
    error message may quote them: as libpq reads it, and as written in the
    text (libpq quotes a password it cannot parse, e.g. one with spaces or
    a bad percent escape, and then ``conninfo_to_dict`` fails too)."""
    found: list[str] = []
    try:
        password = psycopg.conninfo.conninfo_to_dict(url).get("password")
        if isinstance(password, str):
            found.append(password)
    except psycopg.Error:
        pass
    for match in URL_PASSWORD.finditer(url):
        found.append(match["password"])
    for match in QUERY_PASSWORD.finditer(url):
        found.append(match["value"])
    for match in KEYWORD_PASSWORD.finditer(url):
        value = match["value"]
        found.append(value)
        if value.startswith("'"):
            found.append(re.sub(r"\\(.)", r"\1", value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:]))
    for raw in list(found):
        found.append(unquote(raw))
        found.append(" ".join(raw.split()))
    # longest first, so a password is masked whole before any part of it
    return tuple(sorted({s for s in found if s}, key=len, reverse=True))


def _misread(url: str) -> str | None:
    """Why libpq would not read the password of a ``scheme://user:password@``
    URL as written, or None. libpq ends the user info at the *first* ``@``
    and the authority at the first ``/``: a raw ``@`` in the password makes
    the rest of it the host name (looked up in DNS), a raw ``/`` makes it the
    port and database name."""
    if "://" not in url or URL_PASSWORD.match(url) is None:
        return None
    authority = url.split("://", 1)[1].split("/", 1)[0]
    if authority.count("@") > 1:
        return "a raw '@' (write it %40)"
    if "@" not in authority:
        return "a raw '/' (write it %2F)"
    return None


def _one_line(exc: BaseException, secrets: tuple[str, ...]) -> str:
    """An error's message on one line, with the password(s) masked."""
    text = str(exc)
    for secret in secrets:
        text = text.replace(secret, "***")
    text = " ".join(text.split()) or type(exc).__name__
    for secret in secrets:
        text = text.replace(secret, "***")
    return mask_url(text)


class PostgresStore(SQLStore):
    """Sessions in a PostgreSQL database (tables ``pi_sessions``,
    ``pi_records``, ``pi_meta``, created when missing).

    Args:
        url: a ``postgresql://`` (or ``postgres://``) URL or a libpq
            conninfo string; parts it leaves out come from libpq's
            environment variables.
        max_connections: the pool's size (connections this process opens
            at most; default 4). One is opened at start.
        connect_timeout: seconds to wait for the server when connecting
            (default 10).
        timeout: seconds an operation waits for a free pool connection
            before giving up (default 30).

    Raises:
        StoreError: the server cannot be reached, refuses the login, or the
            database holds another schema version (the message shows the
            URL with its password masked); a URL whose password holds a raw
            ``@`` or ``/`` (libpq would read part of it as the host or the
            database: percent-encode them) is refused before connecting.
    """

    placeholder = "%s"
    lock_clause = " FOR UPDATE"
    blob_type = "BYTEA"
    real_type = "DOUBLE PRECISION"
    integrity_errors = (pg_errors.UniqueViolation,)
    schema_lock_sql = f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK_KEY})"
    text_unsafe = re.compile("[\x00\ud800-\udfff]")  # TEXT holds no NUL
    dialect = "postgresql"
    contains_sql = "position(? in {column}) > 0"

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = 4,
        connect_timeout: float = 10.0,
        timeout: float = 30.0,
    ) -> None:
        self.url = mask_url(url)
        self._conninfo = url
        self._secret = _secrets(url)
        self.max_connections = max(1, max_connections)
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self._pool: ConnectionPool[Any] | None = None
        misread = _misread(url)
        if misread is not None:
            raise StoreError(f"{self.url}: the password holds {misread}: libpq would read part of it as the host or database")
        self._pid = os.getpid()
        self._probe: psycopg.Connection[Any] | None = None
        # One direct connection first: a wrong password or host fails at
        # once with libpq's own message (a pool would retry until its
        # timeout); it also creates the schema.
        try:
            conn = psycopg.connect(url, connect_timeout=max(1, round(connect_timeout)))
        except psycopg.Error as exc:
            raise StoreError(f"{self.url}: cannot connect: {_one_line(exc, self._secret)}") from None
        try:
            self._probe = conn
            self._ensure_schema()
        finally:
            self._probe = None
            conn.close()
        self._pool = self._new_pool()

    def _ensure_schema(self) -> None:
        """Create the schema unless it is there already (a read first: the
        ``CREATE INDEX IF NOT EXISTS`` of the shared layer locks the tables
        even when the index exists, and would deadlock with writers
        appending at that moment). DDL is transactional in PostgreSQL, so
        a ``pi_meta`` with our version means the whole schema exists."""
        with self._transaction(write=False) as cur:
            exists = cur.execute("SELECT to_regclass('pi_meta') IS NOT NULL").fetchone()[0]
            version = cur.execute("SELECT value FROM pi_meta WHERE key = %s", ("schema_version",)).fetchone() if exists else None
        if version is not None and version[0] == str(SCHEMA_VERSION):
            return
        super()._ensure_schema()
        self._prefer_lz4()

    def _prefer_lz4(self) -> None:
        """Compress large lines with lz4 instead of pglz where the server
        has it (PostgreSQL 14+ built with lz4): the same size on disk, and
        reading a large session back is faster. Best effort, once, when the
        schema is created."""
        try:
            with self._transaction(write=True) as cur:
                if int(cur.execute("SHOW server_version_num").fetchone()[0]) < 140000:
                    return
                row = cur.execute(
                    "SELECT attcompression FROM pg_attribute WHERE attrelid = 'pi_records'::regclass AND attname = 'line'"
                ).fetchone()
                if row is not None and row[0] != "l":
                    cur.execute("ALTER TABLE pi_records ALTER COLUMN line SET COMPRESSION lz4")
        except StoreError:
            pass  # a server without lz4 keeps its default

    def read_lines(self, session_id: str) -> Iterator[bytes]:
        """See :meth:`SQLStore.read_lines`: the same query, read in the
        primary key's order. Left to itself the planner, which has no
        statistics for a freshly imported session or sees one session
        holding most rows, reads the rows in any order and sorts them
        (spilling a large session to disk), about twice as slow; planner
        settings local to this transaction forbid that."""
        with self._transaction(write=False) as cur:
            cur.execute(
                "SELECT set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true), "
                "set_config('enable_bitmapscan', 'off', true)"
            )
            rows = cur.execute("SELECT line FROM pi_records WHERE session_id = %s ORDER BY seq", (session_id,)).fetchall()
        if not rows:
            raise SessionNotFoundError(f"{self.url}: no session {session_id}")
        return iter([row[0] for row in rows])

    def _new_pool(self) -> ConnectionPool[Any]:
        pool: ConnectionPool[Any] = ConnectionPool(
            self._conninfo,
            kwargs={"connect_timeout": max(1, round(self.connect_timeout))},
            min_size=1,
            max_size=self.max_connections,
            timeout=self.timeout,
            # a connection the server dropped (restart, failover, idle
            # timeout) is replaced before use, not reported as an error
            check=ConnectionPool.check_connection,
            num_workers=1,
            open=False,
            name="pi-session",
        )
        pool.open(wait=False)
        return pool

    def _pool_for_process(self) -> ConnectionPool[Any]:
        """This process's pool: a forked child gets a new one (a connection
        is never shared across ``fork``)."""
        if self._pool is None:
            raise StoreError(f"{self.url}: the store is closed")
        if self._pid != os.getpid():
            _INHERITED.append(self._pool)
            self._pid = os.getpid()
            self._pool = self._new_pool()
        return self._pool

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection in a transaction: committed when the block ends,
        rolled back when it raises (the pool's, or the start-up one)."""
        if self._probe is not None:  # closed by __init__
            try:
                yield self._probe
            except BaseException:
                self._probe.rollback()
                raise
            self._probe.commit()
            return
        with self._pool_for_process().connection() as conn:
            yield conn

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Any]:
        """A cursor in one transaction (see :class:`SQLStore`). Rows come in
        binary form (``BYTEA`` lines as they are, no hex decoding). Writers
        lock the session row (:attr:`lock_clause`); readers see a snapshot
        per statement (READ COMMITTED). psycopg errors become
        :class:`StoreError` (password masked), except a unique violation,
        which :meth:`SQLStore.create` turns into ``SessionExistsError``."""
        try:
            with self._connection() as conn, conn.cursor(binary=True) as cur:
                yield cur
        except pg_errors.UniqueViolation:
            raise
        except PoolTimeout as exc:
            raise StoreError(f"{self.url}: no database connection within {self.timeout:g} s: {_one_line(exc, self._secret)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"{self.url}: {_one_line(exc, self._secret)}") from None

    def close(self) -> None:
        """Close this process's pool (its connections). The store is
        unusable afterwards."""
        pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.close()

    def __del__(self, _getpid: Callable[[], int] = os.getpid, _thread: type[threading.Thread] = threading.Thread) -> None:
        # A store dropped without close() (e.g. a SessionManager given a URL):
        # close its pool here, in the thread that drops the store. Left to
        # itself, the pool would be collected later in one of its own
        # threads, which cannot join itself (psycopg_pool warns). Module
        # globals may be gone at interpreter exit: what is needed is bound.
        pool = getattr(self, "_pool", None)
        if pool is None or getattr(self, "_pid", None) != _getpid():
            return
        self._pool = None
        try:
            pool.close(timeout=5.0)
        except RuntimeError:  # dropped in one of the pool's threads
            try:
                _thread(target=pool.close, daemon=True).start()
            except RuntimeError:  # interpreter shutdown: the process ends anyway
                pass
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass
