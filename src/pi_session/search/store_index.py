"""The search index inside a database store: the same
tables as the files' cache (:mod:`pi_session.search.fts`, prefix
``pi_search_``), written in the store's append transaction. SQLite keeps an
FTS5 table; PostgreSQL a ``tsvector`` column per text (``tsv``,
``tsv_thinking``; configuration ``simple`` over the tokens of
:func:`pi_session.search.query.tokens`, so both backends split words alike)
with GIN indexes. Used by :class:`pi_session.stores.sql.SQLStore`; nothing
here opens a connection."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..storage import parse_line
from .fts import Candidate, FtsWriter, candidate_count, filter_sql, fts_candidates, fts_schema
from .query import Query, Term

__all__ = [
    "PREFIX",
    "SEARCH_TABLES",
    "SEARCH_VERSION",
    "ensure_index",
    "index_stored",
    "pg_candidates",
    "pg_tsquery",
    "reindex",
    "search_schema",
    "store_candidates",
    "store_writer",
]

PREFIX = "pi_search_"
SEARCH_VERSION = "3"
"""``pi_meta``'s ``search_version`` once the store's index exists (2: tool
calls' arguments as :func:`~.extract.args_text` gives them, terminal escape
sequences left out; 3: the sessions' cwd and model ids kept case-folded
for ``project:`` and ``model:``). A store indexed by another version has
its search tables dropped and is indexed again by the next search or
append."""

SEARCH_TABLES = ("fts", "docs", "files", "edits", "sessions")
"""The search tables (after :data:`PREFIX`); ``fts`` exists on SQLite only."""


def search_schema(postgres: bool) -> list[str]:
    """The DDL of the search tables (idempotent)."""
    if not postgres:
        return fts_schema(PREFIX)
    p = PREFIX
    return [
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


def store_writer(store: Any, cur: Any, *, postgres: bool) -> FtsWriter:
    """The document writer for a store's cursor (statements through the
    store's ``_exec``: its parameter markers and unsafe-text rules)."""
    return FtsWriter(cur, PREFIX, run=store._exec, postgres=postgres)


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
    store: Any, cur: Any, query: Query, *, include_edited: bool, thinking: bool, project: str | None, limit: int | None = None
) -> Iterator[Candidate]:
    """As :func:`pi_session.search.fts.fts_candidates`, on PostgreSQL
    (``ts_rank``, best first; filter-only queries newest first)."""
    p = PREFIX
    where, params = filter_sql(query, include_edited=include_edited, p=p, project=project)
    where = [w.replace("instr(", "strpos(") for w in where]
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
        sql = f"SELECT {cols}, 0.0 FROM {p}docs d JOIN {p}sessions s ON s.sid = d.sid"
        args = list(params)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY d.ts_ms DESC, d.sid, d.pos"
        if limit is not None and not query.regexes:
            sql += f" LIMIT {int(limit)}"
    for row in store._exec(cur, sql, args).fetchall():
        sid, session_id, pos, entry_id, ts, role, kind, tool, model, body, thought, cwd, name, location, was_edited, rank = row
        yield Candidate(
            sid, session_id, pos, entry_id, ts, role, kind, tool, model, body or "", (thought or "") if thinking else "",
            cwd, name, location, bool(was_edited), float(rank),
        )




def ensure_index(store: Any, cur: Any) -> None:
    """Inside a store's write transaction: create the search tables and
    index every stored session when ``pi_meta`` has no ``search_version``
    (a store made before search existed) or an older one than
    :data:`SEARCH_VERSION`. Processes doing it at once wait for each other
    (the store's ``schema_lock_sql``; SQLite's write lock)."""
    if store.schema_lock_sql:
        store._exec(cur, store.schema_lock_sql)
    row = store._exec(cur, "SELECT value FROM pi_meta WHERE key = ?", ("search_version",)).fetchone()
    if row is not None and row[0] == SEARCH_VERSION:
        return
    if row is not None:  # another version's tables: their columns may differ
        for table in SEARCH_TABLES:
            store._exec(cur, f"DROP TABLE IF EXISTS {PREFIX}{table}")
    for ddl in search_schema(store.search_postgres):
        store._exec(cur, ddl)
    for (sid,) in store._exec(cur, "SELECT id FROM pi_sessions ORDER BY id").fetchall():
        index_stored(store, cur, sid)
    store._exec(
        cur, "INSERT INTO pi_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ("search_version", SEARCH_VERSION),
    )


def index_stored(store: Any, cur: Any, session_id: str) -> bool:
    """Index a stored session's lines from scratch (its old documents
    removed first); False when there is no such session."""
    writer = store_writer(store, cur, postgres=store.search_postgres)
    writer.forget(session_id)
    rows = store._exec(cur, "SELECT seq, line FROM pi_records WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    header = None
    for seq, raw in rows:
        data = store._blob(raw)
        parsed = parse_line(data[:-1] if data.endswith(b"\n") else data, seq + 1)
        record = parsed.record if parsed.ok and isinstance(parsed.record, dict) else None
        if header is None:
            if record is not None:
                header = record
                writer.header(session_id, header, pos=seq)
            continue
        writer.add(session_id, seq, record)
    return header is not None


def reindex(store: Any, session_id: str) -> bool:
    """:meth:`pi_session.stores.sql.SQLStore.reindex_search`."""
    with store._transaction(write=True) as cur:
        store._search_ready(cur)
        found = index_stored(store, cur, session_id)
        if not store.search_postgres:
            store._exec(cur, f"INSERT INTO {PREFIX}fts ({PREFIX}fts) VALUES ('optimize')")
    return found


def store_candidates(
    store: Any, query: Query, *, include_edited: bool, thinking: bool, project: str | None, limit: int | None
) -> Iterator[Candidate]:
    """:meth:`pi_session.stores.sql.SQLStore.search_candidates`."""
    if not store._search_ok:
        with store._transaction(write=False) as cur:
            row = store._exec(cur, "SELECT value FROM pi_meta WHERE key = ?", ("search_version",)).fetchone()
            ready = row is not None and row[0] == SEARCH_VERSION
        if ready:
            store._search_ok = True
        else:
            with store._transaction(write=True) as cur:
                store._search_ready(cur)
    with store._transaction(write=False) as cur:
        if store.search_postgres:
            yield from pg_candidates(store, cur, query, include_edited=include_edited, thinking=thinking, project=project, limit=limit)
        else:
            yield from fts_candidates(cur, query, p=PREFIX, include_edited=include_edited, thinking=thinking, project=project, limit=limit)
