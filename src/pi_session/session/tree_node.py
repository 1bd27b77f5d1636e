"""A node of the session tree (pi's ``SessionTreeNode``), as
:meth:`pi_session.session.tree.SessionTree.roots` returns them: the entry, its
children oldest first and its current label; its entry read from the
session's :class:`~pi_session.entries.source.EntrySource` when first asked
for (of a lazily read file, decoded then)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..entries.source import EntrySource
from ..core.timestamps import MISSING

__all__ = ["TreeNode"]


class TreeNode:
    """One node of :meth:`SessionTree.roots` (pi's ``SessionTreeNode``).

    ``entry`` is the entry dict itself (not a copy), ``children`` the child
    nodes oldest first, ``label``/``label_timestamp`` the entry's current
    label, if any. A node made from a source (:meth:`of_source`, as
    :meth:`SessionTree.roots` makes them) reads its entry from the source
    when ``entry`` is first read (a lazily read session's is decoded then);
    ``id``, ``type`` and :meth:`timestamp` do not need it. Slotted: a
    100,000-entry tree takes about 7 MB less than with per-node
    ``__dict__``s. Nodes compare equal when their entries,
    children and labels are equal (as the dataclass they were compared)."""

    __slots__ = ("_entry", "_source", "children", "label", "label_timestamp")

    def __init__(
        self,
        entry: Mapping[str, Any],
        children: list[TreeNode] | None = None,
        label: str | None = None,
        label_timestamp: str | None = None,
    ) -> None:
        self._entry: Any = entry
        self._source: EntrySource | None = None
        self.children: list[TreeNode] = [] if children is None else children
        self.label = label
        self.label_timestamp = label_timestamp

    @classmethod
    def of_source(cls, source: EntrySource, index: int, children: list[TreeNode]) -> TreeNode:
        """The node of ``source[index]``, read (decoded) when ``entry`` is
        first read."""
        node = cls.__new__(cls)
        node._entry = index
        node._source = source
        node.children = children
        node.label = None
        node.label_timestamp = None
        return node

    @staticmethod
    def decode_entries(nodes: Iterable[TreeNode]) -> None:
        """Read the entries of ``nodes`` from their sources together
        (:meth:`EntrySource.pick <pi_session.entries.source.EntrySource.pick>`):
        of a lazily read file, one ``pread`` per run of adjacent lines,
        where reading each node's ``entry`` in turn opens and reads the
        file once per entry (about 0.1 ms each). Nodes whose entry was read
        already are left as they are.

        Raises:
            SessionFileError: the file cannot be read, or was rewritten and
                no longer holds these entries.
        """
        groups: dict[int, tuple[EntrySource, list[TreeNode]]] = {}
        for node in nodes:
            source = node._source
            if source is not None:
                groups.setdefault(id(source), (source, []))[1].append(node)
        for source, group in groups.values():
            records = source.pick([node._entry for node in group])
            for node, record in zip(group, records):
                node._entry = record
                node._source = None

    @property
    def entry(self) -> Mapping[str, Any]:
        source = self._source
        if source is not None:
            self._entry = source[self._entry]
            self._source = None
        return self._entry

    @entry.setter
    def entry(self, value: Mapping[str, Any]) -> None:
        self._entry = value
        self._source = None

    @property
    def id(self) -> str:
        source = self._source
        if source is not None:
            return source.id_of(self._entry)
        return self._entry["id"]

    @property
    def type(self) -> Any:
        """The entry's ``type`` (None when absent), without decoding a
        lazily read entry."""
        source = self._source
        if source is not None:
            return source.type_of(self._entry)
        return self._entry.get("type")

    def timestamp(self) -> Any:
        """The entry's ``timestamp`` (:data:`~pi_session.core.timestamps.MISSING`
        when absent), without decoding a lazily read entry."""
        source = self._source
        if source is not None:
            return source.timestamp_of(self._entry, MISSING)
        return self._entry.get("timestamp", MISSING)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeNode):
            return NotImplemented
        return (self.entry, self.children, self.label, self.label_timestamp) == (
            other.entry,
            other.children,
            other.label,
            other.label_timestamp,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"TreeNode(entry={self.entry!r}, children={self.children!r}, label={self.label!r}, "
            f"label_timestamp={self.label_timestamp!r})"
        )
