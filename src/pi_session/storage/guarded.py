"""Opening files and directories where another user may have planted
something (**beyond pi**): a symbolic link, a FIFO, a device, a directory
of theirs. pi-session's caches (:mod:`.cache`) and the blob stores of
``slim`` (:mod:`pi_session.operations.blobs`) go through these.

- :func:`open_regular` / :func:`read_regular`: a file is opened without
  following a symbolic link (``O_NOFOLLOW``) and without blocking
  (``O_NONBLOCK``: opening a FIFO returns at once), then checked with
  ``fstat`` on what was opened (no window between a check and the use):
  only a regular file is read, and at most a given number of bytes.
- :func:`open_private_dir`: a directory is opened the same way (a
  symbolic link is never followed) and used only when it belongs to the
  given owner and neither its group nor others may write into it
  (:func:`private_dir_problem`); what is made in it is then made through
  the returned descriptor (``dir_fd``), so renaming the directory away
  and planting another one changes nothing.

A refusal raises :class:`UnsafePathError`, whose message is one phrase
naming what was found (``"a symbolic link"``, ``"not a regular file (a
FIFO)"``, ``"larger than 1,024 bytes"``, ``"belongs to another user (uid
65534)"``, ``"is writable by other users (mode 0777)"``).
"""

from __future__ import annotations

import errno
import os
import stat

from ..errors import PiSessionError
from ..entries.records import StrPath
from .model import DIR_MODE

__all__ = [
    "UnsafePathError",
    "open_private_dir",
    "open_regular",
    "private_dir_problem",
    "read_open",
    "read_regular",
]

_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePathError(PiSessionError, OSError):
    """Something at a path is not what pi-session may use there.

    Attributes:
        path: the path (as given, relative to its directory descriptor if any).
        reason: one phrase: what was found there.
    """

    def __init__(self, path: StrPath, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "of an unknown type"


def open_regular(path: StrPath, *, dir_fd: int | None = None, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """Open a regular file without following a symbolic link and without
    blocking on a FIFO.

    Args:
        path: the file (a name relative to ``dir_fd`` when given).
        dir_fd: a directory descriptor ``path`` is relative to, or None.
        flags: the access flags (``os.O_RDONLY`` or ``os.O_RDWR``).

    Returns:
        ``(fd, stat of fd)``; the caller closes ``fd``.

    Raises:
        FileNotFoundError: nothing is there.
        UnsafePathError: a symbolic link, or not a regular file.
        OSError: it cannot be opened.
    """
    try:
        fd = os.open(path, flags | _OPEN_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(path, "a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing without a reader
            raise UnsafePathError(path, "not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePathError(path, f"not a regular file ({_kind(st.st_mode)})")
    return fd, st


def read_open(fd: int, st: os.stat_result, limit: int) -> bytes | None:
    """The bytes of the regular file open as ``fd`` (``st``: its stat), or
    None when it holds more than ``limit`` bytes (also when it grows past
    ``limit`` while being read). Reads from the start.

    Raises:
        OSError: on a read error.
    """
    if st.st_size > limit:
        return None
    chunks: list[bytes] = []
    got = 0
    while True:
        expected = max(st.st_size - got, 0) + 1  # the rest, and one byte to see the end
        chunk = os.pread(fd, min(expected, limit + 1 - got, 1 << 24), got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if got > limit:
            return None
    return b"".join(chunks)


def read_regular(path: StrPath, limit: int, *, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file (:func:`open_regular`), at most ``limit``.

    Returns:
        ``(bytes, stat)``; the stat is of the file read (its owner, mode).

    Raises:
        FileNotFoundError: nothing is there.
        UnsafePathError: a symbolic link, not a regular file, or larger
            than ``limit`` bytes.
        OSError: it cannot be opened or read.
    """
    fd, st = open_regular(path, dir_fd=dir_fd)
    try:
        data = read_open(fd, st, limit)
    finally:
        os.close(fd)
    if data is None:
        raise UnsafePathError(path, f"larger than {limit:,} bytes")
    return data, st


def private_dir_problem(st: os.stat_result, owner: int) -> str | None:
    """Why the directory of stat ``st`` is not private to the user ``owner``
    (uid), or None: ``"belongs to another user (uid N)"``, or ``"is
    writable by other users (mode 0777)"`` when its group or others may
    write into it."""
    if st.st_uid != owner:
        return f"belongs to another user (uid {st.st_uid})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        return f"is writable by other users (mode {mode:04o})"
    return None


def open_private_dir(
    path: StrPath, *, owner: int, group: int | None = None, dir_fd: int | None = None, create: bool = False
) -> tuple[int, bool] | None:
    """Open a directory private to ``owner``, never through a symbolic
    link, creating it (mode 0700) when missing and ``create``.

    A directory this call creates while running as root is given ``owner``
    and ``group`` (root working on a user's session leaves what it makes
    the user's). What was opened is checked (``fstat``) with
    :func:`private_dir_problem`.

    Args:
        path: the directory (a name relative to ``dir_fd`` when given).
        owner: the uid it must belong to.
        group: the gid a created directory gets (root only); None: ``owner``'s
            choice is not made (the system's).
        dir_fd: a directory descriptor ``path`` is relative to, or None.
        create: create it when missing.

    Returns:
        ``(fd, created)``: a descriptor (``O_DIRECTORY``; the caller
        closes it) and whether this call created the directory; None when
        it is missing and not ``create``.

    Raises:
        UnsafePathError: a symbolic link, not a directory, another user's,
            or writable by others.
        OSError: it cannot be created or opened.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS

    def open_dir() -> int:
        try:
            return os.open(path, flags, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(path, "is a symbolic link") from None
            if exc.errno == errno.ENOTDIR:  # also a symbolic link (O_DIRECTORY | O_NOFOLLOW)
                try:
                    link = stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
                except OSError:
                    link = False
                raise UnsafePathError(path, "is a symbolic link" if link else "is not a directory") from None
            raise

    created = False
    try:
        fd = open_dir()
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(path, DIR_MODE, dir_fd=dir_fd)
            created = True
        except FileExistsError:
            pass  # made meanwhile: opened and checked like any other
        fd = open_dir()
    try:
        st = os.fstat(fd)
        if created and os.geteuid() == 0 and st.st_uid == 0 and owner != 0:
            # root made it (st_uid 0: not a directory someone put there meanwhile)
            os.fchown(fd, owner, -1 if group is None else group)
            st = os.fstat(fd)
        problem = private_dir_problem(st, owner)
    except BaseException:
        os.close(fd)
        raise
    if problem is not None:
        os.close(fd)
        raise UnsafePathError(path, problem)
    return fd, created
