"""The creation lock of a sessions directory: :func:`directory_lock`, an
exclusive ``flock`` on the directory itself, held while a writer checks
that no file of the directory holds a session id and creates the file for
it (:meth:`pi_session.stores.FileHandle.create`), so that two writers
(threads or processes) starting the same new id at once never both create
a file (beyond pi, which names files ``<timestamp>_<id>.jsonl`` and so
writes two files with one id when two writers start it at once)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from ..entries.records import StrPath
from .atomic import adopt_directory_owner
from .model import FILE_MODE

__all__ = ["directory_lock", "LOCK_FILE_NAME"]

LOCK_FILE_NAME = ".pi-session-create.lock"
"""The lock file used instead where a directory cannot be ``flock``-ed
itself (some network file systems): an empty hidden file, never a
``*.jsonl`` name, so neither pi nor a listing ever reads it."""


@contextlib.contextmanager
def directory_lock(directory: StrPath) -> Iterator[None]:
    """Hold ``directory``'s creation lock (it must exist): an exclusive
    ``flock`` on the directory, else, where the file system refuses that,
    on :data:`LOCK_FILE_NAME` in it. Waits for another holder; released
    when the block ends (or the process dies)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        fd = os.open(os.path.join(directory, LOCK_FILE_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            adopt_directory_owner(fd, directory, os.path.join(directory, LOCK_FILE_NAME))
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock
