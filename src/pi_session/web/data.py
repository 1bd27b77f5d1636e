"""What the web app's API answers, as plain JSON-ready values, read through
the library's public API (stores, :mod:`pi_session.operations`, search,
usage, the viewer's model). Nothing here knows HTTP except
:class:`ApiError`'s status.

Every session is named by its store id (or a unique prefix of it), checked
by :func:`session_id_arg` before the store sees it: a path, or anything
but letters, digits, ``-`` and ``_``, is refused, so no request can name a
file outside the store.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import PiSessionError
from ..manager.session_manager import SessionManager
from ..operations import OperationError, open_for_reading
from ..stores import AmbiguousSessionError, SessionNotFoundError, SessionStore, StoreError
from ..session.conversation import ConversationView, hidden_summary
from ..viewer.entries import ToolCalls, article, row_preview
from ..viewer.model import Row, TreeLayout, hiding_edits
from ..entries.questions import ASSISTANT, MESSAGE
from .masking import MASKED, Masking, masking_for

__all__ = [
    "ApiError",
    "PAGE_ROWS",
    "SESSIONS_PAGE",
    "Listing",
    "SessionView",
    "StoreAccess",
    "context_json",
    "entry_json",
    "row_json",
    "search_json",
    "session_id_arg",
    "session_item",
    "sessions_json",
    "usage_breakdown_json",
    "usage_daily_json",
]

PAGE_ROWS = 500
"""Tree rows per page of ``GET /api/v1/sessions/{id}`` (and of the
session page's first screen)."""

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


class ApiError(PiSessionError):
    """A request the API refuses: ``status`` (HTTP) and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def session_id_arg(text: str) -> str:
    """``text`` checked as a session id or id prefix (letters, digits,
    ``-``, ``_``; at most 128 characters).

    Raises:
        ApiError: 400 for anything else (a path, dots, slashes)."""
    if not _ID.fullmatch(text):
        raise ApiError(400, f"{text[:80]!r} is not a session id (letters, digits, - and _ only)")
    return text


class StoreAccess:
    """The store the server serves, with one lock around every use (a
    store's connection is not shared between threads at the same time).

    Attributes:
        store: the :class:`pi_session.stores.SessionStore`.
        lock: held while the store is used.
    """

    def __init__(self, store: SessionStore, *, list_max_age: float = 2.0) -> None:
        self.store = store
        self.lock = threading.RLock()
        self.list_max_age = list_max_age
        self._listing: tuple[float, list[dict[str, Any]]] | None = None
        self._prepared: Listing | None = None
        self._refreshing = False
        self._views: dict[tuple[str, bool], tuple[tuple[int, ...], SessionView]] = {}

    def listing(self) -> list[dict[str, Any]]:
        """The store's session infos (``store.list(with_text=False)``),
        newest first. Kept for :attr:`list_max_age` seconds; an older copy
        is answered at once while a worker thread reads the store again
        (the sessions page of a big store is not held up by the read).

        Raises:
            ApiError: 503 the store cannot be read (first read only)."""
        import time

        now = time.monotonic()
        cached = self._listing
        if cached is not None and now - cached[0] < self.list_max_age:
            return cached[1]
        if cached is not None:
            if not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh_quietly, daemon=True, name="pi-session-listing").start()
            return cached[1]
        return self._refresh()

    def prepared(self) -> Listing:
        """The :class:`Listing` of :meth:`listing`'s current read (made
        once per read).

        Raises:
            ApiError: as :meth:`listing`."""
        infos = self.listing()
        prepared = self._prepared
        if prepared is None or prepared.infos is not infos:
            prepared = self._prepared = Listing(infos)
        return prepared

    def _refresh_quietly(self) -> None:
        try:
            self._refresh()
        except ApiError:
            pass  # the next request reads again, and reports it

    def _refresh(self) -> list[dict[str, Any]]:
        import time

        try:
            with self.lock:
                infos = self.store.list(with_text=False)
        except StoreError as exc:
            raise ApiError(503, str(exc)) from None
        finally:
            self._refreshing = False
        self._listing = (time.monotonic(), infos)
        return infos

    def view(self, text: str, *, redact: bool) -> SessionView:
        """The :class:`SessionView` of a session, kept while the store's
        mark of the session is unchanged (the last few sessions viewed):
        a second look at a 100,000-entry session does not read it again.
        With ``redact``, the view masks secrets in what it shows
        (:attr:`SessionView.masked`: only the rows and entries rendered
        are scanned).

        Raises:
            ApiError: as :meth:`open`."""
        sid = self.resolve(text)
        key = (sid, redact)
        mark = self.mark(sid)
        cached = self._views.get(key)
        if cached is not None and mark is not None and cached[0] == mark:
            return cached[1]
        manager = self.open(sid, lazy=True)
        with self.lock:
            view = SessionView.of(manager, masked=redact)
        if mark is not None:
            self._views.pop(key, None)
            self._views[key] = (mark, view)
            while len(self._views) > 4:
                self._views.pop(next(iter(self._views)))
        return view

    def resolve(self, text: str) -> str:
        """The full id of the session ``text`` names (id or unique prefix).

        Raises:
            ApiError: 400 malformed, 404 none, 409 ambiguous."""
        session_id_arg(text)
        with self.lock:
            try:
                return self.store.resolve(text)
            except AmbiguousSessionError as exc:
                raise ApiError(409, str(exc)) from None
            except SessionNotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except StoreError as exc:
                raise ApiError(503, str(exc)) from None

    def open(self, text: str, *, redact: bool = False, lazy: bool = False) -> SessionManager:
        """The session ``text`` names, opened read-only; with ``redact``,
        an in-memory copy with every secret the scanner finds replaced by
        ``[REDACTED:<kind>]`` (:meth:`pi_session.web.masking.Masking.manager`);
        with ``lazy``, a session file's entries are decoded when first
        accessed (:func:`pi_session.operations.open_for_reading`).

        Raises:
            ApiError: as :meth:`resolve`; 422 when it cannot be read."""
        sid = self.resolve(text)
        with self.lock:
            try:
                manager = open_for_reading(sid, store=self.store, lazy=lazy)
                return masking_for(redact).manager(manager)
            except OperationError as exc:
                raise ApiError(422, str(exc)) from None
            except SessionNotFoundError as exc:
                raise ApiError(404, str(exc)) from None
            except StoreError as exc:
                raise ApiError(503, str(exc)) from None

    def mark(self, session_id: str) -> tuple[int, ...] | None:
        """The store's mark of the session's state (changes with every
        write), or None when it is gone."""
        with self.lock:
            return self.store.session_marks([session_id]).get(session_id)

    def marks(self, session_ids: Sequence[str]) -> dict[str, tuple[int, ...]]:
        """The store's marks of several sessions in one look (those gone
        are left out).

        Raises:
            ApiError: 503 the store cannot be read."""
        with self.lock:
            try:
                return dict(self.store.session_marks(list(session_ids)))
            except StoreError as exc:
                raise ApiError(503, str(exc)) from None


SESSIONS_PAGE = 150
"""Sessions on the first screen of the sessions page, and per page of
its "next" link and of the script's further loads."""

_ITEM_KEYS = ("id", "name", "cwd", "created", "modified", "messageCount")


FIRST_MESSAGE_SHOWN = 300
"""Characters of a session's first message the sessions listing shows."""


def session_item(info: Mapping[str, Any], masking: Masking = MASKED) -> dict[str, Any]:
    """One row of the sessions listing, from a store's session info:
    ``id, name, cwd, created, modified, messageCount, firstMessage`` (its
    first :data:`FIRST_MESSAGE_SHOWN` characters), the name, cwd and first
    message through ``masking`` (secrets masked before the cut)."""
    item = {k: info.get(k) for k in _ITEM_KEYS}
    for key in ("name", "cwd"):
        value = item[key]
        if isinstance(value, str):
            item[key] = masking.text(value)
    item["firstMessage"] = masking.cut(str(info.get("firstMessage") or ""), FIRST_MESSAGE_SHOWN)
    return item


def _haystack(info: Mapping[str, Any]) -> str:
    """What a filter looks in: id, name, cwd and the shown first message,
    lower case."""
    return " ".join(str(info.get(k) or "") for k in ("id", "name", "cwd")).lower() + " " + (info.get("firstMessage") or "")[:FIRST_MESSAGE_SHOWN].lower()


class Listing:
    """One read of the store's listing (``store.list(with_text=False)``,
    newest ``modified`` first), answering pages of it: what a filter
    looks in and the projects are worked out on first use and kept with
    the read, so the first page of a big store costs only its own rows.

    Attributes:
        infos: the store's session infos, newest first.
    """

    def __init__(self, infos: list[dict[str, Any]]) -> None:
        self.infos = infos
        self._hay: list[str] | None = None
        self._projects: list[dict[str, Any]] | None = None
        self._masked_cwds: dict[str, str] | None = None
        self._items: dict[tuple[int, bool], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def item(self, info: dict[str, Any], masking: Masking = MASKED) -> dict[str, Any]:
        """:func:`session_item` of one of :attr:`infos` through
        ``masking`` (made once per read)."""
        key = (id(info), masking.enabled)
        found = self._items.get(key)
        if found is None:
            found = self._items[key] = session_item(info, masking)
        return found

    def masked_cwds(self) -> dict[str, str]:
        """Each cwd of the listing → the cwd with its secrets masked."""
        with self._lock:
            if self._masked_cwds is None:
                cwds = {str(i.get("cwd") or "") for i in self.infos}
                self._masked_cwds = {cwd: MASKED.text(cwd) for cwd in cwds}
            return self._masked_cwds

    def matching(self, query: str = "", project: str | None = None) -> list[dict[str, Any]]:
        """The infos (newest first) whose id, name, cwd or first message
        hold every word of ``query`` (case-insensitive) and, with
        ``project``, whose cwd is it (as stored, or as shown with its
        secrets masked); ``infos`` itself without either."""
        words = query.lower().split()
        if not words and project is None:
            return self.infos
        cwds: set[str] | None = None
        if project is not None:
            cwds = {project} | {cwd for cwd, shown in self.masked_cwds().items() if shown == project}
        if not words:
            return [i for i in self.infos if str(i.get("cwd") or "") in cwds] if cwds is not None else self.infos
        with self._lock:
            if self._hay is None:
                self._hay = [_haystack(i) for i in self.infos]
            hay = self._hay
        return [
            info for info, text in zip(self.infos, hay)
            if (cwds is None or str(info.get("cwd") or "") in cwds) and all(w in text for w in words)
        ]

    def projects(self, masking: Masking = MASKED) -> list[dict[str, Any]]:
        """Each project (session cwd, through ``masking``) with its number
        of sessions and the ``modified`` time of its newest: ``[{"cwd",
        "sessions", "modified"}]``, the most recently active first."""
        with self._lock:
            if self._projects is None:
                seen: dict[str, dict[str, Any]] = {}
                for info in self.infos:
                    cwd = str(info.get("cwd") or "")
                    entry = seen.get(cwd)
                    if entry is None:
                        seen[cwd] = {"cwd": cwd, "sessions": 1, "modified": info.get("modified")}
                    else:
                        entry["sessions"] += 1
                self._projects = list(seen.values())
            projects = self._projects
        if not masking.enabled:
            return projects
        shown = self.masked_cwds()
        return [{**p, "cwd": shown.get(p["cwd"], p["cwd"])} for p in projects]


def sessions_json(
    access: StoreAccess, *, query: str = "", project: str | None = None, offset: int = 0, limit: int | None = None,
    masking: Masking = MASKED,
) -> dict[str, Any]:
    """One page of the store's sessions, newest ``modified`` first:
    ``{"sessions": [session_item…], "total", "offset", "count"}`` —
    ``total`` the sessions matching, ``count`` all of the store's.

    Args:
        query: only sessions whose id, name, cwd or first message hold
            every word of it (case-insensitive).
        project: only sessions whose cwd is it (as stored or as shown).
        offset: how many matching sessions to skip.
        limit: at most this many (None: all from ``offset``).
        masking: how the items show their text
            (:class:`pi_session.web.masking.Masking`; default: secrets
            masked).

    Raises:
        ApiError: 503 the store cannot be read."""
    listing = access.prepared()
    found = listing.matching(query, project or None)
    start = max(0, offset)
    stop = len(found) if limit is None else start + max(0, limit)
    return {
        "sessions": [listing.item(i, masking) for i in found[start:stop]],
        "total": len(found),
        "offset": start,
        "count": len(listing.infos),
    }


@dataclass
class SessionView:
    """One session prepared for the API and the pages: the manager, its
    tree rows (``pi-session tree`` order, the conversation view's hidden
    rows marked; a :class:`pi_session.viewer.model.TreeLayout`, which makes
    a row when it is asked for), the context edits hiding entries on the
    leaf's path, and the tool calls of the tool results shown (for their
    headings; :meth:`calls_for`). Nothing of the session is decoded but
    what a page or an answer shows (the manager of a session file reads it
    lazily: :meth:`StoreAccess.view`), so the first screen of a
    100,000-entry session costs one page of rows.

    With ``masked``, the session text a page or an answer shows is read
    through :meth:`shown`, :meth:`edit_of`, :meth:`name` and
    :meth:`header`, which replace every secret the scanner finds by
    ``[REDACTED:<kind>]`` (the same records as
    :func:`pi_session.operations.redacted_manager`'s copy) — only for what
    is shown, so the first screen of a 100,000-entry session scans one
    page of rows, not the whole session. ``manager`` and ``rows`` stay the
    session as stored (its structure: ids, parents, order)."""

    manager: SessionManager
    rows: TreeLayout
    index_of: dict[str, int]
    hidden: dict[str, tuple[str, Any]]
    leaf_index: int
    hidden_note: str = ""
    masked: bool = False
    _shown: dict[int, Row] = field(default_factory=dict, repr=False)
    _mask_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _all_calls: ToolCalls | None = field(default=None, repr=False)

    @classmethod
    def of(cls, manager: SessionManager, *, masked: bool = False) -> SessionView:
        """Build the view of an opened session (``masked``: secrets
        masked in everything shown)."""
        roots = manager.get_tree()
        leaf_id = manager.get_leaf_id()
        conversation = ConversationView(roots, leaf_id)
        rows = TreeLayout(roots, conversation, kinds={k for k in manager.tree.entries.types() if k.__class__ is str})
        index_of = rows.index_of
        leaf_index = index_of.get(leaf_id, -1) if leaf_id is not None else -1
        edits = manager.get_entries_of_type("context_edit")
        hidden = hiding_edits(edits, manager.get_branch() if leaf_id is not None and edits else [])
        note = hidden_summary(conversation.hidden) if conversation.hidden else ""
        return cls(manager, rows, index_of, hidden, leaf_index, note, masked)

    def calls_for(self, index: int) -> ToolCalls:
        """The tool call row ``index``'s tool result answers, as
        ``{toolCallId: (tool name, arguments)}`` (empty for any other
        entry, or a call found nowhere): from the nearest assistant message
        above the row holding a call of that id (the call that produced
        it), else from the last in the file (as the HTML export pairs them).
        Decodes the messages above it up to that one (at most
        :data:`CALL_LOOKBACK` entries), the whole session's messages only
        when the call is not among them."""
        ids = _call_ids(self.rows.nodes[index].entry)
        if not ids:
            return {}
        call_id = ids[0]
        rows = self.rows
        nodes, parents = rows.nodes, rows.parents
        j = parents[index]
        looked = 0
        while j >= 0 and looked < CALL_LOOKBACK:
            batch: list[int] = []
            while j >= 0 and len(batch) < 32:
                if nodes[j].type == MESSAGE:
                    batch.append(j)
                j = parents[j]
                looked += 1
            rows.decode(batch)
            for k in batch:
                found = _calls_of(nodes[k].entry).get(call_id)
                if found is not None:
                    return {call_id: found}
        if self._all_calls is None:
            every: ToolCalls = {}
            for entry in self.manager.get_entries_of_type("message"):
                every.update(_calls_of(entry))
            self._all_calls = every
        found = self._all_calls.get(call_id)
        return {call_id: found} if found is not None else {}

    def _mask(self, value: Any, *, record: bool) -> Any:
        """``value`` with its secrets masked (``record``: by the record's
        text fields; else every string in it: the rules of
        :mod:`pi_session.web.masking`); ``value`` itself when not
        :attr:`masked`."""
        masking = masking_for(self.masked)
        return masking.record(value) if record else masking.strings(value)

    def shown(self, index: int) -> Row:
        """Row ``index`` as shown: its entry and label with secrets masked
        (when :attr:`masked`; kept once masked)."""
        row = self.rows[index]
        if not self.masked:
            return row
        with self._mask_lock:
            done = self._shown.get(index)
        if done is None:
            done = replace(row, entry=self._mask(row.entry, record=True), label=self._mask(row.label, record=False))
            with self._mask_lock:
                self._shown[index] = done
        return done

    def name(self) -> str | None:
        """The session name as shown (secrets masked when :attr:`masked`)."""
        return self._mask(self.manager.get_session_name(), record=False)

    def header(self) -> dict[str, Any]:
        """The session header as shown (``{}`` when there is none)."""
        return self._mask(self.manager.get_header(), record=True) or {}

    def path_to(self, index: int) -> list[int]:
        """Row numbers from the root to row ``index``."""
        return self.rows.path_to(index)

    def edit_of(self, row: Row) -> tuple[str, Any] | None:
        """The context edit hiding or replacing the row's entry, if any (its
        replacement as shown)."""
        eid = row.entry.get("id")
        edit = self.hidden.get(eid) if isinstance(eid, str) else None
        if edit is None or edit[1] is None or not self.masked:
            return edit
        return (edit[0], self._mask(edit[1], record=False))

    def article(self, index: int) -> str:
        """The viewer's ``<article>`` of row ``index`` (every session
        string escaped; secrets masked when :attr:`masked`)."""
        row = self.shown(index)
        calls = self.calls_for(index)
        if self.masked:
            calls = {k: (name, self._mask(args, record=False)) for k, (name, args) in calls.items()}
        return article(
            index, row.entry, label=row.label, is_leaf=index == self.leaf_index, edit=self.edit_of(row), calls=calls, hidden=row.hidden
        )


CALL_LOOKBACK = 2000
""":meth:`SessionView.calls_for` looks for a tool result's call among at
most this many entries above it before reading every assistant message of
the session."""


def _calls_of(entry: Mapping[str, Any]) -> ToolCalls:
    """The tool calls of an assistant message entry: id → (name, arguments)."""
    message = entry.get("message") if entry.get("type") == MESSAGE else None
    if not isinstance(message, dict) or message.get("role") != ASSISTANT:
        return {}
    content = message.get("content")
    out: ToolCalls = {}
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                out[block["id"]] = (str(block.get("name") or ""), block.get("arguments"))
    return out


def _call_ids(entry: Mapping[str, Any]) -> list[str]:
    """The tool call ids an entry's message refers to (its tool result's
    ``toolCallId``)."""
    message = entry.get("message")
    if isinstance(message, dict) and isinstance(message.get("toolCallId"), str):
        return [message["toolCallId"]]
    return []


def row_json(view: SessionView, row: Row) -> dict[str, Any]:
    """One tree row: ``i`` (row number), ``p`` (parent row, -1 for a root),
    ``id``, ``parentId``, ``type``, ``kind``, ``css``, ``preview`` (one
    line, plain text), ``prefix`` (tree guides), ``label``, ``leaf``,
    ``hidden`` (left out of the conversation view), ``timestamp``."""
    row = view.shown(row.index)
    css, kind, preview = row_preview(row.entry, view.edit_of(row))
    return {
        "i": row.index,
        "p": row.parent,
        "id": row.entry.get("id"),
        "parentId": row.entry.get("parentId"),
        "type": row.entry.get("type"),
        "kind": kind,
        "css": css,
        "preview": preview,
        "prefix": row.shown_prefix if row.shown_prefix is not None else row.prefix,
        "label": row.label,
        "leaf": row.index == view.leaf_index,
        "hidden": row.hidden,
        "timestamp": row.entry.get("timestamp"),
    }


def session_json(view: SessionView, *, offset: int = 0, limit: int = PAGE_ROWS) -> dict[str, Any]:
    """A session's header, name, leaf and one page of its tree rows:
    ``{"id", "name", "header", "leafId", "entryCount", "rowCount",
    "offset", "rows": [row_json…]}``."""
    manager = view.manager
    start = max(0, offset)
    stop = min(len(view.rows), start + max(0, limit))
    view.rows.decode(range(start, stop))
    rows = view.rows[start:stop]
    return {
        "id": manager.get_session_id(),
        "name": view.name(),
        "header": view.header() if manager.get_header() is not None else None,
        "leafId": manager.get_leaf_id(),
        "entryCount": manager.get_entry_count(),
        "rowCount": len(view.rows),
        "offset": max(0, offset),
        "rows": [row_json(view, r) for r in rows],
    }


def entry_json(view: SessionView, entry_id: str) -> dict[str, Any]:
    """One entry as stored, with its row number, label, the ids of the
    path root → it, and its viewer HTML (``html``: escaped).

    Raises:
        ApiError: 404 no such entry."""
    index = view.index_of.get(entry_id)
    if index is None:
        raise ApiError(404, f"{view.manager.get_session_id()}: no entry {entry_id[:80]!r}")
    row = view.shown(index)
    return {
        "entry": row.entry,
        "i": index,
        "label": row.label,
        "path": [view.rows.entry_id(i) for i in view.path_to(index)],
        "html": view.article(index),
    }


def context_json(manager: SessionManager, leaf: str | None) -> dict[str, Any]:
    """What the model sees at ``leaf`` (default: the session's leaf):
    ``{"leafId", "model", "thinkingLevel", "messages"}`` as ``pi-session
    context --json`` prints it (pi 1.6's ``buildSessionContext``).

    Raises:
        ApiError: 404 no such entry."""
    if leaf is not None and leaf != "":
        if manager.get_entry(leaf) is None:
            raise ApiError(404, f"{manager.get_session_id()}: no entry {leaf[:80]!r}")
        manager.branch(leaf)
    proj = manager.build_session_projection()
    out: dict[str, Any] = {"leafId": manager.get_leaf_id(), "model": proj["model"]}
    if "thinkingLevel" in proj:
        out["thinkingLevel"] = proj["thinkingLevel"]
    out["messages"] = proj["messages"]
    return out


def _shown_hit(hit: dict[str, Any], masking: Masking) -> dict[str, Any]:
    """A hit's answer through ``masking`` (its snippet was cut from the
    masked text already; a snippet it changes loses its marks)."""
    shown: dict[str, Any] = masking.strings(hit)
    if shown["snippet"] != hit["snippet"]:
        shown["marks"] = []
    else:
        shown["marks"] = hit["marks"]
    return shown


def search_json(access: StoreAccess, query: str, *, limit: int = 50, redact: bool = True) -> dict[str, Any]:
    """Hits of the index's query language: ``{"query", "hits": [...],
    "warnings"}``; each hit as ``pi-session search --json`` prints it
    (``snippet`` plain text, ``marks`` its matched ranges) but without
    ``location``: the server's file paths stay on the server. With
    ``redact``, every secret in a hit (its snippet, cut from the entry's
    text with its secrets masked; its session name and project) is
    replaced by ``[REDACTED:<kind>]`` (:mod:`pi_session.web.masking`).

    Raises:
        ApiError: 400 a query that does not parse (the message names the
            column); 503 the store cannot be searched."""
    from ..search import QueryError, search

    if not query.strip():
        raise ApiError(400, "empty query")
    # not under the store's lock: a search reads through connections of its
    # own (the files' index, SQLite's per thread, PostgreSQL's pool) and its
    # re: patterns run in a worker process for up to seconds, while every
    # other page goes on
    try:
        masking = masking_for(redact)
        result = search(access.store, query, limit=limit, shown=masking.text if masking.enabled else None)
    except QueryError as exc:
        raise ApiError(400, f"query: {exc}") from None
    except StoreError as exc:
        raise ApiError(503, str(exc)) from None
    # a hit opens by its session id; where the store keeps the file is not the page's business
    hits = [_shown_hit({k: v for k, v in h.to_json().items() if k != "location"}, masking) for h in result.hits]
    return {"query": query, "hits": hits, "warnings": list(result.warnings)}


def _usage_data(access: StoreAccess) -> Any:
    from ..usage import load_usage

    with access.lock:
        try:
            return load_usage(access.store)
        except StoreError as exc:
            raise ApiError(503, str(exc)) from None


def usage_daily_json(
    access: StoreAccess, *, timezone: str | None = None, since: str | None = None, until: str | None = None, masking: Masking = MASKED
) -> dict[str, Any]:
    """The daily usage report in ccusage's shape (``pi-session usage daily
    --json``): ``{"daily": [...], "totals": {...}}``, its strings through
    ``masking``.

    Raises:
        ApiError: 400 a bad date or zone; 503 the store cannot be read."""
    from ..usage import usage_report

    data = _usage_data(access)
    try:
        report: dict[str, Any] = usage_report(data, "daily", timezone=timezone, since=since, until=until).to_json()
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return masking.strings(report)


def usage_breakdown_json(access: StoreAccess, *, timezone: str | None = None, masking: Masking = MASKED) -> dict[str, Any]:
    """The daily report plus all-time sums by model and by project:
    ``{"daily": <usage_daily_json>, "byModel": [{"model", "totalTokens",
    "totalCost"}], "byProject": [{"project", …}]}``, the most expensive
    first (what the costs page shows), its strings through ``masking``.

    Raises:
        ApiError: as :func:`usage_daily_json`."""
    from ..usage import usage_report

    data = _usage_data(access)
    try:
        daily = usage_report(data, "daily", timezone=timezone).to_json()
        out: dict[str, Any] = {"daily": daily}
        for by, key in (("model", "byModel"), ("project", "byProject")):
            sums: dict[str, list[float]] = {}
            for row in usage_report(data, "monthly", timezone=timezone, by=by).rows:
                acc = sums.setdefault(str(row.group), [0, 0.0])
                acc[0] += row.input_tokens + row.output_tokens + row.cache_creation_tokens + row.cache_read_tokens + row.other_tokens
                acc[1] += row.cost
            out[key] = [{by: name, "totalTokens": int(v[0]), "totalCost": v[1]} for name, v in sorted(sums.items(), key=lambda kv: -kv[1][1])]
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return masking.strings(out)


def new_rows(view: SessionView, known: Sequence[str] | set[str] | Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of entries not in ``known`` (ids), each with its article HTML."""
    out = []
    rows = view.rows
    for i, node in enumerate(rows.nodes):
        eid = node.id
        if isinstance(eid, str) and eid not in known:
            item = row_json(view, rows[i])
            item["html"] = view.article(i)
            out.append(item)
    return out
