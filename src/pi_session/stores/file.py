"""The file store: today's session files, as pi keeps them. A thin
wrapper of :mod:`pi_session.storage` and :mod:`pi_session.listing` (no
behaviour of its own): sessions live under a sessions root (like
``~/.pi/agent/sessions``) as ``<root>/<encoded cwd>/<timestamp>_<id>.jsonl``,
byte-compatible with pi. A :class:`pi_session.SessionManager` given a
FileStore works on the files exactly as without a store."""

from __future__ import annotations

import builtins
import errno
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..listing import list_session_dir, list_sessions_dirs, read_session_header
from ..paths import encode_cwd, session_file_name
from ..storage import AppendResult, Durability, SessionFile, append_lines_checked, create_file, iter_lines, read_session_file
from ..timestamps import file_timestamp, now_iso
from .base import OnGrown, SessionExistsError, SessionNotFoundError, SessionStore, StoreError
from .sql import line_columns

__all__ = ["FileStore", "UnnamableSessionError"]

_SAFE_NAME = re.compile(r"[^/\\\x00]+\.jsonl")
_NAMED = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_(.+)\.jsonl")


class UnnamableSessionError(StoreError):
    """A session that cannot be written as a file (:meth:`FileStore.create`):
    no file name of its own and an id that cannot be part of one (``/``,
    ``\\``, NUL), a cwd holding NUL, or a name longer than the file system
    allows."""


class FileStore(SessionStore):
    """Session files under a sessions root.

    Args:
        root: the sessions root (a directory holding one directory per
            project cwd); created 0700 when a session is first written.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.url = str(self.root)
        # id -> file of each project directory, with the directory's mtime
        # when it was listed (see _dir_ids)
        self._listed: dict[Path, tuple[int, dict[str, Path]]] = {}
        self._subs: tuple[int, list[Path]] | None = None  # the root's mtime and directories

    # ------------------------------------------------------------------
    # where

    def session_dir(self, cwd: str) -> Path:
        """The directory of a (resolved) cwd's sessions: ``<root>/<encoded cwd>``."""
        return self.root / encode_cwd(cwd)

    def _ids(self) -> Iterator[tuple[str, Path]]:
        """``(session id, file)`` of every session file, in directory and
        name order: the id from a ``<timestamp>_<id>.jsonl`` name (as the
        CLI resolves ids), else from the header (files without one are
        passed over)."""
        for _sub, ids in self._dir_ids():
            yield from ids.items()

    def _dir_ids(self) -> Iterator[tuple[Path, dict[str, Path]]]:
        """``(project directory, {id: file})`` per directory of the root.
        A directory is listed again only when its mtime changed since it
        was last listed by this store (creating or deleting a file changes
        it; this store's own creates and deletes update the memo), so
        looking up ids costs a ``stat`` per directory, not a listing of
        every file: importing N sessions is linear, not quadratic."""
        try:
            root_mtime = self.root.stat().st_mtime_ns
            if self._subs is None or self._subs[0] != root_mtime:
                self._subs = (root_mtime, sorted(p for p in self.root.iterdir() if p.is_dir()))
        except OSError:
            self._listed.clear()
            self._subs = None
            return
        subs = self._subs[1]
        for gone in set(self._listed) - set(subs):
            del self._listed[gone]
        for sub in subs:
            try:
                mtime = sub.stat().st_mtime_ns
            except OSError:
                continue
            memo = self._listed.get(sub)
            if memo is None or memo[0] != mtime:
                memo = (mtime, self._list_dir(sub))
                self._listed[sub] = memo
            yield sub, memo[1]

    @staticmethod
    def _list_dir(sub: Path) -> dict[str, Path]:
        ids: dict[str, Path] = {}
        try:
            names = sorted(os.listdir(sub))
        except OSError:
            return ids
        for name in names:
            if not name.endswith(".jsonl"):
                continue
            path = sub / name
            match = _NAMED.fullmatch(name)
            if match is not None:
                ids.setdefault(match[1], path)
                continue
            header = read_session_header(path)
            if header is not None:
                ids.setdefault(header["id"], path)
        return ids

    def _remember(self, sub: Path, session_id: str, path: Path | None) -> None:
        """Update the memo of ``sub`` after this store created (``path``)
        or deleted (None) a session file there, when it was current."""
        memo = self._listed.get(sub)
        if memo is None:
            return
        try:
            mtime = sub.stat().st_mtime_ns
        except OSError:
            self._listed.pop(sub, None)
            return
        ids = memo[1]
        if path is None:
            ids.pop(session_id, None)
        else:
            ids.setdefault(session_id, path)
        self._listed[sub] = (mtime, ids)

    def path_of(self, session_id: str) -> Path:
        """The file of a session: the first file (in directory and name
        order) named ``<timestamp>_<id>.jsonl``, else whose header has the
        id.

        Raises:
            SessionNotFoundError: none.
        """
        for _sub, ids in self._dir_ids():
            path = ids.get(session_id)
            if path is not None and path.exists():
                return path
        raise SessionNotFoundError(f"{self.url}: no session {session_id}")

    def locator(self, session_id: str) -> str:
        return str(self.path_of(session_id))

    def file_name(self, session_id: str) -> str | None:
        return self.path_of(session_id).name

    # ------------------------------------------------------------------
    # writing

    def create(
        self,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        file_name: str | None = None,
    ) -> str:
        """See :meth:`SessionStore.create`: a new file in the header cwd's
        directory (:func:`pi_session.storage.create_file`: whole or not at
        all), named ``file_name`` or ``<header timestamp>_<id>.jsonl``.

        Raises:
            SessionExistsError: the id or the file exists already.
            StoreError: no session header; UnnamableSessionError (a
                StoreError): no ``file_name`` and an id that cannot be part
                of a file name (``/``, ``\\``, NUL), a cwd holding NUL, a
                name too long.
        """
        header: Any = None
        for n, line in enumerate(lines, 1):
            col = line_columns(line, n)
            if not col.damaged:
                header = col.record
                break
        if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
            raise StoreError(f"{self.url}: cannot create a session: the first record is not a session header with a string id")
        session_id: str = header["id"]
        if self.exists(session_id):
            raise SessionExistsError(f"{self.url}: a session with id {session_id} exists already")
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
        from ..listing import resolve_path

        if isinstance(cwd, str) and "\x00" in cwd:
            raise UnnamableSessionError(f"{self.url}: session {session_id!r}: its cwd {cwd!r} cannot name a directory (it holds NUL)")
        directory = self.session_dir(resolve_path(cwd) if cwd else "/")
        if file_name is None or not _SAFE_NAME.fullmatch(file_name):
            ts = header.get("timestamp")
            file_name = session_file_name(file_timestamp(ts if isinstance(ts, str) else now_iso()), session_id)
            if not _SAFE_NAME.fullmatch(file_name):
                # pi never makes such an id; a hand-made or shared database can hold one
                raise UnnamableSessionError(f"{self.url}: session id {session_id!r} cannot name a file (it holds '/', '\\' or NUL)")
        try:
            create_file(directory / file_name, lines, durability)
        except FileExistsError:
            raise SessionExistsError(f"{directory / file_name}: the file exists already") from None
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            raise UnnamableSessionError(f"{directory / file_name}: file name too long for session {session_id!r}") from None
        self._remember(directory, session_id, directory / file_name)
        return session_id

    def append(
        self,
        session_id: str,
        lines: Sequence[bytes],
        *,
        durability: Durability = Durability.ENTRY,
        expected_size: int | None = None,
        on_grown: OnGrown | None = None,
    ) -> AppendResult:
        """See :meth:`SessionStore.append`
        (:func:`pi_session.storage.append_lines_checked`)."""
        return append_lines_checked(
            self.path_of(session_id), lines, durability, expected_size=expected_size, on_grown=on_grown
        )

    def delete(self, session_id: str) -> bool:
        try:
            path = self.path_of(session_id)
        except SessionNotFoundError:
            return False
        path.unlink()
        self._remember(path.parent, session_id, None)
        return True

    # ------------------------------------------------------------------
    # reading

    def exists(self, session_id: str) -> bool:
        try:
            self.path_of(session_id)
        except SessionNotFoundError:
            return False
        return True

    def read_lines(self, session_id: str) -> Iterator[bytes]:
        path = self.path_of(session_id)
        return (raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path))

    def read(self, session_id: str, *, migrate: bool = True) -> SessionFile:
        """:func:`pi_session.storage.read_session_file` of the session's file."""
        return read_session_file(self.path_of(session_id), migrate=migrate)

    def list(self, *, cwd: str | None = None, with_text: bool = True) -> builtins.list[dict[str, Any]]:
        """:func:`pi_session.listing.list_session_dir` of the cwd's directory
        (:func:`~pi_session.listing.list_sessions_dirs` of the root without
        a cwd); ``allMessagesText`` is always there."""
        if cwd is not None:
            return list_session_dir(self.session_dir(cwd))
        return list_sessions_dirs(self.root)

    def find(self, prefix: str, *, limit: int = 20) -> builtins.list[str]:
        return sorted({sid for sid, _path in self._ids() if sid.startswith(prefix)})[:limit]

    def most_recent(self, cwd: str | None = None) -> str | None:
        """The session of ``cwd`` whose file was modified last (as
        :meth:`pi_session.SessionManager.continue_recent` picks it)."""
        if cwd is None:
            return super().most_recent(cwd)
        from ..manager import _most_recent_session

        path = _most_recent_session(self.session_dir(cwd))
        if path is None:
            return None
        header = read_session_header(path)
        return str(header["id"]) if header else None
