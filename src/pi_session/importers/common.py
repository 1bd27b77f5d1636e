"""What the importers of other agents' sessions share (**beyond pi**):
deterministic ids, reading a JSONL source file tolerantly, building a pi
session tree entry by entry (:class:`SessionBuilder`), the converted
session (:class:`ConvertedSession`) and writing it into a store through the
idempotent import path of :func:`pi_session.stores.transfer.store_lines`.

Everything here but the readers (:func:`open_regular`,
:func:`iter_source_lines`, :func:`read_jsonl`) and :func:`write_session` is pure.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PiSessionError
from ..core.jsonio import dumps_line, loads
from ..entries.records import make_header
from ..stores.additions import IMPORTED_KEY
from ..storage import Durability
from ..core.timestamps import iso_to_ms

if TYPE_CHECKING:
    from ..stores import SessionStore
    from ..stores.transfer import ImportResult

__all__ = [
    "NAMESPACE",
    "EPOCH_ISO",
    "pi_session_id",
    "SourceRecord",
    "DamagedLine",
    "MAX_LINE_BYTES",
    "TORN_LINE",
    "ends_torn",
    "READ_CHUNK_BYTES",
    "stable_uuid",
    "open_regular",
    "iter_source_lines",
    "read_jsonl",
    "CONVERSION_ERRORS",
    "RecordError",
    "convert_skipping",
    "LAYOUT",
    "GAP_SECONDS",
    "RUN_SETTLE_SECONDS",
    "IMPORTED_KEY",
    "SessionBuilder",
    "ConvertedSession",
    "AgentImportResult",
    "pi_usage",
    "write_session",
    "text_of",
    "obj",
    "count",
    "first_str",
    "usable_cwd",
    "first_cwd",
]

NAMESPACE = uuid.UUID("6f1d2c3a-5b7e-4f8a-9c0d-1e2f3a4b5c6d")
"""The UUID namespace every imported id is derived from (uuid5)."""

_NAMESPACE_BYTES = NAMESPACE.bytes

EPOCH_ISO = "1970-01-01T00:00:00.000Z"
"""The timestamp of a record that has none (never the current time: a
conversion must give the same lines every time)."""


MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest source line read (64 MiB, bytes without the newline); a
longer one is skipped and reported, never held whole in memory."""

TORN_LINE = "a torn last line (no newline)"
"""The reason a source file's last line is skipped when it has no newline
and holds no JSON yet (the agent is in the middle of writing it)."""

READ_CHUNK_BYTES = 1024 * 1024
"""How much of a source file is read at once (1 MiB)."""


def stable_uuid(name: str) -> uuid.UUID:
    """``uuid5(NAMESPACE, name)``, also for a ``name`` holding lone
    surrogates (a source id read from a ``\\ud800`` escape): the name is
    encoded as UTF-8 with ``surrogatepass``, which for any other string
    gives the bytes ``uuid.uuid5`` hashes, so ids stay those of earlier
    imports. Pure."""
    digest = hashlib.sha1(NAMESPACE.bytes + name.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
    return uuid.UUID(bytes=digest[:16], version=5)


def pi_session_id(source_format: str, source_id: str) -> str:
    """The pi session id of a source session: ``uuid5(NAMESPACE,
    "<format>:<source id>")`` as a string (:func:`stable_uuid`), so the same
    source session always maps to the same pi session (what makes an import
    idempotent)."""
    return str(stable_uuid(f"{source_format}:{source_id}"))


@dataclass(frozen=True)
class SourceRecord:
    """One decoded JSON object of a source file and its 1-based line number."""

    line: int
    record: dict[str, Any]


@dataclass(frozen=True)
class DamagedLine:
    """A source line that holds no JSON object (skipped)."""

    path: str
    line: int
    reason: str

    def format(self) -> str:
        """``path:line: reason`` (one line)."""
        return f"{self.path}:{self.line}: {self.reason}; skipped"


def open_regular(path: str | os.PathLike[str]) -> int:
    """Open a source file for reading, only when it is a regular file (a
    symlink is followed to what it names): opened ``O_NONBLOCK`` so that a
    FIFO never blocks the open, then checked with ``fstat``, so a FIFO, a
    device (``/dev/zero``), a socket or a directory is refused without a
    byte being read. Returns the file descriptor (the caller closes it).

    Raises:
        OSError: the file cannot be opened, or is not a regular file
            (``strerror`` "not a regular file").
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def iter_source_lines(path: str | os.PathLike[str], max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None, bool]]:
    """Stream a source file's lines (split at ``\\n`` only), reading
    :data:`READ_CHUNK_BYTES` at a time from a regular file
    (:func:`open_regular`): yields ``(line_no, raw, had_newline)``, 1-based,
    ``raw`` without its newline, or None for a line longer than
    ``max_line`` bytes (skipped as it is read: never held whole).

    Raises:
        OSError: the file cannot be opened or read, or is not a regular file.
    """
    fd = open_regular(path)
    try:
        line_no = 1
        buf = bytearray()
        overlong = False
        while True:
            chunk = os.read(fd, READ_CHUNK_BYTES)
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    break
                if overlong or len(buf) + nl - start > max_line:
                    yield line_no, None, True
                else:
                    buf += chunk[start:nl]
                    yield line_no, bytes(buf), True
                buf.clear()
                overlong = False
                line_no += 1
                start = nl + 1
            if not overlong:
                buf += chunk[start:]
                if len(buf) > max_line:
                    overlong = True
                    buf.clear()
        if overlong:
            yield line_no, None, False
        elif buf:
            yield line_no, bytes(buf), False
    finally:
        os.close(fd)


def read_jsonl(path: str | Path, max_line: int = MAX_LINE_BYTES) -> tuple[list[SourceRecord], list[DamagedLine]]:
    """Read a JSONL source file: its JSON objects with their line numbers,
    and the lines that hold none (not JSON, not an object, a torn last
    line, a line longer than ``max_line`` bytes). Only a regular file is
    read, :data:`READ_CHUNK_BYTES` at a time (:func:`iter_source_lines`).
    Lines are split at ``\\n`` only (a raw U+0085 or U+2028 inside a JSON
    string stays in its line); blank lines are passed over. Invalid UTF-8
    and lone surrogate escapes are read as ``JSON.parse`` reads them.

    Raises:
        OSError: the file cannot be read or is not a regular file.
    """
    records: list[SourceRecord] = []
    damaged: list[DamagedLine] = []
    for n, raw, had_newline in iter_source_lines(path, max_line):
        if raw is None:
            damaged.append(DamagedLine(str(path), n, f"a line longer than {max_line:,} bytes"))
            continue
        if not raw.strip():
            continue
        try:
            value = loads(raw)  # as JSON.parse: lone surrogate escapes and big integers read too
        except (ValueError, RecursionError) as exc:
            damaged.append(DamagedLine(str(path), n, f"not JSON ({exc})" if had_newline else TORN_LINE))
            continue
        if not isinstance(value, dict):
            damaged.append(DamagedLine(str(path), n, f"not a JSON object ({type(value).__name__})"))
            continue
        records.append(SourceRecord(n, value))
    return records, damaged


CONVERSION_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeError, RecursionError, OverflowError)
"""What a conversion may raise on a record of an unexpected shape (a
converter catches these per record and raises :class:`RecordError`)."""


class RecordError(PiSessionError):
    """A source record the conversion could not use: ``line`` (1-based) and
    the error it raised (``cause``)."""

    def __init__(self, line: int, cause: BaseException) -> None:
        super().__init__(f"line {line}: {type(cause).__name__}: {cause}")
        self.line = line
        self.cause = cause

    def reason(self) -> str:
        """The one-line reason a skipped record is reported with."""
        detail = str(self.cause).splitlines()[0] if str(self.cause) else ""
        return f"a record of an unexpected shape ({type(self.cause).__name__}{': ' + detail[:200] if detail else ''})"


def convert_skipping(
    convert: Callable[[list[SourceRecord]], list[ConvertedSession]], records: list[SourceRecord], path: str, *, max_skips: int = 100
) -> tuple[list[ConvertedSession], list[DamagedLine]]:
    """``convert(records)``, leaving out every record it cannot use: on a
    :class:`RecordError` the record is dropped, reported as a
    :class:`DamagedLine` (``path:line: reason; skipped``), and the
    conversion runs again on the rest (conversions are pure, so nothing of
    the failed run remains). Returns the sessions and the skipped records.

    Raises:
        RecordError: a record not among ``records`` failed (nothing to
            leave out), or more than ``max_skips`` records did.
    """
    damaged: list[DamagedLine] = []
    for _ in range(max_skips + 1):
        try:
            return convert(records), damaged
        except RecordError as exc:
            kept = [r for r in records if r.line != exc.line]
            if len(kept) == len(records):
                raise
            records = kept
            damaged.append(DamagedLine(path, exc.line, exc.reason()))
    raise RecordError(records[0].line if records else 0, ValueError(f"more than {max_skips} records could not be converted"))


def pi_usage(input_tokens: Any, output_tokens: Any, cache_read: Any = 0, cache_write: Any = 0, *, reasoning: Any = None) -> dict[str, Any]:
    """pi's ``usage`` of an assistant message from token counts (non-integers
    count 0); ``cost`` is zero (the source does not record it)."""

    def n(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    usage: dict[str, Any] = {
        "input": n(input_tokens),
        "output": n(output_tokens),
        "cacheRead": n(cache_read),
        "cacheWrite": n(cache_write),
    }
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    if n(reasoning):
        usage["reasoning"] = n(reasoning)
    return usage


LAYOUT = 2
"""The layout of the sessions an import writes. 2: what pi has no place
for rides on the entries pi has: the fields of the source records an entry
was made from, and the whole source records that came before it and made
no entry of their own (a run of progress notes, attachments, events), in
the entry's :data:`IMPORTED_KEY` key; a run becomes a ``custom`` entry of
its own (``<format>/records``) only where the source paused for more than
:data:`GAP_SECONDS` after it, or at the end of a file left unchanged for
:data:`RUN_SETTLE_SECONDS`. 1 (the
layout of earlier imports, kept for sessions written in it): one
``custom`` entry per such record, and one (``claude-code/fields``, ...)
holding the fields of each message's records."""

GAP_SECONDS = 300.0
"""The pause in a source's timestamps (5 minutes) after which a run of
records that made no entry is written as an entry of its own rather than
with the next entry. Half the time a file must be left unchanged before
such a run at its end is imported (:data:`RUN_SETTLE_SECONDS`): whatever
an agent appends after such an import comes more than this after
everything before it, so the next conversion groups the old records as
the import did and only appends lines."""

RUN_SETTLE_SECONDS = 600.0
"""How long a source file must be left unchanged (10 minutes) before the
records at its end that made no entry (a turn's last notes) are imported
as an entry of their own; until then they wait for the entry the agent
writes next (``final=False`` of the conversions)."""


_GAP_MS = int(GAP_SECONDS * 1000)


class SessionBuilder:
    """Builds one pi session's entries in order, keeping the tree linear
    where the source's is not meant to branch.

    Every entry gets a deterministic 8-hex-character id: the start of
    ``uuid5(NAMESPACE, "<session id>:<key>")`` (``key``: the source record's
    id and the entry's index in it), bumped deterministically on the rare
    collision. :meth:`add` resolves a parent through the *insertions*: an
    entry added with ``insertion=True`` (a record that sits between two
    messages, e.g. a tool result of a parallel call, a progress note) is
    chained after the latest entry that continues its parent, so the
    messages after it continue from it instead of making a branch.

    Attributes:
        session_id: the pi session id.
        entries: the entries so far (dicts, pi's key order).
        counts: entries by kind (``message:user``, ``custom:<customType>``, ...).
    """

    def __init__(self, session_id: str, agent: str | None = None) -> None:
        self.session_id = session_id
        self.agent = agent
        self.entries: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        self._ids: set[str] = set()
        self._source: dict[str, str] = {}
        self._after: dict[str, str] = {}
        self.last_timestamp = EPOCH_ISO
        self.run: list[SourceRecord] = []
        self.stash: list[Any] = []
        self._latest_ms: int | None = None

    def paused_before(self, timestamp: Any) -> bool:
        """Whether the source paused for more than :data:`GAP_SECONDS`
        before a record with ``timestamp`` (after the latest timestamp of
        the records before it) while a run of records is waiting for an
        entry; records without a valid timestamp never pause. Call once
        per record, in order."""
        ms = iso_to_ms(timestamp) if isinstance(timestamp, str) else None
        if ms is None:
            return False
        latest = self._latest_ms
        self._latest_ms = ms if latest is None else max(latest, ms)
        return bool(self.run) and latest is not None and ms - latest > _GAP_MS

    def attach(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        """Give ``entry`` the waiting run of records and the stashed fields
        (its :data:`IMPORTED_KEY`), emptying both; returns that value, or
        None when there was nothing to give."""
        if not self.run and not self.stash:
            return None
        imported = self.imported_of(entry)
        if self.run:
            imported["records"] = [r.record for r in self.run]
            self.run = []
        if self.stash:
            imported["fields"] = self.stash
            self.stash = []
        return imported

    def imported_of(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry``'s :data:`IMPORTED_KEY` value, made (naming the source
        agent) when the entry has none yet."""
        imported: dict[str, Any] = entry.setdefault(IMPORTED_KEY, {"agent": self.agent} if self.agent else {})
        return imported

    def new_id(self, key: str) -> str:
        """A deterministic entry id for ``key`` not used yet in this session."""
        base = f"{self.session_id}:{key}"
        n = 0
        while True:
            name = base if n == 0 else f"{base}#{n}"
            # the first 8 hex digits of stable_uuid(name): the digest's first 4 bytes (the version and variant bits come later)
            candidate = hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()[:8]
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate
            n += 1

    def map_source(self, source_id: Any, entry_id: str) -> None:
        """Record that the source id ``source_id`` is continued by ``entry_id``."""
        if isinstance(source_id, str):
            self._source[source_id] = entry_id

    def lookup(self, source_id: Any) -> str | None:
        """The entry id a source id maps to, or None."""
        return self._source.get(source_id) if isinstance(source_id, str) else None

    def tail(self) -> str | None:
        """The id of the last entry added (None before the first)."""
        return self.entries[-1]["id"] if self.entries else None

    def resolve(self, entry_id: str | None) -> str | None:
        """``entry_id`` followed through the insertions chained after it."""
        while entry_id is not None and entry_id in self._after:
            entry_id = self._after[entry_id]
        return entry_id

    def parent_for(self, source_parent: Any) -> str | None:
        """The pi parent of a record whose source parent id is
        ``source_parent``: its entry (through insertions); the last entry
        for a parent that is unknown or absent (a second root, a parent in
        a skipped line): pi sessions keep one root."""
        mapped = self.lookup(source_parent)
        return self.resolve(mapped if mapped is not None else self.tail())

    def add(self, entry_type: str, fields: Mapping[str, Any], *, key: str, parent: str | None, timestamp: Any, kind: str | None = None) -> dict[str, Any]:
        """Append an entry ``{type, id, parentId, timestamp, **fields}``.

        Args:
            key: what the id is derived from (unique per source record and
                position).
            parent: the parent entry id (see :meth:`parent_for`).
            timestamp: the source's ISO timestamp (a non-string: the last
                one seen).
            kind: the count key (default ``entry_type``).

        Returns:
            The entry (it may still be changed until the lines are made).
        """
        if isinstance(timestamp, str) and iso_to_ms(timestamp) is not None:
            self.last_timestamp = timestamp
        entry: dict[str, Any] = {"type": entry_type, "id": self.new_id(key), "parentId": parent, "timestamp": self.last_timestamp}
        entry.update(fields)
        self.entries.append(entry)
        self.counts[kind or entry_type] += 1
        return entry

    def insert_after(self, anchor: str | None, entry_id: str) -> None:
        """Mark ``entry_id`` as chained after ``anchor`` (see :meth:`resolve`)."""
        if anchor is not None and anchor != entry_id:
            self._after[anchor] = entry_id

    def custom(self, custom_type: str, data: Any, *, key: str, parent: str | None, timestamp: Any) -> dict[str, Any]:
        """A ``custom`` entry keeping source data pi has no place for."""
        return self.add("custom", {"customType": custom_type, "data": data}, key=key, parent=parent, timestamp=timestamp, kind=f"custom:{custom_type}")


def ends_torn(records: list[SourceRecord], damaged: list[DamagedLine]) -> bool:
    """Whether a source file read by :func:`read_jsonl` ends with a torn
    line (:data:`TORN_LINE`: written in part, after every record read), so
    the record being written may continue the last response. Pure."""
    last = records[-1].line if records else 0
    return any(d.reason == TORN_LINE and d.line > last for d in damaged)


def settled(records: list[SourceRecord], cut: int | None) -> tuple[list[SourceRecord], int]:
    """``records`` without an unfinished response that starts at ``cut``
    (a format's ``unfinished_tail``; None: nothing unfinished), and how
    many records were held back for the next import. Pure."""
    if cut is None:
        return records, 0
    return records[:cut], len(records) - cut


@dataclass
class ConvertedSession:
    """One pi session converted from a source session.

    Attributes:
        session_id: the pi session id (:func:`pi_session_id`).
        source: the source file.
        cwd, timestamp: the header's.
        entries: the pi entries (dicts, in file order).
        counts: entries by kind (see :class:`SessionBuilder`).
        parent_id: the pi session id of the session this one was spawned
            from (a sub-agent's), else None; the header's ``parentSession``
            is that session's locator in the target store.
        held_back: source records of a response that may still be being
            written (a file modified just now), left for the next import.
        waiting: source records at the end that made no entry, left for
            the entry the agent writes next (a file modified less than
            :data:`RUN_SETTLE_SECONDS` ago).
    """

    session_id: str
    source: str
    cwd: str
    timestamp: str
    entries: list[dict[str, Any]]
    counts: Counter[str] = field(default_factory=Counter)
    parent_id: str | None = None
    held_back: int = 0
    waiting: int = 0

    @property
    def messages(self) -> int:
        """How many message and compaction entries the session has."""
        return sum(1 for e in self.entries if e.get("type") in ("message", "compaction"))

    def header(self, parent_session: str | None = None) -> dict[str, Any]:
        """The version-3 session header (``parentSession`` when given)."""
        return make_header(self.session_id, self.cwd, self.timestamp, parent_session)

    def lines(self, parent_session: str | None = None) -> list[bytes]:
        """The session file's lines as pi writes them (header first)."""
        return [dumps_line(self.header(parent_session))] + [dumps_line(e) for e in self.entries]


@dataclass
class AgentImportResult:
    """What importing one converted session did.

    Attributes:
        result: the store write's :class:`pi_session.stores.transfer.ImportResult`
            (``imported``, ``updated`` with ``appended``, ``unchanged``,
            ``conflict``, ``skipped``, ``failed``).
        counts: the session's entries by kind.
        damaged: the source lines skipped (reported once, with the file's
            first session).
        held_back: source records left for the next import
            (:attr:`ConvertedSession.held_back`).
        waiting: records at the end left for the entry the agent writes
            next (:attr:`ConvertedSession.waiting`).
        older_layout: the store holds the session in layout 1
            (:data:`LAYOUT`), which the import kept.
    """

    result: ImportResult
    counts: Counter[str] = field(default_factory=Counter)
    damaged: list[DamagedLine] = field(default_factory=list)
    held_back: int = 0
    waiting: int = 0
    older_layout: bool = False

    def to_json(self) -> dict[str, Any]:
        """The result as ``pi-session import --from AGENT --json`` prints
        it: ``source``, ``status``, ``id``, ``appended`` (only when
        ``updated``), ``entries`` (counts by kind, sorted by kind),
        ``damaged`` (``path``, ``line``, ``reason`` each), ``heldBack``,
        ``waiting``, ``layout`` (1: a session first imported in the earlier
        layout keeps it) and ``message`` (each only when there is one)."""
        result = self.result
        return {
            "source": result.source,
            "status": result.status,
            "id": result.session_id,
            **({"appended": result.appended} if result.status == "updated" else {}),
            "entries": dict(sorted(self.counts.items())),
            "damaged": [{"path": d.path, "line": d.line, "reason": d.reason} for d in self.damaged],
            **({"heldBack": self.held_back} if self.held_back else {}),
            **({"waiting": self.waiting} if self.waiting else {}),
            **({"layout": 1} if self.older_layout else {}),
            **({"message": result.message} if result.message else {}),
        }


def write_session(store: SessionStore, session: ConvertedSession, durability: Durability = Durability.ENTRY) -> ImportResult:
    """Write a converted session into ``store`` idempotently and
    incrementally (:func:`pi_session.stores.transfer.store_lines`): new
    sessions are created; a session imported before gets only the lines
    its source gained (``updated``); a stored session that its new lines
    do not continue (the source was rewritten) is a ``conflict``, left
    alone. ``parentSession`` is the parent's locator in ``store`` when the
    store holds the parent. A session with no message is ``skipped``.
    ``durability``: how a new session is created (``NONE``: unsynced, for
    a caller that syncs many at once, :meth:`SessionStore.sync_sessions`).

    Raises:
        pi_session.stores.StoreError: the store cannot be written.
    """
    from ..stores.transfer import ImportResult, store_lines

    result = ImportResult(session.source, "imported", session.session_id)
    if not session.messages:
        result.status = "skipped"
        result.message = f"{session.source}: no conversation in it"
        return result
    parent = session.parent_id
    locator = store.locator(parent) if parent is not None and store.exists(parent) else None
    store_lines(store, session.lines(locator), None, result, durability)
    return result


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def count(value: Any) -> int:
    """``value`` when it is a non-negative integer (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def text_of(value: Any) -> str:
    """The text of a string or of a list of content blocks (their ``text``
    fields joined with newlines)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(b["text"] for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def first_str(records: Iterable[SourceRecord], key: str) -> str | None:
    """The first string value of ``key`` among the records."""
    for r in records:
        value = r.record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def usable_cwd(value: Any) -> bool:
    """Whether ``value`` can be a session's working directory: a non-empty
    string that can be a path on every store (no NUL, no lone surrogate).
    A record whose ``cwd`` cannot keeps it in its custom entry; the
    session takes the next one that can."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def first_cwd(records: Iterable[SourceRecord]) -> str | None:
    """The first ``cwd`` of the records that :func:`usable_cwd` accepts."""
    for r in records:
        value = r.record.get("cwd")
        if usable_cwd(value):
            return str(value)
    return None
