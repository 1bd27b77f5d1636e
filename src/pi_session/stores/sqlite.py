"""The SQLite store: one database file, stdlib :mod:`sqlite3`, WAL journal
(readers never wait for the writer), ``synchronous=FULL`` (a committed
append survives a power loss), a busy timeout for writers waiting on each
other. Each thread of each process has its own connection (a connection
is never used across ``fork``). Writers are serialised by ``BEGIN
IMMEDIATE`` (SQLite has no row locks). Everything else is
:class:`pi_session.stores.sql.SQLStore`."""

from __future__ import annotations

import contextlib

import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..storage import ensure_dir
from .base import StoreError, sqlite_path
from .sql import SCHEMA, SQLStore

__all__ = ["SQLiteStore", "open_sqlite_store"]


class SQLiteStore(SQLStore):
    """Sessions in one SQLite file.

    Args:
        path: the database file (created, mode 0600, in a directory created
            0700, when missing).
        busy_timeout: seconds a writer waits for another's transaction
            before giving up (default 60).

    Reading never writes: the schema is created, and the file switched to
    WAL, by the first write (an import, a new session); until then reads
    answer as an empty store. A database holding another program's tables
    (no ``pi_meta``) is refused, so nothing is ever written into it
    (tests/test_stores_attack.py, ``test_read_only_commands_never_write_*``).

    A database that cannot be written (a read-only file system, or no
    write permission in the file's or directory's mode) is opened
    read-only: reading, listing and exporting work, every write raises
    :class:`StoreError`.

    Every error of every method is a :class:`StoreError` with SQLite's own
    message (a full disk: ``database or disk is full``).

    Raises:
        StoreError: the file cannot be opened, is not a database, or is
            another program's database.
    """

    placeholder = "?"
    lock_clause = ""
    blob_type = "BLOB"
    real_type = "REAL"
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._schema_lock = threading.Lock()
        self._schema_ready = False
        self.read_only = False
        try:
            if not self.path.exists():
                ensure_dir(self.path.parent)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
                os.close(fd)
            self.read_only = not _writable(self.path) or not _writable(self.path.parent)
            kind = self._kind()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.url}: cannot open the database: {exc}") from None
        if kind == "foreign":
            raise StoreError(f"{self.url}: not a pi-session store (the database holds other tables): use another file")
        if kind == "empty" and self.read_only:
            raise StoreError(f"{self.url}: read-only, and not a pi-session database (no pi_meta table)")
        self._schema_ready = kind == "store"

    def _kind(self) -> str:
        """What the database holds, read without writing anything: ``store``
        (pi-session's ``pi_meta`` table), ``empty`` (no table: the schema is
        created by the first write) or ``foreign`` (another program's)."""
        conn = self._connection()
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master").fetchall()]
        if "pi_meta" in names:
            return "store"
        return "foreign" if names else "empty"

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork). Opening one
        writes nothing: the WAL switch is made when the schema is created."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        if self.read_only:
            # read-only media or permissions: never write; immutable when the
            # directory cannot hold the -shm file
            wal = Path(f"{self.path}-wal")
            pending_wal = wal.exists() and wal.stat().st_size > 0  # immutable would not see it
            immutable = "&immutable=1" if not _writable(self.path.parent) and not pending_wal else ""
            uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=ro{immutable}"
            conn = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=True)
        else:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=True)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        if not self.read_only:
            conn.execute("PRAGMA synchronous = FULL")
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def _create_schema(self) -> None:
        """Before the first write to an empty database: switch it to WAL
        (retried while another connection holds a lock, up to
        ``busy_timeout``: SQLite does not call its busy handler for this
        switch) and create the tables."""
        with self._schema_lock:
            if self._schema_ready:
                return
            conn = self._connection()
            deadline = time.monotonic() + self.busy_timeout
            delay = 0.001
            while True:
                try:
                    conn.execute("PRAGMA journal_mode = WAL").fetchall()
                    break
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                        raise StoreError(f"{self.url}: {exc}") from None
                    time.sleep(delay)  # back-off between tries of the switch, not a synchronisation
                    delay = min(delay * 2, 0.05)
            self._local.creating = True
            try:
                self._ensure_schema()
            finally:
                self._local.creating = False
            self._schema_ready = True

    def _empty_schema(self) -> sqlite3.Connection:
        """An in-memory database holding the empty schema: what reads of a
        database without it yet answer from (no session, nothing written)."""
        conn: sqlite3.Connection | None = getattr(self._local, "empty", None)
        if conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=True)
            for ddl in SCHEMA:
                conn.execute(ddl.format(blob=self.blob_type, real=self.real_type))
            self._local.empty = conn
        return conn

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Any]:
        """A cursor in ``BEGIN IMMEDIATE`` (write: takes the database's write
        lock at once, so a read-then-write transaction cannot deadlock) or
        ``BEGIN`` (a read snapshot); commit at the end, rollback on error.
        Every :mod:`sqlite3` error becomes a :class:`StoreError` carrying
        SQLite's own message (e.g. ``database or disk is full``), except a
        unique violation (:attr:`integrity_errors`), which the shared layer
        turns into :class:`SessionExistsError`."""
        if write and self.read_only:
            raise StoreError(f"{self.url}: the database is read-only (no write permission, or a read-only file system)")
        try:
            if not self._schema_ready and not getattr(self._local, "creating", False):
                if write:
                    self._create_schema()
                elif self._kind() == "store":
                    self._schema_ready = True
            conn = self._connection() if self._schema_ready or write else self._empty_schema()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.url}: {exc}") from None
        cur = conn.cursor()
        try:
            yield cur
        except BaseException as exc:
            _rollback(conn)
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise StoreError(f"{self.url}: {exc}") from None
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(conn)
                raise StoreError(f"{self.url}: {exc}") from None
        finally:
            cur.close()

    secure_delete_sql = "PRAGMA secure_delete = ON"

    def _after_rewrite(self) -> None:
        """Move the write-ahead log into the database and truncate it, so
        that no old page of a rewritten session stays in the ``-wal`` file
        (best effort: a reader holding an old snapshot keeps those pages
        until it ends)."""
        with contextlib.suppress(sqlite3.Error):
            self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        empty: sqlite3.Connection | None = getattr(self._local, "empty", None)
        if empty is not None:
            empty.close()
        self._local = threading.local()


def open_sqlite_store(url: str, **options: Any) -> SQLiteStore:
    """The opener :mod:`pi_session.stores.registry` has for ``sqlite://``
    URLs: the store of the file :func:`~pi_session.stores.base.sqlite_path`
    names.

    Raises:
        StoreError: the URL names no file, or the file cannot be opened.
    """
    return SQLiteStore(sqlite_path(url), **options)


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is left of a failed transaction: SQLite ends some by
    itself (a full disk, an I/O error), and a ROLLBACK then would only fail
    and hide the real error."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _writable(path: Path) -> bool:
    """Whether ``path`` may be written: the file system allows it for this
    user (a read-only mount says no even to root) and its mode gives some
    write permission (``chmod a-w`` is respected even by root, as session
    files are)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)
