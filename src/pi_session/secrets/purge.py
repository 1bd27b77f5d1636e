"""Caches that may hold a session's text, purged after ``scrub --mode
rewrite``: :func:`purge_caches`, the one place that knows them."""

from __future__ import annotations

import os
from pathlib import Path

from ..records import StrPath

__all__ = ["purge_caches"]


def purge_caches(path: StrPath | None = None, *, store: object = None, session_id: str | None = None) -> None:
    """Drop what caches hold of a rewritten session.

    - The listing index of the session file's directory (``ls``'s cache of
      first messages and names, :mod:`pi_session.listing`): refreshed by a
      listing of that directory, which reads the rewritten file again (its
      inode changed) and writes the index atomically without the old text.
      Only when the directory has an index already.
    - A database store recomputes its listing columns in the rewrite's own
      transaction (:meth:`pi_session.stores.sql.SQLHandle.replace_lines`):
      nothing to do here.

    Args:
        path: the rewritten session file, or None (a database session).
        store, session_id: the store and id of the session (unused by the
            caches above; for caches keyed by session id).
    """
    if path is not None:
        from ..listing import INDEX_NAME, list_session_dir

        directory = Path(os.path.realpath(path)).parent
        if (directory / INDEX_NAME).exists():
            list_session_dir(directory)
