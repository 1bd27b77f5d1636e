"""Smoke run of the search benchmark (``bench/search.py --quick``): it
generates a tiny corpus, builds the index, times the queries (and rg when
installed) and prints the table. The benchmark itself is not a test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_search_bench_prints_a_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "search.py"), "--quick", "--no-pi", "--data", str(tmp_path / "data"),
         "--json", str(tmp_path / "r.json"), "--md", str(tmp_path / "r.md")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    for label in ("index build", "update after one append", "1 word", "3 words", "phrase", "filtered", "index size"):
        assert label in proc.stdout, label
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["sessions"] == 40 and data["files_indexed"] == 40
    assert data["append_bytes_indexed"] > 0 and data["append_bytes_indexed"] < 1000  # only the appended line
    assert set(data["queries"]) == {"1 word", "3 words", "phrase", "filtered"} and all(q["p50"] > 0 for q in data["queries"].values())
    assert (tmp_path / "r.md").read_text().startswith("Corpus: 40 sessions")
    if shutil.which("rg") is not None:  # .ci/run installs ripgrep: the baseline is timed beside ours
        assert all(q["rg_ms"] > 0 for q in data["queries"].values())
