"""JSON renderings of the tree for the CLI (the oracle's ``tree`` output).

The terminal renderings (previews, tree rows, :func:`sanitize`) live in
:mod:`pi_session.render.terminal`, shared with ``browse``; they are re-exported here
for the commands."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core.jsonio import iter_pretty, js_stringify
from ..render.terminal import (
    ROLE_STYLES,
    TREE_ROW_STYLE,
    content_text,
    entry_line,
    iter_tree_layout,
    iter_tree_row_parts,
    message_preview,
    one_line,
    plural,
    sanitize,
    session_list_lines,
    system_changes,
    system_preview,
    tree_lines,
    tree_row,
)
from ..render.styled_rows import print_rows
from ..session.tree import TreeNode
from ..entries.questions import MESSAGE

__all__ = [
    "ROLE_STYLES",
    "TREE_ROW_STYLE",
    "content_text",
    "entry_line",
    "iter_tree_layout",
    "iter_tree_row_parts",
    "message_preview",
    "one_line",
    "plural",
    "print_rows",
    "sanitize",
    "session_list_lines",
    "system_changes",
    "system_preview",
    "tree_lines",
    "tree_row",
    "DEEP_TREE",
    "tree_value",
    "iter_tree_json",
    "iter_flat_tree_json",
    "tree_depth",
    "tree_json",
]


DEEP_TREE = 1000
"""Above this depth :func:`iter_tree_json` drops the indentation: the oracle's
layout indents every level, so its size grows with the square of the depth
(a 50,000-entry chain would be gigabytes of spaces)."""


def tree_value(roots: list[TreeNode], leaf_id: str | None) -> dict[str, Any]:
    """The oracle's ``tree`` value: ``{leafId, roots: [{id, type, label,
    children}]}``, built iteratively (a 100,000-deep chain needs no
    recursion)."""
    out_roots: list[dict[str, Any]] = []
    stack: list[tuple[TreeNode, list[dict[str, Any]]]] = [(node, out_roots) for node in reversed(roots)]
    while stack:
        node, into = stack.pop()
        children: list[dict[str, Any]] = []
        into.append({"id": node.entry.get("id"), "type": node.entry.get("type"), "label": node.label, "children": children})
        stack.extend((child, children) for child in reversed(node.children))
    return {"leafId": leaf_id, "roots": out_roots}


def iter_tree_json(roots: list[TreeNode], leaf_id: str | None, *, indent: bool = True) -> Iterator[str]:
    """The oracle's ``tree`` output (:func:`tree_value` as
    ``JSON.stringify(v, null, 1)``) in chunks, through the one JSON encoder
    of the CLI (:func:`pi_session.core.jsonio.iter_pretty`). With ``indent=False``
    the same JSON is written without whitespace."""
    return iter_pretty(tree_value(roots, leaf_id), 1 if indent else None)


def iter_flat_tree_json(roots: list[TreeNode], leaf_id: str | None, on_path: set[Any]) -> Iterator[str]:
    """The tree as flat JSON (``tree --json``, the default shape): ``{"leafId",
    "entries": [...]}`` with one object per entry in tree order (depth first,
    children oldest first), each on its own line: ``{"id", "parentId" (the
    tree parent: null for roots and orphans), "depth" (0 for roots), "type",
    "role" (a message's role, else null), "timestamp" (the entry's, as
    stored, null when absent), "label", "onPath" (on the path root→leaf),
    "children" (child ids)}``. Nesting is constant, so any JSON reader
    (Python's ``json``, jq) handles any session size."""
    yield '{"leafId":' + js_stringify(leaf_id) + ',"entries":['
    stack: list[tuple[TreeNode, Any, int]] = [(node, None, 0) for node in reversed(roots)]
    first = True
    while stack:
        node, parent, depth = stack.pop()
        eid = node.entry.get("id")
        row = {
            "id": eid,
            "parentId": parent,
            "depth": depth,
            "type": node.entry.get("type"),
            "role": _role_of(node.entry),
            "timestamp": node.entry.get("timestamp"),
            "label": node.label,
            "onPath": eid in on_path,
            "children": [child.entry.get("id") for child in node.children],
        }
        yield ("\n" if first else ",\n") + js_stringify(row)
        first = False
        stack.extend((child, eid, depth + 1) for child in reversed(node.children))
    yield "\n]}"


def _role_of(entry: Any) -> Any:
    message = entry.get("message") if entry.get("type") == MESSAGE else None
    return message.get("role") if isinstance(message, dict) else None


def tree_depth(roots: list[TreeNode]) -> int:
    """The number of levels of the tree (0 when empty)."""
    deepest = 0
    stack = [(node, 1) for node in roots]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children)
    return deepest


def tree_json(roots: list[TreeNode], leaf_id: str | None) -> str:
    """:func:`iter_tree_json` joined into one string."""
    return "".join(iter_tree_json(roots, leaf_id))
