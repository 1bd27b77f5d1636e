"""``PiConversationStore``: Pydantic AI's ``ConversationStore`` kept as pi
sessions in any pi-session store (**beyond pi**).

The five storage primitives of ``ConversationStore`` (plus
``write_details`` for ``update`` and a one-pass ``read_history``) over a
:class:`pi_session.stores.SessionStore`: session files, SQLite or
PostgreSQL. The layout in the session is :mod:`.layout`, the message
mapping :mod:`.convert`. Every write is one append (or one exclusive
create) of the store, checked against the record's revision under the
store's own append lock (:meth:`pi_session.stores.SessionHandle.append`
with ``expected_size`` and ``on_grown``): a writer that lost the race
writes nothing and gets ``ConversationConflict``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import os
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationDetails,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)

from ...core.paths import sessions_dir
from ...storage import SessionGoneError, parse_line
from ...stores import SessionChangedError, SessionExistsError, SessionNotFoundError, SessionStore, open_store
from .convert import SummaryPart, summary_of
from .layout import (
    ConversationDataError,
    MissingEntryError,
    SessionView,
    StoredRecord,
    entry_lines,
    fork_path_lines,
    header_line,
    name_line,
    pi_leaf,
    pi_session_id_for,
    read_tail,
    read_view,
    record_line,
)

__all__ = ["PiConversationStore"]

T = TypeVar("T")

_TAIL_BYTES = 1 << 16
"""The first window a record is looked for in, from a session's end (grown
fourfold until it is found or the session's start is reached)."""

_WHERE_LIMIT = 100_000
"""How many entry → session hints a store keeps."""

_NO_SUMMARY = SummaryPart("", 0, 0, None, "")

_DELETE_ATTEMPTS = 100
"""How often a delete reads the session again when entries that are not
records were appended meanwhile (a label, say)."""


class PiConversationStore(ConversationStore):
    """A Pydantic AI ``ConversationStore`` whose conversations are pi
    sessions, in any pi-session store (``pip install 'pi-session[pydantic-ai]'``).

    Use it as any ``ConversationStore``::

        store = PiConversationStore("sqlite:///chats.db")
        conversation = await store.load(chat_id) or Conversation(conversation_id=chat_id)
        result = await agent.run(prompt, conversation=conversation)
        await store.save(result)

    Args:
        store: where the sessions live: a :class:`pi_session.stores.SessionStore`,
            or a store URL or path (a directory of session files,
            ``sqlite:///…``, ``postgresql://…``; see
            :func:`pi_session.stores.open_store`); default: pi's own
            sessions directory (``~/.pi/agent/sessions``), where pi finds them.
        cwd: the working directory recorded in new sessions (a file store
            keeps them in that directory's folder, as pi does); default:
            the process's.
        cache_size: how many sessions' contents are kept in memory between
            calls (each checked against the stored session's stamp before
            it is used, so another process's writes are always seen).

    Guarantees (see docs/pydantic-ai.md): behaves as Pydantic AI's
    ``InMemoryConversationStore`` (tested by driving both through the same
    random operations); a save stores its entries and its record in one
    append or not at all, checked against the stored revision under the
    store's lock; ``delete`` removes the conversation's whole session
    (every entry, its branches); a fork's session holds a copy of the
    history it kept, so deleting either leaves the other whole.
    """

    def __init__(self, store: SessionStore | str | os.PathLike[str] | None = None, *, cwd: str | None = None, cache_size: int = 16) -> None:
        if store is None:
            store = sessions_dir()
        self.store: SessionStore = store if isinstance(store, SessionStore) else open_store(store)
        self.cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd is not None else os.getcwd()
        self.cache_size = max(cache_size, 1)
        self._lock = threading.RLock()
        self._views: OrderedDict[str, SessionView] = OrderedDict()
        self._where: dict[str, str] = {}

    def session_id(self, conversation_id: str) -> str:
        """The pi session id a conversation is kept under (see
        :func:`.layout.pi_session_id_for`)."""
        return pi_session_id_for(conversation_id)

    def close(self) -> None:
        """Close the underlying store (its connections)."""
        self.store.close()

    # ------------------------------------------------------------------
    # the primitives (async; the blocking work runs in a worker thread)

    async def _call(self, func: Callable[..., T], *args: Any) -> T:
        def locked() -> T:
            with self._lock:
                return func(*args)

        return await asyncio.to_thread(locked)

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation's record (the last record entry of its session), or None."""
        return await self._call(self._sync_read_record, conversation_id)

    async def read_records(self, *, scope: str | None = None, limit: int | None = None) -> Sequence[ConversationRecord]:
        """The records of every conversation in the store (with ``scope``:
        of that scope), newest ``updated_at`` first, at most ``limit``."""
        return await self._call(self._sync_read_records, scope, limit)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        """Append ``new_entries`` and ``record`` to the conversation's
        session in one append (a new conversation: create its session with
        them, exclusively), checked under the store's lock.

        Raises:
            ConversationConflict: the stored revision is not
                ``expected_revision`` (None: the conversation exists), or
                ``record.head_id`` is in neither the store nor
                ``new_entries``.
            pi_session.integrations.pydantic_ai.UnstorableValueError: a
                value JSON cannot represent; nothing written.
        """
        await self._call(self._sync_write_record, record, list(new_entries), expected_revision)

    async def write_details(
        self,
        conversation_id: str,
        details: ConversationDetails,
        *,
        expected_revision: str,
        expected: ConversationDetails | None = None,
    ) -> ConversationRecord:
        """Append a record entry with the new ``title``/``metadata`` (same
        revision and ``updated_at``); a new title is also the pi session's
        name (a ``session_info`` entry, as ``pi-session name`` writes).

        Raises:
            ConversationConflict: no record with ``expected_revision`` and
                the ``expected`` values.
        """
        return await self._call(self._sync_write_details, conversation_id, dict(details), expected_revision, dict(expected or {}))

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        """Delete the conversation's session: its record, every entry and
        branch (a fork keeps its own copy of what it shares).

        Raises:
            ConversationConflict: no record with ``expected_revision``.
        """
        await self._call(self._sync_delete_record, conversation_id, expected_revision)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        """The conversation entry ``entry_id``.

        Raises:
            MissingEntryError (a LookupError): no session holds it.
        """
        return await self._call(self._sync_read_entry, entry_id)

    async def read_history(self, head_id: str | None, *, limit: int | None = None) -> list[ConversationEntry]:
        """The entries from the first up to ``head_id`` (or its last
        ``limit``), read from its session in one pass.

        Raises:
            MissingEntryError (a LookupError): an entry is missing.
            ConversationDataError: a stored message cannot be read (names
                the session and line).
        """
        return await self._call(self._sync_read_history, head_id, limit)

    # ------------------------------------------------------------------
    # reading sessions

    def _remember(self, view: SessionView) -> None:
        self._views[view.session_id] = view
        self._views.move_to_end(view.session_id)
        while len(self._views) > self.cache_size:
            self._views.popitem(last=False)

    def _note(self, entry_id: str, session_id: str) -> None:
        """Remember which session holds a conversation entry (a hint,
        checked when used; forgotten wholesale past :data:`_WHERE_LIMIT`)."""
        if len(self._where) >= _WHERE_LIMIT:
            self._where.clear()
        self._where[entry_id] = session_id

    def _forget(self, session_id: str) -> None:
        self._views.pop(session_id, None)

    def _view(self, session_id: str, *, complete: bool) -> SessionView | None:
        """The session as stored now (None: no such session): the cached
        view when the session's stamp is unchanged, else read again
        (``complete``: every line; else from the end back to its last record)."""
        cached = self._views.get(session_id)
        try:
            handle = self.store.handle(session_id)
            if cached is not None and (cached.complete or not complete):
                stamp = handle.stamp()
                if stamp is not None and stamp == cached.stamp:
                    self._views.move_to_end(session_id)
                    return cached
            if complete:
                read = handle.read_lines_from(0)
                view = read_view(session_id, handle.location, read.lines, read.size, read.stamp)
            else:
                stamp = handle.stamp()
                window = _TAIL_BYTES
                while True:
                    offset = max((stamp[0] if stamp else 0) - window, 0)
                    read = handle.read_lines_from(offset)
                    view = read_tail(session_id, handle.location, read.lines, read.size, read.stamp)
                    if view.record is not None or read.start == 0:
                        break
                    window *= 4
                    stamp = read.stamp
        except (SessionNotFoundError, FileNotFoundError):
            self._forget(session_id)
            return None
        self._remember(view)
        return view

    def _record_of(self, conversation_id: str) -> tuple[SessionView, StoredRecord] | None:
        view = self._view(pi_session_id_for(conversation_id), complete=False)
        if view is None or view.record is None or view.record.conversation_id != conversation_id:
            return None
        return view, view.record

    def _decode(self, view: SessionView, stored: StoredRecord) -> ConversationRecord:
        """``stored``'s record; one that cannot be read is reported with
        its line (read again in full when only the tail was read).

        Raises:
            ConversationDataError: it cannot be read.
        """
        try:
            return stored.record(view.location)
        except ConversationDataError:
            if stored.line is None:
                full = self._view(view.session_id, complete=True)
                if full is not None and full.record is not None and full.record.entry_id == stored.entry_id:
                    full.record.record(full.location)
            raise

    def _sync_read_record(self, conversation_id: str) -> ConversationRecord | None:
        found = self._record_of(conversation_id)
        if found is None:
            return None
        view, stored = found
        record = self._decode(view, stored)
        for entry_id in (record.head_id, *record.branches):
            if entry_id is not None:
                self._note(entry_id, view.session_id)
        return record

    def _sync_read_records(self, scope: str | None, limit: int | None) -> list[ConversationRecord]:
        records: list[ConversationRecord] = []
        for session_id in self.store.find("", limit=sys.maxsize):
            view = self._view(session_id, complete=False)
            if view is None or view.record is None:
                continue
            record = self._decode(view, view.record)
            if pi_session_id_for(record.conversation_id) != session_id:
                continue  # a record copied into another session
            if scope is None or record.scope == scope:
                records.append(record)
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    def _holder(self, entry_id: str) -> SessionView | None:
        """The complete view of the session holding conversation entry
        ``entry_id``: where it was last seen (a record naming it, a session
        read), else found by reading every session of the store."""
        known = [self._where[entry_id]] if entry_id in self._where else []
        known += [view.session_id for view in reversed(self._views.values()) if view.complete and entry_id in view.carriers]
        for session_id in dict.fromkeys(known):
            view = self._view(session_id, complete=True)
            if view is not None and entry_id in view.carriers:
                self._note(entry_id, session_id)
                return view
        for session_id in self.store.find("", limit=sys.maxsize):
            view = self._view(session_id, complete=True)
            if view is not None and entry_id in view.carriers:
                self._note(entry_id, session_id)
                return view
        return None

    def _sync_read_history(self, head_id: str | None, limit: int | None) -> list[ConversationEntry]:
        if head_id is None or limit == 0:
            return []
        view = self._holder(head_id)
        if view is None:
            raise MissingEntryError(f"{self.store.url}: no session holds entry {head_id}")
        return view.history(head_id, limit)

    def _sync_read_entry(self, entry_id: str) -> ConversationEntry:
        view = self._holder(entry_id)
        if view is None:
            raise MissingEntryError(f"{self.store.url}: no session holds entry {entry_id}")
        return view.entry(entry_id, view.carriers[entry_id])

    # ------------------------------------------------------------------
    # writing

    def _sync_write_record(self, record: ConversationRecord, new_entries: list[ConversationEntry], expected_revision: str | None) -> None:
        conversation_id = record.conversation_id
        session_id = pi_session_id_for(conversation_id)
        view = self._view(session_id, complete=False)
        stored = view.record if view is not None else None
        if stored is not None and stored.conversation_id != conversation_id:
            where = view.location if view is not None else session_id
            raise ConversationConflict(conversation_id, message=f"{where}: the session holds another conversation, {stored.conversation_id!r}")
        if (stored.revision if stored is not None else None) != expected_revision:
            raise ConversationConflict(conversation_id)
        new_ids = {entry.id for entry in new_entries}
        head = record.head_id
        if view is None:
            self._create(session_id, record, new_entries, head is not None and head not in new_ids)
            return
        if head is not None and head not in new_ids and head != (stored.head_id if stored is not None else None):
            complete = self._view(session_id, complete=True)
            if complete is None or head not in complete.carriers:
                raise ConversationConflict(conversation_id)
            view = complete
        self._append_record(view, record, new_entries, expected_revision, details_only=False)

    def _create(self, session_id: str, record: ConversationRecord, new_entries: list[ConversationEntry], copies_head: bool) -> None:
        """Create a new conversation's session: the header (a fork's names
        the session it was forked from), the copied path of a fork, the new
        entries and the record, exclusively and whole."""
        head = record.head_id
        lines: list[bytes] = []
        parent_session: str | None = None
        instructions: str | None = None
        if copies_head:
            assert head is not None
            source = self._holder(head)
            if source is None:
                raise ConversationConflict(record.conversation_id)  # released by a concurrent delete
            parent_session = source.location
            lines = fork_path_lines(source, head)
            if source.record is not None and source.record.head_id == head:
                instructions = source.record.instructions
        entries_lines, after = entry_lines(new_entries, new_entries[0].parent_id if new_entries else None, None)
        lines += entries_lines
        if new_entries and head == new_entries[-1].id:
            instructions = after
        lines.append(record_line(record, head, instructions))
        lines.insert(0, header_line(session_id, self.cwd, datetime.now(timezone.utc), parent_session))
        try:
            self.store.create(lines)
        except SessionExistsError:
            raise ConversationConflict(record.conversation_id) from None
        for entry in new_entries:
            self._note(entry.id, session_id)
        if head is not None:
            self._note(head, session_id)

    def _append_record(
        self,
        view: SessionView,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        expected_revision: str | None,
        *,
        details_only: bool,
    ) -> ConversationRecord:
        """Append ``new_entries`` and ``record`` (its title and metadata
        taken from the stored record unless ``details_only``) to the
        session of ``view``, checked under the store's append lock: a
        record appended since with another revision (or, for
        ``details_only``, any record) raises ConversationConflict, nothing
        written; other entries appended since are continued after when
        they leave the context as it is."""
        conversation_id = record.conversation_id
        state: dict[str, Any] = {}
        if not view.complete and any((summary_of(entry.message) or _NO_SUMMARY).kept_before for entry in new_entries):
            complete = self._view(view.session_id, complete=True)
            if complete is None:
                raise ConversationConflict(conversation_id)
            view = complete  # a summary's kept messages are looked up in the stored history

        def build(stored: StoredRecord | None, trailer: list[dict[str, Any]]) -> list[bytes]:
            final = record
            if stored is not None and not details_only:
                current = self._decode(view, stored)
                final = dataclasses.replace(record, title=current.title, metadata=copy.deepcopy(current.metadata))
            state["record"] = final
            leaf = pi_leaf(stored, trailer)
            head_before = stored.head_id if stored is not None else None
            instructions_before = stored.instructions if stored is not None else None
            lines: list[bytes] = []
            after: str | None = None
            if new_entries:
                first = new_entries[0]
                if stored is not None and first.parent_id == head_before:
                    attach, instructions = leaf, instructions_before
                else:
                    attach, instructions = first.parent_id, None
                lines, after = entry_lines(new_entries, attach, instructions, view.chain_of if view.complete else None)
            head = final.head_id
            parent: str | None
            instructions_at_head: str | None
            if new_entries and head == new_entries[-1].id:
                parent, instructions_at_head = head, after
            elif stored is not None and head == head_before:
                parent, instructions_at_head = leaf, instructions_before
            else:
                parent, instructions_at_head = head, None
            if details_only and stored is not None and final.title != self._decode(view, stored).title:
                info_id = str(uuid.uuid4())
                lines.append(name_line(info_id, parent, final.title, final.updated_at))
                parent = info_id
            lines.append(record_line(final, parent, instructions_at_head))
            return lines

        def on_grown(foreign: list[bytes]) -> list[bytes]:
            stored, trailer = view.record, list(view.trailer)
            for raw in foreign:
                parsed = parse_line(raw[:-1] if raw.endswith(b"\n") else raw, 0)
                entry = parsed.record if parsed.ok else None
                if not (isinstance(entry, dict) and isinstance(entry.get("id"), str) and isinstance(entry.get("type"), str)):
                    continue
                probe = SessionView(view.session_id, view.location, 0, None)
                probe.take(entry, None)
                if probe.record is not None:
                    if details_only or probe.record.revision != expected_revision:
                        raise ConversationConflict(conversation_id)
                    stored, trailer = probe.record, []  # a title or metadata update: kept
                else:
                    trailer.append(entry)
            return build(stored, trailer)

        lines = build(view.record, list(view.trailer))
        handle = self.store.handle(view.session_id)
        try:
            result = handle.append(lines, expected_size=view.size, on_grown=on_grown, session_id=view.session_id)
        except (SessionGoneError, SessionNotFoundError, FileNotFoundError):
            self._forget(view.session_id)
            raise ConversationConflict(conversation_id) from None
        written = state.get("record", record)
        if result.foreign or result.notes:
            self._forget(view.session_id)
        else:
            self._extend(view, lines, result.size, result.stamp)
        for entry in new_entries:
            self._note(entry.id, view.session_id)
        if written.head_id is not None:
            self._note(written.head_id, view.session_id)
        return written

    def _extend(self, view: SessionView, lines: list[bytes], size: int, stamp: Any) -> None:
        """Add this process's own append to the cached view (so the next
        call needs no read)."""
        for raw in lines:
            view.line_count += 1
            parsed = parse_line(raw[:-1], view.line_count)
            if parsed.ok and isinstance(parsed.record, dict):
                view.take(parsed.record, view.line_count if view.complete else None)
        view.size, view.stamp = size, stamp
        self._remember(view)

    def _sync_write_details(
        self, conversation_id: str, details: dict[str, Any], expected_revision: str, expected: dict[str, Any]
    ) -> ConversationRecord:
        found = self._record_of(conversation_id)
        if found is None or found[1].revision != expected_revision:
            raise ConversationConflict(conversation_id)
        view, stored = found
        current = self._decode(view, stored)
        if any(getattr(current, key) != value for key, value in expected.items()):
            raise ConversationConflict(conversation_id)
        changes = {key: copy.deepcopy(details[key]) for key in ("title", "metadata") if key in details}
        updated = dataclasses.replace(current, **changes)
        return self._append_record(view, updated, [], expected_revision, details_only=True)

    def _sync_delete_record(self, conversation_id: str, expected_revision: str) -> None:
        session_id = pi_session_id_for(conversation_id)
        for _ in range(_DELETE_ATTEMPTS):
            found = self._record_of(conversation_id)
            if found is None or found[1].revision != expected_revision:
                raise ConversationConflict(conversation_id)
            view = found[0]
            try:
                self.store.delete(session_id, expected_size=view.size)
            except SessionChangedError:
                self._forget(session_id)
                continue  # appended to since it was read: check the revision again
            self._forget(session_id)
            return
        raise ConversationConflict(conversation_id, message=f"{session_id}: the session kept changing while it was being deleted")

    def __repr__(self) -> str:
        return f"PiConversationStore({self.store.url!r})"

