"""One session of a store: :class:`SessionHandle`, what
:class:`pi_session.SessionManager` reads and writes through, whatever the
store (a file, a database row set, memory). A store hands them out
(:meth:`pi_session.stores.SessionStore.handle`, ``new_handle``).

Also the in-memory handle (:class:`MemoryHandle`, behind
:meth:`pi_session.SessionManager.in_memory`) and :class:`FailingHandle`, a
wrapper that makes the next create or append of any handle fail, before or
after writing: the seam tests inject write failures through (as httpx tests
use ``MockTransport``), e.g. ``SessionManager.open(FailingHandle(handle))``.

The contract every handle keeps (the stale-leaf protocol of pi-session's
``concurrent`` option, beyond pi):

- :meth:`~SessionHandle.create` writes the whole session or nothing and
  refuses one that exists (:class:`FileExistsError`; a store's
  :class:`~pi_session.stores.SessionExistsError` is one), also one of the
  same id another writer created at the same moment (a file store: any
  file named ``<timestamp>_<id>.jsonl`` in the directory, checked under
  the directory's creation lock); :meth:`~SessionHandle.existing` then
  names that session, for the write path to continue it;
- :meth:`~SessionHandle.append` writes complete lines atomically per line
  (files) or per call (databases); with ``expected_size`` and ``on_grown``
  it hands the lines other writers appended since to ``on_grown`` while the
  session is locked, and writes what that returns (or nothing, if it raises);
  with ``session_id`` it refuses (:class:`pi_session.storage.SessionGoneError`,
  nothing written) a session deleted since, or a file replaced by one that
  does not hold that session;
- positions are byte counts of the session's lines (the file size);
  :meth:`~SessionHandle.stamp` tells whether the stored session changed at
  all (an append, or a rewrite of the same length).
"""

from __future__ import annotations

import errno
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..storage import (
    AppendError,
    AppendResult,
    Durability,
    SessionFile,
    SessionFileError,
    SessionGoneError,
    SessionStamp,
    read_session_lines,
)

__all__ = ["SessionHandle", "MemoryHandle", "FailingHandle", "OnGrown", "LinesRead", "foreign_lines", "lines_from"]

OnGrown = Callable[[list[bytes]], Sequence[bytes] | None]
"""``on_grown(foreign_lines) -> lines | None``: called inside an append,
while the session is locked, with the lines other writers appended since
``expected_size``; returns the lines to write instead, None to keep them, or
raises to write nothing (exactly as for
:func:`pi_session.storage.append_lines_checked`)."""


@dataclass(frozen=True)
class LinesRead:
    """What :meth:`SessionHandle.read_lines_from` read, as one consistent
    snapshot of the session.

    Attributes:
        lines: the complete lines (each ending in ``\\n``) that start at
            or after the offset asked for, in order; a last line without
            ``\\n`` (one being written, or torn by a crash) is left out.
        start: the byte offset of ``lines[0]`` (the end of the complete
            lines when there are none).
        size: the byte count of the session up to the end of ``lines``:
            the position to pass back as ``expected_size`` when appending.
        stamp: the session's :data:`pi_session.storage.SessionStamp` when
            read (None when the store cannot tell).
    """

    lines: list[bytes]
    start: int
    size: int
    stamp: SessionStamp | None


def lines_from(data: bytes, offset: int, stamp: SessionStamp | None, *, base: int = 0) -> LinesRead:
    """:class:`LinesRead` of the complete lines of ``data`` that start at
    or after byte ``offset`` (a line that starts before it is skipped
    whole; an unterminated last line is left out).

    Args:
        data: the session's content from byte ``base`` on (``base`` > 0:
            a reader that read only the end; ``data`` must then start at
            or before ``offset - 1``, so the line boundary at ``offset``
            can be seen).
    """
    end = data.rfind(b"\n") + 1  # the end of the complete lines in data
    start = min(max(offset - base, 0), len(data))
    if start > 0 and data[start - 1 : start] != b"\n":
        nl = data.find(b"\n", start)
        start = len(data) if nl < 0 else nl + 1
    if end <= start:
        return LinesRead([], base + start, base + start, stamp)
    lines = [line + b"\n" for line in data[start : end - 1].split(b"\n")]
    return LinesRead(lines, base + start, base + end, stamp)


class SessionHandle(ABC):
    """One session in a store, named or still to be created.

    Attributes:
        location: how messages name the session: its file path, its
            locator ``<store url>#<id>`` (password masked), or
            ``<memory>``.
        path: the session's file, for a file handle; else None.
    """

    location: str = ""
    path: Path | None = None

    @abstractmethod
    def exists(self) -> bool:
        """Whether the session exists (was created) already."""

    @abstractmethod
    def read(self, *, migrate: bool = True, lazy: bool | Literal["always"] = False) -> SessionFile:
        """The session as the tolerant reader reads it
        (:func:`pi_session.storage.read_session_file` /
        :func:`~pi_session.storage.read_session_lines`: records, damage
        reports, in-memory migration of v1/v2); ``size`` is the position to
        pass back as ``expected_size``. ``lazy``: a file's entries may be
        indexed and decoded on access, the same values
        (``read_session_file(lazy="auto")``: when its context needs far
        fewer than all of them); ``"always"``: a file's entries are indexed
        whatever its shape (``read_session_file(lazy=True)``, for a reader
        of a few entries of a long session). Other stores read everything.

        Raises:
            FileNotFoundError, pi_session.stores.SessionNotFoundError: it
                does not exist.
            pi_session.storage.SessionFileError: unreadable, or its first
                record is not a session header.
        """

    @abstractmethod
    def read_lines_from(self, offset: int) -> LinesRead:
        """The session's complete lines from byte ``offset`` on, with its
        size and stamp, read as one snapshot (see :class:`LinesRead`): how a
        reader that knows a session up to some position reads only what
        was appended since, or reads its tail, without reading the rest.

        Raises:
            FileNotFoundError, pi_session.stores.SessionNotFoundError: it
                does not exist.
        """

    @abstractmethod
    def create(self, lines: Sequence[bytes], *, durability: Durability = Durability.ENTRY) -> int:
        """Create the session from its lines (the header first), exclusively
        and atomically: all lines or none.

        Returns:
            The session's size in bytes.

        Raises:
            FileExistsError: the session exists already (nothing written).
            OSError, pi_session.stores.StoreError: the write failed
                (nothing written).
        """

    def existing(self) -> SessionHandle | None:
        """After :meth:`create` refused (:class:`FileExistsError`): the
        handle of the session with this handle's id that exists already
        (another writer created it first), or None when the handle cannot
        name one (then the refusal stands). What it names may still be
        something else (the caller reads it and compares the header's id)."""
        return None

    @abstractmethod
    def append(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
        session_id: str | None = None,
    ) -> AppendResult:
        """Append complete lines (each ending in ``\\n``); see the module
        docstring for ``expected_size`` / ``on_grown``.

        Args:
            session_id: the id the stored session must still have (a
                writer continuing a session it read); None: not checked,
                and a missing file is created.

        Returns:
            :class:`pi_session.storage.AppendResult` (``notes`` of repairs,
            the new ``size``, the ``foreign`` lines seen, the ``stamp``
            after the append).

        Raises:
            pi_session.storage.AppendError: a write failed part way;
                ``lines_written`` of ``lines`` are stored.
            pi_session.storage.SessionGoneError: (``session_id``) the
                session was deleted, or its file replaced by one that does
                not hold it; nothing written.
            whatever ``on_grown`` raises (nothing written).
        """

    @abstractmethod
    def replace_lines(self, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        """Replace the session's lines ``old`` (as read) with ``new`` (the
        same session, e.g. its secrets redacted): a file is rewritten
        atomically (:func:`pi_session.storage.atomic_rewrite`: temp file,
        fsync, rename; owner and mode kept; no backup), a database session
        in one transaction. Refused, nothing changed, when the session no
        longer holds exactly ``old``.

        Raises:
            FileNotFoundError, pi_session.stores.SessionNotFoundError: it
                does not exist.
            pi_session.storage.SessionFileError,
            pi_session.stores.StoreError: it changed since ``old`` was
                read (or ``new`` names another session).
        """

    @abstractmethod
    def size(self) -> int | None:
        """The session's size in bytes now, or None when it does not exist."""

    def stamp(self) -> SessionStamp | None:
        """What the stored session looks like now
        (:data:`pi_session.storage.SessionStamp`: the size first, then
        whatever else the store can tell: a file's inode and times, a
        database row's record count and write time), or None when it does
        not exist. Two equal stamps mean the session did not change in
        between; here: the size only."""
        size = self.size()
        return None if size is None else (size,)

    def flush(self) -> None:
        """Make appended lines durable (``durability="batch"``); a no-op
        where every write is durable or nothing is on disk."""

    def keep_migration(self, sf: SessionFile, *, read_only: bool) -> tuple[str, bool]:
        """Called after :meth:`read` migrated a v1/v2 session in memory
        (``sf.migrated_from``): store the migration when the handle can and
        ``read_only`` is False (files: an atomic rewrite with a backup).

        Returns:
            ``(note, read_only)``: a one-line note for
            :attr:`pi_session.SessionManager.notes`, and whether the session
            must be opened read-only (its stored records are still old).
        """
        return (
            f"{self.location}: version {sf.migrated_from} session migrated in memory only, opened read-only "
            "(export it and import it again to migrate it)",
            True,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


def foreign_lines(data: bytes, expected_size: int) -> list[bytes]:
    """The complete, non-blank lines of a session's content ``data`` from
    ``expected_size`` on (from the start of the line holding it, when it is
    not a line boundary): what other writers appended since."""
    start = min(expected_size, len(data))
    if start > 0 and data[start - 1 : start] != b"\n":
        start = data.rfind(b"\n", 0, start) + 1
    return [line + b"\n" for line in data[start:].split(b"\n")[:-1] if line.strip()]


class MemoryHandle(SessionHandle):
    """A session held as lines in memory (never on disk): what
    :meth:`pi_session.SessionManager.in_memory` writes to, and a store a
    test can look into.

    Args:
        lines: the session's lines when it exists already (the header
            first); None for a session still to be created.
        location: how messages name it.

    Attributes:
        lines: the stored lines (None until created).
    """

    def __init__(self, lines: Sequence[bytes] | None = None, *, location: str = "<memory>") -> None:
        self.lines: list[bytes] | None = list(lines) if lines is not None else None
        self.location = location

    def exists(self) -> bool:
        return self.lines is not None

    def read(self, *, migrate: bool = True, lazy: bool | Literal["always"] = False) -> SessionFile:
        if self.lines is None:
            raise FileNotFoundError(errno.ENOENT, "no such session", self.location)
        return read_session_lines(self.lines, name=self.location, migrate=migrate)

    def create(self, lines: Sequence[bytes], *, durability: Durability = Durability.ENTRY) -> int:
        if self.lines is not None:
            raise FileExistsError(errno.EEXIST, "session exists", self.location)
        self.lines = list(lines)
        return sum(map(len, self.lines))

    def existing(self) -> SessionHandle | None:
        return self if self.lines is not None else None

    def append(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
        session_id: str | None = None,
    ) -> AppendResult:
        if self.lines is None:
            if session_id is not None:
                raise SessionGoneError(self.location, "deleted")
            self.lines = []
        foreign: list[bytes] = []
        if expected_size is not None and on_grown is not None:
            data = b"".join(self.lines)
            if len(data) != expected_size:
                foreign = foreign_lines(data, expected_size)
                if foreign:
                    replacement = on_grown(foreign)
                    if replacement is not None:
                        lines = replacement
        self.lines.extend(lines)
        size = sum(map(len, self.lines))
        return AppendResult([], size, foreign, (size,))

    def replace_lines(self, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        if self.lines is None:
            raise FileNotFoundError(errno.ENOENT, "no such session", self.location)
        if self.lines != list(old):
            raise SessionFileError(self.location, "the session changed while it was being rewritten; nothing was changed")
        self.lines = list(new)

    def size(self) -> int | None:
        return sum(map(len, self.lines)) if self.lines is not None else None

    def read_lines_from(self, offset: int) -> LinesRead:
        if self.lines is None:
            raise FileNotFoundError(errno.ENOENT, "no such session", self.location)
        data = b"".join(self.lines)
        return lines_from(data, offset, (len(data),))


class FailingHandle(SessionHandle):
    """A handle that forwards to ``inner`` but makes chosen writes fail:
    the fault-injection seam of the tests.

    Example::

        handle = FailingHandle(MemoryHandle())
        manager = SessionManager.open(handle)
        handle.fail("create", OSError(errno.ENOSPC, "No space left on device"))

    Attributes:
        inner: the handle written to.
        calls: ``(operation, lines)`` of every create and append asked for.
    """

    def __init__(self, inner: SessionHandle) -> None:
        self.inner = inner
        self.location = inner.location
        self.path = inner.path
        self.calls: list[tuple[str, list[bytes]]] = []
        self._failures: list[tuple[str, BaseException, bool]] = []

    def fail(
        self,
        operation: Literal["create", "append"],
        error: BaseException | None = None,
        *,
        after_writing: bool = False,
    ) -> None:
        """Make the next ``operation`` raise ``error`` (default: an
        ``EIO`` OSError; for an append, wrapped in
        :class:`pi_session.storage.AppendError` as the file writer does).
        ``after_writing`` (appends only): the lines are written first, then
        the error is raised with ``lines_written`` = all of them (a failed
        sync). Calls queue up: each failure is used once."""
        if after_writing and operation != "append":
            raise ValueError("a create writes everything or nothing: it can only fail before writing")
        self._failures.append((operation, error or OSError(errno.EIO, "Input/output error"), after_writing))

    def _take(self, operation: str) -> tuple[BaseException, bool] | None:
        for i, (op, error, after) in enumerate(self._failures):
            if op == operation:
                del self._failures[i]
                return error, after
        return None

    def exists(self) -> bool:
        return self.inner.exists()

    def read(self, *, migrate: bool = True, lazy: bool | Literal["always"] = False) -> SessionFile:
        return self.inner.read(migrate=migrate, lazy=lazy)

    def create(self, lines: Sequence[bytes], *, durability: Durability = Durability.ENTRY) -> int:
        self.calls.append(("create", list(lines)))
        failure = self._take("create")
        if failure is not None:
            raise failure[0]
        return self.inner.create(lines, durability=durability)

    def existing(self) -> SessionHandle | None:
        return self.inner.existing()

    def append(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
        session_id: str | None = None,
    ) -> AppendResult:
        self.calls.append(("append", list(lines)))
        failure = self._take("append")
        if failure is None:
            return self.inner.append(
                lines, durability=durability, expected_size=expected_size, on_grown=on_grown, session_id=session_id
            )
        error, after = failure
        written = 0
        if after:
            self.inner.append(lines, durability=durability, expected_size=expected_size, on_grown=on_grown, session_id=session_id)
            written = len(lines)
        if isinstance(error, OSError) and not isinstance(error, AppendError):
            raise AppendError(Path(self.location), written, error) from error
        raise error

    def replace_lines(self, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        self.inner.replace_lines(old, new)

    def read_lines_from(self, offset: int) -> LinesRead:
        return self.inner.read_lines_from(offset)

    def size(self) -> int | None:
        return self.inner.size()

    def stamp(self) -> SessionStamp | None:
        return self.inner.stamp()

    def flush(self) -> None:
        self.inner.flush()

    def keep_migration(self, sf: SessionFile, *, read_only: bool) -> tuple[str, bool]:
        return self.inner.keep_migration(sf, read_only=read_only)
