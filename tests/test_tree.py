"""The session tree: children order, orphans, labels, cycles, deep chains."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session import SessionTree, build_session_context
from pi_session.session.tree import path_to_root


def e(id, parent, ts="2025-01-01T00:00:00.000Z", **kw):
    return {"type": "message", "id": id, "parentId": parent, "timestamp": ts, "message": {"role": "user", "content": id, "timestamp": 0}, **kw}


def shape(nodes):
    return [(n.id, shape(n.children)) for n in nodes]


def test_children_sorted_by_timestamp_and_orphans_are_roots():
    tree = SessionTree([
        e("a", None),
        e("c", "a", "2025-01-01T00:00:05.000Z"),
        e("b", "a", "2025-01-01T00:00:01.000Z"),
        e("o", "missing"),
    ])
    assert shape(tree.roots()) == [("a", [("b", []), ("c", [])]), ("o", [])]


def test_labels_latest_wins_and_empty_clears():
    tree = SessionTree([
        e("a", None),
        {"type": "label", "id": "l1", "parentId": "a", "timestamp": "t1", "targetId": "a", "label": "one"},
        {"type": "label", "id": "l2", "parentId": "l1", "timestamp": "t2", "targetId": "a", "label": "two"},
    ])
    assert tree.labels == {"a": "two"} and tree.label_timestamps == {"a": "t2"}
    tree.add({"type": "label", "id": "l3", "parentId": "l2", "timestamp": "t3", "targetId": "a"})
    assert tree.labels == {}


def test_cycle_and_self_parent_are_cut_and_reported():
    tree = SessionTree([e("a", "c"), e("b", "a"), e("c", "b"), e("s", "s")])
    roots = tree.roots()
    kinds = sorted(p.kind for p in tree.problems)
    assert kinds == ["cycle", "self-parent"]
    ids = sorted(n.id for n, _ in tree.walk(roots))
    assert ids == ["a", "b", "c", "s"]  # nothing lost
    for entry_id in "abcs":
        path = tree.branch(entry_id)
        assert path[-1]["id"] == entry_id and len({p["id"] for p in path}) == len(path)


def test_context_on_a_cycle_terminates():
    entries = [e("a", "b"), e("b", "a")]
    ctx = build_session_context(entries, "a")
    assert [m["content"] for m in ctx["messages"]] == ["b", "a"]
    assert path_to_root(entries[0], {"a": entries[0], "b": entries[1]})[-1]["id"] == "a"


def test_deep_chain_has_no_recursion_limit():
    n = 100_000
    entries = [e(f"{i:08x}", f"{i - 1:08x}" if i else None) for i in range(n)]
    tree = SessionTree(entries)
    assert len(tree.branch(entries[-1]["id"])) == n
    roots = tree.roots()
    assert sum(1 for _ in tree.walk(roots)) == n
    ctx = build_session_context(entries, entries[-1]["id"])
    assert len(ctx["messages"]) == n
    assert sys.getrecursionlimit() < n


@settings(max_examples=200, deadline=2000)
@given(st.lists(st.tuples(st.integers(0, 30), st.one_of(st.none(), st.integers(0, 30))), max_size=40))
def test_any_parent_graph_is_indexed_without_hanging(pairs):
    entries = [e(f"{i:02d}x", None if p is None else f"{p:02d}x", f"2025-01-01T00:00:{i % 60:02d}.000Z") for i, p in pairs]
    seen = {}
    for entry in entries:
        seen[entry["id"]] = entry
    tree = SessionTree(entries)
    roots = tree.roots()
    walked = [n.id for n, _ in tree.walk(roots)]
    assert sorted(walked) == sorted(seen)  # every entry exactly once
    for entry_id in seen:
        path = tree.branch(entry_id)
        assert path[-1]["id"] == entry_id
        assert len({p["id"] for p in path}) == len(path)


def _reference_roots(tree):
    """The tree as a plain dict-of-nodes builder makes it from ``by_id``
    (one node per id, its entry the one ``by_id`` keeps, placed where that
    entry first appears; roots: no parent, a self-parent, a missing parent
    or a cut link; children by timestamp, stable): what :meth:`roots`
    must give whatever the graph (repeated ids, cycles, forward parents)."""
    from functools import cmp_to_key

    from pi_session.core.timestamps import iso_to_ms

    nodes = {eid: {"id": eid, "entry": entry, "children": [], "label": tree.labels.get(eid)} for eid, entry in tree.by_id.items()}
    roots, seen = [], set()
    for entry in tree.entries:
        eid = entry["id"]
        node = nodes[eid]
        if node["entry"] is not entry or id(entry) in seen:
            continue
        seen.add(id(entry))
        parent_id = entry.get("parentId") if isinstance(entry.get("parentId"), str) and entry.get("parentId") else None
        parent = nodes.get(parent_id) if parent_id is not None and parent_id != eid else None
        if parent is None or eid in tree.cut:
            roots.append(node)
        else:
            parent["children"].append(node)

    def compare(a, b):
        ta, tb = iso_to_ms(a["entry"].get("timestamp", "")), iso_to_ms(b["entry"].get("timestamp", ""))
        return 0 if ta is None or tb is None else (ta > tb) - (ta < tb)

    def walk(ns, depth, out):
        for n in ns:
            out.append((n["id"], depth, id(n["entry"]), n["label"]))
            walk(sorted(n["children"], key=cmp_to_key(compare)), depth + 1, out)
        return out

    return walk(roots, 0, [])


@settings(max_examples=300, deadline=2000)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.one_of(st.none(), st.integers(0, 12)), st.integers(0, 5)), max_size=30),
    st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["", "x", "y"])), max_size=4),
    st.booleans(),
)
def test_roots_match_a_plain_builder_on_any_graph(pairs, labels, same_object_twice):
    """roots() (one builder for a clean index and a damaged graph alike)
    equals the plain builder: repeated ids (the last one kept), cycles and
    self-parents cut, parents later in the file, labels, timestamp order."""
    entries = [e(f"{i:02d}x", None if p is None else f"{p:02d}x", f"2025-01-01T00:00:{t:02d}.000Z") for i, p, t in pairs]
    entries += [{"type": "label", "id": f"L{k}{target:02d}", "parentId": None, "targetId": f"{target:02d}x", "label": text,
                 "timestamp": "2025-01-01T00:01:00.000Z"} for k, (target, text) in enumerate(labels)]
    if same_object_twice and entries:
        entries.append(entries[0])
    tree = SessionTree(entries)
    tree.find_cycles()
    got = [(n.id, depth, id(n.entry), n.label) for n, depth in tree.walk(tree.roots())]
    assert got == _reference_roots(tree)
