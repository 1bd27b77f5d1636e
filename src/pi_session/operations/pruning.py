"""Moving abandoned branches out of a session (``pi-session prune``; beyond
pi, whose format never deletes a branch): :func:`prune_session`.

The pruned file keeps, byte for byte, its header, every entry on the path
root→leaf (and root→each ``--keep-branches`` leaf), the label entries of
kept entries, the entries that kept label entries name and the entry
naming the session, with their own paths
(:func:`pi_session.session.lean.kept_ids`: a label entry and the entry it
names never end up in different files), and every line that is not an entry.
The branch summaries pi wrote when the user navigated away are on the
path, so they stay. The context pi builds at the leaf is the same: every
entry of the path is there, unchanged, and the leaf is still the last
entry.

Every other entry moves to an archive: a new session file (its own
header, ``parentSession`` = the pruned file) holding the removed entries
and the entries they hang from, in file order, so pi opens it with those
branches intact. The union of the entries of both files is the original
set. The archive is written first (a new file, fsync'd), then the session
is rewritten as ``repair`` does (:func:`pi_session.storage.atomic_rewrite`,
a backup ``<file>.prune.bak`` unless told not to); killed in between, the
session is whole and a second run writes a fresh archive.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..session.lean import kept_ids
from ..entries.records import StrPath
from ..stores.capabilities import StoreCapability
from ..entries.questions import LABEL, SESSION_INFO
from .errors import OperationError
from .opening import open_for_reading

__all__ = ["PruneResult", "prune_session"]


@dataclass
class PruneResult:
    """What :func:`prune_session` did (or would do, ``dry_run``).

    Attributes:
        session: the file.
        archive: the archive session file, or its locator in a database
            store (None when nothing was pruned).
        dry_run: nothing was written.
        before, after: the session file's bytes before and after.
        kept: entries left in the session.
        moved: entries moved to the archive.
        archive_entries: entries in the archive (the moved ones and those
            they hang from).
        leaf: the session's leaf.
        backup: ``<file>.prune.bak``, or None.
        moved_ids: the ids of the moved entries, in file order.
        off_path: how many kept entries are off the paths to the leaves
            (kept for a label or the session's name, with their paths: a
            label entry off the paths naming a kept entry, or an entry off
            the paths that a kept label entry names).
        kept_for: why, one phrase per such label entry and for the name
            entry off the paths (``"label 'x' on <id>"``, ``"label
            removal on <id>"``, ``"session name at <id>"``), ``<id>`` the
            labelled entry.
    """

    session: str
    archive: Path | str | None
    dry_run: bool
    before: int = 0
    after: int = 0
    kept: int = 0
    moved: int = 0
    archive_entries: int = 0
    leaf: str | None = None
    backup: Path | None = None
    moved_ids: list[str] = field(default_factory=list)
    off_path: int = 0
    kept_for: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "session": self.session, "archive": str(self.archive) if self.archive else None, "dryRun": self.dry_run,
            "bytesBefore": self.before, "bytesAfter": self.after, "kept": self.kept, "moved": self.moved,
            "archiveEntries": self.archive_entries, "leaf": self.leaf, "backup": str(self.backup) if self.backup else None,
            "offPathKept": self.off_path, "keptFor": self.kept_for,
        }


def prune_session(
    location: StrPath,
    *,
    keep_branches: list[str] | tuple[str, ...] = (),
    archive: StrPath | None = None,
    dry_run: bool = False,
    backup: bool = True,
    store: Any = None,
) -> PruneResult:
    """Move a session file's abandoned branches to an archive session (see
    the module docstring).

    Args:
        location: the session file, or with a database ``store`` its id (prefix).
        keep_branches: ids (or unique id prefixes) of other leaves whose
            paths stay too.
        archive: where to write the archive (must not exist); default: a
            new session file beside the session, named as pi names them.
        dry_run: plan only; write nothing.
        backup: keep the original as ``<file>.prune.bak`` (files; a
            database session is rewritten in one transaction, no backup).
        store: the :class:`~pi_session.stores.SessionStore`, or None (a
            file). In a database store the archive is a new session of the
            store (``parentSession`` = the session's locator).

    Returns:
        A :class:`PruneResult`.

    Raises:
        OperationError: not a session file, an unknown or ambiguous
            ``keep_branches`` id, a file with damaged lines or without
            entry ids (run ``check --repair`` or ``migrate`` first), an
            existing ``archive``.
        pi_session.stores.StoreError: a database session changed
            meanwhile, or the store fails (nothing changed).
        pi_session.storage.SessionFileError: the file changed while it was
            rewritten (nothing changed).
        OSError: on I/O failure (the session is then unchanged).
    """

    db = store if store is not None and not store.can(StoreCapability.FILES) else None
    if db is not None:
        return _prune_db(db, str(location), keep_branches, dry_run)
    from ..storage import atomic_rewrite, create_file, iter_lines

    from ..storage import SessionFileError

    path = Path(os.path.realpath(location))
    seen = os.stat(path)
    manager = open_for_reading(path)
    leaves, cwd = _leaves(manager, str(path), keep_branches)
    del manager
    st = os.stat(path)
    if (st.st_size, st.st_mtime_ns) != (seen.st_size, seen.st_mtime_ns):
        # the leaf was read from another content: an entry appended meanwhile would be archived
        raise SessionFileError(path, "the file changed while it was being read; nothing was changed")
    lines = [raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path)]
    plan = _plan(lines, leaves, cwd, str(path), str(path))
    result = plan.result
    result.dry_run = dry_run
    if plan.archived is None:
        return result
    if archive is not None:
        target = Path(os.path.abspath(archive))
        if os.path.lexists(target):
            raise OperationError(f"{target}: exists; --archive names a new file")
    else:
        target = path.parent / plan.file_name
    result.archive = target
    if dry_run:
        return result
    create_file(target, plan.archived)
    try:
        result.backup = atomic_rewrite(
            path, plan.pruned, backup_tag="prune" if backup else None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns
        )
    except BaseException:
        try:
            os.unlink(target)
        except OSError:
            pass
        raise
    return result


def _leaves(manager: Any, where: str, keep_branches: list[str] | tuple[str, ...]) -> tuple[list[str], str]:
    """The leaves whose paths stay (the session's, then each of
    ``keep_branches`` resolved) and the session's cwd."""
    if manager.problems:
        raise OperationError(f"{where}: the file has damaged lines (line {manager.problems[0].line}); run pi-session check --repair first")
    leaf = manager.get_leaf_id()
    leaves = [leaf] if leaf is not None else []
    for wanted in keep_branches:
        found = [wanted] if manager.get_entry(wanted) is not None else manager.find_entry_ids(wanted, limit=2)
        if len(found) != 1:
            raise OperationError(f"{where}: --keep-branches {wanted}: {'no such entry' if not found else 'more than one entry id starts with it'}")
        leaves.append(found[0])
    return leaves, manager.get_cwd()


@dataclass
class _Plan:
    result: PruneResult
    pruned: list[bytes]
    archived: list[bytes] | None
    file_name: str


def _plan(lines: list[bytes], leaves: list[str], cwd: str, where: str, parent_session: str) -> _Plan:
    """Split a session's lines (each with its newline, as stored) into the
    pruned session's and the archive's (None: nothing to prune)."""
    import orjson

    from ..core import jsonio
    from ..core.ids import new_session_id
    from ..core.paths import session_file_name
    from ..entries.records import make_header
    from ..core.timestamps import file_timestamp, now_iso

    parsed: list[tuple[bytes, dict[str, Any] | None]] = []
    for raw in lines:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            record = None
        elif record.get("type") != "session" and not isinstance(record.get("id"), str):
            raise OperationError(f"{where}: entries without ids (an old session format); run pi-session migrate first")
        parsed.append((raw, record))
    entries = [r for _raw, r in parsed if r is not None and r.get("type") != "session"]
    keep = kept_ids(entries, leaves)
    removed = [e["id"] for e in entries if e["id"] not in keep]
    size = sum(map(len, lines))
    result = PruneResult(where, None, False, size, size, len(entries) - len(removed), len(removed), leaf=leaves[0] if leaves else None)
    result.moved_ids = removed
    result.off_path, result.kept_for = _kept_off_path(entries, keep, leaves)
    if not removed:
        return _Plan(result, lines, None, "")
    parent = {e["id"]: e.get("parentId") for e in entries}
    in_archive = set(removed)
    for eid in removed:
        up = parent.get(eid)
        while isinstance(up, str) and up in parent and up not in in_archive:
            in_archive.add(up)
            up = parent[up]
    pruned = [raw for raw, r in parsed if r is None or r.get("type") == "session" or r["id"] in keep]
    result.after = sum(map(len, pruned))
    result.archive_entries = len(in_archive)
    header = make_header(new_session_id(), cwd, now_iso(), parent_session=parent_session)
    archived = [jsonio.dumps_line(header)] + [
        raw if raw.endswith(b"\n") else raw + b"\n"
        for raw, r in parsed
        if r is not None and r.get("type") != "session" and r["id"] in in_archive
    ]
    return _Plan(result, pruned, archived, session_file_name(file_timestamp(header["timestamp"]), header["id"]))


def _kept_off_path(entries: list[dict[str, Any]], keep: set[str], leaves: list[str]) -> tuple[int, list[str]]:
    """How many kept entries are off the paths root→``leaves``, and why
    (the label and session name entries among them, in file order)."""
    parent = {e["id"]: e.get("parentId") for e in entries}
    on_path: set[str] = set()
    for leaf in leaves:
        eid: Any = leaf
        while isinstance(eid, str) and eid in parent and eid not in on_path:
            on_path.add(eid)
            eid = parent[eid]
    off = [e for e in entries if e["id"] in keep and e["id"] not in on_path]
    names = [e for e in off if e.get("type") == SESSION_INFO]
    why: list[str] = []
    for e in entries:
        if e["id"] not in keep:
            continue
        if e.get("type") == LABEL:
            target = e.get("targetId")
            if e["id"] in on_path and not (isinstance(target, str) and target in keep and target not in on_path):
                continue  # a label on the path that keeps nothing off it
            label = e.get("label")
            what = f"label {label!r}" if isinstance(label, str) and label else "label removal"
            why.append(f"{what} on {target}")
        elif names and e is names[-1]:
            why.append(f"session name at {e['id']}")
    return len(off), list(dict.fromkeys(why))


def _prune_db(db: Any, session: str, keep_branches: list[str] | tuple[str, ...], dry_run: bool) -> PruneResult:
    """:func:`prune_session` of a database session: the archive is a new
    session of the same store (``parentSession`` = the session's locator),
    created before the session is rewritten in one transaction
    (:meth:`~pi_session.stores.sql.SQLHandle.replace_lines`)."""
    session_id = db.resolve(session)
    handle = db.handle(session_id)
    from ..stores import StoreError

    lines = list(db.read_lines(session_id))
    manager = open_for_reading(session_id, store=db)
    leaves, cwd = _leaves(manager, handle.location, keep_branches)
    del manager
    if list(db.read_lines(session_id)) != lines:
        # the leaf was read from another content: an entry appended meanwhile would be archived
        raise StoreError(f"{handle.location}: the session changed while it was being read; nothing was changed")
    plan = _plan(lines, leaves, cwd, handle.location, handle.location)
    result = plan.result
    result.dry_run = dry_run
    if plan.archived is None:
        return result
    header = _header_of(plan.archived[0])
    result.archive = db.locator(header["id"])
    if dry_run:
        return result
    db.new_handle(header).create(plan.archived)
    try:
        handle.replace_lines(lines, plan.pruned)
    except BaseException:
        db.delete(header["id"])
        raise
    return result


def _header_of(line: bytes) -> dict[str, Any]:
    import orjson

    header = orjson.loads(line)
    assert isinstance(header, dict)
    return header
