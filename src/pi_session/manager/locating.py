"""Opening and locating sessions: what :class:`pi_session.SessionManager`'s
constructors (``create``, ``open``, ``continue_recent``, ``in_memory``,
``fork_from``) and listings (``list``, ``list_all``, ``find_by_id``) do
before a manager exists.

Every ``store=`` / URL / locator / path / handle argument goes through one
function, :func:`locate`, which turns what the caller gave into a
:class:`Location`: the store (files are :class:`pi_session.stores.FileStore`
sessions or plain paths: a manager works on them exactly alike), the
directory new session files go to, and the handle of the session named.
:func:`new_handle_for` is the one rule for where a new session is created.
"""

from __future__ import annotations

import builtins
import errno
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ..core import jsonio
from ..core.ids import new_session_id, validate_session_id
from ..stores.listing import (
    ProgressCallback,
    jsonl_names,
    list_session_dir,
    list_sessions_dirs,
    paths_equal,
    open_regular,
    read_session_header,
    resolve_path,
    session_cwd_matches,
)
from ..core.paths import default_session_dir, session_file_name, sessions_dir
from ..entries.records import StrPath, is_session_header, make_header
from ..storage import NOT_JSON, SessionFileError, ensure_dir, line_record, session_path_problem
from ..stores import AmbiguousSessionError, SessionNotFoundError, StoreCapability, StoreError, shared_store
from ..stores.file import FileHandle, most_recent_file, session_id_of_file_name
from ..stores.handle import MemoryHandle, SessionHandle
from ..core.timestamps import file_timestamp, now_iso

if TYPE_CHECKING:
    from .session_manager import SessionManager
    from ..stores import SessionStore

__all__ = [
    "Location",
    "locate",
    "new_handle_for",
    "find_session_file",
    "resolve_session_file",
    "header_session_id",
    "SessionCandidate",
    "AmbiguousSessionFileError",
    "SessionOpening",
    "StoreArg",
]

StoreArg = Union["SessionStore", str, "os.PathLike[str]", None]
"""A ``store=`` argument: a :class:`pi_session.stores.SessionStore`, its URL
or directory (see :func:`pi_session.stores.open_store`), or None (files, as
without stores)."""


@dataclass(frozen=True)
class Location:
    """Where a manager's session is (see :func:`locate`).

    Attributes:
        database: the store, when it is not a store of files (a manager
            given a :class:`~pi_session.stores.FileStore` works on its files
            as on any path); None for files.
        session_dir: files: the directory new session files go to (None when
            not known yet, e.g. a handle without a file).
        handle: the handle of the session named by ``target``, else None.
        store: the store given (normalised; a FileStore too), else None.
    """

    database: SessionStore | None
    session_dir: Path | None
    handle: SessionHandle | None = None
    store: SessionStore | None = None


def _file_target(store: SessionStore, target: str) -> bool:
    """Whether ``target`` given with a store of files names an existing file
    (that file is meant, not an id)."""
    return store.can(StoreCapability.FILES) and Path(target).expanduser().is_file()


def locate(
    store: StoreArg = None,
    *,
    target: StrPath | SessionHandle | None = None,
    session_dir: StrPath | None = None,
    cwd: str | None = None,
    exclusive_dir: bool = True,
) -> Location:
    """Turn a constructor's arguments into a :class:`Location`.

    Args:
        store: a store, its URL or directory (:func:`pi_session.stores.shared_store`), or None.
        target: the session to open: a :class:`~pi_session.stores.SessionHandle`;
            with a store, its id or a unique id prefix (with a store of
            files, an existing file path still names that file); without
            one, a file path or a database session's locator
            ``<store url>#<id>`` (what ``get_session_location`` and
            ``parentSession`` hold).
        session_dir: the directory for new session files; not with a store
            (with ``exclusive_dir`` False, allowed with a store of files).
        cwd: the session's cwd: with a store of files, new files go to its
            directory of that store (``<root>/<encoded cwd>``).

    Raises:
        ValueError: both ``session_dir`` and ``store``.
        pi_session.stores.SessionNotFoundError: no such session id, or an
            ambiguous prefix.
    """
    if isinstance(target, SessionHandle):
        return Location(None, Path(session_dir) if session_dir is not None else target.path.parent if target.path else None, target)
    text = os.fspath(target) if target is not None else None
    if store is None and text is not None and "://" in text and "#" in text:
        store, text = text.rsplit("#", 1)  # a database session's locator
    given = shared_store(store) if store is not None else None
    the_store = given
    if the_store is not None and text is not None and _file_target(the_store, text):
        the_store = None  # a file path with a store of files: that file
    if the_store is not None and session_dir is not None and (exclusive_dir or not the_store.can(StoreCapability.FILES)):
        raise ValueError("give either session_dir or store, not both")
    handle: SessionHandle | None = None
    if the_store is not None and text is not None:
        handle = the_store.handle(the_store.resolve(text))
    elif text is not None:
        handle = FileHandle(resolve_path(Path(text).expanduser()))
    if the_store is not None and not the_store.can(StoreCapability.FILES):
        return Location(the_store, None, handle, given)
    if session_dir is not None:
        directory: Path | None = Path(session_dir)
    elif handle is not None and handle.path is not None:
        directory = handle.path.parent
    elif the_store is not None and cwd is not None:
        directory = the_store.session_dir(resolve_path(cwd))
    else:
        directory = None
    return Location(None, directory, handle, given)


def new_handle_for(header: Mapping[str, Any], *, database: SessionStore | None, session_dir: Path | None) -> SessionHandle:
    """Where a new session with ``header`` is created: in the database
    store, else as ``<session_dir>/<timestamp>_<id>.jsonl`` (pi's file
    name), else in memory."""
    if database is not None:
        return database.new_handle(dict(header))
    if session_dir is not None:
        name = session_file_name(file_timestamp(header["timestamp"]), header["id"])
        return FileHandle(Path(session_dir) / name)
    return MemoryHandle()


def find_session_file(directory: Path, session_id: str, resolved_cwd: str | None) -> Path | None:
    """The first ``*.jsonl`` file of ``directory`` (in directory order)
    whose header ``id`` is ``session_id`` (and, with ``resolved_cwd``,
    whose header cwd is it), or None (also when the directory cannot be
    read). Only headers are read."""
    for name in jsonl_names(directory) or ():
        path = directory / name
        header = read_session_header(path)
        if header is None or header.get("id") != session_id:
            continue
        if resolved_cwd is not None and not session_cwd_matches(header.get("cwd"), resolved_cwd):
            continue
        return path
    return None


@dataclass(frozen=True)
class SessionCandidate:
    """A session file an id (prefix) matched: its ``path`` and the ``ids``
    it answers to (the id its name gives and its header's id), sorted."""

    path: Path
    ids: tuple[str, ...]


class AmbiguousSessionFileError(AmbiguousSessionError):
    """An id (prefix) that several session files answer to
    (:func:`resolve_session_file`): nothing is picked. ``candidates`` holds
    every matching :class:`SessionCandidate` (``matches`` their ids, as for
    a store's :class:`~pi_session.stores.AmbiguousSessionError`)."""

    def __init__(self, message: str, candidates: Sequence[SessionCandidate]) -> None:
        super().__init__(message, sorted({i for c in candidates for i in c.ids}))
        self.candidates = list(candidates)


_ID_PREFIX = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]*")
"""What a session id (prefix) looks like: it can never name a path
outside the sessions directory."""


def resolve_session_file(arg: str, *, store: SessionStore | None = None, agent_dir: StrPath | None = None) -> Path:
    """The session file a user names: a path, or a (unique prefix of a)
    session id.

    A path to an existing file is made absolute (symlinks are kept, not
    resolved), so paths printed and stored (``parentSession``) are
    absolute. Anything else must be a (prefix of a) session id: any id
    :func:`pi_session.core.ids.validate_session_id` accepts (``user_123``,
    ``chat.v2``, ``Support-42``) or a prefix of one (letters, digits,
    ``.``, ``_``, ``-``, starting with a letter or digit).

    With a store of files, the id is the store's
    (:meth:`~pi_session.stores.SessionStore.resolve`, then its file).
    Without one, every ``.jsonl`` file under ``<agent dir>/sessions``
    answers to two ids: the WHOLE id its name ``<timestamp>_<id>.jsonl``
    gives (:func:`pi_session.stores.file.session_id_of_file_name`: ``123``
    never finds ``user_123``) and its header's id
    (:func:`header_session_id`, the id a listing shows, also for a file
    named otherwise, copied or renamed). A whole id is matched first, else
    a prefix; when nothing matches, the argument's lower-case form is
    tried (pi's ids are lower-case UUIDs), as the stores' ``resolve``
    does. When several files match (a prefix of several ids, or two files
    holding one id) nothing is picked.

    Args:
        arg: what the user typed.
        store: a store of files (:attr:`~pi_session.stores.StoreCapability.FILES`),
            or None for the files under ``<agent_dir>/sessions``.
        agent_dir: the agent directory (default: pi's, see
            :func:`pi_session.core.paths.sessions_dir`).

    Returns:
        The absolute path of the session file.

    Raises:
        AmbiguousSessionFileError: several files match (``candidates``);
            with a store, the store's ``AmbiguousSessionError``.
        pi_session.stores.SessionNotFoundError: nothing given, a path that
            is not a session file, an unknown id, or the file of an id lies
            outside the sessions directory (a symlink).
        pi_session.stores.StoreError: ``store`` is a database.
    """
    if not arg.strip():
        raise SessionNotFoundError("no session given: pass a session file or a session id (prefix)")
    candidate = Path(arg).expanduser()
    if candidate.is_file():
        return Path(os.path.abspath(candidate))
    if candidate.exists() or candidate.is_symlink():
        raise SessionNotFoundError(f"{arg}: {session_path_problem(candidate) or 'not a session file'}")
    if not _ID_PREFIX.fullmatch(arg):
        raise SessionNotFoundError(f"{arg}: no such session file")  # a path (no id looks like one)
    if store is not None:
        if not store.can(StoreCapability.FILES):
            raise StoreError(f"{arg}: the store {store.url} holds no session files")
        return Path(store.locator(store.resolve(arg)))
    root = sessions_dir(agent_dir)
    candidates = _id_candidates(root)

    def matching(wanted: str) -> list[SessionCandidate]:
        exact = [c for c in candidates if wanted in c.ids]
        return exact or [c for c in candidates if any(i.startswith(wanted) for i in c.ids)]

    matches = matching(arg)
    if not matches and arg != arg.lower():
        matches = matching(arg.lower())
    if not matches:
        raise SessionNotFoundError(f"{arg}: no such session file, and no session id starts with it (looked in {root})")
    if len(matches) > 1:
        shown = "; ".join(f"{' / '.join(m.ids)} ({m.path})" for m in matches[:5])
        what = "session id" if all(arg in m.ids for m in matches) else "session id prefix"
        raise AmbiguousSessionFileError(
            f"{arg}: ambiguous {what}: {len(matches)} session files match: {shown}{'; ...' if len(matches) > 5 else ''}; "
            "give more of the id or the file's path",
            matches,
        )
    match = matches[0].path
    if not match.resolve().is_relative_to(root.resolve()):
        raise SessionNotFoundError(f"{arg}: the session file for this id lies outside {root} (a symlink); give its path instead")
    return match


def _id_candidates(root: Path) -> list[SessionCandidate]:
    """Every ``.jsonl`` file of the root's project directories (sorted by
    directory and name) with the ids it answers to (see
    :func:`resolve_session_file`); an unreadable directory is passed over."""
    found: list[SessionCandidate] = []
    if not root.is_dir():
        return found
    for sub in sorted(root.iterdir()):
        if not sub.is_dir():
            continue
        try:
            names = os.listdir(sub)
        except OSError:
            continue
        for name in sorted(names):
            if name.endswith(".jsonl"):
                path = sub / name
                ids = {i for i in (session_id_of_file_name(name), header_session_id(path)) if i is not None}
                found.append(SessionCandidate(path, tuple(sorted(ids))))
    return found


def header_session_id(path: Path) -> str | None:
    """The id of a file's session header, as a listing shows the file: the
    first line that is JSON (blank and unparseable lines skipped, at most
    1 MiB read, as pi's header discovery), when it is a session header
    with a string id; else None (also for a file that cannot be read or is
    not a regular file)."""
    try:
        f = open_regular(path)
        if f is None:
            return None
        with f:
            budget = 1 << 20
            for line_no, raw in enumerate(f, 1):
                budget -= len(raw)
                if budget < 0:
                    return None
                record = line_record(raw.rstrip(b"\n"), line_no)
                if record is NOT_JSON:
                    continue
                return str(record["id"]) if is_session_header(record) else None
    except OSError:
        return None
    return None


def _project_dir(cwd: str, session_dir: StrPath | None) -> tuple[Path, bool]:
    """The directory of ``cwd``'s sessions (``session_dir``, else cwd's
    default one) and whether sessions must be filtered by header cwd (pi
    1.6: an explicit directory that is not cwd's default one)."""
    default = default_session_dir(resolve_path(cwd))
    directory = Path(session_dir) if session_dir is not None else default
    return directory, session_dir is not None and not paths_equal(directory, default)


class SessionOpening:
    """The constructors and listings of :class:`pi_session.SessionManager`
    (it inherits them from here)."""

    @classmethod
    def create(cls, cwd: str, session_dir: StrPath | None = None, *, id: str | None = None, **kwargs: Any) -> SessionManager:
        """A new persisted session for ``cwd`` (resolved: ``~`` expanded,
        made absolute) in ``session_dir`` (default
        ``<agent dir>/sessions/<encoded cwd>/``, created 0700). The file is
        written when the first user or assistant message is appended; when
        a session with ``id`` exists by then (another writer created it
        first), that session is continued (see :class:`pi_session.SessionManager`).

        Args:
            id: the session id to use instead of a new UUIDv7 (pi 1.6's
                ``{id}`` option; see :func:`pi_session.core.ids.validate_session_id`).
            store: where the session lives: a
                :class:`pi_session.stores.SessionStore` or its URL (a
                directory: files under that sessions root; ``sqlite:///...``,
                ``postgresql://...``); not with ``session_dir``.

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        where = locate(kwargs.pop("store", None), session_dir=session_dir, cwd=cwd)
        directory = None if where.database is not None else where.session_dir or default_session_dir(resolve_path(cwd))
        return cls._make(cwd, directory, None, True, session_id=id, store=where.database, **kwargs)

    @classmethod
    def open(
        cls,
        path: StrPath | SessionHandle,
        session_dir: StrPath | None = None,
        cwd_override: str | None = None,
        *,
        read_only: bool = False,
        must_exist: bool = False,
        create: bool | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """Open a session file (pi's ``open``). A missing file becomes a new
        session at that path, as in pi 1.6: its directory is created now
        (0700), the file at the first user or assistant message
        (``must_exist=True`` refuses a missing file instead: a mistyped path
        then raises rather than starting a session); an empty file gets a
        fresh header written at once. v1/v2
        files are migrated; unless ``read_only``, the file is rewritten
        atomically with a backup ``<file>.v<N>.bak``. The cwd is
        ``cwd_override``, else the header's, else the process cwd.

        Args:
            path: the ``.jsonl`` file, or a
                :class:`pi_session.stores.SessionHandle` (any store's
                session, e.g. a :class:`~pi_session.stores.FailingHandle`
                injecting write failures).
            session_dir: directory for branched sessions (default: the file's).
            cwd_override: use this cwd instead of the header's.
            read_only: never write to the file (no migration rewrite, no
                header for an empty file; appends raise PermissionError);
                the file must exist.
            must_exist: raise :class:`FileNotFoundError` for a missing
                file instead of starting a new session there.
            create: the opposite of ``must_exist`` (``create=False`` is
                ``must_exist=True``).
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
            FileNotFoundError: the file does not exist and ``must_exist``
                or ``read_only`` is set (the message names the path).
            pi_session.storage.SessionFileError: unreadable, or a non-empty
                file whose first record is not a session header (the file is
                left alone, as pi 1.6 does).
            pi_session.stores.SessionNotFoundError: (store) no such session,
                or an ambiguous prefix
                (:class:`~pi_session.stores.AmbiguousSessionError`).
        """
        where = locate(kwargs.pop("store", None), target=path, session_dir=session_dir, exclusive_dir=False)
        if create is not None:
            must_exist = must_exist or not create
        missing = where.handle is not None and where.handle.path is not None and not os.path.lexists(where.handle.path)
        if missing and (read_only or must_exist) and not isinstance(path, SessionHandle):
            assert where.handle is not None and where.handle.path is not None
            raise FileNotFoundError(errno.ENOENT, "no such session file", os.fspath(where.handle.path))
        manager = cls._make(
            cwd_override or os.getcwd(), where.session_dir, where.handle, True, read_only=read_only, store=where.database, **kwargs
        )
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
        where = locate(kwargs.pop("store", None), session_dir=session_dir, cwd=cwd)
        resolved = resolve_path(cwd)
        db = where.database
        if db is not None:
            recent_id = db.most_recent(resolved)
            handle = db.handle(recent_id) if recent_id is not None else None
            return cls._make(cwd, None, handle, True, store=db, **kwargs)
        directory, filter_cwd = _project_dir(cwd, where.session_dir)
        recent = most_recent_file(directory, resolved if filter_cwd else None)
        return cls._make(cwd, directory, FileHandle(recent) if recent is not None else None, True, **kwargs)

    @classmethod
    def in_memory(
        cls,
        cwd: str | None = None,
        entries: Sequence[Mapping[str, Any]] | None = None,
        *,
        id: str | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """A session that is never written to disk (pi's ``inMemory``): its
        records go to a :class:`pi_session.stores.MemoryHandle`.

        Args:
            cwd: default: the process cwd.
            entries: records to start from (pi 1.6): when one of them is a
                ``session`` header, it is the header (the first one; other
                headers are dropped) and the records are migrated in memory;
                without one, a fresh header is made and the records follow
                it. Records that are not objects with a string ``type`` and
                ``id`` are left out. The leaf is the last entry.
            id: session id for the fresh header (see
                :func:`pi_session.core.ids.validate_session_id`).

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        return cls._make(cwd if cwd is not None else os.getcwd(), None, None, False, session_id=id, entries=entries, **kwargs)

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
            id: the new session's id (see
                :func:`pi_session.core.ids.validate_session_id`).

        Raises:
            pi_session.storage.SessionFileError: the source is unreadable,
                empty or has no header.
            ValueError: ``id`` is not a valid session id.
            FileExistsError: the new file exists already.

        With ``store=`` (keyword): ``source_path`` is a session id (or
        unique prefix) of that store, and the new session is created there
        (``parentSession`` = the source's locator).
        """
        store = kwargs.pop("store", None)
        source_handle = locate(store, target=source_path).handle
        assert source_handle is not None
        where = locate(store, session_dir=session_dir, cwd=target_cwd)
        resolved_cwd = resolve_path(target_cwd)
        source = source_handle.read()
        if source.header is None:
            raise SessionFileError(source_handle.location, "cannot fork: the session file is empty")
        directory = None
        if where.database is None:
            directory = where.session_dir or default_session_dir(resolved_cwd)
            ensure_dir(directory)
        session_id = validate_session_id(id) if id is not None else new_session_id()
        header = make_header(session_id, resolved_cwd, now_iso(), source_handle.location)
        handle = new_handle_for(header, database=where.database, session_dir=directory)
        handle.create([jsonio.dumps_line(header)] + [jsonio.dumps_line(e) for e in source.entries])
        return cls._make(resolved_cwd, directory, handle, True, store=where.database, **kwargs)

    @staticmethod
    def find_by_id(cwd: str, session_id: str, session_dir: StrPath | None = None) -> Path | None:
        """The first ``*.jsonl`` file (in directory order) of ``session_dir``
        (default: cwd's default directory) whose header ``id`` is
        ``session_id`` (pi 1.6's ``findById``). Only the header is read (see
        :func:`pi_session.stores.listing.read_session_header`). When
        ``session_dir`` is given and is not cwd's default directory, the
        header's cwd must also be ``cwd``.

        Returns:
            The file's path, or None (also when the directory cannot be read).
        """
        directory, filter_cwd = _project_dir(cwd, resolve_path(session_dir) if session_dir else None)
        return find_session_file(directory, session_id, resolve_path(cwd) if filter_cwd else None)

    @staticmethod
    def list(
        cwd: str,
        session_dir: StrPath | None = None,
        on_progress: ProgressCallback | None = None,
        *,
        store: StoreArg = None,
    ) -> builtins.list[dict[str, Any]]:
        """Sessions of one directory, newest first (pi 1.6's ``list``; see
        :func:`pi_session.stores.listing.list_session_dir` for the order, the keys
        and ``on_progress``). When ``session_dir`` is given and is not cwd's
        default directory, only sessions whose header cwd resolves to
        ``cwd`` are listed. With ``store``: the sessions of ``cwd`` in that
        store (:meth:`pi_session.stores.SessionStore.list`; a database
        answers from its listing columns, ``on_progress`` is not called)."""
        where = locate(store, session_dir=session_dir, cwd=cwd)
        resolved = resolve_path(cwd)
        if where.database is not None:
            return where.database.list(cwd=resolved)
        directory, filter_cwd = _project_dir(cwd, where.session_dir)
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
            on_progress: see :func:`pi_session.stores.listing.list_sessions_dirs`.
            agent_dir: whose ``sessions`` directory to list (default: the
                agent dir).
        """
        given = locate(store, exclusive_dir=False).store
        if given is not None:
            return given.list(on_progress=on_progress)
        if session_dir is not None:
            return list_session_dir(session_dir, on_progress=on_progress)
        return list_sessions_dirs(sessions_dir(agent_dir), on_progress=on_progress)

    @classmethod
    def _make(
        cls, cwd: str, session_dir: Path | None, handle: SessionHandle | None, persist: bool, **kwargs: Any
    ) -> SessionManager:
        return cls(cwd, session_dir, handle, persist, **kwargs)  # type: ignore[call-arg,return-value]

