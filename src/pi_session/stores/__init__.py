"""Session stores: where sessions live. One interface, :class:`SessionStore`
(:mod:`.base`, which imports no backend), handing out one
:class:`SessionHandle` per session (:mod:`.handle`), and three backends
chosen by URL scheme (:func:`open_store`, which looks the scheme up in the
table of :mod:`.registry`), each declaring what it can do beyond the
interface (:class:`StoreCapability`, :mod:`.capabilities`): a directory of pi's
JSONL files (:class:`FileStore`, the default), a SQLite file
(:class:`SQLiteStore`) and PostgreSQL (``PostgresStore``: it needs psycopg
3). Backends are imported when first used. Every store holds each session as
the exact lines pi would write, so moving sessions between stores is
lossless (:mod:`pi_session.stores.transfer`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .base import (
    STORE_ENV,
    AmbiguousSessionError,
    CapabilityError,
    SessionChangedError,
    SessionExistsError,
    SessionNotFoundError,
    SessionStore,
    StoreError,
    mask_url,
    sqlite_path,
)
from .capabilities import StoreCapability
from .handle import FailingHandle, LinesRead, MemoryHandle, OnGrown, SessionHandle
from .registry import BACKENDS, open_store, register_backend

if TYPE_CHECKING:
    from .file import FileHandle, FileStore
    from .sqlite import SQLiteStore

__all__ = [
    "BACKENDS",
    "STORE_ENV",
    "AmbiguousSessionError",
    "CapabilityError",
    "FailingHandle",
    "FileHandle",
    "FileStore",
    "LinesRead",
    "MemoryHandle",
    "OnGrown",
    "SQLiteStore",
    "SessionChangedError",
    "SessionExistsError",
    "SessionHandle",
    "SessionNotFoundError",
    "SessionStore",
    "StoreCapability",
    "StoreError",
    "mask_url",
    "open_store",
    "register_backend",
    "shared_store",
]

_LAZY_NAMES = {
    "FileStore": ("file", "FileStore"),
    "FileHandle": ("file", "FileHandle"),
    "SQLiteStore": ("sqlite", "SQLiteStore"),
    "PostgresStore": ("postgres", "PostgresStore"),
}


def __getattr__(name: str) -> Any:
    """The backends, imported when first named."""
    where = _LAZY_NAMES.get(name)
    if where is None:
        raise AttributeError(name)
    import importlib

    value = getattr(importlib.import_module(f".{where[0]}", __name__), where[1])
    globals()[name] = value
    return value


_shared: dict[tuple[int, str], SessionStore] = {}


def shared_store(url_or_path: str | os.PathLike[str] | SessionStore) -> SessionStore:
    """:func:`open_store`, opened once per URL and process (a store object
    is returned as it is): what ``SessionManager``'s ``store=`` uses for a
    URL, so managers of one process share one connection pool. A forked
    child opens its own."""
    if isinstance(url_or_path, SessionStore):
        return url_or_path
    key = (os.getpid(), os.fspath(url_or_path))
    store = _shared.get(key)
    if store is None:
        store = _shared[key] = open_store(url_or_path)
    return store
