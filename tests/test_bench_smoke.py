"""Smoke run of the benchmark runner (``bench/run.py --quick --no-pi``): it
generates tiny data sets, times pi-session in worker processes and prints
the table. The benchmark itself is not a test; this only checks it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_bench_prints_a_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--no-pi", "--data", str(tmp_path), "--json", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "pi-session vs pi" in out
    for label in ("open (parse + index)", "build context at leaf", "tree", "prepare compaction", "list dir, second call", "peak memory"):
        assert label in out, label
    assert "n/a" in out  # no pi columns without node
    import json

    data = json.loads((tmp_path / "r.json").read_text())
    lin = data["results"]["linear-300"]["py"][0]
    assert lin["context_messages"] > 0
    assert all(lin["ops"][op] >= 0 for op in ("open", "context", "tree", "append"))
    assert data["results"]["dir-20"]["py"][0]["same"] is True
    assert data["results"]["dir-20"]["py"][0]["sessions"] == 20
