"""Moving sessions between files and stores, losslessly: :func:`import_file`
(a pi session file into a store; idempotent by session id; v1/v2 migrated
on the way, damaged lines kept as they are), :func:`copy_session` (store to
store, byte for byte), :func:`export_lines` / :func:`export_file` (a stored
session back as its file, byte-identical to what was imported)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..storage import Durability, LineProblem, SessionFileError, iter_lines, parse_line, read_session_file, rewritten_lines, write_atomic
from .base import SessionStore, StoreError, session_header
from .file import UnnamableSessionError
from .additions import continue_after_additions, entry_ids, store_addition
from .scrubbed import same_entry

__all__ = ["ImportResult", "import_file", "store_lines", "import_paths", "copy_session", "export_lines", "export_file", "session_files"]

ImportStatus = Literal["imported", "updated", "unchanged", "conflict", "skipped", "failed"]


@dataclass
class ImportResult:
    """What importing one session did.

    Attributes:
        source: the file (or ``<url>#<id>``) imported from.
        status: ``imported``; ``unchanged`` (the store holds this session
            with the same entries already, perhaps put there by a
            concurrent importer: nothing to do); ``updated`` (the store
            holds the session's earlier lines, the source's first ones, as
            when pi went on writing the file since the last import: the new
            lines were appended, ``appended`` says how many); ``conflict``
            (the store holds a session with this id whose entries differ
            otherwise, beyond entries added in the store since, such as
            labels, names, context edits and compactions,
            :mod:`.additions`: left alone, nothing written); ``skipped`` (an empty
            file: no session in it); ``failed`` (not a session file,
            unreadable: ``message``). Compared by entries: record lines
            byte for byte, lines holding no record (blank, damaged, a torn
            last line) passed over.
        session_id: the session's id (None when not known).
        problems: the damaged lines of the file (stored as they are).
        migrated_from: the version a v1/v2 file was migrated from.
        message: one line for ``skipped``/``failed``/``conflict``.
        blobs: payload blobs (``slim``'s) copied into the store with it.
        missing_blobs: blobs its notes name that could not be copied
            (missing or damaged where the session came from), sha256 hex.
    """

    source: str
    status: ImportStatus
    session_id: str | None = None
    problems: list[LineProblem] = field(default_factory=list)
    migrated_from: int | None = None
    message: str = ""
    appended: int = 0
    blobs: int = 0
    missing_blobs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The result as ``pi-session import --json`` prints it: ``source``,
        ``status``, ``id``, ``migratedFrom``, ``appended`` (only when
        ``updated``), ``problems`` (each :meth:`LineProblem.to_json`),
        ``message``, ``blobs`` and ``missingBlobs`` (only when there are)."""
        return {
            "source": self.source,
            "status": self.status,
            "id": self.session_id,
            "migratedFrom": self.migrated_from,
            **({"appended": self.appended} if self.status == "updated" else {}),
            "problems": [p.to_json() for p in self.problems],
            **({"message": self.message} if self.message else {}),
            **({"blobs": self.blobs} if self.blobs else {}),
            **({"missingBlobs": self.missing_blobs} if self.missing_blobs else {}),
        }


def import_file(store: SessionStore, path: str | os.PathLike[str]) -> ImportResult:
    """Import one session file into ``store``.

    The file is read as every reader reads it
    (:func:`pi_session.storage.read_session_file`): its lines are stored
    byte for byte, damaged ones included (reported in ``problems``). A v1/v2
    file is migrated first: the stored lines are those a migration rewrite
    writes (:func:`pi_session.storage.rewritten_lines`). The original file
    is never changed.

    Idempotent: a session id the store holds already is not written again
    (``unchanged``), except for the lines a file gained since it was
    imported (``updated``: they are appended, as an append of the session
    would); other differences are a ``conflict``, left alone. Safe under
    concurrency: importers of the same files at once find each other's
    sessions (a create that finds the session there re-reads and
    compares) and lines (checked under the store's append lock: lines
    another importer appended first are not written again). A torn last
    line (cut short, no newline) is stored as it is and is no entry: once
    the file's next writer repaired it (pi ends it with a newline,
    pi-session moves it aside) and went on, the new entries are appended.

    Returns:
        An :class:`ImportResult`; never raises for a bad file.
    """
    p = Path(path)
    source = str(p)
    try:
        sf = read_session_file(p)
    except SessionFileError as exc:
        return ImportResult(source, "failed", message=str(exc))
    if sf.header is None:
        return ImportResult(source, "skipped", problems=list(sf.problems), message=f"{p}: empty file, no session in it")
    session_id = str(sf.header["id"])
    try:
        if sf.migrated_from is not None:
            lines = list(rewritten_lines(sf))
        else:
            lines = [raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(p)]
    except OSError as exc:
        return ImportResult(source, "failed", session_id, message=f"{p}: {exc.strerror or exc}")
    result = ImportResult(source, "imported", session_id, list(sf.problems), sf.migrated_from)
    store_lines(store, lines, p.name, result)
    return result


def store_lines(store: SessionStore, lines: list[bytes], file_name: str | None, result: ImportResult, durability: Durability = Durability.ENTRY) -> None:
    """Write one session's ``lines`` into ``store`` the idempotent,
    race-safe way :func:`import_file` does: create the session through its
    new handle unless the store has it; else compare by entries and append
    only the lines the store lacks (``updated``), or leave it alone
    (``unchanged``, ``conflict``). ``result`` (its ``session_id`` set) is
    updated in place: ``status``, ``appended``, ``message``. Used by the
    importers of other agents' sessions too (:mod:`pi_session.importers`).
    ``durability``: how a new session is created (``NONE``: no sync; the
    caller syncs many at once with :meth:`SessionStore.sync_sessions`).

    Raises:
        StoreError: the store cannot be written, or the first line is not a
            session header.
    """
    session_id = result.session_id
    assert session_id is not None
    if store.exists(session_id):
        created = False
    else:
        header = session_header(lines)
        if header is None:
            raise StoreError(f"{store.url}: cannot create a session: the first record is not a session header with a string id")
        try:
            store.new_handle(header, file_name=file_name).create(lines, durability=durability)
            created = True
        except FileExistsError as exc:  # another importer was first, or a file name is taken (SessionExistsError)
            if not store.exists(session_id):
                result.status = "failed"
                result.message = f"{result.source}: {exc}"
                return
            created = False
        except UnnamableSessionError as exc:
            result.status = "failed"
            result.message = f"{result.source}: {exc}"
            return
    if not created:
        _continue_stored(store, session_id, lines, result)


class _Diverged(Exception):
    """Another writer appended lines to the stored session that do not
    continue the source."""


def _holds_no_record(line: bytes) -> bool:
    """Whether a stored or source line holds no record (blank, damaged, a
    torn fragment): it is no entry."""
    return not parse_line(line[:-1] if line.endswith(b"\n") else line, 1).ok


def _continuation(stored: list[bytes], source: list[bytes], source_ids: Callable[[], set[str]]) -> int | None:
    """Where ``source`` goes on from what the store holds: the index of the
    first source line the store lacks, when the stored lines are the
    source's first lines, with entries added in the store since
    (:mod:`.additions`) among them; else None (a real divergence).

    Compared by entries: record lines must be equal byte for byte, or be
    the source's line as ``scrub`` left it (:func:`.scrubbed.same_entry`:
    secrets replaced by redaction marks), or re-parented onto additions
    (:func:`.additions.continue_after_additions`); additions
    (:func:`.additions.store_addition`; ``source_ids()``: the ids of the
    source's lines, asked for only when needed) and lines holding no
    record (blank, damaged, a torn last line cut short) on either side are
    passed over; a stored unterminated last line equals the source line
    that is it plus its newline (pi ended the torn line with a newline when
    it reopened the file)."""
    i = j = 0
    last = len(stored) - 1
    added: dict[str, str | None] = {}
    while i < len(stored):
        line = stored[i]
        if j < len(source) and (line == source[j] or (i == last and not line.endswith(b"\n") and line + b"\n" == source[j])):
            i += 1
            j += 1
        elif _holds_no_record(line):
            i += 1
        elif j < len(source) and _holds_no_record(source[j]):
            j += 1
        elif j < len(source) and same_entry(line, source[j], added):
            i += 1
            j += 1
        elif (addition := store_addition(line, source_ids())) is not None:
            added[addition[0]] = addition[1]
            i += 1
        else:
            return None
    return j


def _continue_stored(store: SessionStore, session_id: str, lines: list[bytes], result: ImportResult) -> None:
    """The store holds the session already (imported before, or just now
    by a concurrent importer): re-read it and compare by entries
    (:func:`_continuation`). Nothing missing: ``unchanged``. The stored
    lines are the source's first ones (a scrub may have redacted them;
    labels, names, context edits, compactions and other entries may have
    been added among them, :mod:`.additions`: the lines appended then
    continue from the last addition on the source's path,
    :func:`.additions.continue_after_additions`): append the rest
    (``updated``),
    checked under the store's append lock against what other writers
    appended since the read: lines that continue the source (a concurrent
    importer of the same file) are not written again; others are a
    ``conflict`` and nothing is written."""
    stored = list(store.read_lines(session_id))
    known: list[set[str]] = []

    def source_ids() -> set[str]:
        if not known:
            known.append(entry_ids(lines))
        return known[0]

    at = _continuation(stored, lines, source_ids) if stored != lines else len(lines)
    if at == len(lines):
        result.status = "unchanged"
        return
    if at is None:
        _conflict(store, session_id, result)
        return
    # Positions from the last complete stored line: an unterminated last
    # line is repaired by the store's append (a newline added, or a torn
    # fragment moved aside); whatever it became comes back as a foreign line.
    complete = stored[:-1] if not stored[-1].endswith(b"\n") else stored
    expected = sum(len(line) for line in complete)
    start = _continuation(complete, lines, source_ids)
    assert start is not None  # the whole stored session continues: so do its complete lines
    written = continue_after_additions(complete, lines[start:], source_ids)

    def grown(foreign: list[bytes]) -> list[bytes]:
        nonlocal written
        at = _continuation(complete + foreign, lines, source_ids)
        if at is None:
            raise _Diverged
        written = continue_after_additions(complete + foreign, lines[at:], source_ids)
        return written

    try:
        store.handle(session_id).append(written, expected_size=expected, on_grown=grown)
    except _Diverged:
        _conflict(store, session_id, result)
        return
    result.appended = len(written)
    result.status = "updated" if written else "unchanged"


def _conflict(store: SessionStore, session_id: str, result: ImportResult) -> None:
    result.status = "conflict"
    result.message = f"{result.source}: {store.url} holds a session with id {session_id} whose lines differ; left as it is"


def copy_session(source: SessionStore, target: SessionStore, session_id: str) -> ImportResult:
    """Copy one session from store to store, byte for byte (idempotent as
    :func:`import_file`)."""
    lines = list(source.read_lines(session_id))
    result = ImportResult(source.locator(session_id), "imported", session_id)
    store_lines(target, lines, source.file_name(session_id), result)
    return result


def session_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The session files named by ``paths``: a file as it is, a directory's
    ``*.jsonl`` files at any depth (sorted; hidden files and the listing
    index skipped). Symbolic links to directories are followed, each
    directory walked once (so a link to ``.`` or to a parent adds nothing)."""
    seen: set[tuple[int, int]] = set()
    for item in paths:
        p = Path(item)
        if p.is_dir():
            for root, dirs, names in os.walk(p, followlinks=True):
                try:
                    st = os.stat(root)
                except OSError:
                    dirs.clear()
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    dirs.clear()
                    continue
                seen.add((st.st_dev, st.st_ino))
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(".jsonl") and not name.startswith("."):
                        yield Path(root) / name
        else:
            yield p


def import_paths(store: SessionStore, paths: Iterable[str | os.PathLike[str]]) -> Iterator[ImportResult]:
    """:func:`import_file` for every file of :func:`session_files`."""
    for path in session_files(paths):
        yield import_file(store, path)


def export_lines(store: SessionStore, session_id: str) -> Iterator[bytes]:
    """A stored session's file content, line by line (byte-identical to an
    imported undamaged file)."""
    return store.read_lines(session_id)


def export_file(store: SessionStore, session_id: str, output: str | os.PathLike[str]) -> Path:
    """Write a stored session to ``output`` as its JSONL file, atomically
    (temp file, fsync, rename; mode 0600), replacing ``output``.

    Returns:
        The file written.
    """
    target = Path(output)
    write_atomic(target, export_lines(store, session_id))
    return target
