"""The SQLite store: one database file, stdlib :mod:`sqlite3`, WAL journal
(readers never wait for the writer), ``synchronous=FULL`` (a committed
append survives a power loss), a busy timeout for writers waiting on each
other. Each thread of each process has its own connection (a connection
is never used across ``fork``). Writers are serialised by ``BEGIN
IMMEDIATE`` (SQLite has no row locks). Everything else is
:class:`pi_session.stores.sql.SQLStore`."""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..storage import ensure_dir
from .base import StoreError
from .sql import SQLStore

__all__ = ["SQLiteStore"]


class SQLiteStore(SQLStore):
    """Sessions in one SQLite file.

    Args:
        path: the database file (created, mode 0600, in a directory created
            0700, when missing).
        busy_timeout: seconds a writer waits for another's transaction
            before giving up (default 60).

    A database that cannot be written (a read-only file system, or no
    write permission in the file's or directory's mode) is opened
    read-only: reading, listing and exporting work, every write raises
    :class:`StoreError`.

    Raises:
        StoreError: the file cannot be opened or is not a database.
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
        self.read_only = False
        try:
            if not self.path.exists():
                ensure_dir(self.path.parent)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
                os.close(fd)
            self.read_only = not _writable(self.path) or not _writable(self.path.parent)
            if self.read_only:
                self._check_schema()
            else:
                self._ensure_schema()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.url}: cannot open the database: {exc}") from None

    def _check_schema(self) -> None:
        """A read-only database: the schema must be there already (nothing
        can be created)."""
        with self._transaction(write=False) as cur:
            try:
                row = cur.execute("SELECT value FROM pi_meta WHERE key = 'schema_version'").fetchone()
            except sqlite3.OperationalError:
                row = None
        if row is None:
            raise StoreError(f"{self.url}: read-only, and not a pi-session database (no pi_meta table)")

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection (a new one after a fork)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        if self.read_only:
            # read-only media or permissions: never write, not even the WAL
            # switch; immutable when the directory cannot hold the -shm file
            wal = Path(f"{self.path}-wal")
            pending_wal = wal.exists() and wal.stat().st_size > 0  # immutable would not see it
            immutable = "&immutable=1" if not _writable(self.path.parent) and not pending_wal else ""
            uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=ro{immutable}"
            conn = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=True)
        else:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=True)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        if not self.read_only:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Any]:
        """A cursor in ``BEGIN IMMEDIATE`` (write: takes the database's write
        lock at once, so a read-then-write transaction cannot deadlock) or
        ``BEGIN`` (a read snapshot); commit at the end, rollback on error."""
        if write and self.read_only:
            raise StoreError(f"{self.url}: the database is read-only (no write permission, or a read-only file system)")
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.url}: {exc}") from None
        cur = conn.cursor()
        try:
            yield cur
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise StoreError(f"{self.url}: {exc}") from exc
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise StoreError(f"{self.url}: {exc}") from exc
        finally:
            cur.close()

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local = threading.local()


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
