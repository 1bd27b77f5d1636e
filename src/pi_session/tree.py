"""The session tree (SPEC 4): entries linked by parentId, labels and names.

Everything here is iterative: a 100,000-entry chain never meets Python's
recursion limit. A parentId cycle or a self-parent (which would make pi loop
forever) is detected, reported and cut at the entry whose parent link closes
the loop, so that entry becomes a root.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from .timestamps import iso_to_ms

__all__ = ["TreeNode", "TreeProblem", "SessionTree", "path_to_root"]


def path_to_root(
    leaf: Mapping[str, Any] | None,
    by_id: Mapping[str, Mapping[str, Any]],
    cut: frozenset[str] | set[str] = frozenset(),
) -> list[Mapping[str, Any]]:
    """The entries from the root down to ``leaf`` (pi's ``getBranch``).

    Args:
        leaf: the entry to start from (None gives an empty path).
        by_id: index id → entry.
        cut: ids whose parent link is ignored (cycle cuts from
            :class:`SessionTree`); a cycle not in ``cut`` is still stopped at
            the first repeated entry.

    Returns:
        A list of entries, root first, ``leaf`` last.
    """
    path: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    current = leaf
    while current is not None:
        cid = current.get("id")
        if cid in seen:
            break
        seen.add(cid)
        path.append(current)
        if cid in cut:
            break
        parent_id = current.get("parentId")
        current = by_id.get(parent_id) if parent_id else None
    path.reverse()
    return path


@dataclass
class TreeNode:
    """One node of :meth:`SessionTree.roots` (pi's ``SessionTreeNode``)."""

    entry: Mapping[str, Any]
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None

    @property
    def id(self) -> str:
        return self.entry["id"]


@dataclass(frozen=True)
class TreeProblem:
    """A structural problem found while indexing: ``kind`` is ``"cycle"``,
    ``"self-parent"`` or ``"duplicate-id"``; ``entry_id`` names the entry."""

    kind: str
    entry_id: str
    message: str


def _ts_compare(a: TreeNode, b: TreeNode) -> int:
    ta = iso_to_ms(a.entry.get("timestamp"))
    tb = iso_to_ms(b.entry.get("timestamp"))
    if ta is None or tb is None:
        return 0  # JavaScript: a comparator returning NaN counts as "equal"
    return (ta > tb) - (ta < tb)


class SessionTree:
    """Index of a session's entries: by id, children, labels, session name,
    roots, and the effective parent of each entry after cycle cuts.

    Args:
        entries: session entries in file order (header excluded); each must
            have a string ``id``.

    Attributes:
        by_id: id → entry (a later duplicate id replaces an earlier one, as in pi).
        labels: target id → label text (latest label entry wins; empty clears).
        label_timestamps: target id → timestamp of the label entry.
        cut: ids whose parent link was cut to break a cycle.
        problems: :class:`TreeProblem` list.
    """

    def __init__(self, entries: Sequence[Mapping[str, Any]] = ()) -> None:
        self.entries: list[Mapping[str, Any]] = []
        self.by_id: dict[str, Mapping[str, Any]] = {}
        self.labels: dict[str, str] = {}
        self.label_timestamps: dict[str, Any] = {}
        self.cut: set[str] = set()
        self.problems: list[TreeProblem] = []
        self._cycles_checked = 0
        for entry in entries:
            self.add(entry)

    # -- building -----------------------------------------------------------

    def add(self, entry: Mapping[str, Any]) -> None:
        """Index one more entry (appended at the end of the file order)."""
        eid = entry["id"]
        if eid in self.by_id:
            self.problems.append(
                TreeProblem("duplicate-id", eid, f"entry id {eid} appears more than once; the last one is used")
            )
        self.entries.append(entry)
        self.by_id[eid] = entry
        if entry.get("type") == "label":
            target = entry.get("targetId")
            if entry.get("label"):
                self.labels[target] = entry["label"]
                self.label_timestamps[target] = entry.get("timestamp")
            else:
                self.labels.pop(target, None)
                self.label_timestamps.pop(target, None)

    def find_cycles(self) -> list[TreeProblem]:
        """Detect parentId cycles and self-parents among entries indexed since
        the last call; cut each at the entry whose parent link closes the loop.

        Returns:
            The new problems (also appended to :attr:`problems`).
        """
        found: list[TreeProblem] = []
        state: dict[str, int] = {}  # 1 = on the current walk, 2 = known acyclic
        by_id = self.by_id
        for entry in self.entries[self._cycles_checked :]:
            start = entry["id"]
            if state.get(start) == 2:
                continue
            walk: list[str] = []
            current: str | None = start
            while current is not None and state.get(current) is None:
                state[current] = 1
                walk.append(current)
                if current in self.cut:
                    break
                parent_id = by_id[current].get("parentId")
                if not parent_id or parent_id not in by_id:
                    break
                if state.get(parent_id) == 1:
                    kind = "self-parent" if parent_id == current else "cycle"
                    what = "is its own parent" if kind == "self-parent" else f"closes a parentId cycle through {parent_id}"
                    problem = TreeProblem(kind, current, f"entry {current} {what}; treated as a root")
                    self.cut.add(current)
                    self.problems.append(problem)
                    found.append(problem)
                    break
                current = parent_id
            for node_id in walk:
                state[node_id] = 2
        self._cycles_checked = len(self.entries)
        return found

    # -- queries ------------------------------------------------------------

    def parent_of(self, entry_id: str) -> str | None:
        """The effective parent id (None for roots, orphans and cut entries)."""
        entry = self.by_id.get(entry_id)
        if entry is None or entry_id in self.cut:
            return None
        parent_id = entry.get("parentId")
        return parent_id if parent_id in self.by_id and parent_id != entry_id else None

    def branch(self, from_id: str | None) -> list[Mapping[str, Any]]:
        """Entries root→``from_id`` (empty for None or an unknown id)."""
        if from_id is None:
            return []
        self.find_cycles()
        return path_to_root(self.by_id.get(from_id), self.by_id, self.cut)

    def children(self, parent_id: str | None) -> list[Mapping[str, Any]]:
        """Direct children of an entry in file order (pi's ``getChildren``)."""
        return [e for e in self.by_id.values() if e.get("parentId") == parent_id]

    def roots(self) -> list[TreeNode]:
        """The tree as nodes (pi's ``getTree``): roots are entries with a null
        parentId, a self-parent, a missing parent (orphans) or a cut cycle
        link; children are sorted by timestamp, oldest first (stable)."""
        self.find_cycles()
        nodes: dict[str, TreeNode] = {}
        for eid, entry in self.by_id.items():
            nodes[eid] = TreeNode(entry, [], self.labels.get(eid), self.label_timestamps.get(eid))
        roots: list[TreeNode] = []
        seen: set[int] = set()
        for entry in self.entries:
            node = nodes[entry["id"]]
            if node.entry is not entry or id(entry) in seen:
                continue  # an earlier duplicate of an id
            seen.add(id(entry))
            parent_id = self.parent_of(entry["id"])
            if parent_id is None:
                roots.append(node)
            else:
                nodes[parent_id].children.append(node)
        stack = list(roots)
        key = cmp_to_key(_ts_compare)
        while stack:
            node = stack.pop()
            if len(node.children) > 1:
                node.children.sort(key=key)
            stack.extend(node.children)
        return roots

    def walk(self, roots: Iterable[TreeNode]) -> Iterable[tuple[TreeNode, int]]:
        """Depth-first pre-order over ``roots``: yields ``(node, depth)``."""
        stack = [(node, 0) for node in reversed(list(roots))]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((child, depth + 1) for child in reversed(node.children))

    def session_name(self) -> str | None:
        """The latest ``session_info`` name (stripped), None if cleared or absent."""
        for entry in reversed(self.entries):
            if entry.get("type") == "session_info":
                name = entry.get("name")
                return name.strip() or None if isinstance(name, str) else None
        return None
