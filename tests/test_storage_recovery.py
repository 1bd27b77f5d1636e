"""parse_line recovery branches and tolerant reading of damaged files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_session.manager.session_manager import SessionManager
from pi_session.storage import parse_line, read_session_file, recover_line
from storage_helpers import make_session

REC = b'{"type":"message","id":"abcd0001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}'


@pytest.mark.parametrize(
    "raw, kind",
    [
        (b"\xef\xbb\xbf" + REC, "bom"),
        (b"\x00\x00\x00" + REC, "nul-bytes"),
        (REC + b"\x00" * 10, "nul-bytes"),
        (b'{"type":"message","id":"abc' + REC, "glued"),
        (b"\x00\x00" + b'{"type":"mess' + REC, "glued"),
        (REC.replace(b"hi", b"h\xffi\xc3"), "invalid-utf8"),
    ],
)
def test_recovered_kinds(raw: bytes, kind: str) -> None:
    parsed = parse_line(raw, 7)
    assert parsed.ok and parsed.problem is not None
    assert parsed.problem.kind == kind and parsed.problem.recovered and parsed.problem.line == 7
    assert parsed.record["id"] == "abcd0001"
    assert parsed.clean is not None and parse_line(parsed.clean, 1).problem is None


def test_glued_keeps_exact_bytes_of_complete_record() -> None:
    parsed = parse_line(b'{"type":"message","id":"ab' + REC, 3)
    assert parsed.clean == REC and parsed.fragment == b'{"type":"message","id":"ab'


def test_nested_type_objects_are_not_mistaken_for_glued_records() -> None:
    # the inner {"type":"text"...} must not be taken for a glued record of a whole line
    assert parse_line(REC, 1).problem is None
    broken = REC[:-3]  # cut inside the record: nothing complete to recover
    parsed = parse_line(broken, 1)
    assert not parsed.ok and parsed.problem.kind == "invalid-json"


def test_crlf_is_valid_json_and_recoverable() -> None:
    assert parse_line(REC + b"\r", 1).ok
    rec = recover_line(REC + b"\r")
    assert rec is not None and rec.clean == REC and rec.kinds == ("crlf",)


def test_unrecoverable_lines() -> None:
    for raw in (b"\x00" * 50, b"garbage", b'{"type":"mess', b"\xff\xfe\x00"):
        parsed = parse_line(raw, 2)
        assert not parsed.ok and parsed.problem is not None and not parsed.problem.recovered


def test_js_only_json_is_not_a_problem() -> None:
    parsed = parse_line(b'{"type":"x","id":"1","s":"\\ud800","n":123456789012345678901234567890}', 1)
    assert parsed.ok and parsed.problem is None
    assert not parse_line(b'{"a":NaN}', 1).ok  # JSON.parse refuses NaN


def test_damaged_file_reads_with_line_numbers(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    damaged = [b"\xef\xbb\xbf" + lines[0], lines[1] + b"\r", b"\x00\x00" + lines[2], b"not json", lines[3][:25] + lines[4]] + lines[5:]
    path.write_bytes(b"\n".join(damaged) + b"\n" + b'{"type":"mes')
    before = path.read_bytes()
    sf = read_session_file(path)
    kinds = {(p.line, p.kind) for p in sf.problems}
    assert {(1, "bom"), (3, "nul-bytes"), (4, "invalid-json"), (5, "glued"), (len(damaged) + 1, "torn-tail")} <= kinds
    ids = [e["id"] for e in sf.entries]
    assert len(ids) == len(lines) - 2  # lines[3] lost (truncated), the header is not an entry
    m = SessionManager.open(path, read_only=True)
    assert len(m.get_entries()) == len(ids)
    assert path.read_bytes() == before
