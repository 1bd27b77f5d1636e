"""Smoke run of ``bench/web.py`` on a tiny store: it builds the store,
starts the real server and prints the table of page times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_web_bench_prints_a_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "web.py"), "--sessions", "30", "--entries", "300", "--runs", "1",
         "--data", str(tmp_path), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "sessions page (31 sessions)" in proc.stdout
    results = json.loads((tmp_path / "r.json").read_text())
    first = results["session page, first screen (300 entries)"]
    assert first["bytes"] > 10_000 and first["warm_median_s"] >= 0
