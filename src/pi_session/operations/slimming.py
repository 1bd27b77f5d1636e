"""Moving bulky payloads out of a session and back (``pi-session slim`` and
``restore``; beyond pi): :func:`slim_session`, :func:`restore_session`.

A payload (an image block, a tool output, bash output or tool argument over
a size; :func:`pi_session.session.lean.find_payloads`) is written to a
content-addressed blob store and replaced in the line by a short note
naming its blob (:mod:`pi_session.session.lean` describes the note). The file stays
a session pi 1.6 opens with the same tree; by default only entries outside
the model context at the leaf are slimmed, so the context pi builds there
does not change either.

Blobs are files ``<dir>/.blobs/<2 hex>/<62 hex>`` (the sha256 of the bytes
they hold, which are the exact bytes the note replaced), where ``<dir>`` is
the sessions root: pi's sessions directory (or a file store's root) for a
session in one of its project directories, else the session file's own
directory (:func:`~.blobs.blob_dir`). The blob directory must be private to
the session's owner, and a blob is read only as a regular file
(:mod:`.blobs`). A blob is written (fsync'd) before
the session is rewritten, and never deleted by ``restore``: another session
may share it.

In a database store the blobs are rows of its ``pi_blobs`` table
(committed before the session changes) and the session is rewritten in one
transaction that checks it did not change meanwhile.

A session file is rewritten as ``repair`` rewrites one
(:func:`pi_session.storage.atomic_rewrite`: temp file, fsync, rename under
the append lock; owner, group and mode kept; refused if the file changed
since it was read) and, unless told not to, the original is kept as
``<file>.slim.bak`` (a hard link: its bytes are freed only once it is
deleted). Before anything is written, every changed line is checked to
come back byte for byte from its notes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..session.lean import (
    DEFAULT_OUTPUTS_OVER,
    NOTE_PATTERN,
    Payload,
    block_note,
    find_payloads,
    note_hashes,
    note_positions,
    string_note,
    value_spans,
)
from ..entries.records import StrPath
from ..stores.capabilities import StoreCapability
from .blobs import BlobStore, blob_dir
from .errors import OperationError
from .opening import open_for_reading

__all__ = [
    "DEFAULT_OUTPUTS_OVER",
    "BlobStore",
    "RestoreResult",
    "SlimResult",
    "blob_dir",
    "context_entry_ids",
    "migrated_ids",
    "restore_lines",
    "restore_session",
    "slim_lines",
    "slim_session",
    "slimmed_blobs",
]



@dataclass
class SlimResult:
    """What :func:`slim_session` did (or would do, ``dry_run``).

    Attributes:
        session: the file.
        dry_run: nothing was written.
        before, after: the file's bytes before and after.
        payloads: how many payloads were moved.
        lines: how many lines changed.
        blobs: the blob directory (a database store: its URL and table).
        new_blobs: blobs written by this run (files: not already there).
        backup: ``<file>.slim.bak``, or None.
        skipped: line numbers left alone (not JSON, or quoting a note).
    """

    session: str
    dry_run: bool
    before: int = 0
    after: int = 0
    payloads: int = 0
    lines: int = 0
    blobs: str | None = None
    new_blobs: int = 0
    backup: Path | None = None
    skipped: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "session": self.session, "dryRun": self.dry_run, "bytesBefore": self.before, "bytesAfter": self.after,
            "payloads": self.payloads, "lines": self.lines, "blobs": self.blobs,
            "newBlobs": self.new_blobs, "backup": str(self.backup) if self.backup else None, "skippedLines": self.skipped,
        }


@dataclass
class RestoreResult:
    """What :func:`restore_session` did.

    Attributes:
        session: the file.
        dry_run: nothing was written.
        before, after: the file's bytes before and after.
        payloads: how many notes were replaced by their blobs.
        lines: how many lines changed.
        backup: ``<file>.restore.bak``, or None.
    """

    session: str
    dry_run: bool
    before: int = 0
    after: int = 0
    payloads: int = 0
    lines: int = 0
    backup: Path | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "session": self.session, "dryRun": self.dry_run, "bytesBefore": self.before, "bytesAfter": self.after,
            "payloads": self.payloads, "lines": self.lines, "backup": str(self.backup) if self.backup else None,
        }


def _note_for(payload: Payload, data: bytes, digest: str) -> bytes | None:
    """The note ``slim`` writes for the blob ``data`` at ``payload``'s
    position, or None when the blob is not what it moves there."""
    import orjson

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if payload.kind == "image":
        if not isinstance(value, dict) or value.get("type") != "image":
            return None
        mime = value.get("mimeType")
        return block_note(mime if isinstance(mime, str) else "image", len(data), digest)
    return string_note(payload.label, len(data), digest) if isinstance(value, str) else None


def _restore_line(raw: bytes, fetch: Any, only: Collection[str] | None = None) -> tuple[bytes, int]:
    """``raw`` with the notes ``slim`` wrote replaced by their blobs
    (``fetch(sha256 hex) -> bytes``) and how many: a note counts only as
    the whole value at a payload position (:func:`note_positions`) and
    exactly as slim writes it for that blob; any other (a quoted note)
    stays. ``only``: restore just the notes naming these digests."""
    import orjson

    if b"pi-session slim: " not in raw:
        return raw, 0
    matches = list(NOTE_PATTERN.finditer(raw))
    if not matches:
        return raw, 0
    try:
        positions = note_positions(orjson.loads(raw))
        spans = value_spans(raw, positions)
    except (orjson.JSONDecodeError, ValueError, RecursionError):
        return raw, 0
    at_span = {span: positions[path] for path, span in spans.items()}
    pieces: list[bytes] = []
    at = 0
    for m in matches:
        payload = at_span.get((m.start(), m.end()))
        if payload is None or (m.group(2) is not None) != (payload.kind == "image"):
            continue
        digest = (m.group(2) or m.group(4)).decode()
        if only is not None and digest not in only:
            continue
        data = bytes(fetch(digest))
        if _note_for(payload, data, digest) != m.group():
            continue
        pieces += [raw[at : m.start()], data]
        at = m.end()
    if not pieces:
        return raw, 0
    pieces.append(raw[at:])
    return b"".join(pieces), len(pieces) // 2


def slim_lines(
    lines: list[bytes],
    *,
    context_ids: set[str] | None,
    images: bool,
    outputs_over: int | None,
    put: Any,
) -> tuple[list[bytes], SlimResult]:
    """The slimmed lines of a session (each ending in ``\\n`` as given).

    Args:
        lines: the session's raw lines.
        context_ids: entries to leave alone (those in the model context),
            or None to slim every entry.
        images, outputs_over: which payloads (:func:`pi_session.session.lean.find_payloads`).
        put: ``put(bytes) -> sha256 hex``, storing a blob.

    Returns:
        The new lines and a :class:`SlimResult` (``payloads``, ``lines``,
        ``skipped`` filled).

    Raises:
        OperationError: a slimmed line does not come back byte for byte
            (an internal error; nothing is written).
    """
    import orjson

    result = SlimResult("", False)
    out: list[bytes] = []
    reader_ids: dict[int, str] | None = None
    for n, line in enumerate(lines, 1):
        raw = line[:-1] if line.endswith(b"\n") else line
        worth_a_look = (images and b'"image"' in raw) or (outputs_over is not None and len(raw) > outputs_over)
        if not raw.startswith(b"{") or not worth_a_look:
            out.append(line)
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        if context_ids is not None:
            entry_id = record.get("id")
            if not isinstance(entry_id, str):  # a v1 entry: the id the reader gives it on migration
                if reader_ids is None:
                    reader_ids = migrated_ids(lines)
                entry_id = reader_ids.get(n)
            if entry_id in context_ids:
                out.append(line)
                continue
        payloads = find_payloads(record, images=images, outputs_over=outputs_over)
        if not payloads:
            out.append(line)
            continue
        if note_hashes(raw):  # the line quotes a note: restore could not tell it apart
            result.skipped.append(n)
            out.append(line)
            continue
        try:
            spans = value_spans(raw, [p.path for p in payloads])
        except (ValueError, RecursionError):
            result.skipped.append(n)
            out.append(line)
            continue
        chosen = sorted((spans[p.path], p) for p in payloads if p.path in spans)
        # a payload inside another (never with these paths) would overlap: keep the outer one
        pieces: list[bytes] = []
        blobs: dict[str, bytes] = {}
        at = 0
        for (start, end), p in chosen:
            if start < at:
                continue
            data = raw[start:end]
            digest = hashlib.sha256(data).hexdigest()
            note = block_note(p.label, end - start, digest) if p.kind == "image" else string_note(p.label, end - start, digest)
            if len(note) >= end - start:
                continue  # a note would not be smaller
            blobs[digest] = data
            pieces += [raw[at:start], note]
            at = end
        if not pieces:
            out.append(line)
            continue
        pieces.append(raw[at:])
        new = b"".join(pieces)
        if _restore_line(new, blobs.__getitem__)[0] != raw:
            raise OperationError(f"line {n}: the slimmed line would not come back byte for byte; nothing was written")
        for data in blobs.values():
            put(data)
        result.payloads += len(pieces) // 2
        result.lines += 1
        out.append(new + (b"\n" if line.endswith(b"\n") else b""))
    return out, result


def migrated_ids(lines: list[bytes]) -> dict[int, str]:
    """The id of the entry on each line of a session (line number, from
    1 -> id) as reading the session gives them: a v1 entry, which has no id
    in the file, gets the one the in-memory migration assigns it
    (:func:`pi_session.storage.versions.migrate_session_entries`, stable).

    Args:
        lines: the session's raw lines, each with its newline.

    Raises:
        pi_session.storage.SessionFileError: not a session (no header).
    """
    from ..storage import read_session_lines

    sf = read_session_lines(lines)
    return {n: r["id"] for r, n in zip(sf.records, sf.record_lines) if isinstance(r.get("id"), str)}


def restore_lines(lines: list[bytes], get: Any, *, only: Collection[str] | None = None) -> tuple[list[bytes], int, int]:
    """``lines`` with every note replaced by its blob's bytes (``get(sha256
    hex) -> bytes``; ``only``: just the notes naming these digests).
    Returns the lines, the notes replaced and the lines changed."""
    out: list[bytes] = []
    notes = changed = 0
    for line in lines:
        new, count = _restore_line(line, get, only)
        if count:
            notes += count
            changed += 1
        out.append(new)
    return out, notes, changed


def _read(path: Path) -> tuple[os.stat_result, list[bytes]]:
    from ..storage import iter_lines

    st = os.stat(path)
    return st, [raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path)]


def context_entry_ids(location: StrPath, store: Any = None) -> set[str]:
    """The ids of the entries in the model context at the leaf of a session
    (pi 1.6's projection: after the last compaction, context edits
    applied): a session file, or with a database ``store`` a session id.

    Raises:
        OperationError: the session cannot be opened.
    """
    manager = open_for_reading(os.fspath(location), store=store) if store is not None else open_for_reading(location)
    ids: set[str] = set()
    for item in manager.build_session_projection()["entries"]:
        eid = item["sourceEntry"].get("id")
        if isinstance(eid, str):
            ids.add(eid)
    return ids


def _database(store: Any) -> Any:
    return store if store is not None and not store.can(StoreCapability.FILES) else None


def slim_session(
    location: StrPath,
    *,
    images: bool = True,
    outputs_over: int | None = DEFAULT_OUTPUTS_OVER,
    outside_context: bool = True,
    dry_run: bool = False,
    backup: bool = True,
    store: Any = None,
) -> SlimResult:
    """Move the payloads of a session file into its blob store (see the
    module docstring).

    Args:
        location: the session file, or with a database ``store`` its id (prefix).
        images: move image blocks.
        outputs_over: move tool outputs, bash outputs and tool arguments
            longer than this many characters; None: none.
        outside_context: only entries outside the model context at the leaf
            (the context pi builds there is unchanged); False: every entry
            (the model then sees the notes instead).
        dry_run: count what would move; write nothing.
        backup: keep the original as ``<file>.slim.bak`` (files; a database
            session is rewritten in one transaction, no backup).
        store: the :class:`~pi_session.stores.SessionStore`, or None (a
            file). A database store keeps its blobs in its ``pi_blobs`` table.

    Returns:
        A :class:`SlimResult`.

    Raises:
        OperationError: not a session, or a slimmed line would not come
            back exactly (nothing written).
        pi_session.stores.StoreError: a database session changed
            meanwhile, or the store fails (nothing changed).
        pi_session.storage.SessionFileError: the file changed while it was
            rewritten (nothing changed).
        OSError: on I/O failure (the session is then unchanged).
    """
    from ..storage import atomic_rewrite

    db = _database(store)
    if db is not None:
        return _slim_db(db, str(location), images, outputs_over, outside_context, dry_run)
    from ..storage import SessionFileError

    path = Path(os.path.realpath(location))
    seen = os.stat(path)
    if outside_context:
        context_ids: set[str] | None = context_entry_ids(path)
    else:
        from ..stores.listing import read_session_header

        context_ids = None
        if read_session_header(path) is None:
            raise OperationError(f"{path}: not a pi session file (no session header)")
    st, lines = _read(path)
    if (st.st_size, st.st_mtime_ns) != (seen.st_size, seen.st_mtime_ns):
        # the context was read from another content: an entry appended meanwhile may be in it
        raise SessionFileError(path, "the file changed while it was being read; nothing was changed")
    blobs = BlobStore(blob_dir(path), owner=st, session=path)
    blobs.check()
    pending: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        pending[digest] = data
        return digest

    new, result = slim_lines(lines, context_ids=context_ids, images=images, outputs_over=outputs_over, put=put)
    result.session, result.dry_run, result.blobs = str(path), dry_run, str(blobs.root)
    result.before = st.st_size
    result.after = sum(map(len, new))
    if dry_run or not result.lines:
        if not result.lines:
            result.after = result.before
        return result
    for data in pending.values():
        result.new_blobs += blobs.store(data)[1]
    result.backup = atomic_rewrite(
        path, new, backup_tag="slim" if backup else None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns
    )
    return result


def restore_session(location: StrPath, *, dry_run: bool = False, backup: bool = False, store: Any = None) -> RestoreResult:
    """Put every payload of a slimmed session file back from its blobs,
    byte for byte (the file is then what it was before ``slim``, plus what
    was appended since). Every blob is read and checked before anything is
    written.

    Args:
        location: the session file, or with a database ``store`` its id (prefix).
        dry_run: count the notes; write nothing.
        backup: keep the slimmed file as ``<file>.restore.bak`` (files).
        store: the :class:`~pi_session.stores.SessionStore`, or None (a file).

    Returns:
        A :class:`RestoreResult`.

    Raises:
        OperationError: a blob is missing or damaged (nothing written).
        pi_session.stores.StoreError: a database session changed
            meanwhile, or the store fails (nothing changed).
        pi_session.storage.SessionFileError: the file changed while it was
            rewritten (nothing changed).
        OSError: on I/O failure (the session is then unchanged).
    """
    from ..storage import atomic_rewrite

    db = _database(store)
    cache: dict[str, bytes] = {}
    if db is not None:
        session_id = db.resolve(str(location))
        handle = db.handle(session_id)
        old = list(db.read_lines(session_id))

        def get_row(digest: str) -> bytes:
            if digest not in cache:
                data = db.get_blob(digest)
                if data is None:
                    raise OperationError(f"{handle.location}: blob sha256:{digest} is not in the store")
                if hashlib.sha256(data).hexdigest() != digest:
                    raise OperationError(f"{handle.location}: blob sha256:{digest} is damaged (its bytes do not have that hash)")
                cache[digest] = data
            return cache[digest]

        new, notes, changed = restore_lines(old, get_row)
        result = RestoreResult(handle.location, dry_run, sum(map(len, old)), sum(map(len, new)), notes, changed)
        if changed and not dry_run:
            handle.replace_lines(old, new)
        return result
    path = Path(os.path.realpath(location))
    st, lines = _read(path)
    blobs = BlobStore(blob_dir(path), owner=st, session=path)

    def get(digest: str) -> bytes:
        if digest not in cache:
            cache[digest] = blobs.get(digest)
        return cache[digest]

    new, notes, changed = restore_lines(lines, get)
    result = RestoreResult(str(path), dry_run, st.st_size, sum(map(len, new)), notes, changed)
    if changed and not dry_run:
        result.backup = atomic_rewrite(
            path, new, backup_tag="restore" if backup else None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns
        )
    return result


def _slim_db(db: Any, session: str, images: bool, outputs_over: int | None, outside_context: bool, dry_run: bool) -> SlimResult:
    """:func:`slim_session` of a database session: blobs go to the store's
    ``pi_blobs`` table (committed first), then the session's lines are
    replaced in one transaction that checks they did not change
    (:meth:`~pi_session.stores.sql.SQLHandle.replace_lines`)."""
    from ..stores import StoreError

    session_id = db.resolve(session)
    handle = db.handle(session_id)
    old = list(db.read_lines(session_id))
    context_ids = context_entry_ids(session_id, db) if outside_context else None
    if outside_context and list(db.read_lines(session_id)) != old:
        # the context was read from another content: an entry appended meanwhile may be in it
        raise StoreError(f"{handle.location}: the session changed while it was being read; nothing was changed")
    pending: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        pending[digest] = data
        return digest

    new, result = slim_lines(old, context_ids=context_ids, images=images, outputs_over=outputs_over, put=put)
    result.session, result.dry_run, result.blobs = handle.location, dry_run, f"{db.url} (pi_blobs)"
    result.before = sum(map(len, old))
    result.after = sum(map(len, new)) if result.lines else result.before
    if dry_run or not result.lines:
        return result
    result.new_blobs = len(pending)
    db.put_blobs(pending)
    handle.replace_lines(old, new)
    return result


def slimmed_blobs(path: StrPath) -> list[tuple[int, str, Path]]:
    """The blobs a session file's notes name: ``(line, sha256 hex, blob
    path)`` in file order (what the secrets scan reads too)."""
    from ..storage import iter_lines

    root = blob_dir(path)
    return [(n, digest, root / digest[:2] / digest[2:]) for n, raw, _nl in iter_lines(path) for digest in note_hashes(raw)]
