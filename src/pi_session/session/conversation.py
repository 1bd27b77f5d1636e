"""The conversation view of a session tree (**beyond pi**): the tree as
``pi-session tree``, ``browse`` and the HTML viewer show it by default,
without the entries that are state rather than conversation (``custom``
entries: an extension's or an importer's), and the one line that says
what it left out. Pure: :class:`pi_session.session.tree.TreeNode` trees in, nodes
and text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.text import field_text, js_trim
from ..entries.questions import CUSTOM, SESSION_INFO
from .tree_node import TreeNode

__all__ = ["ConversationView", "hidden_by_default", "hidden_summary", "HIDDEN_BY_DEFAULT"]


HIDDEN_BY_DEFAULT = frozenset({"custom"})
"""Entry types the conversation views (``pi-session tree``, ``browse``, the
HTML viewer) leave out unless asked for every entry: ``custom`` entries
hold an extension's or an importer's state (``claude-code/records``,
``codex/records``, an extension's own types), are never sent to the model,
and were most of the entries of a session imported in the earlier layout
(**beyond pi**). A ``session_info`` that
sets the name the session already has there is left out too
(:class:`ConversationView`)."""


def hidden_by_default(node: TreeNode, leaf_id: Any = None) -> bool:
    """Whether the conversation views leave ``node`` out by default for its
    type alone: its type is in :data:`HIDDEN_BY_DEFAULT` and it is neither
    labelled nor the leaf ``leaf_id`` (those are always shown). Decodes no
    lazily read entry."""
    kind = node.type
    return kind.__class__ is str and kind in HIDDEN_BY_DEFAULT and not node.label and node.id != leaf_id


def _name_of(node: TreeNode) -> Any:
    name = node.entry.get("name")
    return js_trim(name) or None if isinstance(name, str) else None


class ConversationView:
    """The tree as the conversation views show it by default: without the
    entries :func:`hidden_by_default` leaves out, nor a ``session_info``
    that repeats the name in effect on its path (it changes nothing; an
    importer writes one per title record), unless labelled or the leaf.
    An entry left out passes its children up to its nearest shown ancestor
    (or they become roots), in order, so what is shown keeps its place in
    the tree; the entries left out are collected in ``hidden`` as the view
    is walked. Decodes only ``session_info`` entries of a lazily read tree.

    Args:
        roots: the tree (``SessionManager.get_tree()``).
        leaf_id: the current leaf (always shown), or None.

    Attributes:
        roots: the shown roots.
        hidden: the nodes left out so far (all of them once
            :meth:`children` was asked of every shown node, as a full
            layout does; :meth:`walk` does that).
    """

    def __init__(self, roots: Sequence[TreeNode], leaf_id: Any = None) -> None:
        self.leaf_id = leaf_id
        self.hidden: list[TreeNode] = []
        self._seen: set[int] = set()
        self._name_after: dict[int, Any] = {}  # id(shown node) -> the session name in effect after it
        self.roots = self._shown(roots, None)

    def _shown(self, nodes: Sequence[TreeNode], name: Any) -> list[TreeNode]:
        out: list[TreeNode] = []
        stack = [(node, name) for node in reversed(nodes)]
        while stack:
            node, current = stack.pop()
            kind = node.type
            after = current
            hide = hidden_by_default(node, self.leaf_id)
            if kind == SESSION_INFO:
                after = _name_of(node)
                hide = after == current and not node.label and node.id != self.leaf_id
            if hide:
                if id(node) not in self._seen:
                    self._seen.add(id(node))
                    self.hidden.append(node)
                stack.extend((child, after) for child in reversed(node.children))
            else:
                self._name_after[id(node)] = after
                out.append(node)
        return out

    def children(self, node: TreeNode) -> list[TreeNode]:
        """The shown children of a shown ``node``, oldest first (an
        entry left out is replaced by its own shown children)."""
        kids = node.children
        if not any(k.type.__class__ is str and (k.type in HIDDEN_BY_DEFAULT or k.type == SESSION_INFO) for k in kids):
            name = self._name_after.get(id(node))
            if name is not None:  # the name in effect goes on down the chain
                for kid in kids:
                    self._name_after[id(kid)] = name
            return kids
        return self._shown(kids, self._name_after.get(id(node)))

    def hidden_rows(self, nodes: Sequence[TreeNode], parents: Sequence[int]) -> list[int]:
        """The positions of the nodes the view leaves out, found in one pass
        over the whole tree given in depth-first order (``nodes``, and each
        one's parent position in ``parents``, -1 for a root), without
        visiting each shown node's children as :meth:`walk` does: the same
        nodes, in the same order. :attr:`hidden` is complete afterwards.
        Reads each node's type; decodes only ``session_info`` entries."""
        leaf_id = self.leaf_id
        kinds = [node.type for node in nodes]
        candidates = [i for i, kind in enumerate(kinds) if kind.__class__ is str and (kind in HIDDEN_BY_DEFAULT or kind == SESSION_INFO)]
        if not candidates:
            return []
        after: list[Any] = []  # the session name in effect below each node
        if any(kinds[i] == SESSION_INFO for i in candidates):
            names = {i: _name_of(nodes[i]) for i in candidates if kinds[i] == SESSION_INFO}
            add = after.append
            for i, parent in enumerate(parents):
                add(names[i] if i in names else after[parent] if parent >= 0 else None)
        out: list[int] = []
        for i in candidates:
            node = nodes[i]
            if node.label or node.id == leaf_id:
                continue
            if kinds[i] == SESSION_INFO:
                parent = parents[i]
                if after[i] != (after[parent] if parent >= 0 else None):
                    continue
            out.append(i)
        for i in out:
            node = nodes[i]
            if id(node) not in self._seen:
                self._seen.add(id(node))
                self.hidden.append(node)
        return out

    def walk(self) -> list[TreeNode]:
        """Every shown node, depth first (and ``hidden`` made complete)."""
        out: list[TreeNode] = []
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(self.children(node)))
        return out


def hidden_summary(hidden: Sequence[TreeNode], *, most: int = 4) -> str:
    """What the conversation views left out, in one line:
    ``"12 entries hidden: 9 my-extension/state, 3 claude-code/records"``
    (``custom`` entries by ``customType``, most frequent first, at most
    ``most`` kinds then how many more), ``""`` for none. Decodes the lazily
    read ones together."""
    if not hidden:
        return ""
    TreeNode.decode_entries(hidden)
    counts: dict[str, int] = {}
    for node in hidden:
        entry = node.entry
        kind = field_text(entry.get("customType")) if entry.get("type") == CUSTOM else field_text(entry.get("type"))
        counts[kind] = counts.get(kind, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{n:,} {kind}" for kind, n in ranked[:most]]
    if len(ranked) > most:
        rest = sum(n for _kind, n in ranked[most:])
        parts.append(f"{rest:,} in {len(ranked) - most:,} other kinds")
    total = len(hidden)
    return f"{total:,} {'entry' if total == 1 else 'entries'} hidden: {', '.join(parts)}"
