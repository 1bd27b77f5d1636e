"""Full-text search across sessions: :func:`search` finds
ranked hits in every session of a store (session files, SQLite,
PostgreSQL), :func:`update_index`, :func:`forget_session` and
:func:`reindex_session` keep the index in step.

The index is a cache, never the truth: for session files it is SQLite FTS5
in pi-session's cache directory (:mod:`pi_session.search.files`), for the
SQLite store an FTS5 table inside the store and for PostgreSQL a
``tsvector`` column with a GIN index, both written in the append
transaction. The query language is :mod:`pi_session.search.query`'s; what
is searched, :mod:`pi_session.search.extract`'s.

Text a context edit replaced or omitted (pi 1.6 ``context_edit``) is left
out of the hits unless ``include_edited`` (then marked ``edited``);
thinking is searched only with ``thinking=True``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .extract import Doc, record_docs
from .fts import Candidate
from .index import SearchIndex, index_for
from .query import Query, QueryError, parse_query, tokens
from .regex_run import RegexRun
from .snippets import Snippet, make_snippet

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = [
    "Doc",
    "Hit",
    "Query",
    "QueryError",
    "SearchIndex",
    "SearchResult",
    "Snippet",
    "forget_session",
    "OpenTarget",
    "open_target",
    "parse_query",
    "record_docs",
    "reindex_session",
    "search",
    "tokens",
    "update_index",
]

StoreOrDir = Union["SessionStore", str, "os.PathLike[str]", None]
"""A :class:`pi_session.stores.SessionStore`, a sessions root or session
directory (a path), or None (``~/.pi/agent/sessions``)."""


@dataclass
class Hit:
    """One search hit.

    Attributes:
        session_id: the session's id.
        entry_id: the entry that matched (None: the session header, i.e.
            its cwd).
        timestamp: the entry's time (ISO 8601, UTC), or None.
        role: ``user``, ``assistant``, ``tool``, ``custom``, ``system`` or
            ``session`` (see :class:`pi_session.search.extract.Doc`).
        kind: the entry type or message role.
        tool: tool names of the entry, or None.
        project: the session's cwd.
        session_name: the session's name (``session_info``), or None.
        location: the session file (files) or the store locator.
        snippet: the text around the match (:class:`Snippet`).
        edited: a context edit replaced or omitted this entry (only with
            ``include_edited``).
        rank: the backend's relevance (lower is better); for a query of
            filters only 0, or with ``file:`` -2 for an entry naming a
            whole value, -1 its base name only
            (:attr:`pi_session.search.query.Query.mention_tiers`).
        in_thinking: the snippet is from the assistant's thinking (only
            with ``thinking``), not its text.
    """

    session_id: str
    entry_id: str | None
    timestamp: str | None
    role: str
    kind: str
    tool: str | None
    project: str
    session_name: str | None
    location: str
    snippet: Snippet
    edited: bool = False
    rank: float = 0.0
    in_thinking: bool = False

    def to_json(self) -> dict[str, Any]:
        """The hit as ``--json`` prints it (``snippet`` plain text,
        ``marks`` its matched ``[start, end)`` character ranges)."""
        return {
            "sessionId": self.session_id,
            "entryId": self.entry_id,
            "timestamp": self.timestamp,
            "role": self.role,
            "kind": self.kind,
            "tool": self.tool,
            "project": self.project,
            "sessionName": self.session_name,
            "location": self.location,
            "snippet": self.snippet.text,
            "marks": [list(m) for m in self.snippet.marks],
            "edited": self.edited,
            "inThinking": self.in_thinking,
        }


@dataclass
class SearchResult:
    """What :func:`search` returns: ``hits`` best first, ``warnings``
    (one line each: a damaged index rebuilt) and ``indexed``: bytes the
    files' index read to catch up (0 for a database store)."""

    hits: list[Hit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    indexed: int = 0


def _iso(ms: int | None) -> str | None:
    from ..session.info import iso_or_none

    return iso_or_none(ms) if ms is not None else None


def _resolve_target(store_or_dir: StoreOrDir) -> SessionStore:
    """A store for ``store_or_dir`` (a path becomes a
    :class:`pi_session.stores.FileStore`)."""
    from ..core.paths import sessions_dir
    from ..stores import SessionStore
    from ..stores.file import FileStore

    if isinstance(store_or_dir, SessionStore):
        return store_or_dir
    root = sessions_dir() if store_or_dir is None else Path(os.path.expanduser(os.fspath(store_or_dir)))
    return FileStore(root)


_FIRST_BATCH = 16
"""How many candidates the ``re:`` filters are first asked about at once
(then twice as many each time, up to :data:`_MOST_BATCH`): the first hits
come soon, many candidates are sent in few requests."""
_MOST_BATCH = 512


def _passing(candidates: Iterator[Candidate], query: Query, regexes: RegexRun) -> Iterator[Candidate]:
    """The candidates (with a session) that pass the ``re:`` filters, in
    order, asked about in batches."""
    size = _FIRST_BATCH
    batch: list[Candidate] = []
    for c in candidates:
        if c.session_id is None:
            continue
        if not query.regexes:
            yield c
            continue
        batch.append(c)
        if len(batch) >= size:
            yield from _passed(batch, regexes)
            batch, size = [], min(size * 2, _MOST_BATCH)
    if batch:
        yield from _passed(batch, regexes)


def _passed(batch: list[Candidate], regexes: RegexRun) -> list[Candidate]:
    verdicts = regexes.filter([f"{c.body}\n{c.thinking}" if c.thinking else c.body for c in batch])
    return [c for c, ok in zip(batch, verdicts) if ok]


def _hits(candidates: Iterator[Candidate], query: Query, limit: int, location: Callable[[Candidate], str], regexes: RegexRun,
          shown: Callable[[str], str] | None = None) -> list[Hit]:
    """The first ``limit`` candidates that pass the ``re:`` filters (matched
    by ``regexes``, whose time budget every match of the search shares),
    as hits; their snippets cut from ``shown(text)`` (default: the text)."""
    hits: list[Hit] = []
    for c in _passing(candidates, query, regexes):
        assert c.session_id is not None
        text = c.body
        if shown is not None:
            text = shown(text)
        snippet = make_snippet(text, query, regexes=regexes)
        in_thinking = False
        if not snippet.marks and c.thinking:
            thought = make_snippet(shown(c.thinking) if shown is not None else c.thinking, query, regexes=regexes)
            if thought.marks:
                snippet, in_thinking = thought, True
        hits.append(
            Hit(c.session_id, c.entry_id, _iso(c.ts_ms), c.role, c.kind, c.tool, c.cwd, c.name, location(c), snippet, c.edited, c.rank,
                in_thinking)
        )
        if len(hits) >= limit:
            break
    return hits


def search(
    store_or_dir: StoreOrDir,
    query: str | Query,
    *,
    cwd: str | None = None,
    limit: int = 20,
    include_edited: bool = False,
    thinking: bool = False,
    update: bool = True,
    on_progress: Callable[[int, int], Any] | None = None,
    shown: Callable[[str], str] | None = None,
) -> SearchResult:
    """Search every session of a store (see the module docstring).

    Args:
        store_or_dir: a store, a sessions root or directory, or None
            (``~/.pi/agent/sessions``).
        query: the query text (:func:`parse_query`) or a parsed query.
        cwd: only the sessions of this project (a path; resolved as pi
            resolves cwds).
        limit: at most this many hits.
        include_edited: also hits in text a context edit replaced or
            omitted (marked ``edited``).
        thinking: also search assistants' thinking.
        update: (files) bring the index up to date first (the files are
            the truth; False searches what is indexed).
        on_progress: (files) ``on_progress(done, total)`` while indexing.
        shown: what a hit's text is shown as (e.g. with its secrets
            masked): each snippet is cut from ``shown(text)`` of the whole
            text, so nothing ``shown`` removes appears even in part at a
            snippet's edge (None: the text as indexed).

    Returns:
        :class:`SearchResult`.

    Raises:
        QueryError: the query cannot be parsed, a ``re:`` pattern does not
            compile (both before anything is indexed), or its matching ran
            out of time or memory (:class:`pi_session.search.regex_run.RegexRun`);
            the message names the column.
        pi_session.stores.StoreError: the store cannot be read.
    """
    parsed = parse_query(query) if isinstance(query, str) else query
    regexes = RegexRun(parsed)  # compiles the re: patterns (in its worker) before any indexing
    try:
        return _search(store_or_dir, parsed, regexes, cwd, limit, include_edited, thinking, update, on_progress, shown)
    finally:
        regexes.close()


def _search(
    store_or_dir: StoreOrDir, parsed: Query, regexes: RegexRun, cwd: str | None, limit: int, include_edited: bool, thinking: bool,
    update: bool, on_progress: Callable[[int, int], Any] | None, shown: Callable[[str], str] | None,
) -> SearchResult:
    from ..core.paths import resolve_path

    store = _resolve_target(store_or_dir)
    project = resolve_path(cwd) if cwd is not None else None
    index = index_for(store)
    try:
        indexed = [0]

        def work() -> list[Hit]:
            # damage found only by the query (a page of a shard the update
            # did not need) rebuilds the index: it is indexed again before
            # the query runs again, even with update=False
            if update or index.rebuilt:
                stats = index.update(on_progress)
                indexed[0] += stats.bytes_indexed if stats is not None else 0
            cands = index.candidates(parsed, include_edited=include_edited, thinking=thinking, project=project, limit=limit)
            try:
                return _hits(cands, parsed, limit, lambda c: c.location or c.sid, regexes, shown)
            finally:
                cands.close()

        hits = index.guarded(work)
        return SearchResult(hits, list(index.warnings), indexed[0])
    finally:
        index.close()


def update_index(store_or_dir: StoreOrDir, *, on_progress: Callable[[int, int], Any] | None = None) -> Any:
    """Bring the store's search index up to date
    (:meth:`pi_session.search.index.SearchIndex.update`: for files what
    changed since the last update; a database's index is written in each
    append's transaction, and only sessions written without it are
    indexed now).

    Returns:
        :class:`pi_session.search.files.IndexStats` (files), or None.
    """
    index = index_for(_resolve_target(store_or_dir))
    try:
        return index.update(on_progress)
    finally:
        index.close()


def forget_session(store_or_dir: StoreOrDir, session_id: str) -> bool:
    """Purge one session's text from the search index, for a caller that
    removed text from the session (secrets scrubbing): every document of it
    is deleted, the FTS5 index merged (no token of it is left in older
    segments) and free pages zeroed (SQLite ``secure_delete``). For files
    the session is indexed again, from its current bytes, by the next
    search or :func:`update_index`; a database store's session is
    reindexed at once from its stored lines (:func:`reindex_session`).

    Args:
        store_or_dir: the store (or sessions root / directory) searched.
        session_id: the exact session id.

    Returns:
        True when the index held the session.
    """
    index = index_for(_resolve_target(store_or_dir))
    try:
        return index.forget(session_id)
    finally:
        index.close()


def reindex_session(store_or_dir: StoreOrDir, session_id: str) -> bool:
    """Forget a session's documents (:func:`forget_session`) and index its
    current lines again at once.

    Returns:
        True when the session exists.
    """
    index = index_for(_resolve_target(store_or_dir))
    try:
        return index.reindex(session_id)
    finally:
        index.close()


@dataclass(frozen=True)
class OpenTarget:
    """Where a hit opens, as plain data: a front end links to it (a web
    page) or prints the command that opens it (the CLI's
    ``pi-session context SESSION --leaf ENTRY``).

    Attributes:
        session: how to name the session: the caller's shorter name when
            given (a unique id prefix, a relative path), else the session
            file (files) or the session id (with ``store_url``).
        entry_id: the entry to open the session at; None: the session
            itself (a hit on its header).
        store_url: the database store the session is in, as the user
            should name it; None for session files.
    """

    session: str
    entry_id: str | None
    store_url: str | None = None


def open_target(hit: Hit, *, store_url: str | None = None, session: str | None = None) -> OpenTarget:
    """The :class:`OpenTarget` of ``hit``: in the database store of
    ``store_url`` (named by id), else in its file (:attr:`Hit.location`);
    ``session`` names the session instead when given."""
    if session is None:
        session = hit.session_id if store_url is not None else hit.location
    return OpenTarget(session, hit.entry_id, store_url)
