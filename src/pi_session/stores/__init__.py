"""Session stores: where sessions live. One interface, :class:`SessionStore`
(:mod:`.base`, which imports no backend), handing out one
:class:`SessionHandle` per session (:mod:`.handle`), and three backends
chosen by URL here (:func:`open_store`, the registry): a directory of pi's
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
    SessionExistsError,
    SessionNotFoundError,
    SessionStore,
    StoreError,
    mask_url,
    sqlite_path,
)
from .handle import FailingHandle, MemoryHandle, OnGrown, SessionHandle

if TYPE_CHECKING:
    from .file import FileHandle, FileStore
    from .sqlite import SQLiteStore

__all__ = [
    "STORE_ENV",
    "AmbiguousSessionError",
    "FailingHandle",
    "FileHandle",
    "FileStore",
    "MemoryHandle",
    "OnGrown",
    "SQLiteStore",
    "SessionExistsError",
    "SessionHandle",
    "SessionNotFoundError",
    "SessionStore",
    "StoreError",
    "mask_url",
    "open_store",
    "shared_store",
]

_BACKENDS = {
    "FileStore": ("file", "FileStore"),
    "FileHandle": ("file", "FileHandle"),
    "SQLiteStore": ("sqlite", "SQLiteStore"),
    "PostgresStore": ("postgres", "PostgresStore"),
}


def __getattr__(name: str) -> Any:
    """The backends, imported when first named."""
    where = _BACKENDS.get(name)
    if where is None:
        raise AttributeError(name)
    import importlib

    value = getattr(importlib.import_module(f".{where[0]}", __name__), where[1])
    globals()[name] = value
    return value


def open_store(url_or_path: str | os.PathLike[str] | SessionStore, **options: Any) -> SessionStore:
    """A store for a URL (a store object is returned as it is).

    - ``sqlite:///path/to/sessions.db`` (``sqlite:////abs/path`` or
      ``sqlite:///relative``; ``~`` is expanded): :class:`SQLiteStore`,
      the file created when missing;
    - ``postgresql://user:password@host:port/db`` (or ``postgres://``):
      ``PostgresStore`` (needs the ``psycopg`` package);
    - ``file://...`` or any other string: a directory, the sessions root
      (:class:`FileStore`; like ``~/.pi/agent/sessions``).

    Args:
        options: passed to the backend's constructor.

    Raises:
        StoreError: an unknown URL scheme, a libpq ``key=value``
            connection string (refused: it would be taken as a directory
            named ``host=``), a sessions root that is not a
            directory, or the backend cannot be opened (the message shows
            the URL with its password masked).
    """
    if isinstance(url_or_path, SessionStore):
        return url_or_path
    text = os.fspath(url_or_path)
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme == "sqlite":
        from .sqlite import SQLiteStore

        return SQLiteStore(sqlite_path(text), **options)
    if scheme in ("postgresql", "postgres"):
        try:
            from .postgres import PostgresStore  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise StoreError(f"{mask_url(text)}: PostgreSQL stores need psycopg 3 ({exc})") from None
        return PostgresStore(text, **options)  # type: ignore[no-any-return,unused-ignore]
    if scheme in ("", "file"):
        if not isinstance(url_or_path, os.PathLike) and _looks_like_conninfo(text) and not os.path.exists(text):
            raise StoreError(
                f"{mask_url(text)}: a libpq connection string is not a store URL; "
                "write it as postgresql://?KEY=VALUE&... (e.g. postgresql:///DB?host=/run/postgresql)"
            )
        from .file import FileStore

        return FileStore.at(text, **options)
    raise StoreError(f"{mask_url(text)}: unknown store URL scheme {scheme!r} (use a directory, sqlite:///FILE or postgresql://...)")


_CONNINFO_KEYWORDS = frozenset(
    "host hostaddr port dbname user password passfile service sslmode options application_name connect_timeout".split()
)


def _looks_like_conninfo(text: str) -> bool:
    """Whether ``text`` starts as a libpq ``key=value`` connection string
    (``host=/tmp dbname=x``): taken as a directory it would create one
    named ``host=``."""
    key, sep, _rest = text.strip().partition("=")
    return bool(sep) and key.strip().lower() in _CONNINFO_KEYWORDS


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
