"""The session tree (pi 1.6 ``getTree``, ``getBranch``): entries linked by
parentId, labels and names.

Everything here is iterative: a 100,000-entry chain never meets Python's
recursion limit. A parentId cycle or a self-parent (which would make pi loop
forever) is detected, reported and cut at the entry whose parent link closes
the loop, so that entry becomes a root.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from itertools import compress, repeat
from typing import Any, ClassVar, cast

from ..core import jsonio
from ..core.gc_pause import gc_paused
from ..entries.source import EntryList, EntrySource, entry_source
from ..storage.problems import Problem, ProblemKind
from ..core.text import js_trim
from .tree_node import TreeNode
from ..core.timestamps import MISSING, iso_to_ms
from ..entries.questions import LABEL, SESSION_INFO

__all__ = ["TreeNode", "TreeProblem", "SessionTree", "find_orphans", "parent_id_of", "path_to_root"]

def parent_id_of(entry: Mapping[str, Any]) -> str | None:
    """The id of the entry's parent, or None for no parent: as pi reads
    ``parentId`` (``parentId ? byId.get(parentId) : root``), an empty one
    is none, and one that is not a string (a number, an array, an object)
    names no entry, since every entry id is a string."""
    parent = entry.get("parentId")
    return parent if parent.__class__ is str and parent else None


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
    if leaf is None:
        return []
    if not cut and by_id.get(leaf.get("id")) is leaf:  # type: ignore[arg-type]
        # Fast walk: no bookkeeping per step, but never more steps than there
        # are entries; a longer walk means a cycle, walked again carefully.
        path: list[Mapping[str, Any]] = []
        append = path.append
        get = by_id.get
        limit = len(by_id)
        current: Mapping[str, Any] | None = leaf
        while current is not None and len(path) <= limit:
            append(current)
            parent_id = current.get("parentId")  # parent_id_of, inlined (hot loop)
            current = get(parent_id) if parent_id.__class__ is str and parent_id else None
        if current is None:
            path.reverse()
            return path
    path = []
    seen: set[str | None] = set()  # a damaged leaf may lack its id
    current = leaf
    while current is not None:
        cid = current.get("id")
        if cid in seen:
            break
        seen.add(cid)
        path.append(current)
        if cid in cut:
            break
        parent_id = parent_id_of(current)
        current = by_id.get(parent_id) if parent_id is not None else None
    path.reverse()
    return path


@dataclass(frozen=True)
class TreeProblem(Problem):
    """A problem of the parentId tree (a :class:`pi_session.storage.problems.Problem`):
    ``kind`` is ``"cycle"``, ``"self-parent"``, ``"duplicate-id"`` (found
    while indexing) or ``"orphan"`` (:func:`find_orphans`); ``entry_id``
    names the entry; ``line`` is its line when known, else None.

    JSON (:meth:`~pi_session.storage.problems.Problem.to_json`): ``{"line", "kind",
    "message", "entryId"}``."""

    entry_id: str

    JSON_FIELDS: ClassVar[tuple[tuple[str, str], ...]] = (("entry_id", "entryId"),)


def find_orphans(
    entries: Sequence[Mapping[str, Any]],
    by_id: Mapping[str, Any],
    parent_ids: Sequence[Any] | None = None,
    lines: Sequence[int | None] | None = None,
) -> list[TreeProblem]:
    """The ``orphan`` problems of ``entries``: every entry whose ``parentId``
    is neither null/absent nor the id of an entry in ``by_id`` (an id that is
    not a string, e.g. an array, names no entry). pi 1.6 shows such an entry
    as a root (``getTree``); so does :meth:`SessionTree.roots`.

    Args:
        entries: the entries in file order (earlier duplicates of an id
            included).
        by_id: id → entry (:attr:`SessionTree.by_id`).
        parent_ids: ``entries[i].get("parentId")`` for each i, when already
            gathered (``SessionFile.entry_columns[1]``).
        lines: the line of each entry, for :attr:`TreeProblem.line`.

    Returns:
        One :class:`TreeProblem` per orphan, in file order. The common case
        (no orphan) costs no Python loop per entry.
    """
    if parent_ids is None or len(parent_ids) != len(entries):
        parent_ids = [e.get("parentId") for e in entries]
    # a lazily read session's id map answers keys() with a dict's keys
    # view, as a dict does: membership at C speed either way
    try:
        known = sum(map(by_id.keys().__contains__, parent_ids))
    except TypeError:  # an array or object parentId
        known = -1
    if known + parent_ids.count(None) == len(parent_ids):
        return []
    found: list[TreeProblem] = []
    for i, (entry, parent) in enumerate(zip(entries, parent_ids)):
        if parent is None or (parent.__class__ is str and parent in by_id):
            continue
        eid: str = entry["id"]
        if parent.__class__ is str:
            message = f"entry {eid} has parentId {parent!r}, which is not in the file; it is read as a root"
        else:
            message = f"entry {eid} has parentId {jsonio.dumps(parent)}, which is not an id; it is read as a root"
        found.append(TreeProblem(lines[i] if lines is not None else None, "orphan", message, eid))
    return found


def _ts_compare(a: TreeNode, b: TreeNode) -> int:
    ta = iso_to_ms(a.timestamp())
    tb = iso_to_ms(b.timestamp())
    if ta is None or tb is None:
        return 0  # JavaScript: a comparator returning NaN counts as "equal"
    return (ta > tb) - (ta < tb)


class SessionTree:
    """Index of a session's entries: by id, children, labels, session name,
    roots, and the effective parent of each entry after cycle cuts.

    Args:
        entries: session entries in file order (header excluded); each must
            have a string ``id``. An :class:`~pi_session.entries.source.EntrySource`
            (e.g. a lazily read file's, whose entries are decoded only when
            accessed) is indexed from its ids and parentIds without decoding
            its entries; the tree keeps a copy of it (never the caller's
            sequence itself).
        columns: optionally ``(ids, parent_ids, labels)`` as the reader
            gathers them (``SessionFile.entry_columns``): ``entries[i]["id"]``
            and ``entries[i].get("parentId")`` for each i, and the entries of
            type ``label`` in order; spares going over every entry again.

    Attributes:
        entries: the entries indexed, in order (an
            :class:`~pi_session.entries.source.EntrySource`).
        by_id: id → entry (a later duplicate id replaces an earlier one, as in pi).
        labels: target id → label text (latest label entry wins; empty clears).
        label_timestamps: target id → timestamp of the label entry.
        cut: ids whose parent link was cut to break a cycle.
        problems: :class:`TreeProblem` list.
    """

    def __init__(
        self,
        entries: Sequence[Mapping[str, Any]] = (),
        columns: tuple[Sequence[str], Sequence[Any], Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.entries: EntrySource = EntryList()
        self.by_id: MutableMapping[str, Mapping[str, Any]] = {}
        self.labels: dict[str, str] = {}
        self.label_timestamps: dict[str, Any] = {}
        self.cut: set[str] = set()
        self.problems: list[TreeProblem] = []
        self._cycles_checked = 0
        # While every parent link points to an entry indexed before its child
        # (and no id repeats), no cycle is possible and find_cycles has
        # nothing to do. _suspect turns True when that may no longer hold.
        self._suspect = False
        self._unresolved: set[str] = set()  # parent ids not indexed (yet)
        # Path index, valid while no id repeats and nothing is suspect: file
        # position of each id, of each entry's parent (-1: none), and the
        # start of the run of entries each one ends where every entry is the
        # child of the one before it (a linear stretch of the file), so a
        # root-to-leaf path is a few list slices instead of a walk.
        self._position: dict[str, int] = {}
        self._parent_index: list[int] = []
        self._run_start: list[int] = []
        if entries:
            with gc_paused():
                self._bulk_index(entry_source(entries, copy=True), columns)

    def _bulk_index(
        self,
        entries: EntrySource,
        columns: tuple[Sequence[str], Sequence[Any], Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        """Index many entries at once (what :meth:`add` does one by one),
        from their ids and parentIds (``columns``, else asked of
        ``entries``), decoding only the labels.

        The common case costs no Python loop per entry: an entry whose
        parentId is the very id object of the entry before it (as the
        reader shares them, see :mod:`pi_session.storage`) continues a
        linear run; only the others (run starts, branch points, forward or
        missing parents) are looked at one by one."""
        parents: Sequence[Any]
        label_entries: Sequence[Mapping[str, Any]] | None
        if columns is not None and len(columns[0]) == len(entries) == len(columns[1]):
            ids, parents, label_entries = columns
            ids = list(ids)
        else:
            ids = entries.ids()
            parents = entries.parent_ids()
            label_entries = None
        position = dict(zip(ids, range(len(ids))))
        if len(position) != len(ids) or self.entries:
            for record in entries:  # repeated ids: the careful way, in order
                self.add(record)
            return
        n = len(entries)
        self.entries = entries
        # a lazy source's map shares position (while nothing is suspect
        # both map an id to its entry's index; the map keeps that)
        self.by_id = cast(MutableMapping[str, Mapping[str, Any]], entries.id_map(ids, position))
        self._position = position
        # parent_index[i] = i - 1 and run_start[i] = run_start[i - 1] where
        # entry i's parentId is entry i-1's id object (then it is a string;
        # exactly a str, non-empty, when every id is); the rest below
        # (the int objects of position's values, not n new ones: 2.8 MB less
        # on 100,000 entries)
        self._parent_index = parent_index = [-1, *position.values()]
        parent_index.pop()
        if "" not in position and set(map(type, ids)) == {str}:
            others = list(compress(range(1, n), map(operator.is_not, parents[1:], ids)))
        else:
            others = list(range(1, n))
        if n:
            others.insert(0, 0)
        unresolved = self._unresolved
        starts: list[int] = []  # where a run of children-of-the-previous begins
        for i in others:
            parent_id = parents[i]  # parent_id_of, inlined
            if parent_id.__class__ is not str or not parent_id:
                parent_id = None
            j = position.get(parent_id) if parent_id is not None else None
            if j is None:
                if parent_id is not None:
                    unresolved.add(parent_id)
                parent_index[i] = -1
                starts.append(i)
            elif j >= i:
                self._suspect = True
                parent_index[i] = -1
                starts.append(i)
            else:
                parent_index[i] = j
                if j != i - 1:
                    starts.append(i)
        run_start = self._run_start = [0] * n
        starts.append(n)
        for k in range(len(starts) - 1):
            start, end = starts[k], starts[k + 1]
            if start:
                run_start[start:end] = [start] * (end - start)
        labels = self.labels
        label_timestamps = self.label_timestamps
        if label_entries is None:
            label_entries = entries.of_type("label")
        for entry in label_entries:
            # a label's targetId is a string in a well-formed file; a damaged
            # one keys the maps under whatever it holds, which no id matches;
            # an unhashable one (a list, an object) is a new object in pi's
            # Map each time, which nothing matches: it labels nothing
            target = cast(str, entry.get("targetId"))
            if target.__hash__ is None:
                continue
            if entry.get("label"):
                labels[target] = entry["label"]
                label_timestamps[target] = entry.get("timestamp")
            else:
                labels.pop(target, None)
                label_timestamps.pop(target, None)

    # -- building -----------------------------------------------------------

    def add(self, entry: Mapping[str, Any]) -> None:
        """Index one more entry (appended at the end of the file order)."""
        eid = entry["id"]
        if eid in self.by_id:
            self._suspect = True
            self.problems.append(
                TreeProblem(None, "duplicate-id", f"entry id {eid} appears more than once; the last one is used", eid)
            )
        parent_id = parent_id_of(entry)
        if parent_id is not None and parent_id not in self.by_id:
            if parent_id == eid:
                self._suspect = True
            else:
                self._unresolved.add(parent_id)
        if eid in self._unresolved:
            self._suspect = True  # an earlier entry's parent link now resolves forward
        if not self._suspect:
            i = len(self.entries)
            j = self._position.get(parent_id) if parent_id is not None else None
            self._position[eid] = i
            if j is None:
                self._parent_index.append(-1)
                self._run_start.append(i)
            else:
                self._parent_index.append(j)
                self._run_start.append(self._run_start[j] if j == i - 1 else i)
        self.entries.append(cast(dict[str, Any], entry))
        self.by_id[eid] = entry
        if entry.get("type") == LABEL:
            # a label's targetId is a string in a well-formed file; a damaged
            # one keys the maps under whatever it holds, which no id matches
            target = cast(str, entry.get("targetId"))
            if target.__hash__ is None:
                pass  # labels nothing (see the loop in the constructor)
            elif entry.get("label"):
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
        if not self._suspect:
            self._cycles_checked = len(self.entries)
            return found
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
                parent_id = parent_id_of(by_id[current])
                if parent_id is None or parent_id not in by_id:
                    break
                if state.get(parent_id) == 1:
                    kind: ProblemKind = "self-parent" if parent_id == current else "cycle"
                    what = "is its own parent" if kind == "self-parent" else f"closes a parentId cycle through {parent_id}"
                    problem = TreeProblem(None, kind, f"entry {current} {what}; treated as a root", current)
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
        parent_id = parent_id_of(entry)
        return parent_id if parent_id is not None and parent_id in self.by_id and parent_id != entry_id else None

    def branch(self, from_id: str | None) -> EntrySource:
        """Entries root→``from_id`` (empty for None or an unknown id), as a
        new :class:`~pi_session.entries.source.EntrySource` of the tree's
        entries: of a lazily read file, entries are decoded when accessed
        (context building reads only the end of a long path)."""
        if from_id is None:
            return EntryList()
        self.find_cycles()
        if not self._suspect:
            return self.entries.select(self._runs_to(from_id))
        return EntryList(cast(list[dict[str, Any]], path_to_root(self.by_id.get(from_id), self.by_id, self.cut)))

    def on_branch(self, entry_id: str, from_id: str | None) -> bool:
        """Whether ``entry_id`` is on the path root→``from_id`` (an entry
        of :meth:`branch`), without decoding entries of a lazily read file."""
        if from_id is None or entry_id not in self.by_id:
            return False
        self.find_cycles()
        at = self._position.get(entry_id) if not self._suspect else None
        if at.__class__ is int:
            return any(start <= at < end for start, end in self._runs_to(from_id))
        return any(e.get("id") == entry_id for e in self.branch(from_id))

    def _runs_to(self, from_id: str) -> list[tuple[int, int]]:
        """The path root→``from_id`` as ``(start, end)`` index ranges of
        :attr:`entries`, root first (empty for an unknown id); only while
        nothing is suspect (see :meth:`find_cycles`)."""
        i = self._position.get(from_id, -1)
        runs: list[tuple[int, int]] = []
        while i >= 0:
            start = self._run_start[i]
            runs.append((start, i + 1))
            i = self._parent_index[start]
        runs.reverse()
        return runs

    def children(self, parent_id: str | None) -> list[Mapping[str, Any]]:
        """Direct children of an entry in file order (pi's ``getChildren``),
        decoding only those."""
        entries = self.entries
        if len(self.by_id) == len(entries):  # no repeated id: the entries are by_id's
            matches = map(operator.eq, entries.parent_ids(), repeat(parent_id))
            return list(entries.pick(compress(range(len(entries)), matches)))
        return [e for e in self.by_id.values() if e.get("parentId") == parent_id]

    def roots(self) -> list[TreeNode]:
        """The tree as nodes (pi's ``getTree``): roots are entries with a null
        parentId, a self-parent, a missing parent (orphans) or a cut cycle
        link; children are sorted by timestamp, oldest first (stable)."""
        self.find_cycles()
        with gc_paused():
            if not self._suspect and "" not in self.by_id:
                return self._build_roots(self._parent_index, self._position, [None] * len(self.entries))
            return self._build_roots(*self._node_parents())

    def _node_parents(self) -> tuple[list[int], dict[Any, int], list[Any]]:
        """For :meth:`roots` when the path index does not hold (a repeated
        id, a cycle, a parent after its child): the index of each entry's
        node's parent (-1: a root; -2: no node, an earlier entry with an id
        that repeats), id → the index of its node, and the child lists of
        the :meth:`_build_roots` loop with an empty one for each parent
        that comes after a child of its. The node of an id is its entry in
        :attr:`by_id` (the last with that id), placed where that entry
        first appears in the file."""
        entries = self.entries
        ids = entries.ids()
        n = len(ids)
        position = dict(zip(ids, range(n)))  # the last entry of each id
        if len(position) != n:  # a repeated id: its node's entry where it first appears
            for i in range(n):
                eid = ids[i]
                last = position[eid]
                if last > i and entries[i] is entries[last]:
                    position[eid] = i
        parents = [-2] * n
        cut = self.cut
        for i, parent_id in enumerate(entries.parent_ids()):
            eid = ids[i]
            if position[eid] != i:
                continue
            if parent_id.__class__ is not str or not parent_id or parent_id == eid or (cut and eid in cut):
                parents[i] = -1
            else:
                j = position.get(parent_id)
                parents[i] = -1 if j is None else j
        kids: list[Any] = [None] * n
        for i, j in enumerate(parents):
            if j > i:  # made before its child: the child joins its list
                kids[j] = []
        return parents, position, kids

    def _build_roots(self, parents: list[int], position: Mapping[Any, int], kids: list[Any]) -> list[TreeNode]:
        """:meth:`roots` from ``parents`` (each entry's parent's index, -1
        for a root, -2 for an entry that is no node) and ``position`` (id →
        its node's index). Nodes are made last to first, each after the
        children that follow it in the file, so a child list is made with
        its first member (a one-child list is 24 bytes smaller than an
        empty list grown by one append); ``kids`` (each node's child list,
        None until its first child) holds an empty list already for a
        parent that comes after a child of its. A node's entry is read
        (decoded) when it is first asked for (:class:`TreeNode`)."""
        entries = self.entries
        n = len(entries)
        nodes: list[Any] = [None] * n
        roots: list[TreeNode] = []
        forks: list[int] = []  # parents with more than one child
        new_node = TreeNode.__new__
        for i in range(n - 1, -1, -1):
            children = kids[i]
            node = new_node(TreeNode)  # TreeNode.of_source, inlined (hot loop)
            node._entry = i
            node._source = entries
            node.children = [] if children is None else children
            node.label = node.label_timestamp = None
            nodes[i] = node
            j = parents[i]
            if j < 0:
                if j == -1:
                    roots.append(node)
            else:
                siblings = kids[j]
                if siblings is None:
                    kids[j] = [node]
                else:
                    if len(siblings) == 1:
                        forks.append(j)
                    siblings.append(node)
        roots.reverse()
        if forks:
            # the children's timestamps in one batch (a lazy source reads
            # them without decoding the entries)
            entries.read_timestamps([node._entry for j in forks for node in kids[j]])
            key = cmp_to_key(_ts_compare)
            for j in forks:
                children = kids[j]
                children.reverse()  # back to file order: the sort is stable
                children.sort(key=key)
        if self.labels:
            for target, label in self.labels.items():
                i = position.get(target)  # type: ignore[assignment]
                if i is not None:
                    nodes[i].label = label
                    nodes[i].label_timestamp = self.label_timestamps.get(target)
        return roots

    def walk(self, roots: Iterable[TreeNode]) -> Iterable[tuple[TreeNode, int]]:
        """Depth-first pre-order over ``roots``: yields ``(node, depth)``."""
        stack = [(node, 0) for node in reversed(list(roots))]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((child, depth + 1) for child in reversed(node.children))

    def session_name(self) -> str | None:
        """The latest ``session_info`` name, trimmed as JavaScript trims
        (:func:`pi_session.core.text.js_trim`, pi 1.6 ``getSessionName``); None if
        cleared or absent."""
        entries = self.entries
        for i, etype in zip(range(len(entries) - 1, -1, -1), entries.types(reverse=True)):
            if etype == SESSION_INFO:
                name = entries[i].get("name")
                return js_trim(name) or None if isinstance(name, str) else None
        return None
