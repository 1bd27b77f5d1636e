"""Leftover temp files of interrupted writes: reported by check, deleted by
repair only when nothing can be lost (real console script for the CLI)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import orjson

from pi_session.check.repair import STALE_TEMP_SECONDS, check_session, leftover_temps, repair_session
from storage_helpers import make_session


def _session(tmp_path: Path) -> Path:
    return make_session(tmp_path / "sessions", 2)


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_stale_rewrite_temp_is_reported_then_deleted(tmp_path: Path) -> None:
    session = _session(tmp_path)
    original = session.read_bytes()
    tmp = session.parent / f".{session.name}.0badc0de.tmp"
    tmp.write_bytes(original.splitlines(keepends=True)[0] + b'{"type":"mess')  # cut short by a kill
    _age(tmp, STALE_TEMP_SECONDS + 5)
    report = check_session(session)
    kinds = [(p.kind, p.fixable, p.line) for p in report.problems]
    assert kinds == [("leftover-temp", True, None)]
    assert not report.ok
    result = repair_session(session)
    assert result.removed_temps == [tmp] and not tmp.exists()
    assert not result.changed and result.after.ok
    assert session.read_bytes() == original  # the session itself is untouched


def test_fresh_or_foreign_temps_are_kept(tmp_path: Path) -> None:
    session = _session(tmp_path)
    fresh = session.parent / f".{session.name}.00000001.tmp"
    fresh.write_bytes(session.read_bytes())
    foreign = session.parent / f".{session.name}.00000002.tmp"
    foreign.write_bytes(b'{"type":"session","id":"someone-else"}\n')
    _age(foreign, STALE_TEMP_SECONDS + 5)
    unrelated = session.parent / f".{session.name}.notatemp.tmp"
    unrelated.write_bytes(b"x")
    found = {t.name: (safe, why) for t, safe, why in leftover_temps(session)}
    assert set(found) == {fresh.name, foreign.name}
    assert found[fresh.name][0] is False and "in progress" in found[fresh.name][1]
    assert found[foreign.name][0] is False and "without this session's header" in found[foreign.name][1]
    result = repair_session(session)
    assert result.removed_temps == [] and fresh.exists() and foreign.exists() and unrelated.exists()
    assert [p.kind for p in result.after.problems] == ["leftover-temp", "leftover-temp"]


def test_stale_migration_temp_with_a_new_header_is_deleted(tmp_path: Path) -> None:
    session = _session(tmp_path)
    header = orjson.loads(session.read_bytes().splitlines()[0])
    tmp = session.parent / f".{session.name}.feedf00d.tmp"
    tmp.write_bytes(orjson.dumps({**header, "version": 9}) + b"\n")
    _age(tmp, STALE_TEMP_SECONDS + 5)
    [(path, safe, _why)] = leftover_temps(session)
    assert path == tmp and safe


def test_stale_temp_with_less_than_one_line_is_deleted(tmp_path: Path) -> None:
    """A rewrite killed before it finished writing the header."""
    session = _session(tmp_path)
    empty = session.parent / f".{session.name}.00000003.tmp"
    empty.write_bytes(b"")
    partial = session.parent / f".{session.name}.00000004.tmp"
    partial.write_bytes(session.read_bytes()[:20])
    for tmp in (empty, partial):
        _age(tmp, STALE_TEMP_SECONDS + 5)
    assert [(t, safe) for t, safe, _why in leftover_temps(session)] == [(empty, True), (partial, True)]
    assert repair_session(session).removed_temps == [empty, partial]


def test_hard_link_left_by_create_is_deleted_at_any_age(tmp_path: Path) -> None:
    session = _session(tmp_path)
    link = session.parent / f".{session.name}.abcdef01.tmp"
    os.link(session, link)
    [(path, safe, why)] = leftover_temps(session)
    assert path == link and safe and "second name" in why
    repair_session(session)
    assert not link.exists() and session.exists() and os.stat(session).st_nlink == 1


def test_cli_check_reports_and_repair_deletes(cli, tmp_path: Path) -> None:
    session = _session(tmp_path)
    tmp = session.parent / f".{session.name}.12345678.tmp"
    tmp.write_bytes(session.read_bytes())
    _age(tmp, STALE_TEMP_SECONDS + 60)
    checked = cli("check", str(session))
    assert checked.returncode == 1
    assert f"leftover temp file {tmp.name}" in checked.stdout
    repaired = cli("check", "--repair", "--json", str(session))
    assert repaired.returncode == 0, repaired.stderr
    data = json.loads(repaired.stdout)
    assert data["removedTemps"] == [str(tmp)] and data["after"]["ok"] is True
    assert not tmp.exists()


def test_session_that_is_a_symlink_to_a_temp_named_file_is_never_deleted(tmp_path: Path) -> None:
    """The session's only copy may carry a temp-like name (review finding)."""
    source = _session(tmp_path)
    work = tmp_path / "w"
    work.mkdir()
    real = work / ".s.jsonl.0123abcd.tmp"
    real.write_bytes(source.read_bytes())
    _age(real, STALE_TEMP_SECONDS + 5)
    link = work / "s.jsonl"
    link.symlink_to(real.name)
    assert leftover_temps(link) == []
    result = repair_session(link)
    assert result.removed_temps == [] and real.exists() and link.resolve() == real


def test_foreign_files_without_a_newline_are_kept(tmp_path: Path) -> None:
    """Only the start of the session's own first line counts as an
    unfinished rewrite; anything else without a newline is kept."""
    session = _session(tmp_path)
    other = make_session(tmp_path / "other", 2)
    header_line = session.read_bytes().splitlines(keepends=True)[0]
    contents = {
        "00000011": other.read_bytes().splitlines()[0],  # another session's complete header
        "00000012": other.read_bytes().replace(b"\n", b"\r"),  # a whole session, CR line ends
        "00000013": b"important notes",
        "00000014": header_line.rstrip(b"\n") + b" trailing",  # more than the header
    }
    for hex_, data in contents.items():
        tmp = session.parent / f".{session.name}.{hex_}.tmp"
        tmp.write_bytes(data)
        _age(tmp, STALE_TEMP_SECONDS + 5)
    assert [safe for _t, safe, _w in leftover_temps(session)] == [False] * 4
    assert repair_session(session).removed_temps == []
    assert len(list(session.parent.glob(f".{session.name}.*.tmp"))) == 4


def test_non_regular_temp_names_are_reported_kept(tmp_path: Path) -> None:
    session = _session(tmp_path)
    (session.parent / f".{session.name}.0000aaaa.tmp").mkdir()
    (session.parent / f".{session.name}.0000bbbb.tmp").symlink_to(session)
    found = leftover_temps(session)
    assert [(t.name[-12:], safe, why) for t, safe, why in found] == [
        ("0000aaaa.tmp", False, "not a regular file; kept"),
        ("0000bbbb.tmp", False, "not a regular file; kept"),
    ]
    repair_session(session)
    assert (session.parent / f".{session.name}.0000aaaa.tmp").is_dir()


def test_odd_paths_never_raise(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "..abcdef01.tmp").write_bytes(b"x")
    assert leftover_temps("") == []
    leftover_temps(".")  # a directory: whatever it lists, it does not raise
    assert leftover_temps(tmp_path / "missing" / "s.jsonl") == []


def test_repair_through_a_symlink_repairs_the_real_file(tmp_path: Path) -> None:
    session = _session(tmp_path)
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "s.jsonl"
    real.write_bytes(b"\xef\xbb\xbf" + session.read_bytes())  # a BOM: fixable
    links = tmp_path / "links"
    links.mkdir()
    link = links / "l.jsonl"
    link.symlink_to(real)
    result = repair_session(link)
    assert result.changed and result.path == real
    assert link.is_symlink() and link.resolve() == real
    assert real.read_bytes() == session.read_bytes()
    assert check_session(real).ok and result.backup is not None and result.backup.parent == real_dir
