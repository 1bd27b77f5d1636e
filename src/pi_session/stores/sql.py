"""The SQL layer shared by the database stores (SQLite, PostgreSQL): the
schema, every query, the transaction logic of create / append / delete and
the listing columns kept up to date on each append. A backend is a thin
subclass of :class:`SQLStore`.

Schema (table names prefixed ``pi_``):

- ``pi_sessions``: one row per session, the listing columns ``ls`` answers
  from (``id`` primary key, ``cwd``, ``cwd_key`` = the resolved cwd,
  ``created``, ``modified`` / ``modified_ms``, ``name``, ``parent_session``,
  ``message_count``, ``first_message``, ``last_activity``) and the append
  state (``size_bytes`` = the session's byte count, the position appends
  compare with; ``record_count``; ``last_terminated`` = whether the last
  line ends in ``\\n``; ``written_ms``; the original ``file_name``).
- ``pi_records``: one row per line: ``session_id``, ``seq`` (0 = the
  header; append order), ``byte_offset`` (where the line starts in the
  session's file), ``entry_id``, ``parent_id``, ``type``, ``timestamp``
  (from the record, when it parses and they are strings), ``damaged`` (1:
  the line does not parse as a JSON object; stored as it is), ``msg_text``
  (the text a user/assistant message adds to ``allMessagesText``) and
  ``line``: the exact bytes, ``\\n`` included.
- ``pi_meta``: ``key``/``value`` (the schema version).
- ``pi_blobs``: the payloads ``slim`` moved out of sessions, by content:
  ``hash`` (sha256 hex, primary key) and ``data`` (the exact bytes).

What a dialect (subclass) must provide:

- :meth:`SQLStore._transaction` ``(write: bool)``: a context manager
  yielding a DB-API cursor inside one transaction, committed when the block
  ends and rolled back when it raises. ``write=True`` is used by every
  transaction that writes; a dialect that has no row locks takes its
  database write lock there (SQLite: ``BEGIN IMMEDIATE``).
- :attr:`SQLStore.placeholder`: the parameter marker (``?`` for sqlite3,
  ``%s`` for psycopg); queries are written with ``?`` and translated (no
  query holds a literal ``?`` or ``%``).
- :attr:`SQLStore.lock_clause`: appended to the ``SELECT`` of the session
  row that starts an append or a delete (PostgreSQL: ``FOR UPDATE``;
  SQLite: empty, ``BEGIN IMMEDIATE`` serialises writers already).
- :attr:`SQLStore.blob_type`: the column type of raw bytes (``BLOB`` /
  ``BYTEA``); :attr:`SQLStore.real_type` for float columns.
- :attr:`SQLStore.integrity_errors`: the exception classes of a unique
  violation (a concurrent create of the same id).
- optionally :attr:`SQLStore.text_unsafe`: the characters its text columns
  cannot hold (default: lone surrogates, which are not UTF-8; PostgreSQL
  adds NUL); they become U+FFFD in the indexed and listing columns only
  (the stored line keeps the exact bytes).
- optionally :meth:`SQLStore._blob` (a fetched bytes value to ``bytes``) and
  :attr:`SQLStore.schema_lock_sql` (run first in the schema transaction, so
  that processes creating the schema at once wait for each other, e.g.
  ``SELECT pg_advisory_xact_lock(...)``).
- optionally :attr:`SQLStore.secure_delete_sql` (run before the deletes of
  :meth:`SQLHandle.replace_lines`: SQLite's ``PRAGMA secure_delete = ON``)
  and :meth:`SQLStore._after_rewrite` (after it: SQLite truncates its WAL).
- :attr:`SQLStore.dialect`: ``sqlite`` or ``postgresql``, for code that
  keeps tables of its own in the store.
- ``url``: set by the constructor (masked with :func:`mask_url`); then call
  :meth:`SQLStore._ensure_schema`.

Every query is parameterised; identifiers are constants of this module.

Code that keeps tables of its own in the store (the search index,
:mod:`pi_session.search.store_index`; this package imports nothing of it)
uses two public seams: :meth:`SQLStore.transaction`, a transaction whose
:class:`SQLExecutor` runs statements written with ``?`` markers, and
:meth:`SQLStore.add_write_hook`, a callback run inside every transaction
that writes a session (create, append, replace, delete) with what it
wrote (:class:`WriteEvent`), so the hook's rows commit or roll back with
the session's.
"""

from __future__ import annotations

import builtins
import re
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from ..core.paths import resolve_path
from ..entries.records import is_session_header
from ..storage import AppendResult, Durability, SessionFile, SessionGoneError, SessionStamp, parse_line, read_session_lines
from ..core.timestamps import iso_to_ms
from .base import SessionChangedError, SessionExistsError, SessionNotFoundError, SessionStore, StoreError
from .capabilities import StoreCapability
from .handle import LinesRead, OnGrown, SessionHandle
from ..session.info import InfoState, header_ms, info_dict, iso_or_none, modified_iso

__all__ = [
    "SQLStore",
    "SQLHandle",
    "SQLExecutor",
    "WriteEvent",
    "WriteHook",
    "SCHEMA",
    "SCHEMA_VERSION",
    "LineColumns",
    "line_columns",
]

SCHEMA_VERSION = 1

#: The tables and indexes (``{blob}``/``{real}``: the dialect's column types).
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS pi_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS pi_sessions (
        id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        cwd_key TEXT,
        created TEXT,
        header_ms BIGINT,
        modified TEXT NOT NULL,
        modified_ms BIGINT NOT NULL,
        name TEXT,
        parent_session TEXT,
        message_count INTEGER NOT NULL,
        first_message TEXT NOT NULL,
        last_activity {real},
        version INTEGER,
        file_name TEXT,
        size_bytes BIGINT NOT NULL,
        record_count INTEGER NOT NULL,
        last_terminated SMALLINT NOT NULL,
        written_ms BIGINT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS pi_sessions_modified ON pi_sessions (modified_ms, id)",
    "CREATE INDEX IF NOT EXISTS pi_sessions_cwd_modified ON pi_sessions (cwd_key, modified_ms, id)",
    """CREATE TABLE IF NOT EXISTS pi_records (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        byte_offset BIGINT NOT NULL,
        entry_id TEXT,
        parent_id TEXT,
        type TEXT,
        timestamp TEXT,
        damaged SMALLINT NOT NULL,
        msg_text TEXT,
        line {blob} NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS pi_records_offset ON pi_records (session_id, byte_offset)",
    "CREATE INDEX IF NOT EXISTS pi_records_entry ON pi_records (session_id, entry_id)",
    """CREATE TABLE IF NOT EXISTS pi_blobs (
        hash TEXT PRIMARY KEY,
        data {blob} NOT NULL
    )""",
)

_SESSION_COLUMNS = (
    "id, cwd, cwd_key, created, header_ms, modified, modified_ms, name, parent_session, message_count, "
    "first_message, last_activity, version, file_name, size_bytes, record_count, last_terminated, written_ms"
)
_INSERT_SESSION = f"INSERT INTO pi_sessions ({_SESSION_COLUMNS}) VALUES ({', '.join('?' * 18)})"
_INSERT_RECORD = (
    "INSERT INTO pi_records (session_id, seq, byte_offset, entry_id, parent_id, type, timestamp, damaged, msg_text, line) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_APPEND_STATE = (
    "SELECT size_bytes, record_count, last_terminated, name, message_count, first_message, last_activity, "
    "header_ms, written_ms FROM pi_sessions WHERE id = ?"
)
_LIST_COLUMNS = "id, cwd, name, parent_session, created, modified, message_count, first_message"


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass
class LineColumns:
    """The indexed columns of one stored line (see :func:`line_columns`)."""

    record: Any
    entry_id: str | None
    parent_id: str | None
    type: str | None
    timestamp: str | None
    damaged: bool


def line_columns(line: bytes, line_no: int = 1) -> LineColumns:
    """Parse one stored line (with or without its ``\\n``) as the reader
    parses it (:func:`pi_session.storage.parse_line`, which recovers what it
    can) and take its columns; a line that gives no JSON object is
    ``damaged`` (kept, never interpreted)."""
    raw = line[:-1] if line.endswith(b"\n") else line
    parsed = parse_line(raw, line_no)
    record = parsed.record if parsed.ok else None
    if not isinstance(record, dict):
        return LineColumns(None, None, None, None, None, True)
    return LineColumns(
        record,
        _str_or_none(record.get("id")),
        _str_or_none(record.get("parentId")),
        _str_or_none(record.get("type")),
        _str_or_none(record.get("timestamp")),
        False,
    )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SQLStore(SessionStore):
    """A store in a SQL database (see the module docstring for the schema
    and what a dialect provides). Capabilities: BLOBS (``pi_blobs``), MARKS,
    SQL (:meth:`transaction`, write hooks) and SEARCH (tables inside the
    database)."""

    capabilities = StoreCapability.BLOBS | StoreCapability.MARKS | StoreCapability.SQL | StoreCapability.SEARCH

    placeholder: str = "?"
    lock_clause: str = ""
    blob_type: str = "BLOB"
    real_type: str = "REAL"
    integrity_errors: tuple[type[BaseException], ...] = ()
    schema_lock_sql: str | None = None
    secure_delete_sql: str | None = None
    text_unsafe: re.Pattern[str] = re.compile("[\ud800-\udfff]")
    contains_sql: str = "instr({column}, ?) > 0"
    """A condition: the bytes column ``{column}`` holds the parameter's bytes."""
    dialect: str = "sqlite"
    """The SQL dialect, for code that keeps tables of its own in the store
    (a write hook): ``sqlite`` or ``postgresql``."""
    _write_hooks: tuple[WriteHook, ...] = ()

    # ------------------------------------------------------------------
    # dialect hooks

    @abstractmethod
    def _transaction(self, *, write: bool) -> AbstractContextManager[Any]:
        """A cursor inside one transaction (see the module docstring)."""

    def _after_rewrite(self) -> None:
        """After :meth:`SQLHandle.replace_lines` committed; nothing by default."""

    def _blob(self, value: Any) -> bytes:
        """A fetched raw-bytes value as ``bytes``."""
        return value if isinstance(value, bytes) else bytes(value)

    # ------------------------------------------------------------------
    # helpers

    def _sql(self, query: str) -> str:
        return query if self.placeholder == "?" else query.replace("?", self.placeholder)

    def _params(self, params: Sequence[Any]) -> tuple[Any, ...]:
        """``params`` with :attr:`text_unsafe` characters of string values
        replaced by U+FFFD (derived columns; lines are bytes)."""
        bad = self.text_unsafe
        return tuple(bad.sub("\ufffd", v) if isinstance(v, str) and bad.search(v) else v for v in params)

    def _exec(self, cur: Any, query: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self._sql(query), self._params(params))
        return cur

    def _executemany(self, cur: Any, query: str, rows: Sequence[Sequence[Any]]) -> None:
        cur.executemany(self._sql(query), [self._params(row) for row in rows])

    def _ensure_schema(self) -> None:
        """Create the tables and indexes when missing (idempotent; safe
        when several processes do it at once)."""
        with self._transaction(write=True) as cur:
            if self.schema_lock_sql:
                self._exec(cur, self.schema_lock_sql)
            for ddl in SCHEMA:
                self._exec(cur, ddl.format(blob=self.blob_type, real=self.real_type))
            self._exec(
                cur,
                "INSERT INTO pi_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                ("schema_version", str(SCHEMA_VERSION)),
            )
            row = self._exec(cur, "SELECT value FROM pi_meta WHERE key = ?", ("schema_version",)).fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            raise StoreError(f"{self.url}: database schema version {row[0] if row else None}, expected {SCHEMA_VERSION}")

    def locator(self, session_id: str) -> str:
        return f"{self.url}#{session_id}"

    # ------------------------------------------------------------------
    # handles

    def handle(self, session_id: str) -> SQLHandle:
        """The :class:`SQLHandle` of a session (checked when used)."""
        return SQLHandle(self, session_id)

    def new_handle(self, header: dict[str, Any], *, file_name: str | None = None) -> SQLHandle:
        """See :meth:`SessionStore.new_handle` (an id the store holds is
        refused when the session is created, in its transaction)."""
        return SQLHandle(self, str(header["id"]), file_name=file_name)

    @staticmethod
    def _record_row(session_id: str, seq: int, offset: int, line: bytes, col: LineColumns, text: str | None) -> tuple[Any, ...]:
        return (session_id, seq, offset, col.entry_id, col.parent_id, col.type, col.timestamp, int(col.damaged), text, line)

    # ------------------------------------------------------------------
    # the public executor and the write hooks

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[SQLExecutor]:
        """One transaction of the store, for code keeping tables of its own
        in it (the search index): an :class:`SQLExecutor` whose statements
        are written with ``?`` markers; committed when the block ends,
        rolled back when it raises. ``write``: the transaction writes (the
        dialect's write lock is taken).

        Raises:
            StoreError: the database cannot be read or written.
        """
        with self._transaction(write=write) as cur:
            yield SQLExecutor(self, cur)

    def add_write_hook(self, hook: WriteHook) -> None:
        """Call ``hook(executor, event)`` inside every transaction that
        writes a session's lines (create, append, replace, delete), after
        the store's own rows are written: what the hook writes commits or
        rolls back with them, and what it raises aborts the write. Adding
        the same hook twice keeps one."""
        if hook not in self._write_hooks:
            self._write_hooks = (*self._write_hooks, hook)

    def remove_write_hook(self, hook: WriteHook) -> None:
        """Stop calling ``hook`` (see :meth:`add_write_hook`)."""
        self._write_hooks = tuple(h for h in self._write_hooks if h != hook)

    def _run_hooks(self, cur: Any, event: WriteEvent) -> None:
        if self._write_hooks:
            executor = SQLExecutor(self, cur)
            for hook in self._write_hooks:
                hook(executor, event)

    def delete(self, session_id: str, *, expected_size: int | None = None) -> bool:
        """See :meth:`SessionStore.delete` (one transaction, the session's
        row locked first)."""
        with self._transaction(write=True) as cur:
            row = self._exec(cur, "SELECT id, size_bytes FROM pi_sessions WHERE id = ?" + self.lock_clause, (session_id,)).fetchone()
            if row is None:
                return False
            if expected_size is not None and int(row[1]) != expected_size:
                raise SessionChangedError(
                    f"{self.locator(session_id)}: the session changed since it was read ({row[1]} bytes, not {expected_size}); not deleted"
                )
            self._exec(cur, "DELETE FROM pi_records WHERE session_id = ?", (session_id,))
            self._exec(cur, "DELETE FROM pi_sessions WHERE id = ?", (session_id,))
            self._run_hooks(cur, WriteEvent("delete", session_id, None, []))
        return True

    # ------------------------------------------------------------------
    # reading

    def exists(self, session_id: str) -> bool:
        with self._transaction(write=False) as cur:
            return self._exec(cur, "SELECT 1 FROM pi_sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def session_marks(self, session_ids: Iterable[str]) -> dict[str, tuple[int, ...]]:
        """See :meth:`SessionStore.session_marks`: ``(size_bytes,
        record_count, written_ms)`` of each session row (every append and
        rewrite sets ``written_ms``), in one query per 500 ids."""
        ids = list(dict.fromkeys(session_ids))
        marks: dict[str, tuple[int, ...]] = {}
        with self._transaction(write=False) as cur:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                query = f"SELECT id, size_bytes, record_count, written_ms FROM pi_sessions WHERE id IN ({', '.join('?' * len(chunk))})"
                for row in self._exec(cur, query, chunk).fetchall():
                    marks[str(row[0])] = (int(row[1]), int(row[2]), int(row[3]))
        return marks

    def read_lines(self, session_id: str) -> Iterator[bytes]:
        """See :meth:`SessionStore.read_lines` (one query: a consistent
        snapshot)."""
        with self._transaction(write=False) as cur:
            rows = self._exec(cur, "SELECT line FROM pi_records WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        if not rows:
            raise SessionNotFoundError(f"{self.url}: no session {session_id}")
        blob = self._blob
        return iter([blob(r[0]) for r in rows])

    def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Store content-addressed blobs (``{sha256 hex: bytes}``) in one
        transaction; a hash already stored is kept (``slim``)."""
        if not blobs:
            return
        with self._transaction(write=True) as cur:
            self._executemany(cur, "INSERT INTO pi_blobs (hash, data) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING", list(blobs.items()))

    def drop_blobs(self, digests: Iterable[str]) -> builtins.list[str]:
        """Delete the blobs of ``digests`` no record's line names any more,
        in one transaction; returns those deleted (see
        :meth:`SessionStore.drop_blobs`)."""
        dropped: list[str] = []
        with self._transaction(write=True) as cur:
            for digest in dict.fromkeys(digests):
                named = self._exec(
                    cur, f"SELECT 1 FROM pi_records WHERE {self.contains_sql.format(column='line')} LIMIT 1", (digest.encode(),)
                ).fetchone()
                if named is None and self._exec(cur, "DELETE FROM pi_blobs WHERE hash = ?", (digest,)).rowcount:
                    dropped.append(digest)
        return dropped

    def get_blob(self, digest: str) -> bytes | None:
        """The bytes of blob ``digest`` (sha256 hex), or None (``restore``)."""
        with self._transaction(write=False) as cur:
            row = self._exec(cur, "SELECT data FROM pi_blobs WHERE hash = ?", (digest,)).fetchone()
        return None if row is None else self._blob(row[0])

    def file_name(self, session_id: str) -> str | None:
        """The file name the session was imported from, or None."""
        with self._transaction(write=False) as cur:
            row = self._exec(cur, "SELECT file_name FROM pi_sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionNotFoundError(f"{self.url}: no session {session_id}")
        return row[0]  # type: ignore[no-any-return,unused-ignore]

    def list(self, *, cwd: str | None = None, with_text: bool = True, on_progress: Any = None) -> list[dict[str, Any]]:
        """See :meth:`SessionStore.list`: one query on ``pi_sessions``
        (``cwd_key``/``modified_ms`` indexed), plus one over the messages'
        text when ``with_text``."""
        query = f"SELECT {_LIST_COLUMNS} FROM pi_sessions"
        params: tuple[Any, ...] = ()
        if cwd is not None:
            query += " WHERE cwd_key = ?"
            params = (cwd,)
        query += " ORDER BY modified_ms DESC, id DESC"
        with self._transaction(write=False) as cur:
            rows = self._exec(cur, query, params).fetchall()
            texts: dict[str, builtins.list[str]] = {}
            if with_text and rows:
                text_query = "SELECT r.session_id, r.msg_text FROM pi_records r"
                if cwd is not None:
                    text_query += " JOIN pi_sessions s ON s.id = r.session_id WHERE s.cwd_key = ? AND r.msg_text IS NOT NULL"
                else:
                    text_query += " WHERE r.msg_text IS NOT NULL"
                text_query += " ORDER BY r.session_id, r.seq"
                for sid, text in self._exec(cur, text_query, params).fetchall():
                    texts.setdefault(sid, []).append(text)
        infos = []
        for sid, scwd, name, parent, created, modified, message_count, first_message in rows:
            info: dict[str, Any] = {"path": self.locator(sid), "id": sid, "cwd": scwd}
            if name is not None:
                info["name"] = name
            if parent is not None:
                info["parentSessionPath"] = parent
            info["created"] = created
            info["modified"] = modified
            info["messageCount"] = message_count
            info["firstMessage"] = first_message or "(no messages)"
            if with_text:
                info["allMessagesText"] = " ".join(texts.get(sid, ()))
            infos.append(info)
        return infos

    def find(self, prefix: str, *, limit: int = 20) -> builtins.list[str]:
        """See :meth:`SessionStore.find`."""
        with self._transaction(write=False) as cur:
            rows = self._exec(
                cur,
                "SELECT id FROM pi_sessions WHERE substr(id, 1, length(?)) = ? ORDER BY id LIMIT ?",
                (prefix, prefix, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def session_info(self, session_id: str) -> dict[str, Any]:
        """One session's listing info (with ``allMessagesText``), rebuilt
        from its header and lines (for checks; ``list`` answers from the
        columns)."""
        lines = list(self.read_lines(session_id))
        state = InfoState()
        header: dict[str, Any] | None = None
        texts = []
        for n, line in enumerate(lines, 1):
            col = line_columns(line, n)
            if header is None:
                if col.record is not None:
                    header = col.record
                continue
            text = state.add(col.record)
            if text:
                texts.append(text)
        with self._transaction(write=False) as cur:
            row = self._exec(cur, "SELECT written_ms FROM pi_sessions WHERE id = ?", (session_id,)).fetchone()
        assert header is not None
        return info_dict(self.locator(session_id), header, state, row[0] if row else 0, " ".join(texts))



WriteKind = Literal["create", "append", "replace", "delete"]


@dataclass(frozen=True)
class WriteEvent:
    """What a write transaction did to one session, for the write hooks
    (:meth:`SQLStore.add_write_hook`).

    Attributes:
        kind: ``create``, ``append``, ``replace`` (every line replaced:
            ``scrub --mode rewrite``) or ``delete``.
        session_id: the session's id.
        header: the session header (create, replace), else None.
        records: ``(seq, record)`` of each line written after the header
            (``seq``: the line's 0-based number; ``record``: the parsed
            JSON object, None for a damaged line), in order.
        header_seq: the header's line number (create, replace).
    """

    kind: WriteKind
    session_id: str
    header: Mapping[str, Any] | None
    records: builtins.list[tuple[int, Any]]
    header_seq: int = 0


class SQLExecutor:
    """The statements of one transaction of a :class:`SQLStore`
    (:meth:`SQLStore.transaction`, and what write hooks are given).

    Attributes:
        store: the store.
        dialect: :attr:`SQLStore.dialect`.
        cursor: the DB-API cursor (its ``fetchone``/``fetchall`` read the
            last statement's rows).
    """

    def __init__(self, store: SQLStore, cursor: Any) -> None:
        self.store = store
        self.dialect = store.dialect
        self.cursor = cursor

    def execute(self, query: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement written with ``?`` parameter markers (the
        dialect's are put in; string parameters lose what the database's
        text cannot hold, :attr:`SQLStore.text_unsafe`); returns the cursor."""
        return self.store._exec(self.cursor, query, params)

    def executemany(self, query: str, rows: Sequence[Sequence[Any]]) -> None:
        """:meth:`execute` for each of ``rows``."""
        self.store._executemany(self.cursor, query, rows)

    def blob(self, value: Any) -> bytes:
        """A fetched raw-bytes value (a ``line``) as ``bytes``."""
        return self.store._blob(value)

    def lock_schema(self) -> None:
        """Make processes changing the schema at once wait for each other
        until this transaction ends (PostgreSQL: an advisory lock; SQLite's
        write lock does it already)."""
        if self.store.schema_lock_sql:
            self.store._exec(self.cursor, self.store.schema_lock_sql)


WriteHook = Callable[[SQLExecutor, WriteEvent], None]
"""``hook(executor, event)``: called inside a write transaction (see
:meth:`SQLStore.add_write_hook`)."""

class SQLHandle(SessionHandle):
    """One session of a :class:`SQLStore`: create and append are single
    transactions (the append locks the session row first, so the stale-leaf
    check and the insert see the same state).

    Args:
        store: the store.
        session_id: the session's id.
        file_name: the file name to record at create (import).
    """

    def __init__(self, store: SQLStore, session_id: str, *, file_name: str | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self.file_name = file_name
        self.location = store.locator(session_id)

    def exists(self) -> bool:
        return self.store.exists(self.session_id)

    def read(self, *, migrate: bool = True, lazy: bool | Literal["always"] = False) -> SessionFile:
        return read_session_lines(self.store.read_lines(self.session_id), name=self.location, migrate=migrate)

    def size(self) -> int | None:
        store = self.store
        with store._transaction(write=False) as cur:
            row = store._exec(cur, "SELECT size_bytes FROM pi_sessions WHERE id = ?", (self.session_id,)).fetchone()
        return int(row[0]) if row is not None else None

    def stamp(self) -> SessionStamp | None:
        """See :meth:`SessionHandle.stamp`: ``(size_bytes, record_count,
        written_ms)`` of the session's row (every append and rewrite sets
        ``written_ms``)."""
        store = self.store
        with store._transaction(write=False) as cur:
            row = store._exec(
                cur, "SELECT size_bytes, record_count, written_ms FROM pi_sessions WHERE id = ?", (self.session_id,)
            ).fetchone()
        return (int(row[0]), int(row[1]), int(row[2])) if row is not None else None

    def read_lines_from(self, offset: int) -> LinesRead:
        """See :meth:`SessionHandle.read_lines_from`: one transaction
        reading the session row and the lines whose ``byte_offset`` is at
        least ``offset`` (an imported torn last line is left out).

        Raises:
            SessionNotFoundError: no such session.
        """
        store = self.store
        with store._transaction(write=False) as cur:
            row = store._exec(
                cur,
                "SELECT size_bytes, record_count, written_ms, last_terminated FROM pi_sessions WHERE id = ?",
                (self.session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"{store.url}: no session {self.session_id}")
            rows = store._exec(
                cur,
                "SELECT byte_offset, line FROM pi_records WHERE session_id = ? AND byte_offset >= ? ORDER BY seq",
                (self.session_id, max(offset, 0)),
            ).fetchall()
            end = int(row[0])
            if not row[3]:
                last = store._exec(
                    cur, "SELECT byte_offset FROM pi_records WHERE session_id = ? AND seq = ?", (self.session_id, int(row[1]) - 1)
                ).fetchone()
                end = int(last[0]) if last is not None else 0
        stamp = (int(row[0]), int(row[1]), int(row[2]))
        lines = [store._blob(line) for _offset, line in rows]
        if lines and not lines[-1].endswith(b"\n"):
            lines.pop()
        if not lines:
            start = min(max(offset, 0), end)
            return LinesRead([], start, start, stamp)
        return LinesRead(lines, int(rows[0][0]), int(rows[0][0]) + sum(map(len, lines)), stamp)

    def _rows(self, lines: Sequence[bytes], kind: WriteKind) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], WriteEvent]:
        """The ``pi_sessions`` and ``pi_records`` rows of a session holding
        ``lines``, and the write hooks' event of writing them (sets
        :attr:`session_id`, :attr:`location`). Raises StoreError: no
        session header."""
        store = self.store
        columns = [line_columns(line, n) for n, line in enumerate(lines, 1)]
        first = next((i for i, c in enumerate(columns) if not c.damaged), None)
        header = columns[first].record if first is not None else None
        if not is_session_header(header):
            raise StoreError(f"{store.url}: cannot create a session: the first record is not a session header with a string id")
        session_id: str = header["id"]
        self.session_id = session_id
        self.location = store.locator(session_id)
        state = InfoState()
        texts: list[str | None] = []
        for i, col in enumerate(columns):
            texts.append(state.add(col.record) if first is not None and i > first else None)
        written = _now_ms()
        h_ms = header_ms(header)
        modified = modified_iso(state, h_ms, written)
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
        version = header.get("version")
        size = sum(len(line) for line in lines)
        session_row = (
            session_id,
            cwd,
            resolve_path(cwd) if cwd else None,
            iso_or_none(iso_to_ms(header.get("timestamp"))),
            h_ms,
            modified,
            iso_to_ms(modified) or 0,
            state.name,
            _str_or_none(header.get("parentSession")),
            state.message_count,
            state.first_message,
            state.last_activity,
            version if isinstance(version, int) and not isinstance(version, bool) else None,
            self.file_name,
            size,
            len(lines),
            1 if not lines or lines[-1].endswith(b"\n") else 0,
            written,
        )
        rows = []
        offset = 0
        for seq, (line, col, text) in enumerate(zip(lines, columns, texts)):
            rows.append(store._record_row(session_id, seq, offset, line, col, text))
            offset += len(line)
        assert first is not None  # a header was found
        records = [(seq, col.record) for seq, col in enumerate(columns[first + 1 :], first + 1)]
        return session_row, rows, WriteEvent(kind, session_id, header, records, first)

    def create(self, lines: Sequence[bytes], *, durability: Durability = Durability.ENTRY) -> int:
        """See :meth:`SessionHandle.create`: one transaction inserting the
        session row and every line. Lines before the header that hold no
        record (blank, damaged) are kept as damaged lines.

        Raises:
            SessionExistsError: the store holds a session with that id.
            StoreError: no session header.
        """
        store = self.store
        session_row, rows, event = self._rows(lines, "create")
        session_id = session_row[0]
        try:
            with store._transaction(write=True) as cur:
                store._exec(cur, _INSERT_SESSION, session_row)
                store._executemany(cur, _INSERT_RECORD, rows)
                store._run_hooks(cur, event)
        except store.integrity_errors:
            raise SessionExistsError(f"{store.url}: a session with id {session_id} exists already") from None
        return int(session_row[14])

    def replace_lines(self, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        """Replace the session's lines ``old`` (as read) with ``new`` (the
        same session id) in one transaction that locks the session row and
        checks it still holds ``old`` (size, line count); listing columns
        are recomputed, the file name kept (``scrub --mode rewrite``).

        Raises:
            SessionNotFoundError: no such session.
            StoreError: the session changed since ``old`` was read, or
                ``new`` names another session (nothing was changed).
        """
        store = self.store
        session_id = self.session_id
        with store._transaction(write=True) as cur:
            row = store._exec(
                cur, "SELECT size_bytes, record_count, file_name FROM pi_sessions WHERE id = ?" + store.lock_clause, (session_id,)
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"{store.url}: no session {session_id}")
            if int(row[0]) != sum(map(len, old)) or int(row[1]) != len(old):
                raise StoreError(f"{self.location}: the session changed while it was being rewritten; nothing was changed")
            self.file_name = row[2]
            session_row, rows, event = self._rows(new, "replace")
            if self.session_id != session_id:
                self.session_id, self.location = session_id, store.locator(session_id)
                raise StoreError(f"{self.location}: the rewritten lines name another session; nothing was changed")
            if store.secure_delete_sql:
                store._exec(cur, store.secure_delete_sql)
            store._exec(cur, "DELETE FROM pi_records WHERE session_id = ?", (session_id,))
            store._exec(cur, "DELETE FROM pi_sessions WHERE id = ?", (session_id,))
            store._exec(cur, _INSERT_SESSION, session_row)
            store._executemany(cur, _INSERT_RECORD, rows)
            store._run_hooks(cur, event)
        store._after_rewrite()

    def existing(self) -> SQLHandle | None:
        """After :meth:`create` refused: this handle, when the store holds
        the session (another writer's create committed first)."""
        return self if self.store.exists(self.session_id) else None

    def append(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
        session_id: str | None = None,
    ) -> AppendResult:
        """See :meth:`SessionHandle.append`: one transaction that locks the
        session row (:attr:`SQLStore.lock_clause`, or the dialect's write
        lock), hands other writers' lines to ``on_grown``, inserts the
        lines and updates the listing columns. An unterminated last line
        (an imported torn line) gets its newline first, as the file store
        repairs a torn tail first: ``on_grown`` then sees it as a line.

        Raises:
            SessionNotFoundError: no such session (without ``session_id``).
            pi_session.storage.SessionGoneError: no such session any more
                (with ``session_id``: it was deleted since it was read).
        """
        store = self.store
        expected_id, session_id = session_id, self.session_id
        notes: list[str] = []
        foreign: list[bytes] = []
        with store._transaction(write=True) as cur:
            row = store._exec(cur, _APPEND_STATE + store.lock_clause, (session_id,)).fetchone()
            if row is None:
                if expected_id is not None:
                    raise SessionGoneError(self.location, "deleted")
                raise SessionNotFoundError(f"{store.url}: no session {session_id}")
            size, count, terminated, name, message_count, first_message, last_activity, h_ms, written = row
            if not terminated and lines:
                # an imported file's torn last line: it gets its newline, so
                # the appended lines start on lines of their own; done first,
                # as the file store repairs a torn tail before looking for
                # other writers' lines, so ``on_grown`` sees the line it became
                (last,) = store._exec(
                    cur, "SELECT line FROM pi_records WHERE session_id = ? AND seq = ?", (session_id, count - 1)
                ).fetchone()
                store._exec(
                    cur,
                    "UPDATE pi_records SET line = ? WHERE session_id = ? AND seq = ?",
                    (store._blob(last) + b"\n", session_id, count - 1),
                )
                size += 1
                notes.append(f"{self.location}: the last line had no newline; added one before appending")
            if expected_size is not None and on_grown is not None and size != expected_size:
                found = store._exec(
                    cur,
                    "SELECT line FROM pi_records WHERE session_id = ? AND byte_offset >= "
                    "(SELECT COALESCE(MAX(byte_offset), 0) FROM pi_records WHERE session_id = ? AND byte_offset <= ?) "
                    "ORDER BY seq",
                    (session_id, session_id, min(expected_size, size)),
                ).fetchall()
                for (raw,) in found:
                    data = store._blob(raw)
                    if not data.endswith(b"\n"):
                        continue  # an unterminated last line: not a complete record
                    if data.strip():
                        foreign.append(data)
                if foreign:
                    replacement = on_grown(foreign)
                    if replacement is not None:
                        lines = replacement
            if not lines:
                if notes:  # the torn last line got its newline: nothing else to write
                    store._exec(cur, "UPDATE pi_sessions SET size_bytes = ?, last_terminated = 1 WHERE id = ?", (size, session_id))
                return AppendResult(notes, size, foreign, (size, count, int(written)))
            state = InfoState(name, message_count, first_message, last_activity)
            rows = []
            records = []
            for i, line in enumerate(lines):
                col = line_columns(line, count + i + 1)
                text = state.add(col.record)
                rows.append(store._record_row(session_id, count + i, size, line, col, text))
                records.append((count + i, col.record))
                size += len(line)
            store._executemany(cur, _INSERT_RECORD, rows)
            written = _now_ms()
            modified = modified_iso(state, h_ms, written)
            store._exec(
                cur,
                "UPDATE pi_sessions SET size_bytes = ?, record_count = ?, last_terminated = ?, name = ?, message_count = ?, "
                "first_message = ?, last_activity = ?, modified = ?, modified_ms = ?, written_ms = ? WHERE id = ?",
                (
                    size,
                    count + len(lines),
                    1 if lines[-1].endswith(b"\n") else 0,
                    state.name,
                    state.message_count,
                    state.first_message,
                    state.last_activity,
                    modified,
                    iso_to_ms(modified) or 0,
                    written,
                    session_id,
                ),
            )
            store._run_hooks(cur, WriteEvent("append", session_id, None, records))
        return AppendResult(notes, size, foreign, (size, count + len(lines), written))
