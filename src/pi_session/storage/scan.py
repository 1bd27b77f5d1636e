"""The one line scanner of session files: every line classified once, for
reading (:mod:`.reader`), checking and repairing
(:mod:`pi_session.check.repair`) and the torn-tail check of appends
(:mod:`.append`).

:class:`LineScanner` takes lines one at a time (push);
:func:`scan_lines` runs it over an iterable of lines (pull; a file's lines
come from :func:`~.reader.iter_lines`). Each line comes out as one
:class:`ScannedLine`: a record (``record``), a record recovered from a
damaged line (``recovered``), the pieces of a record a writer split over
several lines, rejoined (``split``, one :class:`ScannedLine` for all its
lines), a line that cannot be used (``damaged``) or a blank line
(``blank``), with its line numbers and its :class:`~.model.LineProblem`.
Pure: no file access."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .lines import SplitRecord, Rejoiner, parse_line
from .model import LineProblem, ParsedLine

ScanStatus = Literal["record", "recovered", "split", "damaged", "blank"]
"""What a scanned line is (see :class:`ScannedLine`)."""


@dataclass(slots=True)
class ScannedLine:
    """One line (or the lines of one split record) as the scanner saw it.

    Attributes:
        line: the 1-based line number (the first line of a split record).
        end_line: the last line (``line`` except for a split record).
        raw: the line's bytes without its ``\\n`` (a split record: its
            lines joined by ``\\n``, as they are in the file).
        had_newline: False for the file's unterminated last line (a split
            record: whether its last piece had one).
        status: ``record`` (a JSON value read as it is; not always an
            object), ``recovered`` (read after removing damage, see
            :func:`~.lines.recover_line`), ``split`` (rejoined, see
            :func:`~.lines.rejoin_split`), ``damaged`` (nothing usable),
            ``blank``.
        record: the parsed JSON value (None when ``damaged`` or ``blank``).
        problem: what is wrong (None for a clean ``record``): the
            recovery, the ``split-record``, or why the line is unusable; an
            unusable unterminated last line is a ``torn-tail``.
        fragment: unusable bytes before a glued record (``recovered``).
        clean: the record's bytes as they should have been written
            (``recovered``, ``split``).
        split: the :class:`~.lines.SplitRecord` (``split`` only).
    """

    line: int
    end_line: int
    raw: bytes
    had_newline: bool
    status: ScanStatus
    record: Any = None
    problem: LineProblem | None = None
    fragment: bytes | None = None
    clean: bytes | None = None
    split: SplitRecord | None = None

    @property
    def ok(self) -> bool:
        """True when a JSON value was read (``record``, ``recovered``, ``split``)."""
        return self.status in ("record", "recovered", "split")


def _classify(line_no: int, raw: bytes, had_newline: bool, parsed: ParsedLine) -> ScannedLine:
    """The :class:`ScannedLine` of a line that is not part of a split record."""
    problem = parsed.problem
    if parsed.ok:
        status: ScanStatus = "record" if problem is None else "recovered"
        return ScannedLine(line_no, line_no, raw, had_newline, status, parsed.record, problem, parsed.fragment, parsed.clean)
    assert problem is not None
    if problem.kind == "blank":
        return ScannedLine(line_no, line_no, raw, had_newline, "blank", problem=problem)
    if not had_newline:
        problem = LineProblem(line_no, "torn-tail", f"last line is cut short ({len(raw)} bytes, no newline): {problem.message}")
    return ScannedLine(line_no, line_no, raw, had_newline, "damaged", problem=problem)


class LineScanner:
    """Classifies a file's lines, fed one at a time in order.

    A line that may start a record split over several lines is held until
    the record is complete (then its lines come out as one ``split``
    :class:`ScannedLine`) or until it is clear they are not one (then they
    come out one by one, before the line that showed it). So
    :meth:`feed` returns zero, one or several lines, always in line order,
    and :meth:`finish` the lines still held at the end.

    A caller with a faster way to read ordinary records may skip feeding
    lines that are records on their own (a gap in the line numbers ends a
    held record), as :func:`~.reader.read_session_file` does.
    """

    __slots__ = ("_rejoiner",)

    def __init__(self) -> None:
        self._rejoiner = Rejoiner()

    def feed(self, line_no: int, raw: bytes, had_newline: bool) -> list[ScannedLine]:
        """Take line ``line_no`` (``raw`` without its ``\\n``; ``had_newline``
        False only for an unterminated last line).

        Returns:
            The lines classified by this one, in line order (often just
            this line; none while a split record is being held).
        """
        parsed = parse_line(raw, line_no)
        released, joined, taken = self._rejoiner.feed(line_no, raw, had_newline, parsed.ok and parsed.record.__class__ is dict)
        out = [_classify(n, held, True, parse_line(held, n)) for n, held in released] if released else []
        if joined is not None:
            out.append(
                ScannedLine(
                    joined.first_line, joined.last_line, joined.raw, had_newline, "split",
                    joined.record, joined.problem(), None, joined.clean, joined,
                )
            )
        elif not taken:
            out.append(_classify(line_no, raw, had_newline, parsed))
        return out

    def finish(self) -> list[ScannedLine]:
        """The lines still held at the end of the file (the start of a split
        record the file ends inside), classified one by one."""
        return [_classify(n, held, True, parse_line(held, n)) for n, held in self._rejoiner.release()]


def scan_lines(lines: Iterable[tuple[int, bytes, bool]]) -> Iterator[ScannedLine]:
    """Classify every line of a file.

    Args:
        lines: ``(line_no, raw_without_newline, had_newline)`` in order, as
            :func:`~.reader.iter_lines` yields them.

    Yields:
        :class:`ScannedLine` in line order; the lines of a split record come
        as one.
    """
    scanner = LineScanner()
    for line_no, raw, had_newline in lines:
        yield from scanner.feed(line_no, raw, had_newline)
    yield from scanner.finish()
