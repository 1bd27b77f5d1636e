"""Removing secrets from a session: :func:`scrub_session` in two modes.

- ``edit`` (pi 1.6's own way): append ``context_edit`` entries whose
  replacement is the target's model-visible content with each secret
  replaced by ``[REDACTED:<kind>]``, for every entry of the model context at
  the leaf that holds one. History is untouched; works on every store.
  What a context edit cannot change (bash executions, compaction and
  branch summaries: pi refuses edits of those) is reported in
  :attr:`ScrubResult.not_hidden`.
- ``rewrite``: every record with a secret is written again with each secret
  replaced by ``[REDACTED:<kind>]`` (every text field, earlier context
  edits' replacements and compaction summaries included; ids, parents and
  timestamps unchanged), lines without one byte for byte. A file is
  replaced atomically (:func:`pi_session.storage.atomic_rewrite`: temp
  file, fsync, rename; owner, group and mode kept); a database session is
  rewritten in one transaction. Caches are purged
  (:func:`~.purge.purge_caches`). No backup unless asked (a backup keeps the
  secret): then a copy of the old content, mode 0600.

Both are idempotent: a scrubbed session has nothing left to scrub.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import jsonio
from ..records import StrPath
from .allowlist import AllowList
from .fields import replace_strings
from .finding import SecretHit, iter_hits, parse_raw_line, redact_text
from .purge import purge_caches
from .scanner import Scanner

__all__ = ["ScrubResult", "all_sessions", "find_in_session", "redact_value", "redacted_lines", "redacted_records", "scrub_session", "shown_records"]

Mode = Literal["edit", "rewrite"]


@dataclass
class ScrubResult:
    """What :func:`scrub_session` found and did.

    Attributes:
        session: the session (path or store locator).
        mode: ``"edit"`` or ``"rewrite"``.
        dry_run: nothing was written.
        hits: the secrets handled (rewrite: all in the session; edit: those
            the new context edits hide).
        changed_lines: rewrite: lines written again.
        edits: edit: ``(target id, new context edit id)`` pairs (ids are
            None in a dry run).
        not_hidden: edit: secrets in the model context that a context edit
            cannot hide (bash executions, summaries).
        elsewhere: edit: how many secrets are outside the model context at
            the leaf (other branches, compacted history, labels, the
            header): still in the file, not sent to the model now.
        backup: the backup written, or None.
        other_copies: files beside the session that may hold the old text
            (backups of earlier migrations and repairs: ``<file>.*.bak*``).
        notes: what else the user should know (one line each, no secret):
            a secret in the header's ``cwd`` stays in the names of the
            session directories pi makes from it.
    """

    session: str
    mode: str
    dry_run: bool
    hits: list[SecretHit] = field(default_factory=list)
    changed_lines: int = 0
    edits: list[tuple[str, str | None]] = field(default_factory=list)
    not_hidden: list[SecretHit] = field(default_factory=list)
    elsewhere: int = 0
    backup: Path | None = None
    other_copies: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (``scrub --json``), secrets masked."""
        return {
            "session": self.session, "mode": self.mode, "dryRun": self.dry_run,
            "secrets": [h.to_json() for h in self.hits], "changedLines": self.changed_lines,
            "edits": [{"targetId": t, "id": i} for t, i in self.edits],
            "notHidden": [h.to_json() for h in self.not_hidden], "elsewhere": self.elsewhere,
            "backup": str(self.backup) if self.backup else None, "otherCopies": [str(p) for p in self.other_copies], "notes": list(self.notes),
        }


def redact_value(value: Any, scanner: Scanner) -> Any:
    """``value`` (a record, a message, content) with every secret in its
    text fields replaced by ``[REDACTED:<kind>]``; the same object when it
    holds none."""
    return replace_strings(value, lambda _path, text: redact_text(text, scanner.scan(text)))


def redacted_lines(lines: Iterable[bytes], scanner: Scanner, *, session: str | None = None) -> Iterator[tuple[bytes, list[SecretHit]]]:
    """Each stored line (with its newline) and the secrets in it: a line
    with none as it is (the same object), else the record with its secrets
    redacted, serialized again (a line that is not a JSON object: its text
    redacted as it is). A line that ended without a newline still does."""
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            yield raw, []
            continue
        item = parse_raw_line(raw)
        hits = list(iter_hits(item, scanner, session=session, line=n))
        if not hits:
            yield raw, []
            continue
        if isinstance(item, str):
            ending = raw[len(raw.rstrip(b"\r\n")) :]
            new = redact_text(item, scanner.scan(item)).encode("utf-8", "surrogateescape") + ending
        else:
            new = jsonio.dumps_line(redact_value(item, scanner))
            if not raw.endswith(b"\n"):
                new = new[:-1]
        yield new, hits


def _other_copies(path: Path) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(glob.escape(str(path)) + ".*bak*"))


def scrub_session(
    location: StrPath,
    *,
    mode: Mode,
    store: Any = None,
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
            opened or written.
        OSError: on I/O failure (the session is then unchanged).
    """
    from ..stores.file import FileStore

    db = store if store is not None and not isinstance(store, FileStore) else None
    if mode == "edit":
        return _scrub_edit(location, db, dry_run, allow)
    if mode != "rewrite":
        raise ValueError(f"unknown scrub mode {mode!r} (edit or rewrite)")
    if db is not None:
        return _rewrite_db(db, str(location), dry_run, backup, allow, backup_dir)
    return _rewrite_file(Path(location), dry_run, backup, allow)


def _rewrite_file(path: Path, dry_run: bool, backup: bool, allow: AllowList | None) -> ScrubResult:
    from ..storage import atomic_rewrite, iter_lines
    from ..storage.atomic import write_atomic
    from ..storage.rewrite import backup_path

    st = os.stat(path)
    result = ScrubResult(str(path), "rewrite", dry_run, other_copies=_other_copies(path))
    old: list[bytes] = []
    new: list[bytes] = []
    with Scanner(allow) as scanner:
        raws = (raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(path))
        for raw, (line, hits) in _paired(raws, scanner, str(path)):
            old.append(raw)
            new.append(line)
            if hits:
                result.hits.extend(hits)
                result.changed_lines += 1
    _note_cwd(result)
    if not result.changed_lines or dry_run:
        return result
    if backup:
        result.backup = backup_path(path, "secrets")
        write_atomic(result.backup, old, replace=False)
    atomic_rewrite(path, new, backup_tag=None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns)
    purge_caches(path)
    return result


def _note_cwd(result: ScrubResult) -> None:
    if any(h.field_kind == "header" and h.field == "cwd" for h in result.hits):
        result.notes.append(
            f"{result.session}: the header's cwd holds a secret: the names of session directories made from it "
            "(~/.pi/agent/sessions/--<cwd>--) keep it; rename them by hand"
        )


def _paired(raws: Iterable[bytes], scanner: Scanner, session: str) -> Iterator[tuple[bytes, tuple[bytes, list[SecretHit]]]]:
    """Each raw line with what :func:`redacted_lines` makes of it."""
    kept: list[bytes] = []

    def tee() -> Iterator[bytes]:
        for raw in raws:
            kept.append(raw)
            yield raw

    for out in redacted_lines(tee(), scanner, session=session):
        yield kept.pop(), out


def _rewrite_db(store: Any, session: str, dry_run: bool, backup: bool, allow: AllowList | None, backup_dir: StrPath | None) -> ScrubResult:
    from ..storage.atomic import write_atomic

    session_id = store.resolve(session)
    handle = store.handle(session_id)
    old = list(store.read_lines(session_id))
    result = ScrubResult(handle.location, "rewrite", dry_run)
    new: list[bytes] = []
    with Scanner(allow) as scanner:
        for line, hits in redacted_lines(old, scanner, session=handle.location):
            new.append(line)
            if hits:
                result.hits.extend(hits)
                result.changed_lines += 1
    _note_cwd(result)
    if not result.changed_lines or dry_run:
        return result
    if backup:
        from ..storage.rewrite import backup_path

        result.backup = backup_path(Path(backup_dir or ".") / f"{session_id}.jsonl", "secrets")
        write_atomic(result.backup, old, replace=False)
    handle.replace_lines(old, new)
    purge_caches(None, store=store, session_id=session_id)
    return result


def _scrub_edit(location: StrPath, db: Any, dry_run: bool, allow: AllowList | None) -> ScrubResult:
    from ..context_edits import EDITABLE_ROLES
    from ..operations import open_for_reading, open_for_writing, save

    opener = open_for_reading if dry_run else open_for_writing
    manager = opener(os.fspath(location), store=db) if db is not None else opener(location)
    result = ScrubResult(str(manager.get_session_location()), "edit", dry_run)
    where = result.session
    with Scanner(allow) as scanner:
        seen: set[str] = set()
        planned: list[tuple[str, Any]] = []
        for item in manager.build_session_projection()["entries"]:
            entry = item["sourceEntry"]
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                seen.add(entry_id)
            hits = [h for msg in item["messages"] for h in iter_hits(_as_record(entry, msg), scanner, session=where)]
            if not hits:
                continue
            message = entry.get("message") if entry.get("type") == "message" else None
            role = message.get("role") if isinstance(message, dict) else None
            editable = isinstance(entry_id, str) and (entry.get("type") == "custom_message" or role in EDITABLE_ROLES)
            if not editable or not item["messages"]:
                result.not_hidden.extend(hits)
                continue
            content = item["messages"][0].get("content")
            planned.append((entry_id, {"content": redact_value(content, scanner)}))
            result.hits.extend(hits)
        result.elsewhere = sum(
            1
            for record in [manager.get_header() or {}, *manager.get_entries()]
            if record.get("id") not in seen or record.get("type") == "session"
            for _ in iter_hits(record, scanner)
        )
    for target, replacement in planned:
        result.edits.append((target, None if dry_run else manager.append_context_edit(target, replacement)))
    if planned and not dry_run:
        save(manager)
    return result


def _as_record(entry: Any, message: Any) -> dict[str, Any]:
    """A model message of ``entry`` as a message record (id of the entry),
    so its hits name the entry and fields as in the file
    (``message.content[0].text``)."""
    return {"type": "message", "id": entry.get("id"), "message": message}


def all_sessions(store: Any = None) -> list[str]:
    """The sessions of ``store`` (default: the session files under pi's
    sessions directory), as :func:`scrub_session` and :func:`find_in_session`
    take them: file paths, or ids in a database store; oldest first."""
    from ..paths import sessions_dir
    from ..stores.file import FileStore

    if store is None:
        store = FileStore(sessions_dir())
    infos = store.list(with_text=False)
    key = "path" if isinstance(store, FileStore) else "id"
    return [str(info[key]) for info in reversed(infos)]


def find_in_session(location: StrPath, *, store: Any = None, allow: AllowList | None = None) -> list[SecretHit]:
    """:func:`~.finding.find_secrets` of one session: a file, or (with a
    database ``store``) a session id or id prefix; hits name the file path
    or the store locator.

    Raises:
        OSError: the file cannot be read.
        pi_session.stores.StoreError: the store fails or has no such session.
    """
    from ..stores.file import FileStore
    from .finding import find_secrets

    if store is not None and not isinstance(store, FileStore):
        session_id = store.resolve(str(location))
        return find_secrets(store.read_lines(session_id), session=store.locator(session_id), allow=allow)
    return find_secrets(location, allow=allow)


def redacted_records(records: Iterable[Any], allow: AllowList | None = None) -> list[Any]:
    """``records`` (a header and entries) with every secret in their text
    fields replaced by ``[REDACTED:<kind>]``; unchanged records are the same
    objects."""
    with Scanner(allow) as scanner:
        return [redact_value(r, scanner) for r in records]


def shown_records(manager: Any, path: list[Any] | None = None) -> list[Any]:
    """What an export page of ``manager``'s session shows, as records: the
    header and the entries (``path``: only those, a Markdown page; None:
    all, the HTML viewer), each context edit's target as the edit leaves
    it (left out when omitted; the original is not on the page)."""
    from ..context_edits import edited_entry
    from ..viewer.model import hiding_edits

    entries = manager.get_entries()
    edits = hiding_edits(entries, path if path is not None else manager.get_branch())
    shown: list[Any] = [manager.get_header() or {}]
    for entry in entries if path is None else path:
        edit = edits.get(entry.get("id")) if isinstance(entry.get("id"), str) else None
        if edit is None:
            shown.append(entry)
        elif edit[1] is not None:
            shown.append(edited_entry(entry, edit[1]))
    return shown
