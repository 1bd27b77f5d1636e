"""A whole import's output, byte for byte: Claude Code and Codex sessions
(the real ones in ../shared/fixtures/other-agents, and generated Claude
Code sessions shaped like the benchmark's) imported into a files store give
exactly the files recorded in ``goldens/import/trees.json`` (a SHA-256 of
each file, the store's own path written as ``<STORE>``), so that making
the conversion or the encoding faster cannot change a byte of what is
written.

The goldens are written by ``python tests/test_import_bytes.py --regen``
(run it with the package whose output is the reference on ``PYTHONPATH``)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))

from pi_session.importers import import_agent_sessions  # noqa: E402
from pi_session.stores import open_store  # noqa: E402

AGENTS = HERE.parent.parent / "shared" / "fixtures" / "other-agents"
REAL = {"claude-code": AGENTS / "claude-code" / "projects", "codex": AGENTS / "codex" / "sessions"}
GOLDEN = HERE / "goldens" / "import" / "trees.json"


def generated_sources(directory: Path) -> Path:
    """Six Claude Code sessions as ``bench/import_bench.py`` writes them
    (thinking, text, parallel tool calls, progress records, compactions),
    about 150 KB each."""
    from import_bench import generate_session

    root = directory / "projects"
    for seed in range(6):
        generate_session(root / f"-home-user-project{seed % 2}" / f"s{seed:05d}.jsonl", seed, 150_000)
    return root


def imported_tree(fmt: str, source: Path, work: Path) -> dict[str, str]:
    """``relative path -> SHA-256`` of every file a files store holds after
    importing ``source`` (its own path replaced by ``<STORE>``)."""
    root = work / "store"
    store = open_store(str(root))
    try:
        results = list(import_agent_sessions(fmt, [str(source)], store, settle_seconds=0))
    finally:
        store.close()
    assert results and all(r.result.status == "imported" for r in results), [r.result.status for r in results]
    tree = {}
    for path in sorted(root.rglob("*.jsonl")):
        data = path.read_bytes().replace(os.fsencode(root), b"<STORE>")
        tree[str(path.relative_to(root))] = hashlib.sha256(data).hexdigest()
    return tree


def all_trees() -> dict[str, dict[str, str]]:
    """The trees of every case (the real ones only when present)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        out["generated"] = imported_tree("claude-code", generated_sources(base / "src"), base / "generated")
        for fmt, source in REAL.items():
            if source.exists():
                out[fmt] = imported_tree(fmt, source, base / fmt)
    return out


@pytest.mark.parametrize("case", ["generated", "claude-code", "codex"])
def test_an_import_writes_exactly_the_recorded_bytes(case: str, tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())[case]
    if case == "generated":
        tree = imported_tree("claude-code", generated_sources(tmp_path / "src"), tmp_path / "out")
    else:
        if not REAL[case].exists():
            pytest.skip(f"needs {REAL[case]} (the ../shared checkout beside this repository)")
        tree = imported_tree(case, REAL[case], tmp_path / "out")
    assert tree == golden


if __name__ == "__main__" and sys.argv[1:] == ["--regen"]:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(all_trees(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
