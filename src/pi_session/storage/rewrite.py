"""Whole-file writes of session files: :func:`create_file` (a new file,
never replacing one), :func:`atomic_rewrite` (replace the content under the
append lock, keeping a backup), backups (:func:`backup_path`) and
:func:`rewrite_records` (migration and repair rewrites). All go through
:func:`pi_session.storage.atomic.write_atomic`."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core import jsonio
from .append import locked_append_fd, free_side_path
from .atomic import keep_ownership, write_all, ensure_dir, write_atomic
from .model import FILE_MODE, Durability, SessionFileError
from .reader import SessionFile, iter_lines
from ..entries.records import StrPath

def create_file(path: StrPath, lines: Iterable[bytes], durability: Durability = Durability.ENTRY) -> None:
    """Write a new session file atomically (temp file + hard link): it
    appears whole or not at all, mode 0600, in a directory created 0700.
    Refuses to replace an existing file.

    Raises:
        FileExistsError: ``path`` exists.
    """
    p = Path(path)
    if os.path.lexists(p):
        raise FileExistsError(errno.EEXIST, "session file exists", str(p))
    ensure_dir(p.parent)
    write_atomic(p, lines, replace=False, durable=durability is not Durability.NONE)


def backup_path(path: StrPath, tag: str) -> Path:
    """A free name ``<file>.<tag>.bak`` (or ``.<tag>.bak.<n>``) next to ``path``."""
    return free_side_path(path, f"{tag}.bak")


def _make_backup(path: Path, tag: str, fd_size: int) -> Path:
    """Keep the current content of ``path`` as a backup: a hard link (free,
    the old inode survives the rename, and keeps its owner, group and
    mode), else a fsync'd copy given the original's owner, group and mode
    (:func:`~.atomic.keep_ownership`)."""
    backup = backup_path(path, tag)
    try:
        os.link(path, backup)
        return backup
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    with open(path, "rb") as src:
        original = os.fstat(src.fileno())
        data = src.read(fd_size)
    bfd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        keep_ownership(bfd, original, backup)
        write_all(bfd, data)
        os.fsync(bfd)
    finally:
        os.close(bfd)
    return backup


def atomic_rewrite(
    path: StrPath,
    lines: Iterable[bytes],
    *,
    backup_tag: str | None,
    expect_size: int | None = None,
    expect_mtime_ns: int | None = None,
) -> Path | None:
    """Replace a file's content atomically, keeping the original as a backup.

    Steps: write ``lines`` to a temp file ``.<name>.<random>.tmp`` in the
    same directory (with the original's owner, group and mode, see
    :func:`~.atomic.write_atomic`; an ``OwnershipWarning`` when the owner
    cannot be kept) and fsync it; under
    the append lock, check the file did not change since it was read
    (``expect_size``/``expect_mtime_ns``), hard-link the original to the
    backup name, rename the temp file over the original, fsync the
    directory. Killed at any point, ``path`` holds either the old or the new
    content, whole (a killed run may leave the temp file behind).

    Args:
        path: the file to replace (must exist); a symlink is followed, so
            the file it names is replaced and the link stays.
        lines: the new content, line by line (each ending in ``\\n``).
        backup_tag: tag of the backup name (e.g. ``"v1"``, ``"repair"``);
            None for no backup.
        expect_size, expect_mtime_ns: refuse if the file changed since read.

    Returns:
        The backup path, or None.

    Raises:
        SessionFileError: the file changed while it was being rewritten.
        OSError: on I/O failure, or ``path`` is missing (the original is
            then untouched).
    """
    # Through a symlink the file it names is rewritten (replacing the link
    # would leave the real file behind, unchanged, for the next append).
    p = Path(os.path.realpath(path))
    backup: Path | None = None

    @contextlib.contextmanager
    def locked(tmp: Path) -> Iterator[None]:
        # under the append lock: no append lands between the check and the rename
        nonlocal backup
        with locked_append_fd(p, create=False) as (lock_fd, _created):
            st = os.fstat(lock_fd)
            if (expect_size is not None and st.st_size != expect_size) or (
                expect_mtime_ns is not None and st.st_mtime_ns != expect_mtime_ns
            ):
                raise SessionFileError(p, "the file changed while it was being rewritten; nothing was changed")
            if backup_tag is not None:
                backup = _make_backup(p, backup_tag, st.st_size)
            yield

    write_atomic(p, lines, keep_mode=True, guard=locked)
    return backup


def rewrite_records(sf: SessionFile, *, backup_tag: str) -> Path | None:
    """Rewrite ``sf.path`` with its (migrated) records serialized again, every
    other line kept byte for byte (unparseable lines, blank lines, the
    fragments of recovered lines on a line of their own); a record split
    over several lines (``sf.spans``) becomes one line.

    Returns:
        The backup path.
    """
    assert sf.path is not None
    return atomic_rewrite(
        sf.path, rewritten_lines(sf), backup_tag=backup_tag, expect_size=sf.size, expect_mtime_ns=sf.mtime_ns
    )


def rewritten_lines(sf: SessionFile) -> Iterator[bytes]:
    """The lines :func:`rewrite_records` writes for ``sf`` (read from
    ``sf.path``): its records serialized again, every other line byte for
    byte (the import of a migrated file into a session store uses them
    too)."""
    assert sf.path is not None
    by_line = dict(zip(sf.record_lines, sf.records))
    pieces = {n for first, last in sf.spans.items() for n in range(first + 1, last + 1)}
    for line_no, raw, _had_newline in iter_lines(sf.path):
        if line_no in pieces:
            continue  # a later piece of a split record, written whole with its first line
        record = by_line.get(line_no)
        if record is None:
            yield raw + b"\n"
            continue
        fragment = sf.fragments.get(line_no)
        if fragment:
            yield fragment + b"\n"
        yield jsonio.dumps_line(record)
