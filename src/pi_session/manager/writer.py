"""The write path of a session, whatever its store: :class:`SessionWriter`
writes a :class:`pi_session.SessionManager`'s records through its
:class:`pi_session.stores.SessionHandle`.

The rules, once for files, databases and memory:

- first write (pi 1.6): a new session writes nothing until it holds a user
  or assistant message (or :meth:`pi_session.SessionManager.save`); then the
  header and every entry are created at once, exclusively and atomically
  (:meth:`~pi_session.stores.SessionHandle.create`);
- creating is idempotent under races (beyond pi, which writes a second
  file with the same id): when the create finds that another writer created
  the session id first (:meth:`~pi_session.stores.SessionHandle.existing`
  names it, and its header has the id), the winner's session is loaded and
  the pending entries are appended onto its last entry, under the store's
  append lock like any later write: this writer's header is dropped, its
  first entry gets the winner's last entry as parent, and an entry id the
  winner holds already gets a new id (references to it follow). Only
  ``concurrent="strict"`` refuses instead
  (:class:`~pi_session.storage.ConcurrentAppendError`, nothing written);
- later writes append the entries not yet stored, one line each, under the
  store's lock, with the size last read or written as ``expected_size``: the
  stale-leaf rule (:mod:`pi_session.manager.stale_leaf`) decides what happens when
  another writer appended since;
- a later write goes only into the session it continues (beyond pi, whose
  append re-creates a deleted file holding just the new entry, without a
  header): a session deleted since it was read, or a file replaced by one
  that does not hold it, is refused
  (:class:`~pi_session.storage.SessionGoneError`, nothing written; the
  manager takes the entry back out of memory, as for any failed write);
- a failed write leaves the count of stored records exact (an append that
  failed part way counts the lines that did reach the store), so the
  manager can take back exactly the entries that are not stored.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from typing import Any, Literal

from ..core import jsonio
from ..core.ids import new_entry_id
from ..entries.records import UNDEFINED
from .stale_leaf import follow_foreign_lines
from ..storage import AppendError, ConcurrentAppendError, Durability, SessionFileError, SessionStamp
from ..stores.base import StoreError
from ..stores.handle import SessionHandle
from ..session.tree import SessionTree
from ..entries.questions import MESSAGE

__all__ = ["SessionWriter", "is_conversation"]

_CONVERSATION_ROLES = ("user", "assistant")

_ID_REFERENCES = ("parentId", "targetId", "firstKeptEntryId", "fromId")
"""The fields of an entry that name another entry of the session."""


def is_conversation(record: Mapping[str, Any]) -> bool:
    """A user or assistant message entry: the first one makes a new session
    file appear (pi 1.6; 0.73.1 waited for an assistant message)."""
    if record.get("type") != MESSAGE:
        return False
    message = record.get("message")
    return isinstance(message, dict) and message.get("role") in _CONVERSATION_ROLES


class SessionWriter:
    """Which records of a session are stored, and the writes that store the
    rest.

    Args:
        handle: the session's handle.

    Attributes:
        handle: where the records go.
        written: ``records[:written]`` are stored.
        created: the session exists in the store (holds ``records[:written]``).
        known_size: the stored size as last read or written by this
            process (None: unknown, no stale-leaf check).
        known_stamp: the stored session's
            :meth:`~pi_session.stores.SessionHandle.stamp` as last read or
            written by this process (None: unknown; then only the size
            tells a change).
        planned_leaf: the leaf an entry being written was planned at (see
            :func:`pi_session.manager.stale_leaf.follow_foreign_lines`), else
            ``UNDEFINED``.
        joined: set when a first write continued the session another
            writer created first (the records were replaced: the owner of
            the records rebuilds its index): the entry ids given new ones,
            old → new; None otherwise (see :meth:`take_joined`).
    """

    def __init__(self, handle: SessionHandle) -> None:
        self.handle = handle
        self.written = 0
        self.created = False
        self.known_size: int | None = None
        self.known_stamp: SessionStamp | None = None
        self.planned_leaf: Any = UNDEFINED
        self.joined: dict[str, str] | None = None

    def restart(self, handle: SessionHandle) -> None:
        """A new session, nothing stored yet, to be created through ``handle``."""
        self.handle = handle
        self.written = 0
        self.created = False
        self.known_size = None
        self.known_stamp = None
        self.joined = None

    def take_joined(self) -> dict[str, str] | None:
        """:attr:`joined` (then cleared)."""
        joined, self.joined = self.joined, None
        return joined

    def stored(self, count: int, size: int | None, stamp: SessionStamp | None = None) -> None:
        """The first ``count`` records are stored (a session just read:
        ``size`` is its position; ``stamp`` its
        :meth:`~pi_session.stores.SessionHandle.stamp`, taken before it was
        read, kept only when it has that size)."""
        self.written = count
        self.created = True
        self.known_size = size
        self.known_stamp = stamp if stamp is not None and stamp[0] == size else None

    def changed(self) -> bool:
        """Whether the stored session changed since this writer last read
        or wrote it: its stamp is not the one known (another writer
        appended, or rewrote it, also to the same length, or deleted it).
        A session not created yet changed when another writer created one
        with its id (:meth:`~pi_session.stores.SessionHandle.existing`
        names a non-empty one). False when nothing is known (after a failed
        append)."""
        handle = self.handle
        if not self.created:
            other = handle.existing()
            return other is not None and bool(other.size())
        if self.known_stamp is not None:
            return handle.stamp() != self.known_stamp
        if self.known_size is None:
            return False
        return handle.size() != self.known_size

    def unsaved(self, records: MutableSequence[dict[str, Any]]) -> int:
        """How many entries of ``records`` (header first) are not stored."""
        return len(records) - max(self.written, 1)

    def pending(self, records: MutableSequence[dict[str, Any]]) -> bool:
        """Whether some of ``records`` are not stored yet."""
        return self.written < len(records)

    def write(
        self,
        records: MutableSequence[dict[str, Any]],
        tree: SessionTree,
        notes: list[str],
        *,
        due: bool,
        durability: Durability,
        concurrent: Literal["follow", "strict"],
    ) -> None:
        """Store the records not stored yet.

        Args:
            records: the session's records (header first); entries another
                writer appended are inserted before the pending ones (and
                added to ``tree``) when they are followed.
            tree: the session's index.
            notes: where notes of repairs and followed writers go.
            due: the session may be created now (it holds a user or
                assistant message, or ``save()``); ignored once created.
            durability: see :class:`pi_session.storage.Durability`.
            concurrent: the stale-leaf mode.

        Raises:
            FileExistsError: the new session exists already and is not a
                session with this id (another file, a file of another
                session named with this id); nothing written.
            pi_session.storage.AppendError: an append failed part way
                (:attr:`written` counts the lines that were stored).
            pi_session.storage.ConcurrentAppendError,
            pi_session.storage.LeafMovedError: see
                :func:`pi_session.manager.stale_leaf.follow_foreign_lines`; also
                (strict) another writer created the new session first.
            pi_session.storage.SessionGoneError: the session was deleted
                since it was read, or its file replaced by one that does
                not hold it; nothing written.
        """
        if self.written >= len(records):
            return
        if not self.created:
            if not due:
                return
            lines = [jsonio.dumps_line(r) for r in records]
            try:
                size = self.handle.create(lines, durability=durability)
            except FileExistsError:
                if not self._continue_existing(records, notes, concurrent):
                    raise
                # now the winner's session: the pending entries are appended below
            else:
                # the stamp is read after the create: kept only when no other
                # writer appended in between (it has the size written)
                self.stored(len(records), size, self.handle.stamp())
                return

        def on_grown(found: list[bytes]) -> list[bytes] | None:
            pending = records[self.written :]
            tip = records[self.written - 1].get("id") if self.written > 1 else None
            followed = follow_foreign_lines(
                found,
                known=tree.by_id,
                pending=pending,
                tip=tip,
                concurrent=concurrent,
                planned_leaf=self.planned_leaf,
                where=self.handle.location,
            )
            if followed is None:
                return None
            records[self.written : self.written] = followed.foreign
            self.written += len(followed.foreign)
            for record in followed.foreign:
                tree.add(record)
            if followed.new_parent_id is not None:
                pending[0]["parentId"] = followed.new_parent_id
            notes.append(followed.note)
            return [jsonio.dumps_line(r) for r in pending]

        lines = [jsonio.dumps_line(r) for r in records[self.written :]]
        session_id = records[0].get("id")
        try:
            result = self.handle.append(
                lines,
                durability=durability,
                expected_size=self.known_size,
                on_grown=on_grown,
                session_id=session_id if isinstance(session_id, str) else None,
            )
        except AppendError as exc:
            self.written += exc.lines_written
            self.known_size = None  # unknown now: stop checking rather than misjudge
            self.known_stamp = None
            raise
        notes.extend(result.notes)
        self.written = len(records)
        self.known_size = result.size
        self.known_stamp = result.stamp

    def _continue_existing(self, records: MutableSequence[dict[str, Any]], notes: list[str], concurrent: str) -> bool:
        """The create was refused: when another writer created a session
        with this id first, switch to it (the module docstring's rule) and
        return True; False when what exists is something else."""
        winner = self.handle.existing()
        if winner is None:
            return False
        try:
            stamp = winner.stamp()
            sf = winner.read()
        except (OSError, SessionFileError, StoreError):
            return False
        session_id = records[0].get("id")
        if sf.header is None or sf.header.get("id") != session_id or sf.migrated_from is not None:
            return False
        if concurrent == "strict":
            raise ConcurrentAppendError(winner.location, len(sf.entries))
        pending = records[1:]
        taken: set[Any] = {e.get("id") for e in sf.entries}
        in_use: set[Any] = taken | {e.get("id") for e in pending}
        renamed: dict[str, str] = {}
        for entry in pending:
            if entry.get("id") in taken:
                new_id = new_entry_id(in_use)
                in_use.add(new_id)
                renamed[entry["id"]] = new_id
                entry["id"] = new_id
        for entry in pending if renamed else ():
            for key in _ID_REFERENCES:
                value = entry.get(key)
                if isinstance(value, str) and value in renamed:
                    entry[key] = renamed[value]
        tip = sf.entries[-1].get("id") if sf.entries else None
        if pending and pending[0].get("parentId") is None:
            pending[0]["parentId"] = tip
        records[:] = [sf.header, *sf.entries, *pending]
        self.handle = winner
        self.stored(1 + len(sf.entries), sf.size, stamp)
        self.joined = renamed
        count = len(sf.entries)
        notes.append(
            f"{winner.location}: another writer created session {session_id} first; its {count} "
            f"entr{'y was' if count == 1 else 'ies were'} loaded, and this session's entries continue after them"
            + (f" (from {tip})" if tip is not None else "")
        )
        return True

    def flush(self) -> None:
        """Make what was appended durable (``durability="batch"``)."""
        if self.written:
            self.handle.flush()
