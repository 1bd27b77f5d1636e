"""``pi-session usage … --json`` against the real ccusage 20.0.24
(``ccusage pi daily|monthly|session --offline --json``) on the same
sessions directory: pi's real sessions from the shared fixtures and
generated multi-day, multi-model, branchy sessions, in several time zones.
Token counts must be equal, costs within 1e-6."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ccusage_ref import run_ccusage
from shared_paths import SHARED, shared_missing
from usage_gen import write_tree

FIXTURES = SHARED / "fixtures" / "pi"
ZONES = ["UTC", "Asia/Tokyo", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]
TOKENS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens")
ROWS = {"daily": ("daily", "date"), "monthly": ("monthly", "month"), "session": ("sessions", "sessionId")}


def _same_row(ours: dict[str, Any], theirs: dict[str, Any], where: str) -> None:
    for key in TOKENS:
        assert ours[key] == theirs[key], f"{where}: {key} {ours[key]} != ccusage {theirs[key]}"
    assert abs(ours["totalCost"] - theirs["totalCost"]) <= 1e-6, f"{where}: cost {ours['totalCost']} != {theirs['totalCost']}"
    if "modelsUsed" in theirs:
        assert sorted(ours["modelsUsed"]) == sorted(theirs["modelsUsed"]), where


def _compare(ours: dict[str, Any], theirs: dict[str, Any], kind: str) -> None:
    rows_key, id_key = ROWS[kind]
    mine = {r[id_key]: r for r in ours[rows_key]}
    ref = {r[id_key]: r for r in theirs[rows_key]}
    assert list(mine) == list(ref), f"{kind}: periods differ"
    for key, theirs_row in ref.items():
        row = mine[key]
        _same_row(row, theirs_row, f"{kind} {key}")
        breakdowns = {b["modelName"]: b for b in row["modelBreakdowns"]}
        for b in theirs_row.get("modelBreakdowns", []):
            got = breakdowns[b["modelName"]]
            for k in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"):
                assert got[k] == b[k], f"{kind} {key} {b['modelName']} {k}"
            assert abs(got["cost"] - b["cost"]) <= 1e-6
        if kind == "session":
            for k in ("firstActivity", "lastActivity", "projectPath"):
                assert row[k] == theirs_row[k], f"session {key} {k}"
    _same_row(ours["totals"], theirs["totals"], f"{kind} totals")


def _ours(cli: Any, kind: str, sessions: Path, zone: str, *extra: str) -> dict[str, Any]:
    done = cli("usage", kind, "--store", str(sessions), "--timezone", zone, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def fixture_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = shared_missing(FIXTURES)
    if missing:
        pytest.skip(missing)
    sessions = tmp_path_factory.mktemp("ccusage") / "sessions"
    project = sessions / "--Users-dev-project--"
    project.mkdir(parents=True)
    for f in sorted(FIXTURES.glob("*.jsonl")):
        shutil.copy(f, project / f.name)
    return sessions


@pytest.fixture(scope="module")
def generated_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sessions = tmp_path_factory.mktemp("ccusage-gen") / "sessions"
    write_tree(sessions, range(24))
    return sessions


@pytest.mark.parametrize("kind", ["daily", "monthly", "session"])
@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/Los_Angeles"])
def test_real_pi_sessions_as_ccusage(cli: Any, fixture_sessions: Path, kind: str, zone: str) -> None:
    theirs = run_ccusage(kind, fixture_sessions, timezone=zone)
    assert theirs[ROWS[kind][0]], "ccusage found nothing: the fixture tree is wrong"
    _compare(_ours(cli, kind, fixture_sessions, zone), theirs, kind)


@pytest.mark.parametrize(("kind", "zone"), [(k, z) for k in ("daily", "monthly") for z in ZONES] + [("session", "UTC"), ("session", "Asia/Kolkata")])
def test_generated_sessions_as_ccusage(cli: Any, generated_sessions: Path, kind: str, zone: str) -> None:
    theirs = run_ccusage(kind, generated_sessions, timezone=zone)
    ours = _ours(cli, kind, generated_sessions, zone)
    _compare(ours, theirs, kind)
    if kind == "daily":
        assert len(ours["daily"]) > 10, "the generated sessions span many days"


@pytest.mark.parametrize("kind", ["daily", "session"])
def test_since_until_as_ccusage(cli: Any, generated_sessions: Path, kind: str) -> None:
    ours_all = _ours(cli, "daily", generated_sessions, "Europe/Berlin")
    days = [r["date"] for r in ours_all["daily"]]
    since, until = days[len(days) // 4], days[3 * len(days) // 4]
    theirs = run_ccusage(kind, generated_sessions, timezone="Europe/Berlin", extra=("--since", since.replace("-", ""), "--until", until.replace("-", "")))
    ours = _ours(cli, kind, generated_sessions, "Europe/Berlin", "--since", since, "--until", until.replace("-", ""))
    _compare(ours, theirs, kind)


def test_empty_directory_as_ccusage(cli: Any, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    theirs = run_ccusage("daily", sessions)
    ours = _ours(cli, "daily", sessions, "UTC")
    assert ours == theirs
    assert ours["daily"] == [] and ours["totals"]["totalTokens"] == 0


def test_a_report_brought_up_to_date_as_ccusage(cli: Any, tmp_path: Path) -> None:
    """Sessions appended to, rewritten, removed and added after a report:
    the next one (its digest brought up to date, only what changed read)
    agrees with ccusage reading everything."""
    from usage_gen import generate

    sessions = tmp_path / "sessions"
    files = write_tree(sessions, range(10))
    _ours(cli, "daily", sessions, "UTC")
    for i, path in enumerate(files[:3]):
        with open(path, "ab") as f:
            f.write(b"".join(generate(500 + i, messages=8)[1:]))
    files[3].write_bytes(b"".join(generate(600, messages=12)))
    files[4].unlink()
    (files[5].parent / "2025-06-01T00-00-00-000Z_added.jsonl").write_bytes(b"".join(generate(700, messages=10)))
    for kind, zone in (("daily", "UTC"), ("daily", "Asia/Tokyo"), ("monthly", "Europe/Berlin")):
        _compare(_ours(cli, kind, sessions, zone), run_ccusage(kind, sessions, timezone=zone), kind)
