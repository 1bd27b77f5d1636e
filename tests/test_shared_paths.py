"""Skip reasons name what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

import shared_paths


def test_a_missing_oracle_is_named_by_its_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shared_paths, "ORACLE", tmp_path / "absent" / "pi-oracle")
    reason = shared_paths.oracle_missing()
    assert reason is not None and str(tmp_path / "absent" / "pi-oracle") in reason and "../shared" in reason


def test_a_missing_program_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    oracle = tmp_path / "pi-oracle"
    oracle.write_text("#!/bin/sh\n")
    monkeypatch.setattr(shared_paths, "ORACLE", oracle)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shared_paths.oracle_missing() == "needs node on PATH for the pi-oracle"


def test_a_missing_fixture_is_named(tmp_path: Path) -> None:
    assert shared_paths.shared_missing(tmp_path) is None
    reason = shared_paths.shared_missing(tmp_path / "x.jsonl")
    assert reason is not None and "x.jsonl" in reason and "../shared" in reason
