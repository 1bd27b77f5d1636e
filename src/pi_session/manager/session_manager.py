"""``SessionManager``: a session of pi's (pi 1.6 SessionManager): its
header, entries, tree and leaf, read from and written to its store.

It mirrors pi's SessionManager: a session is an append-only tree of entries
(a JSONL file, or a database store's lines); the leaf is the current
position; appends create a child of the leaf and move the leaf to it.
Differences from pi, all on the side of keeping data: migration rewrites
atomically and keeps a backup; damaged lines are reported
(:attr:`SessionManager.problems`) and left in the file; a parentId cycle is
cut instead of looping forever; entries are never written twice; a new file
appears whole (temp file + link) or not at all.

Where each part lives: the constructors and listings (and the one place a
``store=``/path/locator argument is understood) in :mod:`.opening`; the
``append_*`` methods in :mod:`.appends`; the write path (first write,
appends, durability) in :mod:`.writing`, with the stale-leaf rule in
:mod:`.stale_leaf`; the I/O of one session behind
:class:`pi_session.stores.SessionHandle`. This module holds the state, the
one load path, navigation and the accessors.
"""

from __future__ import annotations

import builtins
import dataclasses
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..session import context as _context
from ..core import jsonio
from .appends import OMITTED, EntryAppends, drop_omitted
from ..core.ids import new_entry_id, new_session_id, validate_session_id
from ..core.paths import paths_equal, resolve_path
from ..storage.versions import migrate_session_entries
from .locating import SessionOpening, StoreArg, new_handle_for
from ..core.paths import default_session_dir
from ..entries import SessionContext, SessionProjection
from ..entries.records import CURRENT_SESSION_VERSION, HEADER_TYPE, StrPath, make_header
from ..entries.source import EntryList, EntrySource, entry_source
from ..storage import Durability, LineProblem, SessionFile, SessionFileError, ensure_dir
from ..stores.handle import MemoryHandle, SessionHandle
from ..core.timestamps import now_iso
from ..core.text import js_trim
from ..session.tree import SessionTree, TreeNode, find_orphans
from ..entries.questions import COMPACTION, LABEL, MESSAGE
from .writer import SessionWriter, is_conversation

if TYPE_CHECKING:  # the result types; their modules are imported where used
    from ..compaction.navigation import NavigationPlan, NavigationResult
    from ..session.stats import SessionStats
    from ..stores import SessionStore

__all__ = ["SessionManager", "validate_session_id", "OMITTED", "StoreArg"]


_NEWLINES = re.compile(r"[\r\n]+")

class SessionManager(SessionOpening, EntryAppends):
    """A session: its header, entries, tree and leaf, and its store.

    Construct with :meth:`create`, :meth:`open`, :meth:`continue_recent`,
    :meth:`in_memory` or :meth:`fork_from`.

    Write behaviour (pi 1.6 SessionManager): a new session writes nothing
    until it holds a user or assistant message; then the header and every
    entry are written at once into a session that must not exist yet
    (exclusive create; a file appears whole or not at all). When another
    writer created a session with the same id first (two writers starting
    one new id at once; a file ``<timestamp>_<id>.jsonl`` in the directory,
    or the id in a store), the first write continues that session instead:
    its entries are loaded and this manager's follow its last entry
    (beyond pi, which writes a second file; see :mod:`pi_session.manager.writer`). From then on
    each entry is appended as one line with one ``write`` under an
    exclusive file lock (see :func:`pi_session.storage.append_lines`), or
    in one transaction of a database store. An opened session counts as
    written: appends go to it at once. If a write fails, the entry is taken
    back out of memory and the leaf is where it was before the call, then
    the error propagates. ``durability`` chooses a data sync per entry
    (default), per :meth:`flush`, or never. All of it goes through the
    session's :class:`pi_session.stores.SessionHandle` (:mod:`.writing`).

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
        handle: SessionHandle | None,
        persist: bool,
        *,
        durability: Durability | str = Durability.ENTRY,
        read_only: bool = False,
        session_id: str | None = None,
        entries: Sequence[Mapping[str, Any]] | None = None,
        concurrent: Literal["follow", "strict"] = "follow",
        store: SessionStore | None = None,
        redact_secrets: bool = False,
        lazy_read: bool = False,
    ) -> None:
        """Use the constructors (:meth:`create`, :meth:`open`, ...): they
        locate the session (:func:`pi_session.manager.locating.locate`) and pass its
        handle (None: a new session), the directory of new session files
        and the database store (None for files and memory).
        ``redact_secrets=True`` (beyond pi; any constructor): the messages
        of :meth:`build_session_context` and :meth:`build_session_projection`
        (what is sent to a model) have each detected secret replaced by
        ``[REDACTED:<kind>]`` (:func:`pi_session.secrets.redact_messages`);
        the session keeps what was written. ``lazy_read=True`` (beyond pi;
        any constructor): a session file's entries are indexed and each
        decoded when first accessed whatever the file's shape (by default
        only when its context needs far fewer than all of them): for a
        reader of a few entries of a long session, such as the web app's
        session page."""
        if concurrent not in ("follow", "strict"):
            raise ValueError(f"concurrent must be 'follow' or 'strict', not {concurrent!r}")
        self.concurrent = concurrent
        self.redact_secrets = redact_secrets
        self._lazy_read = lazy_read
        self._cwd = resolve_path(cwd)
        self._session_dir = Path(resolve_path(session_dir)) if session_dir else None
        self._persist = persist
        self._read_only = read_only
        self.durability = Durability(durability)
        self._records: EntrySource = EntryList()  # the header, then the entries
        self._tree = SessionTree()
        self._leaf_id: str | None = None
        self._has_conversation = False
        self._session_id = ""
        self.problems: list[LineProblem] = []
        self.notes: list[str] = []
        self.file_version: Any = None
        self._store: SessionStore | None = store if persist else None  # a database store
        self._writer = SessionWriter(MemoryHandle())
        if persist and self._session_dir is not None and not read_only:
            ensure_dir(self._session_dir)
        if handle is not None:
            self._load(handle)
        elif entries:
            self._load_entries(entries, session_id)
        else:
            self.new_session(id=session_id)

    # ------------------------------------------------------------------
    # loading: the one path for files, databases and memory

    def _load(self, handle: SessionHandle) -> None:
        """Load the session of ``handle``. A missing one becomes a new
        session there; an empty file gets a fresh header written at once
        (pi). v1/v2 records are migrated in memory; the handle keeps the
        migration when it can (a file is rewritten with a backup), else
        the manager is read-only (:meth:`SessionHandle.keep_migration`).

        Raises:
            SessionFileError: unreadable, or not empty and without a
                session header (pi 1.6 refuses it and leaves it alone).
        """
        stamp = handle.stamp()  # before reading: a change while reading shows as one
        sf = handle.read(lazy="always" if self._lazy_read else True) if handle.exists() else None
        if sf is None or sf.header is None:
            if sf is not None and sf.size > 0:
                raise SessionFileError(handle.location, "not a pi session file: it holds no session header")
            self.new_session()
            self._writer.restart(handle)
            if sf is not None:
                self.problems = list(sf.problems)
                if not self._read_only:
                    result = handle.append([jsonio.dumps_line(self._records[0])], durability=self.durability)
                    self.notes.extend(result.notes)
                    self._writer.stored(1, result.size, result.stamp)
            return
        self.problems = list(sf.problems)
        self._session_id = sf.header["id"]
        # of a file read lazily, entries are decoded when accessed
        self._records = entry_source(sf.entries).with_head(sf.header)
        self.file_version = sf.migrated_from if sf.migrated_from is not None else sf.header.get("version", CURRENT_SESSION_VERSION)
        if sf.migrated_from is not None:
            note, self._read_only = handle.keep_migration(sf, read_only=self._read_only)
            self.notes.append(note)
            stamp = None  # rewritten: what is stored now is not what was read
        self._build_index(sf)
        self._writer.restart(handle)
        self._writer.stored(len(self._records), sf.size, stamp)

    def _where(self) -> str:
        """How messages name this session: its file, or its store locator."""
        return self._writer.handle.location

    def get_session_location(self) -> str | None:
        """Where the session is (or will be) stored: the file path, or
        ``<store url>#<id>`` for a database store (password masked); None
        for an in-memory session."""
        return self._writer.handle.location if self._persist else None

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
            self._records = EntryList([records[0]] + [r for r in records[1:] if isinstance(r.get("type"), str) and isinstance(r.get("id"), str)])
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
            The new session file path (persisted to files), else None.

        Raises:
            ValueError: ``id`` is not a valid session id.
        """
        if id is not None:
            validate_session_id(id)
        self._session_id = id or new_session_id()
        header = make_header(self._session_id, self._cwd, now_iso(), parent_session)
        self._records = EntryList([header])
        self._tree = SessionTree()
        self._leaf_id = None
        self._has_conversation = False
        self._writer.restart(self._new_handle(header))
        return self._writer.handle.path if self._persist else None

    def _new_handle(self, header: Mapping[str, Any]) -> SessionHandle:
        """The handle a new session of this manager is created through."""
        if not self._persist:
            return MemoryHandle()
        current = self._writer.handle.path
        directory = self._session_dir or (current.parent if current is not None else None)
        return new_handle_for(header, database=self._store, session_dir=directory)

    def _build_index(self, sf: SessionFile | None = None) -> None:
        columns = sf.entry_columns if sf is not None else None
        records = self._records
        entries = records.view(1)
        self._tree = SessionTree(entries, columns)
        self._tree.find_cycles()
        # (entry id, kind, message) of each tree problem and orphan
        found = [(p.entry_id, p.kind, p.message) for p in self._tree.problems]
        if sf is not None:
            orphans = find_orphans(entries, self._tree.by_id, columns[1] if columns is not None else None)
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
        # the types from the source: of a lazily read file, only message
        # entries are decoded, up to the first user or assistant message
        self._has_conversation = any(t == MESSAGE and is_conversation(records[i]) for i, t in enumerate(records.types()))

    # ------------------------------------------------------------------
    # writing (the rules: pi_session.manager.writer)

    def _persist_pending(self, *, force: bool = False) -> None:
        """Write the records not stored yet (:meth:`SessionWriter.write`):
        the first write creates the session once it holds a user or
        assistant message (or when ``force``), later ones append.

        When the first write continued a session another writer created
        with the same id first (:mod:`.writing`), the records now start with
        that session's header and entries: the index is rebuilt and the
        leaf kept (under its new id, when it was given one).

        Raises:
            PermissionError: the manager is read-only.
            FileExistsError: the new session exists already and is not a
                session with this id; nothing written.
            pi_session.storage.AppendError: an append failed part way.
        """
        if self._read_only:
            raise PermissionError(f"{self._where()}: opened read-only")
        try:
            self._writer.write(
                self._records,
                self._tree,
                self.notes,
                due=self._has_conversation or force,
                durability=self.durability,
                concurrent=self.concurrent,
            )
        finally:
            renamed = self._writer.take_joined()
            if renamed is not None:
                leaf = self._leaf_id
                self._reindex(renamed.get(leaf, leaf) if leaf is not None else None)

    def _reindex(self, leaf_id: str | None) -> None:
        """Index the records again (they changed under the index), with
        the leaf at ``leaf_id``."""
        self._build_index()
        self._leaf_id = leaf_id

    def save(self) -> None:
        """Write every entry not yet on disk now, even before the first
        user or assistant message (pi waits for one; the CLI's explicit
        commands do not)."""
        if self._writer.pending(self._records):
            self._persist_pending(force=True)

    def flush(self) -> None:
        """Make appended entries durable (fsync of the file and its
        directory), for ``durability="batch"``. Costs one fsync (about
        2.6 ms on the ext4 disk we measured) however many entries it covers.
        """
        self._writer.flush()

    def _append_entry(self, entry: dict[str, Any]) -> str:
        """Add ``entry`` (its ``parentId`` already set), move the leaf to it
        and write what is due. When the write fails before the entry
        reached the store, the entry is taken back out and the leaf and the
        write state are as before; the error propagates (pi 1.6)."""
        if self._read_only:
            raise PermissionError(f"{self._where()}: opened read-only")
        had_conversation = self._has_conversation
        self._records.append(entry)
        if not had_conversation and is_conversation(entry):
            self._has_conversation = True
        try:
            self._persist_pending()
        except BaseException:
            if self._writer.pending(self._records):
                # not stored: memory must not hold it either (a later
                # entry would name a parent the store does not have)
                self._records.pop()
                self._has_conversation = had_conversation
                if self._tree.by_id.get(entry["id"]) is entry:  # indexed again with it
                    self._reindex(self._leaf_id)
                raise
            self._index_appended(entry)  # stored after all (a failed sync)
            raise
        self._index_appended(entry)
        return entry["id"]

    def _index_appended(self, entry: dict[str, Any]) -> None:
        """Index a stored entry (unless the write indexed every record
        again, see :meth:`_persist_pending`) and move the leaf to it."""
        if self._tree.by_id.get(entry["id"]) is not entry:
            self._tree.add(entry)
        self._leaf_id = entry["id"]

    def _new_entry(self, etype: str, **fields: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": etype, "id": new_entry_id(self._tree.by_id), "parentId": self._leaf_id, "timestamp": now_iso()}
        entry.update(fields)
        return drop_omitted(entry)

    def append_session_info(self, name: str) -> str:
        """Append a ``session_info`` entry naming the session: every run of
        ``\\r``/``\\n`` becomes one space, then the name is trimmed (pi 1.6);
        an empty name clears it."""
        return self._append_entry(self._new_entry("session_info", name=js_trim(_NEWLINES.sub(" ", name))))

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
        the old file as ``parentSession`` (pi 1.6 createBranchedSession). The kept entries
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
        path = self.get_branch(leaf_id)
        if not path:
            raise KeyError(f"Entry {leaf_id} not found")
        kept: builtins.list[dict[str, Any]] = []
        replaced_label: dict[str, str] = {}  # dropped label id -> the next kept entry
        pending_labels: builtins.list[str] = []
        for entry in path:
            if entry.get("type") == LABEL:
                pending_labels.append(entry["id"])
                continue
            for label_id in pending_labels:
                replaced_label[label_id] = entry["id"]
            pending_labels.clear()
            entry = dict(entry)
            entry["parentId"] = kept[-1]["id"] if kept else None
            if entry.get("type") == COMPACTION:
                first_kept = entry.get("firstKeptEntryId")
                if isinstance(first_kept, str) and first_kept != entry["id"] and first_kept in replaced_label:
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
        header = make_header(session_id, self._cwd, timestamp, self.get_session_location())
        taken = set(kept_ids)
        parent_id = kept[-1]["id"] if kept else None
        label_entries = []
        for target, label, label_ts in labels:
            entry = {"type": "label", "id": new_entry_id(taken), "parentId": parent_id, "timestamp": label_ts, "targetId": target, "label": label}
            taken.add(entry["id"])
            label_entries.append(entry)
            parent_id = entry["id"]
        self._records = EntryList([header, *kept, *label_entries])
        # read_only protected the file that was opened; the new one is ours
        self._read_only = False
        self._session_id = session_id
        self._build_index()
        self._writer.restart(self._new_handle(header))
        if self._has_conversation:
            self._persist_pending()
        return self._writer.handle.path if self._persist else None

    # ------------------------------------------------------------------
    # accessors

    def is_stale(self) -> bool:
        """Whether the stored session changed since this manager last read
        or wrote it: another writer appended, rewrote it (also to the same
        length, as a scrub does whose marks are as long as the secrets) or
        deleted it; for a session this manager has not written yet, whether
        another writer created a session with its id since. One
        :meth:`SessionHandle.stamp() <pi_session.stores.SessionHandle.stamp>`
        call (a file's size, inode and times; a database row's size, record
        count and write time); open the session again to see the change.
        False in memory, or when nothing is known (after a failed append)."""
        return self._persist and self._writer.changed()

    def unsaved_entry_count(self) -> int:
        """How many entries are not stored yet: a new session holds its
        entries in memory until its first user or assistant message (pi
        1.6) or :meth:`save`; 0 once everything is written."""
        return self._writer.unsaved(self._records) if self._persist else 0

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
        """The session's file (also before it is first written); None for
        database and in-memory sessions."""
        return self._writer.handle.path

    def get_header(self) -> dict[str, Any] | None:
        """The session header record."""
        return self._records[0] if self._records else None

    def get_entries(self) -> builtins.list[dict[str, Any]]:
        """All entries in file order (header excluded); a new list."""
        return self._records[1:]

    def get_entries_of_type(self, entry_type: str) -> builtins.list[dict[str, Any]]:
        """The entries whose ``type`` is ``entry_type`` (e.g.
        ``"context_edit"``), in file order; a new list. A lazily read
        session decodes only those (no pi counterpart)."""
        return self._records.of_type(entry_type, 1)

    def get_entry_count(self) -> int:
        """Number of entries (header excluded; an id that repeats counts
        once, as pi counts its id index), without copying them."""
        return len(self._tree.by_id)

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        return self._tree.by_id.get(entry_id)  # type: ignore[return-value]

    def find_entry_ids(self, prefix: str, limit: int = 20) -> builtins.list[str]:
        """The ids of the entries whose id starts with ``prefix``, sorted,
        at most ``limit`` (no pi counterpart: what a command that takes an
        entry id uses to accept a unique prefix, as git does for commits).
        Only the ids are looked at, never the entries' content."""
        found = sorted(eid for eid in self._tree.by_id if isinstance(eid, str) and eid.startswith(prefix))
        return found[:limit]

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
        return self._tree.branch(start)[:]  # a plain list, every entry decoded

    def get_tree(self) -> builtins.list[TreeNode]:
        """The whole tree (see :meth:`pi_session.session.tree.SessionTree.roots`)."""
        return self._tree.roots()

    @property
    def tree(self) -> SessionTree:
        """The index behind the accessors."""
        return self._tree

    def _leaf_path(self) -> EntrySource:
        """The root→leaf path; of a lazily read file, entries decoded as
        they are read (context building reads the end of it)."""
        return self._tree.branch(self._leaf_id)

    def build_context_entries(self) -> builtins.list[dict[str, Any]]:
        """The compaction-aware entry list at the leaf (pi 1.6's
        ``buildContextEntries``; see
        :func:`pi_session.session.context.context_entries_from_path`)."""
        return _context.context_entries_from_path(self._leaf_path())

    def build_session_projection(self) -> SessionProjection:
        """The projection at the leaf: each context entry with the messages
        it contributes after context edits, plus ``messages``,
        ``thinkingLevel`` and ``model`` (pi 1.6's ``buildSessionProjection``;
        see :func:`pi_session.session.context.projection_from_path`); with
        ``redact_secrets``, secrets masked in every message."""
        projection = _context.projection_from_path(self._leaf_path())
        if self.redact_secrets:
            from ..secrets import redact_messages

            items = projection["entries"]
            flat = redact_messages([m for item in items for m in item["messages"]])
            at = 0
            entries = []
            for item in items:
                n = len(item["messages"])
                entries.append({**item, "messages": flat[at : at + n]})
                at += n
            projection = {**projection, "entries": entries, "messages": flat}  # type: ignore[typeddict-item]
        return projection

    def build_session_context(self) -> SessionContext:
        """The context at the leaf: ``{messages, thinkingLevel, model}`` of
        :meth:`build_session_projection` (see
        :func:`pi_session.session.context.context_from_path`); with
        ``redact_secrets``, secrets masked in every message."""
        context = _context.context_from_path(self._leaf_path())
        if self.redact_secrets:
            from ..secrets import redact_messages

            context = {**context, "messages": redact_messages(context["messages"])}
        return context

    def estimate_projected_context_tokens(self) -> dict[str, Any]:
        """The context size at the leaf as pi 1.6 measures it for its
        compaction trigger (pi 1.6 ``estimateProjectedContextTokens``; see
        :func:`pi_session.session.tokens.estimate_projected_context_tokens`): usage
        an assistant reported before the branch's latest compaction or
        context edit is not trusted, so right after a compaction this is an
        estimate of the compacted context, not the old usage. (The
        top-level :func:`pi_session.estimate_context_tokens` of a message
        list is the older, unprojected estimate.)

        Returns:
            ``{"tokens", "usageTokens", "trailingTokens", "lastUsageIndex"}``
            (tokens). Use with :func:`pi_session.should_compact`.
        """
        from ..session.tokens import estimate_projected_context_tokens

        path = self._leaf_path()
        return estimate_projected_context_tokens(_context.projection_from_path(path), path)

    def prepare_compaction(self, settings: Any = None, *, keep_tool_pairs: bool = True) -> Any:
        """:func:`pi_session.compaction.prepare_compaction` of the path to
        the leaf (pi 1.6's ``prepareCompaction(getBranch())``), the same
        plan; of a lazily read file only the entries it reads (from the
        end of the path back) are decoded. With ``redact_secrets``, the
        messages to summarize have their secrets masked.

        Args:
            settings: a :class:`pi_session.session.settings.CompactionSettings` or
                its dict (None: the defaults).
            keep_tool_pairs: see ``prepare_compaction``.

        Returns:
            A :class:`pi_session.compaction.CompactionPreparation`, or None
            (nothing to compact).
        """
        from ..compaction import prepare_compaction

        return prepare_compaction(self.summarized(self._leaf_path()), settings, keep_tool_pairs=keep_tool_pairs)

    def summarized(self, entries: Sequence[Any]) -> Sequence[Any]:
        """``entries`` as they go to a summarizer model (a compaction's or a
        branch summary's), a new sequence: as they are (a lazily read path
        stays lazy: an entry is decoded when the summarizer reads it), or
        with ``redact_secrets`` every secret in their text masked as
        ``[REDACTED:<kind>]`` (:func:`pi_session.secrets.redacted_records`;
        ids kept; unchanged entries are the same objects)."""
        if not self.redact_secrets:
            return entry_source(entries, copy=True)
        from ..secrets import redacted_records

        return redacted_records(entries)

    def estimate_context_tokens(self) -> dict[str, Any]:
        """Deprecated alias of :meth:`estimate_projected_context_tokens`
        (the same projected estimate; the name is kept for one release and
        warns with a :class:`DeprecationWarning`)."""
        warnings.warn(
            "SessionManager.estimate_context_tokens() is deprecated: use estimate_projected_context_tokens() "
            "(the same projected estimate)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.estimate_projected_context_tokens()

    # ------------------------------------------------------------------
    # navigation (pi's navigateTree) and statistics

    def plan_navigation(self, target_id: str) -> NavigationPlan:
        """What moving the leaf to ``target_id`` would do, without writing
        (pi's ``navigateTree`` before its summary step): where the leaf goes
        (a user message or ``custom_message`` target: its parent, with the
        target's text handed back for editing; else the target) and the
        entries of the branch left behind, to summarize.

        Returns:
            A :class:`pi_session.compaction.navigation.NavigationPlan`; ``is_noop`` when
            the target is the leaf. With ``redact_secrets``, the entries to
            summarize have their secrets masked (:meth:`summarized`).

        Raises:
            pi_session.compaction.navigation.EntryNotFoundError: (a ``KeyError``)
                ``target_id`` is not an entry of this session; its message
                names the session and the id.
        """
        from ..compaction.navigation import EntryNotFoundError, plan_navigation

        if self.get_entry(target_id) is None:
            where = self.get_session_location()
            raise EntryNotFoundError(f"{where + ': ' if where else ''}no entry with id {target_id}")
        plan = plan_navigation(self, self._leaf_id, target_id)
        if self.redact_secrets and plan.entries_to_summarize:
            plan = dataclasses.replace(plan, entries_to_summarize=tuple(self.summarized(plan.entries_to_summarize)))
        return plan

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
            A :class:`pi_session.compaction.navigation.NavigationResult`, including the
            tool calls left unanswered at the new position.

        Raises:
            KeyError: ``target_id`` (or the parent the leaf moves to) is not
                an entry of this session; nothing changed.
            pi_session.storage.AppendError: writing the entry failed (the
                leaf stays where it was).
        """
        from ..adapters import unanswered_tool_calls
        from ..compaction.navigation import NavigationResult

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
            A :class:`pi_session.session.stats.SessionStats` (``to_json()`` gives the
            ``info --json`` object).
        """
        from ..session.stats import SessionStats, count_entry_types, message_stats

        header = self.get_header() or {}
        entries = self.get_entries()
        return SessionStats(
            path=self.get_session_location(),
            id=self._session_id,
            version=self.file_version,
            cwd=header.get("cwd"),
            created=header.get("timestamp"),
            parent_session=header.get("parentSession"),
            name=self.get_session_name(),
            size_bytes=(self._writer.handle.size() or 0) if self._persist else 0,
            entries=len(entries),
            counts=count_entry_types(entries),
            leaf_id=self._leaf_id,
            branch_length=len(self.get_branch()),
            labels=dict(self._tree.labels),
            problems=[p.to_json() for p in self.problems],
            messages=message_stats(entries),
        )


