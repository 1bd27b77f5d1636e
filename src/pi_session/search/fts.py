"""The SQLite FTS5 index shared by the files' cache
(:mod:`pi_session.search.files`) and the SQLite store (tables inside the
store, written in the append transaction): its schema, the writer of
documents (:class:`FtsWriter`) and the query (:func:`fts_candidates`).

Tables (``{p}`` is a name prefix: ``pi_search_`` in a store, ``""`` in the
cache):

- ``{p}sessions``: one row per indexed session, keyed by ``sid`` (the
  session id in a store; a hash of the file path in the cache): ``session_id``,
  ``cwd``, ``cwd_fold`` (the cwd case-folded by Python's ``str.casefold``,
  what ``project:`` matches), ``name`` (the last ``session_info`` name),
  ``models`` (the model ids used, case-folded, ``\\n``-separated: what
  ``model:`` matches), ``location``. The case-folded values are written
  by Python, so ``project:`` and ``model:`` fold case by one rule (Unicode
  case folding) on every backend, whatever its SQL ``lower()`` does.
- ``{p}docs``: one row per document (:class:`pi_session.search.extract.Doc`):
  ``sid``, ``pos`` (the line's byte offset in the cache, its ``seq`` in a
  store), ``entry_id``, ``ts_ms``, ``role``, ``kind``, ``tool``, ``model``
  and the text, zlib-compressed (``zbody``, ``zthinking``): snippets are
  cut from it and it is what deleting the document from the FTS5 index
  needs (SQLite 3.40 has no ``contentless_delete``).
- ``{p}fts``: a contentless FTS5 table (``body``, ``thinking``; tokenizer
  ``unicode61 remove_diacritics 0``), rowid = ``docs.doc``.
- ``{p}files`` (``sid``, ``path``): paths the session's tool calls named.
- ``{p}edits`` (``sid``, ``target_id``): entries a context edit replaced or
  omitted.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


from .extract import Doc, record_docs
from ..storage import NOT_JSON, line_record
from ..core.text import well_formed
from .query import Query, Term, tokens

__all__ = [
    "CANDIDATES", "Candidate", "FtsWriter", "candidate_count", "cwd_key", "filter_sql", "fts_schema", "fts_excluded", "fts_match", "fts_mention_rank", "fts_candidates", "line_texts", "unpack",
]


def fts_schema(p: str, *, texts: bool = True) -> list[str]:
    """The DDL of the index tables with prefix ``p`` (idempotent).
    ``texts=False`` (the files' cache): ``docs`` holds no text but each
    document's line length (``len``; ``pos`` is its byte offset) and the
    text is read back from the session file (see ``FtsWriter``)."""
    text_cols = "zbody BLOB, zthinking BLOB" if texts else "len INTEGER NOT NULL"
    return [
        f"""CREATE TABLE IF NOT EXISTS {p}sessions (
            sid TEXT PRIMARY KEY, session_id TEXT, cwd TEXT NOT NULL DEFAULT '', cwd_key TEXT,
            cwd_fold TEXT NOT NULL DEFAULT '', name TEXT, models TEXT NOT NULL DEFAULT '', location TEXT)""",
        f"""CREATE TABLE IF NOT EXISTS {p}docs (
            doc INTEGER PRIMARY KEY, sid TEXT NOT NULL, pos INTEGER NOT NULL, entry_id TEXT, ts_ms INTEGER,
            role TEXT NOT NULL, kind TEXT NOT NULL, tool TEXT, model TEXT, {text_cols})""",
        f"CREATE INDEX IF NOT EXISTS {p}docs_sid ON {p}docs (sid, pos)",
        f"CREATE TABLE IF NOT EXISTS {p}files (sid TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (sid, path)) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS {p}edits (sid TEXT NOT NULL, target_id TEXT NOT NULL, PRIMARY KEY (sid, target_id)) WITHOUT ROWID",
        f"""CREATE VIRTUAL TABLE IF NOT EXISTS {p}fts USING fts5(
            body, thinking, content='', tokenize='unicode61 remove_diacritics 0')""",
    ]


def cwd_key(cwd: str) -> str | None:
    """The resolved form of a header cwd (what ``--cwd`` compares with), or
    None when it cannot be resolved."""
    from ..core.paths import resolve_path

    if not cwd:
        return None
    try:
        return resolve_path(cwd)
    except ValueError:
        return None


CANDIDATES = 250
"""How many matching documents, newest first, a query with a limit ranks
at least (:func:`candidate_count`)."""


def candidate_count(limit: int, shards: int = 1) -> int:
    """The size of a limited query's candidate set: the newest
    ``max(limit, CANDIDATES)`` matching documents (those passing the
    filters) are ranked; a query matching fewer ranks every match. An index
    of ``shards`` shards ranks the newest ``max(limit, CANDIDATES /
    shards)`` of each (files spread over them by a hash, so together they
    are about the newest ``CANDIDATES``, and still ``limit`` hits when one
    shard holds them all)."""
    return max(int(limit), -(-CANDIDATES // max(1, shards)))


_SHORT = 256
"""Texts shorter than this (bytes) are stored as they are (a TEXT value):
compressing them saves little and costs time."""


def _pack(text: str) -> bytes | str | None:
    if not text:
        return None
    if len(text) < _SHORT:
        return text
    return zlib.compress(text.encode("utf-8"), 1)


def unpack(blob: Any) -> str:
    """The text of a ``zbody``/``zthinking`` value: "" for NULL, a short
    text as it is, else zlib-compressed UTF-8."""
    if blob is None:
        return ""
    if isinstance(blob, str):
        return blob
    return zlib.decompress(bytes(blob)).decode("utf-8")


def line_texts(raw: bytes) -> tuple[str | None, str, str] | None:
    """What one JSONL line gives the FTS5 table: ``(entry_id, body,
    thinking)`` exactly as :class:`FtsWriter` indexes them (well-formed
    UTF-16), or None when the line is no record or has no text. Used to
    read a document back from its session file (the files' cache keeps no
    text)."""
    record = line_record(raw)
    if record is NOT_JSON:
        return None
    doc = record_docs(record)
    if doc is None or doc.edits:
        return None
    entry_id = well_formed(doc.entry_id) if doc.entry_id else doc.entry_id
    return entry_id, well_formed(doc.body), well_formed(doc.thinking)


class FtsWriter:
    """Writes documents into the index tables of prefix ``p`` (inside the
    caller's transaction).

    Args:
        cur: a DB-API cursor.
        p: the table name prefix.
        run: ``run(cur, sql, params)`` executes one statement written with
            ``?`` markers and returns the cursor (default: ``cur.execute``;
            a store passes its own, which translates markers and text its
            database cannot hold).
        postgres: write PostgreSQL's ``tsvector`` columns instead of the
            FTS5 table.
        texts: keep the documents' text in ``docs`` (a store); False (the
            files' cache): keep each line's length instead. FTS5 rows of a
            forgotten document then cannot be deleted (a contentless table
            needs the text, and SQLite 3.40 has no ``contentless_delete``):
            they stay as orphans that no ``docs`` row joins, until the
            cache refills its FTS5 table (``FileIndex.refill``).
    """

    def __init__(
        self, cur: Any, p: str, *, run: Any = None, postgres: bool = False, buffered: bool = False, texts: bool = True
    ) -> None:
        self.cur = cur
        self.p = p
        self.postgres = postgres
        self.texts = texts
        # buffered (FTS5 only; always without texts): documents and their
        # edits and files rows are written by flush(), many at once, with ids
        # taken from the tables' current maximum (the caller holds the write
        # lock for the whole transaction; forget() flushes its session first)
        self.buffered = (buffered or not texts) and not postgres
        self._docs: list[tuple[Any, ...]] = []
        self._fts: list[tuple[Any, ...]] = []
        self._edits: list[tuple[str, str]] = []
        self._files: list[tuple[str, str]] = []
        self._sids: set[str] = set()  # sessions with buffered rows
        self._next_doc: int | None = None
        self._models: set[tuple[str, str]] = set()  # (sid, model) already recorded by this writer
        self._run = run if run is not None else (lambda c, q, a=(): c.execute(q, a))
        self._instr = "strpos" if postgres else "instr"

    def _x(self, sql: str, params: Any = ()) -> Any:
        return self._run(self.cur, sql, params)

    def session(self, sid: str, session_id: str | None, cwd: str, location: str | None) -> None:
        """Create (or update) the session row."""
        cwd = well_formed(cwd)
        self._x(
            f"INSERT INTO {self.p}sessions (sid, session_id, cwd, cwd_key, cwd_fold, location) VALUES (?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT (sid) DO UPDATE SET session_id = excluded.session_id, cwd = excluded.cwd, "
            f"cwd_key = excluded.cwd_key, cwd_fold = excluded.cwd_fold, location = excluded.location",
            (sid, well_formed(session_id) if session_id else session_id, cwd, cwd_key(cwd), cwd.casefold(), location),
        )

    def header(self, session_id: str, header: dict[str, Any], *, pos: int = 0) -> None:
        """Start a store's session (``sid`` = its id) from its header: the
        session row and the header's document (its cwd)."""
        cwd = header.get("cwd")
        self.session(session_id, session_id, cwd if isinstance(cwd, str) else "", None)
        self.add(session_id, pos, header)

    def add(self, sid: str, pos: int, record: Any, length: int = 0) -> None:
        """Index one parsed record at position ``pos`` (records without
        text are skipped); ``length``: its line's bytes (``texts=False``)."""
        doc = record_docs(record)
        if doc is not None:
            self.add_doc(sid, pos, doc, length)

    def add_doc(self, sid: str, pos: int, doc: Doc, length: int = 0) -> None:
        """Index one document (text that is not well-formed UTF-16, lone
        surrogates, gets U+FFFD: no index can hold it)."""
        p = self.p
        if self.buffered:  # these rows are written by flush() too, many at once
            if doc.edits:
                self._edits += [(sid, well_formed(t)) for t in doc.edits]
                self._sids.add(sid)
                return
            if doc.files:
                self._files += [(sid, well_formed(path)) for path in doc.files]
                self._sids.add(sid)
        for target in doc.edits:
            self._x(f"INSERT INTO {p}edits (sid, target_id) VALUES (?, ?) ON CONFLICT DO NOTHING", (sid, well_formed(target)))
        if doc.edits:
            return
        if not self.buffered:
            for path in doc.files:
                self._x(f"INSERT INTO {p}files (sid, path) VALUES (?, ?) ON CONFLICT DO NOTHING", (sid, well_formed(path)))
        body, thinking = well_formed(doc.body), well_formed(doc.thinking)
        model = well_formed(doc.model) if doc.model else None
        entry_id = well_formed(doc.entry_id) if doc.entry_id else doc.entry_id
        if doc.kind == "name":
            self._x(f"UPDATE {p}sessions SET name = ? WHERE sid = ?", (body, sid))
        if model and (sid, model) not in self._models:
            self._models.add((sid, model))
            folded = model.casefold() + "\n"
            self._x(f"UPDATE {p}sessions SET models = models || ? WHERE sid = ? AND {self._instr}(models, ?) = 0", (folded, sid, folded))
        if not body and not thinking:
            return
        # the cache keeps no model per document (the session row's models
        # are what model: filters); a store does
        meta = (sid, pos, entry_id, doc.ts_ms, doc.role, doc.kind, doc.tool, model if self.texts else None)
        if self.postgres:
            self._x(
                f"INSERT INTO {p}docs (sid, pos, entry_id, ts_ms, role, kind, tool, model, body, thinking, tsv, tsv_thinking) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, to_tsvector('simple', ?), to_tsvector('simple', ?))",
                (*meta, body, thinking or None, " ".join(tokens(body)), " ".join(tokens(thinking))),
            )
            return
        if self.buffered:
            if self._next_doc is None:
                self._next_doc = int(self._x(f"SELECT COALESCE(MAX(doc), 0) FROM {p}docs").fetchone()[0]) + 1
                if not self.texts:
                    # never an orphan's id: its FTS5 row would join the new document
                    top = self._x(f"SELECT COALESCE(MAX(id), 0) FROM {p}fts_docsize").fetchone()[0]
                    self._next_doc = max(self._next_doc, int(top) + 1)
            doc_id = self._next_doc
            self._next_doc += 1
            self._docs.append((doc_id, *meta, _pack(body), _pack(thinking)) if self.texts else (doc_id, *meta, length))
            self._fts.append((doc_id, body, thinking))
            self._sids.add(sid)
            if len(self._docs) >= 2000:
                self.flush()
            return
        if self.texts:
            cur = self._x(
                f"INSERT INTO {p}docs (sid, pos, entry_id, ts_ms, role, kind, tool, model, zbody, zthinking) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*meta, _pack(body), _pack(thinking)),
            )
        else:
            cur = self._x(
                f"INSERT INTO {p}docs (sid, pos, entry_id, ts_ms, role, kind, tool, model, len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*meta, length),
            )
        self._x(f"INSERT INTO {p}fts (rowid, body, thinking) VALUES (?, ?, ?)", (cur.lastrowid, body, thinking))

    def flush(self) -> None:
        """Write the buffered documents and their ``edits`` and ``files``
        rows (see ``buffered``)."""
        p = self.p
        if self._edits:
            self.cur.executemany(f"INSERT INTO {p}edits (sid, target_id) VALUES (?, ?) ON CONFLICT DO NOTHING", self._edits)
            self._edits = []
        if self._files:
            self.cur.executemany(f"INSERT INTO {p}files (sid, path) VALUES (?, ?) ON CONFLICT DO NOTHING", self._files)
            self._files = []
        if self._docs:
            cols = "zbody, zthinking" if self.texts else "len"
            marks = "?, ?" if self.texts else "?"
            self.cur.executemany(
                f"INSERT INTO {p}docs (doc, sid, pos, entry_id, ts_ms, role, kind, tool, model, {cols}) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {marks})",
                self._docs,
            )
            self.cur.executemany(f"INSERT INTO {p}fts (rowid, body, thinking) VALUES (?, ?, ?)", self._fts)
            self._docs, self._fts = [], []
        self._sids.clear()

    def forget(self, sid: str) -> None:
        """Remove a session and all its documents from the index (FTS5
        rows are deleted with the text they were indexed with; without
        ``texts`` they stay as orphans, see the class docstring)."""
        p = self.p
        if sid in self._sids:  # its buffered documents go first (others wait for their batch)
            self.flush()
        if not self.postgres and self.texts:
            rows = self._x(f"SELECT doc, zbody, zthinking FROM {p}docs WHERE sid = ?", (sid,)).fetchall()
            for doc, zb, zt in rows:
                self._x(f"INSERT INTO {p}fts ({p}fts, rowid, body, thinking) VALUES ('delete', ?, ?, ?)", (doc, unpack(zb), unpack(zt)))
        for table in ("docs", "files", "edits", "sessions"):
            self._x(f"DELETE FROM {p}{table} WHERE sid = ?", (sid,))


def _fts_term(term: Term) -> str:
    phrase = '"' + " ".join(term.tokens) + '"'
    return phrase + "*" if term.prefix else phrase


def fts_match(query: Query, *, thinking: bool) -> str | None:
    """The FTS5 MATCH expression of the query's words (None: no positive
    word; the filters alone select). Tokens hold letters and digits only,
    so quoting them is enough."""
    positive = query.positive
    if not positive:
        return None
    expr = " AND ".join(_fts_term(t) for t in positive)
    for term in query.negative:
        expr = f"({expr}) NOT {_fts_term(term)}"
    columns = "{body thinking}" if thinking else "{body}"
    return f"{columns} : ({expr})"


def fts_excluded(query: Query, *, thinking: bool) -> str | None:
    """For a query without positive words: the FTS5 MATCH expression of
    its negated words (any of them), whose documents are left out; None
    when there is no such word (or a positive one, whose
    :func:`fts_match` says ``NOT`` itself)."""
    if query.positive or not query.negative:
        return None
    columns = "{body thinking}" if thinking else "{body}"
    return f"{columns} : (" + " OR ".join(_fts_term(t) for t in query.negative) + ")"


def fts_mention_rank(query: Query, *, p: str, thinking: bool) -> tuple[str, list[str]] | None:
    """For a query without words that has ``file:`` filters: the SQL rank
    of a document (on ``d`` = docs) by how it names the files
    (:attr:`Query.mention_tiers`): -2 when it holds a whole ``file:``
    value, -1 its base name only, 0 neither; with its MATCH parameters.
    None when there is nothing to rank by (the newest come first)."""
    tiers = query.mention_tiers
    if not tiers:
        return None
    columns = "{body thinking}" if thinking else "{body}"
    parts = [f"(d.doc IN (SELECT rowid FROM {p}fts WHERE {p}fts MATCH ?))" for _ in tiers]
    params = [f"{columns} : (" + " OR ".join(_fts_term(t) for t in tier) + ")" for tier in tiers]
    return "(" + " + ".join(f"-1.0 * {part}" for part in parts) + ")", params


@dataclass
class Candidate:
    """One document a query found, before snippets (see
    :func:`fts_candidates`). ``sid`` is the index key; ``edited``: a
    context edit replaced or omitted the entry; ``length``: the line's
    bytes when the index holds no text (``body`` is then "" until the
    caller reads the line at ``pos``)."""

    sid: str
    session_id: str | None
    pos: int
    entry_id: str | None
    ts_ms: int | None
    role: str
    kind: str
    tool: str | None
    model: str | None
    body: str
    thinking: str
    cwd: str
    name: str | None
    location: str | None
    edited: bool
    rank: float
    length: int = 0


def filter_sql(
    query: Query, *, include_edited: bool, p: str, project: str | None = None, instr: str = "instr"
) -> tuple[list[str], list[Any]]:
    """The WHERE conditions (on ``d`` = docs, ``s`` = sessions) and their
    parameters for the query's filters; ``project``: a resolved cwd the
    session's must equal (``--cwd``); ``instr``: the dialect's
    ``instr(haystack, needle)`` (PostgreSQL: ``strpos``). Values with lone
    surrogates (a command line's undecodable bytes) are matched as the
    index stores such text, with U+FFFD."""
    where: list[str] = []
    params: list[Any] = []
    if project is not None:
        where.append("s.cwd_key = ?")
        params.append(project)
    if query.roles:
        where.append(f"d.role IN ({', '.join('?' * len(query.roles))})")
        params += query.roles
    if query.tools:
        where.append("(" + " OR ".join(f"{instr}(' ' || d.tool || ' ', ?) > 0" for _ in query.tools) + ")")
        params += [f" {well_formed(t)} " for t in query.tools]
    if query.files:
        where.append(f"d.sid IN (SELECT sid FROM {p}files WHERE " + " OR ".join(f"{instr}(path, ?) > 0" for _ in query.files) + ")")
        params += [well_formed(f) for f in query.files]
    if query.projects:  # case-folded columns, written by Python (see the module docstring)
        where.append("(" + " OR ".join(f"{instr}(s.cwd_fold, ?) > 0" for _ in query.projects) + ")")
        params += [well_formed(x).casefold() for x in query.projects]
    if query.models:
        where.append("(" + " OR ".join(f"{instr}(s.models, ?) > 0" for _ in query.models) + ")")
        params += [well_formed(x).casefold() for x in query.models]
    if query.sessions:
        where.append("(" + " OR ".join("substr(s.session_id, 1, length(?)) = ?" for _ in query.sessions) + ")")
        for prefix in map(well_formed, query.sessions):
            params += [prefix, prefix]
    if query.after_ms is not None:
        where.append("d.ts_ms >= ?")
        params.append(query.after_ms)
    if query.before_ms is not None:
        where.append("d.ts_ms < ?")
        params.append(query.before_ms)
    if not include_edited:
        where.append(f"NOT EXISTS (SELECT 1 FROM {p}edits e WHERE e.sid = d.sid AND e.target_id = d.entry_id)")
    return where, params


def fts_candidates(
    conn: sqlite3.Connection | Any,
    query: Query,
    *,
    p: str,
    include_edited: bool = False,
    thinking: bool = False,
    sids: Iterable[str] | None = None,
    project: str | None = None,
    limit: int | None = None,
    texts: bool = True,
    shards: int = 1,
) -> Iterator[Candidate]:
    """The documents matching ``query``'s words and filters, best first
    (bm25; filter-only queries: newest first, those naming a ``file:``
    filter's path first, :func:`fts_mention_rank`), lazily (``re:`` is applied
    by the caller).

    Args:
        conn: a connection or cursor holding the tables of prefix ``p``.
        sids: only these sessions (e.g. one project's files), or all.
        project: only sessions whose cwd resolves to this path.
        limit: at most this many (ignored with ``re:`` filters, which the
            caller applies).
        texts: the tables hold the texts (:func:`fts_schema`); False: the
            candidates' ``body``/``thinking`` are "" and ``length`` is the
            line's byte length, for the caller to read the text back.
        shards: the index this table is a shard of has this many
            (:func:`candidate_count`).
    """
    where, params = filter_sql(query, include_edited=include_edited, p=p, project=project)
    match = fts_match(query, thinking=thinking)
    edited = f"EXISTS (SELECT 1 FROM {p}edits e WHERE e.sid = d.sid AND e.target_id = d.entry_id)"
    cols = (
        f"d.sid, s.session_id, d.pos, d.entry_id, d.ts_ms, d.role, d.kind, d.tool, d.model, "
        f"{'d.zbody, d.zthinking' if texts else 'd.len, NULL'}, "
        f"s.cwd, s.name, s.location, {edited}"
    )
    if sids is not None:
        sid_list = list(sids)
        if not sid_list:
            return
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS search_scope (sid TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM search_scope")
        conn.executemany("INSERT OR IGNORE INTO search_scope (sid) VALUES (?)", [(s,) for s in sid_list])
        where.append("d.sid IN (SELECT sid FROM temp.search_scope)")
    excluded = fts_excluded(query, thinking=thinking)
    if excluded is not None:  # only negated words: every document but theirs
        where.append(f"d.doc NOT IN (SELECT rowid FROM {p}fts WHERE {p}fts MATCH ?)")
        params.append(excluded)
    rows: Iterable[Any] | None = None
    if match is not None and limit is not None and not query.regexes:
        # the bounded candidate set (docs/search.md "Ranking"): FTS5 walks
        # the matches newest first (rowid descending, which it does without
        # a sort) through the filters and stops at the newest
        # max(limit, CANDIDATES); only those are ranked by bm25
        filters = "".join(f" AND {w}" for w in where)
        inner = (
            f"SELECT {p}fts.rowid AS doc, {p}fts.rank AS rank FROM {p}fts JOIN {p}docs d ON d.doc = {p}fts.rowid "
            f"JOIN {p}sessions s ON s.sid = d.sid WHERE {p}fts MATCH ?{filters} ORDER BY {p}fts.rowid DESC LIMIT ?"
        )
        sql = (
            f"SELECT {cols}, t.rank FROM ({inner}) t JOIN {p}docs d ON d.doc = t.doc JOIN {p}sessions s ON s.sid = d.sid "
            f"ORDER BY t.rank, d.ts_ms DESC, d.sid, d.pos"
        )
        # every candidate in rank order (the caller stops at ``limit`` and
        # may skip some: a file rewritten under the index)
        rows = conn.execute(sql, [match, *params, candidate_count(limit, shards)])
    elif match is not None:
        sql = (
            f"SELECT {cols}, {p}fts.rank AS rank FROM {p}fts JOIN {p}docs d ON d.doc = {p}fts.rowid "
            f"JOIN {p}sessions s ON s.sid = d.sid WHERE {p}fts MATCH ?"
        )
        args: list[Any] = [match, *params]
        if where:
            sql += " AND " + " AND ".join(where)
        sql += " ORDER BY rank, d.ts_ms DESC, d.sid, d.pos"
    else:
        mention = fts_mention_rank(query, p=p, thinking=thinking)
        rank, rank_args = mention if mention is not None else ("0.0", [])
        sql = f"SELECT {cols}, {rank} AS rank FROM {p}docs d JOIN {p}sessions s ON s.sid = d.sid"
        args = [*rank_args, *params]
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {'rank, ' if mention is not None else ''}d.ts_ms DESC, d.sid, d.pos"
    if rows is None:
        if limit is not None and not query.regexes:
            sql += f" LIMIT {int(limit)}"
        rows = conn.execute(sql, args)
    for row in rows:
        sid, session_id, pos, entry_id, ts, role, kind, tool, model, zb, zt, cwd, name, location, was_edited, rank = row
        if texts:
            body, thought, length = unpack(zb), unpack(zt) if thinking else "", 0
        else:
            body, thought, length = "", "", int(zb)
        yield Candidate(
            sid, session_id, pos, entry_id, ts, role, kind, tool, model, body, thought,
            cwd, name, location, bool(was_edited), float(rank), length,
        )
