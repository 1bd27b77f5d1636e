"""The search index inside a database store: the same
tables as the files' cache (:mod:`pi_session.search.fts`, prefix
``pi_search_``), kept in the store's database. SQLite keeps an FTS5 table;
PostgreSQL a ``tsvector`` column per text (``tsv``, ``tsv_thinking``;
configuration ``simple`` over the tokens of
:func:`pi_session.search.query.tokens`, so both backends split words alike)
with GIN indexes. This module owns those tables and their SQL for both
dialects; the store knows nothing of them.

:class:`SQLSearchIndex` (what :meth:`pi_session.stores.SessionStore.search_index`
gives for a :class:`~pi_session.stores.sql.SQLStore`) subscribes
:func:`on_write` to the store's write hook, so each create, append,
rewrite and delete of a session writes its search rows in the same
transaction. ``pi_search_marks`` keeps, per session, the store's
``(size_bytes, record_count, written_ms)`` the index last saw: a session
written by a process that never opened the index (no hook) is indexed
again, and a deleted one forgotten, before the next query
(:func:`catch_up`). Nothing here opens a connection: every statement runs
through the store's public executor (:class:`~pi_session.stores.sql.SQLExecutor`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Generator, Iterator
from typing import Any

from ..storage import parse_line
from ..stores.base import StoreError
from ..stores.sql import SQLExecutor, SQLStore, WriteEvent
from .files import IndexStats
from .fts import Candidate, FtsWriter, candidate_count, filter_sql, fts_candidates, fts_schema
from .query import Query, Term

__all__ = [
    "PREFIX",
    "SEARCH_TABLES",
    "SEARCH_VERSION",
    "SQLSearchIndex",
    "catch_up",
    "ensure_index",
    "index_stored",
    "on_write",
    "pg_candidates",
    "pg_tsquery",
    "search_schema",
    "store_writer",
]

PREFIX = "pi_search_"
SEARCH_VERSION = "4"
"""``pi_meta``'s ``search_version`` once the store's index exists (2: tool
calls' arguments as :func:`~.extract.args_text` gives them, terminal escape
sequences left out; 3: the sessions' cwd and model ids kept case-folded
for ``project:`` and ``model:``; 4: ``pi_search_marks``). A store indexed
by another version has its search tables dropped and is indexed again by
the next search (or write through an opened index)."""

SEARCH_TABLES = ("fts", "docs", "files", "edits", "sessions", "marks")
"""The search tables (after :data:`PREFIX`); ``fts`` exists on SQLite only."""


_MARKS = (
    f"CREATE TABLE IF NOT EXISTS {PREFIX}marks (session_id TEXT PRIMARY KEY, size_bytes BIGINT NOT NULL, "
    "record_count BIGINT NOT NULL, written_ms BIGINT NOT NULL)"
)


def search_schema(dialect: str) -> list[str]:
    """The DDL of the search tables of a dialect (``sqlite`` or
    ``postgresql``; idempotent)."""
    if dialect != "postgresql":
        return [*fts_schema(PREFIX), _MARKS]
    p = PREFIX
    return [
        _MARKS,
        f"""CREATE TABLE IF NOT EXISTS {p}sessions (
            sid TEXT PRIMARY KEY, session_id TEXT, cwd TEXT NOT NULL DEFAULT '', cwd_key TEXT,
            cwd_fold TEXT NOT NULL DEFAULT '', name TEXT, models TEXT NOT NULL DEFAULT '', location TEXT)""",
        f"""CREATE TABLE IF NOT EXISTS {p}docs (
            doc BIGSERIAL PRIMARY KEY, sid TEXT NOT NULL, pos BIGINT NOT NULL, entry_id TEXT, ts_ms BIGINT,
            role TEXT NOT NULL, kind TEXT NOT NULL, tool TEXT, model TEXT, body TEXT, thinking TEXT,
            tsv tsvector NOT NULL, tsv_thinking tsvector NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS {p}docs_sid ON {p}docs (sid, pos)",
        f"CREATE INDEX IF NOT EXISTS {p}docs_tsv ON {p}docs USING GIN (tsv)",
        f"CREATE INDEX IF NOT EXISTS {p}docs_tsv_thinking ON {p}docs USING GIN (tsv_thinking)",
        f"CREATE TABLE IF NOT EXISTS {p}files (sid TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (sid, path))",
        f"CREATE TABLE IF NOT EXISTS {p}edits (sid TEXT NOT NULL, target_id TEXT NOT NULL, PRIMARY KEY (sid, target_id))",
    ]


def store_writer(tx: SQLExecutor) -> FtsWriter:
    """The document writer of one transaction (statements through the
    executor: the dialect's parameter markers and unsafe-text rules)."""
    return FtsWriter(tx.cursor, PREFIX, run=lambda _cur, sql, params=(): tx.execute(sql, params), postgres=tx.dialect == "postgresql")


def _ts_term(term: Term) -> str:
    words = [f"'{t}'" for t in term.tokens]
    if term.prefix:
        words[-1] += ":*"
    return words[0] if len(words) == 1 else "(" + " <-> ".join(words) + ")"


def pg_tsquery(query: Query) -> str | None:
    """The ``to_tsquery('simple', ...)`` text of the query's words (tokens
    are letters and digits only, so quoting them is enough), or None."""
    if not query.positive:
        return None
    expr = " & ".join(_ts_term(t) for t in query.positive)
    for term in query.negative:
        expr = f"({expr}) & !{_ts_term(term)}"
    return expr


def pg_candidates(
    tx: SQLExecutor, query: Query, *, include_edited: bool, thinking: bool, project: str | None, limit: int | None = None
) -> Iterator[Candidate]:
    """As :func:`pi_session.search.fts.fts_candidates`, on PostgreSQL
    (``ts_rank``, best first; filter-only queries newest first, those
    naming a ``file:`` filter's path first)."""
    p = PREFIX
    where, params = filter_sql(query, include_edited=include_edited, p=p, project=project, instr="strpos")
    tsq = pg_tsquery(query)
    edited = f"EXISTS (SELECT 1 FROM {p}edits e WHERE e.sid = d.sid AND e.target_id = d.entry_id)"
    cols = (
        "d.sid, s.session_id, d.pos, d.entry_id, d.ts_ms, d.role, d.kind, d.tool, d.model, d.body, d.thinking, "
        f"s.cwd, s.name, s.location, {edited}"
    )
    vector = "(d.tsv || d.tsv_thinking)" if thinking else "d.tsv"
    if tsq is None and query.negative:  # only negated words: every document but theirs
        where.append(f"NOT ({vector} @@ to_tsquery('simple', ?))")
        params.append(" | ".join(_ts_term(t) for t in query.negative))
    if tsq is not None and limit is not None and not query.regexes:
        # the bounded candidate set, as on SQLite (fts.candidate_count): the
        # newest matching documents that pass the filters, then ranked
        filters = "".join(f" AND {w}" for w in where)
        inner = (
            f"SELECT d.doc FROM {p}docs d JOIN {p}sessions s ON s.sid = d.sid "
            f"WHERE {vector} @@ to_tsquery('simple', ?){filters} ORDER BY d.doc DESC LIMIT ?"
        )
        sql = (
            f"SELECT {cols}, -ts_rank({vector}, to_tsquery('simple', ?)) AS rank FROM ({inner}) t "
            f"JOIN {p}docs d ON d.doc = t.doc JOIN {p}sessions s ON s.sid = d.sid ORDER BY rank, d.ts_ms DESC, d.sid, d.pos"
        )
        args: list[Any] = [tsq, tsq, *params, candidate_count(limit)]
    elif tsq is not None:
        sql = (
            f"SELECT {cols}, -ts_rank({vector}, to_tsquery('simple', ?)) AS rank FROM {p}docs d "
            f"JOIN {p}sessions s ON s.sid = d.sid WHERE {vector} @@ to_tsquery('simple', ?)"
        )
        args = [tsq, tsq, *params]
        if where:
            sql += " AND " + " AND ".join(where)
        sql += " ORDER BY rank, d.ts_ms DESC, d.sid, d.pos"
        if limit is not None and not query.regexes:
            sql += f" LIMIT {int(limit)}"
    else:
        # entries naming a file: filter's path first (fts.fts_mention_rank)
        tiers = query.mention_tiers
        rank = "(" + " + ".join(f"CASE WHEN {vector} @@ to_tsquery('simple', ?) THEN -1.0 ELSE 0.0 END" for _ in tiers) + ")" if tiers else "0.0"
        sql = f"SELECT {cols}, {rank} AS rank FROM {p}docs d JOIN {p}sessions s ON s.sid = d.sid"
        args = [*(" | ".join(_ts_term(t) for t in tier) for tier in tiers), *params]
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {'rank, ' if tiers else ''}d.ts_ms DESC, d.sid, d.pos"
        if limit is not None and not query.regexes:
            sql += f" LIMIT {int(limit)}"
    for row in tx.execute(sql, args).fetchall():
        sid, session_id, pos, entry_id, ts, role, kind, tool, model, body, thought, cwd, name, location, was_edited, rank = row
        yield Candidate(
            sid, session_id, pos, entry_id, ts, role, kind, tool, model, body or "", (thought or "") if thinking else "",
            cwd, name, location, bool(was_edited), float(rank),
        )




_READY: weakref.WeakSet[SQLStore] = weakref.WeakSet()
"""Stores whose index this process has seen at :data:`SEARCH_VERSION`."""


def ensure_index(tx: SQLExecutor) -> bool:
    """Inside a write transaction: create the search tables and index every
    stored session when ``pi_meta`` has no ``search_version`` (a store made
    before search existed, or never searched) or another one than
    :data:`SEARCH_VERSION`. Processes doing it at once wait for each other
    (:meth:`~pi_session.stores.sql.SQLExecutor.lock_schema`; SQLite's
    write lock).

    Returns:
        True when the index was there already; False when it was built
        now (then it holds every session as this transaction sees it).
    """
    if tx.store in _READY:
        return True
    tx.lock_schema()
    row = tx.execute("SELECT value FROM pi_meta WHERE key = ?", ("search_version",)).fetchone()
    if row is not None and row[0] == SEARCH_VERSION:
        _READY.add(tx.store)
        return True
    if row is not None:  # another version's tables: their columns may differ
        for table in SEARCH_TABLES:
            tx.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    for ddl in search_schema(tx.dialect):
        tx.execute(ddl)
    for (sid,) in tx.execute("SELECT id FROM pi_sessions ORDER BY id").fetchall():
        index_stored(tx, sid)
    tx.execute(
        "INSERT INTO pi_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ("search_version", SEARCH_VERSION),
    )
    _READY.add(tx.store)
    return False


def _mark(tx: SQLExecutor, session_id: str) -> None:
    """Record the session's row as the index saw it (``pi_search_marks``)."""
    tx.execute(
        f"INSERT INTO {PREFIX}marks (session_id, size_bytes, record_count, written_ms) "
        "SELECT id, size_bytes, record_count, written_ms FROM pi_sessions WHERE id = ? "
        "ON CONFLICT (session_id) DO UPDATE SET size_bytes = excluded.size_bytes, "
        "record_count = excluded.record_count, written_ms = excluded.written_ms",
        (session_id,),
    )


def _forget(tx: SQLExecutor, session_id: str) -> None:
    store_writer(tx).forget(session_id)
    tx.execute(f"DELETE FROM {PREFIX}marks WHERE session_id = ?", (session_id,))


def index_stored(tx: SQLExecutor, session_id: str) -> bool:
    """Index a stored session's lines from scratch (its old documents
    removed first) and mark it; False when there is no such session (it is
    then forgotten)."""
    _forget(tx, session_id)
    writer = store_writer(tx)
    rows = tx.execute("SELECT seq, line FROM pi_records WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    header = None
    for seq, raw in rows:
        data = tx.blob(raw)
        parsed = parse_line(data[:-1] if data.endswith(b"\n") else data, seq + 1)
        record = parsed.record if parsed.ok and isinstance(parsed.record, dict) else None
        if header is None:
            if record is not None:
                header = record
                writer.header(session_id, header, pos=seq)
            continue
        writer.add(session_id, seq, record)
    if header is not None:
        _mark(tx, session_id)
    return header is not None


def on_write(tx: SQLExecutor, event: WriteEvent) -> None:
    """The write hook (:meth:`pi_session.stores.sql.SQLStore.add_write_hook`):
    the search rows of what ``event`` wrote, in the same transaction (the
    index is built first when the store has none: it then holds this
    write already)."""
    if not ensure_index(tx):
        return
    session_id = event.session_id
    if event.kind in ("replace", "delete"):
        _forget(tx, session_id)
        if event.kind == "delete":
            return
    writer = store_writer(tx)
    if event.header is not None:
        writer.header(session_id, dict(event.header), pos=event.header_seq)
    for seq, record in event.records:
        writer.add(session_id, seq, record)
    _mark(tx, session_id)


_STALE = (
    f"SELECT s.id FROM pi_sessions s LEFT JOIN {PREFIX}marks m ON m.session_id = s.id "
    "WHERE m.session_id IS NULL OR m.size_bytes <> s.size_bytes OR m.record_count <> s.record_count "
    "OR m.written_ms <> s.written_ms"
)
_GONE = f"SELECT session_id FROM {PREFIX}marks WHERE session_id NOT IN (SELECT id FROM pi_sessions)"


def catch_up(store: SQLStore) -> int:
    """Bring the index up to date with sessions written without the write
    hook (by a process that never opened the index): each session whose
    row differs from its mark is indexed again from its lines, each
    deleted one forgotten. Builds the index first when the store has none.

    Returns:
        How many sessions were indexed again or forgotten.
    """
    if store not in _READY:
        with store.transaction(write=False) as tx:
            row = tx.execute("SELECT value FROM pi_meta WHERE key = ?", ("search_version",)).fetchone()
        if row is None or row[0] != SEARCH_VERSION:
            with store.transaction(write=True) as tx:
                ensure_index(tx)
        else:
            _READY.add(store)
    with store.transaction(write=False) as tx:
        stale = [str(r[0]) for r in tx.execute(_STALE).fetchall()]
        gone = [str(r[0]) for r in tx.execute(_GONE).fetchall()]
    if not stale and not gone:
        return 0
    with store.transaction(write=True) as tx:
        ensure_index(tx)
        for sid in gone:
            _forget(tx, sid)
        for sid in stale:
            index_stored(tx, sid)
    return len(stale) + len(gone)


class SQLSearchIndex:
    """The search index of a database store (see the module docstring):
    the :class:`pi_session.search.index.SearchIndex` of a
    :class:`~pi_session.stores.sql.SQLStore`. Creating it subscribes
    :func:`on_write` to the store (once per store; it stays subscribed
    while the store lives).

    Attributes:
        warnings: always empty (a database index is not rebuilt from
            damage here).
        rebuilt: always False.
    """

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self.warnings: list[str] = []
        self.rebuilt = False
        store.add_write_hook(on_write)

    def update(self, on_progress: Callable[[int, int], Any] | None = None) -> IndexStats | None:
        """Index what was written without the hook (:func:`catch_up`);
        None (a database index has no bytes to count)."""
        self._catch_up()
        return None

    def candidates(
        self, query: Query, *, include_edited: bool = False, thinking: bool = False, project: str | None = None,
        limit: int | None = None,
    ) -> Generator[Candidate, None, None]:
        """The documents matching a parsed query, best first, read in one
        transaction while iterated (their ``location`` the store's
        locator); the index is brought up to date first (:func:`catch_up`:
        a write when something is missing).

        Raises:
            StoreError: the store cannot be read or written.
        """
        self._catch_up()
        with self.store.transaction(write=False) as tx:
            if tx.dialect == "postgresql":
                found = pg_candidates(tx, query, include_edited=include_edited, thinking=thinking, project=project, limit=limit)
            else:
                found = fts_candidates(
                    tx.cursor, query, p=PREFIX, include_edited=include_edited, thinking=thinking, project=project, limit=limit
                )
            for c in found:
                if c.session_id is not None:
                    c.location = self.store.locator(c.session_id)
                yield c

    def _catch_up(self) -> None:
        """:func:`catch_up`; a store that cannot be written (a read-only
        SQLite file) is searched as it is indexed, with a warning, once
        its index exists."""
        try:
            catch_up(self.store)
        except StoreError as exc:
            with self.store.transaction(write=False) as tx:
                row = tx.execute("SELECT value FROM pi_meta WHERE key = ?", ("search_version",)).fetchone()
            if row is None or row[0] != SEARCH_VERSION:
                raise
            warning = f"{exc}: the search index could not take in the latest writes; hits may miss them"
            if warning not in self.warnings:
                self.warnings.append(warning)

    def guarded(self, work: Callable[[], Any]) -> Any:
        """Run ``work`` (nothing to rebuild here)."""
        return work()

    def forget(self, session_id: str) -> bool:
        """Drop the session's documents and index its stored lines again,
        at once (:meth:`reindex`): a database index follows the store."""
        return self.reindex(session_id)

    def reindex(self, session_id: str) -> bool:
        """Index one session again from its stored lines, in one
        transaction (SQLite: the FTS5 index merged after, so no token of
        the old documents is left in older segments); True when it exists."""
        with self.store.transaction(write=True) as tx:
            ensure_index(tx)
            found = index_stored(tx, session_id)
            if tx.dialect != "postgresql":
                tx.execute(f"INSERT INTO {PREFIX}fts ({PREFIX}fts) VALUES ('optimize')")
        return found

    def close(self) -> None:
        """Nothing to release (the store's connections are the store's)."""
