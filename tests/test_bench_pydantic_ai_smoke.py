"""Smoke run of the Pydantic AI conversation store benchmark
(``bench/pydantic_ai_store.py``, tiny sizes, files and SQLite and Pydantic
AI's in-memory store and the Agents SDK's SQLiteSession): it stores, saves and loads conversations and writes
its table. The benchmark itself is not a test (no timings are checked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

ROOT = Path(__file__).resolve().parents[1]


def test_pydantic_ai_bench_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "pydantic-ai.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pydantic_ai_store.py"), "--sizes", "4", "40", "--reps", "1", "--kinds", "memory", "agents-sqlite", "file", "sqlite", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = out.read_text()
    assert table.startswith("| operation (ms, median) | messages | in memory (Pydantic AI) | Agents SDK SQLiteSession | files | SQLite |")
    for label in ("| save one turn | 40 |", "| save one turn, fresh store | 4 |", "| load, fresh store | 40 |"):
        assert label in table, label
    assert "The store's own work within 3× on every pi-session store:" in table and "of which the store's reads and writes" in table
    results = json.loads(out.with_suffix(".json").read_text())
    assert set(results) == {"memory", "agents-sqlite", "file", "sqlite"} and set(results["file"]) == {"4", "40"}
