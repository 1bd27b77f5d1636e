"""The write path of a session, whatever its store: :class:`SessionWriter`
writes a :class:`pi_session.SessionManager`'s records through its
:class:`pi_session.stores.SessionHandle`.

The rules, once for files, databases and memory:

- first write (pi 1.6): a new session writes nothing until it holds a user
  or assistant message (or :meth:`pi_session.SessionManager.save`); then the
  header and every entry are created at once, exclusively and atomically
  (:meth:`~pi_session.stores.SessionHandle.create`);
- later writes append the entries not yet stored, one line each, under the
  store's lock, with the size last read or written as ``expected_size``: the
  stale-leaf rule (:mod:`pi_session.stale_leaf`) decides what happens when
  another writer appended since;
- a failed write leaves the count of stored records exact (an append that
  failed part way counts the lines that did reach the store), so the
  manager can take back exactly the entries that are not stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from . import jsonio
from .records import UNDEFINED
from .stale_leaf import follow_foreign_lines
from .storage import AppendError, Durability
from .stores.handle import SessionHandle
from .tree import SessionTree

__all__ = ["SessionWriter", "is_conversation"]

_CONVERSATION_ROLES = ("user", "assistant")


def is_conversation(record: Mapping[str, Any]) -> bool:
    """A user or assistant message entry: the first one makes a new session
    file appear (pi 1.6; 0.73.1 waited for an assistant message)."""
    if record.get("type") != "message":
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
        planned_leaf: the leaf an entry being written was planned at (see
            :func:`pi_session.stale_leaf.follow_foreign_lines`), else
            ``UNDEFINED``.
    """

    def __init__(self, handle: SessionHandle) -> None:
        self.handle = handle
        self.written = 0
        self.created = False
        self.known_size: int | None = None
        self.planned_leaf: Any = UNDEFINED

    def restart(self, handle: SessionHandle) -> None:
        """A new session, nothing stored yet, to be created through ``handle``."""
        self.handle = handle
        self.written = 0
        self.created = False
        self.known_size = None

    def stored(self, count: int, size: int | None) -> None:
        """The first ``count`` records are stored (a session just read:
        ``size`` is its position)."""
        self.written = count
        self.created = True
        self.known_size = size

    def pending(self, records: list[dict[str, Any]]) -> bool:
        """Whether some of ``records`` are not stored yet."""
        return self.written < len(records)

    def write(
        self,
        records: list[dict[str, Any]],
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
            FileExistsError: the new session exists already; nothing written.
            pi_session.storage.AppendError: an append failed part way
                (:attr:`written` counts the lines that were stored).
            pi_session.storage.ConcurrentAppendError,
            pi_session.storage.LeafMovedError: see
                :func:`pi_session.stale_leaf.follow_foreign_lines`.
        """
        if self.written >= len(records):
            return
        if not self.created:
            if not due:
                return
            lines = [jsonio.dumps_line(r) for r in records]
            self.known_size = self.handle.create(lines, durability=durability)
            self.written = len(records)
            self.created = True
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
        try:
            result = self.handle.append(lines, durability=durability, expected_size=self.known_size, on_grown=on_grown)
        except AppendError as exc:
            self.written += exc.lines_written
            self.known_size = None  # unknown now: stop checking rather than misjudge
            raise
        notes.extend(result.notes)
        self.written = len(records)
        self.known_size = result.size

    def flush(self) -> None:
        """Make what was appended durable (``durability="batch"``)."""
        if self.written:
            self.handle.flush()
