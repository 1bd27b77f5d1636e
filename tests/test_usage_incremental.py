"""The digest of a sessions root brought up to date one session at a time
(:func:`pi_session.usage.digest.refresh_digest`): after any sequence of
appends, rewrites, removals, new sessions, forks, damaged and unterminated
lines, its rows, damaged lines and every report made from them are exactly
(costs to the last bit) those of a cold read of every file; and only the
files that changed are read."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_session.usage import load_usage, usage_report
from pi_session.usage.digest import refresh_digest
from pi_session.usage.report import merged_groups, report_of_groups
from usage_gen import generate

BASE_MS = 1_741_503_600_000  # sessions start together: many share a slot, project and model
REPORTS = [
    ("daily", {"timezone": "UTC"}),
    ("weekly", {"timezone": "America/New_York", "by": "model"}),
    ("monthly", {"timezone": "Asia/Kolkata", "by": "project"}),
    ("daily", {"timezone": "Europe/Berlin", "by": "agent", "since": "2025-03-09", "until": "2025-03-10"}),
]


class Tree:
    """Session files under a root, written with distinct mtimes (a rewrite
    of the same size is seen as one)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[Path] = []
        self.clock = 1_700_000_000_000_000_000
        self.made = 0

    def _touch(self, path: Path) -> None:
        self.clock += 1_000_000_007
        os.utime(path, ns=(self.clock, self.clock))

    def new(self, seed: int, messages: int, parent: Path | None = None) -> None:
        lines = generate(seed, messages=messages, start_ms=BASE_MS + (seed % 4) * 60_000)
        if parent is not None:  # a fork: the header names its origin, its first messages copied from it
            header = json.loads(lines[0])
            header["parentSession"] = str(parent)
            lines = [(json.dumps(header) + "\n").encode(), *parent.read_bytes().splitlines(keepends=True)[1:], *lines[1:]]
        self.made += 1
        d = self.root / f"--work-p{seed % 2}--"
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"2025-03-09T00-00-00-{self.made:03d}Z_s{self.made}.jsonl"
        path.write_bytes(b"".join(lines))
        self._touch(path)
        self.files.append(path)

    def append(self, i: int, seed: int, messages: int) -> None:
        path = self.files[i % len(self.files)]
        with open(path, "ab") as f:
            f.write(b"".join(generate(seed, messages=messages, start_ms=BASE_MS + 3_600_000)[1:]))
        self._touch(path)

    def rewrite(self, i: int, seed: int, messages: int) -> None:
        path = self.files[i % len(self.files)]
        path.write_bytes(b"".join(generate(seed, messages=messages, start_ms=BASE_MS)))
        self._touch(path)

    def delete(self, i: int) -> None:
        self.files.pop(i % len(self.files)).unlink()

    def damage(self, i: int, torn: bool) -> None:
        path = self.files[i % len(self.files)]
        with open(path, "ab") as f:
            f.write(b'{"type":"message","id":"torn"' if torn else b"not json\n")
        self._touch(path)


def _check(root: Path) -> None:
    digest = refresh_digest(os.path.abspath(root))
    cold = load_usage(root, cache=False)
    assert digest.merged == merged_groups(cold)
    assert digest.problems == cold.problems
    for kind, options in REPORTS:
        assert report_of_groups(digest.merged, digest.problems, kind, **options).to_json() == usage_report(cold, kind, **options).to_json()


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("new"), st.integers(0, 50), st.integers(1, 6)),
        st.tuples(st.just("fork"), st.integers(0, 50), st.integers(1, 6)),
        st.tuples(st.just("append"), st.integers(0, 50), st.integers(1, 6)),
        st.tuples(st.just("rewrite"), st.integers(0, 50), st.integers(1, 6)),
        st.tuples(st.just("delete"), st.integers(0, 50), st.just(0)),
        st.tuples(st.just("damage"), st.integers(0, 50), st.booleans()),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.integers(1, 4), operations=OPERATIONS)
def test_a_digest_kept_up_to_date_equals_a_cold_read(start: int, operations: list[tuple[str, int, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Tree(Path(tmp) / "sessions")
        for seed in range(start):
            tree.new(seed, 5)
        _check(tree.root)
        for op, a, b in operations:
            if op == "new":
                tree.new(100 + a, b)
            elif not tree.files:
                continue
            elif op == "fork":
                tree.new(200 + a, b, parent=tree.files[a % len(tree.files)])
            elif op == "append":
                tree.append(a, 300 + a, b)
            elif op == "rewrite":
                tree.rewrite(a, 400 + a, b)
            elif op == "delete":
                tree.delete(a)
            else:
                tree.damage(a, b)
            _check(tree.root)


def test_only_the_changed_session_is_read_and_summed_again(tmp_path: Path) -> None:
    """One file appended to: only its new bytes are read, and the rows it
    does not touch are taken from the digest as they are (a row altered
    there stays altered), the others summed again."""
    from pi_session.usage.cache import UsageCache, shard_of
    from pi_session.usage.digest import Digest, digest_path, load_digest, update_digest

    tree = Tree(tmp_path / "sessions")
    for seed in range(12):
        tree.new(seed, 6)
    root = os.path.abspath(tree.root)
    before = refresh_digest(root)
    size = tree.files[3].stat().st_size
    tree.append(3, 77, 2)
    changed = {(g[0], g[1], g[2]) for g in load_usage(tree.root, cache=False).sessions[3].groups}
    far = next(i for i, m in enumerate(before.merged) if (m[0], m[1], m[2]) not in changed)
    altered = [list(m) for m in before.merged]
    altered[far][9] += 1000.0
    Path(digest_path(root)).write_bytes(Digest(before.version, before.pricing, before.root, before.stamps, before.files, altered, before.problems).to_bytes())

    summary = UsageCache(root)
    shards = {p.name: p.stat().st_ino for p in summary.path.parent.glob(summary.path.stem + ".rows-*.msgpack")}
    files = summary.update()
    assert summary.read_bytes == tree.files[3].stat().st_size - size
    rewritten = {p.name for p in summary.path.parent.glob(summary.path.stem + ".rows-*.msgpack") if shards.get(p.name) != p.stat().st_ino}
    assert rewritten == {summary.rows_path(shard_of(str(tree.files[3]))).name}  # the messages' rows: one shard written
    after = update_digest(summary, files)
    cold = merged_groups(load_usage(tree.root, cache=False))
    assert after.merged != cold
    assert [m for m in after.merged if m != altered[far]] == [m for m in cold if m[:9] != altered[far][:9]]
    assert altered[far] in after.merged
    kept = load_digest(root)
    assert kept is not None and kept.merged == after.merged
