"""Caches that may hold a session's text, purged after ``scrub --mode
rewrite``: :func:`purge_caches`, the one place that knows them."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from ..entries.records import StrPath

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = ["purge_caches"]


def purge_caches(path: StrPath | None = None, *, store: SessionStore | None = None, session_id: str | None = None) -> list[str]:
    """Drop what caches hold of a rewritten session.

    - The listing index of the session file's directory (``ls``'s cache of
      first messages and names, :mod:`pi_session.stores.listing`, in the cache
      directory, keyed by the directory's real path): refreshed by a
      listing of that directory, which reads the rewritten file again (its
      inode changed) and writes the index atomically without the old text.
      Only when the directory has one. Its files of other format versions
      (:mod:`pi_session.storage.cache`: the version is in the name), which this
      version cannot rewrite, are deleted (their version rebuilds them); so
      is the current one when its cache directory is not one pi-session
      uses (another user could change it: it is never opened).
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
      transaction (:meth:`pi_session.stores.SessionHandle.replace_lines`);
      its search tables are rebuilt for the session right after
      (:func:`pi_session.search.reindex_session`).

    Args:
        path: the rewritten session file, or None (a database session).
        store, session_id: the database store and id of the session; for a
            file, ``session_id`` defaults to its header's id.

    Returns:
        One line for each cache that could not be cleaned (it names the
        cache file and the error, and says it may still hold the old text);
        the others are cleaned all the same. Empty when all went well.
    """
    problems: list[str] = []
    if path is not None:
        from ..storage.cache import dir_problem, other_versions
        from ..stores.listing import INDEX_NAME, index_path, list_session_dir

        directory = Path(os.path.realpath(path)).parent
        legacy = directory / INDEX_NAME
        try:
            if legacy.is_file():
                legacy.unlink()
        except OSError as exc:
            problems.append(_problem(legacy, exc))
        current = index_path(directory)
        usable = dir_problem(current.parent) is None
        stale = other_versions(current)
        if not usable:
            stale.append(current)  # never opened there: deleted unread
        else:
            try:
                if current.exists():
                    list_session_dir(directory)
            except (OSError, sqlite3.Error) as exc:
                problems.append(_problem(current, exc))
        for old in stale:
            _delete(old, usable, problems)
        sid = session_id if session_id is not None else _header_id(Path(path))
        if sid is not None:
            problems.extend(_forget_in_file_indexes(sid))
    elif store is not None and session_id is not None:
        from ..search import reindex_session
        from ..stores import StoreError

        try:
            reindex_session(store, session_id)
        except (OSError, sqlite3.Error, StoreError) as exc:
            problems.append(f"the search index of {store.url}: {_reason(exc)}; it may still hold the old text")
    return problems


def _delete(cache: Path, usable: bool, problems: list[str]) -> None:
    """Delete a cache file unread: any file in a cache directory
    pi-session uses (``usable``), only the user's own in one it does not
    use (another user may have put files there); a failure is a line in
    ``problems``."""
    try:
        if usable or os.lstat(cache).st_uid == os.geteuid():
            cache.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        problems.append(_problem(cache, exc))


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def _problem(cache: Path, exc: BaseException) -> str:
    return f"{cache}: could not be cleaned ({_reason(exc)}); it may still hold the old text: delete it"


def _header_id(path: Path) -> str | None:
    from ..core.jsonio import loads

    try:
        with path.open("rb") as f:
            header = loads(f.readline())
    except (OSError, ValueError):
        return None
    sid = header.get("id") if isinstance(header, dict) else None
    return sid if isinstance(sid, str) else None


def _forget_in_file_indexes(session_id: str) -> list[str]:
    """Forget the session in every search index of this version, delete
    the index files of other versions (and, in a cache directory
    pi-session does not use, every index file of the user's, unopened);
    one problem line for each index or file that could not be cleaned."""
    from ..storage.cache import dir_problem
    from ..core.paths import cache_dir
    from ..search.files import INDEX_VERSION, FileIndex

    problems: list[str] = []
    search_dir = cache_dir() / "search"
    ours = re.compile(rf"[0-9a-f]{{32}}\.v{re.escape(INDEX_VERSION)}\.(sqlite3|shard[0-9]+\.db)(-wal|-shm|-journal)?")
    usable = dir_problem(search_dir) is None
    try:
        names = sorted(search_dir.glob("*.*"))
    except OSError as exc:
        return [_problem(search_dir, exc)]
    for other in names:
        if re.fullmatch(r"[0-9a-f]{32}\..*", other.name) and not (usable and ours.fullmatch(other.name)):
            # another version's index (this one cannot purge its format), or
            # any index in a directory never opened
            _delete(other, usable, problems)
    if not usable:
        return problems
    try:
        orphans = sorted(search_dir.glob("*.shard*.db*"))
        index_files = sorted(search_dir.glob("*.sqlite3"))
    except OSError as exc:
        return [*problems, _problem(search_dir, exc)]
    for orphan in orphans:  # a shard whose index's main file was deleted
        if not (search_dir / f"{orphan.name.split('.shard')[0]}.sqlite3").exists():
            try:
                orphan.unlink(missing_ok=True)
            except OSError as exc:
                problems.append(_problem(orphan, exc))
    for index_file in index_files:
        try:
            index = FileIndex(index_file.parent, path=index_file)
            try:
                index.forget(session_id)
            finally:
                index.close()
        except (OSError, sqlite3.Error) as exc:
            problems.append(_problem(index_file, exc))
    return problems
