"""The pieces of scrubbing (pure, apart from the scanner's settings):
:class:`ScrubResult`, redaction of values, lines and records
(:func:`redact_value`, :func:`redacted_lines`, :func:`redacted_records`)
and what an export page shows (:func:`shown_records`). The workflow that
reads and writes sessions is :func:`pi_session.operations.scrub_session`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core import jsonio
from ..entries.records import StrPath
from .allowlist import AllowList
from .fields import replace_strings
from .finding import SecretHit, iter_hits, iter_records, redact_text
from .scanner import Scanner

__all__ = ["Mode", "ScrubResult", "redact_value", "redacted_lines", "redacted_records", "shown_records"]

Mode = Literal["edit", "rewrite"]
"""The modes of ``scrub``."""


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
        omitted: edit: the targets among ``edits`` left out of the model
            context whole (bash executions: an edit cannot replace their
            output), in context order.
        not_hidden: edit: secrets that stay in the model context: in a
            compaction or branch summary or a system prompt (an edit could
            only drop all of it), or beside an edited message's content.
        elsewhere: edit: how many secrets are outside the model context at
            the leaf (other branches, compacted history, labels, the
            header): still in the file, not sent to the model now.
        backup: the backup written, or None.
        other_copies: side files of the session (:func:`~.finding.side_files`:
            ``<file>.torn-*``, ``<file>.rejected-*``, backups) that still
            hold secrets after this run (edit mode and dry runs change none;
            a rewrite cleans all but the backup it writes itself).
        side_files: every side file holding secrets: ``(path, secrets,
            action)``, action ``"redacted"``, ``"would redact"`` or
            ``"kept"`` (edit mode: they are not sent to the model).
        blobs: the blobs ``slim`` moved this session's payloads to that
            hold secrets: ``(blob, secrets, action)`` (a blob file's path,
            or ``<store URL>#blob:sha256:<hex>``), action ``"removed"``
            (rewrite: the payloads are back in the session, redacted, and
            no session names the blob any more), ``"kept"`` (edit mode, or
            another session or a backup still names it), ``"would remove"`` (dry run) or
            ``"unreadable"`` (damaged: it could not be put back; the
            session keeps its note).
        notes: what else the user should know (one line each, no secret):
            a secret in the header's ``cwd`` stays in the names of the
            session directories pi makes from it; a cache that could not
            be cleaned.
    """

    session: str
    mode: str
    dry_run: bool
    hits: list[SecretHit] = field(default_factory=list)
    changed_lines: int = 0
    edits: list[tuple[str, str | None]] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    not_hidden: list[SecretHit] = field(default_factory=list)
    elsewhere: int = 0
    backup: Path | None = None
    other_copies: list[Path] = field(default_factory=list)
    side_files: list[tuple[Path, int, str]] = field(default_factory=list)
    blobs: list[tuple[str, int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (``scrub --json``), secrets masked."""
        return {
            "session": self.session, "mode": self.mode, "dryRun": self.dry_run,
            "secrets": [h.to_json() for h in self.hits], "changedLines": self.changed_lines,
            "edits": [{"targetId": t, "id": i} for t, i in self.edits], "omitted": list(self.omitted),
            "notHidden": [h.to_json() for h in self.not_hidden], "elsewhere": self.elsewhere,
            "backup": str(self.backup) if self.backup else None, "otherCopies": [str(p) for p in self.other_copies],
            "sideFiles": [{"path": str(p), "secrets": n, "action": a} for p, n, a in self.side_files],
            "blobs": [{"blob": b, "secrets": n, "action": a} for b, n, a in self.blobs], "notes": list(self.notes),
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
    redacted as it is). A line that ended without a newline still does. A
    record split over several lines (:func:`~.finding.iter_records`) with
    a secret is written whole on its first line, its other lines empty
    (``b""``); its hits name its first line."""
    lines = list(lines)
    out: list[bytes] = list(lines)
    found: list[list[SecretHit]] = [[] for _ in lines]
    for indexes, item in iter_records(lines):
        if item is None:
            continue
        first = indexes[0]
        hits = list(iter_hits(item, scanner, session=session, line=first + 1))
        if not hits:
            continue
        raw = lines[first]
        if isinstance(item, str):
            ending = raw[len(raw.rstrip(b"\r\n")) :]
            new = redact_text(item, scanner.scan(item)).encode("utf-8", "surrogateescape") + ending
        else:
            new = jsonio.dumps_line(redact_value(item, scanner))
            if not lines[indexes[-1]].endswith(b"\n"):
                new = new[:-1]
        out[first] = new
        for other in indexes[1:]:
            out[other] = b""
        found[first] = hits
    yield from zip(out, found)


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
    from ..session.context_edits import edited_entry
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
