"""The entries of a session behind one interface, however they were read:
:class:`EntrySource` and its eager implementation :class:`EntryList`.

A session's entries are either all decoded (a list of dicts: a file read in
full, an in-memory session, entries given by a caller) or indexed, each
decoded from its line when first accessed (the lazy index of a long file,
:class:`pi_session.storage.LazyRecords`). The tree (:mod:`.tree`), the
context (:mod:`.context`), compaction planning and
:class:`pi_session.SessionManager` work on an :class:`EntrySource` and never
ask which kind they hold: what an entry's type, id or parent is, a batch of
entries, a sub-sequence, an id index; a lazy source answers from its index
without decoding, an eager one from its dicts. :func:`entry_source` turns
any sequence of entries into one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, MutableSequence
from operator import methodcaller
from typing import Any, cast, overload

__all__ = ["EntrySource", "EntryList", "entry_source"]


class EntrySource(MutableSequence[dict[str, Any]]):
    """Entries in file order, each a dict; an implementation may decode an
    entry only when it is accessed (``source[i]``, a slice, iteration, or
    the batch methods), and answers the questions below without decoding.

    Indexing, slicing (a plain list of decoded entries), iteration, ``len``
    and the list mutations (``append``, ``pop``, slice assignment) behave
    as a list's. Entries accessed twice are the same object.
    """

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    @abstractmethod
    def __getitem__(self, i: int | slice) -> Any:
        """Entry ``i`` (decoded), or a slice as a plain list of entries."""

    @abstractmethod
    def type_of(self, i: int) -> Any:
        """``self[i].get("type")``, without decoding entry ``i``."""

    @abstractmethod
    def id_of(self, i: int) -> Any:
        """``self[i].get("id")``, without decoding entry ``i``."""

    @abstractmethod
    def parent_of(self, i: int) -> Any:
        """``self[i].get("parentId")``, without decoding entry ``i``."""

    @abstractmethod
    def timestamp_of(self, i: int, missing: Any) -> Any:
        """``self[i].get("timestamp", missing)``; a lazy source reads it
        from the entry's line without decoding the entry (see
        :meth:`read_timestamps`)."""

    @abstractmethod
    def read_timestamps(self, indices: Iterable[int]) -> None:
        """Prepare :meth:`timestamp_of` for the entries at ``indices``: a
        lazy source reads their timestamps in one batch (nothing to do for
        decoded entries)."""

    @abstractmethod
    def types(self, *, reverse: bool = False) -> Iterator[Any]:
        """Each entry's ``type`` (None when absent) in order, or last first
        with ``reverse``, without decoding the entries."""

    @abstractmethod
    def ids(self) -> list[Any]:
        """Each entry's ``id``, in order (a new list)."""

    @abstractmethod
    def parent_ids(self) -> list[Any]:
        """Each entry's ``parentId`` (None when absent), in order (a new list)."""

    @abstractmethod
    def of_type(self, entry_type: str, start: int = 0) -> list[dict[str, Any]]:
        """The entries from index ``start`` on whose ``type`` is
        ``entry_type``, in order, decoding only those."""

    @abstractmethod
    def pick(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """The entries at ``indices``, in that order, decoded in one batch
        (one read per run of adjacent lines for a lazy source, where
        ``self[i]`` in turn reads once per entry)."""

    @abstractmethod
    def select(self, runs: Iterable[tuple[int, int]]) -> EntrySource:
        """A new source of the entries in the index ranges ``runs``
        (``(start, end)``, end excluded), in that order, decoding none."""

    @abstractmethod
    def view(self, start: int = 0) -> EntrySource:
        """A new source of the entries from index ``start`` on."""

    @abstractmethod
    def with_head(self, *records: dict[str, Any]) -> EntrySource:
        """A new source: ``records``, then these entries."""

    @abstractmethod
    def id_map(self, ids: list[Any], position: dict[Any, int]) -> MutableMapping[str, dict[str, Any]]:
        """id → entry for these entries, when their ids are unique:
        ``ids`` is :meth:`ids`, ``position`` maps each id to its index. A
        lazy source's mapping decodes an entry when it is looked up; its
        ``keys()`` is a dict's keys view (membership at C speed)."""


_type_getter = methodcaller("get", "type")


class EntryList(list[dict[str, Any]], EntrySource):
    """An :class:`EntrySource` of decoded entries: a ``list`` of dicts (every
    list operation is the list's own) with the source's questions answered
    from the dicts."""

    __slots__ = ()

    def type_of(self, i: int) -> Any:
        return self[i].get("type")

    def id_of(self, i: int) -> Any:
        return self[i].get("id")

    def parent_of(self, i: int) -> Any:
        return self[i].get("parentId")

    def timestamp_of(self, i: int, missing: Any) -> Any:
        return self[i].get("timestamp", missing)

    def read_timestamps(self, indices: Iterable[int]) -> None:
        return None

    def types(self, *, reverse: bool = False) -> Iterator[Any]:
        return map(_type_getter, reversed(self) if reverse else self)

    def ids(self) -> list[Any]:
        return [e["id"] for e in self]

    def parent_ids(self) -> list[Any]:
        return [e.get("parentId") for e in self]

    def of_type(self, entry_type: str, start: int = 0) -> list[dict[str, Any]]:
        return [e for e in (self[start:] if start else self) if e.get("type") == entry_type]

    def pick(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        return list(map(self.__getitem__, indices))

    def select(self, runs: Iterable[tuple[int, int]]) -> EntryList:
        out = EntryList()
        for start, end in runs:
            out += self[start:end]
        return out

    def view(self, start: int = 0) -> EntryList:
        return EntryList(self[start:] if start else self)

    def with_head(self, *records: dict[str, Any]) -> EntryList:
        out = EntryList(records)
        out += self
        return out

    def id_map(self, ids: list[Any], position: dict[Any, int]) -> dict[str, dict[str, Any]]:
        return dict(zip(ids, self))


def entry_source(entries: Iterable[Mapping[str, Any]], *, copy: bool = False) -> EntrySource:
    """``entries`` as an :class:`EntrySource`: itself when it is one (a new
    source of the same entries, :meth:`EntrySource.view`, with ``copy``),
    else a new :class:`EntryList` of its items. Either way the entry
    objects are the same, never copies."""
    if isinstance(entries, EntrySource):
        return entries.view() if copy else entries
    return EntryList(cast(Iterable[dict[str, Any]], entries))
