"""The blob store of ``slim`` (**beyond pi**): the payloads it moves out of
a session file, as files named by their sha256 in a ``.blobs`` directory
(:func:`blob_dir`), and how they are written, read and deleted
(:class:`BlobStore`). A database store keeps its blobs in a table instead
(:meth:`pi_session.stores.SessionStore.put_blobs`).

A session may sit where other users can write (a file in ``/tmp``), so the
blob directory is used only when it is private to the session's owner, and
nothing planted in it is followed or waited on:

- ``.blobs`` and each ``ab/`` below it are opened without following a
  symbolic link and used only when they belong to the owner of the session
  file and neither group nor others may write into them
  (:func:`pi_session.storage.guarded.open_private_dir`); every file
  operation then goes through the opened directory (``dir_fd``). Created,
  they are 0700 and, made by root, the session owner's.
- A blob is opened without following a link and without blocking
  (``O_NONBLOCK``: a FIFO does not hang the command) and read only when it
  is a regular file, at most the bytes it must hold (``slim``: the
  payload's; otherwise :data:`MAX_BLOB_BYTES`)
  (:func:`pi_session.storage.guarded.open_regular`).
- A blob is never more readable than its session: its mode is the
  session file's, less execute bits (and less group bits when it cannot
  have the session's group); a blob already there that is more readable
  loses the extra bits.

A refusal is an :class:`~.errors.OperationError` naming the directory or
blob and the session; nothing is written then.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from ..entries.records import StrPath
from ..storage import FILE_MODE
from ..storage.guarded import UnsafePathError, open_private_dir, open_regular, read_open
from .errors import OperationError

__all__ = ["MAX_BLOB_BYTES", "BlobStore", "blob_dir"]

MAX_BLOB_BYTES = 1 << 30
"""The most bytes a blob is read to (1 GiB): more than pi can hold as one
line of a session."""

_DIGEST = re.compile(r"[0-9a-f]{64}")


def blob_dir(session_file: StrPath) -> Path:
    """The blob directory of a session file: ``<sessions root>/.blobs``,
    where the root is pi's sessions directory for a file under it, the
    parent of a project directory named as pi names them (``--<cwd>--``,
    as in a file store), else the file's own directory."""
    from ..core.paths import sessions_dir

    path = Path(os.path.realpath(session_file))
    root = Path(os.path.realpath(sessions_dir()))
    if path.is_relative_to(root):
        return root / ".blobs"
    project = path.parent
    if len(project.name) >= 4 and project.name.startswith("--") and project.name.endswith("--"):
        return project.parent / ".blobs"
    return project / ".blobs"


class BlobStore:
    """Content-addressed blobs in a directory (sha256 hex names, split
    ``ab/cdef…``; see the module docstring for what is refused).

    Args:
        root: the directory (``.blobs``; created on the first write, in a
            directory that must exist or can be made).
        owner: the stat of the session file the blobs belong to: the
            directories must be its owner's, blob files get its mode (less
            execute bits). None: the process's user (run as root: the owner
            of the directory holding ``root``), files 0600.
        session: the session named in errors, or None.
    """

    def __init__(self, root: StrPath, *, owner: os.stat_result | None = None, session: StrPath | None = None) -> None:
        self.root = Path(root)
        self.session = None if session is None else str(session)
        self._owner = owner

    @classmethod
    def of_session(cls, session_file: StrPath) -> BlobStore:
        """The blob store of a session file (:func:`blob_dir`, owned as the file is).

        Raises:
            OSError: the file cannot be examined.
        """
        path = Path(os.path.realpath(session_file))
        return cls(blob_dir(path), owner=os.stat(path), session=path)

    def path(self, digest: str) -> Path:
        """Where the blob ``digest`` is (whether it exists or not).

        Raises:
            ValueError: ``digest`` is not 64 lowercase hex digits.
        """
        if not _DIGEST.fullmatch(digest):
            raise ValueError(f"{digest!r} is not a sha256 hex digest")
        return self.root / digest[:2] / digest[2:]

    # --- who the blobs belong to ------------------------------------------

    def _ids(self) -> tuple[int, int, int]:
        """``(uid, gid, file mode)`` the blobs must have."""
        st = self._owner
        if st is None and os.geteuid() == 0:
            with contextlib.suppress(OSError):
                st = os.stat(self.root.parent)
        if st is None:
            return os.geteuid(), os.getegid(), FILE_MODE
        mode = stat.S_IMODE(st.st_mode) & 0o666 | 0o600 if stat.S_ISREG(st.st_mode) else FILE_MODE
        return st.st_uid, st.st_gid, mode

    def _of(self) -> str:
        return f" of {self.session}" if self.session else ""

    def _refused(self, where: Path, reason: str) -> OperationError:
        return OperationError(f"{where} {reason}: not used for the blobs{self._of()}")

    # --- the directories ---------------------------------------------------

    @contextlib.contextmanager
    def _directory(self, digest: str, *, create: bool) -> Iterator[int | None]:
        """A descriptor of the checked directory ``<root>/<ab>`` of blob
        ``digest`` (created with ``root`` when ``create``), or None when
        it is missing. The directory holding ``root`` is opened as named
        (its own links followed)."""
        from ..storage import ensure_dir, fsync_dir

        self.path(digest)
        uid, gid, _mode = self._ids()
        if create:
            ensure_dir(self.root.parent)
        try:
            parent = os.open(self.root.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            if create:
                raise
            yield None
            return
        fds = [parent]
        try:
            opened = self._open(self.root, uid, gid, parent, create)
            if opened is None:
                yield None
                return
            fds.append(opened[0])
            if opened[1]:
                fsync_dir(parent)
            sub = self._open(self.root / digest[:2], uid, gid, opened[0], create)
            if sub is None:
                yield None
                return
            fds.append(sub[0])
            if sub[1]:
                fsync_dir(opened[0])
            yield sub[0]
        finally:
            for fd in reversed(fds):
                os.close(fd)

    def _open(self, where: Path, uid: int, gid: int, dir_fd: int, create: bool) -> tuple[int, bool] | None:
        try:
            return open_private_dir(where.name, owner=uid, group=gid, dir_fd=dir_fd, create=create)
        except UnsafePathError as exc:
            raise self._refused(where, exc.reason) from None

    def check(self) -> None:
        """Raise when the blob directory is there but refused (what
        ``slim --dry-run`` checks before saying what it would do).

        Raises:
            OperationError: ``root`` is a symbolic link, not a directory,
                not the owner's, or writable by others.
        """
        uid, gid, _mode = self._ids()
        try:
            parent = os.open(self.root.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        try:
            opened = self._open(self.root, uid, gid, parent, False)
            if opened is not None:
                os.close(opened[0])
        finally:
            os.close(parent)

    # --- reading -----------------------------------------------------------

    def read(self, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes | None:
        """The bytes of blob ``digest`` as stored (not checked against the
        hash), or None when it is missing.

        Args:
            digest: the sha256 hex.
            limit: the most bytes it may hold.

        Raises:
            OperationError: refused (a symbolic link, not a regular file,
                over ``limit``; a directory refused), or unreadable.
        """
        target = self.path(digest)
        try:
            with self._directory(digest, create=False) as directory:
                if directory is None:
                    return None
                fd, st = open_regular(digest[2:], dir_fd=directory)
                try:
                    data = read_open(fd, st, limit)
                finally:
                    os.close(fd)
        except FileNotFoundError:
            return None
        except UnsafePathError as exc:
            raise OperationError(f"{target}: blob sha256:{digest}{self._of()} is refused: {exc.reason}") from None
        except OSError as exc:
            raise OperationError(f"{target}: blob sha256:{digest}{self._of()} cannot be read ({exc.strerror or exc})") from None
        if data is None:
            raise OperationError(f"{target}: blob sha256:{digest}{self._of()} is refused: larger than {limit:,} bytes")
        return data

    def get(self, digest: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        """The bytes of blob ``digest``, checked against their hash.

        Raises:
            OperationError: missing, unreadable, refused (see :meth:`read`),
                or not the bytes its name says.
        """
        data = self.read(digest, limit)
        target = self.path(digest)
        if data is None:
            raise OperationError(f"{target}: blob sha256:{digest}{self._of()} cannot be read (No such file or directory)")
        if hashlib.sha256(data).hexdigest() != digest:
            raise OperationError(f"{target}: blob sha256:{digest}{self._of()} is damaged (its bytes do not have that hash)")
        return data

    # --- writing -----------------------------------------------------------

    def store(self, data: bytes) -> tuple[str, bool]:
        """Store ``data`` (written atomically and fsync'd).

        A blob already there with these bytes is kept (its mode narrowed
        to the session's when wider); one with other bytes (damaged) is
        replaced.

        Returns:
            ``(sha256 hex, whether no blob was there before)``.

        Raises:
            OperationError: a directory refused, or something other than
                a regular file at the blob's path.
            OSError: it cannot be written.
        """
        from ..storage import write_atomic

        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        uid, gid, mode = self._ids()
        with self._directory(digest, create=True) as directory:
            assert directory is not None
            try:
                fd, st = open_regular(digest[2:], dir_fd=directory)
            except FileNotFoundError:
                existed = False
            except UnsafePathError as exc:
                raise OperationError(f"{target}: blob sha256:{digest}{self._of()} is refused: {exc.reason}") from None
            else:
                existed = True
                try:
                    if read_open(fd, st, len(data)) == data:
                        wanted = stat.S_IMODE(st.st_mode) & (mode if st.st_gid == gid else mode & ~0o070)
                        if wanted != stat.S_IMODE(st.st_mode):
                            with contextlib.suppress(OSError):
                                os.fchmod(fd, wanted)
                        return digest, False
                finally:
                    os.close(fd)
            # the group the new file gets: the directory's when root gives it
            # (write_atomic) or the directory is set-group-id, else the process's
            dir_st = os.fstat(directory)
            gets = dir_st.st_gid if os.geteuid() == 0 or dir_st.st_mode & stat.S_ISGID else os.getegid()
            try:
                write_atomic(digest[2:], [data], replace=existed, mode=mode if gets == gid else mode & ~0o070, dir_fd=directory)
            except FileExistsError:
                pass  # written meanwhile by another run: same name, same bytes
        return digest, not existed

    def put(self, data: bytes) -> str:
        """:meth:`store` ``data``; returns its sha256 hex."""
        return self.store(data)[0]

    def remove(self, digest: str) -> bool:
        """Delete blob ``digest`` (the name in its directory: a symbolic
        link there is removed, never followed).

        Returns:
            True when it is gone (also when it was not there), False when
            it cannot be removed.

        Raises:
            OperationError: a directory refused.
        """
        with self._directory(digest, create=False) as directory:
            if directory is None:
                return True
            try:
                os.unlink(digest[2:], dir_fd=directory)
            except FileNotFoundError:
                return True
            except OSError:
                return False
            with contextlib.suppress(OSError):
                os.fsync(directory)
        return True
