"""The table of store backends by URL scheme (:data:`BACKENDS`) and
:func:`open_store`, which looks a URL's scheme up in it. A backend is a
module of this package (or any importable module) named in the table by
text and imported when a URL of its scheme is first opened, so opening a
directory never imports ``sqlite3`` or ``psycopg``.

A new backend is one row: ``register_backend("mysql", "my_pkg.store",
"open_mysql", label="MySQL")``, where ``open_mysql(url, **options)`` returns the
:class:`~pi_session.stores.SessionStore`."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from .base import SessionStore, StoreError, mask_url

__all__ = ["Backend", "BACKENDS", "register_backend", "open_store", "url_scheme"]


@dataclass(frozen=True)
class Backend:
    """One row of :data:`BACKENDS`.

    Attributes:
        module: the module holding the opener (absolute, or relative to
            :mod:`pi_session.stores` when it starts with ``.``).
        opener: the name of a callable ``opener(url, **options) ->
            SessionStore`` in it (a class is one).
        label: the backend's name in messages (``SQLite``).
        needs: what to install when the module cannot be imported (shown
            in the error), or "".
    """

    module: str
    opener: str
    label: str
    needs: str = ""

    def load(self) -> Callable[..., SessionStore]:
        """The opener, its module imported now.

        Raises:
            ImportError: the module (or what it needs) is not installed.
        """
        module = importlib.import_module(self.module, __package__)
        return cast("Callable[..., SessionStore]", getattr(module, self.opener))


BACKENDS: dict[str, Backend] = {
    "": Backend(".file", "open_file_store", "file"),
    "file": Backend(".file", "open_file_store", "file"),
    "sqlite": Backend(".sqlite", "open_sqlite_store", "SQLite"),
    "postgresql": Backend(".postgres", "PostgresStore", "PostgreSQL", "psycopg 3"),
    "postgres": Backend(".postgres", "PostgresStore", "PostgreSQL", "psycopg 3"),
}
"""Store backends by URL scheme (lower case; ``""``: a path without a
scheme, a sessions root)."""


def register_backend(scheme: str, module: str, opener: str, *, label: str = "", needs: str = "") -> None:
    """Add (or replace) the backend of a URL scheme in :data:`BACKENDS`:
    ``open_store("<scheme>://...")`` then imports ``module`` and returns
    ``<module>.<opener>(url, **options)``."""
    BACKENDS[scheme.lower()] = Backend(module, opener, label or scheme, needs)


def url_scheme(text: str) -> str:
    """The lower-case scheme of a store URL (``sqlite:///x`` → ``sqlite``),
    ``""`` for a path."""
    return text.split("://", 1)[0].lower() if "://" in text else ""


def open_store(url_or_path: str | os.PathLike[str] | SessionStore, **options: Any) -> SessionStore:
    """A store for a URL (a store object is returned as it is), opened by
    the backend :data:`BACKENDS` has for its scheme:

    - ``sqlite:///path/to/sessions.db`` (``sqlite:////abs/path`` or
      ``sqlite:///relative``; ``~`` is expanded): ``SQLiteStore``,
      the file created when missing;
    - ``postgresql://user:password@host:port/db`` (or ``postgres://``):
      ``PostgresStore`` (needs the ``psycopg`` package);
    - ``file://...`` or a path: a directory, the sessions root
      (``FileStore``; like ``~/.pi/agent/sessions``).

    Args:
        options: passed to the backend's opener.

    Raises:
        StoreError: an unknown URL scheme, a libpq ``key=value``
            connection string (refused: it would be taken as a directory
            named ``host=``), a sessions root that is not a
            directory, or the backend cannot be opened or imported (the
            message shows the URL with its password masked).
    """
    if isinstance(url_or_path, SessionStore):
        return url_or_path
    text = os.fspath(url_or_path)
    scheme = url_scheme(text)
    backend = BACKENDS.get(scheme)
    if backend is None:
        known = ", ".join(f"{s}://" for s in sorted(BACKENDS) if s)
        raise StoreError(f"{mask_url(text)}: unknown store URL scheme {scheme!r} (use a directory or one of {known})")
    if not scheme and not isinstance(url_or_path, os.PathLike) and _looks_like_conninfo(text) and not os.path.exists(text):
        raise StoreError(
            f"{mask_url(text)}: a libpq connection string is not a store URL; "
            "write it as postgresql://?KEY=VALUE&... (e.g. postgresql:///DB?host=/run/postgresql)"
        )
    try:
        opener = backend.load()
    except ImportError as exc:
        needs = f"need {backend.needs}" if backend.needs else "cannot be opened"
        raise StoreError(f"{mask_url(text)}: {backend.label} stores {needs} ({exc})") from None
    return opener(text, **options)


_CONNINFO_KEYWORDS = frozenset(
    "host hostaddr port dbname user password passfile service sslmode options application_name connect_timeout".split()
)


def _looks_like_conninfo(text: str) -> bool:
    """Whether ``text`` starts as a libpq ``key=value`` connection string
    (``host=/tmp dbname=x``): taken as a directory it would create one
    named ``host=``."""
    key, sep, _rest = text.strip().partition("=")
    return bool(sep) and key.strip().lower() in _CONNINFO_KEYWORDS
