"""Smoke run of the store benchmark (``bench/stores.py``, tiny sizes) on the
tests' PostgreSQL server: it loads the three stores, times them in worker
processes, checks the appended sessions and writes the markdown table. The
benchmark itself is not a test; this only checks that it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_store_bench_writes_its_table(tmp_path: Path, postgres_server) -> None:
    out = tmp_path / "stores.md"
    proc = subprocess.run(
        [
            sys.executable, str(ROOT / "bench" / "stores.py"),
            "--entries", "60", "--sessions", "12", "--appends", "3", "--writers", "2", "--reps", "1",
            "--data", str(tmp_path / "data"), "--out", str(out), "--json", str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "PI_SESSION_TEST_POSTGRES": postgres_server.url},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = out.read_text()
    assert table.startswith("| operation (ms, median) | files | SQLite | PostgreSQL |")
    for label in ("open + context, 60 entries", "append, 1 writer, p50", "append, 2 writers, one session, p99", "append, 2 writers, 2 sessions, p50", "ls, 12 sessions"):
        assert label in table, label
    assert "every tree connected: yes" in table and "every listing complete: yes" in table
    results = json.loads((tmp_path / "r.json").read_text())
    for backend in ("file", "sqlite", "postgresql"):
        assert results[backend]["append_n_same"]["n"] == 6
        assert results[backend]["ls"][0]["sessions"] == 12
        assert results[backend]["open_context"][0]["messages"] > 0
