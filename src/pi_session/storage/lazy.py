"""The lazy session index: what :func:`~.reader.read_session_file`
keeps of a long v3 session file when asked for ``lazy=True``.

The read loop (:mod:`.reader`) decodes every line after the header with a
``msgspec`` :class:`~.heads.EntryHead` decoder that keeps only the fields the index
needs (``type``, ``id``, ``parentId``) and skips the rest;
it stores each such entry's byte offset in an :class:`EntryStore`. Lines the head decoder refuses, lines it cannot be
trusted on (invalid UTF-8, see :func:`line_utf8_ok`) and the small entries
the tree and the context read anyway (:data:`EAGER_TYPES`) are decoded in
full as the reader decodes every line without ``lazy``, so problems and
recovery are the same.

The rest are decoded when asked for (:meth:`EntryStore.get`,
:meth:`EntryStore.resolve`): ``pread`` of their bytes, ``orjson`` (and,
after the first :data:`PLAIN_RECORDS`, the memory-saving form of
:func:`~.decode.compact_record`), kept in a cache so
that every access gives the same dict object. Before reading, the file's
identity (device, inode) and size are checked; a file rewritten since it
was indexed is read again in full (:attr:`EntryStore.reread`), and its
records are used when they are the same entries on the same lines, else
:class:`~.model.SessionFileError` is raised.

:class:`LazyRecords` is a list of records whose items are decoded on
access (an item is a dict, or the ``int`` position of an entry in the
store): the lazy :class:`~pi_session.entries.source.EntrySource`, through
which the tree, the context and :class:`pi_session.SessionManager` read
it as they read a list of decoded entries. :class:`LazyById` is a mapping
id -> entry over one (:meth:`LazyRecords.id_map`).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, KeysView, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import orjson

from ..core.gc_pause import gc_paused
from ..entries.source import EntrySource
from ..entries import EAGER_ENTRY_TYPES
from .decode import compact_record
from .blocks import BLOCK_SIZE
from .model import SessionFileError

if TYPE_CHECKING:
    from .reader import SessionFile

__all__ = [
    "EntryStore",
    "LazyRecords",
    "LazyById",
    "line_utf8_ok",
    "EAGER_TYPES",
    "PLAIN_RECORDS",
]

EAGER_TYPES = EAGER_ENTRY_TYPES | {"session"}
"""Record types decoded in full while indexing: the entry types of
:data:`pi_session.entries.EAGER_ENTRY_TYPES` (the one declaration of them),
and ``session`` (a second header, reported as the full reader reports it)."""

PLAIN_RECORDS = 16384
""":meth:`EntryStore.load`: the records decoded on demand first, up to
about this many, are kept as ``orjson`` decodes them (fast); later ones in
the memory-saving form of :func:`~.decode.compact_record`. The full reader
(:mod:`.reader`) keeps a file's first this many records so too."""

def line_utf8_ok(line: bytes) -> bool:
    """Whether ``line`` may go to the head decoder as far as UTF-8 goes:
    msgspec does not validate UTF-8 inside the strings it skips, while
    orjson (today's reader) refuses such a line and the scanner reports it.
    (ASCII lines, nearly all, are checked by ``bytes.isascii`` first.)

    A number too large for a double, which msgspec skips and orjson
    refuses, needs no check: today's scanner reads it without a problem,
    and decoding such a line on demand falls back to a full read (see
    :meth:`EntryStore.load`)."""
    if line.isascii():
        return True
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class EntryStore:
    """The lazily decoded entries of one session file.

    Attributes:
        path: the file.
        dev, ino: its identity when indexed.
        end: bytes of the file the index covers.
        offsets: each stored entry's line's byte offset.
        run_ends: the last position of each run of stored entries on
            consecutive lines -> the byte offset of its line's newline
            (the line of any other position ends where the next
            position's begins, see :meth:`line_end`).
        lines: each stored entry's line number.
        types, ids, parents: each stored entry's fields.
        stamps: position -> ``timestamp`` (:data:`.heads.MISSING_FIELD` when
            absent) of the entries :meth:`timestamps` read without
            decoding them (a tree's branch points' children).
        cache: each stored entry's decoded record, None until decoded.
        reread: reads the whole file again (``read_session_file``), for a
            file rewritten since it was indexed, or holding a line that
            only today's scanner reads (a number too large for a double).
    """

    def __init__(self, path: Path, dev: int, ino: int, reread: Callable[[], Any]) -> None:
        self.path = path
        self.dev = dev
        self.ino = ino
        self.end = 0
        self.offsets = array("q")
        self.run_ends: dict[int, int] = {}
        # a list, not an array: the loop's line_no int objects, shared with
        # SessionFile.record_lines (an array's append parses its argument)
        self.lines: list[int] = []
        self.types: list[str] = []
        self.ids: list[str] = []
        self.parents: list[str | None] = []
        self.stamps: dict[int, Any] = {}
        self.cache: list[dict[str, Any] | None] = []
        self.reread = reread
        self.decoded = 0  # records decoded on demand so far

    def __len__(self) -> int:
        return len(self.cache)

    def add_indexed_run(self, sf: SessionFile, start: int, end: int) -> None:
        """Put this store's entries from position ``start`` on (a run of
        lines the read loop of :mod:`.reader` only indexed, nothing else
        read between them) into ``sf``'s lists as that loop would one by
        one: their positions into ``sf.records`` and ``sf.entries`` (one
        int object for both), their line numbers into ``sf.record_lines``,
        their ids and parentIds into ``sf.entry_columns``. ``end``: the
        byte offset of the run's last newline."""
        self.run_ends[len(self.cache) - 1] = end
        positions = list(range(start, len(self.cache)))
        sf.records.extend(positions)  # type: ignore[arg-type]
        sf.entries.extend(positions)  # type: ignore[arg-type]
        sf.record_lines.extend(self.lines[start:])
        assert sf.entry_columns is not None  # indexing implies sorting
        ids, parents, _labels = sf.entry_columns
        ids.extend(self.ids[start:])
        parents.extend(self.parents[start:])

    def line_end(self, pos: int) -> int:
        """The byte offset of the newline ending the line of the entry at
        ``pos``."""
        end = self.run_ends.get(pos)
        return self.offsets[pos + 1] - 1 if end is None else end

    def get(self, pos: int) -> dict[str, Any]:
        """The record at ``pos``, decoded (with up to 31 entries before it,
        for the backward walks of context building) when not yet.

        Raises:
            SessionFileError: the file cannot be read, or was rewritten and
                no longer holds these entries.
        """
        record = self.cache[pos]
        if record is None:
            cache = self.cache
            self.load([p for p in range(max(0, pos - 31), pos + 1) if cache[p] is None])
            record = cache[pos]
            assert record is not None
        return record

    def resolve(self, items: Iterable[Any]) -> list[dict[str, Any]]:
        """``items`` (records, or ``int`` positions) as records, the
        positions not decoded yet decoded in one batch."""
        items = items if isinstance(items, list) else list(items)
        cache = self.cache
        missing = [v for v in items if v.__class__ is int and cache[v] is None]
        if missing:
            self.load(missing)
        return [cache[v] if v.__class__ is int else v for v in items]  # type: ignore[misc]

    def load(self, positions: list[int]) -> None:
        """Decode the records at ``positions`` (not decoded yet) into
        :attr:`cache`: one ``pread`` per run of adjacent lines.

        Raises:
            SessionFileError: see :meth:`get`.
        """
        if not positions:
            return
        positions = sorted(set(positions))
        fd = self._open_indexed()
        if fd is None:
            self._fall_back()
            return
        try:
            with gc_paused():  # decoding makes many containers, none garbage (see pi_session.core.gc_pause)
                done = self._load_from(fd, positions)
        finally:
            os.close(fd)
        if not done:
            self._fall_back()

    def _open_indexed(self) -> int | None:
        """A read-only descriptor of the file, or None when it cannot be
        opened or is no longer the file indexed (another device or inode,
        or shorter than the index): then it must be read again in full."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            st = None
        if st is None or (st.st_dev, st.st_ino) != (self.dev, self.ino) or st.st_size < self.end:
            os.close(fd)
            return None
        return fd

    def _load_from(self, fd: int, positions: list[int]) -> bool:
        """:meth:`load` from an open file; False when a line no longer
        holds the entry indexed there."""
        cache, ids = self.cache, self.ids
        loads = orjson.loads
        # the first PLAIN_RECORDS records decoded (a context's) stay as
        # orjson gives them: compact_record would cost a third of decoding
        # them and save little; beyond, a full decode, it keeps memory low
        plain = PLAIN_RECORDS - self.decoded  # how many more stay plain
        call_ids: dict[str, str] = {}
        self.decoded += len(positions)
        lines = self._lines(fd, positions)
        if lines is None:
            return False
        for p, line in lines:
            try:
                record = loads(line)
            except orjson.JSONDecodeError:
                return False  # only the scanner reads it: see _fall_back
            if record.__class__ is not dict or record.get("id") != ids[p]:
                return False
            record["id"] = ids[p]  # the index's string: one object, not two
            parent = self.parents[p]
            if parent is not None and record.get("parentId") == parent:
                record["parentId"] = parent
            if plain > 0:
                plain -= 1
                cache[p] = record
            else:
                cache[p] = compact_record(record, None, call_ids, deep=True)
        return True

    def _lines(self, fd: int, positions: list[int]) -> list[tuple[int, memoryview]] | None:
        """The lines (without their newlines) of the entries at
        ``positions`` (sorted), read from ``fd`` with one ``pread`` per run
        of adjacent lines of at most :data:`~.blocks.BLOCK_SIZE` bytes (a
        longer line in one); None when the file ends before one of them."""
        offsets, line_end = self.offsets, self.line_end
        out: list[tuple[int, memoryview]] = []
        i = 0
        n = len(positions)
        limit = BLOCK_SIZE
        while i < n:
            first = positions[i]
            start = offsets[first]
            end = line_end(first)
            j = i + 1
            while j < n:
                p = positions[j]
                if offsets[p] > end + 1:
                    break
                p_end = line_end(p)
                if p_end - start > limit:
                    break
                end = p_end
                j += 1
            data = memoryview(os.pread(fd, end - start, start))
            if len(data) != end - start:
                return None
            for k in range(i, j):
                p = positions[k]
                out.append((p, data[offsets[p] - start : line_end(p) - start]))
            i = j
        return out

    def timestamps(self, positions: Iterable[int]) -> None:
        """Read the ``timestamp`` of each entry at ``positions`` that is not
        decoded into :attr:`stamps`, without decoding its record (the tree
        sorts a branch point's children by it; the index does not keep
        timestamps). One ``pread`` per run of adjacent lines, as
        :meth:`load`; a file rewritten since it was indexed is read again
        (the records then decoded instead).

        Raises:
            SessionFileError: see :meth:`get`.
        """
        cache, stamps, ids = self.cache, self.stamps, self.ids
        wanted = sorted({p for p in positions if cache[p] is None and p not in stamps})
        if not wanted:
            return
        fd = self._open_indexed()
        if fd is None:
            self.load(wanted)  # reads the file again in full
            return
        try:
            lines = self._lines(fd, wanted)
        finally:
            os.close(fd)
        if lines is None:
            self.load(wanted)
            return
        from .heads import DECODE_ERRORS, STAMP_DECODER

        failed: list[int] = []
        decode = STAMP_DECODER.decode
        for p, line in lines:
            try:
                got = decode(line)
            except DECODE_ERRORS:
                failed.append(p)
                continue
            if got.id != ids[p]:
                failed.append(p)
                continue
            stamps[p] = got.timestamp
        if failed:
            self.load(failed)

    def _fall_back(self) -> None:
        """The file was rewritten (or cannot be opened) since it was
        indexed: read it again in full and take its records when they are
        the same entries on the same lines."""
        sf = self.reread()  # SessionFileError propagates (e.g. no longer a session)
        by_line = dict(zip(sf.record_lines, sf.records))
        cache = self.cache
        fresh: list[tuple[int, dict[str, Any]]] = []
        for p, line in enumerate(self.lines):
            if cache[p] is not None:
                continue
            record = by_line.get(line)
            if record is None or record.get("id") != self.ids[p] or record.get("type") != self.types[p]:
                raise SessionFileError(self.path, "the session file was rewritten since it was opened; open it again")
            fresh.append((p, record))
        for p, record in fresh:
            cache[p] = record
        self.dev, self.ino = -1, -1  # never read by offset again
        self.end = 1 << 62


class LazyRecords(EntrySource):
    """A list of records some of which are decoded only when accessed (the
    lazy :class:`~pi_session.entries.source.EntrySource`): each item is a
    record (dict) or the ``int`` position of an entry in :attr:`store`.
    New sources of its items (:meth:`view`, :meth:`with_head`,
    :meth:`select`) share the store, so an entry is decoded once and is
    the same object in every one. Slices and iteration give records
    (decoded in batches); the questions of
    :class:`~pi_session.entries.source.EntrySource` are answered from the
    index."""

    __slots__ = ("store", "items")

    def __init__(self, store: EntryStore, items: list[Any]) -> None:
        self.store = store
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if i.__class__ is slice:
            return self.store.resolve(self.items[i])
        v = self.items[i]
        if v.__class__ is int:
            record = self.store.cache[v]
            return record if record is not None else self.store.get(v)
        return v

    def __setitem__(self, i: Any, value: Any) -> None:
        self.items[i] = list(value) if isinstance(i, slice) else value

    def __delitem__(self, i: Any) -> None:
        del self.items[i]

    def insert(self, index: int, value: dict[str, Any]) -> None:
        self.items.insert(index, value)

    def append(self, value: dict[str, Any]) -> None:
        self.items.append(value)

    def pop(self, index: int = -1) -> dict[str, Any]:
        value = self[index]
        del self.items[index]
        return value

    def __iter__(self) -> Iterator[dict[str, Any]]:
        items = self.items
        resolve = self.store.resolve
        for start in range(0, len(items), 1024):
            yield from resolve(items[start : start + 1024])

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self.items) - 1, -1, -1):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, LazyRecords)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyRecords({len(self.items)} records, {sum(1 for v in self.items if v.__class__ is int)} in the file)"

    def view(self, start: int = 0) -> LazyRecords:
        """A new list of the items from ``start`` on (the same store)."""
        return LazyRecords(self.store, self.items[start:])

    def with_head(self, *records: dict[str, Any]) -> LazyRecords:
        """A new list: ``records``, then these items."""
        return LazyRecords(self.store, [*records, *self.items])

    def select(self, runs: Iterable[tuple[int, int]]) -> LazyRecords:
        """A new list of the items in the index ranges ``runs`` (the same
        store), decoding none."""
        items = self.items
        picked: list[Any] = []
        for start, end in runs:
            picked += items[start:end]
        return LazyRecords(self.store, picked)

    def pick(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """The records at ``indices``, the ones not decoded yet decoded in
        one batch (:meth:`EntryStore.resolve`)."""
        items = self.items
        return self.store.resolve([items[i] for i in indices])

    def types(self, *, reverse: bool = False) -> Iterator[Any]:
        """Each item's ``type``, in order or last first, from the index."""
        types = self.store.types
        items = reversed(self.items) if reverse else self.items
        return (types[v] if v.__class__ is int else v.get("type") for v in items)

    def ids(self) -> list[Any]:
        """Each item's ``id``, from the index."""
        ids = self.store.ids
        return [ids[v] if v.__class__ is int else v.get("id") for v in self.items]

    def parent_ids(self) -> list[Any]:
        """Each item's ``parentId``, from the index."""
        parents = self.store.parents
        return [parents[v] if v.__class__ is int else v.get("parentId") for v in self.items]

    def id_map(self, ids: list[Any], position: dict[Any, int]) -> LazyById:
        """A :class:`LazyById` over these items (``position``: id → index,
        kept and shared, not copied)."""
        return LazyById(position, self)

    def type_of(self, i: int) -> Any:
        """``self[i].get("type")`` without decoding the record."""
        v = self.items[i]
        return self.store.types[v] if v.__class__ is int else v.get("type")

    def id_of(self, i: int) -> Any:
        """``self[i].get("id")`` without decoding the record."""
        v = self.items[i]
        return self.store.ids[v] if v.__class__ is int else v.get("id")

    def parent_of(self, i: int) -> Any:
        """``self[i].get("parentId")`` without decoding the record."""
        v = self.items[i]
        return self.store.parents[v] if v.__class__ is int else v.get("parentId")

    def timestamp_of(self, i: int, missing: Any) -> Any:
        """``self[i].get("timestamp", missing)`` without decoding the record
        (read from its line: see :meth:`read_timestamps`)."""
        v = self.items[i]
        if v.__class__ is int:
            store = self.store
            record = store.cache[v]
            if record is None:
                if v not in store.stamps:
                    store.timestamps([v])
                record = store.cache[v]
                if record is None:
                    from .heads import MISSING_FIELD

                    ts = store.stamps[v]
                    return missing if ts is MISSING_FIELD else ts
            return record.get("timestamp", missing)
        return v.get("timestamp", missing)

    def read_timestamps(self, indices: Iterable[int]) -> None:
        """Read the timestamps of the items at ``indices`` that are not
        decoded, in one batch (:meth:`EntryStore.timestamps`), for the
        :meth:`timestamp_of` calls that follow."""
        items = self.items
        self.store.timestamps([v for v in map(items.__getitem__, indices) if v.__class__ is int])

    def of_type(self, entry_type: str, start: int = 0) -> list[dict[str, Any]]:
        """The records from ``start`` on whose ``type`` is ``entry_type``, in
        order, decoding only those (the others' types are in the index)."""
        types = self.store.types
        picked = [v for v in self.items[start:] if (types[v] if v.__class__ is int else v.get("type")) == entry_type]
        return self.store.resolve(picked)

    def is_decoded(self, i: int) -> bool:
        """Whether ``self[i]`` is decoded already."""
        v = self.items[i]
        return v.__class__ is not int or self.store.cache[v] is not None


class LazyById(MutableMapping[str, dict[str, Any]]):
    """id -> entry over a :class:`LazyRecords` (as ``dict(zip(ids,
    entries))`` would be, without decoding): :attr:`positions` maps each
    id to the index of its entry in :attr:`entries`, or to an entry itself
    (one set later that is not the list's last item)."""

    __slots__ = ("positions", "entries")

    def __init__(self, positions: dict[str, Any], entries: LazyRecords) -> None:
        self.positions = positions
        self.entries = entries

    def __getitem__(self, key: str) -> dict[str, Any]:
        v = self.positions[key]
        return self.entries[v] if v.__class__ is int else v

    def get(self, key: Any, default: Any = None) -> Any:
        v = self.positions.get(key, self)
        if v is self:
            return default
        return self.entries[v] if v.__class__ is int else v

    def __contains__(self, key: object) -> bool:
        return key in self.positions

    def __setitem__(self, key: str, value: dict[str, Any]) -> None:
        entries = self.entries
        if entries.items and entries.items[-1] is value:
            self.positions[key] = len(entries.items) - 1
        else:
            self.positions[key] = value

    def __delitem__(self, key: str) -> None:
        del self.positions[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)

    def keys(self) -> KeysView[str]:
        """The ids, as :attr:`positions`' keys view (membership and
        iteration at a dict's speed)."""
        return self.positions.keys()

    def values(self) -> Any:
        return self.resolved().values()

    def items(self) -> Any:
        return self.resolved().items()

    def resolved(self) -> dict[str, dict[str, Any]]:
        """A plain dict of the same entries (all decoded)."""
        keys = list(self.positions)
        vals = [self.positions[k] for k in keys]
        entry_items = self.entries.items
        records = self.entries.store.resolve([entry_items[v] if v.__class__ is int else v for v in vals])
        return dict(zip(keys, records))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, LazyById)):
            return self.resolved() == (other.resolved() if isinstance(other, LazyById) else other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

