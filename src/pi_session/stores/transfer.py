"""Moving sessions between files and stores, losslessly: :func:`import_file`
(a pi session file into a store; idempotent by session id; v1/v2 migrated
on the way, damaged lines kept as they are), :func:`copy_session` (store to
store, byte for byte), :func:`export_lines` / :func:`export_file` (a stored
session back as its file, byte-identical to what was imported)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..storage import LineProblem, SessionFileError, iter_lines, read_session_file, rewritten_lines, write_atomic
from .base import SessionStore, StoreError, session_header
from .file import UnnamableSessionError

__all__ = ["ImportResult", "import_file", "import_paths", "copy_session", "export_lines", "export_file", "session_files"]

ImportStatus = Literal["imported", "updated", "unchanged", "conflict", "skipped", "failed"]


@dataclass
class ImportResult:
    """What importing one session did.

    Attributes:
        source: the file (or ``<url>#<id>``) imported from.
        status: ``imported``; ``unchanged`` (the store holds this session
            with the same lines already: nothing to do); ``updated`` (the
            store holds the session's earlier lines, a prefix of the
            source's, as when pi went on writing the file since the last
            import: the new lines were appended, ``appended`` says how
            many); ``conflict`` (the store holds a session with this id
            whose lines differ otherwise: left alone, nothing written); ``skipped`` (an empty file: no session
            in it); ``failed`` (not a session file, unreadable: ``message``).
        session_id: the session's id (None when not known).
        problems: the damaged lines of the file (stored as they are).
        migrated_from: the version a v1/v2 file was migrated from.
        message: one line for ``skipped``/``failed``/``conflict``.
    """

    source: str
    status: ImportStatus
    session_id: str | None = None
    problems: list[LineProblem] = field(default_factory=list)
    migrated_from: int | None = None
    message: str = ""
    appended: int = 0


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
    would); other differences are a ``conflict``, left alone.

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
    _store_lines(store, lines, p.name, result)
    return result


def _store_lines(store: SessionStore, lines: list[bytes], file_name: str | None, result: ImportResult) -> None:
    """Create the session through its new handle unless the store has it
    (then compare)."""
    session_id = result.session_id
    assert session_id is not None
    if store.exists(session_id):
        created = False
    else:
        header = session_header(lines)
        if header is None:
            raise StoreError(f"{store.url}: cannot create a session: the first record is not a session header with a string id")
        try:
            store.new_handle(header, file_name=file_name).create(lines)
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
        stored = b"".join(store.read_lines(session_id))
        data = b"".join(lines)
        if stored == data:
            result.status = "unchanged"
        elif _append_rest(store, session_id, stored, lines, result):
            result.status = "updated"
        else:
            result.status = "conflict"
            result.message = (
                f"{result.source}: {store.url} holds a session with id {session_id} whose lines differ; left as it is"
            )


class _Grown(Exception):
    """Another writer appended to the stored session during the update."""


def _append_rest(store: SessionStore, session_id: str, stored: bytes, lines: list[bytes], result: ImportResult) -> bool:
    """When ``stored`` is a whole-line prefix of ``lines``, append the rest
    to the stored session (checked against the stored size: if anybody
    appended in between, nothing is written) and return True."""
    if not stored.endswith(b"\n"):
        return False  # an unterminated last line that has grown since: not a plain continuation
    size = 0
    for i, line in enumerate(lines):
        if size == len(stored):
            rest = lines[i:]
            break
        size += len(line)
    else:
        return False
    if b"".join(lines[:i]) != stored:
        return False

    def grown(_foreign: list[bytes]) -> list[bytes] | None:
        raise _Grown

    try:
        store.handle(session_id).append(rest, expected_size=len(stored), on_grown=grown)
    except _Grown:
        return False
    result.appended = len(rest)
    return True


def copy_session(source: SessionStore, target: SessionStore, session_id: str) -> ImportResult:
    """Copy one session from store to store, byte for byte (idempotent as
    :func:`import_file`)."""
    lines = list(source.read_lines(session_id))
    result = ImportResult(source.locator(session_id), "imported", session_id)
    _store_lines(target, lines, source.file_name(session_id), result)
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
