"""The read loop of a session's lines (:func:`~.reader.read_session_file`,
:func:`~.reader.read_session_lines`): :class:`ReadLoop`, its phases one
method each, and what becomes of a line off its fast path
(:func:`take_line`) and of a record that is not an ordinary entry
(:func:`collect_other`), which :class:`~.reader.SessionFileBuilder` uses
too."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from ..entries.records import CURRENT_SESSION_VERSION, HEADER_TYPE, is_session_header
from ..entries.questions import LABEL
from .decode import compact_record
from .lazy import PLAIN_RECORDS, EntryStore, LazyRecords, line_utf8_ok
from .model import LineProblem, SessionFileError
from .scan import LineScanner, ScannedLine
from .tail import EAGER_TAIL_RECORDS, TAIL_BRANCH_POINTS, tail_record

if TYPE_CHECKING:
    from .reader import SessionFile

__all__ = ["ReadLoop", "take_line", "collect_other"]


_JSON_KINDS = {int: "a number", float: "a number", bool: "a boolean", list: "an array", dict: "an object"}
"""How an error message names a decoded JSON value's kind."""


def collect_other(sf: SessionFile, record: dict[str, Any], line_no: int) -> None:
    """What sorting records into entries (the read loop, and
    :func:`~.reader.read_session_file` after a migration) does with a
    record that is not an ordinary entry: the header is skipped, a second header, a record
    without a string ``type`` or without a string ``id`` is reported."""
    rtype = record.get("type")
    if rtype == HEADER_TYPE:
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
        if rtype == LABEL:
            labels.append(record)


class ReadLoop:
    """One read of a session's lines, block by block, in phases (each a
    method taking a block's lines, its state in attributes between blocks
    and in locals within one):

    1. :meth:`header`: the lines up to the session header go through the
       line scanner (:meth:`scan`). The header decides whether records are
       sorted into ``sf.entries`` and ``sf.entry_columns`` while reading
       (``sorting``: a v3 file, or ``migrate`` off; else
       :func:`~.reader.read_session_file` migrates and sorts them after
       the loop) and, for a lazy read, whether the lines after it are
       indexed (``indexing``).
    2. and 3. :meth:`body`, the lines after the header, each in one loop
       (a call per line would cost a tenth of a lazy open):

       3. indexing (a lazy read, once sorting): a line the head decoder
          of :mod:`.lazy` takes (valid UTF-8, see
          :func:`~.lazy.line_utf8_ok`; of an :data:`~.heads.IndexedType`,
          none of the eager types) is only indexed: its position in the
          :class:`~.lazy.EntryStore` stands for the record in
          ``sf.records`` and ``sf.entries``, added a run at a time
          (:meth:`~.lazy.EntryStore.add_indexed_run`). From byte
          ``eager_from`` on (the last compaction, see
          :func:`~.tail.last_compaction_at`), up to
          :data:`~.tail.EAGER_TAIL_RECORDS` such lines (until the
          :data:`~.tail.TAIL_BRANCH_POINTS`-th whose parent is not the line
          before it) are decoded with ``orjson`` instead and their records
          put in the store's cache as :meth:`~.lazy.EntryStore.load` would.
          Every other line goes on to 2.
       2. the fast path: a line orjson decodes to an object is a record
          (the first :data:`~.lazy.PLAIN_RECORDS` as decoded, later ones
          in the memory-saving form of :func:`compact_record`), sorted at
          once; any other line (damaged, not an object) goes through the
          scanner (:meth:`scan`) and :func:`take_line`.
    4. :meth:`last_line`: an unterminated last line, through the scanner.
    5. :meth:`finish`: the lines of a record the file ends inside, the
       line count, and a lazy read's records and entries wrapped in
       :class:`~.lazy.LazyRecords`.
    """

    def __init__(self, p: Path, sf: SessionFile, migrate: bool, store: EntryStore | None, eager_from: int | None) -> None:
        self.p = p
        self.sf = sf
        self.migrate = migrate
        self.scanner = LineScanner()  # every line off the fast path
        self.store = store
        self.line_no = 0
        self.offset = 0  # of the next line
        self.previous: dict[str, Any] | None = None  # the record decoded just before (compact_record's)
        self.call_ids: dict[str, str] = {}
        self.plain_left = PLAIN_RECORDS  # records kept as orjson gives them
        self.header_seen = False
        self.sorting = False  # records sorted into entries while reading
        self.indexing = False  # lines indexed (a lazy read, once sorting)
        self.prev_id: Any = None  # the id of the previous entry line (indexing)
        self.run_from = 0  # the store position where the run of indexed lines not yet in sf's lists starts
        self.eager_at = eager_from if eager_from is not None else 0
        self.eager_left = self.eager_total = EAGER_TAIL_RECORDS if eager_from is not None else 0
        self.branches_left = TAIL_BRANCH_POINTS  # in the tail, before it is only indexed

    def run(self, blocks: Iterable[list[Any]]) -> None:
        """Every block through the phases."""
        for lines in blocks:
            if lines[-1] is None:
                self.last_line(lines[0])
                return
            start = 0 if self.header_seen else self.header(lines)
            if start < len(lines):
                self.body(lines, start)

    def header(self, lines: list[bytes]) -> int:
        """Phase 1: ``lines`` through the scanner until the header is seen;
        returns the index of the line after it (``len(lines)`` when it is
        not in this block)."""
        sf = self.sf
        for k, raw in enumerate(lines):
            self.line_no += 1
            self.offset += len(raw)
            self.scan(raw)
            if sf.header is not None:
                self.header_seen = True
                self.sorting = not self.migrate or sf.version >= CURRENT_SESSION_VERSION
                if self.sorting:
                    sf.entry_columns = ([], [], [])
                    self.indexing = self.store is not None
                return k + 1
        return len(lines)

    def scan(self, raw: bytes) -> None:
        """One terminated line (line :attr:`line_no`) off the fast path:
        through the scanner, what it gives through :func:`take_line`, and,
        once sorting, a record into the entries (:func:`collect_other`)."""
        sf = self.sf
        collect = self.header_seen and self.sorting
        for scanned in self.scanner.feed(self.line_no, bytes(raw[:-1]), True):
            record = take_line(self.p, sf, scanned)
            if collect and record is not None:
                collect_other(sf, record, scanned.line)

    def body(self, lines: list[bytes], start: int) -> None:
        """Phases 2 and 3, line by line: ``lines[start:]`` (after the
        header), each indexed when indexing and the head decoder takes it
        (or decoded as the eager tail), else decoded in full (the fast
        path), else scanned. One loop for both: a line an indexing read
        does not index costs no call."""
        sf = self.sf
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        compact = compact_record
        records_append = sf.records.append
        lines_append = sf.record_lines.append
        entries_append = sf.entries.append
        sorting, indexing = self.sorting, self.indexing
        if sf.entry_columns is not None:
            ids_append = sf.entry_columns[0].append
            parents_append = sf.entry_columns[1].append
            labels_append = sf.entry_columns[2].append
        line_no, offset, previous, call_ids = self.line_no, self.offset, self.previous, self.call_ids
        plain_left, prev_id = self.plain_left, self.prev_id
        store = self.store
        if indexing:
            assert store is not None  # indexing implies a store
            cache = store.cache
            cache_append = cache.append
            # offsets go into the store's array a block at a time (an
            # array's append parses its argument)
            pending_offsets: list[int] = []
            offsets_append = pending_offsets.append
            store_lines_append = store.lines.append
            types_append = store.types.append
            store_ids_append = store.ids.append
            store_parents_append = store.parents.append
            from .heads import DECODE_ERRORS, HEAD_DECODER  # msgspec, only for an index

            decode_head = HEAD_DECODER.decode
            head_errors = DECODE_ERRORS
            run_from = self.run_from
            eager_left, eager_total, branches_left, eager_at = self.eager_left, self.eager_total, self.branches_left, self.eager_at
        for raw in lines[start:] if start else lines:
            line_no += 1
            line_start = offset
            offset += len(raw)
            if indexing:  # phase 3: index the line, or decode it as the eager tail
                etype = None
                record = None
                if eager_left and line_start >= eager_at:
                    got = tail_record(raw)
                    if got is not None:
                        record, etype, hid, parent = got
                        eager_left -= 1
                if etype is None and (raw.isascii() or line_utf8_ok(raw)):
                    try:
                        head = decode_head(raw)
                    except head_errors:
                        pass
                    else:  # of an IndexedType: not eager, and interned
                        etype, hid, parent = head.type, head.id, head.parentId
                if etype is not None:
                    if parent is not None and parent == prev_id:
                        parent = prev_id
                        if record is not None:
                            record["parentId"] = parent
                    elif record is not None:
                        branches_left -= 1
                        if not branches_left:  # a branchy tail: most of it is off the leaf's path
                            eager_total -= eager_left
                            eager_left = 0
                    offsets_append(line_start)
                    store_lines_append(line_no)
                    types_append(etype)
                    store_ids_append(hid)
                    store_parents_append(parent)
                    cache_append(record)
                    # records, record_lines, entries and the entry columns
                    # get this run of indexed lines at its end
                    # (EntryStore.add_indexed_run), five appends less a line
                    prev_id = hid
                    previous = None
                    continue
                if run_from != len(cache):
                    store.add_indexed_run(sf, run_from, line_start - 1)  # type: ignore[union-attr]
                    run_from = len(cache)
            # phase 2: the fast path
            try:
                record = loads(raw)
            except decode_error:
                pass
            else:
                if record.__class__ is dict:
                    if plain_left:
                        plain_left -= 1
                    else:
                        record = compact(record, previous, call_ids)
                    previous = record
                    records_append(record)
                    lines_append(line_no)
                    if sorting:
                        rtype = record.get("type")
                        rid = record.get("id")
                        if indexing:
                            rparent = record.get("parentId")
                            if rparent.__class__ is str and rparent == prev_id:
                                record["parentId"] = prev_id
                            prev_id = rid
                        if rtype.__class__ is str and rid.__class__ is str and rtype != HEADER_TYPE:
                            entries_append(record)
                            ids_append(rid)
                            parents_append(record.get("parentId"))
                            if rtype == LABEL:
                                labels_append(record)
                        else:
                            collect_other(sf, record, line_no)
                    continue
            self.line_no = line_no
            self.scan(raw)
        self.line_no, self.offset, self.previous = line_no, offset, previous
        self.plain_left, self.prev_id = plain_left, prev_id
        if indexing:
            store.offsets.fromlist(pending_offsets)  # type: ignore[union-attr]
            self.run_from = run_from
            self.eager_left, self.eager_total, self.branches_left = eager_left, eager_total, branches_left

    def last_line(self, raw: bytes) -> None:
        """Phase 4: the unterminated last line, through the scanner."""
        store = self.store
        if store is not None and self.run_from != len(store.cache):
            store.add_indexed_run(self.sf, self.run_from, self.offset - 1)
            self.run_from = len(store.cache)
        self.line_no += 1
        for scanned in self.scanner.feed(self.line_no, bytes(raw), False):
            record = take_line(self.p, self.sf, scanned)
            if self.sorting and record is not None:
                collect_other(self.sf, record, scanned.line)

    def finish(self) -> None:
        """Phase 5: the end of the lines."""
        sf = self.sf
        store = self.store
        if store is not None and self.run_from != len(store.cache):
            store.add_indexed_run(sf, self.run_from, self.offset - 1)
        for scanned in self.scanner.finish():  # lines of a record the file ends inside
            take_line(self.p, sf, scanned)
        sf.line_count = self.line_no
        if store is not None:
            store.end = self.offset
            store.decoded += self.eager_total - self.eager_left  # the eager tail counts as decoded plain
            if self.indexing:
                # the lists the loop filled with records and store positions
                sf.records = LazyRecords(store, sf.records)  # type: ignore[assignment]
                sf.entries = LazyRecords(store, cast(list[Any], sf.entries))


def take_line(p: Path | None, sf: SessionFile, s: ScannedLine) -> dict[str, Any] | None:
    """One line off the fast path of the read loop (:class:`ReadLoop`;
    every line, for :class:`~.reader.SessionFileBuilder`), as
    :class:`~.scan.LineScanner` classified it: report what is wrong with it,
    take the first record as the header (or refuse the file) and append a
    usable record to ``sf.records``.

    Returns:
        The record appended, or None.

    Raises:
        SessionFileError: the first record is not a session header.
    """
    if s.status == "split":
        assert s.problem is not None
        sf.problems.append(s.problem)
        if not s.had_newline:
            sf.ends_with_newline = False
            sf.problems.append(_no_newline(s.end_line))
        sf.spans[s.line] = s.end_line
        return _accept(p, sf, s.record, s.line)
    ok = s.status in ("record", "recovered")
    if not s.had_newline:
        sf.ends_with_newline = s.raw == b""
        if s.raw and ok:
            sf.problems.append(_no_newline(s.line))
    if s.problem is not None:
        sf.problems.append(s.problem)
    if not ok:
        return None
    record = s.record
    if not isinstance(record, dict):
        sf.problems.append(LineProblem(s.line, "not-object", f"JSON {type(record).__name__} instead of an object (skipped)"))
        return None
    if s.fragment is not None:
        sf.fragments[s.line] = s.fragment
    return _accept(p, sf, record, s.line)


def _no_newline(line_no: int) -> LineProblem:
    """The ``no-newline`` problem of a usable unterminated last line."""
    return LineProblem(line_no, "no-newline", "last line has no newline (a newline is added before the next append)", recovered=True)


def _accept(p: Path | None, sf: SessionFile, record: dict[str, Any], line_no: int) -> dict[str, Any]:
    """Append a usable record read off the fast path; the first one must be
    the session header (else :class:`SessionFileError`)."""
    if sf.header is None and not sf.records:
        if not is_session_header(record):
            damaged = next((q for q in sf.problems if not q.recovered and 0 < q.line < line_no), None)
            if damaged is not None:  # a torn or garbled header line: name it, not the first good line after it
                raise SessionFileError(p, f"not a pi session: line {damaged.line}, where the session header belongs, cannot be read: {damaged.message}", line=damaged.line)
            raise SessionFileError(p, "not a pi session: the first record is not a session header", line=line_no)
        sf.header = record
    sf.records.append(record)
    sf.record_lines.append(line_no)
    return record
