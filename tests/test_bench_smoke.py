"""Smoke run of the benchmark runner (``bench/run.py --quick --no-pi``): it
generates tiny data sets, times pi-session in worker processes and prints
the table. The benchmark itself is not a test; this only checks it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

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
    for label in ("open (parse + index)", "build context at leaf", "open + build context", "tree", "prepare compaction", "list dir, second call", "peak memory", "spaced-300"):
        assert label in out, label
    assert "n/a" in out  # no pi columns without node
    import json

    data = json.loads((tmp_path / "r.json").read_text())
    lin = data["results"]["linear-300"]["py"][0]
    assert lin["context_messages"] > 0
    assert all(lin["ops"][op] >= 0 for op in ("open", "context", "tree", "append"))
    assert data["results"]["dir-20"]["py"][0]["same"] is True
    assert data["results"]["dir-20"]["py"][0]["sessions"] == 20
    spaced = data["results"]["spaced-300"]["py"][0]
    assert spaced["context_messages"] == 300
    assert spaced["ops"]["open_context"] == spaced["ops"]["open"] + spaced["ops"]["context"]
    per_mb = {r["set"]: r["ours"] for r in data["rows"] if r["op"] == "open_context_per_mb"}
    oc = {r["set"]: r["ours"] for r in data["rows"] if r["op"] == "open_context"}
    size = data["results"]["linear-300"]["bytes"] / 1e6
    assert per_mb["linear-300"] == oc["linear-300"] / size
    # the before/after table of two runs (here the same run twice)
    compare = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "compare.py"), str(tmp_path / "r.json"), str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout
    assert "| linear-300 | open (parse + index) |" in compare and "ms per MB" in compare


def test_spaced_generator_writes_spaced_linear_messages(tmp_path: Path) -> None:
    """The shape of the pi 1.6 issue's measurement: a header, then exactly
    N message entries in user / assistant (one tool call, usage with cost)
    / tool result turns, written with ", " and ": " separators; our reader
    takes it as any session (a linear path of N entries)."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    from pi_session.manager.session_manager import SessionManager

    path = tmp_path / "s.jsonl"
    info = gen.generate_spaced_session_file(path, 30, seed=4)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 31 and info["entries"] == 30 and info["bytes"] == path.stat().st_size
    assert lines[1].startswith(b'{"type": "message", "id": "') and b'", "parentId": null, ' in lines[1]
    roles = [orjson.loads(line)["message"]["role"] for line in lines[1:]]
    assert roles == ["user", "assistant", "toolResult"] * 10
    assistant = orjson.loads(lines[2])["message"]
    assert [b["type"] for b in assistant["content"]] == ["text", "toolCall"] and "total" in assistant["usage"]["cost"]
    manager = SessionManager.open(path, read_only=True)
    assert len(manager.get_branch()) == 30 and not manager.problems
    assert gen.generate_spaced_session_file(tmp_path / "t.jsonl", 30, seed=4)["bytes"] == info["bytes"]
    assert (tmp_path / "t.jsonl").read_bytes() == path.read_bytes()


def test_pi_versions_resolved_as_the_oracle_installs_them(tmp_path: Path, monkeypatch) -> None:
    """bench/run.py finds both pi versions under $PI_ORACLE_HOME (0.73.1)
    and $PI_ORACLE_HOME-1.6.0 (1.6.0, on $PI_ORACLE_NODE), as the oracle
    wrapper installs them, and says what is missing otherwise."""
    import shutil

    import pytest

    if shutil.which("node") is None:
        pytest.skip("node not installed")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import run  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    home = tmp_path / "pi-oracle"
    old = home / "node_modules" / "@mariozechner" / "pi-coding-agent"
    new = tmp_path / "pi-oracle-1.6.0" / "node_modules" / "@earendil-works" / "pi-coding-agent"
    for d in (old, new):
        d.mkdir(parents=True)
        (d / "package.json").write_text("{}")
    node22 = tmp_path / "node22"
    node22.write_text("#!/bin/sh\n")
    node22.chmod(0o755)
    monkeypatch.setenv("PI_ORACLE_HOME", str(home))
    monkeypatch.setenv("PI_ORACLE_NODE", str(node22))
    monkeypatch.setattr(run, "ORACLE", tmp_path / "no-oracle")
    v16, v073 = run.pi_versions()
    assert (v16.version, v16.package_dir, v16.node, v16.why) == ("1.6.0", new, str(node22), "")
    assert (v073.version, v073.package_dir, v073.node, v073.why) == ("0.73.1", old, "node", "")
    assert v16.key == "pi-1.6.0"
    shutil.rmtree(new.parent.parent)
    (missing,) = run.pi_versions(["1.6.0"])
    assert missing.node is None and "not installed" in missing.why
