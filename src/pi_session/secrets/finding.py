"""Finding the secrets of a session: :func:`find_secrets` (every record,
every text field, see :mod:`.fields`) and :class:`SecretHit`, one secret
found, with a masked preview (:func:`mask`); never the secret itself in
any output."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator, Mapping
import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core import jsonio
from ..entries.records import StrPath
from .allowlist import AllowList
from .fields import render_path, scanned_strings
from .scanner import MIN_SECRET, Scanner, Span, redaction

__all__ = ["RAW_LINE_FIELD", "SIDE_FILE_GLOBS", "SecretHit", "find_secrets", "iter_hits", "iter_records", "mask", "redact_text", "side_files"]

SIDE_FILE_GLOBS = (".torn-*", ".rejected-*", ".*bak*")
"""The files beside a session file ``<file>`` that hold its text too:
``<file>.torn-<offset>`` (a torn last line moved aside before an append),
``<file>.rejected-<n>`` (damaged lines a repair took out) and backups
(``<file>.v<N>.bak`` of a migration, ``.repair.bak``, ``.secrets.bak``)."""

RAW_LINE_FIELD = "(line)"
"""The field path of a hit in a line that is not a JSON record (a damaged
line, scanned as it is)."""


def mask(value: str) -> str:
    """A preview of a secret that does not give it away: its first and last
    2 characters and its length (``"sk…Xy (51 chars)"``); a value shorter
    than 10 characters shows only its length (``"… (6 chars)"``)."""
    if len(value) < 10:
        return f"… ({len(value)} chars)"
    return f"{value[:2]}…{value[-2:]} ({len(value)} chars)"


@dataclass(frozen=True)
class SecretHit:
    """One secret found in a session.

    Attributes:
        session: the session (its path or store id, as given), or None.
        line: 1-based line of the session file (or store row ``seq`` + 1);
            None when records were scanned.
        entry_id: the record's ``id`` (the header's is the session id), or
            None (a damaged line, a record without a string id).
        field: path of the text field in the record (``message.content[0].text``),
            or :data:`RAW_LINE_FIELD`.
        field_kind: the field's kind (:data:`~.fields.FIELD_KINDS`).
        kind: the secret's kind (``github-token``), what ``[REDACTED:<kind>]`` names.
        secret_type: the detector's type name (``GitHub Token``).
        start, end: where the secret is in the field's text (characters).
        preview: :func:`mask` of the secret.
        hidden: the model no longer sees it: a context edit on the session's
            current branch replaces or omits the entry's content
            (``scrub --mode edit``); the file still holds it.
    """

    session: str | None
    line: int | None
    entry_id: str | None
    field: str
    field_kind: str
    kind: str
    secret_type: str
    start: int
    end: int
    preview: str
    value: str = dataclasses.field(repr=False, compare=False)
    hidden: bool = dataclasses.field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The hit as JSON (``--json``): every attribute but the secret."""
        return {
            "session": self.session, "line": self.line, "entryId": self.entry_id, "field": self.field,
            "fieldKind": self.field_kind, "kind": self.kind, "type": self.secret_type,
            "start": self.start, "end": self.end, "preview": self.preview, "hidden": self.hidden,
        }


def redact_text(text: str, spans: Iterable[Span]) -> str:
    """``text`` with each span replaced by ``[REDACTED:<kind>]``; ``text``
    itself (the same object) when there are no spans."""
    spans = list(spans)
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for span in sorted(spans, key=lambda s: s.start):
        out.append(text[at : span.start])
        out.append(redaction(span.kind))
        at = span.end
    out.append(text[at:])
    return "".join(out)


def iter_hits(record: Any, scanner: Scanner, *, session: str | None = None, line: int | None = None) -> Iterator[SecretHit]:
    """The secrets in one record (any JSON value) or, for a ``str``, one
    raw line that did not parse (field :data:`RAW_LINE_FIELD`)."""
    if isinstance(record, str):
        for span in scanner.scan(record):
            yield _hit(session, line, None, RAW_LINE_FIELD, "other", record, span)
        return
    entry_id = record.get("id") if isinstance(record, Mapping) else None
    entry_id = entry_id if isinstance(entry_id, str) else None
    for where, text, kind in scanned_strings(record, MIN_SECRET):
        spans = scanner.scan(text)
        if spans:
            path = render_path(where)
            for span in spans:
                yield _hit(session, line, entry_id, path, kind, text, span)


def _hit(session: str | None, line: int | None, entry_id: str | None, path: str, fkind: str, text: str, span: Span) -> SecretHit:
    value = text[span.start : span.end]
    return SecretHit(session, line, entry_id, path, fkind, span.kind, span.secret_type, span.start, span.end, mask(value), value)


def side_files(path: StrPath) -> list[Path]:
    """The side files of the session file ``path`` (:data:`SIDE_FILE_GLOBS`)
    that exist, sorted by name; temp files of atomic writes excluded."""
    import glob

    base = glob.escape(os.fspath(path))
    found = {Path(p) for pattern in SIDE_FILE_GLOBS for p in glob.glob(base + pattern)}
    return sorted(p for p in found if p.is_file() and not p.name.endswith(".tmp"))


def iter_records(lines: Iterable[bytes]) -> Iterator[tuple[list[int], Any]]:
    """The records of stored lines as the reader sees them: each
    ``(indexes, item)``, ``indexes`` the 0-based indexes of the lines it
    spans (several for a record split over lines by raw newlines in its
    strings, rejoined as :class:`pi_session.storage.Rejoiner` does, so its
    strings are scanned decoded), ``item`` the record (a dict), the text of
    a line that is not one (``str``), or None (a blank line).

    Args:
        lines: the stored lines, each with its ``\n`` when it had one.
    """
    from ..storage import Rejoiner

    rejoiner = Rejoiner()

    def text(raw: bytes) -> str:
        return raw.rstrip(b"\r\n").decode("utf-8", "surrogateescape")

    for i, raw in enumerate(lines):
        had_newline = raw.endswith(b"\n")
        body = raw[:-1] if had_newline else raw
        item = parse_raw_line(raw) if body.strip() else None
        released, joined, taken = rejoiner.feed(i + 1, body, had_newline, isinstance(item, dict))
        for line_no, piece in released:
            yield [line_no - 1], text(piece) if piece.strip() else None
        if joined is not None:
            yield list(range(joined.first_line - 1, joined.last_line)), joined.record
        elif not taken:
            yield [i], item
    for line_no, piece in rejoiner.release():
        yield [line_no - 1], text(piece) if piece.strip() else None


def parse_raw_line(raw: bytes) -> Any:
    """A stored line as a record, or as text (``str``, undecodable bytes
    kept as lone surrogates) when it is not a JSON object."""
    stripped = raw.rstrip(b"\r\n")
    try:
        record = jsonio.loads(stripped)
    except ValueError:
        record = None
    if isinstance(record, dict):
        return record
    return stripped.decode("utf-8", "surrogateescape")


def find_secrets(
    source: StrPath | Iterable[bytes] | Iterable[Mapping[str, Any]],
    *,
    session: str | None = None,
    allow: AllowList | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> list[SecretHit]:
    """Scan every text a session holds (see :mod:`pi_session.secrets`).

    Args:
        source: a session file's path; or its lines (``bytes``, as a store's
            ``read_lines`` gives them; lines that are not JSON objects are
            scanned as text); or records (dicts: a manager's header and
            entries).
        session: what hits name as their session (default: the path).
        allow: known false positives to leave out.
        on_progress: called with the bytes of lines scanned so far (about
            every MB, and at the end); lines sources only.

    Returns:
        The hits in file order (within a line, field order). A record split
        over several lines (raw newlines in its strings; the reader rejoins
        it) is scanned rejoined and decoded, its hits naming its first line.

    Raises:
        OSError: the file cannot be read.
    """
    if isinstance(source, (str, os.PathLike)):
        from ..storage import iter_lines

        name: str | None = session if session is not None else os.fspath(source)
        items: Iterable[Any] = (raw + b"\n" if had_newline else raw for _n, raw, had_newline in iter_lines(source))
    else:
        name = session
        items = source
    hits: list[SecretHit] = []
    done = reported = 0

    def lines(items: Iterable[bytes]) -> Iterator[bytes]:
        nonlocal done, reported
        for raw in items:
            done += len(raw) + (not raw.endswith(b"\n"))
            if on_progress is not None and done - reported >= 1 << 20:
                on_progress(reported := done)
            yield bytes(raw)

    with Scanner(allow) as scanner:
        it = iter(items)
        first = next(it, None)
        if isinstance(first, (bytes, bytearray)):
            for indexes, item in iter_records(lines(itertools.chain([bytes(first)], it))):
                if item is not None:
                    hits.extend(iter_hits(item, scanner, session=name, line=indexes[0] + 1))
        elif first is not None:
            for item in itertools.chain([first], it):
                hits.extend(iter_hits(item, scanner, session=name, line=None))
    if on_progress is not None and done:
        on_progress(done)
    return hits
