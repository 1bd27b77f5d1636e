"""Reading session files (pi 1.6 ``loadEntriesFromFile``): :func:`read_session_file` and its
read loop (a fast path for ordinary lines, the line scanner of :mod:`.scan`
for the rest), :class:`SessionFileBuilder` (the same from scanned lines),
:class:`SessionFile` (what was read). Blocks of lines come from :mod:`.blocks`, one line's
parsing (pi's ``parseSessionEntries``) is :mod:`.lines`. Reading never modifies a file and never
gives up on a damaged one: every unusable line is reported and left in place; only a file whose
first record is not a session header is refused."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import msgspec
import orjson

from .._gc import gc_paused
from ..migrate import migrate_session_entries
from ..records import CURRENT_SESSION_VERSION, HEADER_TYPE, StrPath, header_version, is_session_header
from .decode import compact_record
from .lazy import HEAD_DECODER, PLAIN_RECORDS, EntryStore, LazyRecords, line_utf8_ok
from .tail import EAGER_TAIL_RECORDS, TAIL_BRANCH_POINTS, last_compaction_at, tail_record
from .access import is_regular_mode, session_path_problem
from .blocks import iter_lines, newline_blocks, stored_line_blocks
from .lines import parse_session_entries
from .model import LineProblem, SessionFileError
from .scan import LineScanner, ScannedLine, scan_lines

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
        name: how messages name a session read from lines
            (:func:`read_session_lines`), e.g. a store's locator; None for
            a file.
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
    name: str | None = None

    @property
    def version(self) -> int:
        """The header's ``version`` (1 when absent)."""
        if self.header is None:
            return 0
        return header_version(self.header)

    def warnings(self) -> list[str]:
        """Every problem as ``<path>:<line>: <message>``."""
        return [p.format(self.path or self.name) for p in self.problems]


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
        if rtype.__class__ is str and rtype != HEADER_TYPE and record.get("id").__class__ is str:
            append(record)
        else:
            _collect_other(sf, record, line_no)


def _collect_other(sf: SessionFile, record: dict[str, Any], line_no: int) -> None:
    """What :func:`_collect_entries` does with a record that is not an
    ordinary entry: the header is skipped, a second header, a record
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
        if rtype == "label":
            labels.append(record)


def read_session_file(
    path: StrPath, *, migrate: bool = True, lazy: bool | Literal["auto"] = False
) -> SessionFile:
    """Read and validate a session file; never modifies it.

    Args:
        path: the ``.jsonl`` file.
        migrate: migrate v1/v2 records to v3 in memory (see
            :mod:`pi_session.migrate`); the caller decides whether to rewrite.
        lazy: index the entries of a v3 file (or any file with ``migrate``
            off) instead of decoding them (:mod:`.lazy`):
            ``records`` and ``entries`` are then
            :class:`~.lazy.LazyRecords` whose entries are decoded when
            accessed (same values as without ``lazy``), and the problems
            are the same. A v1/v2 file being migrated is read in full.
            ``"auto"``: lazily only when :func:`~.tail.last_compaction_at`
            finds a compaction in the last 60% of the file (the context
            then needs far less than the whole file), else in full: a
            never-compacted session decodes every entry for its context,
            and the index pass would only add to that (what
            ``SessionManager.open`` does). The lines after that
            compaction, which a linear session's context holds, are
            decoded in the same pass.

    Returns:
        A :class:`SessionFile`. An empty file (no bytes, or only whitespace)
        gives ``header=None``.

    Raises:
        SessionFileError: the file cannot be read (missing, a directory, no
            permission) or its first record is not a session header with a
            string id.
    """
    p = Path(path)
    st = _stat_session(p)
    sf = SessionFile(path=p, header=None, size=st.st_size, mtime_ns=st.st_mtime_ns)
    # Parsing allocates about a million containers for a 100 MB file; the
    # cyclic GC would scan the growing heap again and again (none of it can
    # be garbage), so it is paused while reading (see pi_session._gc).
    eager_from: int | None = None
    if lazy == "auto":
        eager_from = last_compaction_at(p, st.st_size)
        lazy = eager_from is not None
    with gc_paused():
        return _read_records(p, sf, migrate, lazy=bool(lazy), eager_from=eager_from)


def _stat_session(p: Path) -> os.stat_result:
    """``os.stat`` of a session file about to be read.

    Raises:
        SessionFileError: missing, unreadable, or not a regular file.
    """
    try:
        st = os.stat(p)
    except OSError:
        st = None
    if st is None or not is_regular_mode(st.st_mode):
        raise SessionFileError(p, session_path_problem(p) or "cannot be read")
    return st


def scan_session_file(
    path: StrPath, on_line: Callable[[ScannedLine], None] | None = None, *, migrate: bool = True
) -> SessionFile:
    """Read a session file with every line going through the line scanner
    (no fast path), handing each :class:`~.scan.ScannedLine` to ``on_line``
    after the reader took it: one read for callers that look at every line
    as well as at the session (:func:`pi_session.repair.check_session`).

    Args:
        path: the ``.jsonl`` file.
        on_line: called once per scanned line, in line order.
        migrate: as for :func:`read_session_file`.

    Returns:
        The same :class:`SessionFile` as :func:`read_session_file` (without
        ``entry_columns`` and the memory-saving decoding).

    Raises:
        SessionFileError: as :func:`read_session_file`; also what
            ``on_line`` raises.
    """
    p = Path(path)
    st = _stat_session(p)
    builder = SessionFileBuilder(p, size=st.st_size, mtime_ns=st.st_mtime_ns)
    add = builder.add
    with gc_paused():
        try:
            for line in scan_lines(iter_lines(p)):
                add(line)
                if on_line is not None:
                    on_line(line)
        except OSError as exc:
            raise SessionFileError(p, exc.strerror or str(exc)) from None
        return builder.finish(migrate=migrate)


def read_session_lines(lines: Iterable[bytes], *, name: str | None = None, migrate: bool = True) -> SessionFile:
    """Read a session given as its lines (a session store's records) exactly
    as :func:`read_session_file` reads a file holding them: the same
    tolerant parsing, problems, rejoined split records and in-memory
    migration.

    Args:
        lines: the session's raw lines in order, each with its ``\\n``
            (an unterminated last line without); concatenated they are the
            file.
        name: how errors and :meth:`SessionFile.warnings` name the session
            (``SessionFile.path`` is None).
        migrate: as for :func:`read_session_file`.

    Returns:
        A :class:`SessionFile` whose ``size`` is the byte count of ``lines``
        (``mtime_ns`` 0).

    Raises:
        SessionFileError: the first record is not a session header with a
            string id (named by ``name``).
    """
    stored = lines if isinstance(lines, list) else list(lines)
    sf = SessionFile(path=None, header=None, size=sum(map(len, stored)), name=name)
    try:
        with gc_paused():
            _read_records(Path(name or "<session>"), sf, migrate, blocks=stored_line_blocks(stored))
    except SessionFileError as exc:
        raise SessionFileError(name, exc.reason, line=exc.line) from None
    sf.path = None
    return sf


def _no_columns(value: Any) -> None:  # pragma: no cover - never called
    raise AssertionError("entry columns used before the header")


def _read_records(
    p: Path,
    sf: SessionFile,
    migrate: bool,
    source: BinaryIO | None = None,
    blocks: Iterable[list[Any]] | None = None,
    *,
    lazy: bool = False,
    eager_from: int | None = None,
) -> SessionFile:
    """The reading loop of :func:`read_session_file` (of ``source`` instead
    of the file when given, or of line ``blocks`` as :func:`~.blocks.newline_blocks`
    gives them).

    Every terminated line after the header that orjson decodes to an object
    takes the fast path: decode, :func:`compact_record` (after the first
    :data:`~.lazy.PLAIN_RECORDS` records, kept as decoded), and, once the
    header says no migration is coming (version 3, or ``migrate`` off),
    sorting into ``sf.entries`` right away (what :func:`_collect_entries`
    would do after the loop) and into ``sf.entry_columns``. Every other line (before the header, damaged,
    not an object, the unterminated last one) goes through the line scanner
    (:class:`~.scan.LineScanner`) and :func:`_take`.

    ``lazy`` (a file only): once sorting, a line the head decoder of
    :mod:`.lazy` takes (valid UTF-8, see :func:`~.lazy.line_utf8_ok`;
    of an :data:`~.lazy.IndexedType`, none of the eager types) is only indexed:
    its position in the :class:`~.lazy.EntryStore` stands for the record
    in ``sf.records`` and ``sf.entries`` (wrapped in
    :class:`~.lazy.LazyRecords` at the end); every other line goes the
    way described above. From byte ``eager_from`` on (the last
    compaction, see :func:`~.tail.last_compaction_at`), up to
    :data:`~.tail.EAGER_TAIL_RECORDS` such lines (until the
    :data:`~.tail.TAIL_BRANCH_POINTS`-th whose parent is not the line
    before it) are decoded with ``orjson`` instead and their records put in the store's cache as
    :meth:`~.lazy.EntryStore.load` would (a line ``orjson`` refuses goes
    the way of the full reader)."""
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    compact = compact_record
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
    scanner = LineScanner()  # every line off the fast path
    store: EntryStore | None = None
    decode_head = HEAD_DECODER.decode
    head_errors = (msgspec.DecodeError, RecursionError)
    offset = 0  # of the next line
    prev_id: Any = None  # the id of the previous entry line (lazy)
    eager_left = eager_total = EAGER_TAIL_RECORDS if eager_from is not None else 0
    branches_left = TAIL_BRANCH_POINTS  # in the tail, before it is only indexed
    eager_at = eager_from if eager_from is not None else 0
    plain_left = PLAIN_RECORDS  # records kept as orjson gives them, before the memory-saving form
    run_from = 0  # the store position where the run of indexed lines not yet in sf's lists starts
    try:
        with contextlib.ExitStack() as stack:
            if blocks is None:
                f = stack.enter_context(open(p, "rb") if source is None else source)
                if lazy and source is None:
                    st = os.fstat(f.fileno())
                    store = EntryStore(p, st.st_dev, st.st_ino, lambda: read_session_file(p, migrate=False))
                    cache = store.cache
                    cache_append = cache.append
                    # offsets go into the store's array a block at a time
                    # (an array's append parses its argument)
                    pending_offsets: list[int] = []
                    offsets_append = pending_offsets.append
                    store_lines_append = store.lines.append
                    types_append = store.types.append
                    store_ids_append = store.ids.append
                    store_parents_append = store.parents.append
                blocks = newline_blocks(f)
            indexing = False
            for lines in blocks:
                if lines[-1] is None:  # the unterminated last line
                    if store is not None and run_from != len(store.cache):
                        store.add_indexed_run(sf, run_from, offset - 1)
                        run_from = len(store.cache)
                    line_no += 1
                    for scanned in scanner.feed(line_no, bytes(lines[0]), False):
                        record = _take(p, sf, scanned)
                        if sorting and record is not None:
                            _collect_other(sf, record, scanned.line)
                    break
                for raw in lines:
                    line_no += 1
                    start = offset
                    offset += len(raw)
                    if indexing:
                        etype = None
                        record = None
                        if eager_left and start >= eager_at:
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
                            offsets_append(start)
                            store_lines_append(line_no)
                            types_append(etype)
                            store_ids_append(hid)
                            store_parents_append(parent)
                            cache_append(record)
                            # records, record_lines, entries and the entry
                            # columns get this run of indexed lines at its
                            # end (EntryStore.add_indexed_run), five appends less a line
                            prev_id = hid
                            previous = None
                            continue
                        if run_from != len(cache):
                            store.add_indexed_run(sf, run_from, start - 1)  # type: ignore[union-attr]
                            run_from = len(cache)
                    if header_seen:
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
                                        if rtype == "label":
                                            labels_append(record)
                                    else:
                                        _collect_other(sf, record, line_no)
                                continue
                    for scanned in scanner.feed(line_no, bytes(raw[:-1]), True):
                        record = _take(p, sf, scanned)
                        if header_seen and sorting and record is not None:
                            _collect_other(sf, record, scanned.line)
                    if not header_seen and sf.header is not None:
                        header_seen = True
                        sorting = not migrate or sf.version >= CURRENT_SESSION_VERSION
                        if sorting:
                            sf.entry_columns = ([], [], [])
                            ids_append = sf.entry_columns[0].append
                            parents_append = sf.entry_columns[1].append
                            labels_append = sf.entry_columns[2].append
                            indexing = store is not None
                if indexing and pending_offsets:
                    store.offsets.fromlist(pending_offsets)  # type: ignore[union-attr]
                    pending_offsets.clear()
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    if store is not None and run_from != len(store.cache):
        store.add_indexed_run(sf, run_from, offset - 1)
    for scanned in scanner.finish():  # lines of a record the file ends inside
        _take(p, sf, scanned)
    sf.line_count = line_no
    if store is not None:
        store.end = offset
        if eager_from is not None:
            store.decoded += eager_total - eager_left  # they count as decoded plain
        if indexing:
            sf.records = LazyRecords(store, sf.records)  # type: ignore[assignment]
            sf.entries = LazyRecords(store, sf.entries)  # type: ignore[assignment]
    return _finish(p, sf, migrate, sorted_out=sorting)


def _take(p: Path | None, sf: SessionFile, s: ScannedLine) -> dict[str, Any] | None:
    """One line off the fast path of :func:`_read_records`, as
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


class SessionFileBuilder:
    """Builds a :class:`SessionFile` from lines classified by
    :class:`~.scan.LineScanner`, pushed one at a time: what
    :func:`read_session_file` does, without its fast path, for callers that
    see every line anyway (:func:`pi_session.repair.check_session` reads a
    file once for both; :func:`pi_session.repair.repair_session` checks
    the lines it writes).

    Usage: :meth:`add` every scanned line in order, then :meth:`finish`.
    """

    def __init__(self, path: StrPath | None, *, size: int = 0, mtime_ns: int = 0) -> None:
        """``path`` names the file in errors and problems; ``size`` (bytes)
        and ``mtime_ns`` are recorded in the :class:`SessionFile`."""
        p = Path(path) if path is not None else None
        self.sf = SessionFile(path=p, header=None, size=size, mtime_ns=mtime_ns)

    def add(self, line: ScannedLine) -> dict[str, Any] | None:
        """Take one scanned line; returns the record appended, or None.

        Raises:
            SessionFileError: the first record is not a session header.
        """
        self.sf.line_count = line.end_line
        return _take(self.sf.path, self.sf, line)

    def finish(self, *, migrate: bool = True) -> SessionFile:
        """The :class:`SessionFile` (migrated to v3 in memory when
        ``migrate``; entries sorted out).

        Raises:
            SessionFileError: no record at all is usable and the file is not
                empty (see :func:`read_session_file`).
        """
        return _finish(self.sf.path, self.sf, migrate, sorted_out=False)


def _finish(p: Path | None, sf: SessionFile, migrate: bool, *, sorted_out: bool) -> SessionFile:
    """The end of reading: refuse a file without a header (unless it holds
    nothing usable at all, see :func:`read_session_file`), migrate and sort
    the records into entries unless the read loop did (``sorted_out``)."""
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
    if not sorted_out:
        if migrate:
            version = sf.version
            if migrate_session_entries(sf.records):
                sf.migrated_from = version
        _collect_entries(sf)
    sf.problems.sort(key=lambda pr: pr.line)
    return sf
