"""``SessionManager``: the one class that does session I/O (SPEC 4, 10).

It mirrors pi's SessionManager: a session is an append-only tree of entries in
a JSONL file; the leaf is the current position; appends create a child of the
leaf and move the leaf to it. Differences from pi, all on the side of keeping
data: a file whose first record is not a session header is refused instead of
truncated; migration rewrites atomically and keeps a backup; damaged lines are
reported (:attr:`SessionManager.problems`) and left in the file; a parentId
cycle is cut instead of looping forever; entries are never written twice.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import jsonio
from .context import build_session_context, context_from_path
from .ids import new_entry_id, new_session_id
from .listing import list_session_dir, list_sessions_dirs
from .paths import default_session_dir, session_file_name, sessions_dir
from .records import CURRENT_SESSION_VERSION, SessionContext
from .storage import (
    AppendError,
    Durability,
    LineProblem,
    SessionFile,
    SessionFileError,
    append_lines,
    create_file,
    ensure_dir,
    read_session_file,
    rewrite_records,
    _fsync_dir,
)
from .timestamps import file_timestamp, now_iso
from .tree import SessionTree, TreeNode

__all__ = ["SessionManager"]


def _is_assistant(record: Mapping[str, Any]) -> bool:
    if record.get("type") != "message":
        return False
    message = record.get("message")
    return isinstance(message, dict) and message.get("role") == "assistant"


class _Omitted:
    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()
"""Default of optional entry fields: the key is left out (JavaScript's
``undefined``). Passing None writes an explicit ``null``, as pi does."""


_get_parent_id = operator.methodcaller("get", "parentId")


def _may_have_orphans(sf: SessionFile, entries: list[dict[str, Any]], by_id: Mapping[str, Any]) -> bool:
    """False when every parentId of ``entries`` (read from the file ``sf``)
    is null or absent or the id of an entry in ``by_id``: a check without
    a Python loop per entry (decoded JSON holds no str subclasses, so an
    id-equal parentId is a string). The parentIds come from
    ``sf.entry_columns`` when the reader gathered them."""
    if sf.entry_columns is not None and len(sf.entry_columns[1]) == len(entries):
        parents = sf.entry_columns[1]
    else:
        parents = list(map(_get_parent_id, entries))
    try:
        known = sum(map(by_id.__contains__, parents))
    except TypeError:  # an array or object parentId
        return True
    return known + parents.count(None) != len(parents)


def _drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    """Drop keys left at :data:`OMITTED` (JSON.stringify drops ``undefined``)."""
    return {k: v for k, v in entry.items() if v is not OMITTED}


class SessionManager:
    """A session: its header, entries, tree and leaf, and its file.

    Construct with :meth:`create`, :meth:`open`, :meth:`continue_recent`,
    :meth:`in_memory` or :meth:`fork_from`.

    Write behaviour (as pi): nothing is written until the session holds an
    assistant message; then everything not yet on disk is appended, one line
    per entry, each with one ``write`` under an exclusive file lock (see
    :func:`pi_session.storage.append_lines`). ``durability`` chooses a data sync
    per entry (default), per :meth:`flush`, or never.

    Attributes:
        problems: damaged lines and tree problems found when the file was
            opened (:class:`pi_session.storage.LineProblem`).
        notes: one-line notes about repairs done while writing (a torn last
            line) and migrations.
    """

    def __init__(
        self,
        cwd: str,
        session_dir: str | os.PathLike[str] | None,
        session_file: str | os.PathLike[str] | None,
        persist: bool,
        *,
        durability: Durability | str = Durability.ENTRY,
        read_only: bool = False,
    ) -> None:
        self._cwd = cwd
        self._session_dir = Path(session_dir) if session_dir else None
        self._persist = persist
        self._read_only = read_only
        self.durability = Durability(durability)
        self._records: list[dict[str, Any]] = []
        self._tree = SessionTree()
        self._leaf_id: str | None = None
        self._written = 0
        self._has_assistant = False
        self._session_id = ""
        self._session_file: Path | None = None
        self.problems: list[LineProblem] = []
        self.notes: list[str] = []
        if persist and self._session_dir is not None and not read_only:
            ensure_dir(self._session_dir)
        if session_file is not None:
            self._set_session_file(Path(session_file))
        else:
            self.new_session()

    # ------------------------------------------------------------------
    # construction

    @classmethod
    def create(cls, cwd: str, session_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> SessionManager:
        """A new persisted session for ``cwd`` in ``session_dir`` (default
        ``<agent dir>/sessions/<encoded cwd>/``, created 0700). The file is
        written when the first assistant message is appended."""
        return cls(cwd, session_dir or default_session_dir(cwd), None, True, **kwargs)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        cwd_override: str | None = None,
        *,
        read_only: bool = False,
        **kwargs: Any,
    ) -> SessionManager:
        """Open a session file (a missing file becomes a new session at that
        path). v1/v2 files are migrated; unless ``read_only``, the file is
        rewritten atomically with a backup ``<file>.v<N>.bak``.

        Args:
            path: the ``.jsonl`` file.
            session_dir: directory for branched sessions (default: the file's).
            cwd_override: use this cwd instead of the header's.
            read_only: never write to the file (no migration rewrite; appends
                raise).

        Raises:
            pi_session.storage.SessionFileError: unreadable, or the first
                record is not a session header.
        """
        p = Path(path).expanduser()
        manager = cls(cwd_override or os.getcwd(), session_dir or p.resolve().parent, p, True, read_only=read_only, **kwargs)
        if cwd_override is None:
            header = manager.get_header()
            if header and isinstance(header.get("cwd"), str):
                manager._cwd = header["cwd"]
        return manager

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> SessionManager:
        """Open the most recently modified valid session of ``cwd`` (by file
        mtime), or create a new one."""
        directory = Path(session_dir or default_session_dir(cwd))
        recent = _most_recent_session(directory)
        return cls(cwd, directory, recent, True, **kwargs)

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionManager:
        """A session that is never written to disk."""
        return cls(cwd if cwd is not None else os.getcwd(), None, None, False)

    @classmethod
    def fork_from(
        cls,
        source_path: str | os.PathLike[str],
        target_cwd: str,
        session_dir: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> SessionManager:
        """Copy every entry of ``source_path`` into a new session for
        ``target_cwd`` (header ``parentSession`` = the source path), written
        at once, and open it.

        Raises:
            pi_session.storage.SessionFileError: the source is unreadable,
                empty or has no header.
        """
        source = read_session_file(source_path)
        if source.header is None:
            raise SessionFileError(source_path, "cannot fork: the session file is empty")
        directory = Path(session_dir or default_session_dir(target_cwd))
        ensure_dir(directory)
        session_id = new_session_id()
        timestamp = now_iso()
        new_file = directory / session_file_name(file_timestamp(timestamp), session_id)
        header = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": target_cwd,
            "parentSession": str(source_path),
        }
        lines = [jsonio.dumps_line(header)] + [jsonio.dumps_line(e) for e in source.entries]
        create_file(new_file, lines)
        return cls(target_cwd, directory, new_file, True, **kwargs)

    @staticmethod
    def list(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
        """Sessions of one directory, newest first (see
        :func:`pi_session.listing.build_session_info` for the keys)."""
        return list_session_dir(session_dir or default_session_dir(cwd))

    @staticmethod
    def list_all(agent_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
        """Sessions of every project under ``<agent dir>/sessions``, newest first."""
        return list_sessions_dirs(sessions_dir(agent_dir))

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
            # An empty file: start a session in it (nothing to lose).
            self.new_session()
            self._session_file = path.absolute()
            return
        self._session_id = sf.header["id"]
        self._records = [sf.header, *sf.entries]
        if sf.migrated_from is not None:
            if self._read_only:
                self.notes.append(f"{self._session_file}: version {sf.migrated_from} file migrated in memory only")
            else:
                backup = rewrite_records(sf, backup_tag=f"v{sf.migrated_from}")
                self.notes.append(f"{self._session_file}: migrated from version {sf.migrated_from}; original kept as {backup}")
        self._build_index(sf)
        self._written = len(self._records)

    def new_session(self, *, id: str | None = None, parent_session: str | None = None) -> Path | None:
        """Start a fresh session in this manager (pi's ``newSession``).

        Returns:
            The new session file path (persisted managers), else None.
        """
        self._session_id = id or new_session_id()
        timestamp = now_iso()
        header: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": self._session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        self._records = [header]
        self._tree = SessionTree()
        self._leaf_id = None
        self._written = 0
        self._has_assistant = False
        if self._persist and self._session_dir is not None:
            self._session_file = self._session_dir / session_file_name(file_timestamp(timestamp), self._session_id)
        return self._session_file if self._persist else None

    def _build_index(self, sf: SessionFile | None = None) -> None:
        columns = sf.entry_columns if sf is not None else None
        self._tree = SessionTree(self._records[1:], columns)
        self._tree.find_cycles()
        # (entry id, kind, message) of each tree problem and orphan
        found = [(p.entry_id, p.kind, p.message) for p in self._tree.problems]
        if sf is not None and _may_have_orphans(sf, self._records[1:], self._tree.by_id):
            by_id = self._tree.by_id
            for entry in self._records[1:]:
                parent = entry.get("parentId")
                if parent is not None and (parent.__class__ is not str or parent not in by_id):
                    what = f"parent {parent!r} is not in the file" if isinstance(parent, str) else f"parentId {jsonio.dumps(parent)} is not an id"
                    found.append((entry["id"], "orphan", f"entry {entry['id']}: {what}; shown as a root"))
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
        self._has_assistant = any(_is_assistant(r) for r in self._records)

    def _persist_pending(self) -> None:
        """Write the entries not yet on disk (once the session holds an
        assistant message): the first write of a new file creates it
        atomically (it appears whole or not at all); later writes append one
        line per entry under the file lock (:func:`append_lines`). On
        failure, entries that did reach the file are not written again."""
        if not self._persist or self._session_file is None:
            return
        if self._read_only:
            raise PermissionError(f"{self._session_file}: opened read-only")
        if not self._has_assistant or self._written >= len(self._records):
            return
        pending = self._records[self._written :]
        lines = [jsonio.dumps_line(r) for r in pending]
        if self._written == 0 and not os.path.lexists(self._session_file):
            ensure_dir(self._session_file.parent)
            try:
                create_file(self._session_file, lines, self.durability)
            except FileExistsError:
                pass  # appeared meanwhile: append below
            else:
                self._written = len(self._records)
                return
        try:
            self.notes.extend(append_lines(self._session_file, lines, self.durability))
        except AppendError as exc:
            self._written += exc.lines_written
            raise
        self._written = len(self._records)

    def save(self) -> None:
        """Write every entry not yet on disk now, even before the first
        assistant message (pi waits for one; the CLI's explicit commands
        do not)."""
        if self._persist and self._session_file is not None and self._written < len(self._records):
            has_assistant = self._has_assistant
            self._has_assistant = True
            try:
                self._persist_pending()
            finally:
                self._has_assistant = has_assistant

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
        if self._read_only:
            raise PermissionError(f"{self._session_file}: opened read-only")
        self._records.append(entry)
        self._tree.add(entry)
        self._leaf_id = entry["id"]
        if not self._has_assistant and _is_assistant(entry):
            self._has_assistant = True
        self._persist_pending()
        return entry["id"]

    def _new_entry(self, etype: str, **fields: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": etype, "id": new_entry_id(self._tree.by_id), "parentId": self._leaf_id, "timestamp": now_iso()}
        entry.update(fields)
        return _drop_none(entry)

    # ------------------------------------------------------------------
    # appends (each returns the new entry id)

    def append_message(self, message: Mapping[str, Any]) -> str:
        """Append an agent message (user, assistant, toolResult,
        bashExecution, custom). Summaries go through :meth:`append_compaction`
        and :meth:`branch_with_summary`."""
        return self._append_entry(self._new_entry("message", message=dict(message)))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Append a ``thinking_level_change`` entry."""
        return self._append_entry(self._new_entry("thinking_level_change", thinkingLevel=thinking_level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Append a ``model_change`` entry."""
        return self._append_entry(self._new_entry("model_change", provider=provider, modelId=model_id))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = OMITTED,
        from_hook: bool | None = OMITTED,
    ) -> str:
        """Append a ``compaction`` entry (``details`` is pi's
        ``{readFiles, modifiedFiles}``; ``tokens_before`` in tokens)."""
        return self._append_entry(
            self._new_entry(
                "compaction",
                summary=summary,
                firstKeptEntryId=first_kept_entry_id,
                tokensBefore=tokens_before,
                details=details,
                fromHook=from_hook,
            )
        )

    def append_custom_entry(self, custom_type: str, data: Any = OMITTED) -> str:
        """Append a ``custom`` entry (extension data, not in the context)."""
        entry = _drop_none({"type": "custom", "customType": custom_type, "data": data})
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        """Append a ``session_info`` entry naming the session (stripped; an
        empty name clears it)."""
        return self._append_entry(self._new_entry("session_info", name=name.strip()))

    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = OMITTED) -> str:
        """Append a ``custom_message`` entry (in the context as role ``custom``)."""
        entry = _drop_none(
            {"type": "custom_message", "customType": custom_type, "content": content, "display": display, "details": details}
        )
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

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
        self, branch_from_id: str | None, summary: str, details: Any = OMITTED, from_hook: bool | None = OMITTED
    ) -> str:
        """Move the leaf to ``branch_from_id`` (None: before the first entry)
        and append a ``branch_summary`` there (``fromId`` = the id or ``"root"``).

        Raises:
            KeyError: unknown id.
        """
        if branch_from_id is not None and branch_from_id not in self._tree.by_id:
            raise KeyError(f"Entry {branch_from_id} not found")
        self._leaf_id = branch_from_id
        return self._append_entry(
            self._new_entry(
                "branch_summary",
                fromId=branch_from_id if branch_from_id is not None else "root",
                summary=summary,
                details=details,
                fromHook=from_hook,
            )
        )

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Switch to a new session holding only the root→``leaf_id`` path,
        with labels on that path re-created as label entries at its end and
        the old file as ``parentSession``. Beyond pi: an entry whose parent
        was a label entry (left out of the copy) is linked to the previous
        kept entry instead of dangling. A manager opened read-only may
        branch: the opened file stays untouched, the new one is writable.
        Written at once when the path has an assistant message, else on the
        first assistant append.

        Returns:
            The new file path (persisted), else None.

        Raises:
            KeyError: unknown id.
        """
        previous_file = self._session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise KeyError(f"Entry {leaf_id} not found")
        kept: list[dict[str, Any]] = []
        for entry in path:
            if entry.get("type") == "label":
                continue
            entry = dict(entry)
            if kept and entry.get("parentId") != kept[-1]["id"]:
                # beyond pi: its parent was a label entry left out of the copy;
                # pi leaves a dangling parentId (the copy's context then starts
                # here), we link it to the previous kept entry
                entry["parentId"] = kept[-1]["id"]
            kept.append(entry)
        kept_ids = {e["id"] for e in kept}
        labels = [
            (target, label, self._tree.label_timestamps.get(target))
            for target, label in self._tree.labels.items()
            if target in kept_ids
        ]
        session_id = new_session_id()
        timestamp = now_iso()
        header: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if self._persist and previous_file is not None:
            header["parentSession"] = str(previous_file)
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
        if not self._persist:
            return None
        directory = self._session_dir or (previous_file.parent if previous_file else Path.cwd())
        self._session_file = directory / session_file_name(file_timestamp(timestamp), session_id)
        if self._has_assistant:
            create_file(self._session_file, [jsonio.dumps_line(r) for r in self._records], self.durability)
            self._written = len(self._records)
        return self._session_file

    # ------------------------------------------------------------------
    # accessors

    def is_persisted(self) -> bool:
        """True for file-backed sessions."""
        return self._persist

    def get_cwd(self) -> str:
        return self._cwd

    def get_session_dir(self) -> Path | None:
        return self._session_dir

    def get_session_id(self) -> str:
        return self._session_id

    def get_session_file(self) -> Path | None:
        return self._session_file

    def get_header(self) -> dict[str, Any] | None:
        """The session header record."""
        return self._records[0] if self._records else None

    def get_entries(self) -> list[dict[str, Any]]:
        """All entries in file order (header excluded); a new list."""
        return self._records[1:]

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        return self._tree.by_id.get(entry_id)  # type: ignore[return-value]

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> dict[str, Any] | None:
        return self.get_entry(self._leaf_id) if self._leaf_id else None

    def get_children(self, parent_id: str | None) -> list[dict[str, Any]]:
        """Direct children of an entry, in file order."""
        return self._tree.children(parent_id)  # type: ignore[return-value]

    def get_label(self, entry_id: str) -> str | None:
        return self._tree.labels.get(entry_id)

    def get_session_name(self) -> str | None:
        """The name from the latest ``session_info`` entry, if any."""
        return self._tree.session_name()

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        """Entries root→``from_id`` (default: the leaf)."""
        start = from_id if from_id is not None else self._leaf_id
        return self._tree.branch(start)  # type: ignore[return-value]

    def get_tree(self) -> list[TreeNode]:
        """The whole tree (see :meth:`pi_session.tree.SessionTree.roots`)."""
        return self._tree.roots()

    @property
    def tree(self) -> SessionTree:
        """The index behind the accessors."""
        return self._tree

    def build_session_context(self) -> SessionContext:
        """The context at the leaf (see :func:`pi_session.build_session_context`)."""
        if self._leaf_id is None:
            return build_session_context(self.get_entries(), None)
        path = self.get_branch(self._leaf_id)
        if not path:
            return build_session_context([], None)
        return context_from_path(path)


def _most_recent_session(directory: Path) -> Path | None:
    if not directory.is_dir():
        return None
    best: tuple[int, Path] | None = None
    for name in os.listdir(directory):
        if not name.endswith(".jsonl"):
            continue
        path = directory / name
        try:
            with open(path, "rb") as f:
                first = f.read(512).split(b"\n", 1)[0]
            header = jsonio.loads(first)
            if not (isinstance(header, dict) and header.get("type") == "session" and isinstance(header.get("id"), str)):
                continue
            mtime = path.stat().st_mtime_ns
        except (OSError, ValueError):
            continue
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None
