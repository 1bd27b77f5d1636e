"""pi 0.58.3 test/session-manager/file-operations.test.ts, translated.

* pi's ``loadEntriesFromFile`` is our :func:`pi_session.read_session_file`.
  Where pi returns ``[]`` (no file, no session header, not JSON) ours
  raises :class:`pi_session.SessionFileError` naming the file and the
  reason (the documented contract of our reader: the same outcome, no
  session, said out loud); an empty file reads as no records.
* pi's ``findMostRecentSession`` is
  :func:`pi_session.stores.file.most_recent_file` (what
  ``SessionManager.continue_recent`` uses). Instead of sleeping between
  two writes, the tests set the files' mtimes.
* pi 0.58.3's ``open`` replaced a non-empty file without a session header
  by a fresh session; pi 1.6 refuses it and leaves the file alone (checked
  with the pi 1.6 oracle: "Session file is not a valid pi session"), and
  so do we: those two cases are written to pi 1.6's behaviour.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_session import SessionFileError, SessionManager, read_session_file
from pi_session.stores.file import most_recent_file

HEADER = '{"type":"session","id":"abc","timestamp":"2025-01-01T00:00:00Z","cwd":"/tmp"}\n'
USER = (
    '{"type":"message","id":"1","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
    '"message":{"role":"user","content":"hi","timestamp":1}}\n'
)


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().strip().split("\n") if line]


# --- loadEntriesFromFile (read_session_file) ----------------------------


def test_load_entries_missing_file_is_no_session(tmp_path):
    with pytest.raises(SessionFileError, match="no such session file"):
        read_session_file(tmp_path / "nonexistent.jsonl")


def test_load_entries_empty_file_has_no_records(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    sf = read_session_file(path)
    assert sf.records == []
    assert sf.header is None


def test_load_entries_file_without_header_is_no_session(tmp_path):
    path = tmp_path / "no-header.jsonl"
    path.write_text('{"type":"message","id":"1"}\n')
    with pytest.raises(SessionFileError, match="not a pi session"):
        read_session_file(path)


def test_load_entries_malformed_json_is_no_session(tmp_path):
    path = tmp_path / "malformed.jsonl"
    path.write_text("not json\n")
    with pytest.raises(SessionFileError, match="not a pi session"):
        read_session_file(path)


def test_load_entries_valid_file(tmp_path):
    path = tmp_path / "valid.jsonl"
    path.write_text(HEADER + USER)
    records = read_session_file(path).records
    assert [r["type"] for r in records] == ["session", "message"]


def test_load_entries_malformed_line_skipped_rest_kept(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(HEADER + "not valid json\n" + USER)
    sf = read_session_file(path)
    assert len(sf.records) == 2
    assert [p.line for p in sf.problems] == [2]


# --- findMostRecentSession (most_recent_file) ---------------------------


def _write(path: Path, text: str, mtime: int | None = None) -> Path:
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_most_recent_of_empty_directory_is_none(tmp_path):
    assert most_recent_file(tmp_path) is None


def test_most_recent_of_missing_directory_is_none(tmp_path):
    assert most_recent_file(tmp_path / "nonexistent") is None


def test_most_recent_passes_over_other_extensions(tmp_path):
    _write(tmp_path / "file.txt", "hello")
    _write(tmp_path / "file.json", "{}")
    assert most_recent_file(tmp_path) is None


def test_most_recent_passes_over_jsonl_without_header(tmp_path):
    _write(tmp_path / "invalid.jsonl", '{"type":"message"}\n')
    assert most_recent_file(tmp_path) is None


def test_most_recent_single_session(tmp_path):
    path = _write(tmp_path / "session.jsonl", HEADER)
    assert most_recent_file(tmp_path) == path


def test_most_recent_is_newest_mtime(tmp_path):
    _write(tmp_path / "older.jsonl", HEADER.replace('"abc"', '"old"'), mtime=1_700_000_000)
    newer = _write(tmp_path / "newer.jsonl", HEADER.replace('"abc"', '"new"'), mtime=1_700_000_010)
    assert most_recent_file(tmp_path) == newer


def test_most_recent_passes_over_invalid_file(tmp_path):
    # pi's order: the invalid file first, the valid one last (newer) ...
    _write(tmp_path / "invalid.jsonl", '{"type":"not-session"}\n', mtime=1_700_000_000)
    valid = _write(tmp_path / "valid.jsonl", HEADER, mtime=1_700_000_010)
    assert most_recent_file(tmp_path) == valid
    # ... and the invalid file newest: it is passed over too
    os.utime(tmp_path / "invalid.jsonl", (1_700_000_020, 1_700_000_020))
    assert most_recent_file(tmp_path) == valid


# --- open of a corrupted file (pi's setSessionFile) ---------------------


def test_open_empty_file_writes_a_fresh_header(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    sm = SessionManager.open(path, tmp_path)
    header = sm.get_header()
    assert sm.get_session_id()
    assert header is not None and header["type"] == "session"
    lines = _lines(path)
    assert len(lines) == 1
    written = json.loads(lines[0])
    assert written["type"] == "session"
    assert written["id"] == sm.get_session_id()


def test_open_file_without_header_is_refused_and_left_alone(tmp_path):
    """pi 0.58.3 truncated this file to a fresh header; pi 1.6 raises and
    keeps it (oracle), as we do."""
    path = tmp_path / "no-header.jsonl"
    text = (
        '{"type":"message","id":"abc","parentId":"orphaned","timestamp":"2025-01-01T00:00:00Z",'
        '"message":{"role":"assistant","content":"test"}}\n'
    )
    path.write_text(text)
    with pytest.raises(SessionFileError, match="not a pi session"):
        SessionManager.open(path, tmp_path)
    assert path.read_text() == text


def test_open_empty_file_keeps_its_path(tmp_path):
    path = tmp_path / "my-session.jsonl"
    path.write_text("")
    sm = SessionManager.open(path, tmp_path)
    assert sm.get_session_file() == path


def test_open_garbage_file_again_is_refused_again(tmp_path):
    """pi 0.58.3 recovered the file on the first open and loaded it on the
    second; pi 1.6 refuses both opens and leaves the file as it was
    (oracle), as we do. An empty file is the one pi 1.6 recovers: reopening
    it after that loads the same session."""
    garbage = tmp_path / "corrupted.jsonl"
    garbage.write_text("garbage content\n")
    for _ in range(2):
        with pytest.raises(SessionFileError):
            SessionManager.open(garbage, tmp_path)
    assert garbage.read_text() == "garbage content\n"

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    first = SessionManager.open(empty, tmp_path)
    second = SessionManager.open(empty, tmp_path)
    assert second.get_session_id() == first.get_session_id()
    header = second.get_header()
    assert header is not None and header["type"] == "session"
