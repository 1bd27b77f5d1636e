"""The rows of the session tree in ``pi-session browse``: filters, folds and
search over a session tree, laid out as ``pi-session tree`` lays it out.

Pure: plain data in, plain data out; no Textual, no I/O. The layout is
:func:`pi_session.render.terminal.iter_tree_layout` (a chain stays flat, only
branch points indent), applied to the tree left after filtering: an entry
a filter hides passes its children up to its nearest shown ancestor, so
what is shown keeps its place in the tree (as pi's ``/tree`` filters do).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..render.terminal import iter_tree_layout
from ..session.tree import TreeNode
from ..session.conversation import ConversationView, hidden_by_default
from ..entries.questions import MESSAGE, TOOL_RESULT, USER

__all__ = ["FILTERS", "DEFAULT_FILTER", "Row", "ViewNode", "entry_shown", "filtered_forest", "layout_rows", "find_match", "matching"]

FILTERS: tuple[tuple[str, str], ...] = (
    ("all", "all entries"),
    ("conversation", "conversation (no custom entries)"),
    ("no-tools", "no tool results"),
    ("user", "user messages only"),
    ("labelled", "labelled only"),
)
"""The tree filters, in the order ``f`` cycles through them: ``(key, title)``.
A session opens with :data:`DEFAULT_FILTER`."""

DEFAULT_FILTER = "conversation"
"""The filter a session opens with: every entry but custom ones
(:func:`pi_session.session.conversation.hidden_by_default`)."""


def _role(entry: Any) -> Any:
    message = entry.get("message") if entry.get("type") == MESSAGE else None
    return message.get("role") if isinstance(message, dict) else None


def entry_shown(node: TreeNode, mode: str, leaf_id: Any = None) -> bool:
    """Whether the filter ``mode`` (a key of :data:`FILTERS`) shows ``node``:
    ``all`` every entry; ``conversation`` every entry but custom ones
    (unless labelled or the leaf ``leaf_id``:
    :func:`pi_session.session.conversation.hidden_by_default`; :func:`filtered_forest`
    also leaves out what :class:`pi_session.session.conversation.ConversationView` does);
    ``no-tools`` every entry
    but tool results; ``user`` user messages; ``labelled`` entries with a
    label.

    Raises:
        ValueError: unknown mode.
    """
    if mode == "all":
        return True
    if mode == "conversation":
        return not hidden_by_default(node, leaf_id)
    if mode == "no-tools":
        return _role(node.entry) != TOOL_RESULT
    if mode == "user":  # not an entry literal: a filter mode
        return _role(node.entry) == USER
    if mode == "labelled":
        return bool(node.label)
    raise ValueError(f"unknown filter {mode!r}")


@dataclass(slots=True)
class ViewNode:
    """A shown tree node and its shown children (oldest first)."""

    node: TreeNode
    children: list[ViewNode] = field(default_factory=list)

    @property
    def id(self) -> Any:
        """The entry's id."""
        return self.node.entry.get("id")


def filtered_forest(roots: Sequence[TreeNode], mode: str, *, leaf_id: Any = None, hidden: list[TreeNode] | None = None) -> list[ViewNode]:
    """The tree as the filter ``mode`` shows it: hidden entries are left out
    and their children hang under the nearest shown ancestor (or become
    roots), in depth-first order. Iterative, so any depth works.

    Args:
        leaf_id: the current leaf (the ``conversation`` filter shows it).
        hidden: when given, the nodes left out are appended to it.

    Returns:
        The shown roots.
    """
    left_out: set[int] | None = None
    if mode == "conversation":
        conversation = ConversationView(roots, leaf_id)
        conversation.walk()
        left_out = {id(node) for node in conversation.hidden}
    out: list[ViewNode] = []
    # (node, the list its shown form goes into)
    stack: list[tuple[TreeNode, list[ViewNode]]] = [(node, out) for node in reversed(roots)]
    while stack:
        node, into = stack.pop()
        if (id(node) not in left_out) if left_out is not None else entry_shown(node, mode, leaf_id):
            view = ViewNode(node)
            into.append(view)
            into = view.children
        elif hidden is not None:
            hidden.append(node)
        stack.extend((child, into) for child in reversed(node.children))
    return out


def _descendants(view: ViewNode) -> int:
    count = 0
    stack = list(view.children)
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    return count


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the tree pane.

    Attributes:
        node: the tree node (entry, label).
        prefix: the branch guides drawn before it.
        folded: how many shown descendants a fold hides under it (0: none).
        branches: how many shown children it has.
    """

    node: TreeNode
    prefix: str
    folded: int = 0
    branches: int = 0

    @property
    def id(self) -> Any:
        """The entry's id."""
        return self.node.entry.get("id")


def layout_rows(forest: Sequence[ViewNode], folded: Collection[Any] = ()) -> list[Row]:
    """The rows of ``forest`` in tree order with their guides; the subtree
    of every id in ``folded`` is hidden and counted on its row."""

    def children(view: ViewNode) -> list[ViewNode]:
        return [] if view.id in folded else view.children

    rows = []
    for view, prefix in iter_tree_layout(forest, children):
        hidden = _descendants(view) if view.children and view.id in folded else 0
        rows.append(Row(view.node, prefix, hidden, len(view.children)))
    return rows


def find_match(
    rows: Sequence[Row], query: str, text_of: Callable[[Row], str], start: int, step: int = 1
) -> int | None:
    """The index of the next row (from ``start``, going ``step`` = 1 down or
    -1 up, wrapping around) whose text contains every word of ``query``,
    case-insensitively; None when no row matches or the query is blank."""
    words = query.lower().split()
    if not words or not rows:
        return None
    n = len(rows)
    for k in range(n):
        i = (start + k * step) % n
        text = text_of(rows[i]).lower()
        if all(w in text for w in words):
            return i
    return None


def matching(items: Iterable[Any], query: str, text_of: Callable[[Any], str]) -> list[Any]:
    """The items whose text contains every word of ``query``
    (case-insensitive); all of them for a blank query."""
    words = query.lower().split()
    if not words:
        return list(items)
    return [item for item in items if all(w in text_of(item).lower() for w in words)]
