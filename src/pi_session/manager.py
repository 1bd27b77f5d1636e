"""``SessionManager``: the one class that does session I/O (SPEC 4, 10;
pi 1.6 delta §5).

Size (over 500 lines): the one class that does session I/O mirrors pi's SessionManager API (about forty methods) on files and on database stores; its pure parts live in context, tree, navigation and stats, the storage itself in storage/ and stores/.

It mirrors pi's SessionManager: a session is an append-only tree of entries in
a JSONL file; the leaf is the current position; appends create a child of the
leaf and move the leaf to it. Differences from pi, all on the side of keeping
data: migration rewrites atomically and keeps a backup; damaged lines are
reported (:attr:`SessionManager.problems`) and left in the file; a parentId
cycle is cut instead of looping forever; entries are never written twice; a
new file appears whole (temp file + link) or not at all.
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from . import context as _context
from . import jsonio
from .ids import new_entry_id, new_session_id
from .listing import (
    ProgressCallback,
    list_session_dir,
    list_sessions_dirs,
    paths_equal,
    read_session_header,
    resolve_path,
    session_cwd_matches,
)
from .migrate import migrate_session_entries
from .paths import default_session_dir, session_file_name, sessions_dir
from .records import CURRENT_SESSION_VERSION, HEADER_TYPE, UNDEFINED, SessionContext, SessionProjection, StrPath, make_header
from .storage import (
    AppendError,
    Durability,
    LineProblem,
    SessionFile,
    SessionFileError,
    ConcurrentAppendError,
    LeafMovedError,
    append_lines,
    append_lines_checked,
    create_file,
    ensure_dir,
    read_session_file,
    rewrite_records,
    _fsync_dir,
)
from .text import js_trim
from .timestamps import file_timestamp, iso_to_ms, now_iso
from .tree import SessionTree, TreeNode, find_orphans

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the result types; their modules are imported where used
    from .compaction import CompactionResult
    from .navigation import NavigationPlan, NavigationResult
    from .stats import SessionStats
    from .stores import SessionStore

StoreArg = Any
"""A ``store=`` argument: a :class:`pi_session.stores.SessionStore`, its URL
or directory (see :func:`pi_session.stores.open_store`), or None (files, as
without stores)."""


def _store_of(store: StoreArg) -> SessionStore | None:
    """The store object for a ``store=`` argument (None stays None)."""
    if store is None:
        return None
    from .stores import shared_store

    return shared_store(store)


def _file_root(store: SessionStore | None) -> Path | None:
    """The sessions root of a :class:`pi_session.stores.FileStore` (with
    which a manager works on files exactly as without a store), else None."""
    from .stores.file import FileStore

    return store.root if isinstance(store, FileStore) else None

__all__ = ["SessionManager", "validate_session_id", "OMITTED"]


_CONVERSATION_ROLES = ("user", "assistant")
_EDITABLE_ROLES = ("user", "assistant", "toolResult")
# what pi's appendContextEdit accepts as a target message (plus custom_message
# entries); narrower than context.EDITABLE_ROLES, the roles an edit applies to
_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_NEWLINES = re.compile(r"[\r\n]+")


def _is_conversation(record: Mapping[str, Any]) -> bool:
    """A user or assistant message entry: the first one makes a new session
    file appear (pi 1.6; 0.73.1 waited for an assistant message)."""
    if record.get("type") != "message":
        return False
    message = record.get("message")
    return isinstance(message, dict) and message.get("role") in _CONVERSATION_ROLES


def validate_session_id(session_id: Any) -> str:
    """Check an explicitly chosen session id (pi 1.6's ``assertValidSessionId``):
    letters, digits, ``.``, ``_`` and ``-``, starting and ending with a letter
    or digit.

    Returns:
        The id.

    Raises:
        ValueError: the id does not have that form.
    """
    if not isinstance(session_id, str) or _SESSION_ID.fullmatch(session_id) is None:
        raise ValueError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    return session_id


OMITTED: Any = UNDEFINED
"""Default of optional entry fields: the key is left out (JavaScript's
``undefined``). Passing None writes an explicit ``null``, as pi does."""


def _drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    """Drop keys left at :data:`OMITTED` (JSON.stringify drops ``undefined``)."""
    return {k: v for k, v in entry.items() if v is not OMITTED}


class SessionManager:
    """A session: its header, entries, tree and leaf, and its file.

    Construct with :meth:`create`, :meth:`open`, :meth:`continue_recent`,
    :meth:`in_memory` or :meth:`fork_from`.

    Write behaviour (pi 1.6 §5.2): a new session writes nothing until it
    holds a user or assistant message; then the header and every entry are
    written at once into a file that must not exist yet (exclusive create;
    the file appears whole or not at all). From then on each entry is
    appended as one line with one ``write`` under an exclusive file lock (see
    :func:`pi_session.storage.append_lines`). An opened file counts as
    written: appends go to it at once. If a write fails, the entry is taken
    back out of memory and the leaf is where it was before the call, then the
    error propagates. ``durability`` chooses a data sync per entry (default),
    per :meth:`flush`, or never.

    Attributes:
        problems: damaged lines and tree problems found when the file was
            opened (:class:`pi_session.storage.LineProblem`).
        notes: one-line notes about repairs done while writing (a torn last
            line) and migrations.
        file_version: the format version of the opened file as it was on
            disk (1, 2 or 3; None for a session this manager started). A
            read-only manager of a v1/v2 file holds migrated records but
            leaves the file at this version.
    """

    def __init__(
        self,
        cwd: str,
        session_dir: StrPath | None,
        session_file: StrPath | None,
        persist: bool,
        *,
        durability: Durability | str = Durability.ENTRY,
        read_only: bool = False,
        session_id: str | None = None,
        entries: Sequence[Mapping[str, Any]] | None = None,
        concurrent: Literal["follow", "strict"] = "follow",
        store: SessionStore | None = None,
        store_session: str | None = None,
    ) -> None:
        if concurrent not in ("follow", "strict"):
            raise ValueError(f"concurrent must be 'follow' or 'strict', not {concurrent!r}")
        self.concurrent = concurrent
        self._cwd = resolve_path(cwd)
        self._session_dir = Path(resolve_path(session_dir)) if session_dir else None
        self._persist = persist
        self._read_only = read_only
        self.durability = Durability(durability)
        self._records: list[dict[str, Any]] = []
        self._tree = SessionTree()
        self._leaf_id: str | None = None
        self._written = 0  # records[:_written] are in the file
        self._flushed = False  # the file exists and holds records[:_written]
        self._known_size: int | None = None  # file size as last read or written by us
        self._has_conversation = False
        self._session_id = ""
        self._session_file: Path | None = None
        self.problems: list[LineProblem] = []
        self.notes: list[str] = []
        self.file_version: Any = None
        self._planned_leaf: Any = OMITTED  # see append_compaction_result(planned_leaf_id=)
        # a database store (never a FileStore: files go through the paths)
        self._store: SessionStore | None = store if persist else None
        if persist and self._session_dir is not None and not read_only:
            ensure_dir(self._session_dir)
        if session_file is not None:
            self._set_session_file(Path(session_file))
        elif store_session is not None:
            self._load_from_store(store_session)
        elif entries:
            self._load_entries(entries, session_id)
        else:
            self.new_session(id=session_id)

    # ------------------------------------------------------------------
    # construction

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: StrPath | None = None,
        *,
        id: str | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """A new persisted session for ``cwd`` (resolved: ``~`` expanded,
        made absolute) in ``session_dir`` (default
        ``<agent dir>/sessions/<encoded cwd>/``, created 0700). The file is
        written when the first user or assistant message is appended.

        Args:
            id: the session id to use instead of a new UUIDv7 (pi 1.6's
                ``{id}`` option; see :func:`validate_session_id`).

            store: where the session lives: a
                :class:`pi_session.stores.SessionStore` or its URL (a
                directory: files under that sessions root; ``sqlite:///...``,
                ``postgresql://...``); not with ``session_dir``.

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        db, session_dir = cls._pick_store(kwargs, session_dir, cwd)
        if db is not None:
            return cls(cwd, None, None, True, session_id=id, store=db, **kwargs)
        return cls(cwd, session_dir or default_session_dir(resolve_path(cwd)), None, True, session_id=id, **kwargs)

    @staticmethod
    def _pick_store(kwargs: dict[str, Any], session_dir: StrPath | None, cwd: str | None) -> tuple[SessionStore | None, StrPath | None]:
        """Take ``store`` out of ``kwargs``: a database store comes back as
        the first item; a FileStore becomes the session directory of ``cwd``
        (or its root when ``cwd`` is None)."""
        store = _store_of(kwargs.pop("store", None))
        if store is None:
            return None, session_dir
        if session_dir is not None:
            raise ValueError("give either session_dir or store, not both")
        root = _file_root(store)
        if root is None:
            return store, None
        if cwd is None:
            return None, root
        from .paths import encode_cwd

        return None, root / encode_cwd(resolve_path(cwd))

    @classmethod
    def open(
        cls,
        path: StrPath,
        session_dir: StrPath | None = None,
        cwd_override: str | None = None,
        *,
        read_only: bool = False,
        **kwargs: Any,
    ) -> SessionManager:
        """Open a session file (pi's ``open``; SPEC-pi-1.6 §3). A missing file
        becomes a new session at that path (written at the first user or
        assistant message); an empty file gets a fresh header written at
        once. v1/v2 files are migrated; unless ``read_only``, the file is
        rewritten atomically with a backup ``<file>.v<N>.bak``. The cwd is
        ``cwd_override``, else the header's, else the process cwd.

        Args:
            path: the ``.jsonl`` file.
            session_dir: directory for branched sessions (default: the file's).
            cwd_override: use this cwd instead of the header's.
            read_only: never write to the file (no migration rewrite, no
                header for an empty file; appends raise PermissionError).
            concurrent (keyword, any constructor): what an append does when
                another process appended to the file since this manager
                last read or wrote it (checked under the append lock).
                ``"follow"`` (default, beyond pi): load those entries and,
                when this append continued the file's last entry as known,
                chain it onto the real last entry instead, with a note in
                :attr:`notes` (an append after a deliberate ``branch`` stays
                on its branch). ``"strict"``: raise
                :class:`pi_session.storage.ConcurrentAppendError` and write
                nothing. pi appends onto the stale leaf silently, which puts
                the other writer's turn on a side branch.

            store (keyword): open a session of this store
                (:class:`pi_session.stores.SessionStore` or its URL);
                ``path`` is then its id or a unique id prefix (with a
                FileStore, an existing file path still names that file).
                Without ``store``, ``path`` may also be a database
                session's locator, ``<store url>#<id>`` (what
                :meth:`get_session_location` and ``parentSession`` hold;
                its password is masked, so a PostgreSQL login then comes
                from libpq's environment).

        Raises:
            pi_session.storage.SessionFileError: unreadable, or a non-empty
                file whose first record is not a session header (the file is
                left alone, as pi 1.6 does).
            pi_session.stores.SessionNotFoundError: (store) no such session,
                or an ambiguous prefix
                (:class:`~pi_session.stores.AmbiguousSessionError`).
        """
        store_arg = kwargs.pop("store", None)
        text = os.fspath(path)
        if store_arg is None and isinstance(text, str) and "://" in text and "#" in text:
            # a database session's locator (get_session_location, parentSession)
            store_arg, text = text.rsplit("#", 1)
            path = text
        store = _store_of(store_arg)
        if store is not None and _file_root(store) is not None and Path(path).expanduser().is_file():
            store = None  # a file path with a FileStore: that file
        if store is not None:
            session_id = store.resolve(os.fspath(path))
            root = _file_root(store)
            if root is None:
                if session_dir is not None:
                    raise ValueError("give either session_dir or store, not both")
                manager = cls(cwd_override or os.getcwd(), None, None, True, read_only=read_only, store=store, store_session=session_id, **kwargs)
                if cwd_override is None:
                    header = manager.get_header()
                    if header and isinstance(header.get("cwd"), str) and header["cwd"]:
                        manager._cwd = resolve_path(header["cwd"])
                return manager
            from .stores.file import FileStore

            assert isinstance(store, FileStore)
            path = store.path_of(session_id)
        p = Path(resolve_path(Path(path).expanduser()))
        manager = cls(cwd_override or os.getcwd(), session_dir or p.parent, p, True, read_only=read_only, **kwargs)
        if cwd_override is None:
            header = manager.get_header()
            if header and isinstance(header.get("cwd"), str) and header["cwd"]:
                manager._cwd = resolve_path(header["cwd"])
        return manager

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: StrPath | None = None, **kwargs: Any) -> SessionManager:
        """Open the most recently modified session of ``cwd`` (by file mtime;
        files whose header cannot be read are passed over), or create a new
        one. With an explicit ``session_dir`` that is not cwd's default
        directory, only sessions whose header cwd is ``cwd`` count (pi 1.6).
        With ``store=`` (keyword): the most recently modified session of
        ``cwd`` in that store."""
        db, session_dir = cls._pick_store(kwargs, session_dir, cwd)
        resolved = resolve_path(cwd)
        if db is not None:
            recent_id = db.most_recent(resolved)
            if recent_id is None:
                return cls(cwd, None, None, True, store=db, **kwargs)
            return cls(cwd, None, None, True, store=db, store_session=recent_id, **kwargs)
        default = default_session_dir(resolved)
        directory = Path(session_dir or default)
        filter_cwd = session_dir is not None and not paths_equal(directory, default)
        recent = _most_recent_session(directory, resolved if filter_cwd else None)
        return cls(cwd, directory, recent, True, **kwargs)

    @classmethod
    def in_memory(
        cls,
        cwd: str | None = None,
        entries: Sequence[Mapping[str, Any]] | None = None,
        *,
        id: str | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """A session that is never written to disk (pi's ``inMemory``).

        Args:
            cwd: default: the process cwd.
            entries: records to start from (pi 1.6): when one of them is a
                ``session`` header, it is the header (the first one; other
                headers are dropped) and the records are migrated in memory;
                without one, a fresh header is made and the records follow
                it. Records that are not objects with a string ``type`` and
                ``id`` are left out. The leaf is the last entry.
            id: session id for the fresh header (see :func:`validate_session_id`).

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        return cls(cwd if cwd is not None else os.getcwd(), None, None, False, session_id=id, entries=entries, **kwargs)

    @classmethod
    def fork_from(
        cls,
        source_path: StrPath,
        target_cwd: str,
        session_dir: StrPath | None = None,
        *,
        id: str | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """Copy every entry of ``source_path`` into a new session for
        ``target_cwd`` (header ``parentSession`` = the resolved source
        path), written at once into a file that must not exist yet, and
        open it. Source and cwd are resolved first (pi 1.6). Beyond pi: a
        v1/v2 source is migrated before copying (pi copies the old records
        under a v3 header).

        Args:
            id: the new session's id (see :func:`validate_session_id`).

        Raises:
            pi_session.storage.SessionFileError: the source is unreadable,
                empty or has no header.
            ValueError: ``id`` is not a valid session id.
            FileExistsError: the new file exists already.

        With ``store=`` (keyword): ``source_path`` is a session id (or
        unique prefix) of that store, and the new session is created there
        (``parentSession`` = the source's locator).
        """
        store = kwargs["store"] = _store_of(kwargs.get("store"))
        if store is not None and _file_root(store) is not None:
            from .stores.file import FileStore

            assert isinstance(store, FileStore)
            source_path = store.path_of(store.resolve(os.fspath(source_path)))
        db, session_dir = cls._pick_store(kwargs, session_dir, target_cwd)
        resolved_cwd = resolve_path(target_cwd)
        if db is not None:
            source_id = db.resolve(os.fspath(source_path))
            source = db.read(source_id)
            session_id = validate_session_id(id) if id is not None else new_session_id()
            header = make_header(session_id, resolved_cwd, now_iso(), db.locator(source_id))
            db.create([jsonio.dumps_line(header)] + [jsonio.dumps_line(e) for e in source.entries])
            return cls(resolved_cwd, None, None, True, store=db, store_session=session_id, **kwargs)
        source_file = resolve_path(Path(source_path).expanduser())
        source = read_session_file(source_file)
        if source.header is None:
            raise SessionFileError(source_file, "cannot fork: the session file is empty")
        directory = Path(session_dir or default_session_dir(resolved_cwd))
        ensure_dir(directory)
        session_id = validate_session_id(id) if id is not None else new_session_id()
        timestamp = now_iso()
        new_file = directory / session_file_name(file_timestamp(timestamp), session_id)
        header = make_header(session_id, resolved_cwd, timestamp, source_file)
        lines = [jsonio.dumps_line(header)] + [jsonio.dumps_line(e) for e in source.entries]
        create_file(new_file, lines)
        return cls(resolved_cwd, directory, new_file, True, **kwargs)

    @staticmethod
    def find_by_id(cwd: str, session_id: str, session_dir: StrPath | None = None) -> Path | None:
        """The first ``*.jsonl`` file (in directory order) of ``session_dir``
        (default: cwd's default directory) whose header ``id`` is
        ``session_id`` (pi 1.6's ``findById``). Only the header is read (see
        :func:`pi_session.listing.read_session_header`). When
        ``session_dir`` is given and is not cwd's default directory, the
        header's cwd must also be ``cwd``.

        Returns:
            The file's path, or None (also when the directory cannot be read).
        """
        resolved = resolve_path(cwd)
        default = default_session_dir(resolved)
        directory = Path(resolve_path(session_dir)) if session_dir else default
        filter_cwd = session_dir is not None and not paths_equal(directory, default)
        try:
            names = os.listdir(directory)
        except OSError:
            return None
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            path = directory / name
            header = read_session_header(path)
            if header is None or header.get("id") != session_id:
                continue
            if filter_cwd and not session_cwd_matches(header.get("cwd"), resolved):
                continue
            return path
        return None

    # From here on the class body's ``list`` is this method, so annotations
    # below name the built-in type as ``builtins.list``.
    @staticmethod
    def list(
        cwd: str,
        session_dir: StrPath | None = None,
        on_progress: ProgressCallback | None = None,
        *,
        store: StoreArg = None,
    ) -> list[dict[str, Any]]:
        """Sessions of one directory, newest first (pi 1.6's ``list``; see
        :func:`pi_session.listing.list_session_dir` for the order, the keys
        and ``on_progress``). When ``session_dir`` is given and is not cwd's
        default directory, only sessions whose header cwd resolves to
        ``cwd`` are listed. With ``store``: the sessions of ``cwd`` in that
        store (:meth:`pi_session.stores.SessionStore.list`; a database
        answers from its listing columns, ``on_progress`` is not called)."""
        db, session_dir = SessionManager._pick_store({"store": store}, session_dir, cwd)
        if db is not None:
            return db.list(cwd=resolve_path(cwd))
        resolved = resolve_path(cwd)
        default = default_session_dir(resolved)
        directory = session_dir or default
        filter_cwd = session_dir is not None and not paths_equal(directory, default)
        return list_session_dir(directory, cwd=resolved if filter_cwd else None, on_progress=on_progress)

    @staticmethod
    def list_all(
        session_dir: StrPath | None = None,
        on_progress: ProgressCallback | None = None,
        *,
        agent_dir: StrPath | None = None,
        store: StoreArg = None,
    ) -> builtins.list[dict[str, Any]]:
        """Sessions of every project, newest first (pi's ``listAll``).
        With ``store``: every session of that store.

        Args:
            session_dir: list this one directory instead, without cwd
                filtering (pi 1.6's ``listAll(dir)``; progress as
                :meth:`list`).
            on_progress: see :func:`pi_session.listing.list_sessions_dirs`.
            agent_dir: whose ``sessions`` directory to list (default: the
                agent dir).
        """
        db = _store_of(store)
        if db is not None:
            root = _file_root(db)
            if root is None:
                return db.list()
            return list_sessions_dirs(root, on_progress=on_progress)
        if session_dir is not None:
            return list_session_dir(session_dir, on_progress=on_progress)
        return list_sessions_dirs(sessions_dir(agent_dir), on_progress=on_progress)

    # ------------------------------------------------------------------
    # files

    def _set_session_file(self, path: Path) -> None:
        self._session_file = path.absolute()
        if not self._session_file.exists():
            self.new_session()
            self._session_file = path.absolute()
            return
        sf = read_session_file(self._session_file)
        self.problems = list(sf.problems)
        if sf.header is None:
            if sf.size > 0:
                # pi 1.6: a non-empty file without a header is not a session;
                # it is refused and left alone
                raise SessionFileError(self._session_file, "not a pi session file: it holds no session header")
            # an empty file: a fresh session, its header written at once (pi)
            self.new_session()
            self._session_file = path.absolute()
            if not self._read_only:
                self.notes.extend(append_lines(self._session_file, [jsonio.dumps_line(self._records[0])], self.durability))
                self._written = 1
                self._flushed = True
            return
        self._session_id = sf.header["id"]
        self._records = [sf.header, *sf.entries]
        self.file_version = sf.migrated_from if sf.migrated_from is not None else sf.header.get("version", CURRENT_SESSION_VERSION)
        if sf.migrated_from is not None:
            if self._read_only:
                self.notes.append(f"{self._session_file}: version {sf.migrated_from} file migrated in memory only")
            else:
                try:
                    backup = rewrite_records(sf, backup_tag=f"v{sf.migrated_from}")
                except PermissionError as exc:
                    # a file its owner made read-only (or that is not ours
                    # to write) stays as it is: migrated in memory, and the
                    # manager is read-only (beyond pi, which fails to open it)
                    self._read_only = True
                    self.notes.append(
                        f"{self._session_file}: version {sf.migrated_from} file migrated in memory only "
                        f"({exc.strerror or 'not writable'}); opened read-only"
                    )
                else:
                    self.notes.append(f"{self._session_file}: migrated from version {sf.migrated_from}; original kept as {backup}")
        self._build_index(sf)
        self._written = len(self._records)
        self._flushed = True
        self._known_size = sf.size

    def _load_from_store(self, session_id: str) -> None:
        """Open a session of the database store (as :meth:`_set_session_file`
        opens a file). A v1/v2 session (stored without migration, which
        ``import`` never does) is migrated in memory only and opened
        read-only: version 3 entries must not follow old records."""
        assert self._store is not None
        sf = self._store.read(session_id)
        self.problems = list(sf.problems)
        assert sf.header is not None  # a stored session starts with its header
        self._session_id = sf.header["id"]
        self._records = [sf.header, *sf.entries]
        self.file_version = sf.migrated_from if sf.migrated_from is not None else sf.header.get("version", CURRENT_SESSION_VERSION)
        if sf.migrated_from is not None:
            self._read_only = True
            self.notes.append(
                f"{self._store.locator(session_id)}: version {sf.migrated_from} session migrated in memory only, "
                "opened read-only (export it and import it again to migrate it)"
            )
        self._build_index(sf)
        self._written = len(self._records)
        self._flushed = True
        self._known_size = sf.size

    def _where(self) -> str:
        """How messages name this session: its file, or its store locator."""
        if self._store is not None:
            return f"{self._store.url}#{self._session_id}"
        return str(self._session_file)

    def get_session_location(self) -> str | None:
        """Where the session is (or will be) stored: the file path, or
        ``<store url>#<id>`` for a database store (password masked); None
        for an in-memory session."""
        if self._store is not None:
            return self._where()
        return str(self._session_file) if self._session_file is not None else None

    def get_store(self) -> SessionStore | None:
        """The database store this session lives in (None for files and
        in-memory sessions)."""
        return self._store

    def _load_entries(self, entries: Sequence[Mapping[str, Any]], session_id: str | None) -> None:
        """Start from given records (pi 1.6's ``inMemory(cwd, options, entries)``)."""
        header = next((dict(r) for r in entries if isinstance(r, Mapping) and r.get("type") == HEADER_TYPE), None)
        rest = [dict(r) for r in entries if isinstance(r, Mapping) and r.get("type") != HEADER_TYPE]
        if header is not None:
            records = [header, *rest]
            migrate_session_entries(records)
            self._records = [records[0]] + [r for r in records[1:] if isinstance(r.get("type"), str) and isinstance(r.get("id"), str)]
            header_id = header.get("id")
            self._session_id = header_id if isinstance(header_id, str) else ""
        else:
            self.new_session(id=session_id)
            self._records.extend(r for r in rest if isinstance(r.get("type"), str) and isinstance(r.get("id"), str))
        self._build_index()

    def new_session(self, *, id: str | None = None, parent_session: str | None = None) -> Path | None:
        """Start a fresh session in this manager (pi's ``newSession``).

        Args:
            id: the session id (see :func:`validate_session_id`); default a
                new UUIDv7.
            parent_session: recorded as the header's ``parentSession``.

        Returns:
            The new session file path (persisted managers), else None.

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        self._session_id = id or new_session_id()
        timestamp = now_iso()
        header = make_header(self._session_id, self._cwd, timestamp, parent_session)
        self._records = [header]
        self._tree = SessionTree()
        self._leaf_id = None
        self._written = 0
        self._flushed = False
        self._has_conversation = False
        if self._persist and self._session_dir is not None:
            self._session_file = self._session_dir / session_file_name(file_timestamp(timestamp), self._session_id)
        return self._session_file if self._persist else None

    def _build_index(self, sf: SessionFile | None = None) -> None:
        columns = sf.entry_columns if sf is not None else None
        self._tree = SessionTree(self._records[1:], columns)
        self._tree.find_cycles()
        # (entry id, kind, message) of each tree problem and orphan
        found = [(p.entry_id, p.kind, p.message) for p in self._tree.problems]
        if sf is not None:
            orphans = find_orphans(self._records[1:], self._tree.by_id, columns[1] if columns is not None else None)
            found.extend((p.entry_id, p.kind, p.message) for p in orphans)
        if found:
            # line numbers are looked up only when there is something to
            # report (the map costs ~5 MB on a 100,000-entry session)
            line_of: dict[str, int] = {}
            if sf is not None:
                line_of = {r["id"]: n for r, n in zip(sf.records, sf.record_lines) if r.get("id").__class__ is str}
            self.problems.extend(LineProblem(line_of.get(eid, 0), kind, message, recovered=True) for eid, kind, message in found)
        if sf is not None:
            self.problems.sort(key=lambda p: p.line)
        self._leaf_id = self._records[-1]["id"] if len(self._records) > 1 else None
        self._has_conversation = any(_is_conversation(r) for r in self._records)

    def _persist_pending(self, *, force: bool = False) -> None:
        """Write the records not yet on disk. The first write of a new file
        (once the session holds a user or assistant message, or when
        ``force``) creates it exclusively and atomically with every record;
        later writes append one line per entry under the file lock
        (:func:`append_lines`).

        Raises:
            FileExistsError: the new file's path is taken (pi 1.6 refuses it
                too); nothing was written.
            pi_session.storage.AppendError: an append failed; ``_written``
                counts the lines that did reach the file.
        """
        if not self._persist or (self._session_file is None and self._store is None):
            return
        if self._read_only:
            raise PermissionError(f"{self._where()}: opened read-only")
        if self._written >= len(self._records):
            return
        if self._store is not None:
            self._persist_to_store(force)
            return
        assert self._session_file is not None
        if not self._flushed:
            if not (self._has_conversation or force):
                return
            lines = [jsonio.dumps_line(r) for r in self._records]
            ensure_dir(self._session_file.parent)
            create_file(self._session_file, lines, self.durability)
            self._written = len(self._records)
            self._flushed = True
            self._known_size = sum(len(line) for line in lines)
            return
        lines = [jsonio.dumps_line(r) for r in self._records[self._written :]]
        try:
            result = append_lines_checked(
                self._session_file, lines, self.durability, expected_size=self._known_size, on_grown=self._on_foreign_lines
            )
        except AppendError as exc:
            self._written += exc.lines_written
            self._known_size = None  # unknown now: stop checking rather than misjudge
            raise
        self.notes.extend(result.notes)
        self._written = len(self._records)
        self._known_size = result.size

    def _persist_to_store(self, force: bool) -> None:
        """:meth:`_persist_pending` for a database store: the first write
        creates the session (exclusively, every record at once), later ones
        append in one transaction with the same stale-leaf rule as files."""
        assert self._store is not None
        if not self._flushed:
            if not (self._has_conversation or force):
                return
            lines = [jsonio.dumps_line(r) for r in self._records]
            self._store.create(lines, durability=self.durability)
            self._written = len(self._records)
            self._flushed = True
            self._known_size = sum(len(line) for line in lines)
            return
        lines = [jsonio.dumps_line(r) for r in self._records[self._written :]]
        result = self._store.append(
            self._session_id, lines, durability=self.durability, expected_size=self._known_size, on_grown=self._on_foreign_lines
        )
        self.notes.extend(result.notes)
        self._written = len(self._records)
        self._known_size = result.size

    def _on_foreign_lines(self, lines: builtins.list[bytes]) -> builtins.list[bytes] | None:
        """Called under the append lock when another writer appended to the
        file since we last read or wrote it (the issue of stale leaves).

        ``concurrent="strict"``: raise :class:`ConcurrentAppendError`
        (nothing is written). ``"follow"`` (default): load the other
        writer's entries, and when the entries being written continued the
        file's last entry as we knew it, chain them onto the real last entry
        instead (a deliberate branch from an earlier entry stays where it
        is); a note says so. Returns the lines to write instead, or None."""
        known = self._tree.by_id
        pending = self._records[self._written :]
        pending_ids = {r.get("id") for r in pending}
        foreign: builtins.list[dict[str, Any]] = []
        for line in lines:
            try:
                record = jsonio.loads(line)
            except ValueError:
                continue  # damage is reported by the next open/check, never guessed at here
            if isinstance(record, dict) and record.get("type") != HEADER_TYPE:
                rid = record.get("id")
                if isinstance(rid, str) and rid not in known and rid not in pending_ids:
                    foreign.append(record)
        if not foreign:
            return None
        if self.concurrent == "strict":
            raise ConcurrentAppendError(self._where(), len(foreign))
        tip = self._records[self._written - 1].get("id") if self._written > 1 else None
        if self._planned_leaf is not OMITTED and pending[0].get("parentId") == tip:
            # an entry planned at this leaf (a compaction) may follow the
            # other writer only along the path it was planned on
            foreign_by_id = {r.get("id"): r for r in foreign}
            node: Mapping[str, Any] | None = foreign[-1]
            seen: set[Any] = set()
            while node is not None and node.get("id") != tip and node.get("id") not in seen:
                seen.add(node.get("id"))
                parent = node.get("parentId")
                node = foreign_by_id.get(parent) or known.get(parent)
            if node is None or node.get("id") != tip:
                raise LeafMovedError(self._where(), tip, foreign[-1].get("id"), len(foreign))
        self._records[self._written : self._written] = foreign
        self._written += len(foreign)
        for record in foreign:
            self._tree.add(record)
        first = pending[0]
        if first.get("parentId") == tip:
            first["parentId"] = foreign[-1].get("id")
            where = f"continues after them (from {foreign[-1].get('id')})"
        else:
            where = f"stays on its branch (from {first.get('parentId')})"
        self.notes.append(
            f"{self._where()}: {len(foreign)} entr{'y was' if len(foreign) == 1 else 'ies were'} appended by another "
            f"writer since this session was read; loaded, and entry {first.get('id')} {where}"
        )
        return [jsonio.dumps_line(r) for r in pending]

    def save(self) -> None:
        """Write every entry not yet on disk now, even before the first
        user or assistant message (pi waits for one; the CLI's explicit
        commands do not)."""
        if self._persist and (self._session_file is not None or self._store is not None) and self._written < len(self._records):
            self._persist_pending(force=True)

    def flush(self) -> None:
        """Make appended entries durable (fsync of the file and its
        directory), for ``durability="batch"``. Costs one fsync (about
        2.6 ms on the ext4 disk we measured) however many entries it covers.
        """
        if self._session_file is not None and self._written and os.path.exists(self._session_file):
            fd = os.open(self._session_file, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            _fsync_dir(self._session_file.parent)

    def _append_entry(self, entry: dict[str, Any]) -> str:
        """Add ``entry`` (its ``parentId`` already set), move the leaf to it
        and write what is due. When the write fails before the entry
        reached the file, the entry is taken back out and the leaf and the
        write state are as before; the error propagates (pi 1.6 §5.2)."""
        if self._read_only:
            raise PermissionError(f"{self._where()}: opened read-only")
        had_conversation = self._has_conversation
        self._records.append(entry)
        if not had_conversation and _is_conversation(entry):
            self._has_conversation = True
        try:
            self._persist_pending()
        except BaseException:
            if self._written < len(self._records):
                # not in the file: memory must not hold it either (a later
                # entry would name a parent the file does not have)
                self._records.pop()
                self._has_conversation = had_conversation
                raise
            self._tree.add(entry)  # in the file after all (a failed sync)
            self._leaf_id = entry["id"]
            raise
        self._tree.add(entry)
        self._leaf_id = entry["id"]
        return entry["id"]

    def _new_entry(self, etype: str, **fields: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": etype, "id": new_entry_id(self._tree.by_id), "parentId": self._leaf_id, "timestamp": now_iso()}
        entry.update(fields)
        return _drop_none(entry)

    # ------------------------------------------------------------------
    # appends (each returns the new entry id, except append_usage)

    def append_message(self, message: Mapping[str, Any]) -> str:
        """Append an agent message (user, assistant, toolResult,
        bashExecution, custom, and pi 1.6's ``system``: a change of the
        system prompt or tool set, see SPEC-pi-1.6 §2.3). Summaries go
        through :meth:`append_compaction` and :meth:`branch_with_summary`.
        The first user or assistant message of a new session makes its file
        appear."""
        return self._append_entry(self._new_entry("message", message=dict(message)))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Append a ``thinking_level_change`` entry."""
        return self._append_entry(self._new_entry("thinking_level_change", thinkingLevel=thinking_level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Append a ``model_change`` entry."""
        return self._append_entry(self._new_entry("model_change", provider=provider, modelId=model_id))

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Mapping[str, Any], note: str | None = None
    ) -> dict[str, Any]:
        """Append a ``usage`` entry (pi 1.6 §2.2): usage of a request that is
        not part of the conversation (pi writes ``kind="cache_warm"`` for
        prompt-cache warming). Never in the model context; only cost totals
        read it.

        Args:
            kind: free text.
            provider, model: who served the request.
            usage: pi's usage object (``input, output, cacheRead,
                cacheWrite, totalTokens, cost{...}``), stored as given.
            note: stored only when non-empty.

        Returns:
            The new entry itself (not its id; pi's ``appendUsage`` does the
            same).
        """
        fields: dict[str, Any] = {"kind": kind, "provider": provider, "model": model, "usage": usage}
        if note:
            fields["note"] = note
        entry = self._new_entry("usage", **fields)
        self._append_entry(entry)
        return entry

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = OMITTED,
        from_hook: bool | None = OMITTED,
        usage: Any = OMITTED,
    ) -> str:
        """Append a ``compaction`` entry (pi 1.6 §5.1).

        Args:
            summary: the summary text.
            first_kept_entry_id: the first entry kept verbatim; None means
                "keep nothing" and is stored as the new entry's own id.
            tokens_before: the context size before, in tokens.
            details: pi's ``{readFiles, modifiedFiles}`` (omitted when not given).
            from_hook: whether an extension made the summary.
            usage: usage of the summary request(s).

        The entry also records ``systemMessage``: the replayed system-prompt
        state (:func:`pi_session.context.get_current_system_message`) of the
        current context, with its ``timestamp`` set to the compaction's time
        in ms; left out when the context has no system message and no tools.
        Keys in pi's order: type, id, parentId, timestamp, summary,
        firstKeptEntryId, tokensBefore, details, usage, fromHook,
        systemMessage.

        Returns:
            The new entry id.
        """
        timestamp = now_iso()
        system_message = _context.get_current_system_message(self.build_session_projection()["messages"])
        entry_id = new_entry_id(self._tree.by_id)
        entry = _drop_none(
            {
                "type": "compaction",
                "id": entry_id,
                "parentId": self._leaf_id,
                "timestamp": timestamp,
                "summary": summary,
                "firstKeptEntryId": first_kept_entry_id if first_kept_entry_id is not None else entry_id,
                "tokensBefore": tokens_before,
                "details": details,
                "usage": usage,
                "fromHook": from_hook,
            }
        )
        if system_message:
            entry["systemMessage"] = {**system_message, "timestamp": iso_to_ms(timestamp)}
        return self._append_entry(entry)

    def append_compaction_result(self, result: CompactionResult, *, planned_leaf_id: Any = OMITTED) -> str:
        """Append the compaction entry of a finished
        :class:`pi_session.compaction.CompactionResult` (what ``pi-session
        compact`` stores): its summary, first kept entry and tokens before,
        and ``details``, ``usage`` and ``fromHook`` when set. See
        :meth:`append_compaction`.

        Args:
            planned_leaf_id: the leaf the compaction was prepared at. When
                given, the entry is written only if it still continues that
                path: the leaf here is that entry, and entries another
                writer appended meanwhile (seen under the append lock)
                continue it. Otherwise nothing is written (beyond pi, which
                chains a stale plan onto whatever branch is last).

        Raises:
            pi_session.storage.LeafMovedError: the leaf moved off the
                planned path (nothing was written).

        Returns:
            The new entry id.
        """
        if planned_leaf_id is not OMITTED and planned_leaf_id != self._leaf_id:
            raise LeafMovedError(self._where(), planned_leaf_id, self._leaf_id)
        self._planned_leaf = planned_leaf_id
        try:
            return self._append_compaction_of(result)
        finally:
            self._planned_leaf = OMITTED

    def _append_compaction_of(self, result: CompactionResult) -> str:
        return self.append_compaction(
            result.summary,
            result.first_kept_entry_id,
            result.tokens_before,  # type: ignore[arg-type]  # a float only when recorded usage was fractional; stored as it is
            details=result.details if result.details is not None else OMITTED,
            from_hook=True if result.from_hook else OMITTED,
            usage=result.usage if result.usage is not None else OMITTED,
        )

    def append_custom_entry(self, custom_type: str, data: Any = OMITTED) -> str:
        """Append a ``custom`` entry (extension data, not in the context)."""
        entry = _drop_none({"type": "custom", "customType": custom_type, "data": data})
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        """Append a ``session_info`` entry naming the session: every run of
        ``\\r``/``\\n`` becomes one space, then the name is trimmed (pi 1.6);
        an empty name clears it."""
        return self._append_entry(self._new_entry("session_info", name=js_trim(_NEWLINES.sub(" ", name))))

    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = OMITTED) -> str:
        """Append a ``custom_message`` entry (in the context as role ``custom``)."""
        entry = _drop_none(
            {"type": "custom_message", "customType": custom_type, "content": content, "display": display, "details": details}
        )
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

    def append_context_edit(self, target_id: str, replacement: Mapping[str, Any] | None) -> str:
        """Append a ``context_edit`` entry (pi 1.6 §2.1, §5.1): on this
        branch, the target's model-visible content is replaced (or, with
        None, the target is left out of the context).

        Checks, in pi's order: ``replacement`` is None or a mapping whose
        ``content`` is a string or a list; the target exists; it is on the
        current branch (root→leaf); it is a ``custom_message`` or a
        user/assistant/toolResult message. A string replacement for an
        assistant or toolResult target is stored as
        ``[{"type": "text", "text": S}]``; otherwise the replacement is
        stored as given.

        Returns:
            The new entry id.

        Raises:
            ValueError: one of the checks failed (the message says which).
        """
        if replacement is not None and (
            not isinstance(replacement, Mapping)
            or "content" not in replacement
            or not isinstance(replacement["content"], (str, list))
        ):
            raise ValueError("context edit replacement must be None or a mapping whose 'content' is a string or a list")
        target = self._tree.by_id.get(target_id)
        if target is None:
            raise ValueError(f"context edit target {target_id} not found")
        if not any(e.get("id") == target_id for e in self.get_branch()):
            raise ValueError(f"context edit target {target_id} is not on the current branch")
        message = target.get("message") if target.get("type") == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        if not (target.get("type") == "custom_message" or role in _EDITABLE_ROLES):
            kind = f"a {role} message" if role is not None else f"a {target.get('type')} entry"
            raise ValueError(f"context edit target {target_id} is {kind}, whose model content cannot be edited")
        stored: dict[str, Any] | None
        if replacement is None:
            stored = None
        elif role in ("assistant", "toolResult") and isinstance(replacement["content"], str):
            stored = {"content": [{"type": "text", "text": replacement["content"]}]}
        else:
            stored = dict(replacement)
        return self._append_entry(self._new_entry("context_edit", targetId=target_id, replacement=stored))

    def append_label_change(self, target_id: str, label: str | None = OMITTED) -> str:
        """Set (or with None/"" clear) the label of an entry.

        Raises:
            KeyError: ``target_id`` is not an entry of this session.
        """
        if target_id not in self._tree.by_id:
            raise KeyError(f"Entry {target_id} not found")
        return self._append_entry(self._new_entry("label", targetId=target_id, label=label))

    # ------------------------------------------------------------------
    # navigation

    def branch(self, branch_from_id: str) -> None:
        """Move the leaf to an existing entry; the next append branches there.

        Raises:
            KeyError: unknown id.
        """
        if branch_from_id not in self._tree.by_id:
            raise KeyError(f"Entry {branch_from_id} not found")
        self._leaf_id = branch_from_id

    def reset_leaf(self) -> None:
        """Set the leaf to none: the next append is a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = OMITTED,
        from_hook: bool | None = OMITTED,
        usage: Any = OMITTED,
    ) -> str:
        """Move the leaf to ``branch_from_id`` (None: before the first entry)
        and append a ``branch_summary`` there. Its ``fromId`` is the leaf
        before the move, or ``"root"`` when there was none (pi 1.6; 0.73.1
        recorded the target). ``usage``: of the summary request.

        When the write fails, the leaf stays where it was before the call
        (pi would leave it at ``branch_from_id``).

        Raises:
            KeyError: unknown id.
        """
        if branch_from_id is not None and branch_from_id not in self._tree.by_id:
            raise KeyError(f"Entry {branch_from_id} not found")
        from_id = self._leaf_id if self._leaf_id is not None else "root"
        entry = self._new_entry(
            "branch_summary", fromId=from_id, summary=summary, details=details, usage=usage, fromHook=from_hook
        )
        entry["parentId"] = branch_from_id
        return self._append_entry(entry)

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Switch to a new session holding only the root→``leaf_id`` path,
        with labels on that path re-created as label entries at its end and
        the old file as ``parentSession`` (pi 1.6 §5.3). The kept entries
        are re-chained (each one's parent is the kept entry before it, the
        first is a root), so entries that hung under a dropped label entry
        stay connected, and a compaction whose ``firstKeptEntryId`` named a
        dropped label names the next kept entry instead. A manager opened
        read-only may branch: the opened file stays untouched, the new one
        is writable. Written at once when the path holds a user or assistant
        message, else at the first one appended.

        In a database store the new session is created in the same store
        (``parentSession`` = the old one's :meth:`get_session_location`).

        Returns:
            The new file path (persisted to files), else None (in memory, or
            a database store: :meth:`get_session_id` names the new session).

        Raises:
            KeyError: unknown id.
        """
        previous_file = self._session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise KeyError(f"Entry {leaf_id} not found")
        kept: builtins.list[dict[str, Any]] = []
        replaced_label: dict[str, str] = {}  # dropped label id -> the next kept entry
        pending_labels: builtins.list[str] = []
        for entry in path:
            if entry.get("type") == "label":
                pending_labels.append(entry["id"])
                continue
            for label_id in pending_labels:
                replaced_label[label_id] = entry["id"]
            pending_labels.clear()
            entry = dict(entry)
            entry["parentId"] = kept[-1]["id"] if kept else None
            if entry.get("type") == "compaction":
                first_kept = entry.get("firstKeptEntryId")
                if first_kept != entry["id"] and first_kept in replaced_label:
                    entry["firstKeptEntryId"] = replaced_label[first_kept]
            kept.append(entry)
        kept_ids = {e["id"] for e in kept}
        labels = [
            (target, label, self._tree.label_timestamps.get(target))
            for target, label in self._tree.labels.items()
            if target in kept_ids
        ]
        session_id = new_session_id()
        timestamp = now_iso()
        previous = self._where() if self._store is not None else str(previous_file) if self._persist and previous_file is not None else None
        header = make_header(session_id, self._cwd, timestamp, previous)
        taken = set(kept_ids)
        parent_id = kept[-1]["id"] if kept else None
        label_entries = []
        for target, label, label_ts in labels:
            entry = {"type": "label", "id": new_entry_id(taken), "parentId": parent_id, "timestamp": label_ts, "targetId": target, "label": label}
            taken.add(entry["id"])
            label_entries.append(entry)
            parent_id = entry["id"]
        self._records = [header, *kept, *label_entries]
        # read_only protected the file that was opened; the new one is ours
        self._read_only = False
        self._session_id = session_id
        self._build_index()
        self._written = 0
        self._flushed = False
        if not self._persist:
            return None
        if self._store is not None:
            if self._has_conversation:
                self._persist_pending()
            return None
        directory = self._session_dir or (previous_file.parent if previous_file else Path.cwd())
        self._session_file = directory / session_file_name(file_timestamp(timestamp), session_id)
        if self._has_conversation:
            self._persist_pending()
        return self._session_file

    # ------------------------------------------------------------------
    # accessors

    def is_persisted(self) -> bool:
        """True for sessions that are stored (in files or a store)."""
        return self._persist

    def get_cwd(self) -> str:
        """The session's cwd (resolved: absolute, ``~`` expanded)."""
        return self._cwd

    def get_session_dir(self) -> Path | None:
        return self._session_dir

    def uses_default_session_dir(self) -> bool:
        """Whether the session directory is cwd's default one (pi 1.6's
        ``usesDefaultSessionDir``); False for in-memory sessions."""
        return self._session_dir is not None and paths_equal(self._session_dir, default_session_dir(self._cwd))

    def get_session_id(self) -> str:
        return self._session_id

    def get_session_file(self) -> Path | None:
        return self._session_file

    def get_header(self) -> dict[str, Any] | None:
        """The session header record."""
        return self._records[0] if self._records else None

    def get_entries(self) -> builtins.list[dict[str, Any]]:
        """All entries in file order (header excluded); a new list."""
        return self._records[1:]

    def get_entry_count(self) -> int:
        """Number of entries (header excluded; an id that repeats counts
        once, as pi counts its id index), without copying them."""
        return len(self._tree.by_id)

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        return self._tree.by_id.get(entry_id)  # type: ignore[return-value]

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> dict[str, Any] | None:
        return self.get_entry(self._leaf_id) if self._leaf_id else None

    def get_children(self, parent_id: str | None) -> builtins.list[dict[str, Any]]:
        """Direct children of an entry, in file order."""
        return self._tree.children(parent_id)  # type: ignore[return-value]

    def get_label(self, entry_id: str) -> str | None:
        return self._tree.labels.get(entry_id)

    def get_session_name(self) -> str | None:
        """The name from the latest ``session_info`` entry, if any."""
        return self._tree.session_name()

    def get_branch(self, from_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Entries root→``from_id`` (default: the leaf)."""
        start = from_id if from_id is not None else self._leaf_id
        return self._tree.branch(start)  # type: ignore[return-value]

    def get_tree(self) -> builtins.list[TreeNode]:
        """The whole tree (see :meth:`pi_session.tree.SessionTree.roots`)."""
        return self._tree.roots()

    @property
    def tree(self) -> SessionTree:
        """The index behind the accessors."""
        return self._tree

    def _leaf_path(self) -> builtins.list[dict[str, Any]]:
        return self.get_branch(self._leaf_id) if self._leaf_id is not None else []

    def build_context_entries(self) -> builtins.list[dict[str, Any]]:
        """The compaction-aware entry list at the leaf (pi 1.6's
        ``buildContextEntries``; see
        :func:`pi_session.context.context_entries_from_path`)."""
        return _context.context_entries_from_path(self._leaf_path())

    def build_session_projection(self) -> SessionProjection:
        """The projection at the leaf: each context entry with the messages
        it contributes after context edits, plus ``messages``,
        ``thinkingLevel`` and ``model`` (pi 1.6's ``buildSessionProjection``;
        see :func:`pi_session.context.projection_from_path`)."""
        return _context.projection_from_path(self._leaf_path())

    def build_session_context(self) -> SessionContext:
        """The context at the leaf: ``{messages, thinkingLevel, model}`` of
        :meth:`build_session_projection` (see
        :func:`pi_session.context.context_from_path`)."""
        return _context.context_from_path(self._leaf_path())

    def estimate_context_tokens(self) -> dict[str, Any]:
        """The context size at the leaf as pi 1.6 measures it for its
        compaction trigger (:func:`pi_session.tokens.estimate_projected_context_tokens`):
        usage an assistant reported before the branch's latest compaction or
        context edit is not trusted, so right after a compaction this is an
        estimate of the compacted context, not the old usage.

        Returns:
            ``{"tokens", "usageTokens", "trailingTokens", "lastUsageIndex"}``
            (tokens). Use with :func:`pi_session.should_compact`.
        """
        from .tokens import estimate_projected_context_tokens

        path = self._leaf_path()
        return estimate_projected_context_tokens(_context.projection_from_path(path), path)


    # ------------------------------------------------------------------
    # navigation (pi's navigateTree) and statistics

    def plan_navigation(self, target_id: str) -> NavigationPlan:
        """What moving the leaf to ``target_id`` would do, without writing
        (pi's ``navigateTree`` before its summary step): where the leaf goes
        (a user message or ``custom_message`` target: its parent, with the
        target's text handed back for editing; else the target) and the
        entries of the branch left behind, to summarize.

        Returns:
            A :class:`pi_session.navigation.NavigationPlan`; ``is_noop`` when
            the target is the leaf.

        Raises:
            KeyError: ``target_id`` is not an entry of this session.
        """
        from .navigation import plan_navigation

        return plan_navigation(self, self._leaf_id, target_id)

    def navigate(
        self,
        target_id: str,
        *,
        summary: str | None = None,
        details: Any = None,
        usage: Any = None,
    ) -> NavigationResult:
        """Move the leaf to ``target_id`` as pi's ``navigateTree`` does (see
        :meth:`plan_navigation`); the summary itself is the caller's (e.g.
        :func:`pi_session.compaction.generate_branch_summary` over the
        plan's ``entries_to_summarize``).

        Args:
            target_id: the entry to move to. When it is the leaf, nothing
                happens (pi's no-op).
            summary: None: just move the leaf, nothing is appended (pi
                without a summary; a file-backed session keeps the move only
                in memory, since a file's leaf is its last entry). A string:
                append a ``branch_summary`` with it at the new position (see
                :meth:`branch_with_summary`); an empty one records the move in
                the file, and pi leaves it out of the context.
            details, usage: stored on the ``branch_summary`` (the summary's
                details, the summary request's usage); left out when None
                (as a summarizer that has none reports them); ignored
                without ``summary``.

        Returns:
            A :class:`pi_session.navigation.NavigationResult`, including the
            tool calls left unanswered at the new position.

        Raises:
            KeyError: ``target_id`` (or the parent the leaf moves to) is not
                an entry of this session; nothing changed.
            pi_session.storage.AppendError: writing the entry failed (the
                leaf stays where it was).
        """
        from .adapters import unanswered_tool_calls
        from .navigation import NavigationResult

        plan = self.plan_navigation(target_id)
        if plan.is_noop:
            return NavigationResult(target_id, plan.old_leaf_id, plan.old_leaf_id, None, None)
        new_leaf = plan.new_leaf_id
        if new_leaf is not None and new_leaf not in self._tree.by_id:
            raise KeyError(f"Entry {new_leaf} not found")
        summary_id: str | None = None
        if summary is not None:
            summary_id = self.branch_with_summary(
                new_leaf,
                summary,
                OMITTED if details is None else details,
                usage=OMITTED if usage is None else usage,
            )
        elif new_leaf is None:
            self.reset_leaf()
        else:
            self.branch(new_leaf)
        unanswered = unanswered_tool_calls(self.build_session_context()["messages"])
        return NavigationResult(
            target_id,
            plan.old_leaf_id,
            new_leaf,
            summary_id,
            plan.editor_text,
            tuple(str(e.get("id")) for e in plan.entries_to_summarize) if summary else (),
            tuple(u["toolCallId"] for u in unanswered),
        )

    def stats(self) -> SessionStats:
        """The session's header facts, size and shape, as ``pi-session
        info`` shows them (reads the file's size; no pi counterpart).

        Returns:
            A :class:`pi_session.stats.SessionStats` (``to_json()`` gives the
            ``info --json`` object).
        """
        from .stats import SessionStats, count_entry_types

        header = self.get_header() or {}
        entries = self.get_entries()
        path = self._session_file
        return SessionStats(
            path=self.get_session_location(),
            id=self._session_id,
            version=self.file_version,
            cwd=header.get("cwd"),
            created=header.get("timestamp"),
            parent_session=header.get("parentSession"),
            name=self.get_session_name(),
            size_bytes=path.stat().st_size if path and path.exists() else (self._known_size or 0) if self._store is not None else 0,
            entries=len(entries),
            counts=count_entry_types(entries),
            leaf_id=self._leaf_id,
            branch_length=len(self.get_branch()),
            labels=dict(self._tree.labels),
            problems=[p.to_json() for p in self.problems],
        )


def _most_recent_session(directory: Path, resolved_cwd: str | None = None) -> Path | None:
    """The ``*.jsonl`` file of ``directory`` with the newest mtime whose
    header can be read (and, with ``resolved_cwd``, whose header cwd is that
    cwd), or None."""
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    candidates: list[tuple[int, Path]] = []
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = directory / name
        try:
            candidates.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue
    candidates.sort(key=lambda c: c[0], reverse=True)
    for _mtime, path in candidates:
        header = read_session_header(path)
        if header is not None and (resolved_cwd is None or session_cwd_matches(header.get("cwd"), resolved_cwd)):
            return path
    return None
