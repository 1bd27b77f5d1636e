"""Smoke run of the slim benchmark (``bench/lean.py --quick --no-pi``): it
generates a small image-heavy session, times open + context before and after
slimming it and prints the table. The benchmark itself is not a test; this
only checks it runs and that slimming shrank the file and restore gave it
back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_lean_bench_prints_a_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "lean.py"), "--quick", "--no-pi", "--data", str(tmp_path / "d"), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "before slim" in proc.stdout and "after slim" in proc.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["after"]["bytes"] < data["before"]["bytes"] * 0.1
    assert data["restoredBytes"] == data["before"]["bytes"]
    assert data["before"]["py"]["messages"] == data["after"]["py"]["messages"]
