"""Session files on disk (SPEC 1-3): tolerant reading, appends, atomic rewrites.

Reading never gives up on a damaged file: every line that cannot be used is
reported with its line number and reason and left in the file. A record a
writer split over several lines (raw newlines inside its strings) is read
whole (:func:`rejoin_split`; beyond pi, which drops the pieces). Only a file
whose first record is not a session header is refused
(:class:`SessionFileError`), where pi would truncate it.

Writing is append-only: each entry is one ``write`` of its complete line to a
file opened for appending, under an exclusive ``fcntl`` lock. Rewrites
(migration, repair) go through :func:`atomic_rewrite`: a temp file in the same
directory, fsync, a backup hard link of the original, rename, fsync of the
directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import orjson

from . import jsonio
from ._gc import gc_paused
from .records import CURRENT_SESSION_VERSION

__all__ = [
    "Durability",
    "LineProblem",
    "ParsedLine",
    "SessionFileError",
    "SessionFile",
    "parse_line",
    "recover_line",
    "RecoveredLine",
    "rejoin_split",
    "SplitRecord",
    "parse_session_entries",
    "read_session_file",
    "iter_lines",
    "append_lines",
    "append_lines_checked",
    "AppendResult",
    "AppendError",
    "ConcurrentAppendError",
    "write_side_file",
    "free_side_path",
    "create_file",
    "atomic_rewrite",
    "backup_path",
    "FILE_MODE",
    "DIR_MODE",
    "ensure_dir",
]

FILE_MODE = 0o600
"""Permissions of session files we create."""
DIR_MODE = 0o700
"""Permissions of session directories we create."""

_BOM = b"\xef\xbb\xbf"
_GLUED = re.compile(rb'\{"type":"')
# JavaScript's String.prototype.trim() whitespace that can appear in ASCII/UTF-8 lines
_JS_WS = b" \t\r\n\x0b\x0c"


class Durability(str, Enum):
    """How hard an append works to reach the disk.

    ``entry`` (default): ``fdatasync`` after every append call (``fsync``
    where there is no ``fdatasync``), so an entry whose append returned
    survives a power loss. ``batch``: no sync per entry;
    :meth:`pi_session.SessionManager.flush` fsyncs (a power loss may lose the
    entries since the last flush, never corrupt earlier ones; a process
    crash loses nothing, the data is in the page cache). ``none``: never
    sync (pi's behaviour: the OS decides).

    Measured cost (ext4 on a virtual disk, one
    ``SessionManager.append_message`` on a 100 MB session; see
    ``bench/results/latest.md``): ``entry`` 0.4-0.6 ms, ``none`` 0.25-0.3 ms
    (open, lock, tail check, one write); pi's append (no sync) 0.7-0.8 ms.
    A sync costs far more when the disk is busy or the file has other
    unwritten data, on laptop disks typically 0.1-2 ms, on network
    filesystems more.
    """

    ENTRY = "entry"
    BATCH = "batch"
    NONE = "none"


class SessionFileError(Exception):
    """A session file that cannot be used: missing header, unreadable, not a
    regular file. ``str(error)`` is one line naming the file (and line)."""

    def __init__(self, path: str | os.PathLike[str] | None, message: str, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = self.path or "<session>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class LineProblem:
    """A line we could not use as it is.

    Attributes:
        line: 1-based line number in the file.
        kind: ``blank``, ``invalid-json``, ``not-object``, ``no-type``,
            ``no-id``, ``extra-header``, ``nul-bytes``, ``invalid-utf8``,
            ``glued``, ``bom``, ``torn-tail``, ``duplicate-id``, ``cycle``,
            ``split-record`` (see :func:`rejoin_split`).
        message: what is wrong, one line.
        recovered: True when a record was still read from the line (with the
            damage removed); False when the line is skipped.
        end_line: the last line of a record split over several lines
            (``split-record``, lines ``line`` to ``end_line``); None otherwise.
    """

    line: int
    kind: str
    message: str
    recovered: bool = False
    end_line: int | None = None

    def format(self, path: str | os.PathLike[str] | None) -> str:
        """``<path>:<line>: <message>``."""
        return f"{path or '<session>'}:{self.line}: {self.message}"


@dataclass
class ParsedLine:
    """The outcome of :func:`parse_line` for one line."""

    record: Any = None
    ok: bool = False
    problem: LineProblem | None = None
    fragment: bytes | None = None  # unusable bytes of a recovered line
    clean: bytes | None = None  # the recovered record's bytes as they should be


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


_NOT_JSON = object()


def _loads_js(data: bytes) -> Any:
    """``JSON.parse`` of valid UTF-8 bytes, or :data:`_NOT_JSON`. orjson
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
        return _NOT_JSON


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
    kinds: tuple[str, ...]


_KIND_TEXT = {
    "glued": "a truncated record before a complete one (the complete one was read)",
    "invalid-utf8": "invalid UTF-8 replaced by U+FFFD",
    "nul-bytes": "NUL bytes around a record removed",
    "bom": "byte order mark removed",
    "crlf": "carriage return at the end of the line",
}


def _as_valid_utf8(data: bytes, kinds: list[str]) -> bytes:
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
    kinds: list[str] = []
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
    record = _loads_js(data)
    if record is not _NOT_JSON:
        return RecoveredLine(record, data, None, _ordered(kinds))
    # a torn record with a whole record glued after it
    for match in reversed(list(_GLUED.finditer(data))):
        start = match.start()
        if start == 0:
            break
        tail = data[start:]
        record = _loads_js(tail)
        if isinstance(record, dict):
            kinds.append("glued")
            return RecoveredLine(record, tail, data[:start], _ordered(kinds))
    return None


def _ordered(kinds: list[str]) -> tuple[str, ...]:
    order = ("glued", "invalid-utf8", "nul-bytes", "bom", "crlf")
    return tuple(k for k in order if k in kinds)


def _parse_damaged(raw: bytes, line_no: int, first_error: str) -> ParsedLine:
    recovered = recover_line(raw)
    if recovered is None:
        if raw.strip(b"\x00" + _JS_WS) == b"":
            return ParsedLine(problem=LineProblem(line_no, "nul-bytes", f"{len(raw)} bytes of NULs and blanks (line skipped)"))
        return ParsedLine(problem=LineProblem(line_no, "invalid-json", f"not valid JSON ({first_error})"))
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

_SPLIT_MAX_LINES = 10_000
"""The most lines one split record may span (pi's own tool output is cut at
2,000 lines, so a record longer than this is no split record of pi's)."""
_SPLIT_MAX_BYTES = 32 << 20
"""The most bytes (32 MiB) of pieces held while looking for a record's end."""

_STRING_STOP = re.compile(rb'["\\]')
# what JSON allows between strings: blanks, structure, numbers, true/false/null
_OUTSIDE = re.compile(rb"[ \t\r{}\[\],:0-9.eE+\-truefalsn]*")
_BRACKET = re.compile(rb"[{}\[\]]")
_OPEN, _CLOSED, _BAD = 0, 1, 2


def _scan_piece(data: bytes, in_string: bool, depth: int) -> tuple[int, int]:
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
    kinds: tuple[str, ...]
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


def rejoin_split(pieces: Sequence[bytes]) -> tuple[dict[str, Any], bytes, tuple[str, ...]] | None:
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
    status, depth = _scan_piece(first, False, 0)
    if status != _OPEN:
        return None
    for piece in pieces[1:-1]:
        status, depth = _scan_piece(piece, True, depth)
        if status != _OPEN:
            return None
    if _scan_piece(pieces[-1], True, depth)[0] != _CLOSED:
        return None
    return _join_pieces(pieces[0], first, pieces[1:])


def _join_pieces(raw_first: bytes, first: bytes, rest: Sequence[bytes]) -> tuple[dict[str, Any], bytes, tuple[str, ...]] | None:
    """The joined record of pieces that :func:`_scan_piece` accepted."""
    kinds: list[str] = []
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
    record = _loads_js(data)
    if record.__class__ is not dict:
        return None
    return record, data, _ordered(kinds)


class _Rejoiner:
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
    :data:`_SPLIT_MAX_LINES` lines or :data:`_SPLIT_MAX_BYTES` bytes.
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
                status, depth = _scan_piece(raw, True, self.depth)
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
                elif status == _OPEN and had_newline and len(self.pending) + 1 < _SPLIT_MAX_LINES and self.size + len(raw) <= _SPLIT_MAX_BYTES:
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
        status, depth = _scan_piece(first, False, 0)
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


_BLOCK_SIZE = 1 << 20  # bytes read at a time by iter_lines (1 MiB)


def _line_blocks(f: Any, block_size: int = _BLOCK_SIZE) -> Iterator[list[bytes]]:
    """Lists of the complete lines (without ``\\n``) of a binary file, one
    list per block read; an unterminated last line comes last, alone, as
    ``[tail, None]``."""
    pending: list[bytes] = []  # the start of a line that continues in the next block
    while True:
        block = f.read(block_size)
        if not block:
            break
        lines = block.split(b"\n")
        if len(lines) == 1:
            pending.append(block)  # a line longer than a block
            continue
        if pending:
            pending.append(lines[0])
            lines[0] = b"".join(pending)
            pending = []
        tail = lines.pop()  # after the block's last newline (often empty)
        yield lines
        if tail:
            pending.append(tail)
    if pending:
        yield [b"".join(pending), None]  # type: ignore[list-item]


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes, bool]]:
    """Stream a file's lines without holding the whole file (it is read in
    1 MiB blocks): yields ``(line_no, raw_without_newline, had_newline)``;
    ``had_newline`` is False only for an unterminated last line."""
    line_no = 0
    with open(path, "rb") as f:
        for lines in _line_blocks(f):
            if len(lines) == 2 and lines[1] is None:
                line_no += 1
                yield line_no, lines[0], False
                return
            for raw in lines:
                line_no += 1
                yield line_no, raw, True


@dataclass
class SessionFile:
    """A session file as read: the records, the valid entries and what was
    wrong with the rest.

    Attributes:
        path: the file (None for text parsed in memory).
        header: the session header, or None for an empty file.
        records: every parsed JSON object in line order (header included);
            :func:`pi_session.migrate.migrate_session_entries` works on these.
        record_lines: the line number of each record.
        fragments: line number → unusable bytes of lines a record was
            recovered from (kept on rewrite).
        spans: first line → last line of each record rejoined from several
            lines (``split-record``; its ``record_lines`` entry is the first).
        entries: the usable entries (objects with a ``type`` and a string
            ``id``), header excluded, in file order.
        problems: :class:`LineProblem` list, by line.
        line_count: number of lines.
        ends_with_newline: False when the last line is torn (no ``\\n``).
        size: bytes; mtime_ns: modification time when read.
        migrated_from: the version the records were migrated from, if any.
        entry_columns: ``(ids, parent_ids, labels)`` gathered while reading
            (None when the entries were sorted out after a migration):
            each entry's ``id`` and ``parentId`` (None when absent), in
            ``entries`` order, and the entries of type ``label``; see
            :class:`pi_session.tree.SessionTree`, which takes them instead
            of going over 100,000 entries again.
    """

    path: Path | None
    header: dict[str, Any] | None
    records: list[dict[str, Any]] = field(default_factory=list)
    record_lines: list[int] = field(default_factory=list)
    fragments: dict[int, bytes] = field(default_factory=dict)
    spans: dict[int, int] = field(default_factory=dict)
    entries: list[dict[str, Any]] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)
    line_count: int = 0
    ends_with_newline: bool = True
    size: int = 0
    mtime_ns: int = 0
    migrated_from: int | None = None
    entry_columns: tuple[list[Any], list[Any], list[dict[str, Any]]] | None = None

    @property
    def version(self) -> int:
        """The header's ``version`` (1 when absent)."""
        if self.header is None:
            return 0
        v = self.header.get("version")
        return v if isinstance(v, int) and not isinstance(v, bool) else 1

    def warnings(self) -> list[str]:
        """Every problem as ``<path>:<line>: <message>``."""
        return [p.format(self.path) for p in self.problems]


_JSON_KINDS = {int: "a number", float: "a number", bool: "a boolean", list: "an array", dict: "an object"}
"""How an error message names a decoded JSON value's kind."""


def _collect_entries(sf: SessionFile) -> None:
    """Fill ``sf.entries`` from ``sf.records`` (after migration) and report
    records that cannot be entries."""
    entries: list[dict[str, Any]] = []
    sf.entries = entries
    append = entries.append
    for record, line_no in zip(sf.records, sf.record_lines):
        rtype = record.get("type")
        # fast path: an ordinary entry (string type other than "session", string id)
        if rtype.__class__ is str and rtype != "session" and record.get("id").__class__ is str:
            append(record)
        else:
            _collect_other(sf, record, line_no)


def _collect_other(sf: SessionFile, record: dict[str, Any], line_no: int) -> None:
    """What :func:`_collect_entries` does with a record that is not an
    ordinary entry: the header is skipped, a second header, a record
    without a string ``type`` or without a string ``id`` is reported."""
    rtype = record.get("type")
    if rtype == "session":
        if record is not sf.header:
            sf.problems.append(LineProblem(line_no, "extra-header", "a second session header (ignored)"))
        return
    if not isinstance(rtype, str):
        sf.problems.append(LineProblem(line_no, "no-type", "record has no \"type\" (skipped)"))
        return
    rid = record.get("id")
    if not isinstance(rid, str):
        what = "has no id" if rid is None else f"id is {_JSON_KINDS.get(type(rid), 'not a string')}, not a string"
        sf.problems.append(LineProblem(line_no, "no-id", f"{rtype} entry {what} (skipped; `pi-session check` tells more)"))
        return
    sf.entries.append(record)
    if sf.entry_columns is not None:
        ids, parent_ids, labels = sf.entry_columns
        ids.append(record["id"])
        parent_ids.append(record.get("parentId"))
        if rtype == "label":
            labels.append(record)


def read_session_file(path: str | os.PathLike[str], *, migrate: bool = True) -> SessionFile:
    """Read and validate a session file; never modifies it.

    Args:
        path: the ``.jsonl`` file.
        migrate: migrate v1/v2 records to v3 in memory (see
            :mod:`pi_session.migrate`); the caller decides whether to rewrite.

    Returns:
        A :class:`SessionFile`. An empty file (no bytes, or only whitespace)
        gives ``header=None``.

    Raises:
        SessionFileError: the file cannot be read (missing, a directory, no
            permission) or its first record is not a session header with a
            string id.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SessionFileError(p, "no such session file") from None
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    if not _is_regular(st.st_mode):
        raise SessionFileError(p, "not a regular file")
    sf = SessionFile(path=p, header=None, size=st.st_size, mtime_ns=st.st_mtime_ns)
    # Parsing allocates about a million containers for a 100 MB file; the
    # cyclic GC would scan the growing heap again and again (none of it can
    # be garbage), so it is paused while reading (see pi_session._gc).
    with gc_paused():
        return _read_records(p, sf, migrate)


_intern = sys.intern
_MESSAGE_WORDS = ("role", "api", "provider", "model", "stopReason", "toolName")


_MAX_SHAPES = 4096
# key sequence -> (class, first key) of its key-sharing dicts, or None: not shared
_shapes: dict[tuple[str, ...], tuple[type, str] | None] = {}


def _new_shape(d: dict[str, Any], shape: tuple[str, ...]) -> dict[str, Any]:
    """:func:`_key_sharing` of the first dict of a key sequence: makes its
    class (whose shared key table this dict fills, in this order)."""
    if len(_shapes) >= _MAX_SHAPES or len(shape) > 30 or not shape:
        if len(_shapes) < _MAX_SHAPES:
            _shapes[shape] = None
        return d
    cls = type("SharedKeys", (), {})
    shared = cls().__dict__
    shared.update(d.items())  # item by item: merging a dict would copy its own table
    _shapes[shape] = (cls, shape[0])
    return shared


def _key_sharing(d: dict[str, Any]) -> dict[str, Any]:
    """An equal dict (same keys, same order, same value objects) that shares
    its key table with every other dict of the same keys in the same order.

    This is CPython's key-sharing dictionary (PEP 412), the one instance
    attributes use: the result is an ordinary ``dict`` (``type(d) is dict``)
    that stores only its values, which makes a 5-key dict about 110 bytes
    instead of about 180, and an 8-key one about 140 instead of about 270.
    It behaves as any dict: adding a key it did not have turns it into an
    ordinary one. One class per key sequence supplies the shared table (at
    most 4,096 sequences; further ones, empty dicts and dicts of more than
    30 keys are returned as they are). On other Python implementations it
    is just a copy.

    Cost: about 0.5 us per dict (the first key is stored on its own, so that
    ``update`` merges into a non-empty dict, entry by entry, instead of
    cloning ``d``'s own table)."""
    shape = tuple(d)
    plan: tuple[type, str] | None | Literal[False] = _shapes.get(shape, False)
    if plan is False:
        return _new_shape(d, shape)
    if plan is None:
        return d
    shared = plan[0]().__dict__
    shared[plan[1]] = None
    shared.update(d)
    return shared


# message key sequence -> (its keys among _MESSAGE_WORDS, has "toolCallId",
# has "content", has "usage", its _shapes entry or False while unknown)
_message_plans: dict[tuple[str, ...], tuple[tuple[str, ...], bool, bool, bool, Any]] = {}


def _message_plan(shape: tuple[str, ...]) -> tuple[tuple[str, ...], bool, bool, bool, Any]:
    """What :func:`_compact_record` does to a message of these keys (so
    that it looks up only keys the message has)."""
    plan = (
        tuple(k for k in shape if k in _MESSAGE_WORDS),
        "toolCallId" in shape,
        "content" in shape,
        "usage" in shape,
        False,
    )
    if len(_message_plans) < _MAX_SHAPES:
        _message_plans[shape] = plan
    return plan


def _compact_record(record: dict[str, Any], previous: dict[str, Any] | None, call_ids: dict[str, str]) -> dict[str, Any]:
    """The same record stored in less memory (a 100 MB session takes about
    85 MB less, for about 0.25 s):

    - the strings that repeat from line to line become one shared object
      each: types, roles, provider, model and tool names (interned), a
      parentId equal to the previous entry's id, a tool result's toolCallId
      equal to a call id of the latest assistant message (``call_ids``,
      updated here);
    - the entry, its message, content blocks, usage, cost and tool-call
      arguments become key-sharing dicts (:func:`_key_sharing`).

    Values and key order are unchanged; only object identity differs."""
    intern = _intern
    share = _key_sharing
    value = record.get("type")
    if value.__class__ is str:
        record["type"] = intern(value)
    if previous is not None:
        parent = record.get("parentId")
        if parent.__class__ is str:
            pid = previous.get("id")
            if parent == pid:
                record["parentId"] = pid
    message = record.get("message")
    if message.__class__ is not dict:
        return share(record)
    shape = tuple(message)
    plan = _message_plans.get(shape)
    if plan is None:
        plan = _message_plan(shape)
    words, call_id_key, content_key, usage_key, sharing = plan
    for key in words:
        value = message[key]
        if value.__class__ is str:
            message[key] = intern(value)
    if call_id_key:
        call_id = message["toolCallId"]
        if call_id.__class__ is str:
            shared = call_ids.get(call_id)
            if shared is not None:
                message["toolCallId"] = shared
    if content_key:
        content = message["content"]
        if content.__class__ is list:
            calls_seen = False
            for i, block in enumerate(content):
                if block.__class__ is dict:
                    value = block.get("type")
                    if value.__class__ is str:
                        block["type"] = intern(value)
                        if value == "toolCall":
                            name = block.get("name")
                            if name.__class__ is str:
                                block["name"] = intern(name)
                            call_id = block.get("id")
                            if call_id.__class__ is str:
                                if not calls_seen:
                                    call_ids.clear()
                                    calls_seen = True
                                call_ids[call_id] = call_id
                            arguments = block.get("arguments")
                            if arguments.__class__ is dict:
                                block["arguments"] = share(arguments)
                    content[i] = share(block)
    if usage_key:
        usage = message["usage"]
        if usage.__class__ is dict:
            cost = usage.get("cost")
            if cost.__class__ is dict:
                usage["cost"] = share(cost)
            message["usage"] = share(usage)
    if sharing is None:  # the message's own key sequence is not shared
        record["message"] = message
        return share(record)
    if sharing is False:
        sharing = _shapes.get(shape, False)
        if sharing is False:
            record["message"] = _new_shape(message, shape)
            return share(record)
        _message_plans[shape] = (words, call_id_key, content_key, usage_key, sharing)
        if sharing is None:
            record["message"] = message
            return share(record)
    shared = sharing[0]().__dict__
    shared[sharing[1]] = None
    shared.update(message)
    record["message"] = shared
    return share(record)


def _no_columns(value: Any) -> None:  # pragma: no cover - never called
    raise AssertionError("entry columns used before the header")


def _read_records(p: Path, sf: SessionFile, migrate: bool) -> SessionFile:
    """The reading loop of :func:`read_session_file`.

    Every terminated line after the header that orjson decodes to an object
    takes the fast path: decode, :func:`_compact_record`, and, once the
    header says no migration is coming (version 3, or ``migrate`` off),
    sorting into ``sf.entries`` right away (what :func:`_collect_entries`
    would do after the loop) and into ``sf.entry_columns``. Every other line (before the header, damaged,
    not an object, the unterminated last one) takes :func:`_read_slow`."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    compact = _compact_record
    records_append = sf.records.append
    lines_append = sf.record_lines.append
    entries_append = sf.entries.append
    line_no = 0
    previous: dict[str, Any] | None = None
    call_ids: dict[str, str] = {}
    header_seen = False  # the fast path starts after the header
    ids_append: Callable[[Any], None] = _no_columns
    parents_append: Callable[[Any], None] = _no_columns
    labels_append: Callable[[dict[str, Any]], None] = _no_columns
    sorting = False  # sort records into entries while reading
    rejoiner = _Rejoiner()  # records split over lines (slow path only)
    try:
        with open(p, "rb") as f:
            for lines in _line_blocks(f):
                if lines[-1] is None:  # the unterminated last line
                    line_no += 1
                    record, record_line = _read_slow(p, sf, rejoiner, lines[0], line_no, False)
                    if sorting and record is not None:
                        _collect_other(sf, record, record_line)
                    break
                for raw in lines:
                    line_no += 1
                    if header_seen:
                        try:
                            record = loads(raw)
                        except decode_error:
                            pass
                        else:
                            if record.__class__ is dict:
                                record = compact(record, previous, call_ids)
                                previous = record
                                records_append(record)
                                lines_append(line_no)
                                if sorting:
                                    rtype = record.get("type")
                                    rid = record.get("id")
                                    if rtype.__class__ is str and rid.__class__ is str and rtype != "session":
                                        entries_append(record)
                                        ids_append(rid)
                                        parents_append(record.get("parentId"))
                                        if rtype == "label":
                                            labels_append(record)
                                    else:
                                        _collect_other(sf, record, line_no)
                                continue
                    record, record_line = _read_slow(p, sf, rejoiner, raw, line_no, True)
                    if header_seen:
                        if sorting and record is not None:
                            _collect_other(sf, record, record_line)
                    elif sf.header is not None:
                        header_seen = True
                        sorting = not migrate or sf.version >= CURRENT_SESSION_VERSION
                        if sorting:
                            sf.entry_columns = ([], [], [])
                            ids_append = sf.entry_columns[0].append
                            parents_append = sf.entry_columns[1].append
                            labels_append = sf.entry_columns[2].append
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    for held_no, held in rejoiner.release():  # lines of a record the file ends inside
        _read_other(p, sf, held, held_no, True)
    sf.line_count = line_no
    if sf.header is None:
        unusable = [pr for pr in sf.problems if pr.kind != "blank"]
        if unusable:
            first = unusable[0]
            if all("bytes of NULs and blanks" in pr.message for pr in unusable):
                reason = "the file holds only NUL bytes"
            elif "not valid JSON" in first.message:
                reason = f"line {first.line} is not JSON" + (
                    " (binary data)" if "UTF-8" in first.message
                    else " (cut short, no newline)" if first.kind == "torn-tail" else ""
                )
            else:
                reason = f"no session header (line {first.line}: {first.message})"
            raise SessionFileError(p, f"not a pi session: {reason}", line=first.line)
        return sf
    if not sorting:
        if migrate:
            from .migrate import migrate_session_entries

            version = sf.version
            if migrate_session_entries(sf.records):
                sf.migrated_from = version
        _collect_entries(sf)
    sf.problems.sort(key=lambda pr: pr.line)
    return sf


def _read_slow(
    p: Path, sf: SessionFile, rejoiner: _Rejoiner, raw: bytes, line_no: int, had_newline: bool
) -> tuple[dict[str, Any] | None, int]:
    """A line off the fast path: :func:`_read_other`, after ``rejoiner``
    has had a look at it (it may hold the line as a piece of a split
    record, complete such a record, or give back held lines that were not
    one, which are reported here as ordinary lines).

    Returns:
        ``(record appended or None, its first line)``.
    """
    parsed = parse_line(raw, line_no)
    released, joined, taken = rejoiner.feed(line_no, raw, had_newline, parsed.ok and parsed.record.__class__ is dict)
    for held_no, held in released:
        _read_other(p, sf, held, held_no, True)
    if joined is not None:
        sf.line_count = line_no
        sf.problems.append(joined.problem())
        if not had_newline:
            sf.ends_with_newline = False
            sf.problems.append(
                LineProblem(line_no, "no-newline", "last line has no newline (a newline is added before the next append)", recovered=True)
            )
        sf.spans[joined.first_line] = line_no
        return _accept(p, sf, joined.record, joined.first_line), joined.first_line
    if taken:
        sf.line_count = line_no
        return None, line_no
    return _read_other(p, sf, raw, line_no, had_newline, parsed), line_no


def _accept(p: Path, sf: SessionFile, record: dict[str, Any], line_no: int) -> dict[str, Any]:
    """Append a usable record read off the fast path; the first one must be
    the session header (else :class:`SessionFileError`)."""
    if sf.header is None and not sf.records:
        if record.get("type") != "session" or not isinstance(record.get("id"), str):
            raise SessionFileError(p, "not a pi session: the first record is not a session header", line=line_no)
        sf.header = record
    sf.records.append(record)
    sf.record_lines.append(line_no)
    return record


def _read_other(
    p: Path, sf: SessionFile, raw: bytes, line_no: int, had_newline: bool, parsed: ParsedLine | None = None
) -> dict[str, Any] | None:
    """One line off the fast path of :func:`_read_records`: parse it the
    careful way (:func:`parse_line`), report what is wrong with it, take
    the first record as the header (or refuse the file) and append a
    usable record to ``sf.records``.

    Returns:
        The record appended, or None.

    Raises:
        SessionFileError: the first record is not a session header.
    """
    sf.line_count = line_no
    if parsed is None:
        parsed = parse_line(raw, line_no)
    if not had_newline:
        sf.ends_with_newline = raw == b""
        if raw and parsed.ok:
            sf.problems.append(
                LineProblem(line_no, "no-newline", "last line has no newline (a newline is added before the next append)", recovered=True)
            )
    if parsed.problem is not None:
        if not had_newline and not parsed.ok and parsed.problem.kind != "blank":
            sf.problems.append(
                LineProblem(line_no, "torn-tail", f"last line is cut short ({len(raw)} bytes, no newline): {parsed.problem.message}")
            )
        else:
            sf.problems.append(parsed.problem)
    if not parsed.ok:
        return None
    record = parsed.record
    if not isinstance(record, dict):
        sf.problems.append(LineProblem(line_no, "not-object", f"JSON {type(record).__name__} instead of an object (skipped)"))
        return None
    if parsed.fragment is not None:
        sf.fragments[line_no] = parsed.fragment
    return _accept(p, sf, record, line_no)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


# --------------------------------------------------------------------------
# writing


def ensure_dir(directory: str | os.PathLike[str]) -> None:
    """Create ``directory`` and any missing parents, each with mode 0700
    (``os.makedirs`` would give the parents the umask's default); existing
    directories keep their mode."""
    missing: list[Path] = []
    current = Path(directory)
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            if not d.is_dir():
                raise


# fdatasync flushes the appended bytes and the new file size (what reading
# them back needs) but not the modification time: about half an fsync's cost.
_data_sync = getattr(os, "fdatasync", os.fsync)


def _fsync_dir(directory: str | os.PathLike[str]) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class AppendError(OSError):
    """An append failed part way. ``lines_written`` complete lines of the
    batch are in the file (and stay there); the failed line was cut off
    again, so the file still ends on a line boundary."""

    def __init__(self, path: Path, lines_written: int, cause: OSError) -> None:
        super().__init__(cause.errno, f"{path}: append failed after {lines_written} line(s): {cause.strerror or cause}")
        self.lines_written = lines_written
        self.path = path


@contextlib.contextmanager
def _locked_append_fd(path: Path, *, create: bool = True) -> Iterator[tuple[int, bool]]:
    """An fd open for appending to ``path``, exclusively ``flock``-ed, and
    still the file at ``path`` (a concurrent atomic rewrite replaces the
    inode while we wait for the lock: then we reopen). Yields ``(fd,
    created)``; ``created`` is True when this call created the file.

    Raises:
        FileNotFoundError: ``path`` is missing and ``create`` is False.
        SessionFileError: the file keeps being replaced.
    """
    for _ in range(100):
        created = False
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            if not create:
                raise
            try:
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
                created = True
            except FileExistsError:
                continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd, created
                return
        finally:
            os.close(fd)  # closing releases the lock
    raise SessionFileError(path, "the file keeps being replaced while we try to append")


def _last_line_start(fd: int, size: int) -> int:
    start = size
    chunk = 65536
    while start > 0:
        read_from = max(0, start - chunk)
        block = os.pread(fd, start - read_from, read_from)
        nl = block.rfind(b"\n")
        if nl >= 0:
            return read_from + nl + 1
        start = read_from
    return 0


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte of ``data`` is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def free_side_path(path: str | os.PathLike[str], suffix: str) -> Path:
    """A name ``<file>.<suffix>`` (or ``<file>.<suffix>.<n>``) that does not exist yet."""
    p = Path(path)
    candidate = p.with_name(f"{p.name}.{suffix}")
    n = 1
    while os.path.lexists(candidate):
        candidate = p.with_name(f"{p.name}.{suffix}.{n}")
        n += 1
    return candidate


def write_side_file(path: str | os.PathLike[str], suffix: str, data: bytes) -> Path:
    """Write ``data`` to a new file next to ``path`` (mode 0600, fsync'd,
    never replacing anything) named by :func:`free_side_path`.

    Returns:
        The side file's path.
    """
    for _ in range(100):
        side = free_side_path(path, suffix)
        try:
            sfd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
        except FileExistsError:
            continue
        try:
            _write_all(sfd, data)
            os.fsync(sfd)
        finally:
            os.close(sfd)
        _fsync_dir(Path(path).parent)
        return side
    raise FileExistsError(errno.EEXIST, "no free side-file name", str(path))


def _repair_torn_tail(fd: int, path: Path, first_line: bytes | None = None) -> str | None:
    """Called under the append lock: if the file does not end in ``\\n``
    (a crash mid-append), make the next append start on a line of its own.

    A last line from which a record can be read (a complete record that only
    lost its newline, or one :func:`recover_line` recovers) just gets its
    newline. Anything else is a fragment: it is copied to a side file
    ``<name>.torn-<offset>`` (fsync'd first) and cut off the file.

    Args:
        fd: the locked append fd.
        path: the file's path (for the side file and messages).
        first_line: the first line about to be appended; when the fragment
            is the whole file and that line is not a session header, we
            refuse rather than leave a file without a header.

    Returns:
        A one-line description of what was done, or None.

    Raises:
        SessionFileError: the whole file is one torn line and we are not
            writing a header.
    """
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start = _last_line_start(fd, size)
    tail = os.pread(fd, size - start, start)
    if recover_line(tail) is not None:
        os.write(fd, b"\n")
        return f"{path}: the last line had no newline; added one before appending"
    if start > 0 and _ends_split_record(fd, start, tail):
        os.write(fd, b"\n")
        return f"{path}: the last line (the end of a record split over several lines) had no newline; added one before appending"
    if start == 0 and not (first_line or b"").startswith(b'{"type":"session"'):
        raise SessionFileError(path, "the file holds only a torn first line (no session header); not appending")
    side = write_side_file(path, f"torn-{start}", tail)
    os.ftruncate(fd, start)
    os.fsync(fd)
    return f"{path}: a torn last line ({len(tail)} bytes, no newline) was moved to {side.name}"


def _ends_split_record(fd: int, start: int, tail: bytes) -> bool:
    """Whether ``tail``, the unterminated last line starting at byte
    ``start``, completes a record split over several lines (which the
    reader rejoins, so it must stay). Reads back at most
    :data:`_SPLIT_MAX_BYTES`; only called for a last line that is not a
    record on its own."""
    low = max(0, start - _SPLIT_MAX_BYTES)
    lines = os.pread(fd, start - low, low).split(b"\n")[:-1]
    if low > 0:
        lines = lines[1:]  # may be cut
    rejoiner = _Rejoiner()
    for n, raw in enumerate(lines):
        parsed = parse_line(raw, n + 1)
        rejoiner.feed(n + 1, raw, True, parsed.ok and parsed.record.__class__ is dict)
    return rejoiner.feed(len(lines) + 1, tail, False, False)[1] is not None


class ConcurrentAppendError(SessionFileError):
    """Raised in strict mode when another writer appended to the session
    since this process last read or wrote it (see
    :meth:`pi_session.SessionManager.open`'s ``concurrent`` option).
    Nothing was written. ``count`` is the number of entries appended by the
    other writer."""

    def __init__(self, path: str | os.PathLike[str], count: int) -> None:
        super().__init__(
            path,
            f"{count} entr{'y was' if count == 1 else 'ies were'} appended by another writer since this session was read; "
            "nothing was written (reopen the session to continue from its real last entry)",
        )
        self.count = count


@dataclass
class AppendResult:
    """What :func:`append_lines_checked` did: ``notes`` (repairs done
    first), ``size`` (the file's size in bytes after the append, read under
    the lock) and ``foreign`` (the lines another writer had appended since
    ``expected_size``, as read under the lock)."""

    notes: list[str]
    size: int
    foreign: list[bytes]


def append_lines(
    path: str | os.PathLike[str],
    lines: Sequence[bytes],
    durability: Durability = Durability.ENTRY,
) -> list[str]:
    """Append complete lines to a session file, each with one ``write``.

    Opens the file with ``O_APPEND`` and holds an exclusive ``flock`` for the
    duration, so that two processes appending to one session (both through
    this function) never interleave bytes. A torn last line left by a crash
    is repaired first (see :func:`_repair_torn_tail`). If a write fails part
    way (disk full), the partial line is cut off again before raising, so
    the file always ends on a line boundary.

    Cost: see :class:`Durability`.

    Args:
        path: the session file (created with mode 0600 if missing).
        lines: complete lines, each ending in ``\\n``.
        durability: ``ENTRY`` syncs the file's data (``fdatasync``; and its
            directory when the call created it) before returning;
            ``BATCH``/``NONE`` do not.

    Returns:
        Notes about repairs done before appending (usually empty).

    Raises:
        AppendError: a write or the fsync failed; ``lines_written`` tells
            how many of ``lines`` are in the file.
        SessionFileError: see :func:`_repair_torn_tail`.
    """
    return append_lines_checked(path, lines, durability).notes


def append_lines_checked(
    path: str | os.PathLike[str],
    lines: Sequence[bytes],
    durability: Durability = Durability.ENTRY,
    *,
    expected_size: int | None = None,
    on_grown: Callable[[list[bytes]], Sequence[bytes] | None] | None = None,
) -> AppendResult:
    """:func:`append_lines`, plus detection of other writers: under the
    append lock, when the file holds bytes past ``expected_size`` (the size
    this process last read or wrote), the complete lines from there (from
    the start of the line holding ``expected_size`` when it is not a line
    boundary) are passed to ``on_grown``, which returns the lines to write
    instead (or None to keep ``lines``), or raises to write nothing. The
    caller skips lines it already knows (a re-read line is harmless).

    Returns:
        An :class:`AppendResult`.

    Raises:
        AppendError, SessionFileError: as :func:`append_lines`; whatever
            ``on_grown`` raises (nothing is written then).
    """
    p = Path(path)
    notes: list[str] = []
    foreign: list[bytes] = []
    with _locked_append_fd(p) as (fd, created):
        note = _repair_torn_tail(fd, p, lines[0] if lines else None)
        if note:
            notes.append(note)
        if expected_size is not None and on_grown is not None:
            size = os.fstat(fd).st_size
            if size != expected_size:
                start = min(expected_size, size)
                if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
                    start = _last_line_start(fd, start)
                tail = os.pread(fd, size - start, start) if size > start else b""
                foreign = [line + b"\n" for line in tail.split(b"\n")[:-1] if line.strip()]
                if foreign:
                    replacement = on_grown(foreign)
                    if replacement is not None:
                        lines = replacement
        done = 0
        for line in lines:
            before = os.fstat(fd).st_size
            try:
                _write_all(fd, line)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                raise AppendError(p, done, exc) from exc
            done += 1
        if durability is Durability.ENTRY:
            try:
                _data_sync(fd)
            except OSError as exc:
                raise AppendError(p, done, exc) from exc
        size = os.fstat(fd).st_size
    if created and durability is Durability.ENTRY:
        _fsync_dir(p.parent)
    return AppendResult(notes, size, foreign)


def create_file(path: str | os.PathLike[str], lines: Iterable[bytes], durability: Durability = Durability.ENTRY) -> None:
    """Write a new session file atomically (temp file + hard link): it
    appears whole or not at all, mode 0600, in a directory created 0700.
    Refuses to replace an existing file.

    Raises:
        FileExistsError: ``path`` exists.
    """
    p = Path(path)
    if os.path.lexists(p):
        raise FileExistsError(errno.EEXIST, "session file exists", str(p))
    ensure_dir(p.parent)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb", closefd=True) as f:
            for line in lines:
                f.write(line)
            f.flush()
            if durability is not Durability.NONE:
                os.fsync(f.fileno())
        os.link(tmp, p)  # fails if p appeared meanwhile: never clobber
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    if durability is not Durability.NONE:
        _fsync_dir(p.parent)


def backup_path(path: str | os.PathLike[str], tag: str) -> Path:
    """A free name ``<file>.<tag>.bak`` (or ``.<tag>.bak.<n>``) next to ``path``."""
    return free_side_path(path, f"{tag}.bak")


def _make_backup(path: Path, tag: str, fd_size: int) -> Path:
    """Keep the current content of ``path`` as a backup: a hard link (free,
    and the old inode survives the rename), else a fsync'd 0600 copy."""
    backup = backup_path(path, tag)
    try:
        os.link(path, backup)
        return backup
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    with open(path, "rb") as src:
        data = src.read(fd_size)
    bfd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        _write_all(bfd, data)
        os.fsync(bfd)
    finally:
        os.close(bfd)
    return backup


def atomic_rewrite(
    path: str | os.PathLike[str],
    lines: Iterable[bytes],
    *,
    backup_tag: str | None,
    expect_size: int | None = None,
    expect_mtime_ns: int | None = None,
) -> Path | None:
    """Replace a file's content atomically, keeping the original as a backup.

    Steps: write ``lines`` to a temp file ``.<name>.<random>.tmp`` in the
    same directory (mode 0600, or the original's mode) and fsync it; under
    the append lock, check the file did not change since it was read
    (``expect_size``/``expect_mtime_ns``), hard-link the original to the
    backup name, rename the temp file over the original, fsync the
    directory. Killed at any point, ``path`` holds either the old or the new
    content, whole (a killed run may leave the temp file behind).

    Args:
        path: the file to replace (must exist); a symlink is followed, so
            the file it names is replaced and the link stays.
        lines: the new content, line by line (each ending in ``\\n``).
        backup_tag: tag of the backup name (e.g. ``"v1"``, ``"repair"``);
            None for no backup.
        expect_size, expect_mtime_ns: refuse if the file changed since read.

    Returns:
        The backup path, or None.

    Raises:
        SessionFileError: the file changed while it was being rewritten.
        OSError: on I/O failure, or ``path`` is missing (the original is
            then untouched).
    """
    # Through a symlink the file it names is rewritten (replacing the link
    # would leave the real file behind, unchanged, for the next append).
    p = Path(os.path.realpath(path))
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    backup: Path | None = None
    try:
        with os.fdopen(fd, "wb", closefd=True) as f:
            for line in lines:
                f.write(line)
            f.flush()
            os.fsync(f.fileno())
        with _locked_append_fd(p, create=False) as (lock_fd, _created):
            st = os.fstat(lock_fd)
            if (expect_size is not None and st.st_size != expect_size) or (
                expect_mtime_ns is not None and st.st_mtime_ns != expect_mtime_ns
            ):
                raise SessionFileError(p, "the file changed while it was being rewritten; nothing was changed")
            with contextlib.suppress(OSError):
                os.chmod(tmp, st.st_mode & 0o777)
            if backup_tag is not None:
                backup = _make_backup(p, backup_tag, st.st_size)
            os.replace(tmp, p)
            _fsync_dir(p.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return backup


def rewrite_records(sf: SessionFile, *, backup_tag: str) -> Path | None:
    """Rewrite ``sf.path`` with its (migrated) records serialized again, every
    other line kept byte for byte (unparseable lines, blank lines, the
    fragments of recovered lines on a line of their own); a record split
    over several lines (``sf.spans``) becomes one line.

    Returns:
        The backup path.
    """
    assert sf.path is not None
    by_line = dict(zip(sf.record_lines, sf.records))
    pieces = {n for first, last in sf.spans.items() for n in range(first + 1, last + 1)}

    def lines() -> Iterator[bytes]:
        for line_no, raw, _had_newline in iter_lines(sf.path):  # type: ignore[arg-type]
            if line_no in pieces:
                continue  # a later piece of a split record, written whole with its first line
            record = by_line.get(line_no)
            if record is None:
                yield raw + b"\n"
                continue
            fragment = sf.fragments.get(line_no)
            if fragment:
                yield fragment + b"\n"
            yield jsonio.dumps_line(record)

    return atomic_rewrite(
        sf.path, lines(), backup_tag=backup_tag, expect_size=sf.size, expect_mtime_ns=sf.mtime_ns
    )
