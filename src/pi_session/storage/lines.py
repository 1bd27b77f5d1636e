"""One line of a session file (as pi 1.6 ``parseSessionEntries`` reads it): :func:`parse_line`, the
recovery of damaged lines (:func:`recover_line`: BOM, NUL bytes, invalid
UTF-8, records glued together) and the rejoining of a record a writer split
over several lines (:func:`rejoin_split`, :class:`Rejoiner`, beyond pi,
which drops the pieces). Pure functions of bytes: no file access."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..core import jsonio
from .problems import ProblemKind
from .model import LineProblem, ParsedLine

_BOM = b"\xef\xbb\xbf"
_GLUED = re.compile(rb'\{"type":"')
# JavaScript's String.prototype.trim() whitespace that can appear in ASCII/UTF-8 lines
_JS_WS = b" \t\r\n\x0b\x0c"


def _js_trim_empty(raw: bytes) -> bool:
    return not raw.strip(_JS_WS)


def parse_line(raw: bytes, line_no: int) -> ParsedLine:
    """Parse one JSONL line (without its ``\\n``) the way ``JSON.parse`` would,
    recovering what can be recovered.

    Recovery (see :func:`recover_line`): a leading UTF-8 BOM is dropped; runs
    of NUL bytes around a record are dropped; invalid UTF-8 is replaced by
    U+FFFD (as Node's UTF-8 decoding does); a truncated record with a
    complete record glued after it yields the complete one (the truncated
    bytes are returned as ``fragment``). A recovered line comes back with
    ``ok=True``, a ``problem`` whose ``recovered`` is True, and ``clean``:
    the line as it should have been written.

    Returns:
        A :class:`ParsedLine`; ``ok`` is False for blank and unusable lines.
    """
    if _js_trim_empty(raw):
        return ParsedLine(problem=LineProblem(line_no, "blank", "blank line skipped"))
    try:
        return ParsedLine(record=orjson.loads(raw), ok=True)
    except orjson.JSONDecodeError as exc:
        first_error = str(exc)
    # --- slow path: damaged or unusual line
    return _parse_damaged(raw, line_no, first_error)


NOT_JSON = object()
"""What :func:`loads_js` returns for bytes that are not JSON."""


def line_record(raw: bytes, line_no: int = 0) -> Any:
    """The value one line (without its ``\n``) gives a reader that skips
    what it cannot use: ``orjson`` first, else :func:`parse_line`'s
    recovery; :data:`NOT_JSON` for a blank or unusable line. For the
    readers that need no problem report (listing, search); the session
    reader reports problems through :func:`parse_line` itself.

    Args:
        raw: the line's bytes.
        line_no: its line number (1-based; 0 when unknown).

    Returns:
        The decoded JSON value (any type), or :data:`NOT_JSON`.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        parsed = parse_line(raw, line_no)
        return parsed.record if parsed.ok else NOT_JSON


def loads_js(data: bytes) -> Any:
    """``JSON.parse`` of valid UTF-8 bytes, or :data:`NOT_JSON`. orjson
    first; the standard library for what orjson refuses but JavaScript
    accepts (lone surrogate escapes, integers wider than 64 bits)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        # jsonio.loads also reads texts nested deeper than orjson's 1024 levels
        return jsonio.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return NOT_JSON


@dataclass(frozen=True)
class RecoveredLine:
    """What :func:`recover_line` made of a damaged line.

    Attributes:
        record: the parsed JSON value.
        clean: the record's bytes as they should have been written (BOM,
            NUL runs, carriage returns and surrounding blanks removed,
            invalid UTF-8 replaced by U+FFFD; otherwise the original bytes).
        fragment: unusable bytes before a glued record (None if none).
        kinds: what was wrong, most important first (``glued``,
            ``invalid-utf8``, ``nul-bytes``, ``bom``, ``crlf``).
    """

    record: Any
    clean: bytes
    fragment: bytes | None
    kinds: tuple[ProblemKind, ...]


_KIND_TEXT: dict[ProblemKind, str] = {
    "glued": "a truncated record before a complete one (the complete one was read)",
    "invalid-utf8": "invalid UTF-8 replaced by U+FFFD",
    "nul-bytes": "NUL bytes around a record removed",
    "bom": "byte order mark removed",
    "crlf": "carriage return at the end of the line",
}


def _as_valid_utf8(data: bytes, kinds: list[ProblemKind]) -> bytes:
    """``data`` with invalid UTF-8 replaced by U+FFFD (noted as
    ``invalid-utf8`` in ``kinds``), as a recovered line is written back."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        kinds.append("invalid-utf8")
        return data.decode("utf-8", errors="replace").encode("utf-8")
    return data


def recover_line(raw: bytes) -> RecoveredLine | None:
    """Recover a record from a damaged line (without its ``\\n``); pure.

    Steps: drop a UTF-8 BOM at the start, NUL bytes at either end and JSON
    whitespace (including a CRLF's ``\\r``) at either end; replace invalid
    UTF-8 by U+FFFD; parse. If that fails, look for a complete object
    starting at a later ``{"type":"`` (a crash cut a record short and the
    next append was glued to it) and keep the last such suffix that parses
    as an object.

    Returns:
        A :class:`RecoveredLine`, or None when nothing can be recovered
        (also for lines holding only NULs and blanks).
    """
    kinds: list[ProblemKind] = []
    data = raw
    if data.startswith(_BOM):
        data = data[3:]
        kinds.append("bom")
    if b"\x00" in data:
        stripped = data.strip(b"\x00" + _JS_WS)
        if stripped != data.strip(_JS_WS):
            kinds.append("nul-bytes")
        data = stripped
    elif data.endswith(b"\r"):
        kinds.append("crlf")
    data = data.strip(_JS_WS)
    if not data:
        return None
    data = _as_valid_utf8(data, kinds)
    record = loads_js(data)
    if record is not NOT_JSON:
        return RecoveredLine(record, data, None, _ordered(kinds))
    # a torn record with a whole record glued after it
    for match in reversed(list(_GLUED.finditer(data))):
        start = match.start()
        if start == 0:
            break
        tail = data[start:]
        record = loads_js(tail)
        if isinstance(record, dict):
            kinds.append("glued")
            return RecoveredLine(record, tail, data[:start], _ordered(kinds))
    return None


def _ordered(kinds: list[ProblemKind]) -> tuple[ProblemKind, ...]:
    order: tuple[ProblemKind, ...] = ("glued", "invalid-utf8", "nul-bytes", "bom", "crlf")
    return tuple(k for k in order if k in kinds)


_DECODER_PLACE = re.compile(r":? line 1 column (\d+) \(char \d+\)$")


def _utf8_said(raw: bytes, error: str) -> str:
    """orjson's ``error``, its place as "at column N" (the decoder's "line
    1" is the line's own first line, not the file's); for bytes that are not
    UTF-8 (which it calls "surrogates not allowed"), the first bad byte."""
    try:
        raw.decode("utf-8") if "not valid UTF-8" in error else None
    except UnicodeDecodeError as exc:
        return f"invalid UTF-8 at byte {exc.start + 1} of the line, 0x{raw[exc.start]:02x}"
    return _DECODER_PLACE.sub(r" at column \1", error)


def _parse_damaged(raw: bytes, line_no: int, first_error: str) -> ParsedLine:
    recovered = recover_line(raw)
    if recovered is None:
        if raw.strip(b"\x00" + _JS_WS) == b"":
            return ParsedLine(problem=LineProblem(line_no, "nul-bytes", f"{len(raw)} bytes of NULs and blanks (line skipped)"))
        return ParsedLine(problem=LineProblem(line_no, "invalid-json", f"not valid JSON ({_utf8_said(raw, first_error)})"))
    if not recovered.kinds:
        # JSON that orjson refuses but JSON.parse accepts: nothing is wrong
        return ParsedLine(record=recovered.record, ok=True)
    kind = recovered.kinds[0]
    if kind == "glued":
        assert recovered.fragment is not None
        message = (
            f"truncated record ({len(recovered.fragment)} bytes) before a complete record; the complete one was read"
        )
    else:
        message = "; ".join(_KIND_TEXT[k] for k in recovered.kinds)
    return ParsedLine(
        record=recovered.record,
        ok=True,
        problem=LineProblem(line_no, kind, message, recovered=True),
        fragment=recovered.fragment,
        clean=recovered.clean,
    )


# --------------------------------------------------------------------------
# records split over several lines (raw newlines inside their strings)

SPLIT_MAX_LINES = 10_000
"""The most lines one split record may span (pi's own tool output is cut at
2,000 lines, so a record longer than this is no split record of pi's)."""
SPLIT_MAX_BYTES = 32 << 20
"""The most bytes (32 MiB) of pieces held while looking for a record's end."""

_STRING_STOP = re.compile(rb'["\\]')
# what JSON allows between strings: blanks, structure, numbers, true/false/null
_OUTSIDE = re.compile(rb"[ \t\r{}\[\],:0-9.eE+\-truefalsn]*")
_BRACKET = re.compile(rb"[{}\[\]]")
_OPEN, _CLOSED, _BAD = 0, 1, 2


def scan_piece(data: bytes, in_string: bool, depth: int) -> tuple[int, int]:
    """Follow JSON's string and bracket structure over one piece of a
    record: starting ``in_string`` (or not) at bracket ``depth``.

    Returns:
        ``(_OPEN, depth)``: the piece ends inside a string (a raw newline
        cut it); ``(_CLOSED, 0)``: the outermost object closes and only
        blanks follow; ``(_BAD, depth)``: anything else (the piece ends
        outside a string or right after a backslash, or holds bytes JSON
        never has outside strings). Brackets are only counted, not matched:
        parsing the joined text checks the rest.
    """
    pos = 0
    size = len(data)
    while True:
        if in_string:
            m = _STRING_STOP.search(data, pos)
            if m is None:
                return _OPEN, depth
            pos = m.start()
            if data[pos] == 0x5C:  # backslash: skip the escaped byte
                if pos + 1 >= size:
                    return _BAD, depth  # a backslash before the newline
                pos += 2
                continue
            in_string = False
            pos += 1
            continue
        end = _OUTSIDE.match(data, pos).end()  # type: ignore[union-attr]
        for b in _BRACKET.finditer(data, pos, end):
            if b.group() in (b"{", b"["):
                depth += 1
            else:
                depth -= 1
                if depth <= 0:
                    if depth < 0 or data[b.end() :].strip(b"\x00" + _JS_WS):
                        return _BAD, depth
                    return _CLOSED, 0
        if end >= size or data[end] != 0x22:  # a piece ends outside a string, or stray bytes
            return _BAD, depth
        in_string = True
        pos = end + 1


def _first_piece(raw: bytes) -> bytes | None:
    """The bytes of a line that may be the first piece of a split record
    (BOM, NULs and blanks at the start removed), or None."""
    data = raw[3:] if raw.startswith(_BOM) else raw
    data = data.lstrip(b"\x00" + _JS_WS)
    if not data.startswith(b"{"):
        return None
    return data


@dataclass(frozen=True)
class SplitRecord:
    """A record :func:`rejoin_split` put back together.

    Attributes:
        first_line, last_line: the 1-based lines it spanned.
        record: the parsed object.
        clean: the record on one line (without ``\\n``): the pieces joined
            with escaped newlines (``\\r\\n`` where a piece ended in a
            carriage return that is part of the text), BOM, NULs and
            blanks around it removed, invalid UTF-8 replaced by U+FFFD.
        had_newline: False when the last piece is the file's unterminated
            last line.
        kinds: further damage repaired (``invalid-utf8``, ``nul-bytes``,
            ``bom``, ``crlf``).
        raw: the lines as they are in the file, joined by ``\n``.
    """

    first_line: int
    last_line: int
    record: dict[str, Any]
    clean: bytes
    had_newline: bool
    kinds: tuple[ProblemKind, ...]
    raw: bytes = b""

    def problem(self) -> LineProblem:
        """The ``split-record`` :class:`LineProblem` (recovered) naming the lines."""
        extra = "".join(f"; {_KIND_TEXT[k]}" for k in self.kinds)
        return LineProblem(
            self.first_line,
            "split-record",
            f"lines {self.first_line}-{self.last_line} are one record split by unescaped newlines inside its strings; "
            f"it was rejoined{extra}",
            recovered=True,
            end_line=self.last_line,
        )


def rejoin_split(pieces: Sequence[bytes]) -> tuple[dict[str, Any], bytes, tuple[ProblemKind, ...]] | None:
    """Join the pieces of one record that a writer split by putting raw
    newlines inside its JSON strings (pure; beyond pi, which drops every
    piece).

    Each cut becomes the escape ``\\n``. A piece that ends in carriage
    returns keeps them as ``\\r`` escapes (the text held CRLF), except
    that when the record's own line ends in CRLF, one carriage return per
    cut is taken for part of the line end (a text-mode writer turned every
    newline into CRLF). So the decoded strings hold what the writer meant.

    Args:
        pieces: the lines (without ``\\n``), first to last; at least two.

    Returns:
        ``(record, clean line, kinds)`` (see :class:`SplitRecord`), or None
        when the first piece does not open an object and stop inside a
        string, every middle piece does not start and end inside a string,
        the last one does not close the object, or the joined text is not
        exactly one JSON object.
    """
    if len(pieces) < 2:
        return None
    first = _first_piece(pieces[0])
    if first is None:
        return None
    status, depth = scan_piece(first, False, 0)
    if status != _OPEN:
        return None
    for piece in pieces[1:-1]:
        status, depth = scan_piece(piece, True, depth)
        if status != _OPEN:
            return None
    if scan_piece(pieces[-1], True, depth)[0] != _CLOSED:
        return None
    return _join_pieces(pieces[0], first, pieces[1:])


def _join_pieces(raw_first: bytes, first: bytes, rest: Sequence[bytes]) -> tuple[dict[str, Any], bytes, tuple[ProblemKind, ...]] | None:
    """The joined record of pieces that :func:`scan_piece` accepted."""
    kinds: list[ProblemKind] = []
    if raw_first.startswith(_BOM):
        kinds.append("bom")
    last = rest[-1]
    tail = last.rstrip(b"\x00" + _JS_WS)
    ends_crlf = last.rstrip(b"\x00 \t").endswith(b"\r")
    if ends_crlf:
        kinds.append("crlf")
    if b"\x00" in raw_first[: len(raw_first) - len(first)] or b"\x00" in last[len(tail) :]:
        kinds.append("nul-bytes")
    parts: list[bytes] = []
    for piece in (first, *rest[:-1]):
        body = piece.rstrip(b"\r")
        crs = len(piece) - len(body)
        if ends_crlf and crs:
            crs -= 1
        parts.append(body)
        parts.append(b"\\r" * crs + b"\\n")
    parts.append(tail)
    data = b"".join(parts)
    data = _as_valid_utf8(data, kinds)
    record = loads_js(data)
    if record.__class__ is not dict:
        return None
    return record, data, _ordered(kinds)


class Rejoiner:
    """Finds split records in a stream of lines (see :func:`rejoin_split`).

    Feed it every line that is not a usable record on its own, in order
    (lines that are usable records may skip it: a gap in the line numbers
    ends a pending record). A line can start a split record only when it
    opens an object and stops inside a string; the following lines are held
    while each starts and ends inside a string, until one closes the
    object. A line that is a usable record alone is never a piece.

    Cost: each line is scanned at most twice (a line that starts a record
    can never continue one: it changes "inside a string" an odd number of
    times, a middle piece an even number), so a damaged file costs time
    linear in its size; a record is given up after
    :data:`SPLIT_MAX_LINES` lines or :data:`SPLIT_MAX_BYTES` bytes.
    """

    __slots__ = ("pending", "depth", "size", "next_line")

    def __init__(self) -> None:
        self.pending: list[tuple[int, bytes]] = []
        self.depth = 0
        self.size = 0
        self.next_line = 0

    def feed(
        self, line_no: int, raw: bytes, had_newline: bool, is_record: bool
    ) -> tuple[list[tuple[int, bytes]], SplitRecord | None, bool]:
        """Take one line.

        Args:
            line_no, raw, had_newline: the line (without ``\\n``).
            is_record: the line is a usable object on its own.

        Returns:
            ``(released, joined, taken)``: ``released`` are held lines that
            turned out not to be a split record (to be handled as ordinary
            lines, before this one); ``joined`` is the record this line
            completed; ``taken`` is False when the caller handles this line
            itself (after ``released``).
        """
        released: list[tuple[int, bytes]] = []
        if self.pending:
            if line_no != self.next_line or is_record:
                released = self.release()
            else:
                status, depth = scan_piece(raw, True, self.depth)
                if status == _CLOSED:
                    first_no, first_raw = self.pending[0]
                    first = _first_piece(first_raw)
                    assert first is not None
                    joined = _join_pieces(first_raw, first, [r for _n, r in self.pending[1:]] + [raw])
                    if joined is not None:
                        record, clean, kinds = joined
                        raw_all = b"\n".join([r for _n, r in self.pending] + [raw])
                        self.pending = []
                        return [], SplitRecord(first_no, line_no, record, clean, had_newline, kinds, raw_all), True
                    released = self.release()
                elif status == _OPEN and had_newline and len(self.pending) + 1 < SPLIT_MAX_LINES and self.size + len(raw) <= SPLIT_MAX_BYTES:
                    self.pending.append((line_no, raw))
                    self.depth = depth
                    self.size += len(raw)
                    self.next_line = line_no + 1
                    return [], None, True
                else:
                    released = self.release()
        if is_record or not had_newline:
            return released, None, False
        first = _first_piece(raw)
        if first is None:
            return released, None, False
        status, depth = scan_piece(first, False, 0)
        if status != _OPEN:
            return released, None, False
        self.pending = [(line_no, raw)]
        self.depth = depth
        self.size = len(raw)
        self.next_line = line_no + 1
        return released, None, True

    def release(self) -> list[tuple[int, bytes]]:
        """The held lines (none form a record), emptying the hold."""
        released, self.pending = self.pending, []
        return released


def parse_session_entries(content: str | bytes) -> list[Any]:
    """Every JSON value of a JSONL text, malformed and blank lines skipped (pi's
    ``parseSessionEntries``).

    Args:
        content: the file's text (str) or bytes.

    Returns:
        The parsed values in line order (header included).
    """
    data = content.encode("utf-8", errors="surrogatepass") if isinstance(content, str) else content
    records = []
    for i, raw in enumerate(data.strip().split(b"\n"), start=1):
        parsed = parse_line(raw, i)
        if parsed.ok:
            records.append(parsed.record)
    return records
