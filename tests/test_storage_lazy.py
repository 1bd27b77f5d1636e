"""The lazy session index against the full reader: the same
records, entries, problems, tree, context and accessors, on generated
sessions (hypothesis; damaged ones included), the shared pi fixtures and
the msgspec pitfalls the issue names; a file rewritten under a lazily
opened session is read again in full, or refused."""

from __future__ import annotations

import json

import os
import random
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pi_session import SessionManager
from pi_session.compaction import prepare_compaction
from pi_session.storage import LazyRecords, SessionFile, SessionFileError, read_session_file
from pi_session.stores.file import FileHandle

from sessiongen import generate_session, session_text
from shared_paths import needs_oracle

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi"


class FullHandle(FileHandle):
    """A file handle that always reads in full (today's reader): the
    reference the lazy one is compared with."""

    def read(self, *, migrate: bool = True, lazy: bool = False) -> SessionFile:
        return super().read(migrate=migrate, lazy=False)


class LazyHandle(FileHandle):
    """A file handle that always reads lazily (``lazy=True``, not the
    ``"auto"`` guess of :class:`FileHandle`, which reads most small test
    sessions in full)."""

    def read(self, *, migrate: bool = True, lazy: bool = False) -> SessionFile:
        return read_session_file(self.path, migrate=migrate, lazy=lazy)


def _damage(lines: list[bytes], kind: str, i: int, r: random.Random) -> list[bytes]:
    """``lines`` (no newlines) with one kind of damage at line ``i``."""
    out = list(lines)
    i = max(1, min(i, len(out) - 1)) if len(out) > 1 else 0
    line = out[i]
    if kind == "torn-tail":
        out[-1] = out[-1][: max(1, len(out[-1]) // 2)]
    elif kind == "garbage":
        out.insert(i, b"this is not json {")
    elif kind == "split":  # a raw newline inside a string: a record over two lines
        cut = line.find(b'"', len(line) // 2)
        if cut > 0:
            out[i : i + 1] = [line[: cut + 1] + b"a", b"b" + line[cut + 1 :]]
    elif kind == "bad-utf8":  # in a string the head decoder skips
        out[i] = line.replace(b'"timestamp":"', b'"junk":"\xff\xfe","timestamp":"', 1)
    elif kind == "huge-number":
        out[i] = line[:-1] + b',"n":1e400}'
    elif kind == "deep":
        out[i] = line[:-1] + b',"x":' + b"[" * 1100 + b"]" * 1100 + b"}"
    elif kind == "medium-deep":
        out[i] = line[:-1] + b',"x":' + b"[" * 700 + b"]" * 700 + b"}"
    elif kind == "duplicate-id" and i > 1:
        out.append(out[i])
    elif kind == "numeric-parent":
        out[i] = line.replace(b'"parentId":"', b'"parentId":7,"was":"', 1)
    elif kind == "no-id":
        out[i] = line.replace(b'"id":"', b'"idx":"', 1)
    elif kind == "second-header":
        out.insert(i, lines[0])
    elif kind == "blank":
        out.insert(i, b"")
        out.insert(i, b"   ")
    elif kind == "nul":
        out.insert(i, b"\x00" * 40)
    elif kind == "crlf":
        out[i] = line + b"\r"
    elif kind == "not-object":
        out.insert(i, b"[1, 2, 3]")
    elif kind == "type-number":
        out[i] = line.replace(b'"type":"', b'"type":3,"t":"', 1)
    elif kind == "message-string":
        out[i] = line.replace(b'"message":{', b'"message":"x","m":{', 1)
    elif kind == "escaped-id":  # the same id written with escapes
        out[i] = line.replace(b'"id":"', b'"id":"\\u0061', 1)
    elif kind == "forward-parent" and i + 1 < len(out):
        nxt = out[i + 1]
        start = nxt.find(b'"id":"') + 6
        out[i] = line.replace(b'"parentId":"', b'"parentId":"' + nxt[start : start + 8] + b'","p":"', 1)
    elif kind == "key-order":
        out[i] = line.replace(b'{"type":', b'{"zz":1,"type":', 1)
    elif kind == "trailing-garbage":
        out[i] = line + b" xyz"
    elif kind == "bom":
        out[i] = b"\xef\xbb\xbf" + line
    elif kind == "label-unhashable-target":  # a label whose targetId is an array or an object
        try:
            prev_id = orjson.loads(out[i - 1]).get("id") if i > 0 else None
        except (orjson.JSONDecodeError, AttributeError):
            prev_id = None
        target: Any = [prev_id] if r.random() < 0.5 else {"id": prev_id}
        label = {"type": "label", "id": f"lb{r.randrange(16**6):06x}", "parentId": prev_id if isinstance(prev_id, str) else None,
                 "timestamp": "2025-01-01T00:00:00.000Z", "targetId": target, "label": "x"}
        out.insert(i, orjson.dumps(label))
    elif kind == "timestamp-number":
        out[i] = line.replace(b'"timestamp":"', b'"timestamp":12,"ts":"', 1)
    return out


DAMAGE = [
    "torn-tail", "garbage", "split", "bad-utf8", "huge-number", "deep", "medium-deep", "duplicate-id",
    "numeric-parent", "no-id", "second-header", "blank", "nul", "crlf", "not-object", "type-number",
    "message-string", "escaped-id", "forward-parent", "key-order", "trailing-garbage", "bom",
    "timestamp-number", "label-unhashable-target",
]


@pytest.fixture(autouse=True)
def _deep_compare() -> Any:
    """Records nested 1,100 deep (a damage kind) are compared with ``==``,
    which recurses once per level."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    yield
    sys.setrecursionlimit(limit)


def _same_file(path: Path, lazy_mode: Any = True) -> None:
    """``read_session_file`` lazy (``lazy_mode``) and not: the same in every field."""
    full = read_session_file(path)
    lazy = read_session_file(path, lazy=lazy_mode)
    assert lazy.header == full.header
    assert list(lazy.entries) == full.entries
    assert list(lazy.records) == full.records
    assert lazy.record_lines == full.record_lines
    assert lazy.problems == full.problems
    assert lazy.warnings() == full.warnings()
    assert (lazy.fragments, lazy.spans, lazy.line_count, lazy.ends_with_newline, lazy.size, lazy.migrated_from) == (
        full.fragments,
        full.spans,
        full.line_count,
        full.ends_with_newline,
        full.size,
        full.migrated_from,
    )
    assert lazy.entry_columns == full.entry_columns


def _tree_shape(nodes: list[Any]) -> list[Any]:
    return [(n.id, n.entry, n.label, n.label_timestamp, _tree_shape(n.children)) for n in nodes]


def _same_manager(path: Path, handle: type[FileHandle] = LazyHandle) -> None:
    """A manager opened lazily (through ``handle``) and one opened on the
    full reader: the same answers, asked in an order that leaves most
    entries undecoded first."""
    lazy = SessionManager.open(handle(path), read_only=True)
    full = SessionManager.open(FullHandle(path), read_only=True)
    assert lazy.build_session_context() == full.build_session_context()
    assert lazy.problems == full.problems
    assert lazy.get_leaf_id() == full.get_leaf_id()
    assert lazy.get_session_name() == full.get_session_name()
    assert lazy.get_entry_count() == full.get_entry_count()
    assert _tree_shape(lazy.get_tree()) == _tree_shape(full.get_tree())
    leaf = full.get_leaf_id()
    if leaf is not None:
        assert lazy.get_children(leaf) == full.get_children(leaf)
        first = full.get_entries()[0]["id"]
        assert lazy.get_children(first) == full.get_children(first)
        assert lazy.get_entry(first) == full.get_entry(first)
    assert lazy.build_session_projection() == full.build_session_projection()
    assert _plan(lazy.prepare_compaction()) == _plan(prepare_compaction(full.get_branch()))
    assert lazy.get_branch() == full.get_branch()
    assert lazy.get_entries() == full.get_entries()
    assert {e["id"]: lazy.get_label(e["id"]) for e in full.get_entries()} == {
        e["id"]: full.get_label(e["id"]) for e in full.get_entries()
    }
    assert lazy.stats().to_json() == full.stats().to_json()


def _plan(prep: Any) -> Any:
    if prep is None:
        return None
    return (
        prep.first_kept_entry_id,
        prep.messages_to_summarize,
        prep.turn_prefix_messages,
        prep.is_split_turn,
        prep.tokens_before,
        prep.previous_summary,
        prep.file_ops,
        list(prep.projection_entries),
    )


def _write(tmp_path: Path, name: str, lines: list[bytes], newline_at_end: bool = True) -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + (b"\n" if newline_at_end else b""))
    return path


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure prints its case; shrinking takes minutes
)
@given(
    seed=st.integers(0, 10_000),
    pi16=st.booleans(),
    damage=st.lists(st.tuples(st.sampled_from(DAMAGE), st.integers(0, 400)), max_size=4),
)
def test_lazy_reader_equals_full_reader(tmp_path: Path, seed: int, pi16: bool, damage: list[tuple[str, int]]) -> None:
    header, entries = generate_session(seed, pi16=pi16)
    lines = session_text(header, entries).split(b"\n")[:-1]
    r = random.Random(seed)
    for kind, at in damage:
        lines = _damage(lines, kind, at % max(len(lines), 1), r)
    path = _write(tmp_path, f"s-{seed}.jsonl", lines, newline_at_end=not any(k == "torn-tail" for k, _ in damage))
    try:
        full = read_session_file(path)
    except SessionFileError as exc:
        with pytest.raises(SessionFileError) as lazy_exc:
            read_session_file(path, lazy=True)
        assert str(lazy_exc.value) == str(exc)
        return
    if full.header is None:
        return
    _same_file(path)
    _same_manager(path)


@pytest.mark.parametrize("kind", DAMAGE)
def test_each_damage_kind(tmp_path: Path, kind: str) -> None:
    """Every damage kind at a line in the middle of a compacted session
    (so that the lazy side leaves the damaged line undecoded at first)."""
    header, entries = generate_session(11, turns=20, pi16=True)
    lines = session_text(header, entries).split(b"\n")[:-1]
    lines = _damage(lines, kind, len(lines) // 3, random.Random(1))
    path = _write(tmp_path, "s.jsonl", lines, newline_at_end=kind != "torn-tail")
    _same_file(path)
    _same_manager(path)


@pytest.mark.parametrize("turns", [3, 20])
def test_a_whole_last_line_without_a_newline(tmp_path: Path, turns: int) -> None:
    """A file whose last line is a whole entry with no newline after it (an
    editor's save, a copy): read lazily, that entry comes after the
    indexed lines before it, in every list, as the full reader has it."""
    header, entries = generate_session(5, turns=turns, pi16=True)
    lines = session_text(header, entries).split(b"\n")[:-1]
    path = _write(tmp_path, "s.jsonl", lines, newline_at_end=False)
    _same_file(path)
    _same_manager(path)


def _compacted_halfway(seed: int, turns: int, drop: tuple[str, ...]) -> tuple[dict[str, Any], list[Any], dict[str, Any], list[Any]]:
    """A linear generated session (entries of the ``drop`` types left out)
    with one compaction halfway: ``(header, entries before it, the
    compaction, entries after it)``, linked parent to child."""
    header, entries = generate_session(seed, turns=turns, branches=False, pi16=True)
    plain = [e for e in entries if e.get("type") not in drop]
    for prev, e in zip(plain, plain[1:]):
        e["parentId"] = prev["id"]
    cut = len(plain) // 2
    compaction = {
        "type": "compaction", "id": "c0000001", "parentId": plain[cut - 1]["id"], "timestamp": "2025-01-01T00:00:00.000Z",
        "summary": "s", "firstKeptEntryId": plain[cut - 3]["id"], "tokensBefore": 10,
    }
    plain[cut]["parentId"] = compaction["id"]
    return header, plain[:cut], compaction, plain[cut:]


@pytest.mark.parametrize("kind", DAMAGE)
def test_each_damage_kind_after_the_last_compaction(tmp_path: Path, kind: str) -> None:
    """``lazy="auto"`` decodes the lines after the last compaction in the
    index pass (:func:`~pi_session.storage.tail.last_compaction_at`): every
    damage kind there gives the full reader's values too."""
    header, head, compaction, tail = _compacted_halfway(12, 20, ("compaction",))
    lines = session_text(header, [*head, compaction, *tail]).split(b"\n")[:-1]
    lines = _damage(lines, kind, (len(lines) * 4) // 5, random.Random(2))
    path = _write(tmp_path, "s.jsonl", lines, newline_at_end=kind != "torn-tail")
    auto = read_session_file(path, lazy="auto")
    assert isinstance(auto.records, LazyRecords)
    assert auto.records.store.decoded > 0  # the tail was decoded while indexing
    _same_file(path, "auto")
    _same_manager(path, FileHandle)


@pytest.mark.parametrize("branch_every", [0, 7])
def test_a_branchy_tail_is_indexed_after_a_few_branch_points(tmp_path: Path, branch_every: int) -> None:
    """After the last compaction, a linear tail is decoded in full while
    indexing; one that branches (every ``branch_every``-th entry a child of
    an earlier one) only until its :data:`~pi_session.storage.tail.TAIL_BRANCH_POINTS`-th
    branch point, and is indexed from there. Either way the values are the
    full reader's."""
    from pi_session.storage.tail import TAIL_BRANCH_POINTS

    header, head, compaction, tail = _compacted_halfway(13, 40, ("compaction", "label", "session_info", "model_change", "thinking_level_change"))
    if branch_every:
        for k in range(branch_every, len(tail), branch_every):
            tail[k]["parentId"] = tail[k - 3]["id"]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, [*head, compaction, *tail]))
    auto = read_session_file(path, lazy="auto")
    assert isinstance(auto.records, LazyRecords)
    decoded = auto.records.store.decoded
    if branch_every:
        assert len(tail) > branch_every * (TAIL_BRANCH_POINTS + 2)
        assert decoded == branch_every * TAIL_BRANCH_POINTS + 1  # up to the branch point that stops it, included
    else:
        assert decoded == len(tail)
    _same_file(path, "auto")
    _same_manager(path, FileHandle)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_shared_fixtures(path: Path) -> None:
    _same_file(path)
    _same_manager(path)


def test_opening_decodes_only_the_context(tmp_path: Path) -> None:
    """Opening a long compacted session and building its context decodes
    the context's range (and a few entries next to it), not the file."""
    header, entries = generate_session(5, turns=25, branches=False)
    path = tmp_path / "s.jsonl"
    filler = [
        {"type": "message", "id": f"f{i:07d}", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "x" * 200, "timestamp": 1}}
        for i in range(3000)
    ]
    for prev, e in zip(filler, filler[1:]):
        e["parentId"] = prev["id"]
    entries[0] = {**entries[0], "parentId": filler[-1]["id"]}
    path.write_bytes(session_text(header, [*filler, *entries]))
    manager = SessionManager.open(path, read_only=True)
    manager.build_session_context()
    records = manager._records  # noqa: SLF001 - what is decoded is the point
    assert isinstance(records, LazyRecords)
    decoded = sum(1 for i in range(len(records)) if records.is_decoded(i))
    assert decoded < 600, decoded
    full = SessionManager.open(FullHandle(path), read_only=True)
    assert manager.build_session_context() == full.build_session_context()
    assert manager.get_entries() == full.get_entries()


def test_prepare_compaction_decodes_only_what_it_reads(tmp_path: Path) -> None:
    """``SessionManager.prepare_compaction()`` of a long lazily read
    session walks the leaf's path from the end: it decodes the entries
    since the last compaction (and a few next to them), not the file; the
    plan is the full reader's."""
    header, entries = generate_session(5, turns=25, branches=False)
    filler = [
        {"type": "message", "id": f"f{i:07d}", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "x" * 200, "timestamp": 1}}
        for i in range(3000)
    ]
    for prev, e in zip(filler, filler[1:]):
        e["parentId"] = prev["id"]
    entries[0] = {**entries[0], "parentId": filler[-1]["id"]}
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, [*filler, *entries]))
    manager = SessionManager.open(LazyHandle(path), read_only=True)
    records = manager._records  # noqa: SLF001 - what is decoded is the point
    assert isinstance(records, LazyRecords)
    plan = manager.prepare_compaction()
    decoded = sum(1 for i in range(len(records)) if records.is_decoded(i))
    assert decoded < 600, decoded
    full = SessionManager.open(FullHandle(path), read_only=True)
    assert _plan(plan) == _plan(full.prepare_compaction())


def test_the_kept_range_is_read_in_one_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries a compaction keeps (from ``firstKeptEntryId`` to the
    compaction) are read from the file in one batch, not one read each."""
    from pi_session.storage.lazy import EntryStore

    ts = "2025-01-01T00:00:00.000Z"
    entries: list[dict[str, Any]] = []
    for i in range(3000):
        entries.append({"type": "message", "id": f"m{i:07d}", "parentId": entries[-1]["id"] if entries else None,
                        "timestamp": ts, "message": {"role": "user", "content": "x" * 200, "timestamp": 1}})
    entries.append({"type": "compaction", "id": "c0000001", "parentId": entries[-1]["id"], "timestamp": ts,
                    "summary": "s", "firstKeptEntryId": entries[-80]["id"], "tokensBefore": 1000})
    for i in range(20):
        message = {"role": "user", "content": "y", "timestamp": 1} if i % 2 else {
            "role": "assistant", "content": [{"type": "text", "text": "z"}], "provider": "p", "model": "m", "timestamp": 1}
        entries.append({"type": "message", "id": f"t{i:07d}", "parentId": entries[-1]["id"], "timestamp": ts, "message": message})
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": ts, "cwd": "/tmp"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    loads: list[int] = []
    original = EntryStore.load
    monkeypatch.setattr(EntryStore, "load", lambda self, positions: (loads.append(len(positions)), original(self, positions))[1])
    manager = SessionManager.open(path, read_only=True)
    assert isinstance(manager._records, LazyRecords)  # noqa: SLF001 - the lazy path is the point
    context = manager.build_session_context()
    assert len(context["messages"]) == 1 + 80 + 20
    assert len(loads) <= 2, loads
    assert manager.build_session_context() == SessionManager.open(FullHandle(path), read_only=True).build_session_context()


@pytest.mark.parametrize("rewrite", [False, True])
def test_branch_points_sort_children_by_timestamps_read_from_the_lines(tmp_path: Path, rewrite: bool) -> None:
    """The index keeps no timestamps: the tree sorts a branch point's
    children by timestamps read from their lines in one batch, without
    decoding their records, in the order the full reader's tree has
    (children out of file order, one without a timestamp, one with a
    timestamp that is not a time); a file rewritten since it was opened
    is read again instead."""
    def stamp(minute: int) -> str:
        return f"2025-01-01T00:{minute:02d}:00.000Z"

    entries: list[dict[str, Any]] = []
    for i in range(400):
        entries.append({"type": "message", "id": f"m{i:07d}", "parentId": entries[-1]["id"] if entries else None,
                        "timestamp": stamp(10), "message": {"role": "user", "content": "x" * 100, "timestamp": 1}})
    fork = entries[100]["id"]
    odd: list[dict[str, Any]] = [
        {"type": "message", "id": "late0001", "parentId": fork, "timestamp": stamp(59)},
        {"type": "message", "id": "none0001", "parentId": fork},
        {"type": "message", "id": "junk0001", "parentId": fork, "timestamp": "not a time"},
        {"type": "message", "id": "early001", "parentId": fork, "timestamp": stamp(1)},
    ]
    for e in odd:
        e["message"] = {"role": "user", "content": "y", "timestamp": 1}
    entries[200:200] = odd
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": stamp(0), "cwd": "/tmp"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    lazy = SessionManager.open(LazyHandle(path), read_only=True)
    full = SessionManager.open(FullHandle(path), read_only=True)
    if rewrite:  # same entries, other offsets: the timestamps cannot be read where the index says
        path.write_bytes(session_text(header, entries).replace(b'"content":"x', b'"content":  "x'))
    def ids(nodes: list[Any]) -> list[Any]:
        return [(n.id, ids(n.children)) for n in nodes]

    records = lazy._records  # noqa: SLF001 - what is decoded is the point
    assert isinstance(records, LazyRecords)
    before = sum(1 for i in range(len(records)) if records.is_decoded(i))
    tree = lazy.get_tree()
    assert ids(tree) == ids(full.get_tree())
    decoded = sum(1 for i in range(len(records)) if records.is_decoded(i)) - before
    assert decoded == (len(records) - before if rewrite else 0), decoded
    assert _tree_shape(tree) == _tree_shape(full.get_tree())


def test_the_head_decoder_takes_every_entry_type_but_the_eager_ones() -> None:
    """The head decoder's ``type`` is a Literal of pi's entry types but the
    eager ones, both taken from the one declaration of each
    (entries.ENTRY_TYPES, entries.EAGER_ENTRY_TYPES): a new entry type is
    indexed without touching storage."""
    import typing

    from pi_session.entries import EAGER_ENTRY_TYPES, ENTRY_TYPES
    from pi_session.storage.heads import IndexedType
    from pi_session.storage.lazy import EAGER_TYPES

    assert EAGER_TYPES == EAGER_ENTRY_TYPES | {"session"}
    assert EAGER_ENTRY_TYPES < set(ENTRY_TYPES)
    assert set(typing.get_args(IndexedType)) == set(ENTRY_TYPES) - EAGER_TYPES


def test_an_entry_type_pi_does_not_write_is_read_in_full(tmp_path: Path) -> None:
    """A line of a type the head decoder does not know (a future pi's) is
    decoded in full while indexing; the answers are the full reader's."""
    header, entries = generate_session(11, turns=30, branches=True)
    entries.insert(10, {"type": "future_kind", "id": "fut00001", "parentId": entries[9]["id"],
                        "timestamp": "2025-01-01T00:00:00.000Z", "data": {"x": [1, 2]}})
    entries[11] = {**entries[11], "parentId": "fut00001"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    sf = read_session_file(path, lazy=True)
    assert isinstance(sf.entries, LazyRecords)
    assert sf.entries.is_decoded(10) and sf.entries[10]["type"] == "future_kind"
    _same_file(path)
    _same_manager(path)


def test_markdown_export_and_clone_decode_only_their_path(tmp_path: Path) -> None:
    """A Markdown export of the leaf's path and a clone's check for context
    edits it leaves out decode the path and the file's context edits (their
    type is in the index), not the other entries; the results are the full
    reader's."""
    from pi_session.render.export import export_session
    from pi_session.operations.navigating import clone_warning

    header, entries = generate_session(6, turns=25, branches=False)
    filler = [
        {"type": "message", "id": f"f{i:07d}", "parentId": f"f{i - 1:07d}" if i else None, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "x" * 200, "timestamp": 1}}
        for i in range(3000)
    ]
    # an edit off the leaf's path, of an entry on it: the clone warns of it
    edit = {"type": "context_edit", "id": "e0000001", "parentId": filler[1500]["id"], "timestamp": "2025-01-01T00:00:00.000Z",
            "targetId": filler[10]["id"], "replacement": {"content": "redacted"}}
    entries[0] = {**entries[0], "parentId": filler[-1]["id"]}
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, [*filler[:1501], edit, *filler[1501:], *entries]))

    def decoded(manager: SessionManager) -> int:
        records = manager._records  # noqa: SLF001 - what is decoded is the point
        assert isinstance(records, LazyRecords)
        return sum(1 for i in range(len(records)) if records.is_decoded(i))

    full = SessionManager.open(FullHandle(path), read_only=True)
    manager = SessionManager.open(LazyHandle(path), read_only=True)
    target = filler[20]["id"]
    warning = clone_warning(manager, target)
    assert warning is not None and "e0000001" in warning
    assert warning == clone_warning(full, target)
    assert decoded(manager) < 100
    manager = SessionManager.open(LazyHandle(path), read_only=True)
    chunks, count = export_session(manager, "md", manager.get_branch(target))
    text = "".join(chunks)
    want_chunks, want_count = export_session(full, "md", full.get_branch(target))
    assert (text, count) == ("".join(want_chunks), want_count)
    assert "redacted" in text
    assert count == 21 and decoded(manager) < 100  # the path, the edit, and a few next to them
    assert manager.get_entries_of_type("context_edit") == full.get_entries_of_type("context_edit") == [edit]


def test_rewritten_file_is_read_again(tmp_path: Path) -> None:
    """A file replaced under a lazily opened session: the same entries are
    taken from a full read of the new file; different ones are refused
    with a clear error (no traceback of a decoding failure)."""
    header, entries = generate_session(3, turns=12, branches=False)
    path = tmp_path / "s.jsonl"
    text = session_text(header, entries)
    path.write_bytes(text)
    manager = SessionManager.open(LazyHandle(path), read_only=True)
    expected = SessionManager.open(FullHandle(path), read_only=True).get_entries()
    tmp = tmp_path / "new.jsonl"
    tmp.write_bytes(text)
    os.replace(tmp, path)  # the same records, another inode
    assert manager.get_entries() == expected

    other = SessionManager.open(LazyHandle(path), read_only=True)
    lines = text.split(b"\n")
    lines[3] = lines[3].replace(b'"id":"', b'"id":"zz', 1)
    tmp.write_bytes(b"\n".join(lines))
    os.replace(tmp, path)
    with pytest.raises(SessionFileError, match="rewritten since it was opened"):
        other.get_entries()


def test_truncated_in_place_is_refused(tmp_path: Path) -> None:
    header, entries = generate_session(4, turns=12, branches=False)
    path = tmp_path / "s.jsonl"
    text = session_text(header, entries)
    path.write_bytes(text)
    manager = SessionManager.open(LazyHandle(path), read_only=True)
    with open(path, "r+b") as f:
        f.truncate(len(text) // 2)
    with pytest.raises(SessionFileError, match="rewritten since it was opened"):
        manager.get_entries()


def test_appends_after_open_keep_working(tmp_path: Path) -> None:
    """Our own appends (and a grown file) do not disturb the lazy entries."""
    header, entries = generate_session(6, turns=10, branches=False)
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    manager = SessionManager.open(LazyHandle(path))
    manager.append_message({"role": "user", "content": [{"type": "text", "text": "more"}], "timestamp": 1})
    again = SessionManager.open(FullHandle(path), read_only=True)
    assert manager.get_entries() == again.get_entries()
    assert manager.build_session_context() == again.build_session_context()


def test_auto_reads_a_never_compacted_session_in_full(tmp_path: Path) -> None:
    """``lazy="auto"`` (what ``SessionManager.open`` asks for): a session
    without a compaction in its last 60% is read in full (its context
    decodes every entry, the index pass would only add to it); one with a
    late compaction is indexed; both give the full reader's values."""
    header, entries = generate_session(5, turns=25, branches=False)
    plain = [e for e in entries if e.get("type") != "compaction"]
    for prev, e in zip(plain, plain[1:]):
        e["parentId"] = prev["id"]
    linear = tmp_path / "linear.jsonl"
    linear.write_bytes(session_text(header, plain))
    assert not isinstance(read_session_file(linear, lazy="auto").entries, LazyRecords)
    assert isinstance(read_session_file(linear, lazy=True).entries, LazyRecords)
    manager = SessionManager.open(linear, read_only=True)
    assert not isinstance(manager._records, LazyRecords)  # noqa: SLF001 - the way of reading is the point
    compaction = {
        "type": "compaction", "id": "c0000001", "parentId": plain[-1]["id"], "timestamp": "2025-01-01T00:00:00.000Z",
        "summary": "s", "firstKeptEntryId": plain[-2]["id"], "tokensBefore": 10,
    }
    compacted = tmp_path / "compacted.jsonl"
    compacted.write_bytes(session_text(header, [*plain, compaction]))
    assert isinstance(read_session_file(compacted, lazy="auto").entries, LazyRecords)
    for path in (linear, compacted):
        assert read_session_file(path, lazy="auto").entries == read_session_file(path).entries
        _same_manager(path)


@pytest.mark.parametrize(
    "dumps",
    [
        lambda r: json.dumps(r),  # Python's defaults: ", " and ": "
        lambda r: json.dumps(r, indent=None, separators=(",", " :  ")),
        lambda r: json.dumps(r, separators=(",", ":\t")),
    ],
    ids=["json-dumps", "space-before-colon", "tab"],
)
def test_auto_finds_a_compaction_however_the_json_is_spaced(tmp_path: Path, dumps: Any) -> None:
    """The choice of a lazy read does not depend on how the JSON is spaced:
    a compacted session written by another tool (``json.dumps`` defaults,
    ``"type": "compaction"``) is indexed like pi's own bytes, with the full
    reader's values; the word ``compaction`` as a value of another key, or
    inside a text, is not taken for the entry's type."""
    header, entries = generate_session(6, turns=25, branches=False)
    plain = [e for e in entries if e.get("type") != "compaction"]
    for prev, e in zip(plain, plain[1:]):
        e["parentId"] = prev["id"]
    compaction = {
        "type": "compaction", "id": "c0000001", "parentId": plain[-1]["id"], "timestamp": "2025-01-01T00:00:00.000Z",
        "summary": "s", "firstKeptEntryId": plain[-2]["id"], "tokensBefore": 10,
    }
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(dumps(r) + "\n" for r in [header, *plain, compaction]))
    assert isinstance(read_session_file(spaced, lazy="auto").entries, LazyRecords)
    assert read_session_file(spaced, lazy="auto").entries == read_session_file(spaced).entries
    _same_manager(spaced)
    # "compaction" as another key's value, and as text: no compaction entry
    decoy = {"type": "custom", "id": "d0000001", "parentId": plain[-1]["id"], "timestamp": "2025-01-01T00:00:00.000Z",
             "customType": "compaction", "data": {"kind": "compaction", "note": 'say "type": "compaction"'}}
    decoyed = tmp_path / "decoy.jsonl"
    decoyed.write_text("".join(dumps(r) + "\n" for r in [header, *plain, decoy]))
    assert not isinstance(read_session_file(decoyed, lazy="auto").entries, LazyRecords)


@pytest.mark.parametrize("target", [["m0000001"], {"id": "m0000001"}], ids=["array", "object"])
def test_label_with_unhashable_target(tmp_path: Path, target: Any) -> None:
    """A label whose targetId is an array or an object (a damaged entry)
    used to crash ``SessionManager.open`` (TypeError: unhashable) in both
    readers. pi 1.6 keys its label Map by that fresh object, which no id
    ever matches: the entry stays (tree, entries, branch), it labels
    nothing, and nothing is reported on open (``pi-session check``
    reports it as a label whose target is not in the file)."""
    header, _ = generate_session(1, turns=1, branches=False)
    entries = [
        {"type": "message", "id": "m0000001", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "label", "id": "l0000001", "parentId": "m0000001", "timestamp": "2025-01-01T00:00:02.000Z",
         "targetId": target, "label": "x"},
        {"type": "label", "id": "l0000002", "parentId": "l0000001", "timestamp": "2025-01-01T00:00:03.000Z",
         "targetId": target},
        {"type": "message", "id": "m0000002", "parentId": "l0000002", "timestamp": "2025-01-01T00:00:04.000Z",
         "message": {"role": "user", "content": "yo", "timestamp": 2}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    for handle in (LazyHandle(path), FullHandle(path)):
        manager = SessionManager.open(handle, read_only=True)
        assert manager.problems == []
        assert [e["id"] for e in manager.get_branch()] == ["m0000001", "l0000001", "l0000002", "m0000002"]
        assert all(manager.get_label(e["id"]) is None for e in entries)
        assert [m["content"] for m in manager.build_session_context()["messages"]] == ["hi", "yo"]
        assert _tree_shape(manager.get_tree())[0][2] is None
    _same_file(path)
    _same_manager(path)


@needs_oracle
def test_label_with_unhashable_target_as_pi(tmp_path: Path, oracle: Any) -> None:
    """The same file through pi 1.6 (the oracle): the same tree, no label."""
    header, _ = generate_session(1, turns=1, branches=False)
    entries = [
        {"type": "message", "id": "m0000001", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "label", "id": "l0000001", "parentId": "m0000001", "timestamp": "2025-01-01T00:00:02.000Z",
         "targetId": ["m0000001"], "label": "x"},
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text(header, entries))
    pi_tree = orjson.loads(oracle("tree", str(path)))

    def shape(nodes: list[Any]) -> list[Any]:
        return [(n["id"], n["label"], shape(n["children"])) for n in nodes]

    def ours(nodes: list[Any]) -> list[Any]:
        return [(n.id, n.label, ours(n.children)) for n in nodes]

    assert ours(SessionManager.open(path, read_only=True).get_tree()) == shape(pi_tree["roots"])
