"""Removing secrets from a session (``pi-session scrub``): :func:`scrub_session`
in two modes (the secret detection is :mod:`pi_session.secrets`).

- ``edit`` (pi 1.6's own way): append ``context_edit`` entries whose
  replacement is the target's model-visible content with each secret
  replaced by ``[REDACTED:<kind>]``, for every user, assistant, tool
  result and custom message of the model context at the leaf that holds
  one. A bash execution holding one (``!cat .env``) is left out of the
  context whole (an edit with a null replacement): pi 1.6 never replaces
  a bash execution's output by an edit's content, but it leaves out any
  message an omission names (pi's own writer only writes edits of the
  messages above; its context builder applies these too). History is
  untouched; works on every store. What an edit would only hide by
  dropping far more than the secret (compaction and branch summaries,
  system prompts) and text beside an edited message's content stay in the
  context: they are reported in :attr:`ScrubResult.not_hidden` (the CLI
  then exits 1).
- ``rewrite``: every record with a secret is written again with each secret
  replaced by ``[REDACTED:<kind>]`` (every text field, earlier context
  edits' replacements and compaction summaries included; ids, parents and
  timestamps unchanged), lines without one byte for byte. A file is
  replaced atomically (:func:`pi_session.storage.atomic_rewrite`: temp
  file, fsync, rename; owner, group and mode kept); a database session is
  rewritten in one transaction. Caches are purged
  (:func:`pi_session.secrets.purge_caches`; a cache that cannot be cleaned
  is a note of the result, not an error: the session is rewritten by
  then). The session file's side files holding secrets (``<file>.torn-*``,
  ``<file>.rejected-*``, backups such as ``<file>.v1.bak``) are rewritten
  the same way and named in the result. No backup unless asked (a backup
  keeps the secret): then a copy of the old content, mode 0600.

Both are idempotent: a scrubbed session has nothing left to scrub.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..entries.records import StrPath
from ..render.terminal import plural
from ..secrets import AllowList, Scanner, SecretHit, purge_caches
from ..secrets.finding import iter_hits, side_files
from ..secrets.scrub import Mode, ScrubResult, redact_value, redacted_lines
from ..stores.capabilities import StoreCapability
from ..entries.questions import BASH_EXECUTION, BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, SYSTEM
from .errors import OperationError
from .opening import open_for_reading, open_for_writing, save

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = ["all_sessions", "find_in_session", "scrub_session"]


def scrub_session(
    location: StrPath,
    *,
    mode: Mode,
    store: SessionStore | None = None,
    dry_run: bool = False,
    backup: bool = False,
    allow: AllowList | None = None,
    backup_dir: StrPath | None = None,
) -> ScrubResult:
    """Scrub the secrets of one session (see the module docstring).

    Args:
        location: a session file, or (with a database ``store``) a session id.
        mode: ``"edit"`` or ``"rewrite"``.
        store: the :class:`~pi_session.stores.SessionStore`, or None (a file).
        dry_run: find and plan only.
        backup: rewrite: keep the old content as a backup (mode 0600):
            ``<file>.secrets.bak`` beside a file, ``<id>.secrets.bak.jsonl``
            in ``backup_dir`` (default: the current directory) for a
            database session.
        allow: known false positives.

    Returns:
        A :class:`ScrubResult`.

    Raises:
        pi_session.storage.SessionFileError: the file changed while it was
            rewritten (nothing changed).
        pi_session.stores.StoreError: the same, for a database session, or
            the store fails.
        pi_session.operations.OperationError: edit: the session cannot be
            opened or written; a blob its notes name, or the blob
            directory, is refused (:mod:`.blobs`; nothing changed).
        OSError: on I/O failure (the session is then unchanged).
    """
    db = store if store is not None and not store.can(StoreCapability.FILES) else None
    if mode == "edit":
        return _scrub_edit(location, db, dry_run, allow)
    if mode != "rewrite":
        raise ValueError(f"unknown scrub mode {mode!r} (edit or rewrite)")
    if db is not None:
        return _rewrite_db(db, str(location), dry_run, backup, allow, backup_dir)
    return _rewrite_file(Path(location), dry_run, backup, allow)


_BESIDE_CONTEXT = ("imported",)
"""Keys of an entry in the context that the model never sees: what an
import of another agent's session keeps beside the message
(``pi_session.importers.common.IMPORTED_KEY``)."""


def _beside_context(record: dict[str, Any]) -> dict[str, Any]:
    """The part of an entry in the context that is not sent to the model
    (its :data:`_BESIDE_CONTEXT` keys), for counting the secrets a context
    edit leaves in the file."""
    return {k: record[k] for k in _BESIDE_CONTEXT if k in record}


def _rewrite_file(path: Path, dry_run: bool, backup: bool, allow: AllowList | None) -> ScrubResult:
    from ..storage import iter_lines
    from ..storage.atomic import write_atomic
    from ..storage.rewrite import backup_path
    from ..stores import FileHandle

    from .blobs import BlobStore

    result = ScrubResult(str(path), "rewrite", dry_run)
    old = [raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path)]
    blobs = BlobStore.of_session(path)
    secret = _secret_blobs(old, blobs.read, allow)
    inline, inlined = _inline(old, secret, blobs.get, result, lambda d: str(blobs.path(d)))
    new = _redact_all(inline, result, allow)
    if result.changed_lines and not dry_run:
        if backup:
            result.backup = backup_path(path, "secrets")
            write_atomic(result.backup, old, replace=False)
        FileHandle(path).replace_lines(old, new)
        result.notes.extend(purge_caches(path))
    _side_files(path, result, allow, rewrite=not dry_run)
    if not dry_run:
        _settle_blobs(result, inlined, _drop_file_blobs(blobs, list(inlined), result))
    return result


def _secret_blobs(lines: list[bytes], fetch: Callable[[str], bytes | None], allow: AllowList | None) -> dict[str, int]:
    """``{sha256 hex: secrets}`` of the blobs the notes of ``lines`` name
    whose payload holds secrets (``fetch(digest)``: the blob's bytes as
    stored, None when missing; it raises when a blob is refused)."""
    from ..session.lean import note_hashes

    found: dict[str, int] = {}
    for digest in dict.fromkeys(d for raw in lines for d in note_hashes(raw)):
        count = len(_blob_hits([(digest, fetch(digest))], allow))
        if count:
            found[digest] = count
    return found


def _inline(
    lines: list[bytes], secret: dict[str, int], get: Callable[[str], bytes], result: ScrubResult, name: Callable[[str], str]
) -> tuple[list[bytes], dict[str, int]]:
    """``lines`` with the payloads of the ``secret`` blobs put back in place
    of their notes (so the rewrite redacts them), and ``{digest: index in
    result.blobs}`` of those put back: each is ``"would remove"`` there
    until :func:`_settle_blobs`; a damaged or vanished blob is
    ``"unreadable"`` and its note stays."""
    from .slimming import restore_lines

    inlined: dict[str, int] = {}
    for digest, count in secret.items():
        try:
            get(digest)
        except OperationError:
            result.blobs.append((name(digest), count, "unreadable"))
            result.notes.append(f"{name(digest)}: holds {plural(count, 'secret')} but cannot be put back (damaged); delete it by hand")
            continue
        inlined[digest] = len(result.blobs)
        result.blobs.append((name(digest), count, "would remove"))
    if not inlined:
        return lines, inlined
    return restore_lines(lines, get, only=inlined)[0], inlined


def _settle_blobs(result: ScrubResult, inlined: dict[str, int], dropped: list[str]) -> None:
    """After the rewrite: each blob put back (``inlined``, from
    :func:`_inline`) is ``removed`` when ``dropped`` has it, else ``kept``
    (something else still names it)."""
    gone = set(dropped)
    for digest, i in inlined.items():
        name, count, _action = result.blobs[i]
        if digest in gone:
            result.blobs[i] = (name, count, "removed")
        else:
            result.blobs[i] = (name, count, "kept")
            result.notes.append(
                f"{name}: still holds {plural(count, 'secret')}: another session or a backup names it "
                "(scrub those with --mode rewrite too; the last one removes it)"
            )


def _drop_file_blobs(blobs: Any, digests: list[str], result: ScrubResult) -> list[str]:
    """Delete the blob files of ``digests`` that no session file or side
    file sharing the blob directory names (``*.jsonl`` and
    ``*.jsonl.*`` under the directory holding ``.blobs``; only regular
    files, opened without following a link or blocking on a FIFO); returns
    those deleted. A file that cannot be read keeps every blob. A blob is
    deleted by its name in its checked directory
    (:meth:`~.blobs.BlobStore.remove`); a refused directory keeps it and
    says so in ``result.notes``."""
    import mmap

    from ..storage.guarded import UnsafePathError, open_regular

    if not digests:
        return []
    left = {d: d.encode() for d in digests}
    for dirpath, dirnames, filenames in os.walk(blobs.root.parent):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not (name.endswith(".jsonl") or ".jsonl." in name):
                continue
            try:
                fd, st = open_regular(os.path.join(dirpath, name))
            except FileNotFoundError:
                continue
            except UnsafePathError:
                continue  # a link or a FIFO is no session naming a blob
            except OSError:
                return []
            try:
                if st.st_size == 0:
                    continue
                with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as view:
                    for digest in [d for d, key in left.items() if view.find(key) != -1]:
                        del left[digest]
            except OSError:
                return []
            finally:
                os.close(fd)
            if not left:
                return []
    dropped = []
    for digest in left:
        try:
            if blobs.remove(digest):
                dropped.append(digest)
        except OperationError as exc:
            result.notes.append(f"{exc}; the blob is kept")
    return dropped


def _side_files(path: Path, result: ScrubResult, allow: AllowList | None, *, rewrite: bool) -> None:
    """Scan the session's side files (torn lines, rejected lines, backups);
    with ``rewrite``, rewrite each holding a secret with its secrets
    redacted (atomically, its mode kept), except the backup this run wrote.
    Fills ``result.side_files`` and ``result.other_copies``."""
    from ..secrets import find_secrets
    from ..storage.atomic import write_atomic

    for side in side_files(path):
        if side == result.backup:
            continue
        try:
            hits = find_secrets(side, allow=allow)
        except OSError as exc:
            result.notes.append(f"{side}: cannot be read ({exc.strerror or exc}); it may hold secrets")
            continue
        if not hits:
            continue
        if not rewrite:
            result.side_files.append((side, len(hits), "would redact" if result.mode == "rewrite" else "kept"))
            result.other_copies.append(side)
            continue
        with Scanner(allow) as scanner:
            lines = side.read_bytes().splitlines(keepends=True)
            new = [line for line, _hits in redacted_lines(lines, scanner, session=str(side))]
        write_atomic(side, new, keep_mode=True)
        result.side_files.append((side, len(hits), "redacted"))


def _note_cwd(result: ScrubResult) -> None:
    if any(h.field_kind == "header" and h.field == "cwd" for h in result.hits):
        result.notes.append(
            f"{result.session}: the header's cwd holds a secret: the names of session directories made from it "
            "(~/.pi/agent/sessions/--<cwd>--) keep it; rename them by hand"
        )


def _redact_all(old: list[bytes], result: ScrubResult, allow: AllowList | None) -> list[bytes]:
    """The rewrite of both kinds of session: each line of ``old`` with its
    secrets masked (:func:`redacted_lines`); the hits and changed lines go
    into ``result`` (and a note when the header's cwd holds one)."""
    new: list[bytes] = []
    with Scanner(allow) as scanner:
        for line, hits in redacted_lines(old, scanner, session=result.session):
            new.append(line)
            if hits:
                result.hits.extend(hits)
                result.changed_lines += 1
    _note_cwd(result)
    return new


def _blob_of(store: SessionStore) -> Callable[[str], bytes | None]:
    """How a database store's blobs are read: ``get_blob``, or (a store
    keeping no blobs, :attr:`~pi_session.stores.StoreCapability.BLOBS`)
    none found."""
    return store.get_blob if store.can(StoreCapability.BLOBS) else lambda digest: None


def _rewrite_db(store: SessionStore, session: str, dry_run: bool, backup: bool, allow: AllowList | None, backup_dir: StrPath | None) -> ScrubResult:
    from ..storage.atomic import write_atomic

    session_id = store.resolve(session)
    handle = store.handle(session_id)
    old = list(store.read_lines(session_id))
    result = ScrubResult(handle.location, "rewrite", dry_run)

    def get(digest: str) -> bytes:
        data = _blob_of(store)(digest)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            raise OperationError(f"blob sha256:{digest} is missing or damaged")
        return data

    secret = _secret_blobs(old, _blob_of(store), allow)
    inline, inlined = _inline(old, secret, get, result, lambda d: _db_blob_name(store, d))
    new = _redact_all(inline, result, allow)
    if dry_run:
        return result
    if not result.changed_lines:
        _settle_blobs(result, inlined, [])
        return result
    if backup:
        from ..storage.rewrite import backup_path

        result.backup = backup_path(Path(backup_dir or ".") / f"{session_id}.jsonl", "secrets")
        write_atomic(result.backup, old, replace=False)
    handle.replace_lines(old, new)
    result.notes.extend(purge_caches(None, store=store, session_id=session_id))
    _settle_blobs(result, inlined, store.drop_blobs(list(inlined)))
    return result


def _scrub_edit(location: StrPath, db: SessionStore | None, dry_run: bool, allow: AllowList | None) -> ScrubResult:
    from ..session.context_edits import EDITABLE_ROLES, apply_context_edit
    from ..storage import iter_lines

    opener = open_for_reading if dry_run else open_for_writing
    manager = opener(os.fspath(location), store=db) if db is not None else opener(location)
    result = ScrubResult(str(manager.get_session_location()), "edit", dry_run)
    where = result.session
    with Scanner(allow) as scanner:
        seen: set[str] = set()
        planned: list[tuple[str, Any]] = []

        def scan(entry: Any, messages: list[Any]) -> list[SecretHit]:
            return [h for msg in messages for h in iter_hits(_as_record(entry, msg), scanner, session=where)]

        for item in manager.build_session_projection()["entries"]:
            entry = item["sourceEntry"]
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                seen.add(entry_id)
            hits = scan(entry, item["messages"])
            if not hits:
                continue
            message = entry.get("message") if entry.get("type") == MESSAGE else None
            role = message.get("role") if isinstance(message, dict) else None
            if not isinstance(entry_id, str) or not item["messages"]:
                result.not_hidden.extend(hits)
            elif role == BASH_EXECUTION:
                # an edit's content never replaces a bash output: leave the execution out
                planned.append((entry_id, None))
                result.omitted.append(entry_id)
                result.hits.extend(hits)
            elif entry.get("type") == CUSTOM_MESSAGE or role in EDITABLE_ROLES:
                replacement = {"content": redact_value(item["messages"][0].get("content"), scanner)}
                left = scan(entry, apply_context_edit([dict(m) for m in item["messages"]], replacement))
                result.not_hidden.extend(left)  # text beside the content (an error message, details)
                result.hits.extend(h for h in hits if h not in left)
                if len(left) < len(hits):
                    planned.append((entry_id, replacement))
            else:  # a summary or a system prompt: an edit could only drop all of it
                result.not_hidden.extend(hits)
        result.elsewhere = sum(
            1
            for record in [manager.get_header() or {}, *manager.get_entries()]
            for _ in iter_hits(record if record.get("id") not in seen or record.get("type") == "session" else _beside_context(record), scanner)
        )
    for target, replacement in planned:
        result.edits.append((target, None if dry_run else manager.append_context_edit(target, replacement, any_target=True)))
    if planned and not dry_run:
        save(manager)
    if db is None:
        path = Path(result.session)
        _side_files(path, result, allow, rewrite=False)
        _kept_blobs(result, [raw for _n, raw, _nl in iter_lines(path)], allow, path=path)
    else:
        _kept_blobs(result, list(db.read_lines(manager.get_session_id())), allow, store=db)
    return result


def _db_blob_name(store: SessionStore, digest: str) -> str:
    from ..stores import mask_url

    return f"{mask_url(store.url)}#blob:sha256:{digest}"


def _kept_blobs(result: ScrubResult, lines: list[bytes], allow: AllowList | None, *, path: Path | None = None, store: SessionStore | None = None) -> None:
    """Edit mode: name the blobs holding secrets (``"kept"``: a context
    edit cannot change them, and the model sees only their notes)."""
    from .blobs import BlobStore

    if store is not None:
        found = _secret_blobs(lines, _blob_of(store), allow)
        result.blobs.extend((_db_blob_name(store, d), n, "kept") for d, n in found.items())
    elif path is not None:
        blobs = BlobStore.of_session(path)
        try:
            found = _secret_blobs(lines, blobs.read, allow)
        except OperationError as exc:  # the context edits are written by now: say it, do not fail
            result.notes.append(f"{exc}; the secrets of the session's blobs were not looked for")
            return
        result.blobs.extend((str(blobs.path(d)), n, "kept") for d, n in found.items())


def _as_record(entry: Any, message: Any) -> dict[str, Any]:
    """A model message of ``entry`` as a record whose hits name the entry
    and its fields as in the file: a message entry's message
    (``message.content[0].text``); a compaction's summary (``summary``) or
    prompt snapshot (``systemMessage.content``), a branch summary's
    ``summary``, a custom_message's ``content``."""
    etype, eid = entry.get("type"), entry.get("id")
    if etype == MESSAGE or not isinstance(message, dict):
        return {"type": "message", "id": eid, "message": message}
    if etype == COMPACTION and message.get("role") == SYSTEM:
        return {"type": etype, "id": eid, "systemMessage": message}
    if etype in (COMPACTION, BRANCH_SUMMARY):
        return {"type": etype, "id": eid, "summary": message.get("summary")}
    if etype == CUSTOM_MESSAGE:
        return {"type": etype, "id": eid, "content": message.get("content")}
    return {"type": "message", "id": eid, "message": message}


def all_sessions(store: SessionStore | None = None) -> list[str]:
    """The sessions of ``store`` (default: the session files under pi's
    sessions directory), as :func:`scrub_session` and :func:`find_in_session`
    take them: file paths, or ids in a database store; oldest first."""
    from ..core.paths import sessions_dir
    from ..stores.file import FileStore

    if store is None:
        store = FileStore(sessions_dir())
    infos = store.list(with_text=False)
    key = "path" if store.can(StoreCapability.FILES) else "id"
    return [str(info[key]) for info in reversed(infos)]


def find_in_session(
    location: StrPath, *, store: SessionStore | None = None, allow: AllowList | None = None, on_progress: Callable[[int], None] | None = None
) -> list[SecretHit]:
    """:func:`~.finding.find_secrets` of one session: a file, or (with a
    database ``store``) a session id or id prefix; hits name the file path
    or the store locator. A file's side files
    (:func:`pi_session.secrets.finding.side_files`: ``<file>.torn-*``,
    ``<file>.rejected-*``, backups) are scanned too, after it; their hits
    name the side file; then the blobs its ``slim`` notes name, hits
    naming the blob file.

    Raises:
        OSError: the file cannot be read.
        pi_session.stores.StoreError: the store fails or has no such session.
        OperationError: a blob its notes name, or the blob directory, is
            refused or unreadable (:meth:`~.blobs.BlobStore.read`).
    """
    from ..secrets import find_secrets

    if store is not None and not store.can(StoreCapability.FILES):
        session_id = store.resolve(str(location))
        lines = list(store.read_lines(session_id))
        hits = find_secrets(lines, session=store.locator(session_id), allow=allow, on_progress=on_progress)
        hits = _mark_hidden(hits, session_id, store)
        from ..session.lean import note_hashes

        digests = dict.fromkeys(d for raw in lines for d in note_hashes(raw))
        hits.extend(_blob_hits(((_db_blob_name(store, d), _blob_of(store)(d)) for d in digests), allow))
        return hits
    hits = _mark_hidden(find_secrets(location, allow=allow, on_progress=on_progress), location, None)
    for side in side_files(location):
        hits.extend(find_secrets(side, allow=allow))
    hits.extend(_blob_hits(_file_blobs(location), allow))
    return hits


def _blob_hits(blobs: Iterable[tuple[str, bytes | None]], allow: AllowList | None) -> list[SecretHit]:
    """The secrets in the blobs ``slim`` moved a session's payloads to
    (``(name, bytes)``; hits name the blob). A blob that is missing or not
    JSON is skipped (``restore`` reports it)."""
    import orjson

    from ..secrets import find_secrets

    hits: list[SecretHit] = []
    for name, data in blobs:
        if data is None:
            continue
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        block = value if isinstance(value, dict) else {"type": "text", "text": value if isinstance(value, str) else str(value)}
        record = {"type": "message", "id": None, "message": {"role": "toolResult", "content": [block]}}
        hits.extend(find_secrets([record], session=name, allow=allow))
    return hits


def _file_blobs(location: StrPath) -> Iterator[tuple[str, bytes | None]]:
    """``(blob path, bytes or None when missing)`` of each blob a session
    file's notes name, once each.

    Raises:
        OperationError: a blob or its directory is refused, or unreadable
            (:meth:`~.blobs.BlobStore.read`).
    """
    from .blobs import BlobStore
    from .slimming import slimmed_blobs

    blobs = BlobStore.of_session(location)
    seen: set[str] = set()
    for _line, digest, blob in slimmed_blobs(location):
        if digest in seen:
            continue
        seen.add(digest)
        yield str(blob), blobs.read(digest)


def _mark_hidden(hits: list[SecretHit], location: StrPath, store: SessionStore | None) -> list[SecretHit]:
    """``hits`` with :attr:`SecretHit.hidden` set on those a context edit on
    the session's current branch hides from the model (an omitted entry:
    every field; a replaced one: its content). A session that cannot be
    opened marks none."""
    import dataclasses

    from ..session.context import applied_context_edits
    from .errors import OperationError

    if not any(h.entry_id for h in hits):
        return hits
    try:
        manager = open_for_reading(os.fspath(location), store=store) if store is not None else open_for_reading(location)
    except (OperationError, OSError):
        return hits
    edits = applied_context_edits(manager.get_branch())
    if not edits:
        return hits
    out = []
    for hit in hits:
        edit = edits.get(hit.entry_id) if hit.entry_id is not None else None
        if edit is not None and (edit[1] is None or hit.field == "content" or hit.field.startswith(("message.content", "content["))):
            hit = dataclasses.replace(hit, hidden=True)
        out.append(hit)
    return out
