"""Smoke run of ``bench/regex_search.py`` on a tiny store: it starts the
real server, runs two hostile ``re:`` searches and prints the page times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_regex_search_bench_prints_the_page_times(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "regex_search.py"), "--hostile", "2", "--sessions", "10",
         "--data", str(tmp_path), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 hostile re: searches" in proc.stdout
    result = json.loads((tmp_path / "r.json").read_text())["this"]
    assert result["pages"] and all(answer.startswith("400: ") for answer in result["hostile_answers"])
