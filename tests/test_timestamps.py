"""Timestamps as JavaScript's ``new Date(value).getTime()`` reads them:
against a golden table node produced (tests/tools/make_timestamp_goldens.py),
and tree child order against pi on odd timestamps."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import orjson
import pytest

from pi_session.cli.render import tree_json
from pi_session.manager.session_manager import SessionManager
from pi_session.core.timestamps import MISSING, iso_to_ms

GOLDEN = Path(__file__).parent / "goldens" / "timestamps.json"


@pytest.fixture
def utc(monkeypatch):
    """Local date-times are read in the process's time zone: UTC here."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


TABLE = json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("zone", sorted(TABLE))
def test_matches_node_on_the_golden_table(zone, monkeypatch) -> None:
    if zone != "UTC" and not Path("/usr/share/zoneinfo", zone).exists():
        pytest.skip(f"no time zone data for {zone} on this machine")
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        rows = TABLE[zone]
        assert len(rows) > 600
        wrong = [(value, iso_to_ms(value), expected) for value, expected in rows if iso_to_ms(value) != expected]
        assert not wrong
    finally:
        monkeypatch.undo()
        time.tzset()


def test_missing_is_nan_and_null_is_zero() -> None:
    assert iso_to_ms(MISSING) is None and iso_to_ms(None) == 0
    assert iso_to_ms(True) == 1 and iso_to_ms(float("nan")) is None and iso_to_ms(float("inf")) is None


def test_local_time_without_an_offset(monkeypatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # +05:30, no daylight saving
    time.tzset()
    try:
        assert iso_to_ms("2024-01-01T05:30:00") == iso_to_ms("2024-01-01T00:00:00Z")
        assert iso_to_ms("2024-01-01") == iso_to_ms("2024-01-01T00:00:00Z")  # date-only forms are UTC
    finally:
        monkeypatch.undo()
        time.tzset()


ODD = [None, True, 1704067205000, "2024", "Mon, 01 Jan 2024 00:00:25 GMT", "2024-01-01t00:00:35z", "2023-12-31T24:00:00.000Z"]


def _odd_session(path: Path) -> Path:
    def entry(eid: str, parent: str | None, ts) -> dict:
        e = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts,
             "message": {"role": "user", "content": eid, "timestamp": 1}}
        if ts is MISSING:
            del e["timestamp"]
        return e

    records = [{"type": "session", "version": 3, "id": "odd", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/w"},
               entry("root", None, "2024-01-01T00:00:00.000Z")]
    # siblings in an order their timestamps do not follow; one is missing (NaN)
    for i, ts in enumerate(reversed(ODD)):
        records.append(entry(f"c{i}", "root", ts))
    records.append(entry("nan", "root", MISSING))
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_tree_orders_odd_timestamps_like_pi(tmp_path: Path, oracle, utc) -> None:
    session = _odd_session(tmp_path / "odd.jsonl")
    manager = SessionManager.open(session, read_only=True)
    ours = tree_json(manager.get_tree(), manager.get_leaf_id())
    theirs = oracle("tree", str(session))
    assert json.loads(ours) == json.loads(theirs)
    children = [c["id"] for c in json.loads(ours)["roots"][0]["children"]]
    assert children[:2] == ["c6", "c5"]  # null (0) and true (1) come first
    assert children[-1] == "nan"
