"""SessionManager behaves like pi 1.6's: the same scripts of calls give the
same results, entries, context, projection and files (ids and times aside).

Goldens: tests/goldens/ops/ (pi 1.6's pi-oracle ``ops``; regenerate with
tests/tools/make_ops_goldens.py). Scripts and the runner: tests/opsgen.py.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import GOLDENS
from opsgen import normalize, run_ops

OPS = GOLDENS / "ops"
BEYOND_PI = {"compaction-off-path"}
"""Scripts where pi-session refuses what pi does (each has its own test below)."""
NAMES = sorted(p.name[: -len(".spec.json")] for p in OPS.glob("*.spec.json") if p.name[: -len(".spec.json")] not in BEYOND_PI)

# pi 1.6 methods each golden script must exercise somewhere (a golden set that
# lost one of them would stop checking it)
NEW_METHODS = {
    "appendContextEdit", "appendUsage", "appendCompaction", "branchWithSummary", "buildContextEntries",
    "buildSessionProjection", "getEntryCount", "usesDefaultSessionDir", "newSession", "createBranchedSession",
}


def test_goldens_present():
    assert len(NAMES) >= 40
    used = {op[0] for name in NAMES for op in json.loads((OPS / f"{name}.spec.json").read_text())["ops"]}
    assert NEW_METHODS <= used
    specs = [json.loads((OPS / f"{name}.spec.json").read_text()) for name in NAMES]
    assert any("open" in s for s in specs) and any("entries" in s for s in specs) and any("id" in s for s in specs)


@pytest.mark.parametrize("name", NAMES)
def test_same_as_pi(name, tmp_path):
    spec = json.loads((OPS / f"{name}.spec.json").read_text())
    theirs = json.loads((OPS / f"{name}.out.json").read_text())
    ours = run_ops(spec, tmp_path, OPS)
    n_ours, n_theirs = normalize(ours), normalize(theirs)
    assert n_ours == n_theirs


def test_error_kinds_are_distinguished():
    """The comparison must not pass an error of one kind for another."""
    out = json.loads((OPS / "context-edit.out.json").read_text())
    kinds = {r["error"] for r in normalize(out)["results"] if isinstance(r, dict) and set(r) == {"error"}}
    assert kinds == {"<not editable>", "<not found>", "<bad replacement>"}


def test_file_lines_are_compact_json_like_pi(tmp_path):
    for name in ("first-assistant", "compaction-system", "context-edit", "usage"):
        spec = json.loads((OPS / f"{name}.spec.json").read_text())
        out = tmp_path / name
        out.mkdir()
        ours = run_ops(spec, out, OPS)
        theirs = json.loads((OPS / f"{name}.out.json").read_text())
        (our_text,) = ours["fileText"].values()
        (their_text,) = theirs["fileText"].values()
        strip = lambda t: re.sub(r'"(id|parentId|timestamp|targetId|firstKeptEntryId|fromId)":("[^"]*"|\d{13})', "", t)  # noqa: E731
        assert strip(our_text) == strip(their_text)


def test_a_compaction_keeping_an_entry_of_another_branch_is_refused(tmp_path):
    """pi 1.6 writes a compaction whose first kept entry is on another
    branch, and its context is then the summary alone; pi-session refuses
    it (``FirstKeptOffPathError``, nothing written) and agrees with pi on
    every call before it."""
    spec = json.loads((OPS / "compaction-off-path.spec.json").read_text())
    theirs = normalize(json.loads((OPS / "compaction-off-path.out.json").read_text()))
    raw = run_ops(spec, tmp_path, OPS)
    ours = normalize(raw)
    assert spec["ops"][-1][0] == "appendCompaction"
    assert [m["role"] for m in theirs["context"]["messages"]] == ["compactionSummary"]  # pi: the summary alone
    assert ours["results"][:-1] == theirs["results"][:-1]
    refused = raw["results"][-1]
    assert isinstance(refused, dict) and "which is not on the path" in refused["error"]
    assert ours["entries"] == theirs["entries"][:-1]
    assert [m["role"] for m in ours["context"]["messages"]] == ["branchSummary", "custom"]

