"""What counts as a damaged search index (the files' cache and its
shards): such an index is deleted and rebuilt, with one warning."""

from __future__ import annotations

import sqlite3

from ..errors import PiSessionError

__all__ = ["IndexDamaged", "is_damage"]

_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "no such table", "no such column", "unsupported file format")


class IndexDamaged(PiSessionError):
    """The index file (or one of its shards) is not a usable index: of
    another version, a shard missing. Search catches it and rebuilds the
    index (with one warning); a caller sees it only from the index's
    internals."""


def is_damage(exc: BaseException) -> bool:
    """Whether an error means the index is damaged (and is to be rebuilt):
    :class:`IndexDamaged`, or an SQLite error saying the file is not a
    database, malformed, or lacks a table or column of the index."""
    return isinstance(exc, IndexDamaged) or (
        isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc).lower() for w in _DAMAGE_WORDS)
    )
