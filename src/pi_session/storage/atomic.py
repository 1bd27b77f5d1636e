"""Durable file-system primitives and THE atomic write: :func:`write_atomic`
(temp file beside the target, write, fsync, rename, fsync of the directory;
mode 0600 unless told otherwise; a replaced file's owner and group), which every temp-and-rename of pi_session goes through (session
creation and rewrites in :mod:`.rewrite`, the listing index, ``export``'s
output file). Also :func:`ensure_dir` (0700 directories), :func:`fsync_dir`,
:data:`data_sync` and :func:`write_all`."""

from __future__ import annotations

import contextlib
import os
import stat
import warnings
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .model import DIR_MODE, FILE_MODE
from ..entries.records import StrPath

def ensure_dir(directory: StrPath) -> None:
    """Create ``directory`` and any missing parents, each with mode 0700
    (``os.makedirs`` would give the parents the umask's default) and, run
    as root, the owner and group of the directory it is made in
    (:func:`adopt_directory_owner`); existing directories keep their mode
    and owner."""
    missing: list[Path] = []
    current = Path(directory)
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            if not d.is_dir():
                raise
            continue
        if os.geteuid() == 0:
            with contextlib.suppress(OSError):
                dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
                try:
                    adopt_directory_owner(dfd, d.parent, d)
                finally:
                    os.close(dfd)


# fdatasync flushes the appended bytes and the new file size (what reading
# them back needs) but not the modification time: about half an fsync's cost.
data_sync = getattr(os, "fdatasync", os.fsync)


def fsync_dir(directory: StrPath | int) -> None:
    """fsync a directory (making a created, renamed or removed name in it
    durable), given by path or as an open descriptor; errors are ignored
    (some file systems cannot)."""
    if isinstance(directory, int):
        with contextlib.suppress(OSError):
            os.fsync(directory)
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte of ``data`` is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _temp_path(target: Path) -> Path:
    """``.<name>.<8 hex>.tmp`` beside ``target`` (a name that already starts
    with a dot does not get a second one)."""
    import secrets  # here: hmac and hashlib load only when a file is written

    name = target.name if target.name.startswith(".") else f".{target.name}"
    return target.with_name(f"{name}.{secrets.token_hex(4)}.tmp")


class OwnershipWarning(UserWarning):
    """A rewritten file could not keep its owner or group (the process may
    not give a file away: only root may, or an owner to a group of its
    own); the file now belongs to the process that rewrote it."""


def keep_ownership(fd: int, original: os.stat_result, path: StrPath, *, mode: bool = True) -> None:
    """Give the open file ``fd`` the owner and group of ``original`` (the
    stat of the file it is about to replace, or a backup's original) and,
    with ``mode``, its permission bits: ``os.fchown`` when they differ (root
    may, and an owner may change the group to one of its own), then
    ``os.fchmod`` (after the chown, which clears set-id bits). An owner that
    cannot be kept is said with an :class:`OwnershipWarning` naming
    ``path``; the write goes on."""
    current = os.fstat(fd)
    want = (original.st_uid, original.st_gid)
    if (current.st_uid, current.st_gid) != want:
        try:
            os.fchown(fd, *want)
        except OSError as exc:
            warnings.warn(
                f"{path}: could not keep owner {want[0]}:{want[1]} "
                f"(now {current.st_uid}:{current.st_gid}): {exc.strerror or exc}",
                OwnershipWarning,
                stacklevel=3,
            )
    if mode:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(original.st_mode))


def adopt_directory_owner(fd: int, directory: StrPath | int, path: StrPath) -> None:
    """Give the file or directory just created as ``fd`` (at ``path``) the
    owner and group of ``directory`` (a path or an open descriptor), the directory it was created in,
    when the process runs as root: root working in a user's session
    directory leaves what it creates there (sessions, side files,
    directories) the user's, as a rewrite keeps a replaced file's owner
    (:func:`keep_ownership`, which this uses, mode untouched; an
    :class:`OwnershipWarning` when the owner cannot be given). Other users
    cannot give a file away: nothing is done (the system already gives a
    file the group of a set-group-id directory). The caller creates every
    file and directory it writes in a user's directory through this or
    :func:`write_atomic`, :func:`ensure_dir`,
    :func:`~.append.write_side_file` or :func:`~.append.locked_append_fd`,
    which call it."""
    if os.geteuid() != 0:
        return
    try:
        owner = os.stat(directory)
    except OSError:
        return
    keep_ownership(fd, owner, path, mode=False)


def write_atomic(
    path: StrPath,
    chunks: Iterable[bytes],
    *,
    replace: bool = True,
    durable: bool = True,
    keep_mode: bool = False,
    guard: Callable[[Path], AbstractContextManager[object]] | None = None,
    mode: int = FILE_MODE,
    dir_fd: int | None = None,
) -> None:
    """Write a file so that it appears whole or not at all.

    Steps: create a temp file ``.<name>.<8 hex>.tmp`` beside ``path``
    (``O_EXCL``, mode 0600), write ``chunks`` to it, fsync it, rename it to
    ``path`` (or hard-link it, see ``replace``), fsync the directory. A file
    replaced keeps its owner and group (:func:`keep_ownership`: the temp
    file gets them before the rename, so root rewriting a user's file leaves
    it the user's; an :class:`OwnershipWarning` when the owner cannot be
    kept), and its mode with ``keep_mode``; a new file gets the owner and
    group of its directory when the process runs as root
    (:func:`adopt_directory_owner`), else it is the process's. The
    temp file is removed whatever happens (a killed process may leave it
    behind; :mod:`pi_session.check.repair` cleans those up beside sessions).

    Args:
        path: the file to write; its directory must exist.
        chunks: the content, piece by piece (bytes).
        replace: True: ``os.replace`` (an existing file is replaced).
            False: ``os.link``, which refuses to replace anything
            (FileExistsError, also when ``path`` appeared meanwhile).
        durable: False skips both fsyncs (the content still appears whole;
            a power loss may lose it).
        keep_mode: a replaced file keeps its permission bits (session
            rewrites); False: the result has ``mode``.
        mode: the permission bits of a new file (and of a replaced one
            without ``keep_mode``), less the process's umask: 0600 (a
            session), 0644 for an export made to be shared.
        guard: called with the temp file's path once it is written; the
            context manager it returns is held around the rename and the
            directory fsync (a lock, last checks that raise to write
            nothing, a backup, the temp file's mode).
        dir_fd: a descriptor of the directory to write in; ``path`` is then
            a name in it, and every step goes through the descriptor (the
            temp file is made with ``O_NOFOLLOW``), so a directory renamed
            away and replaced meanwhile changes nothing.

    Raises:
        OSError: on I/O failure (``path`` is then untouched);
            FileExistsError when ``replace`` is False and ``path`` exists;
            whatever ``guard`` raises.
    """
    target = Path(path)
    tmp = _temp_path(target)
    at: dict[str, Any] = {} if dir_fd is None else {"dir_fd": dir_fd}
    both: dict[str, Any] = {} if dir_fd is None else {"src_dir_fd": dir_fd, "dst_dir_fd": dir_fd}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, **at)
    try:
        original: os.stat_result | None = None
        if replace:
            with contextlib.suppress(FileNotFoundError):
                original = os.stat(target, **at)
        if original is not None and stat.S_ISREG(original.st_mode):
            keep_ownership(fd, original, target, mode=keep_mode)
        else:
            adopt_directory_owner(fd, target.parent if dir_fd is None else dir_fd, target)
        with os.fdopen(fd, "wb", closefd=True) as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        with guard(tmp) if guard is not None else contextlib.nullcontext():
            if replace:
                os.replace(tmp, target, **both)
            else:
                os.link(tmp, target, **both)  # fails if target exists: never clobber
                os.unlink(tmp, **at)  # before the directory fsync, which then covers both
            if durable:
                fsync_dir(target.parent if dir_fd is None else dir_fd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, **at)
