"""Session stores: where sessions live (issue 14). One interface,
:class:`SessionStore`, three backends chosen by URL (:func:`open_store`):
a directory of pi's JSONL files (:class:`FileStore`, the default), a SQLite
file (:class:`SQLiteStore`) and PostgreSQL (``PostgresStore``, imported
lazily: it needs psycopg 3). Every store holds each session as the exact
lines pi would write, so moving sessions between stores is lossless
(:mod:`pi_session.stores.transfer`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import (
    STORE_ENV,
    AmbiguousSessionError,
    OnGrown,
    SessionExistsError,
    SessionNotFoundError,
    SessionStore,
    StoreError,
    mask_url,
    open_store,
    shared_store,
)

if TYPE_CHECKING:
    from .file import FileStore
    from .sqlite import SQLiteStore

__all__ = [
    "STORE_ENV",
    "AmbiguousSessionError",
    "FileStore",
    "OnGrown",
    "SQLiteStore",
    "SessionExistsError",
    "SessionNotFoundError",
    "SessionStore",
    "StoreError",
    "mask_url",
    "open_store",
    "shared_store",
]


def __getattr__(name: str) -> Any:
    """The backends, imported when first named."""
    if name == "FileStore":
        from .file import FileStore

        return FileStore
    if name == "SQLiteStore":
        from .sqlite import SQLiteStore

        return SQLiteStore
    if name == "PostgresStore":
        from .postgres import PostgresStore  # type: ignore[import-not-found,unused-ignore]

        return PostgresStore
    raise AttributeError(name)
