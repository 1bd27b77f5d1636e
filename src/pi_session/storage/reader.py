"""Reading session files (pi 1.6 ``loadEntriesFromFile``): :func:`read_session_file` and its
read loop (:mod:`.read_loop`: a fast path for ordinary lines, the line scanner of :mod:`.scan`
for the rest), :class:`SessionFileBuilder` (the same from scanned lines),
:class:`SessionFile` (what was read). Blocks of lines come from :mod:`.blocks`, one line's
parsing (pi's ``parseSessionEntries``) is :mod:`.lines`. Reading never modifies a file and never
gives up on a damaged one: every unusable line is reported and left in place; only a file whose
first record is not a session header is refused."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.gc_pause import gc_paused
from ..entries.source import EntryList, EntrySource
from .versions import migrate_session_entries
from ..entries.records import HEADER_TYPE, StrPath, header_version
from .lazy import EntryStore
from .tail import last_compaction_at
from .access import is_regular_mode, session_path_problem
from .blocks import iter_lines, newline_blocks, stored_line_blocks
from .lines import parse_session_entries
from .model import LineProblem, SessionFileError
from .read_loop import ReadLoop, collect_other, take_line
from .scan import ScannedLine, scan_lines


@dataclass
class SessionFile:
    """A session file as read: the records, the valid entries and what was
    wrong with the rest.

    Attributes:
        path: the file (None for text parsed in memory).
        header: the session header, or None for an empty file.
        records: every parsed JSON object in line order (header included);
            :func:`pi_session.storage.versions.migrate_session_entries` works on these.
        record_lines: the line number of each record.
        fragments: line number → unusable bytes of lines a record was
            recovered from (kept on rewrite).
        spans: first line → last line of each record rejoined from several
            lines (``split-record``; its ``record_lines`` entry is the first).
        entries: the usable entries (objects with a ``type`` and a string
            ``id``), header excluded, in file order: an
            :class:`~pi_session.entries.source.EntrySource` (an
            :class:`~pi_session.entries.source.EntryList`, or of a lazy read
            a :class:`~.lazy.LazyRecords`).
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
            :class:`pi_session.session.tree.SessionTree`, which takes them instead
            of going over 100,000 entries again.
    """

    path: Path | None
    header: dict[str, Any] | None
    records: list[dict[str, Any]] = field(default_factory=list)
    record_lines: list[int] = field(default_factory=list)
    fragments: dict[int, bytes] = field(default_factory=dict)
    spans: dict[int, int] = field(default_factory=dict)
    entries: EntrySource = field(default_factory=EntryList)
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


def _collect_entries(sf: SessionFile) -> None:
    """Fill ``sf.entries`` from ``sf.records`` (after migration) and report
    records that cannot be entries."""
    entries = EntryList()
    sf.entries = entries
    append = entries.append
    for record, line_no in zip(sf.records, sf.record_lines):
        rtype = record.get("type")
        # fast path: an ordinary entry (string type other than "session", string id)
        if rtype.__class__ is str and rtype != HEADER_TYPE and record.get("id").__class__ is str:
            append(record)
        else:
            collect_other(sf, record, line_no)


def read_session_file(
    path: StrPath, *, migrate: bool = True, lazy: bool | Literal["auto"] = False
) -> SessionFile:
    """Read and validate a session file; never modifies it.

    Args:
        path: the ``.jsonl`` file.
        migrate: migrate v1/v2 records to v3 in memory (see
            :mod:`pi_session.storage.versions`); the caller decides whether to rewrite.
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
    # be garbage), so it is paused while reading (see pi_session.core.gc_pause).
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
    as well as at the session (:func:`pi_session.check.repair.check_session`).

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


def _read_records(
    p: Path,
    sf: SessionFile,
    migrate: bool,
    blocks: Iterable[list[Any]] | None = None,
    *,
    lazy: bool = False,
    eager_from: int | None = None,
) -> SessionFile:
    """The reading of :func:`read_session_file`: the file's lines (or line
    ``blocks`` as :func:`~.blocks.newline_blocks` gives them) through the
    phases of a :class:`ReadLoop`, then :func:`_finish`. ``lazy`` (a file
    only): index the entries (an :class:`~.lazy.EntryStore`), decoding in
    full from byte ``eager_from`` on (see :class:`ReadLoop`)."""
    try:
        with contextlib.ExitStack() as stack:
            store: EntryStore | None = None
            if blocks is None:
                f = stack.enter_context(open(p, "rb"))
                if lazy:
                    st = os.fstat(f.fileno())
                    store = EntryStore(p, st.st_dev, st.st_ino, lambda: read_session_file(p, migrate=False))
                blocks = newline_blocks(f)
            loop = ReadLoop(p, sf, migrate, store, eager_from)
            loop.run(blocks)
    except OSError as exc:
        raise SessionFileError(p, exc.strerror or str(exc)) from None
    loop.finish()
    return _finish(p, sf, migrate, sorted_out=loop.sorting)


class SessionFileBuilder:
    """Builds a :class:`SessionFile` from lines classified by
    :class:`~.scan.LineScanner`, pushed one at a time: what
    :func:`read_session_file` does, without its fast path, for callers that
    see every line anyway (:func:`pi_session.check.repair.check_session` reads a
    file once for both; :func:`pi_session.check.repair.repair_session` checks
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
        return take_line(self.sf.path, self.sf, line)

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
