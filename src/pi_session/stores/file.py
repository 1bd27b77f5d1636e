"""The file store: today's session files, as pi keeps them. A thin
wrapper of :mod:`pi_session.storage` and :mod:`pi_session.stores.listing` (no
behaviour of its own): sessions live under a sessions root (like
``~/.pi/agent/sessions``) as ``<root>/<encoded cwd>/<timestamp>_<id>.jsonl``,
byte-compatible with pi. A :class:`pi_session.SessionManager` given a
FileStore works on the files exactly as without a store: both read and
write through :class:`FileHandle`, the one writer of session files (also
for any file path, without a store), and pick the file to continue with
:func:`most_recent_file`."""

from __future__ import annotations

import builtins
import errno
import os
import re
import stat
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from .listing import (
    jsonl_names,
    list_session_dir,
    list_sessions_dirs,
    read_session_header,
    resolve_path,
    session_cwd_matches,
)
from ..core.paths import encode_cwd, is_windows_absolute, session_file_name
from ..storage import (
    AppendResult,
    Durability,
    SessionFile,
    SessionFileError,
    SessionStamp,
    append_lines_checked,
    atomic_rewrite,
    create_file,
    directory_lock,
    ensure_dir,
    file_stamp,
    fsync_dir,
    iter_lines,
    locked_append_fd,
    read_session_file,
    rewrite_records,
)
from ..core.timestamps import file_timestamp, now_iso
from .base import SessionChangedError, SessionExistsError, SessionNotFoundError, SessionStore, StoreError
from .capabilities import StoreCapability
from .handle import LinesRead, OnGrown, SessionHandle, lines_from

__all__ = [
    "FileStore",
    "FileHandle",
    "UnnamableSessionError",
    "open_file_store",
    "most_recent_file",
    "named_session_files",
    "session_id_of_file_name",
    "session_file_named",
]

_SAFE_NAME = re.compile(r"[^/\\\x00]+\.jsonl")
_NAMED = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\.jsonl")


RACY_NS = 2_000_000_000
"""How long after a directory's mtime a listing of it is *racy*: a file
created in the same clock tick could be missing from it without changing the
mtime (2 s: file systems that keep whole seconds, or two, as FAT does)."""


def _racy(mtime_ns: int) -> bool:
    return time.time_ns() - mtime_ns < RACY_NS


def session_id_of_file_name(name: str) -> str | None:
    """The session id a file name ``<timestamp>_<id>.jsonl`` gives: the
    WHOLE rest of the name after the timestamp (``..._user_123.jsonl`` is
    ``user_123``, never ``123``), when it has the form
    :func:`pi_session.core.ids.validate_session_id` accepts; else None."""
    match = _NAMED.fullmatch(name)
    return match[1] if match is not None else None


def named_session_files(root: Path) -> Iterator[tuple[str, Path]]:
    """``(session id, file)`` for every file of the root's project
    directories named ``<timestamp>_<id>.jsonl``
    (:func:`session_id_of_file_name`), directory by directory. Only names
    are read (nothing is stat'ed or opened): the cheap walk for id
    prefixes; an unreadable root or directory is passed over."""
    try:
        subs = [sub for sub in root.iterdir() if sub.is_dir()]
    except OSError:
        return
    for sub in subs:
        try:
            names = os.listdir(sub)
        except OSError:
            continue
        for name in names:
            session_id = session_id_of_file_name(name)
            if session_id is not None:
                yield session_id, sub / name


def session_file_named(directory: Path, session_id: str) -> Path | None:
    """The first regular file of ``directory`` (in name order) whose name
    is ``<timestamp>_<session_id>.jsonl`` (:func:`session_id_of_file_name`),
    or None. Only the names are read (and the one file is stat'ed)."""
    for name in sorted(jsonl_names(directory) or ()):
        if session_id_of_file_name(name) != session_id:
            continue
        path = directory / name
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                return path
        except OSError:
            continue
    return None


class UnnamableSessionError(StoreError):
    """A session that cannot be written as a file (:meth:`FileStore.create`):
    no file name of its own and an id that cannot be part of one (``/``,
    ``\\``, NUL), a cwd holding NUL, or a name longer than the file system
    allows."""


class FileStore(SessionStore):
    """Session files under a sessions root.

    Args:
        root: the sessions root (a directory holding one directory per
            project cwd); created 0700 when a session is first written.

    Capabilities: FILES, MARKS (file stamps), SEARCH (the cache index of
    its root); its blobs are files beside its sessions, not BLOBS.
    """

    capabilities = StoreCapability.FILES | StoreCapability.MARKS | StoreCapability.SEARCH

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.url = str(self.root)
        # id -> file of each project directory, with the directory's mtime
        # when it was listed and whether that listing was racy (see _dir_ids)
        self._listed: dict[Path, tuple[int, dict[str, Path], bool]] = {}
        self._subs: tuple[int, list[Path]] | None = None  # the root's mtime and directories

    @classmethod
    def at(cls, root: str, **options: Any) -> FileStore:
        """The store of a sessions root given as text (``~`` expanded, made
        absolute; a ``file://`` URL is a path).

        Raises:
            StoreError: the root exists and is not a directory.
        """
        path = resolve_path(root)
        if os.path.exists(path) and not os.path.isdir(path):
            raise StoreError(f"{path}: not a directory")
        return cls(path, **options)

    # ------------------------------------------------------------------
    # where

    @property
    def files_root(self) -> Path:
        """See :attr:`SessionStore.files_root`: :attr:`root`."""
        return self.root

    def session_dir(self, cwd: str) -> Path:
        """The directory of a (resolved) cwd's sessions: ``<root>/<encoded cwd>``."""
        return self.root / encode_cwd(cwd)

    def _ids(self) -> Iterator[tuple[str, Path]]:
        """``(session id, file)`` of every session file, in directory and
        name order: the id from a ``<timestamp>_<id>.jsonl`` name (as the
        CLI resolves ids), else from the header (files without one are
        passed over, and so is anything that is not a regular file)."""
        for _sub, ids in self._dir_ids():
            yield from ids.items()

    def _dir_ids(self, *, fresh: bool = False) -> Iterator[tuple[Path, dict[str, Path]]]:
        """``(project directory, {id: file})`` per directory of the root.
        A directory is listed again only when its mtime changed since it
        was last listed by this store (creating or deleting a file changes
        it; this store's own creates and deletes update the memo), so
        looking up ids costs a ``stat`` per directory, not a listing of
        every file: importing N sessions is linear, not quadratic.

        An mtime is only as fine as the file system's clock: a file another
        process creates in the same tick as the change a listing saw leaves
        the mtime as it was. So a listing of a project directory made less
        than :data:`RACY_NS` after its mtime is *racy* (as git calls it):
        ``fresh`` (a lookup that found nothing) lists racy directories again
        (this store's own creates keep their directory's memo current, so
        an import stays linear). The root's list of directories trusts its
        mtime (a new project directory changes it). A create that finds its
        file name taken forgets the memo (:meth:`FileHandle.create`):
        another writer was there first."""
        try:
            root_mtime = self.root.stat().st_mtime_ns
            if self._subs is None or self._subs[0] != root_mtime:
                self._subs = (root_mtime, sorted(p for p in self.root.iterdir() if p.is_dir()))
        except OSError:
            self._listed.clear()
            self._subs = None
            return
        subs = self._subs[1]
        for gone in set(self._listed) - set(subs):
            del self._listed[gone]
        for sub in subs:
            try:
                mtime = sub.stat().st_mtime_ns
            except OSError:
                continue
            memo = self._listed.get(sub)
            if memo is None or memo[0] != mtime or (fresh and memo[2]):
                racy = _racy(mtime)
                memo = (mtime, self._list_dir(sub), racy)
                self._listed[sub] = memo
            yield sub, memo[1]

    @staticmethod
    def _list_dir(sub: Path) -> dict[str, Path]:
        ids: dict[str, Path] = {}
        for name in sorted(jsonl_names(sub) or ()):
            path = sub / name
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue  # a FIFO or a device named *.jsonl is no session
            except OSError:
                continue
            named = session_id_of_file_name(name)
            if named is not None:
                ids.setdefault(named, path)
                continue
            header = read_session_header(path)
            if header is not None:
                ids.setdefault(header["id"], path)
        return ids

    def _named_in(self, sub: Path, session_id: str) -> Path | None:
        """:func:`session_file_named` through the memo: a current memo of
        ``sub`` that is not racy answers without listing (an import creating
        many sessions in one directory stays linear); otherwise the
        directory is listed. Called under the directory's creation lock."""
        memo = self._listed.get(sub)
        if memo is not None and not memo[2] and memo[0] == self._dir_mtime(sub):
            path = memo[1].get(session_id)
            if path is None or session_id_of_file_name(path.name) == session_id and path.exists():
                return path
        return session_file_named(sub, session_id)

    def _dir_mtime(self, sub: Path) -> int | None:
        try:
            return sub.stat().st_mtime_ns
        except OSError:
            return None

    def _forget(self, sub: Path) -> None:
        """Drop the memo of ``sub`` (and of the root): listed again next time."""
        self._listed.pop(sub, None)
        self._subs = None

    def _remember(self, sub: Path, session_id: str, path: Path | None, before: int | None) -> None:
        """Update the memo of ``sub`` after this store created (``path``)
        or deleted (None) a session file there, when it was current:
        ``before``, the directory's mtime just before, is the memo's (no
        other writer changed the directory since it was listed, as far as
        its mtime tells); else the memo is dropped."""
        memo = self._listed.get(sub)
        if memo is None:
            return
        mtime = self._dir_mtime(sub)
        if mtime is None or before != memo[0]:
            self._listed.pop(sub, None)
            return
        ids = memo[1]
        if path is None:
            ids.pop(session_id, None)
        else:
            ids.setdefault(session_id, path)
        self._listed[sub] = (mtime, ids, False)

    def path_of(self, session_id: str) -> Path:
        """The file of a session: the first file (in directory and name
        order) named ``<timestamp>_<id>.jsonl``, else whose header has the
        id.

        Raises:
            SessionNotFoundError: none.
        """
        for fresh in (False, True):  # not in the memo: list racy directories again
            if fresh and not any(memo[2] for memo in self._listed.values()):
                break  # none is racy: the pass just made saw every directory as it is
            for _sub, ids in self._dir_ids(fresh=fresh):
                path = ids.get(session_id)
                if path is not None and path.exists():
                    return path
        raise SessionNotFoundError(f"{self.url}: no session {session_id}")

    def locator(self, session_id: str) -> str:
        return str(self.path_of(session_id))

    def file_name(self, session_id: str) -> str | None:
        return self.path_of(session_id).name

    # ------------------------------------------------------------------
    # handles

    def handle(self, session_id: str) -> FileHandle:
        """The :class:`FileHandle` of the session's file (:meth:`path_of`).

        Raises:
            SessionNotFoundError: no such session.
        """
        return FileHandle(self.path_of(session_id), store=self, session_id=session_id)

    def new_handle(self, header: dict[str, Any], *, file_name: str | None = None) -> FileHandle:
        """See :meth:`SessionStore.new_handle`: a new file in the header
        cwd's directory, named ``file_name`` or ``<header
        timestamp>_<id>.jsonl``.

        Raises:
            SessionExistsError: the id exists already.
            UnnamableSessionError (a StoreError): no ``file_name`` and an
                id that cannot be part of a file name (``/``, ``\\``, NUL),
                or a cwd holding NUL.
        """
        session_id: str = header["id"]
        if self.exists(session_id):
            raise SessionExistsError(f"{self.url}: a session with id {session_id} exists already")
        cwd: str = header["cwd"] if isinstance(header.get("cwd"), str) else ""
        if isinstance(cwd, str) and "\x00" in cwd:
            raise UnnamableSessionError(f"{self.url}: session {session_id!r}: its cwd {cwd!r} cannot name a directory (it holds NUL)")
        directory = self.session_dir(cwd if is_windows_absolute(cwd) else resolve_path(cwd) if cwd else "/")
        if file_name is None or not _SAFE_NAME.fullmatch(file_name):
            ts = header.get("timestamp")
            file_name = session_file_name(file_timestamp(ts if isinstance(ts, str) else now_iso()), session_id)
            if not _SAFE_NAME.fullmatch(file_name):
                # pi never makes such an id; a hand-made or shared database can hold one
                raise UnnamableSessionError(f"{self.url}: session id {session_id!r} cannot name a file (it holds '/', '\\' or NUL)")
        return FileHandle(directory / file_name, store=self, session_id=session_id)

    def delete(self, session_id: str, *, expected_size: int | None = None) -> bool:
        """See :meth:`SessionStore.delete`. With ``expected_size`` the file
        is unlinked while its append lock is held
        (:func:`pi_session.storage.locked_append_fd`): an appender waiting
        for the lock then finds the file gone and writes nothing."""
        try:
            path = self.path_of(session_id)
        except SessionNotFoundError:
            return False
        before = self._dir_mtime(path.parent)
        if expected_size is None:
            path.unlink()
        else:
            try:
                with locked_append_fd(path, create=False) as (fd, _created):
                    size = os.fstat(fd).st_size
                    if size != expected_size:
                        raise SessionChangedError(f"{path}: the session changed since it was read ({size} bytes, not {expected_size}); not deleted")
                    path.unlink()
            except FileNotFoundError:
                return False
        self._remember(path.parent, session_id, None, before)
        return True

    # ------------------------------------------------------------------
    # reading

    def exists(self, session_id: str) -> bool:
        try:
            self.path_of(session_id)
        except SessionNotFoundError:
            return False
        return True

    def session_marks(self, session_ids: Iterable[str]) -> dict[str, tuple[int, ...]]:
        """See :meth:`SessionStore.session_marks`: the stamp of each
        session's file (:func:`pi_session.storage.file_stamp`: an append
        changes size and times, an atomic rewrite the inode), found in one
        pass over the directory memo (a ``stat`` per project directory)
        plus a ``stat`` per session."""
        wanted = set(session_ids)
        marks: dict[str, tuple[int, ...]] = {}
        for _sub, ids in self._dir_ids():
            for session_id in wanted.intersection(ids):
                if session_id in marks:
                    continue
                try:
                    st = os.stat(ids[session_id])
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    marks[session_id] = file_stamp(st)
        return marks

    def sync_sessions(self, session_ids: Iterable[str]) -> None:
        """See :meth:`SessionStore.sync_sessions`. On Linux one
        ``syncfs(2)`` of the store's file system (it returns once everything
        written to that file system is on disk: one journal commit instead
        of one per file, several times faster for hundreds of new files;
        other file systems are not flushed); elsewhere, or when ``syncfs``
        is not there, an ``fsync`` of each session's file, then of their
        directories and of the root (new names in them), found in one pass
        over the directory memo.

        Raises:
            OSError: a file cannot be opened or synced.
        """
        wanted = set(session_ids)
        if not wanted:
            return
        if sys.platform.startswith("linux") and _syncfs(self.root):
            return
        dirs: set[Path] = set()
        for sub, ids in self._dir_ids():
            for session_id in wanted.intersection(ids):
                fd = os.open(ids[session_id], os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                dirs.add(sub)
        for directory in sorted(dirs):
            fsync_dir(directory)
        fsync_dir(self.root)

    def read_lines(self, session_id: str) -> Iterator[bytes]:
        path = self.path_of(session_id)
        return (raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path))

    def list(self, *, cwd: str | None = None, with_text: bool = True, on_progress: Any = None) -> builtins.list[dict[str, Any]]:
        """:func:`pi_session.stores.listing.list_session_dir` of the cwd's directory
        (:func:`~pi_session.stores.listing.list_sessions_dirs` of the root without
        a cwd); ``allMessagesText`` is always there."""
        if cwd is not None:
            return list_session_dir(self.session_dir(cwd), on_progress=on_progress)
        return list_sessions_dirs(self.root, on_progress=on_progress)

    def find(self, prefix: str, *, limit: int = 20) -> builtins.list[str]:
        return sorted({sid for sid, _path in self._ids() if sid.startswith(prefix)})[:limit]

    def most_recent(self, cwd: str | None = None) -> str | None:
        """The session of ``cwd`` whose file was modified last (as
        :meth:`pi_session.SessionManager.continue_recent` picks it)."""
        if cwd is None:
            return super().most_recent(cwd)
        path = most_recent_file(self.session_dir(cwd))
        if path is None:
            return None
        header = read_session_header(path)
        return str(header["id"]) if header else None


def open_file_store(url: str, **options: Any) -> FileStore:
    """The opener :mod:`pi_session.stores.registry` has for paths and
    ``file://`` URLs: :meth:`FileStore.at`."""
    return FileStore.at(url, **options)


class FileHandle(SessionHandle):
    """A session file (any path; a :class:`FileStore` hands them out for its
    sessions): reads with :func:`pi_session.storage.read_session_file`,
    creates with :func:`~pi_session.storage.create_file` (temp file + hard
    link: whole or not at all, never over an existing file), appends with
    :func:`~pi_session.storage.append_lines_checked` (one ``write`` per
    line under an exclusive ``flock``, torn tails repaired first).

    Args:
        path: the ``.jsonl`` file (it need not exist yet).
        store: the FileStore the file belongs to, if any: its create errors
            are then the store's (:class:`SessionExistsError`,
            :class:`UnnamableSessionError`) and its directory memo is kept
            up to date.
        session_id: the session's id (with ``store``).
    """

    path: Path

    def __init__(self, path: str | os.PathLike[str], *, store: FileStore | None = None, session_id: str | None = None) -> None:
        self.path = Path(path).absolute()
        self.location = str(self.path)
        self.store = store
        self.session_id = session_id

    def exists(self) -> bool:
        return self.path.exists()

    def read(self, *, migrate: bool = True, lazy: bool | Literal["always"] = False) -> SessionFile:
        """See :meth:`SessionHandle.read`; ``lazy`` reads with
        ``read_session_file(lazy="auto")`` (lazily when it pays off),
        ``"always"`` with ``read_session_file(lazy=True)``."""
        return read_session_file(self.path, migrate=migrate, lazy=True if lazy == "always" else "auto" if lazy else False)

    def _claimed_id(self) -> str | None:
        """The session id this file claims in its directory: the handle's
        id, else the one its name ``<timestamp>_<id>.jsonl`` gives."""
        return self.session_id if self.session_id is not None else session_id_of_file_name(self.path.name)

    def create(self, lines: Sequence[bytes], *, durability: Durability = Durability.ENTRY) -> int:
        """See :meth:`SessionHandle.create` (the directory is created 0700
        when missing). A file of a session id (its name
        ``<timestamp>_<id>.jsonl``, or a FileStore's session) is created
        under the directory's creation lock
        (:func:`pi_session.storage.directory_lock`), and refused when a file
        named ``<any timestamp>_<id>.jsonl`` is there already: two writers
        starting one new id at once create one file, never two with
        different timestamps (:meth:`existing` names the winner's).

        Raises:
            FileExistsError: the file, or a file of the same id, exists
                (with a store: :class:`SessionExistsError`).
        """
        before = self.store._dir_mtime(self.path.parent) if self.store is not None else None
        try:
            self._create_claimed(lines, durability)
        except FileExistsError as exc:
            if self.store is None:
                raise
            # another writer was first (or its name is taken): the memo
            # missed it, so the store looks again next time
            self.store._forget(self.path.parent)
            other = exc.filename if exc.filename and exc.filename != str(self.path) else None
            if other is None:
                raise SessionExistsError(f"{self.path}: the file exists already") from None
            raise SessionExistsError(f"{self.store.url}: a session with id {self.session_id} exists already: {other}") from None
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG or self.store is None:
                raise
            raise UnnamableSessionError(f"{self.path}: file name too long for session {self.session_id!r}") from None
        if self.store is not None and self.session_id is not None:
            self.store._remember(self.path.parent, self.session_id, self.path, before)
        return sum(len(line) for line in lines)

    def _create_claimed(self, lines: Sequence[bytes], durability: Durability) -> None:
        session_id = self._claimed_id()
        if session_id is None:
            create_file(self.path, lines, durability)
            return
        directory = self.path.parent
        ensure_dir(directory)
        with directory_lock(directory):
            other = self.store._named_in(directory, session_id) if self.store is not None else session_file_named(directory, session_id)
            if other is not None:
                raise FileExistsError(errno.EEXIST, f"a session with id {session_id} exists already", str(other))
            create_file(self.path, lines, durability)

    def existing(self) -> FileHandle | None:
        """After :meth:`create` refused: the file of the same session id in
        this file's directory (:func:`session_file_named`), else this file
        when it exists; None when neither does."""
        session_id = self._claimed_id()
        other = session_file_named(self.path.parent, session_id) if session_id is not None else None
        if other is None and self.path.is_file():
            other = self.path
        return FileHandle(other, store=self.store, session_id=self.session_id) if other is not None else None

    def append(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
        session_id: str | None = None,
    ) -> AppendResult:
        """See :meth:`SessionHandle.append`
        (:func:`pi_session.storage.append_lines_checked`; without
        ``session_id`` the file is created when missing)."""
        if self.store is not None and session_id is None and not self.path.exists():
            raise SessionNotFoundError(f"{self.store.url}: no session {self.session_id}")
        return append_lines_checked(
            self.path, lines, durability, expected_size=expected_size, on_grown=on_grown, session_id=session_id
        )

    def replace_lines(self, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        """See :meth:`SessionHandle.replace_lines`: the file still holds
        exactly ``old`` (read again), then
        :func:`pi_session.storage.atomic_rewrite` with no backup, refused
        when the file changes after that check (its size and mtime, under
        the append lock).

        Raises:
            FileNotFoundError: no such file.
            pi_session.storage.SessionFileError: the file no longer holds
                ``old``; nothing was changed.
        """
        st = os.stat(self.path)
        data = b"".join(old)
        current = b"".join(raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(self.path))
        if st.st_size != len(data) or current != data:
            raise SessionFileError(self.path, "the session changed while it was being rewritten; nothing was changed")
        atomic_rewrite(self.path, new, backup_tag=None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns)

    def size(self) -> int | None:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return None

    def read_lines_from(self, offset: int) -> LinesRead:
        """See :meth:`SessionHandle.read_lines_from`: the file's bytes from
        ``offset - 1`` to its size when opened (a line another process is
        appending meanwhile is left out: it has no newline yet).

        Raises:
            FileNotFoundError: no such file.
        """
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            base = min(max(offset - 1, 0), st.st_size)
            chunks = []
            at = base
            while at < st.st_size:
                chunk = os.pread(fd, st.st_size - at, at)
                if not chunk:
                    break  # truncated meanwhile
                chunks.append(chunk)
                at += len(chunk)
        finally:
            os.close(fd)
        return lines_from(b"".join(chunks), offset, file_stamp(st), base=base)

    def stamp(self) -> SessionStamp | None:
        """See :meth:`SessionHandle.stamp`: the file's size, device, inode,
        mtime and ctime (:func:`pi_session.storage.file_stamp`); None when
        it cannot be stat'ed."""
        try:
            return file_stamp(self.path.stat())
        except OSError:
            return None

    def flush(self) -> None:
        """fsync the file and its directory (when the file exists)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(self.path.parent)

    def keep_migration(self, sf: SessionFile, *, read_only: bool) -> tuple[str, bool]:
        """Rewrite the migrated file atomically, keeping the original as
        ``<file>.v<N>.bak`` (:func:`pi_session.storage.rewrite_records`),
        unless ``read_only``. A file its owner made read-only (or that is
        not ours to write) stays as it is and is opened read-only (beyond
        pi, which fails to open it)."""
        version = sf.migrated_from
        if read_only:
            return f"{self.path}: version {version} file migrated in memory only", True
        try:
            backup = rewrite_records(sf, backup_tag=f"v{version}")
        except PermissionError as exc:
            return (
                f"{self.path}: version {version} file migrated in memory only ({exc.strerror or 'not writable'}); opened read-only",
                True,
            )
        return f"{self.path}: migrated from version {version}; original kept as {backup}", False


def most_recent_file(directory: Path, resolved_cwd: str | None = None) -> Path | None:
    """The ``*.jsonl`` file of ``directory`` with the newest mtime whose
    header can be read (and, with ``resolved_cwd``, whose header cwd is that
    cwd), or None (pi's ``continueRecent``). Only regular files count: a
    FIFO or a device (or a symlink to one) named ``*.jsonl`` is passed over
    without being opened (beyond pi)."""
    candidates: list[tuple[int, Path]] = []
    for name in jsonl_names(directory) or ():
        path = directory / name
        try:
            st = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            candidates.append((st.st_mtime_ns, path))
    candidates.sort(key=lambda c: c[0], reverse=True)
    for _mtime, path in candidates:
        header = read_session_header(path)
        if header is not None and (resolved_cwd is None or session_cwd_matches(header.get("cwd"), resolved_cwd)):
            return path
    return None


def _syncfs(directory: Path) -> bool:
    """``syncfs(2)`` of the file system holding ``directory`` (Linux's libc):
    True when done, False when the call is not available.

    Raises:
        OSError: the directory cannot be opened or the file system synced.
    """
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if call(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(directory))
    finally:
        os.close(fd)
    return True
