"""pi-session's cache directory and the files in it (**beyond pi**): the
listing index (:mod:`pi_session.stores.listing`), the search index
(:mod:`pi_session.search.files`) and the import state
(:mod:`pi_session.importers.state`), each in its own directory under
:func:`pi_session.core.paths.cache_dir`.

A cache is only ever a copy of what the session files hold, so nothing is
lost by not using one; using one that another user can change would let
that user choose what pi-session writes (a symbolic link planted where an
index is made makes its target written) or reads (a planted index). The
rules, which every cache follows:

- **The directory** (:func:`usable_cache_dir`, :func:`prepare_cache_dir`, :func:`dir_problem`): a cache
  directory and pi-session's cache directory above it are used only when
  they belong to the user and no other user may write into them; every
  directory above those belongs to the user or to root, and one that
  others may write into (``/tmp``) has the sticky bit and the entry
  below it belongs to the user or to root. A cache directory that breaks a rule is
  not used at all, not even created: the command works without its cache
  and says so in one warning line.
- **The files** (:func:`read_cache_file`, :func:`write_cache_file`,
  :func:`create_cache_file`, :func:`file_problem`; the opening is
  :mod:`.guarded`'s, which ``slim``'s blobs use too): opened without
  following a symbolic link (``O_NOFOLLOW``) and without blocking
  (``O_NONBLOCK``: a FIFO does not hang the command), read only when what
  was opened is a regular file owned by the user, and at most a given
  number of bytes. Something else at a cache file's path (a symbolic link,
  a FIFO, another user's file) is never opened; it is removed (the
  directory is the user's own) before the cache is written there.
- **The names** (:func:`versioned_name`): a cache file's name holds its
  format version (``<key>.v<version>.<suffix>``), so two installed
  versions of pi-session sharing one cache directory each keep their own
  file instead of rebuilding each other's. A file of another version (or
  of a version whose names had none) is left alone.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import stat
import warnings
from pathlib import Path

from ..entries.records import StrPath
from . import FILE_MODE, ensure_dir, write_atomic
from .guarded import open_regular, private_dir_problem, read_open

__all__ = [
    "CacheWarning",
    "create_cache_file",
    "dir_problem",
    "file_problem",
    "other_versions",
    "prepare_cache_dir",
    "read_cache_file",
    "usable_cache_dir",
    "versioned_name",
    "write_cache_file",
]


class CacheWarning(UserWarning):
    """A cache directory is not used (another user could change it): the
    command goes on without that cache. The message names the directory,
    why, and what goes on without it."""


def versioned_name(key: str, version: str | int, suffix: str) -> str:
    """A cache file's name: ``<key>.v<version><suffix>`` (``suffix`` with
    its dot, e.g. ``.json``)."""
    return f"{key}.v{version}{suffix}"


def other_versions(path: StrPath) -> list[Path]:
    """The files beside the cache file ``path`` (named by
    :func:`versioned_name`) that hold the same cache in another format
    version: ``<key>.v<other><suffix>``, or ``<key><suffix>`` (names
    without a version). Sorted; nothing is opened.

    Raises:
        ValueError: ``path`` is not a versioned name.
    """
    p = Path(path)
    match = re.fullmatch(r"(.+?)\.v[^.]+(\..+)", p.name)
    if match is None:
        raise ValueError(f"{p.name}: not a versioned cache file name")
    key, suffix = match.groups()
    same = re.compile(re.escape(key) + r"(\.v[^.]+)?" + re.escape(suffix))
    return sorted(f for f in p.parent.glob(f"{glob.escape(key)}.*") if f.name != p.name and same.fullmatch(f.name))


def _is_ours(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid()


def _chain_problem(chain: list[Path], private: int) -> str | None:
    """:func:`dir_problem` for one chain of directories, ``/`` first; each
    is ``stat``-ed through links (the names below it resolve there), the
    entry below a sticky directory by itself (``lstat``: only its owner
    or root may rename it)."""
    for i, d in enumerate(chain):
        try:
            st = os.stat(d)
        except FileNotFoundError:
            return None  # made by the caller, under a directory checked here
        except OSError as exc:
            return f"{d} cannot be examined ({exc.strerror or exc})"
        if not stat.S_ISDIR(st.st_mode):
            return f"{d} is not a directory"
        mode = stat.S_IMODE(st.st_mode)
        if i >= len(chain) - private:
            problem = private_dir_problem(st, os.geteuid())
            if problem is not None:
                return f"{d} {problem}"
            continue
        if not _is_ours(st) and st.st_uid != 0:
            return f"{d} belongs to another user (uid {st.st_uid})"
        if mode & 0o022:
            if not mode & stat.S_ISVTX:
                return f"{d} is writable by other users (mode {mode:04o})"
            if i + 1 < len(chain):
                try:
                    entry = os.lstat(chain[i + 1])
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    return f"{chain[i + 1]} cannot be examined ({exc.strerror or exc})"
                if not _is_ours(entry) and entry.st_uid != 0:
                    return f"{chain[i + 1]} belongs to another user (uid {entry.st_uid}) in {d}, which others may write into"
    return None


def dir_problem(directory: StrPath, *, private: int = 2) -> str | None:
    """Why ``directory`` must not hold a cache, or None when no other user
    can change it (see the module docstring). Both the path as written and
    the path with its symbolic links resolved are checked; parts that do
    not exist yet are not (the caller creates them, 0700, in a directory
    checked here).

    Args:
        directory: the cache directory (``<cache dir>/<part>``).
        private: how many directories at the end of the path must belong
            to the user and be writable by nobody else (2: the cache
            directory and pi-session's cache directory); the ones above
            may belong to root, and be writable by others only with the
            sticky bit and the entry below them the user's or root's.

    Returns:
        One phrase naming the directory at fault (``"/x is writable by
        other users (mode 0777)"``), or None.
    """
    written = Path(os.path.abspath(directory))
    real = Path(os.path.realpath(directory))
    for path in (written, real) if written != real else (written,):
        problem = _chain_problem([path, *path.parents][::-1], private)
        if problem is not None:
            return problem
    return None


def prepare_cache_dir(directory: StrPath) -> str | None:
    """Check ``directory`` (``<cache dir>/<part>``) with :func:`dir_problem`
    and create it (0700) when missing.

    Returns:
        None when it may hold a cache; else why not (one phrase; also
        when it cannot be created).

    Raises:
        nothing.
    """
    problem = dir_problem(directory)
    if problem is not None:
        return problem
    try:
        ensure_dir(directory)
    except OSError as exc:
        return f"it cannot be created ({exc.strerror or exc})"
    return dir_problem(directory)


def usable_cache_dir(directory: StrPath, without: str) -> bool:
    """Whether ``directory`` may hold a cache (:func:`prepare_cache_dir`:
    created when missing). When it may not: False, after a
    :class:`CacheWarning` (one line: the directory, why, and ``without``,
    e.g. ``"listing without it"``), except when it merely cannot be
    created (caches are written only where they can be, silently).

    Raises:
        nothing.
    """
    problem = dir_problem(directory)
    if problem is None:
        try:
            ensure_dir(directory)
        except OSError:
            return False
        problem = dir_problem(directory)
        if problem is None:
            return True
    warnings.warn(f"the cache directory {directory} is not used: {problem}; {without}", CacheWarning, stacklevel=2)
    return False


def file_problem(path: StrPath) -> str | None:
    """Why the file at a cache path must not be opened, or None when there
    is none or it is a regular file of the user's (``lstat``: a symbolic
    link is never followed).

    Returns:
        ``"a symbolic link"``, ``"not a regular file"``, ``"owned by
        another user (uid N)"``, ``"not examinable (...)"``, or None.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"not examinable ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not _is_ours(st):
        return f"owned by another user (uid {st.st_uid})"
    return None


def read_cache_file(path: StrPath, limit: int) -> bytes | None:
    """The bytes of a cache file, or None when it is missing, cannot be
    read, is not a regular file of the user's (a symbolic link, a FIFO, a
    device, another user's file: never followed, never blocking;
    :func:`~.guarded.open_regular`) or holds more than ``limit`` bytes (a
    cache that large is rebuilt).

    Raises:
        nothing.
    """
    try:
        fd, st = open_regular(path)
    except OSError:
        return None
    try:
        return read_open(fd, st, limit) if _is_ours(st) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_cache_file(path: StrPath, data: bytes) -> None:
    """Write a cache file atomically (mode 0600, no fsync: a cache),
    first removing whatever else is at its path (:func:`file_problem`: a
    symbolic link is removed, its target untouched). The directory must be
    one :func:`usable_cache_dir` accepted.

    Raises:
        OSError: the file cannot be written.
    """
    if file_problem(path) is not None:
        os.unlink(path)
    write_atomic(path, [data], durable=False)


def create_cache_file(path: StrPath) -> None:
    """Create an empty cache file (mode 0600) unless one exists, never
    through a symbolic link (``O_EXCL | O_NOFOLLOW``: a dangling link's
    target is not created).

    Raises:
        OSError: it cannot be created (an existing file is no error).
    """
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE))
