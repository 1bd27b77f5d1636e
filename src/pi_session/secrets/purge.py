"""Caches that may hold a session's text, purged after ``scrub --mode
rewrite``: :func:`purge_caches`, the one place that knows them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..records import StrPath

__all__ = ["purge_caches"]


def purge_caches(path: StrPath | None = None, *, store: object = None, session_id: str | None = None) -> None:
    """Drop what caches hold of a rewritten session.

    - The listing index of the session file's directory (``ls``'s cache of
      first messages and names, :mod:`pi_session.listing`, in the cache
      directory): refreshed by a listing of that directory, which reads the
      rewritten file again (its inode changed) and writes the index
      atomically without the old text. Only when the directory has one.
      Its files of other format versions (:mod:`pi_session.cache`: the
      version is in the name), which this version cannot rewrite, are
      deleted (their version rebuilds them); so is the current one when
      its cache directory is not one pi-session uses (another user could
      change it: it is never opened).
    - The listing index older pi-session versions kept inside the session
      directory (``.pi-session-index``, no longer read): deleted.
    - Every search index of session files (:mod:`pi_session.search`, one
      per root searched, all in the cache directory): the session's
      documents are forgotten (:meth:`pi_session.search.files.FileIndex.forget`:
      FTS5 merged, free pages zeroed, write-ahead log truncated); the next
      search indexes the rewritten file again. Index files of other
      format versions are deleted (their version rebuilds them); in a
      cache directory pi-session does not use, every index file of the
      user's is deleted unopened.
    - A database store recomputes its listing columns in the rewrite's own
      transaction (:meth:`pi_session.stores.sql.SQLHandle.replace_lines`);
      its search tables are rebuilt for the session right after
      (:func:`pi_session.search.reindex_session`).

    Args:
        path: the rewritten session file, or None (a database session).
        store, session_id: the database store and id of the session; for a
            file, ``session_id`` defaults to its header's id.

    Raises:
        OSError: a cache could not be written (the session itself is
            already rewritten).
    """
    if path is not None:
        from ..listing import INDEX_NAME, index_path, list_session_dir

        from ..cache import dir_problem, other_versions

        directory = Path(os.path.realpath(path)).parent
        legacy = directory / INDEX_NAME
        if legacy.is_file():
            legacy.unlink()
        current = index_path(directory)
        usable = dir_problem(current.parent) is None
        stale = other_versions(current)
        if not usable:
            stale.append(current)  # never opened there: deleted unread
        elif current.exists():
            list_session_dir(directory)
        for old in stale:
            with contextlib.suppress(OSError):
                if usable or os.lstat(old).st_uid == os.geteuid():
                    old.unlink()
        sid = session_id if session_id is not None else _header_id(Path(path))
        if sid is not None:
            _forget_in_file_indexes(sid)
    elif store is not None and session_id is not None:
        from ..search import reindex_session
        from ..stores import SessionStore

        if isinstance(store, SessionStore):
            reindex_session(store, session_id)


def _header_id(path: Path) -> str | None:
    from ..jsonio import loads

    try:
        with path.open("rb") as f:
            header = loads(f.readline())
    except (OSError, ValueError):
        return None
    sid = header.get("id") if isinstance(header, dict) else None
    return sid if isinstance(sid, str) else None


def _forget_in_file_indexes(session_id: str) -> None:
    import re

    from ..cache import dir_problem
    from ..paths import cache_dir
    from ..search.files import INDEX_VERSION, FileIndex

    search_dir = cache_dir() / "search"
    ours = re.compile(rf"[0-9a-f]{{32}}\.v{re.escape(INDEX_VERSION)}\.(sqlite3|shard[0-9]+\.db)(-wal|-shm|-journal)?")
    usable = dir_problem(search_dir) is None
    for other in sorted(search_dir.glob("*.*")):
        if re.fullmatch(r"[0-9a-f]{32}\..*", other.name) and not (usable and ours.fullmatch(other.name)):
            # another version's index (this one cannot purge its format), or
            # any index in a directory never opened
            with contextlib.suppress(OSError):
                if usable or os.lstat(other).st_uid == os.geteuid():
                    other.unlink()
    if not usable:
        return
    for orphan in sorted(search_dir.glob("*.shard*.db*")):  # a shard whose index's main file was deleted
        if not (search_dir / f"{orphan.name.split('.shard')[0]}.sqlite3").exists():
            orphan.unlink(missing_ok=True)
    for index_file in sorted(search_dir.glob("*.sqlite3")):
        index = FileIndex(index_file.parent, path=index_file)
        try:
            index.forget(session_id)
        finally:
            index.close()
