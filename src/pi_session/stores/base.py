"""The session store interface (:class:`SessionStore`), its errors, URL
masking, and :func:`open_store`, which picks a backend by URL.

A store holds sessions as pi's session files do: each session is an
append-only sequence of *lines*, the exact bytes pi would write (one JSON
record and its ``\\n`` each), the first one the session header. Everything
a store takes and gives back is lines, so the same tolerant parsing, the
same damage reports and the same migration apply to every backend
(:func:`pi_session.storage.read_session_lines`), and a file moved into a
database and back is byte-identical.

A session is named by its id (the header's ``id``). Positions: a store
counts the bytes of a session's lines (the file size, for files); a reader
is given that count as :attr:`pi_session.storage.SessionFile.size` and
passes it back as ``expected_size`` when appending, which is how an append
sees what other writers appended since (the stale-leaf rule of
:meth:`pi_session.SessionManager.open`'s ``concurrent`` option).

Backends:

- :class:`pi_session.stores.file.FileStore`: today's files under a sessions
  root (``<root>/<encoded cwd>/<timestamp>_<id>.jsonl``), byte-compatible
  with pi; the default.
- :class:`pi_session.stores.sqlite.SQLiteStore`: one SQLite file (stdlib
  ``sqlite3``, WAL).
- ``pi_session.stores.postgres.PostgresStore``: PostgreSQL (psycopg 3 with a
  pool), for many machines.

The SQL backends share :mod:`pi_session.stores.sql`.
"""

from __future__ import annotations

import builtins
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from ..storage import AppendResult, Durability, SessionFile

__all__ = [
    "SessionStore",
    "StoreError",
    "SessionExistsError",
    "SessionNotFoundError",
    "AmbiguousSessionError",
    "OnGrown",
    "open_store",
    "shared_store",
    "mask_url",
    "STORE_ENV",
]

STORE_ENV = "PI_SESSION_STORE"
"""The environment variable the CLI reads a store URL from (``--store`` wins)."""

OnGrown = Callable[[list[bytes]], Sequence[bytes] | None]
"""``on_grown(foreign_lines) -> lines | None``: called inside an append,
while the session is locked, with the lines other writers appended since
``expected_size``; returns the lines to write instead, None to keep them, or
raises to write nothing (exactly as for
:func:`pi_session.storage.append_lines_checked`)."""


class StoreError(Exception):
    """A store cannot do what was asked; ``str(error)`` is one line (URLs
    in it have their password masked)."""


class SessionExistsError(StoreError, FileExistsError):
    """:meth:`SessionStore.create` for a session id the store holds already."""


class SessionNotFoundError(StoreError, LookupError):
    """No session with that id (or id prefix) in the store."""


class AmbiguousSessionError(SessionNotFoundError):
    """An id prefix that matches more than one session; ``matches`` holds
    (up to 20 of) their ids."""

    def __init__(self, message: str, matches: Sequence[str]) -> None:
        super().__init__(message)
        self.matches = list(matches)


_URL_PASSWORD = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@?#]*):(?P<password>[^@/?#]*)@")
_QUERY_PASSWORD = re.compile(r"(?i)(?P<key>(?:^|[?&;\s])password=)(?P<value>[^&;\s]*)")


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***``: the one in
    ``scheme://user:password@host`` and a ``password=`` query or conninfo
    parameter. Everything else is kept (for messages and listings)."""
    masked = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:***@", url)
    return _QUERY_PASSWORD.sub(lambda m: f"{m['key']}***", masked)


class SessionStore(ABC):
    """Where sessions live. Thread-safe for use by one process; many
    processes (and machines, for PostgreSQL) may use one store at once: each
    append is atomic and sees the others' appends.

    Subclasses implement the abstract methods; :meth:`read`,
    :meth:`resolve`, :meth:`most_recent` and the context manager have
    default implementations built on them.

    Attributes:
        url: the store's URL or path as shown to users (password masked).
    """

    url: str = ""

    # ------------------------------------------------------------------
    # writing

    @abstractmethod
    def create(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        file_name: str | None = None,
    ) -> str:
        """Create a session from its lines, exclusively and atomically (all
        lines or none).

        Args:
            lines: the session's lines, each ending in ``\\n`` (only an
                imported file's unterminated last line may lack it); the
                first one is the session header (``type`` ``session`` with a
                string ``id``). Lines that do not parse (an imported damaged
                line) are stored as they are.
            durability: as for session files (a database commits every
                transaction durably, whatever this says).
            file_name: the file name the session had (import), kept so an
                export to a directory restores it; FileStore writes the file
                under that name instead of ``<timestamp>_<id>.jsonl``.

        Returns:
            The session id.

        Raises:
            SessionExistsError: the store holds a session with that id.
            StoreError: the first line is not a session header.
        """

    @abstractmethod
    def append(
        self,
        session_id: str,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
    ) -> AppendResult:
        """Append complete lines to a session, atomically (all or none; a
        file store writes line by line under its lock, see
        :func:`pi_session.storage.append_lines_checked`).

        With ``expected_size`` (the size this process last read or wrote)
        and ``on_grown``: while the session is locked, when other writers
        appended since, their lines are passed to ``on_grown``, which
        returns the lines to write instead (None: keep ``lines``) or raises
        (nothing is written, the error propagates).

        Returns:
            :class:`pi_session.storage.AppendResult`: ``notes``, the new
            ``size`` (bytes), the ``foreign`` lines seen.

        Raises:
            SessionNotFoundError: no such session.
            pi_session.storage.AppendError: (files) a write failed part way.
        """

    @abstractmethod
    def delete(self, session_id: str) -> bool:
        """Remove a session and all its lines.

        Returns:
            True when it existed.
        """

    # ------------------------------------------------------------------
    # reading

    @abstractmethod
    def exists(self, session_id: str) -> bool:
        """Whether the store holds a session with exactly this id."""

    @abstractmethod
    def read_lines(self, session_id: str) -> Iterator[bytes]:
        """A session's lines in append order, exactly as stored (the header
        first; damaged lines too; each with its ``\\n``, except an
        unterminated last line). Concatenated, they are the session's file.

        Raises:
            SessionNotFoundError: no such session.
        """

    def read(self, session_id: str, *, migrate: bool = True) -> SessionFile:
        """Read a session into the :class:`pi_session.storage.SessionFile`
        the file reader returns (same records, entries, problems and
        in-memory migration; ``path`` is the file for a FileStore, else
        None with ``name`` = :meth:`locator`); ``size`` is the position to
        pass back as ``expected_size``.

        Raises:
            SessionNotFoundError: no such session.
            pi_session.storage.SessionFileError: its first record is not a
                session header.
        """
        from ..storage import read_session_lines

        return read_session_lines(self.read_lines(session_id), name=self.locator(session_id), migrate=migrate)

    @abstractmethod
    def list(self, *, cwd: str | None = None, with_text: bool = True) -> list[dict[str, Any]]:
        """Infos of the store's sessions, newest ``modified`` first, with the
        keys of :func:`pi_session.listing.build_session_info` (``path`` is
        :meth:`locator`).

        Args:
            cwd: a resolved path: only sessions whose header cwd resolves to
                it (see :func:`pi_session.listing.session_cwd_matches`).
            with_text: include ``allMessagesText`` (a database then reads
                every message's text; False answers from the sessions
                table alone and leaves the key out).
        """

    @abstractmethod
    def find(self, prefix: str, *, limit: int = 20) -> builtins.list[str]:
        """Ids of sessions starting with ``prefix`` (case-sensitive; an
        empty prefix matches all), sorted, at most ``limit``."""

    @abstractmethod
    def locator(self, session_id: str) -> str:
        """How messages and listings name a session: the file path for a
        FileStore, ``<masked url>#<id>`` for a database."""

    def file_name(self, session_id: str) -> str | None:
        """The file name the session had when it was imported (or has, in a
        FileStore), or None when unknown.

        Raises:
            SessionNotFoundError: no such session.
        """
        if not self.exists(session_id):
            raise SessionNotFoundError(f"{self.url}: no session {session_id}")
        return None

    # ------------------------------------------------------------------
    # derived

    def resolve(self, id_or_prefix: str) -> str:
        """The id of the one session whose id is ``id_or_prefix`` or starts
        with it (or, when none does, with its lower-case form).

        Raises:
            SessionNotFoundError: none does.
            AmbiguousSessionError: several do (and none is exactly it).
        """
        if not id_or_prefix:
            raise SessionNotFoundError(f"{self.url}: no session id given")
        if self.exists(id_or_prefix):
            return id_or_prefix
        matches = self.find(id_or_prefix, limit=6)
        if not matches and id_or_prefix != id_or_prefix.lower():
            # pi's ids are lower-case UUIDs; a prefix typed in capitals finds
            # them, as the file lookup of the CLI does
            matches = self.find(id_or_prefix.lower(), limit=6)
        if not matches:
            raise SessionNotFoundError(f"{self.url}: no session id starts with {id_or_prefix!r}")
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
            raise AmbiguousSessionError(f"{self.url}: ambiguous session id prefix {id_or_prefix!r} ({shown})", matches)
        return matches[0]

    def most_recent(self, cwd: str | None = None) -> str | None:
        """The id of the session modified last (of ``cwd``, a resolved
        path, when given), or None (``continue_recent``)."""
        infos = self.list(cwd=cwd, with_text=False)
        return str(infos[0]["id"]) if infos else None

    def close(self) -> None:
        """Release connections (a no-op for files). The store is unusable
        afterwards."""

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


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
        StoreError: an unknown URL scheme, a sessions root that is not a
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
        from ..listing import resolve_path
        from .file import FileStore

        root = resolve_path(text)
        if os.path.exists(root) and not os.path.isdir(root):
            raise StoreError(f"{root}: not a directory")
        return FileStore(root, **options)
    raise StoreError(f"{mask_url(text)}: unknown store URL scheme {scheme!r} (use a directory, sqlite:///FILE or postgresql://...)")


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


def sqlite_path(url: str) -> Path:
    """The database file of a ``sqlite:///...`` URL: what follows
    ``sqlite://`` with one ``/`` removed (so ``sqlite:///rel.db`` is
    relative, ``sqlite:////abs.db`` and ``sqlite:///~/x.db`` as expected);
    a query or fragment is not allowed.

    Raises:
        StoreError: no path.
    """
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise StoreError(f"{mask_url(url)}: a sqlite URL names a local file: sqlite:///path/to/sessions.db")
    rest = url.split("://", 1)[1]
    rest = rest[len(parts.netloc):]
    path = rest[1:] if rest.startswith("/") else rest
    if not path or parts.query or parts.fragment:
        raise StoreError(f"{mask_url(url)}: expected sqlite:///path/to/sessions.db")
    if path.startswith("~"):
        return Path(os.path.expanduser(path))
    return Path(os.path.abspath(path))
