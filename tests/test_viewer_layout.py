"""The viewer's tree layout made a page at a time (``TreeLayout``): every
page of rows equals the same rows of the whole layout, for generated
branchy trees with the entries the conversation view hides, labels and
several roots; and a lazily read session is decoded only for the rows made."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_session import SessionManager
from pi_session.session.conversation import ConversationView
from pi_session.session.tree import SessionTree, TreeNode
from pi_session.storage import LazyRecords
from pi_session.viewer.model import Row, TreeLayout, tree_rows


def reference_rows(roots: Sequence[TreeNode], view: ConversationView | None) -> list[Row]:
    """The layout rules of ``pi-session tree``, written out plainly and
    recursively (the oracle): a chain keeps its guides, the children of a
    fork get ``├─``/``└─`` and pass ``│``/blank on, several roots are
    siblings; the conversation view's guides by the same rules over its
    shown children."""

    def walk(nodes: Sequence[TreeNode], children: Callable[[TreeNode], Sequence[TreeNode]], visit: Callable[..., None]) -> None:
        def go(node: TreeNode, parent: int, prefix: str, child_prefix: str, depth: int) -> None:
            me = visit(node, parent, prefix, depth)
            kids = children(node)
            if len(kids) == 1:
                go(kids[0], me, child_prefix, child_prefix, depth)
            else:
                for j, kid in enumerate(kids):
                    last = j == len(kids) - 1
                    go(kid, me, child_prefix + ("└─ " if last else "├─ "), child_prefix + ("   " if last else "│  "), depth + 1)

        multi = len(nodes) > 1
        for i, root in enumerate(nodes):
            last = i == len(nodes) - 1
            if multi:
                go(root, -1, "└─ " if last else "├─ ", "   " if last else "│  ", 1)
            else:
                go(root, -1, "", "", 0)

    shown: dict[int, str] = {}
    if view is not None:
        walk(view.roots, view.children, lambda node, parent, prefix, depth: shown.__setitem__(id(node), prefix))
    rows: list[Row] = []

    def add(node: TreeNode, parent: int, prefix: str, depth: int) -> int:
        row = Row(len(rows), parent, prefix, node.entry, node.label, depth)
        if view is not None:
            row.shown_prefix = shown.get(id(node))
            row.hidden = row.shown_prefix is None
        rows.append(row)
        return row.index

    walk(roots, lambda node: node.children, add)
    return rows


KINDS = ["message", "message", "message", "custom", "session_info", "label"]


@st.composite
def sessions(draw: st.DrawFn) -> tuple[list[dict], str | None]:
    """Entries of a branchy session (chains, forks, several roots, orphans,
    custom and session_info entries, labels) and a leaf id (or None)."""
    n = draw(st.integers(1, 60))
    entries: list[dict] = []
    for i in range(n):
        choice = draw(st.integers(0, 9))
        if i == 0 or choice == 0:
            parent = None
        elif choice == 1:
            parent = "missing"  # an orphan: a root of its own
        elif choice <= 5:
            parent = f"e{i - 1}"  # a chain
        else:
            parent = f"e{draw(st.integers(0, i - 1))}"  # a fork
        kind = draw(st.sampled_from(KINDS))
        stamp = f"2026-01-01T00:00:{draw(st.integers(0, 59)):02d}.000Z"
        entry: dict = {"type": kind, "id": f"e{i}", "parentId": parent, "timestamp": stamp}
        if kind == "message":
            entry["message"] = {"role": draw(st.sampled_from(["user", "assistant"])), "content": f"text {i}"}
        elif kind == "custom":
            entry["customType"] = draw(st.sampled_from(["ext/state", "claude-code/records"]))
        elif kind == "session_info":
            entry["name"] = draw(st.sampled_from(["alpha", "beta", " alpha ", ""]))
        else:
            entry["targetId"] = f"e{draw(st.integers(0, i))}"
            entry["label"] = draw(st.sampled_from(["mark", "", None]))
        entries.append(entry)
    leaf = draw(st.one_of(st.none(), st.sampled_from([e["id"] for e in entries])))
    return entries, leaf


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.sampled_from([1, 2, 3, 7, 500]), st.booleans(), st.booleans())
def test_every_page_is_the_slice_of_the_whole_layout(session, page, with_view, with_kinds):
    entries, leaf = session
    roots = SessionTree(entries).roots()
    reference_view = ConversationView(roots, leaf) if with_view else None
    expected = reference_rows(roots, reference_view)
    view = ConversationView(roots, leaf) if with_view else None
    kinds = {e["type"] for e in entries} if with_kinds else None
    layout = TreeLayout(roots, view, kinds=kinds)
    assert len(layout) == len(expected)
    # pages asked for out of order, last first, as a reader jumping around would
    for start in reversed(range(0, len(expected), page)):
        assert layout[start : start + page] == expected[start : start + page]
    for i in reversed(range(len(expected))):
        assert layout[i] == expected[i]
        assert layout.hidden(i) == expected[i].hidden
        assert layout.entry_id(i) == expected[i].entry["id"]
        path, j = [], i
        while j >= 0:
            path.append(j)
            j = expected[j].parent
        assert layout.path_to(i) == path[::-1]
    first: dict[str, int] = {}
    for row in expected:
        first.setdefault(row.entry["id"], row.index)
    assert layout.index_of == first
    assert list(layout) == expected
    if with_view:
        # what the view hides is known in full (the page's "N entries hidden" line)
        assert sorted(id(node) for node in view.hidden) == sorted(id(node) for node in reference_view.hidden)
    assert tree_rows(roots, ConversationView(roots, leaf) if with_view else None) == expected


def test_a_page_of_a_lazily_read_session_decodes_only_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [{"type": "session", "version": 3, "id": "0196a000-0000-7000-8000-000000000001", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}]
    parent = None
    for i in range(3000):
        eid = f"{i:08x}"
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}"}})
        parent = eid if i != 1500 else "00000005"  # a fork half way
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    manager = SessionManager.open(path, read_only=True, lazy_read=True)
    entries = manager.tree.entries
    assert isinstance(entries, LazyRecords)

    def decoded() -> set[int]:
        return {i for i in range(len(entries)) if entries.is_decoded(i)}

    opened = decoded()  # the reader's own few (the first and last lines)
    assert len(opened) < 100
    roots = manager.get_tree()
    layout = TreeLayout(roots, ConversationView(roots, manager.get_leaf_id()))
    assert len(layout) == 3000 and decoded() == opened
    layout.decode(range(2000, 2010))
    page = layout[2000:2010]
    assert decoded() - opened == {int(layout.entry_id(i), 16) for i in range(2000, 2010)}  # ids are file positions
    eager = SessionManager.open(path, read_only=True)
    assert page == tree_rows(eager.get_tree(), ConversationView(eager.get_tree(), eager.get_leaf_id()))[2000:2010]
