"""Appending to session files: :func:`append_lines` and
:func:`append_lines_checked` (one ``write`` per line, under an exclusive
``flock``; detection of other writers), the repair of a torn last line
left by a crash (:func:`_repair_torn_tail`), and side files next to a
session (:func:`write_side_file`, :func:`free_side_path`)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import jsonio
from ..errors import PiSessionError
from ..entries.records import StrPath, is_session_header
from .atomic import adopt_directory_owner, data_sync, fsync_dir, write_all
from .lines import SPLIT_MAX_BYTES, recover_line
from .model import FILE_MODE, Durability, SessionFileError
from .scan import LineScanner


class AppendError(PiSessionError, OSError):
    """An append failed part way. ``lines_written`` complete lines of the
    batch are in the file (and stay there); the failed line was cut off
    again, so the file still ends on a line boundary."""

    def __init__(self, path: Path, lines_written: int, cause: OSError) -> None:
        super().__init__(cause.errno, f"{path}: append failed after {lines_written} line(s): {cause.strerror or cause}")
        self.lines_written = lines_written
        self.path = path


@contextlib.contextmanager
def locked_append_fd(path: Path, *, create: bool = True) -> Iterator[tuple[int, bool]]:
    """An fd open for appending to ``path``, exclusively ``flock``-ed, and
    still the file at ``path`` (the append lock every writer of the file
    holds; a concurrent atomic rewrite replaces the
    inode while we wait for the lock: then we reopen). Yields ``(fd,
    created)``; ``created`` is True when this call created the file.

    A file whose mode gives nobody write permission (``chmod a-w``) is
    never written, not even by root, who could: the mode is the owner's
    "keep this as it is" (beyond pi).

    Raises:
        FileNotFoundError: ``path`` is missing and ``create`` is False.
        PermissionError: the file is not writable (by its mode, or for
            this user).
        SessionFileError: the file keeps being replaced.
    """
    for _ in range(100):
        created = False
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            if not os.fstat(fd).st_mode & 0o222:
                os.close(fd)
                raise PermissionError(errno.EACCES, "the file is read-only (no write permission in its mode)", str(path))
        except FileNotFoundError:
            if not create:
                raise
            try:
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
                created = True
            except FileExistsError:
                continue
            adopt_directory_owner(fd, Path(path).parent, path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd, created
                return
        finally:
            os.close(fd)  # closing releases the lock
    raise SessionFileError(path, "the file keeps being replaced while we try to append")


def _last_line_start(fd: int, size: int) -> int:
    start = size
    chunk = 65536
    while start > 0:
        read_from = max(0, start - chunk)
        block = os.pread(fd, start - read_from, read_from)
        nl = block.rfind(b"\n")
        if nl >= 0:
            return read_from + nl + 1
        start = read_from
    return 0


def free_side_path(path: StrPath, suffix: str) -> Path:
    """A name ``<file>.<suffix>`` (or ``<file>.<suffix>.<n>``) that does not exist yet."""
    p = Path(path)
    candidate = p.with_name(f"{p.name}.{suffix}")
    n = 1
    while os.path.lexists(candidate):
        candidate = p.with_name(f"{p.name}.{suffix}.{n}")
        n += 1
    return candidate


def write_side_file(path: StrPath, suffix: str, data: bytes) -> Path:
    """Write ``data`` to a new file next to ``path`` (mode 0600, fsync'd,
    never replacing anything) named by :func:`free_side_path`; run as root,
    it gets the owner and group of its directory
    (:func:`~.atomic.adopt_directory_owner`).

    Returns:
        The side file's path.
    """
    for _ in range(100):
        side = free_side_path(path, suffix)
        try:
            sfd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
        except FileExistsError:
            continue
        try:
            adopt_directory_owner(sfd, side.parent, side)
            write_all(sfd, data)
            os.fsync(sfd)
        finally:
            os.close(sfd)
        fsync_dir(Path(path).parent)
        return side
    raise FileExistsError(errno.EEXIST, "no free side-file name", str(path))


def _repair_torn_tail(fd: int, path: Path, first_line: bytes | None = None) -> str | None:
    """Called under the append lock: if the file does not end in ``\\n``
    (a crash mid-append), make the next append start on a line of its own.

    A last line from which a record can be read (a complete record that only
    lost its newline, or one :func:`recover_line` recovers) just gets its
    newline. Anything else is a fragment: it is copied to a side file
    ``<name>.torn-<offset>`` (fsync'd first) and cut off the file.

    Args:
        fd: the locked append fd.
        path: the file's path (for the side file and messages).
        first_line: the first line about to be appended; when the fragment
            is the whole file and that line is not a session header, we
            refuse rather than leave a file without a header.

    Returns:
        A one-line description of what was done, or None.

    Raises:
        SessionFileError: the whole file is one torn line and we are not
            writing a header.
    """
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start = _last_line_start(fd, size)
    tail = os.pread(fd, size - start, start)
    if recover_line(tail) is not None:
        os.write(fd, b"\n")
        return f"{path}: the last line had no newline; added one before appending"
    if start > 0 and _ends_split_record(fd, start, tail):
        os.write(fd, b"\n")
        return f"{path}: the last line (the end of a record split over several lines) had no newline; added one before appending"
    if start == 0 and not (first_line or b"").startswith(b'{"type":"session"'):
        raise SessionFileError(path, "the file holds only a torn first line (no session header); not appending")
    side = write_side_file(path, f"torn-{start}", tail)
    os.ftruncate(fd, start)
    os.fsync(fd)
    return f"{path}: a torn last line ({len(tail)} bytes, no newline) was moved to {side.name}"


def _ends_split_record(fd: int, start: int, tail: bytes) -> bool:
    """Whether ``tail``, the unterminated last line starting at byte
    ``start``, completes a record split over several lines (which the
    reader rejoins, so it must stay). Reads back at most
    :data:`SPLIT_MAX_BYTES`; only called for a last line that is not a
    record on its own."""
    low = max(0, start - SPLIT_MAX_BYTES)
    lines = os.pread(fd, start - low, low).split(b"\n")[:-1]
    if low > 0:
        lines = lines[1:]  # may be cut
    scanner = LineScanner()
    for n, raw in enumerate(lines):
        scanner.feed(n + 1, raw, True)
    return any(s.status == "split" for s in scanner.feed(len(lines) + 1, tail, False))


class ConcurrentAppendError(SessionFileError):
    """Raised in strict mode when another writer appended to the session
    since this process last read or wrote it (see
    :meth:`pi_session.SessionManager.open`'s ``concurrent`` option).
    Nothing was written. ``count`` is the number of entries appended by the
    other writer."""

    def __init__(self, path: StrPath, count: int) -> None:
        super().__init__(
            path,
            f"{count} entr{'y was' if count == 1 else 'ies were'} appended by another writer since this session was read; "
            "nothing was written (reopen the session to continue from its real last entry)",
        )
        self.count = count


class LeafMovedError(ConcurrentAppendError):
    """The one error for an entry planned at one leaf (a compaction, a
    branch summary) that would land on another branch: the leaf was moved,
    in this process or by another writer, off the path the entry was
    planned on. Nothing was written. Appends raise it
    (:meth:`pi_session.SessionManager.append_compaction`), and so do the
    workflows of :mod:`pi_session.operations` (exported there as
    ``LeafMovedError`` too).

    Args:
        path: how the message names the session (a path or a store
            location).
        planned_leaf_id: the leaf the entry was planned at.
        leaf_id: the session's leaf now (None when unknown or the start).
        count: entries another writer appended (0: none known).
        by_other_writer: True when another writer's appends moved the leaf
            (the session in memory is stale: open it again), False when
            this process moved it, None when the append does not know.
        what: what was planned ("compaction", "branch summary"), for the
            message; None for "this entry".

    Attributes:
        planned_leaf_id, leaf_id, count, by_other_writer: as above.
    """

    def __init__(
        self,
        path: StrPath,
        planned_leaf_id: str | None,
        leaf_id: str | None,
        count: int = 0,
        *,
        by_other_writer: bool | None = None,
        what: str | None = None,
    ) -> None:
        if what is None:
            message = (
                f"the leaf moved from {planned_leaf_id} to {leaf_id} while this entry was being prepared, "
                "onto a path that does not continue it; nothing was written (plan again on the current branch)"
            )
        else:
            who = "another writer changed the session" if by_other_writer else "the session changed"
            message = (
                f"the leaf moved from {planned_leaf_id} to {leaf_id} while the summary was being written ({who}); "
                f"the {what} was planned on the old branch, so nothing was written: run it again"
            )
        SessionFileError.__init__(self, path, message)
        self.count = count
        self.planned_leaf_id = planned_leaf_id
        self.leaf_id = leaf_id
        self.by_other_writer = by_other_writer


class SessionGoneError(SessionFileError):
    """Raised when a session that was read (or written) is no longer
    there to append to: its file was deleted, or replaced by a file that
    is not this session (another session's, or no session at all).
    Nothing was written: a writer never re-creates a file holding only
    its next entries (a file without a header that no reader accepts), and
    never writes into another session. ``gone`` is ``"deleted"`` or
    ``"replaced"``."""

    def __init__(self, path: StrPath, gone: str, detail: str = "") -> None:
        what = "deleted" if gone == "deleted" else "replaced by another file" + (f" ({detail})" if detail else "")
        super().__init__(
            path,
            f"the session file was {what} since this session was read; nothing was written "
            "(open the session again to go on from what is stored)",
        )
        self.gone = gone


SessionStamp = tuple[int, ...]
"""What a stored session looks like now, for telling whether it changed
(:meth:`pi_session.stores.SessionHandle.stamp`): a tuple whose first item
is the size in bytes; equal stamps mean unchanged."""


def file_stamp(st: os.stat_result) -> SessionStamp:
    """The stamp of a session file: ``(size, device, inode, mtime_ns,
    ctime_ns)``. An append changes the size, an atomic rewrite the inode
    (also one of the same length, as a scrub whose marks are as long as
    the secrets), any write the times."""
    return (st.st_size, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class AppendResult:
    """What :func:`append_lines_checked` did: ``notes`` (repairs done
    first), ``size`` (the file's size in bytes after the append, read under
    the lock), ``foreign`` (the lines another writer had appended since
    ``expected_size``, as read under the lock) and ``stamp`` (the
    session's :data:`SessionStamp` right after the append, read under the
    lock; None when the store cannot tell)."""

    notes: list[str]
    size: int
    foreign: list[bytes]
    stamp: SessionStamp | None = None


_HEADER_SCAN_BYTES = 1 << 20


def _header_id(fd: int) -> str | None:
    """The ``id`` of the session header the file starts with (its first
    line that parses, within 1 MiB, as pi's ``readSessionHeader`` finds
    it), or None when that is not a session header. Reads 4 KiB, more
    only while no line has ended."""
    data = b""
    want = 4096
    while True:
        data = os.pread(fd, want, 0)
        complete = data.split(b"\n")[:-1] if len(data) == want else data.split(b"\n")
        for raw in complete:
            if not raw.strip():
                continue
            try:
                record = jsonio.loads(raw)
            except ValueError:
                continue
            return record["id"] if is_session_header(record) else None
        if len(data) < want or want >= _HEADER_SCAN_BYTES:
            return None
        want *= 16


def append_lines(
    path: StrPath,
    lines: Sequence[bytes],
    durability: Durability = Durability.ENTRY,
) -> list[str]:
    """Append complete lines to a session file, each with one ``write``.

    Opens the file with ``O_APPEND`` and holds an exclusive ``flock`` for the
    duration, so that two processes appending to one session (both through
    this function) never interleave bytes. A torn last line left by a crash
    is repaired first (see :func:`_repair_torn_tail`). If a write fails part
    way (disk full), the partial line is cut off again before raising, so
    the file always ends on a line boundary.

    Cost: see :class:`Durability`.

    Args:
        path: the session file (created with mode 0600 if missing).
        lines: complete lines, each ending in ``\\n``.
        durability: ``ENTRY`` syncs the file's data (``fdatasync``; and its
            directory when the call created it) before returning;
            ``BATCH``/``NONE`` do not.

    Returns:
        Notes about repairs done before appending (usually empty).

    Raises:
        AppendError: a write or the fsync failed; ``lines_written`` tells
            how many of ``lines`` are in the file.
        SessionFileError: see :func:`_repair_torn_tail`.
    """
    return append_lines_checked(path, lines, durability).notes


def append_lines_checked(
    path: StrPath,
    lines: Sequence[bytes],
    durability: Durability = Durability.ENTRY,
    *,
    expected_size: int | None = None,
    on_grown: Callable[[list[bytes]], Sequence[bytes] | None] | None = None,
    session_id: str | None = None,
) -> AppendResult:
    """:func:`append_lines`, plus detection of other writers: under the
    append lock, when the file holds bytes past ``expected_size`` (the size
    this process last read or wrote), the complete lines from there (from
    the start of the line holding ``expected_size`` when it is not a line
    boundary) are passed to ``on_grown``, which returns the lines to write
    instead (or None to keep ``lines``), or raises to write nothing. The
    caller skips lines it already knows (a re-read line is harmless).

    Args:
        session_id: the session the file must still hold (its header's
            id, checked under the lock before anything is written or
            repaired): a missing file is not created, and a file whose
            header names another session (or that has none) is left
            alone; None: no check, a missing file is created.

    Returns:
        An :class:`AppendResult`.

    Raises:
        SessionGoneError: (``session_id``) the file was deleted, or
            replaced by a file that does not hold that session; nothing
            was written.
        AppendError, SessionFileError: as :func:`append_lines`; whatever
            ``on_grown`` raises (nothing is written then).
    """
    p = Path(path)
    notes: list[str] = []
    foreign: list[bytes] = []
    with contextlib.ExitStack() as stack:
        try:
            fd, created = stack.enter_context(locked_append_fd(p, create=session_id is None))
        except FileNotFoundError:
            raise SessionGoneError(p, "deleted") from None
        if session_id is not None:
            found = _header_id(fd)
            if found != session_id:
                raise SessionGoneError(p, "replaced", f"its header names session {found}" if found is not None else "it holds no session header")
        note = _repair_torn_tail(fd, p, lines[0] if lines else None)
        if note:
            notes.append(note)
        if expected_size is not None and on_grown is not None:
            size = os.fstat(fd).st_size
            if size != expected_size:
                start = min(expected_size, size)
                if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
                    start = _last_line_start(fd, start)
                tail = os.pread(fd, size - start, start) if size > start else b""
                foreign = [line + b"\n" for line in tail.split(b"\n")[:-1] if line.strip()]
                if foreign:
                    replacement = on_grown(foreign)
                    if replacement is not None:
                        lines = replacement
        done = 0
        for line in lines:
            before = os.fstat(fd).st_size
            try:
                write_all(fd, line)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                raise AppendError(p, done, exc) from exc
            done += 1
        if durability is Durability.ENTRY:
            try:
                data_sync(fd)
            except OSError as exc:
                raise AppendError(p, done, exc) from exc
        st = os.fstat(fd)
    if created and durability is Durability.ENTRY:
        fsync_dir(p.parent)
    return AppendResult(notes, st.st_size, foreign, file_stamp(st))
