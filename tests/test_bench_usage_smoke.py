"""Smoke run of the usage benchmark (``bench/usage.py --quick``): a tiny
corpus, our cold and warm runs timed, the table printed. The benchmark
itself is not a test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_usage_bench_prints_a_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "usage.py"), "--quick", "--no-ccusage", "--data", str(tmp_path / "data"),
         "--json", str(tmp_path / "r.json"), "--md", str(tmp_path / "r.md")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "cold" in proc.stdout and "warm" in proc.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["sessions"] == 60 and data["days"] > 0 and data["total_cost"] > 0
    assert data["ours_warm_s"] > 0 and data["ours_cold_s"] > 0 and data["ours_append_s"] > 0
