"""The session store interface (:class:`SessionStore`), its errors and URL
masking. It imports no backend: :func:`pi_session.stores.open_store` picks
one by URL.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import PiSessionError
from ..storage import AppendResult, Durability, SessionFile, parse_line
from ..entries.records import is_session_header
from .capabilities import StoreCapability
from .handle import LinesRead, OnGrown, SessionHandle

__all__ = [
    "SessionStore",
    "StoreCapability",
    "StoreError",
    "CapabilityError",
    "SessionExistsError",
    "SessionNotFoundError",
    "SessionChangedError",
    "AmbiguousSessionError",
    "OnGrown",
    "mask_url",
    "session_header",
    "sqlite_path",
    "STORE_ENV",
    "URL_PASSWORD",
    "QUERY_PASSWORD",
    "KEYWORD_PASSWORD",
]

STORE_ENV = "PI_SESSION_STORE"
"""The environment variable the CLI reads a store URL from (``--store`` wins)."""

class StoreError(PiSessionError):
    """A store cannot do what was asked; ``str(error)`` is one line (URLs
    in it have their password masked)."""


class CapabilityError(StoreError, NotImplementedError):
    """A store was asked for what it does not declare in
    :attr:`SessionStore.capabilities`; ``capability`` names it."""

    def __init__(self, url: str, capability: StoreCapability, doing: str) -> None:
        super().__init__(f"{mask_url(url)}: this store cannot {doing} (it does not declare {capability.name})")
        self.capability = capability


class SessionExistsError(StoreError, FileExistsError):
    """:meth:`SessionStore.create` for a session id the store holds already."""


class SessionNotFoundError(StoreError, LookupError):
    """No session with that id (or id prefix) in the store."""


class SessionChangedError(StoreError):
    """A write that was to be made only on a session as last read
    (:meth:`SessionStore.delete` with ``expected_size``) found it changed:
    other writers appended since. Nothing was done."""


class AmbiguousSessionError(SessionNotFoundError):
    """An id prefix that matches more than one session; ``matches`` holds
    (up to 20 of) their ids."""

    def __init__(self, message: str, matches: Sequence[str]) -> None:
        super().__init__(message)
        self.matches = list(matches)


URL_PASSWORD = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@?#\s]*):"
    r"(?P<password>\*\*\*(?=@)|[^\n]*)@(?=[^@\s]*(?:\s|$))"
)
QUERY_PASSWORD = re.compile(r"(?i)(?P<key>[?&]password=)(?P<value>[^&\s]*)")
KEYWORD_PASSWORD = re.compile(
    r"(?i)(?P<key>(?:^|(?<=\s))password\s*=\s*)(?P<value>'(?:[^'\\]|\\.?)*'?|(?:[^\s\\]|\\.?)*)"
)
"""The password of ``scheme://user:password@host`` (``URL_PASSWORD``: up to
the *last* ``@`` before the host, so ``#``, ``?``, ``/``, ``:``, spaces and
raw ``@`` in it are masked too; an ``@`` later in the URL's query masks more
than the password, never less), of a ``password=`` URL query parameter
(``QUERY_PASSWORD``: up to ``&``) and of a ``password=`` keyword of a libpq
conninfo string (``KEYWORD_PASSWORD``: ``password = value``, a value quoted
with ``'...'`` and backslash escapes, or unquoted up to white space)."""


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***``: the one in
    ``scheme://user:password@host``, a ``password=`` query parameter and a
    ``password=`` conninfo keyword, in every form libpq accepts (see
    :data:`URL_PASSWORD`). Everything else is kept (for messages and
    listings). Tested by tests/test_stores_attack.py
    (``test_password_with_any_character_*``)."""
    masked = URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:***@", url)
    masked = KEYWORD_PASSWORD.sub(lambda m: f"{m['key']}***", masked)
    return QUERY_PASSWORD.sub(lambda m: f"{m['key']}***", masked)


class SessionStore(ABC):
    """Where sessions live. Thread-safe for use by one process; many
    processes (and machines, for PostgreSQL) may use one store at once: each
    append is atomic and sees the others' appends.

    Subclasses implement the abstract methods; every write goes through
    the session handles they hand out (:meth:`handle`, :meth:`new_handle`;
    :mod:`pi_session.stores.handle`), so :meth:`create`, :meth:`append` and
    :meth:`read` are built on them, as are :meth:`resolve`,
    :meth:`most_recent` and the context manager.

    Attributes:
        url: the store's URL or path as shown to users (password masked).
        capabilities: what the store can do beyond this interface
            (:class:`~pi_session.stores.capabilities.StoreCapability`);
            each backend declares its own. A method of a capability the
            store does not declare raises :class:`CapabilityError`.
    """

    url: str = ""
    capabilities: StoreCapability = StoreCapability.NONE

    def can(self, capability: StoreCapability) -> bool:
        """Whether the store declares every capability in ``capability``
        (one :class:`StoreCapability` or several or-ed together)."""
        return capability in self.capabilities

    def require(self, capability: StoreCapability, doing: str) -> None:
        """Raise :class:`CapabilityError` (``"<url>: this store cannot
        <doing> ..."``) unless the store declares ``capability``."""
        if capability not in self.capabilities:
            missing = capability & ~self.capabilities
            raise CapabilityError(self.url, missing, doing)

    @property
    def files_root(self) -> Path:
        """The sessions root of a store of pi's session files
        (:attr:`StoreCapability.FILES`): a :class:`pi_session.SessionManager`
        given it works on those files exactly as without a store (see
        :meth:`session_dir`), and sessions are named by their file paths.

        Raises:
            CapabilityError: the store does not declare FILES.
        """
        self.require(StoreCapability.FILES, "name a sessions root (its sessions are not files)")
        raise AssertionError("a store declaring FILES overrides files_root")

    # ------------------------------------------------------------------
    # handles: the one writer of each backend

    @abstractmethod
    def handle(self, session_id: str) -> SessionHandle:
        """The handle of the stored session ``session_id`` (an exact id;
        see :meth:`resolve`), through which it is read and appended to.

        Raises:
            SessionNotFoundError: (files) no such session; a database
                handle raises it on first use instead.
        """

    @abstractmethod
    def new_handle(self, header: dict[str, Any], *, file_name: str | None = None) -> SessionHandle:
        """The handle a new session with this header (``type`` ``session``,
        a string ``id``) is created through; nothing is written yet.

        Args:
            file_name: the file name the session had (import), kept so an
                export to a directory restores it; a FileStore names the
                file so instead of ``<timestamp>_<id>.jsonl``.

        Raises:
            SessionExistsError: the store holds a session with that id.
            StoreError: the session cannot be stored here (a FileStore: an
                id or cwd that cannot name a file).
        """

    # ------------------------------------------------------------------
    # writing

    def create(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        file_name: str | None = None,
    ) -> str:
        """Create a session from its lines, exclusively and atomically (all
        lines or none), through :meth:`new_handle`.

        Args:
            lines: the session's lines, each ending in ``\\n`` (only an
                imported file's unterminated last line may lack it); the
                first record is the session header (``type`` ``session``
                with a string ``id``). Lines that do not parse (an imported
                damaged line) are stored as they are.
            durability: as for session files (a database commits every
                transaction durably, whatever this says).
            file_name: see :meth:`new_handle`.

        Returns:
            The session id.

        Raises:
            SessionExistsError: the store holds a session with that id.
            StoreError: the first record is not a session header.
        """
        header = session_header(lines)
        if header is None:
            raise StoreError(f"{self.url}: cannot create a session: the first record is not a session header with a string id")
        handle = self.new_handle(header, file_name=file_name)
        try:
            handle.create(lines, durability=durability)
        except SessionExistsError:
            raise
        except FileExistsError:
            raise SessionExistsError(f"{handle.location}: a session with id {header['id']} exists already") from None
        return str(header["id"])

    def append(
        self,
        session_id: str,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
    ) -> AppendResult:
        """Append complete lines to a session (:meth:`SessionHandle.append`
        of :meth:`handle`): a file store writes line by line under its
        lock, a database in one transaction.

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
        return self.handle(session_id).append(lines, durability=durability, expected_size=expected_size, on_grown=on_grown)

    @abstractmethod
    def delete(self, session_id: str, *, expected_size: int | None = None) -> bool:
        """Remove a session and all its lines.

        Args:
            expected_size: delete only while the session's size is this
                (the size last read or written): checked under the lock
                appends take (a file's append lock, the session's row), so
                no append can come between the check and the delete.

        Returns:
            True when it existed.

        Raises:
            SessionChangedError: (``expected_size``) the session's size is
                another; nothing was deleted.
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

    def read_lines_from(self, session_id: str, offset: int) -> LinesRead:
        """A session's complete lines from byte ``offset`` on, with its size
        and stamp, as one snapshot (:meth:`SessionHandle.read_lines_from`
        of :meth:`handle`): what was appended since a reader's last
        position, or the session's tail.

        Raises:
            SessionNotFoundError, FileNotFoundError: no such session.
        """
        return self.handle(session_id).read_lines_from(offset)

    def read(self, session_id: str, *, migrate: bool = True) -> SessionFile:
        """Read a session (:meth:`SessionHandle.read` of :meth:`handle`)
        into the :class:`pi_session.storage.SessionFile` the file reader
        returns (same records, entries, problems and in-memory migration;
        ``path`` is the file for a FileStore, else None with ``name`` =
        :meth:`locator`); ``size`` is the position to pass back as
        ``expected_size``.

        Raises:
            SessionNotFoundError: no such session.
            pi_session.storage.SessionFileError: its first record is not a
                session header.
        """
        return self.handle(session_id).read(migrate=migrate)

    @abstractmethod
    def list(self, *, cwd: str | None = None, with_text: bool = True, on_progress: Any = None) -> list[dict[str, Any]]:
        """Infos of the store's sessions, newest ``modified`` first, with the
        keys of :func:`pi_session.stores.listing.build_session_info` (``path`` is
        :meth:`locator`).

        Args:
            cwd: a resolved path: only sessions whose header cwd resolves to
                it (see :func:`pi_session.stores.listing.session_cwd_matches`).
            with_text: include ``allMessagesText`` (a database then reads
                every message's text; False answers from the sessions
                table alone and leaves the key out).
            on_progress: (files) called as the files are read (see
                :func:`pi_session.stores.listing.list_sessions_dirs`); a database
                answers at once and does not call it.
        """

    @abstractmethod
    def find(self, prefix: str, *, limit: int = 20) -> builtins.list[str]:
        """Ids of sessions starting with ``prefix`` (case-sensitive; an
        empty prefix matches all), sorted, at most ``limit``."""

    @abstractmethod
    def locator(self, session_id: str) -> str:
        """How messages and listings name a session: the file path for a
        FileStore, ``<masked url>#<id>`` for a database."""

    def path_of(self, session_id: str) -> Path:
        """The file of a stored session (:attr:`StoreCapability.FILES`;
        without it :meth:`locator` names the store's sessions).

        Raises:
            CapabilityError: the store does not declare FILES.
            SessionNotFoundError: no such session.
        """
        self.require(StoreCapability.FILES, "give a session's file (its sessions are not files)")
        raise AssertionError("a store declaring FILES overrides path_of")

    def replace_lines(self, session_id: str, old: Sequence[bytes], new: Sequence[bytes]) -> None:
        """Replace a session's lines ``old`` (as read) with ``new`` (the
        same session): :meth:`SessionHandle.replace_lines` of
        :meth:`handle` (files: an atomic rewrite; databases: one
        transaction).

        Raises:
            SessionNotFoundError: no such session.
            StoreError, pi_session.storage.SessionFileError: the session
                changed since ``old`` was read, or ``new`` names another
                session; nothing was changed.
        """
        self.handle(session_id).replace_lines(old, new)

    def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep payloads ``slim`` moved out of sessions (``{sha256 hex:
        bytes}``; a digest already kept is left as it is;
        :attr:`StoreCapability.BLOBS`). A database keeps them in its own
        table; a store of files keeps them as files beside its sessions
        (:mod:`pi_session.operations.slimming`) and does not declare BLOBS.

        Raises:
            CapabilityError: the store does not declare BLOBS.
            StoreError: the store fails.
        """
        self.require(StoreCapability.BLOBS, "keep blobs")

    def get_blob(self, digest: str) -> bytes | None:
        """The payload kept under ``digest`` (sha256 hex), or None when the
        store does not hold it (see :meth:`put_blobs`).

        Raises:
            CapabilityError: the store does not declare BLOBS.
        """
        self.require(StoreCapability.BLOBS, "keep blobs")
        return None

    def drop_blobs(self, digests: Iterable[str]) -> builtins.list[str]:
        """Delete each of ``digests`` (sha256 hex) that no line of any
        session names any more (``scrub --mode rewrite`` of a payload
        holding a secret). Returns the digests deleted; a blob some session
        still names is kept.

        Raises:
            CapabilityError: the store does not declare BLOBS.
            StoreError: the store fails.
        """
        self.require(StoreCapability.BLOBS, "keep blobs")
        return []

    def session_marks(self, session_ids: Iterable[str]) -> dict[str, tuple[int, ...]]:
        """A mark of each stored session's state that any write changes
        (an append, a rewrite such as ``scrub``, a delete and create
        again), for callers that keep what they last wrote (the import
        state of :mod:`pi_session.importers.state`): ``{id: mark}`` for the
        ids the store holds; an id it lacks is absent
        (:attr:`StoreCapability.MARKS`).

        Raises:
            CapabilityError: the store does not declare MARKS.
        """
        self.require(StoreCapability.MARKS, "mark its sessions' states")
        return {}

    def sync_sessions(self, session_ids: Iterable[str]) -> None:
        """Make sessions written with ``Durability.NONE`` durable now, all
        at once (a bulk import writes many sessions without a sync each,
        then calls this). A database store commits durably anyway: nothing
        to do.

        Raises:
            OSError: a file cannot be synced.
        """

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

    def session_dir(self, cwd: str) -> Path:
        """The directory a (resolved) cwd's session files live in
        (:attr:`StoreCapability.FILES`): what a
        :class:`pi_session.SessionManager` given this store works in, as
        without a store.

        Raises:
            CapabilityError: the store does not declare FILES.
        """
        self.require(StoreCapability.FILES, "give a project's directory (its sessions are not files)")
        raise AssertionError("a store declaring FILES overrides session_dir")

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


def session_header(lines: Sequence[bytes]) -> dict[str, Any] | None:
    """The session header a session's lines start with: the first line that
    parses as a JSON object (:func:`pi_session.storage.parse_line`, which
    recovers what it can), when it is a ``session`` record with a string
    ``id``; else None."""
    for n, line in enumerate(lines, 1):
        parsed = parse_line(line[:-1] if line.endswith(b"\n") else line, n)
        record = parsed.record if parsed.ok else None
        if isinstance(record, dict):
            return record if is_session_header(record) else None
    return None


def sqlite_path(url: str) -> Path:
    """The database file of a ``sqlite:///...`` URL: what follows
    ``sqlite://`` with one ``/`` removed (so ``sqlite:///rel.db`` is
    relative, ``sqlite:////abs.db`` and ``sqlite:///~/x.db`` as expected);
    a query or fragment is not allowed.

    Raises:
        StoreError: no path.
    """
    from urllib.parse import urlsplit  # here: only sqlite URLs need it

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
