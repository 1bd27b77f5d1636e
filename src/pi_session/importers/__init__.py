"""Other coding agents' sessions as pi sessions (**beyond pi**):
``pi-session import --from claude-code|codex``.

One module per source format, each a pure conversion from the source's
records to pi entries plus a thin file reader (:mod:`.claude_code`,
:mod:`.codex`); :mod:`.common` holds what they share. :func:`import_agent_sessions`
is the workflow: find the source files, convert each, write every session
into a store through the idempotent, incremental import path (see
:func:`pi_session.importers.common.write_session`).
"""

from __future__ import annotations

import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import CONVERSION_ERRORS, IMPORTED_KEY, LAYOUT, RUN_SETTLE_SECONDS, AgentImportResult, ConvertedSession, DamagedLine, RecordError, pi_session_id, write_session
from ..storage import Durability
from ..stores.capabilities import StoreCapability
from .state import ImportState, SourceSeen, counts_json, stat_key, state_path

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = ["FORMATS", "AgentImportResult", "ConvertedSession", "DamagedLine", "pi_session_id", "default_paths", "source_files", "import_agent_sessions"]

FORMATS = ("claude-code", "codex")
"""The source formats ``--from`` takes."""


def _module(source_format: str) -> Any:
    if source_format == "claude-code":
        from . import claude_code

        return claude_code
    if source_format == "codex":
        from . import codex

        return codex
    raise ValueError(f"unknown source format {source_format!r}: use one of {', '.join(FORMATS)}")


def default_paths(source_format: str) -> list[Path]:
    """Where the source agent keeps its sessions (``claude-code``:
    ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``; ``codex``:
    ``$CODEX_HOME/sessions`` or ``~/.codex/sessions``).

    Raises:
        ValueError: an unknown format.
    """
    paths: list[Path] = _module(source_format).default_paths()
    return paths


def source_files(source_format: str, paths: Sequence[str | os.PathLike[str]] | None = None) -> list[Any]:
    """The source session files under ``paths`` (default :func:`default_paths`),
    in import order.

    Raises:
        ValueError: an unknown format.
    """
    module = _module(source_format)
    files: list[Any] = module.session_files(list(paths) if paths else module.default_paths())
    return files


def import_agent_sessions(
    source_format: str,
    paths: Sequence[str | os.PathLike[str]] | None,
    store: SessionStore,
    *,
    on_file: Callable[[int, int, str], None] | None = None,
    settle_seconds: float = 60.0,
    recheck: bool = False,
) -> Iterator[AgentImportResult]:
    """Import every session of another agent under ``paths`` into ``store``.

    Each source session becomes one pi session whose id is derived from the
    source's (:func:`pi_session_id`), so importing again appends only what
    the source gained since (``updated``), leaves an unchanged one alone
    (``unchanged``) and reports a source that was rewritten as a
    ``conflict`` (nothing written). Damaged source lines, and records of a
    shape the conversion cannot use, are skipped and reported
    (:class:`DamagedLine`, ``FILE:LINE: reason; skipped``, with the file's
    first result); everything else is imported. A file that cannot be read
    or is not a regular file (a FIFO, a device) is a ``failed`` result,
    without a byte read; it is read a chunk at a time, a line at most
    :data:`~.common.MAX_LINE_BYTES` long. The sources are never changed.
    Into a file store, new sessions are written without a sync each and
    synced together (every 256, and before this returns or is closed).

    Args:
        source_format: ``claude-code`` or ``codex``.
        paths: files or directories (searched at any depth); None or empty:
            the format's default directory.
        on_file: called as ``on_file(done, total, path)`` before each file.
        settle_seconds: a file modified less than this long ago may be
            in the middle of a model response (the agent is running): its
            last response is left out until it is complete (the module's
            ``unfinished_tail``), so that the next import appends it whole
            instead of finding half of it stored (a conflict). The records
            at a file's end that made no entry wait longer, until the file
            is :data:`~.common.RUN_SETTLE_SECONDS` old (or this, when
            longer), for the entry the agent writes next (see
            :data:`~.common.LAYOUT`). 0: import everything there is.
        recheck: convert every source file again. By default a file
            unchanged since it was last imported into this store (same
            device, inode, size and modification time: :mod:`.state`, a
            cache in pi-session's cache directory) whose pi sessions the
            store still holds as that import left them (their
            :meth:`~pi_session.stores.SessionStore.session_marks`, read for
            all of them in one pass before the first file) is passed over
            without being opened: its results are those of the last
            import, as ``unchanged`` (same entries by kind, same damaged
            lines).

    A session the store holds in the layout of earlier imports (layout 1
    of :data:`~.common.LAYOUT`: a custom entry per source record) is
    continued in that layout (``older_layout`` of its result), so that
    importing again still only appends.

    Yields:
        One :class:`AgentImportResult` per pi session.

    Raises:
        ValueError: an unknown format.
        pi_session.stores.StoreError: the store cannot be written.
    """
    from ..stores.transfer import ImportResult

    module = _module(source_format)
    files = source_files(source_format, paths)
    state = ImportState(state_path(source_format, store.url))
    can_mark = store.can(StoreCapability.MARKS)
    marks = store.session_marks(state.session_ids()) if state.files and not recheck and can_mark else {}
    durability = Durability.NONE if store.can(StoreCapability.FILES) else Durability.ENTRY
    unsynced: list[str] = []
    try:
        for n, file in enumerate(files):
            if on_file is not None:
                on_file(n, len(files), str(file.path))
            source = str(file.path)
            try:
                st = os.stat(file.path)
                seen = None if recheck else state.unchanged(source, st)
                if seen is not None and _as_left(seen, marks):
                    yield from _replay(seen)
                    continue
                age = time.time() - st.st_mtime
                settle = settle_seconds > 0 and age < settle_seconds
                final = settle_seconds <= 0 or age >= max(settle_seconds, RUN_SETTLE_SECONDS)
                sessions, damaged = module.convert_file(file, settle=settle, final=final)
                older = bool(sessions) and stored_layout(store, sessions[0].session_id, source_format) == 1
                if older:
                    sessions, damaged = module.convert_file(file, settle=settle, final=final, layout=1)
            except OSError as exc:
                state.record(source, None)
                yield AgentImportResult(ImportResult(source, "failed", message=f"{file.path}: {exc.strerror or exc}"))
                continue
            except RecordError as exc:
                state.record(source, None)
                yield AgentImportResult(ImportResult(source, "failed", message=f"{file.path}:{exc.line}: {exc.reason()}; the file was not imported"))
                continue
            items: list[AgentImportResult] = []
            for i, session in enumerate(sessions):
                if not session.entries and i > 0:
                    continue
                try:
                    written = write_session(store, session, durability)
                    if written.status == "imported" and durability is Durability.NONE and written.session_id is not None:
                        unsynced.append(written.session_id)
                except CONVERSION_ERRORS as exc:  # a value no store can hold (e.g. a working directory that is no path)
                    written = ImportResult(source, "failed", session.session_id, message=f"{file.path}: session {session.session_id} cannot be stored: {type(exc).__name__}: {exc}")
                item = AgentImportResult(written, session.counts, damaged if i == 0 else [], session.held_back, session.waiting, older)
                items.append(item)
                yield item
            state.record(source, _seen(st, items, damaged, store))
            if len(unsynced) >= _SYNC_BATCH:
                store.sync_sessions(unsynced)
                unsynced.clear()
    finally:
        try:
            store.sync_sessions(unsynced)
        finally:
            state.save()
    if on_file is not None:
        on_file(len(files), len(files), "")


_LAYOUT_LINES = 1000
"""How many stored lines :func:`stored_layout` reads at most (the first
entries of an imported session tell its layout)."""

_SYNC_BATCH = 256
"""How many sessions a file store's import creates unsynced before it
syncs them all at once (:meth:`~pi_session.stores.SessionStore.sync_sessions`;
a sync each cost more than converting a session)."""

_SETTLED = ("imported", "updated", "unchanged", "skipped")


def stored_layout(store: SessionStore, session_id: str, source_format: str) -> int | None:
    """The layout (:data:`~.common.LAYOUT`) of the imported session
    ``session_id`` in ``store``: 1 when its first entry that tells is a
    ``<format>/...`` custom entry of the earlier layout, 2 when it is an
    entry with the :data:`~.common.IMPORTED_KEY` key or a
    ``<format>/records`` entry; None when the store does not hold the
    session or no entry tells (the layouts write the same lines then).
    Reads the stored lines up to the first that tells."""
    from ..core.jsonio import loads
    from ..stores import SessionNotFoundError

    if not store.exists(session_id):
        return None
    prefix, runs = f"{source_format}/", f"{source_format}/records"
    try:
        for n, line in enumerate(itertools.islice(store.read_lines(session_id), _LAYOUT_LINES)):
            if n == 0 or (IMPORTED_KEY.encode() not in line and b'"custom"' not in line):
                continue
            try:
                entry = loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(entry, dict):
                continue
            if IMPORTED_KEY in entry:
                return LAYOUT
            custom_type = entry.get("customType")
            if entry.get("type") == "custom" and isinstance(custom_type, str) and custom_type.startswith(prefix):
                return LAYOUT if custom_type == runs else 1
    except SessionNotFoundError:  # deleted meanwhile
        return None
    return None


def _as_left(seen: SourceSeen, marks: dict[str, tuple[int, ...]]) -> bool:
    """Whether the store holds every pi session of ``seen`` with the mark
    it had right after that import (none deleted, appended to or
    rewritten since)."""
    for r in seen.results:
        if r["status"] == "skipped":
            continue
        mark = r.get("mark")
        if mark is None or marks.get(r["session_id"]) != tuple(mark):
            return False
    return True


def _seen(st: os.stat_result, items: list[AgentImportResult], damaged: list[DamagedLine], store: SessionStore) -> SourceSeen | None:
    """What the import state keeps of one source file's import, or None
    when the next import must convert it again (a conflict, a failure, a
    response held back, a session the store cannot mark)."""
    if any(i.result.status not in _SETTLED or i.held_back or i.waiting for i in items):
        return None
    stored = [i.result.session_id for i in items if i.result.status != "skipped" and i.result.session_id is not None]
    marks = store.session_marks(stored) if stored and store.can(StoreCapability.MARKS) else {}
    if any(sid not in marks for sid in stored):
        return None
    results = []
    for i in items:
        r = i.result
        item: dict[str, Any] = {"source": r.source, "status": r.status, "session_id": r.session_id, "message": r.message, "counts": counts_json(i.counts)}
        if r.status != "skipped" and r.session_id is not None:
            item["mark"] = list(marks[r.session_id])
        results.append(item)
    return SourceSeen(stat_key(st), results, [(d.path, d.line, d.reason) for d in damaged])


def _replay(seen: SourceSeen) -> Iterator[AgentImportResult]:
    """The results of a source file passed over (see ``recheck``)."""
    from ..stores.transfer import ImportResult, ImportStatus

    for i, r in enumerate(seen.results):
        status: ImportStatus = "skipped" if r["status"] == "skipped" else "unchanged"
        result = ImportResult(r["source"], status, r.get("session_id"), message=r.get("message") or "")
        damaged = [DamagedLine(*d) for d in seen.damaged] if i == 0 else []
        yield AgentImportResult(result, Counter({str(k): int(v) for k, v in r.get("counts", {}).items()}), damaged)
