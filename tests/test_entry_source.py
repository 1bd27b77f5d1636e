"""One interface for lazily and eagerly read entries
(:class:`pi_session.entries.source.EntrySource`): a file read lazily
(:class:`pi_session.storage.LazyRecords`) and the same file read in full
(:class:`pi_session.entries.source.EntryList`) answer every question alike,
the lazy one without decoding what the question does not need; and no
module above storage knows which kind it holds."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

import pi_session
from pi_session.entries.source import EntryList, EntrySource, entry_source
from pi_session.storage import LazyRecords, read_session_file
from pi_session.core.timestamps import MISSING
from pi_session.session.tree import SessionTree

from sessiongen import generate_session, session_text


def _decoded(records: LazyRecords) -> int:
    return sum(1 for i in range(len(records)) if records.is_decoded(i))


@pytest.mark.parametrize("seed", [1, 7, 23, 101])
def test_lazy_and_eager_sources_answer_alike(tmp_path: Path, seed: int) -> None:
    header, entries = generate_session(seed, turns=60, branches=True, pi16=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    full = read_session_file(path).entries
    lazy = read_session_file(path, lazy=True).entries
    assert isinstance(full, EntryList) and isinstance(lazy, LazyRecords)
    assert isinstance(full, EntrySource) and isinstance(lazy, EntrySource)
    n = len(full)
    assert len(lazy) == n

    # the index answers: nothing is decoded
    before = _decoded(lazy)
    assert [lazy.type_of(i) for i in range(n)] == [full.type_of(i) for i in range(n)]
    assert [lazy.id_of(i) for i in range(n)] == [full.id_of(i) for i in range(n)]
    assert [lazy.parent_of(i) for i in range(n)] == [full.parent_of(i) for i in range(n)]
    assert list(lazy.types()) == list(full.types()) == [e.get("type") for e in full]
    assert list(lazy.types(reverse=True)) == list(full.types(reverse=True))
    assert lazy.ids() == full.ids() == [e["id"] for e in full]
    assert lazy.parent_ids() == full.parent_ids()
    r = random.Random(seed)
    runs = sorted((a, a + r.randrange(0, 5)) for a in r.sample(range(n), min(n, 6)))
    assert isinstance(lazy.select(runs), LazyRecords)
    assert isinstance(full.select(runs), EntryList)
    assert isinstance(lazy.view(3), LazyRecords) and isinstance(lazy.with_head(header), LazyRecords)
    assert _decoded(lazy) == before

    # the entries themselves: equal, and the same object on every access
    assert lazy.select(runs) == full.select(runs)
    assert lazy.view(3) == full.view(3) == full[3:]
    assert lazy.with_head(header) == full.with_head(header) == [header, *full]
    picked = r.sample(range(n), min(n, 10))
    assert lazy.pick(picked) == full.pick(picked) == [full[i] for i in picked]
    assert all(a is b for a, b in zip(lazy.pick(picked), (lazy[i] for i in picked)))
    assert [lazy.timestamp_of(i, MISSING) for i in range(n)] == [full.timestamp_of(i, MISSING) for i in range(n)]
    for entry_type in {e.get("type") for e in full}:
        assert lazy.of_type(entry_type, 2) == full.of_type(entry_type, 2) == [e for e in full[2:] if e.get("type") == entry_type]
    ids = full.ids()
    position = dict(zip(ids, range(n)))
    lazy_map, full_map = lazy.id_map(lazy.ids(), dict(position)), full.id_map(ids, position)
    assert set(lazy_map.keys()) == set(full_map.keys())
    assert all(lazy_map[k] == full_map[k] for k in ids)

    # the tree built on either
    lazy_tree, full_tree = SessionTree(lazy), SessionTree(full)
    for leaf in r.sample(ids, min(n, 5)):
        assert lazy_tree.branch(leaf) == full_tree.branch(leaf)
        assert lazy_tree.children(leaf) == full_tree.children(leaf)
    def walked(tree: SessionTree) -> list[tuple[object, ...]]:
        return [(node.id, depth, node.entry, node.label) for node, depth in tree.walk(tree.roots())]

    assert walked(lazy_tree) == walked(full_tree)
    assert lazy_tree.session_name() == full_tree.session_name()


def test_entry_source_of_a_sequence_keeps_the_entries() -> None:
    entries = [{"type": "message", "id": "a1"}, {"type": "label", "id": "b2", "parentId": "a1"}]
    source = entry_source(entries)
    assert isinstance(source, EntryList) and source == entries and source is not entries
    assert all(a is b for a, b in zip(source, entries))
    assert entry_source(source) is source
    copied = entry_source(source, copy=True)
    assert copied == source and copied is not source
    tree_entries = SessionTree(source).entries
    assert tree_entries == source and tree_entries is not source  # the tree keeps its own


def test_no_module_above_storage_knows_the_lazy_index() -> None:
    """The lazy index is storage's: the tree, the context, compaction and
    the manager read an EntrySource and never name the lazy classes."""
    src = Path(pi_session.__file__).parent
    lazy_names = {"LazyRecords", "LazyById", "EntryStore"}
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith("storage/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("lazy"):
                found.append(f"{rel}:{node.lineno}: imports {node.module}")
            elif isinstance(node, ast.Name) and node.id in lazy_names:
                found.append(f"{rel}:{node.lineno}: names {node.id}")
            elif isinstance(node, ast.Attribute) and node.attr in lazy_names | {"branch_lazy"}:
                found.append(f"{rel}:{node.lineno}: names {node.attr}")
    assert found == []
