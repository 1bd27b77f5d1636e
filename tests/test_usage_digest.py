"""The digest of a sessions root (:mod:`pi_session.usage.digest`) and the
warm ``pi-session usage daily|weekly|monthly --json`` it answers before
typer and rich load (:mod:`pi_session.cli.usage_fast`): the same report as
a cold read of every file, brought up to date as soon as any file changes,
is added or goes, and never used when it is damaged, another version's or when the
files have damaged lines (their warnings are the full command's)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from pi_session.core.paths import cache_dir
from pi_session.usage import load_usage, report_for, usage_report
from pi_session.usage.cache import cache_path
from pi_session.usage import stamps
from pi_session.usage.stamps import pack_json, read_json
from pi_session.usage.days import LocalDays, offsets_key, zone_of
from pi_session.usage.digest import Digest, digest_path, fresh_digest, load_digest
from usage_gen import generate, write_tree

ARGS = [
    ("daily", "--timezone", "UTC"),
    ("weekly", "--timezone", "America/New_York"),
    ("monthly", "--by", "model", "--timezone", "Australia/Lord_Howe"),
    ("daily", "--by", "project", "--since", "2025-03-01", "--until", "2025-10-31", "--timezone", "Europe/Berlin"),
    ("daily", "--last", "3", "--by", "agent", "--timezone", "Asia/Kolkata"),
]


def _warm(cli_process: Any, root: Path, *args: str) -> tuple[dict[str, Any], bool]:
    """The report of ``usage ARGS --json`` and whether it was answered
    without loading typer (from the digest): a new process (``-X
    importtime`` shows what it loads)."""
    done = cli_process("usage", *args, "--json", "--store", str(root), env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), not _loaded_typer(done.stderr)


def _loaded_typer(importtime: str) -> bool:
    """Whether ``-X importtime`` output shows typer imported."""
    return re.search(r"\|\s+typer$", importtime, re.MULTILINE) is not None


def _flipped(data: bytes) -> bytes:
    """``data`` with the lowest bit of its last byte flipped."""
    return data[:-1] + bytes([data[-1] ^ 1])


def _cold(root: Path, args: tuple[str, ...]) -> dict[str, Any]:
    """The same report from every file read again (no cache at all)."""
    opts: dict[str, Any] = {}
    names = {"--timezone": "timezone", "--by": "by", "--since": "since", "--until": "until", "--last": "last"}
    for name, value in zip(args[1::2], args[2::2]):
        opts[names[name]] = int(value) if name == "--last" else value
    return usage_report(load_usage(root, cache=False), args[0], **opts).to_json()


def test_warm_json_reports_come_from_the_digest_and_match_a_cold_read(cli: Any, cli_process: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(8))
    first, from_digest = _warm(cli_process, root, *ARGS[0])
    assert from_digest  # nothing cached yet: every file read before typer loads, the digest written
    assert first["daily"] and first == _cold(root, ARGS[0])
    for _ in range(2):  # summed from the digest, then the answer remembered
        for args in ARGS:
            warm, from_digest = _warm(cli_process, root, *args)
            assert from_digest, args
            assert warm == _cold(root, args), args
    answers = Path(digest_path(os.path.abspath(root)).replace(".digest.json", ".answers.json"))
    assert answers.exists() and oct(answers.stat().st_mode & 0o777) == "0o600"


def test_remembered_answers_follow_the_machines_time_zone(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report in the machine's zone (no --timezone) is remembered per
    local days: another TZ is another answer."""
    root = tmp_path / "sessions"
    write_tree(root, range(6))
    cli("usage", "--json", "--store", str(root))
    try:
        for zone in ("UTC", "Asia/Tokyo", "America/Los_Angeles", "UTC", "Asia/Tokyo"):
            done = cli("usage", "--json", "--store", str(root), env={"TZ": zone})
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            assert json.loads(done.stdout) == usage_report(load_usage(root, cache=False), "daily").to_json(), zone
    finally:
        monkeypatch.undo()
        time.tzset()  # the process's zone as it was, for the tests after this one


def test_any_change_to_the_files_makes_the_digest_stale(cli: Any, cli_process: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = write_tree(root, range(4))
    args = ARGS[0]
    _warm(cli_process, root, *args)
    assert _warm(cli_process, root, *args)[1]
    with open(files[0], "ab") as f:  # appended messages
        f.write(b"".join(generate(50, messages=6)[1:]))
    assert fresh_digest(os.path.abspath(root)) is None
    grown, from_digest = _warm(cli_process, root, *args)  # the digest brought up to date before typer loads
    assert from_digest and grown == _cold(root, args)
    assert _warm(cli_process, root, *args)[1]
    new = files[1].parent / "2025-01-01T00-00-00-000Z_new.jsonl"  # a new session
    new.write_bytes(b"".join(generate(51, messages=6)))
    added, from_digest = _warm(cli_process, root, *args)
    assert from_digest and added == _cold(root, args)
    files[2].unlink()  # a session gone
    gone, from_digest = _warm(cli_process, root, *args)
    assert from_digest and gone == _cold(root, args)
    assert gone != added
    assert _warm(cli_process, root, *args) == (gone, True)


def test_damaged_lines_are_warned_about_on_every_run(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = write_tree(root, range(2))
    with open(files[0], "ab") as f:
        f.write(b"garbage\n")
    for _ in range(2):
        done = cli("usage", "--json", "--store", str(root))
        assert done.returncode == 0 and f"{files[0]}:" in done.stderr and "garbage" not in done.stdout


def test_a_damaged_or_foreign_digest_is_not_used(cli: Any, cli_process: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(3))
    args = ARGS[0]
    expected, _ = _warm(cli_process, root, *args)
    path = Path(digest_path(os.path.abspath(root)))
    assert path.parent == cache_path(os.path.abspath(root)).parent == cache_dir() / "usage"  # beside the summary, in pi-session's cache
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    digest = load_digest(os.path.abspath(root))
    assert digest is not None
    answers_path = Path(str(path).replace(".digest.json", ".answers.json"))
    # another version's digest (its rows doubled, to see it were it used)
    doubled = [[*m[:4], *(2 * v for v in m[4:10]), *m[10:]] for m in digest.merged]
    fields = (digest.version, digest.pricing, digest.root, digest.stamps, digest.files, doubled, digest.problems)
    for forged in (
        Digest("0/old", *fields[1:]).to_bytes(),
        Digest(fields[0], "other price data", *fields[2:]).to_bytes(),
        b"\x00garbage",
        pack_json([*fields[:3], digest.stamps.hex(), fields[4]]),  # another layout
        pack_json([*fields[:3], digest.stamps.hex(), fields[4], [[1, 2]], fields[6]]),
        pack_json([*fields[:3], digest.stamps.hex(), fields[4], doubled, [1]]),
        pack_json([*fields[:3], digest.stamps.hex(), fields[4], [[*m[:9], "1", *m[10:]] for m in doubled], fields[6]]),  # a cost as text
        pack_json([*fields[:3], "not hex", fields[4], doubled, fields[6]]),
        json.dumps([*fields[:3], digest.stamps.hex(), fields[4], doubled, fields[6]]).encode(),  # without its CRC-32
        _flipped(Digest(*fields[:5], digest.merged, fields[6]).to_bytes()),  # one bit of a number flipped
    ):
        answers_path.unlink(missing_ok=True)  # else the remembered answer is printed without reading the digest
        path.write_bytes(forged)
        assert _warm(cli_process, root, *args) == (expected, True)  # summed again from every file, not from it
    assert load_digest(os.path.abspath(root)).merged == digest.merged  # written again
    assert _warm(cli_process, root, *args) == (expected, True)
    # the digest a remembered answer was made from is not trusted beyond its stamps
    path.write_bytes(Digest(*fields[:3], b"other stamps", *fields[4:]).to_bytes())
    assert _warm(cli_process, root, "monthly", "--timezone", "UTC")[0] == _cold(root, ("monthly", "--timezone", "UTC"))
    # a remembered answer of another version, or a damaged one, is not used either
    answers = read_json(str(answers_path))
    forged = json.dumps({**expected, "totals": {}}, indent=1) + "\n"
    answers_path.write_bytes(pack_json({**answers, "version": "0/old", "texts": {k: forged for k in answers["texts"]}}))
    assert _warm(cli_process, root, *args) == (expected, True)
    for damaged in (
        b"", b"\x00garbage", pack_json([1, 2]), pack_json({**answers, "texts": [forged]}),
        pack_json({**answers, "texts": {k: 1 for k in answers["texts"]}}), pack_json({**answers, "stamps": [str(s) for s in answers["stamps"]]}),
        _flipped(pack_json({**answers, "texts": {k: forged for k in answers["texts"]}})),
    ):
        answers_path.write_bytes(damaged)
        assert _warm(cli_process, root, *args) == (expected, True)
    assert read_json(str(answers_path))["texts"]  # written again
    # a symlink planted at the digest's path is not followed
    answers_path.unlink()
    victim = tmp_path / "victim"
    victim.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(victim)
    assert _warm(cli_process, root, *args) == (expected, True)  # summed again from every file, not from it


def test_a_directory_is_listed_again_once_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory's listing is reused only while its mtime, ctime, inode
    and device stay the same, and only once its ctime is older than the
    listing by :data:`~pi_session.usage.stamps.RACY_NS` (a file created in
    the same tick is never missed)."""
    root = tmp_path / "sessions"
    files = write_tree(root, range(4))
    fresh = stamps.scan(str(root))
    assert fresh.settled == {} and [p for p, _ in fresh.listing] == sorted(map(str, files))  # racy: just made
    monkeypatch.setattr(stamps, "RACY_NS", 0)  # as if the listing were taken seconds later
    first = stamps.scan(str(root))
    assert set(first.settled) == set(first.names) == {str(root), *(str(f.parent) for f in files)}
    project = str(files[0].parent)
    known = {"names": {**first.names, project: (*first.names[project], "zz-ghost.jsonl")}, "settled": first.settled}
    reused = stamps.scan(str(root), known)  # the settled listing is used as it was: the ghost is looked for
    assert reused.names[project][-1] == "zz-ghost.jsonl" and -1 in reused.stamps and not reused.same_files(
        {"names": first.names, "stamps": first.stamps})
    new = files[0].parent / "2030-01-01T00-00-00-000Z_new.jsonl"
    new.write_bytes(b"".join(generate(60, messages=4)))
    again = stamps.scan(str(root), known)  # the directory changed: listed again
    assert "zz-ghost.jsonl" not in again.names[project] and str(new) in [p for p, _ in again.listing]
    new.unlink()
    assert [p for p, _ in stamps.scan(str(root), {"names": again.names, "settled": again.settled}).listing] == [p for p, _ in first.listing]
    os.utime(files[0].parent, ns=(first.settled[project][0], first.settled[project][0]))  # mtime set back: ctime still differs
    assert "zz-ghost.jsonl" not in stamps.scan(str(root), known).names[project]


def test_damaged_rows_in_the_summary_are_read_again_from_the_files(cli: Any, tmp_path: Path) -> None:
    """A shard of messages' rows that was damaged (its CRC-32 differs,
    whether or not it still decodes) is not used: the files are read again
    and the shard written again."""
    root = tmp_path / "sessions"
    files = write_tree(root, range(8))
    cli("usage", "--json", "--store", str(root))
    shards = sorted(Path(cache_path(os.path.abspath(root))).parent.glob("*.rows-*.msgpack"))
    assert shards
    for i, shard in enumerate(shards):
        data = shard.read_bytes()
        if i % 2:
            shard.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))  # the last entry's packed rows garbled
        else:
            middle = len(data) // 2
            shard.write_bytes(data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1:])  # one bit of a number, maybe
    blocks_now = cli("usage", "blocks", "--json", "--store", str(root))
    assert blocks_now.returncode == 0, blocks_now.stderr
    assert json.loads(blocks_now.stdout)["blocks"] and "Traceback" not in blocks_now.stderr
    with open(files[3], "ab") as f:
        f.write(b"".join(generate(70, messages=4)[1:]))
    for kind in ("daily", "session"):
        done = cli("usage", kind, "--json", "--timezone", "UTC", "--store", str(root))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == usage_report(load_usage(root, cache=False), kind, timezone="UTC").to_json()


def test_dates_are_ascii_digits_and_the_calendar_ends_are_not_counted(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(2))
    for value in ("２０２５０３０１", "٢٠٢٥-٠٣-٠١", ""):
        done = cli("usage", "--json", "--since", value, "--store", str(root))
        assert done.returncode == 1 and "expected a date" in done.stderr, value
    done = cli("usage", "--json", "--by", "", "--store", str(root))  # not the report without --by, whatever is remembered
    assert done.returncode == 1 and "--by ''" in done.stderr
    path = root / "--work-p9--" / "2025-01-01T00-00-00-000Z_edge.jsonl"
    path.parent.mkdir()
    lines = [json.dumps({"type": "session", "version": 3, "id": "edge", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})]
    for i, stamp in enumerate(["0999-03-05T10:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59Z", "2025-03-01T10:00:00Z"]):
        usage = {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11, "cost": {"total": 0.1}}
        message = {"role": "assistant", "content": [], "model": "m", "provider": "p", "usage": usage}
        lines.append(json.dumps({"type": "message", "id": f"e{i}", "parentId": None, "timestamp": stamp, "message": message}))
    path.write_text("\n".join(lines) + "\n")
    for kind in ("daily", "weekly", "monthly", "session", "blocks"):
        done = cli("usage", kind, "--json", "--timezone", "Etc/GMT+12", "--store", str(root))
        assert done.returncode == 0, (kind, done.stderr)
    days = [r["date"] for r in json.loads(cli("usage", "--json", "--timezone", "Etc/GMT+12", "--store", str(root)).stdout)["daily"]]
    assert "0999-03-04" in days and not [d for d in days if d.startswith(("0000", "0001", "9999"))]


def test_names_that_are_not_utf8_are_reported_and_kept_out_of_the_summary(cli: Any, cli_process: Any, tmp_path: Path) -> None:
    """A project directory and a session file whose names are not UTF-8
    (MessagePack cannot hold them) are counted like any other; the summary
    keeps the rest, the digest and the answers (JSON, ``\\u`` escapes) keep all."""
    root = tmp_path / "sessions"
    files = write_tree(root, range(5))
    os.rename(files[0], os.fsencode(files[0].parent) + b"/bad \xff\xfe name.jsonl")
    os.rename(files[1].parent, os.fsencode(files[1].parent) + b"\xff")
    args = ARGS[0]
    for _ in range(3):
        assert _warm(cli_process, root, *args) == (_cold(root, args), True)
    digest = fresh_digest(os.path.abspath(root))  # kept, names and all
    assert digest is not None and any("\udcff" in m[13] for m in digest.merged)
    for _ in range(2):
        done = cli("usage", "session", "--json", "--store", str(root))
        assert done.returncode == 0 and "Traceback" not in done.stderr
        assert json.loads(done.stdout) == usage_report(load_usage(root, cache=False), "session").to_json()
    done = cli("usage", "blocks", "--json", "--store", str(root))
    assert done.returncode == 0 and json.loads(done.stdout)["blocks"]


def test_the_offsets_key_says_when_days_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    slots = list(range(20_000 * 96 - 200, 20_000 * 96 + 9_000, 7))  # about three months from 2024-10-04 (UTC)
    assert offsets_key(slots, "UTC") == "UTC"
    berlin = offsets_key(slots, "Europe/Berlin")
    assert berlin.count(",") == 1 and berlin.startswith("0:2:00:00,")  # summer time, then winter time
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        machine = offsets_key(slots, None)
        assert machine.startswith("0:7200,") and machine.count(",") == 1
        days = LocalDays(None)
        assert [days.of_slot(s) for s in slots] == [LocalDays(zone_of("Europe/Berlin")).of_slot(s) for s in slots]
    finally:
        monkeypatch.undo()
        time.tzset()
    with pytest.raises(ValueError, match="IANA"):
        offsets_key(slots, "Nowhere/Else")


@pytest.mark.parametrize("args", [
    ("session",), ("blocks",), ("daily",), ("daily", "--breakdown"), ("monthly", "--compact"), ("daily", "--help"),
    ("daily", "--since", "yesterday"), ("daily", "--timezone", "Nowhere/Else"), ("daily", "--last", "0"),
])
def test_other_command_lines_take_the_full_command(cli: Any, cli_process: Any, tmp_path: Path, args: tuple[str, ...]) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(2))
    cli("usage", "--json", "--store", str(root))  # the digest is fresh
    json_args = () if args in (("daily",), ("daily", "--breakdown"), ("monthly", "--compact"), ("daily", "--help")) else ("--json",)
    done = cli_process("usage", *args, *json_args, "--store", str(root), env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert _loaded_typer(done.stderr), args
    assert "Traceback" not in done.stderr


def test_the_library_report_uses_the_digest_and_agrees(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(5))
    cold = report_for(root, "weekly", timezone="Europe/Berlin").to_json()
    assert fresh_digest(os.path.abspath(root)) is not None
    assert report_for(root, "weekly", timezone="Europe/Berlin").to_json() == cold == _cold(root, ("weekly", "--timezone", "Europe/Berlin"))
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        report_for(root, "daily", since="soon")


def test_global_store_option_and_environment(cli: Any, cli_process: Any, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_tree(root, range(3))
    expected, _ = _warm(cli_process, root, "daily")
    done = cli_process("--store", str(root), "usage", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert json.loads(done.stdout) == expected and not _loaded_typer(done.stderr)
    done = cli_process("usage", "--json", env={"PYTHONPROFILEIMPORTTIME": "1", "PI_SESSION_STORE": str(root)})
    assert json.loads(done.stdout) == expected and not _loaded_typer(done.stderr)
    # no store: pi's sessions directory under PI_CODING_AGENT_DIR
    agent = tmp_path / "agent"
    agent.mkdir()
    os.symlink(root, agent / "sessions")
    assert json.loads(cli("usage", "--json").stdout) == expected
    done = cli_process("usage", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert json.loads(done.stdout) == expected and not _loaded_typer(done.stderr)


@pytest.mark.parametrize("store", ["sessions", "./x/../sessions/", "SESSIONS_ABS", "~/sessions", "~", "//srv/x", "~nobody/x", "sqlite:///x.db", "host=x"])
def test_the_fast_roots_are_the_stores_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str) -> None:
    """A ``--store`` path the fast path reads itself names the directory
    the store does (pi's path resolution); anything else is left to the
    full command."""
    from pi_session.cli.usage_fast import sessions_root
    from pi_session.core.paths import resolve_path

    (tmp_path / "sessions").mkdir()
    (tmp_path / "x").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    store = store.replace("SESSIONS_ABS", str(tmp_path / "sessions"))
    root = sessions_root(store)
    if store in ("//srv/x", "~nobody/x", "sqlite:///x.db", "host=x"):
        assert root is None
    else:
        assert root == resolve_path(store)
