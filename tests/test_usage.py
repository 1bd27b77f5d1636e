"""Usage reports (:mod:`pi_session.usage`, ``pi-session usage``): the
aggregation (time zones with daylight saving, weeks, months, --since/--until,
--last, 5-hour blocks), the persistent summary (only appended bytes read, a
rewritten file read again, the cache file opened safely), pricing of
sessions without a recorded cost, damaged lines, an empty store, a SQLite
store, and the console script end to end."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from pi_session.usage import SessionUsage, UsageData, blocks, load_usage, report_for, usage_report
from pi_session.usage.cache import UsageCache, cache_path
from shared_paths import SHARED
from usage_gen import generate, iso, write_tree

H = 3_600_000


def _msg(ts: int, *, eid: str, model: str | None = "claude-sonnet-4-5", inp: int = 100, out: int = 10, cost: float | None = 0.01,
         provider: str = "anthropic", total: int | None = None) -> bytes:
    usage: dict[str, Any] = {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total if total is not None else inp + out}
    if cost is not None:
        usage["cost"] = {"total": cost}
    message: dict[str, Any] = {"role": "assistant", "content": [], "provider": provider, "usage": usage, "timestamp": ts}
    if model is not None:
        message["model"] = model
    return (json.dumps({"type": "message", "id": eid, "parentId": None, "timestamp": iso(ts), "message": message}) + "\n").encode()


def _header(sid: str = "s1", ts: int = 0, cwd: str = "/work/p", parent: str | None = None) -> bytes:
    header = {"type": "session", "version": 3, "id": sid, "timestamp": iso(ts), "cwd": cwd}
    if parent is not None:
        header["parentSession"] = parent
    return (json.dumps(header) + "\n").encode()


def _session(root: Path, name: str, lines: list[bytes], project: str = "--work-p--") -> Path:
    d = root / project
    d.mkdir(parents=True, exist_ok=True)
    path = d / name
    path.write_bytes(b"".join(lines))
    return path


def _data(*times: int, model: str = "m") -> UsageData:
    rows = [[t, model, 1, 2, 3, 4, 0, 0.5, 0, f"e{i}@{t}"] for i, t in enumerate(times)]
    return UsageData([SessionUsage.from_rows("s", "p", "pi", "loc", rows)])


# --- aggregation ---------------------------------------------------------


def test_days_follow_the_time_zone_across_daylight_saving() -> None:
    # 2025-03-30 00:30Z is 01:30 CET (before the change at 01:00Z), 2025-03-30
    # 22:30Z is 00:30 CEST on the 31st (UTC+2 after the change), and still the 30th in UTC
    early, late = 1743294600000, 1743373800000
    data = _data(early, late)
    berlin = usage_report(data, "daily", timezone="Europe/Berlin")
    assert [r.key for r in berlin.rows] == ["2025-03-30", "2025-03-31"]
    utc = usage_report(data, "daily", timezone="UTC")
    assert [r.key for r in utc.rows] == ["2025-03-30"]
    assert utc.rows[0].input_tokens == 2 and utc.rows[0].total_tokens == 20
    # New York, the day before: 2025-03-29 20:30 and 18:30 EDT
    assert [r.key for r in usage_report(data, "daily", timezone="America/New_York").rows] == ["2025-03-29", "2025-03-30"]
    # a half-hour zone: India (UTC+5:30): 00:30Z + 5:30 = 06:00 on the 30th; 22:30Z + 5:30 = 04:00 on the 31st
    assert [r.key for r in usage_report(data, "daily", timezone="Asia/Kolkata").rows] == ["2025-03-30", "2025-03-31"]


def test_weeks_start_on_sunday_and_months_are_calendar_months() -> None:
    # Saturday 2025-05-31, Sunday 2025-06-01, Monday 2025-06-02 (noon UTC)
    sat, sun, mon = 1748692800000, 1748779200000, 1748865600000
    data = _data(sat, sun, mon)
    weekly = usage_report(data, "weekly", timezone="UTC")
    assert [(r.key, r.messages) for r in weekly.rows] == [("2025-05-25", 1), ("2025-06-01", 2)]
    monthly = usage_report(data, "monthly", timezone="UTC")
    assert [(r.key, r.messages) for r in monthly.rows] == [("2025-05", 1), ("2025-06", 2)]
    assert weekly.to_json()["weekly"][0]["week"] == "2025-05-25"


def test_since_until_and_last() -> None:
    days = [1748692800000 + d * 24 * H for d in range(6)]  # 2025-05-31 .. 2025-06-05
    data = _data(*days)
    report = usage_report(data, "daily", timezone="UTC", since="2025-06-01", until="20250603")
    assert [r.key for r in report.rows] == ["2025-06-01", "2025-06-02", "2025-06-03"]
    assert [r.key for r in usage_report(data, "daily", timezone="UTC", last=2).rows] == ["2025-06-04", "2025-06-05"]
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        usage_report(data, "daily", since="June")
    with pytest.raises(ValueError, match="IANA"):
        usage_report(data, "daily", timezone="Mars/Olympus")


def test_blocks_floor_to_the_hour_and_split_after_five_hours() -> None:
    t0 = 1748692800000 + 25 * 60_000  # 12:25Z
    times = [t0, t0 + 2 * H, t0 + 4 * H + 20 * 60_000, t0 + 4 * H + 50 * 60_000, t0 + 12 * H]
    # 12:25, 14:25, 16:45 (within 12:00+5h), 17:15 (past 17:00: a new block at 17:00),
    # 00:25 next day (more than 5 h after the last: a gap, then a block at 00:00)
    report = blocks(_data(*times), timezone="UTC", now_ms=t0 + 12 * H + 60_000)
    shape = [(b.to_json()["startTime"], b.gap, b.entries, b.active) for b in report.blocks]
    assert shape == [
        ("2025-05-31T12:00:00.000Z", False, 3, False),
        ("2025-05-31T17:00:00.000Z", False, 1, False),
        ("2025-05-31T22:15:00.000Z", True, 0, False),
        ("2025-06-01T00:00:00.000Z", False, 1, True),
    ]
    assert report.blocks[0].to_json()["endTime"] == "2025-05-31T17:00:00.000Z"
    assert report.blocks[0].to_json()["tokenCounts"] == {"inputTokens": 3, "outputTokens": 6, "cacheCreationInputTokens": 9, "cacheReadInputTokens": 12}
    assert [b.entries for b in blocks(_data(*times), last=1, now_ms=0).blocks] == [1]


def test_a_message_counts_once_whatever_its_branch_and_in_forks(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    a, b = _msg(t, eid="aaaa0001"), _msg(t + 1000, eid="aaaa0002")
    one = _session(root, "2025-05-31T12-00-00-000Z_one.jsonl", [_header("one", t), a, b, a])  # a duplicated line
    # a fork copies the path into a new session (parentSession): its copies count in the first one only
    _session(root, "2025-05-31T13-00-00-000Z_two.jsonl", [_header("two", t, parent=str(one)), a, b, _msg(t + 5000, eid="bbbb0001")])
    # a session that is not a fork keeps its own messages, whatever their ids
    _session(root, "2025-05-31T14-00-00-000Z_three.jsonl", [_header("three", t), a])
    for cache in (False, True, True):
        data = load_usage(root, cache=cache)
        report = usage_report(data, "session", timezone="UTC")
        assert {r.key: r.messages for r in report.rows} == {"one": 2, "two": 1, "three": 1}
        assert sum(b.entries for b in blocks(data).blocks) == 4


def test_total_tokens_fallback_and_messages_without_tokens(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    _session(root, "x_s.jsonl", [
        _header(), _msg(t, eid="e1", inp=10, out=0, total=50), _msg(t + 1, eid="e2", inp=10, out=5, total=40),
        _msg(t + 2, eid="e3", inp=0, out=0, total=0), _msg(t + 3, eid="e4", model=None),
    ])
    row = usage_report(load_usage(root, cache=False), "daily", timezone="UTC").rows[0]
    assert row.messages == 3  # e3 counts no token
    assert row.output_tokens == 40 + 5 + 10  # e1's missing 40 tokens are output; e4's 10
    assert row.total_tokens == 50 + 40 + 110
    assert row.models == ["[pi] claude-sonnet-4-5"]  # e4 has no model: counted, in no breakdown


# --- the persistent summary -----------------------------------------------


def test_warm_reads_nothing_append_reads_only_new_bytes_rewrite_reads_all(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    path = _session(root, "x_s.jsonl", [_header(), _msg(t, eid="e1"), _msg(t + 1, eid="e2")])
    size = path.stat().st_size
    first = load_usage(root)
    assert first.read_bytes == size
    assert load_usage(root).read_bytes == 0
    added = _msg(t + 2, eid="e3")
    with open(path, "ab") as f:
        f.write(added)
    grown = load_usage(root)
    assert grown.read_bytes == len(added)
    assert sum(len(s.load_rows()) for s in grown.sessions) == 3
    # a rewrite in place (same inode) that changes a counted line: read whole again
    text = path.read_bytes().replace(b'"input": 100', b'"input": 900', 1)
    with open(path, "r+b") as f:
        f.write(text)
    rewritten = load_usage(root)
    assert rewritten.read_bytes == len(text)
    assert sum(r[2] for s in rewritten.sessions for r in s.load_rows()) == 900 + 100 + 100
    # a file replaced by a shorter one (a new inode)
    tmp = path.with_suffix(".new")
    tmp.write_bytes(_header() + _msg(t, eid="e1"))
    os.replace(tmp, path)
    assert sum(len(s.load_rows()) for s in load_usage(root).sessions) == 1
    path.unlink()
    assert load_usage(root).sessions == []


def test_an_unterminated_last_line_is_counted_but_not_cached(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    path = _session(root, "x_s.jsonl", [_header(), _msg(t, eid="e1"), _msg(t + 1, eid="e2").rstrip(b"\n")])
    assert sum(len(s.load_rows()) for s in load_usage(root).sessions) == 2
    with open(path, "ab") as f:
        f.write(b"\n")
    assert sum(len(s.load_rows()) for s in load_usage(root).sessions) == 2


def test_cache_file_is_private_and_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _session(root, "x_s.jsonl", [_header(), _msg(1748692800000, eid="e1")])
    load_usage(root)
    cached = cache_path(os.path.abspath(root))
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    # a symlink planted at the cache's path is neither read nor written through
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    cached.unlink()
    cached.symlink_to(victim)
    data = load_usage(root)
    assert data.read_bytes > 0  # the symlink was not read as a cache
    assert victim.read_bytes() == b"keep me"
    assert not cached.is_symlink()  # replaced by a regular file
    # a damaged cache is ignored and written again
    cached.write_bytes(b"\x00garbage")
    assert len(load_usage(root).sessions) == 1
    assert load_usage(root).read_bytes == 0


def test_cache_summary_matches_a_cold_read(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = write_tree(root, range(6))
    load_usage(root)
    for i, f in enumerate(files):  # grow every file by another session's lines
        with open(f, "ab") as out:
            out.write(b"".join(generate(100 + i, messages=5)[1:]))
    warm = usage_report(load_usage(root), "daily", timezone="Asia/Tokyo").to_json()
    cold = usage_report(load_usage(root, cache=False), "daily", timezone="Asia/Tokyo").to_json()
    assert warm == cold


# --- pricing, damage, stores ----------------------------------------------


def test_messages_without_cost_are_priced_and_unknown_models_listed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    _session(root, "x_s.jsonl", [
        _header(), _msg(t, eid="e1", cost=0, inp=100_000, out=0, total=100_000),
        _msg(t + 1, eid="e2", model="no-such-model-xyz", provider="nowhere", cost=None),
    ])
    report = usage_report(load_usage(root), "daily", timezone="UTC")
    row = report.rows[0]
    assert row.cost == pytest.approx(0.3)  # claude-sonnet-4-5: $3 per million input tokens
    assert report.missing_pricing == ["[pi] no-such-model-xyz"]
    out = report.to_json()
    assert out["missingPricing"] == out["totals"]["unpricedModels"] == ["[pi] no-such-model-xyz"]  # ccusage's field, in totals
    assert [b.get("missingPricing", False) for b in out["daily"][0]["modelBreakdowns"]] == [False, True]
    assert out["estimatedPricing"] == ["[pi] claude-sonnet-4-5"]  # its cost was recorded as 0: priced from the tokens
    recorded = usage_report(load_usage(root), "daily", timezone="UTC", since="20250601").to_json()
    assert "unpricedModels" not in recorded["totals"] and "estimatedPricing" not in recorded


def test_a_fork_of_a_session_without_entry_ids_counts_its_copies_once(tmp_path: Path) -> None:
    """Entries written before pi had ids (version 1) are the same message
    when time, model, tokens and cost are."""
    root = tmp_path / "sessions"
    t = 1748692800000

    def bare(line: bytes) -> bytes:
        entry = json.loads(line)
        del entry["id"], entry["parentId"]
        return (json.dumps(entry) + "\n").encode()

    a, b = bare(_msg(t, eid="x")), bare(_msg(t + 1000, eid="y", inp=7))
    header = json.loads(_header("one", t))
    del header["version"]
    one = _session(root, "2025-05-31T12-00-00-000Z_one.jsonl", [(json.dumps(header) + "\n").encode(), a, b])
    _session(root, "2025-05-31T13-00-00-000Z_two.jsonl", [_header("two", t, parent=str(one)), a, b, bare(_msg(t + 5000, eid="z"))], project="--work-q--")
    for cache in (False, True, True):
        report = usage_report(load_usage(root, cache=cache), "session", timezone="UTC")
        assert {r.key: r.messages for r in report.rows} == {"one": 2, "two": 1}
    assert report_for(root, "daily", timezone="UTC").rows[0].messages == 3


def test_a_missing_root_is_an_error_not_an_empty_report(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for f in (load_usage, report_for):
        with pytest.raises(FileNotFoundError, match="no such sessions directory"):
            f(tmp_path / "missing")
        with pytest.raises(NotADirectoryError, match="not a directory"):
            f(tmp_path / "file")


AGENTS = SHARED / "fixtures" / "other-agents"


@pytest.mark.parametrize(("fmt", "source"), [("claude-code", "claude-code/projects"), ("codex", "codex/sessions")])
def test_imported_sessions_are_priced(cli: Any, tmp_path: Path, fmt: str, source: str) -> None:
    if not (AGENTS / source).exists():
        pytest.skip(f"needs {AGENTS / source}")
    store = tmp_path / "sessions"
    done = cli("--store", str(store), "import", "--from", fmt, str(AGENTS / source), "--json")
    assert done.returncode == 0, done.stderr
    got = cli("usage", "--store", str(store), "--json", "--by", "agent")
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    assert report["totals"]["totalCost"] > 0
    assert {r["agent"] for r in report["daily"]} == {fmt}
    models = {m for r in report["daily"] for m in r["modelsUsed"]}
    assert models and all(m.startswith(f"[{fmt}] ") for m in models)
    priced = {b["modelName"] for r in report["daily"] for b in r["modelBreakdowns"] if b["cost"] > 0}
    assert priced == models - set(report.get("missingPricing", []))


def test_damaged_lines_are_reported_and_skipped(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    path = _session(root, "x_s.jsonl", [_header(), _msg(t, eid="e1"), b'{"type": "message", "usage": {\n', b"garbage\n", _msg(t + 1, eid="e2")])
    done = cli("usage", "--store", str(root), "--json")
    assert done.returncode == 0, done.stderr
    assert f"{path}:3:" in done.stderr and f"{path}:4:" in done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["totals"]["inputTokens"] == 200


def test_empty_store_and_missing_directory(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    done = cli("usage", "--store", str(root))
    assert done.returncode == 0 and "No usage found." in done.stdout
    done = cli("usage", "session", "--store", str(root), "--json")
    assert json.loads(done.stdout)["sessions"] == []
    missing = cli("usage", "--store", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "no such sessions directory" in missing.stderr


def test_bad_options_say_what_is_wrong_and_split_columns_are_not_repeated(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    t = 1748692800000
    _session(root, "2025-05-31T12-00-00-000Z_one.jsonl", [_header("one", t), _msg(t, eid="e1"), _msg(t + 1, eid="e2", model="gpt-5", provider="openai")])
    for args in (("--last", "0"), ("--since", "2025-06-02", "--until", "2025-06-01")):
        for json_args in ((), ("--json",)):
            done = cli("usage", *args, *json_args, "--store", str(root))
            assert done.returncode == 1 and done.stderr.startswith("pi-session: --") and "Traceback" not in done.stderr, done.stderr
    assert "is after --until" in done.stderr
    wide = {**os.environ, "COLUMNS": "200"}
    session = cli("usage", "session", "--by", "project", "--store", str(root), env=wide).stdout.splitlines()[0]
    assert session.count("Project") == 1
    daily = cli("usage", "daily", "--by", "model", "--store", str(root), env=wide).stdout.splitlines()[0]
    assert "Model" in daily and "Models" not in daily


def test_every_store_reports_as_the_files_do(cli: Any, tmp_path: Path, store_url: str) -> None:
    """The same sessions in a SQLite or PostgreSQL store (or another
    directory) give the same report as the files."""
    from pi_session.stores import open_store

    root = tmp_path / "files" / "sessions"
    files = write_tree(root, range(5))
    store = open_store(store_url)
    try:
        for f in files:
            store.create(f.read_bytes().splitlines(keepends=True))
    finally:
        store.close()
    for kind in ("daily", "monthly"):
        from_files = json.loads(cli("usage", kind, "--store", str(root), "--json", "--timezone", "Europe/Berlin").stdout)
        done = cli("usage", kind, "--store", store_url, "--json", "--timezone", "Europe/Berlin")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == from_files
        assert from_files["totals"]["totalTokens"] > 0


# --- the console script ---------------------------------------------------


def test_table_piped_is_plain_with_a_total_and_no_chart(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(4))
    done = cli("usage", "--store", str(root), "--timezone", "UTC", "--breakdown")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout and "█" not in done.stdout
    assert "Total" in done.stdout and "└ claude" in done.stdout or "└ gpt" in done.stdout
    by = cli("usage", "monthly", "--store", str(root), "--by", "project", "--json")
    rows = json.loads(by.stdout)["monthly"]
    assert {r["project"] for r in rows} <= {"--work-p0--", "--work-p1--", "--work-p2--"} and len(rows) > 1
    compact = cli("usage", "weekly", "--store", str(root), "--compact", "--last", "2")
    assert compact.returncode == 0 and "Models" not in compact.stdout
    blocks_out = cli("usage", "blocks", "--store", str(root), "--json")
    assert json.loads(blocks_out.stdout)["blocks"]


def test_chart_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal (a pty), the daily spend is drawn as bars under the table."""
    import pty
    import subprocess
    import sys

    root = tmp_path / "sessions"
    write_tree(root, range(3))
    exe = Path(sys.executable).parent / "pi-session"
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(exe), "usage", "--store", str(root), "--timezone", "UTC"], stdout=follower, stderr=follower,
                            env={**os.environ, "COLUMNS": "120", "TERM": "xterm"})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    text = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "Spend per day" in text and "█" in text


@pytest.mark.parametrize(("args", "message"), [
    (("usage", "hourly"), "expected one of daily"),
    (("usage", "--since", "yesterday"), "YYYY-MM-DD"),
    (("usage", "--timezone", "Nowhere/Else"), "IANA"),
    (("usage", "--by", "colour"), "expected project, model or agent"),
    (("usage", "blocks", "--by", "model"), "apply to daily, weekly, monthly and session"),
])
def test_bad_arguments_one_line(cli: Any, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    done = cli(*args, "--store", str(root))
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
