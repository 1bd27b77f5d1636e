"""Records split over several lines by raw newlines inside their strings
(written by a tool that did not escape them): reading rejoins them, check
reports them, repair writes them on one line (beyond pi, which drops every
piece: checked with the 1.6.0 oracle's ``context`` on the issue's example)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_session.core import jsonio
from pi_session import storage
from pi_session.manager.session_manager import SessionManager
from pi_session.check.repair import check_session, repair_session
from pi_session.storage import SessionFileError, append_lines, read_session_file, rejoin_split
from sessiongen import generate_session, session_text
from storage_helpers import make_session

BIN = Path(sys.executable).parent / "pi-session"


def _split(line: bytes, newline: bytes = b"\n") -> bytes:
    """A record line as a tool that does not escape newlines writes it."""
    return line.replace(b"\\n", newline)


def example(tmp_path: Path) -> tuple[Path, dict, bytes]:
    """The issue's example: the record on line 4 holds two newlines, so it
    spans lines 4-6. Returns (file, that record, its line as pi writes it)."""
    path = make_session(tmp_path / "s")
    lines = path.read_bytes().split(b"\n")[:-1]
    record = orjson.loads(lines[3])
    record["message"]["content"] = "first\nsecond\nthird"
    good = jsonio.dumps_line(record)
    lines[3] = _split(good.rstrip(b"\n"))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, record, good


def test_issue_example_read(tmp_path: Path) -> None:
    path, record, _good = example(tmp_path)
    before = path.read_bytes()
    sf = read_session_file(path)
    assert record in sf.entries
    assert sf.spans == {4: 6}
    assert [(p.line, p.end_line, p.kind, p.recovered) for p in sf.problems] == [(4, 6, "split-record", True)]
    assert "lines 4-6" in sf.problems[0].message
    m = SessionManager.open(path, read_only=True)
    assert [(p.line, p.kind) for p in m.problems] == [(4, "split-record")]
    contents = [msg["content"] for msg in m.build_session_context()["messages"]]
    assert "first\nsecond\nthird" in contents and len(contents) == 6
    assert path.read_bytes() == before


def test_issue_example_repair(tmp_path: Path) -> None:
    path, record, good = example(tmp_path)
    before = path.read_bytes()
    report = check_session(path)
    assert [(p.line, p.kind, p.fixable) for p in report.problems] == [(4, "split-record", True)]
    assert "lines 4-6" in report.problems[0].message
    result = repair_session(path)
    assert result.changed and result.rejected is None and result.recovered_lines == [4, 5, 6]
    assert result.backup is not None and result.backup.read_bytes() == before
    assert result.after.ok
    lines = path.read_bytes().split(b"\n")
    assert lines[3] + b"\n" == good
    assert len(lines) == before.count(b"\n") - 2 + 1
    assert read_session_file(path).problems == []
    assert record in read_session_file(path).entries


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=120, env=env)


def test_issue_example_cli(tmp_path: Path) -> None:
    path, record, good = example(tmp_path)
    before = path.read_bytes()
    ctx = _run("context", "--json", str(path))
    assert ctx.returncode == 0, ctx.stderr
    assert record["message"] in orjson.loads(ctx.stdout)["messages"]
    assert f"{path}:4: lines 4-6" in ctx.stderr
    assert path.read_bytes() == before
    check = _run("check", str(path), "--json")
    problems = orjson.loads(check.stdout)["problems"]
    assert check.returncode == 1 and [(p["line"], p["kind"]) for p in problems] == [(4, "split-record")]
    assert "lines 4-6" in problems[0]["message"] and "rejoined" in problems[0]["message"]
    repaired = _run("check", str(path), "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    again = _run("check", str(path))
    assert again.returncode == 0 and "Traceback" not in again.stderr
    assert path.read_bytes().split(b"\n")[3] + b"\n" == good
    assert not list(path.parent.glob("*.rejected-*"))


@pytest.mark.parametrize(
    "text, terminator, newline, expect",
    [
        ("a\r\nb", b"\n", b"\n", "a\r\nb"),  # CRLF in the text, LF line ends: the CR is text
        ("a\nb", b"\r\n", b"\r\n", "a\nb"),  # a text-mode writer: every \n became \r\n
        ("a\r\nb", b"\r\n", b"\r\n", "a\r\nb"),  # ... and the text's \r\n became \r\r\n
        ("a\nb\r\n\r\nc", b"\n", b"\n", "a\nb\r\n\r\nc"),
    ],
    ids=["crlf-text", "text-mode", "text-mode-crlf-text", "mixed"],
)
def test_carriage_returns(tmp_path: Path, text: str, terminator: bytes, newline: bytes, expect: str) -> None:
    path = make_session(tmp_path / "s")
    lines = path.read_bytes().split(b"\n")[:-1]
    record = orjson.loads(lines[2])
    record["message"]["content"][0]["text"] = text
    escaped = jsonio.dumps(record).encode()
    # what the writer put on disk: its newlines (after any text-mode translation) raw
    body = escaped.replace(b"\\r", b"\r").replace(b"\\n", newline)
    if newline == b"\r\n":
        body = escaped.replace(b"\\r", b"\r").replace(b"\\n", b"\n").replace(b"\n", b"\r\n")
    lines[2] = body + (b"\r" if terminator == b"\r\n" else b"")
    path.write_bytes(b"\n".join(lines) + b"\n")
    sf = read_session_file(path)
    got = next(e for e in sf.entries if e["id"] == record["id"])
    assert got["message"]["content"][0]["text"] == expect
    assert sf.problems[0].kind == "split-record"
    repair_session(path)
    assert path.read_bytes().split(b"\n")[2] == jsonio.dumps(got).encode()
    assert check_session(path).ok


def test_split_last_line_without_newline(tmp_path: Path) -> None:
    path, record, good = example(tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    # move the split record to the end, without its final newline
    split = lines[3:6]
    rest = lines[:3] + lines[6:]
    path.write_bytes(b"\n".join(rest + split))
    n = len(rest)
    sf = read_session_file(path)
    assert record in sf.entries and not sf.ends_with_newline
    assert {(p.line, p.kind) for p in sf.problems} == {(n + 1, "split-record"), (n + 3, "no-newline")}
    # appending adds the newline and keeps the record (no torn side file)
    notes = append_lines(path, [b'{"type":"label","id":"ffff0001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","targetId":"x"}\n'])
    assert notes and "split" in notes[0]
    assert not list(path.parent.glob("*.torn-*"))
    after = read_session_file(path)
    assert record in after.entries and after.entries[-1]["id"] == "ffff0001"
    assert [p.kind for p in after.problems] == ["split-record"]


def test_torn_split_record_is_damage(tmp_path: Path) -> None:
    path, record, _good = example(tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join(lines[:5]))  # the file ends inside the record (its last piece lost)
    sf = read_session_file(path)
    assert record not in sf.entries and sf.spans == {}
    assert [(p.line, p.kind) for p in sf.problems] == [(4, "invalid-json"), (5, "torn-tail")]
    path.write_bytes(b"\n".join(lines[:5]) + b"\n")  # ... also with a newline
    assert [(p.line, p.kind) for p in read_session_file(path).problems] == [(4, "invalid-json"), (5, "invalid-json")]
    result = repair_session(path)
    assert result.removed_lines == [4, 5] and result.rejected is not None
    assert result.rejected.read_bytes() == lines[3] + b"\n" + lines[4] + b"\n"


def test_split_header(tmp_path: Path) -> None:
    path = make_session(tmp_path / "s")
    lines = path.read_bytes().split(b"\n")[:-1]
    header = orjson.loads(lines[0])
    header["cwd"] = "/odd\ndir\nname"
    lines[0] = b"\xef\xbb\xbf" + _split(jsonio.dumps(header).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    sf = read_session_file(path)
    assert sf.header == header and len(sf.entries) == len(lines) - 1
    assert [(p.line, p.end_line, p.kind) for p in sf.problems] == [(1, 3, "split-record")]
    assert "byte order mark" in sf.problems[0].message
    repair_session(path)
    assert path.read_bytes().split(b"\n")[0] == jsonio.dumps(header).encode()
    assert check_session(path).ok


def test_split_header_alone_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"session","id":"x","cwd":"/a\nb"\n')  # never closed
    with pytest.raises(SessionFileError):
        read_session_file(path)


def test_several_split_records_in_a_row_next_to_damage(tmp_path: Path) -> None:
    path = make_session(tmp_path / "s", n=8)
    lines = path.read_bytes().split(b"\n")[:-1]
    records = [orjson.loads(line) for line in lines]
    out: list[bytes] = [lines[0], b"garbage {\"a\":\"", lines[1]]
    expected_spans = {}
    for i in (2, 3, 4):
        text_key = "content"
        if isinstance(records[i]["message"][text_key], str):
            records[i]["message"][text_key] += f"\nline {i}\n\n42\n{{}}x"
        else:
            records[i]["message"][text_key][0]["text"] += f"\nline {i}\n\n42\n"
        pieces = _split(jsonio.dumps(records[i]).encode()).split(b"\n")
        expected_spans[len(out) + 1] = len(out) + len(pieces)
        out.extend(pieces)
    out.append(b'{"type":"message","id":"torn","message":{"content":"ab')  # damaged, ends inside a string
    out.append(lines[5])  # a valid record right after: never a piece
    out.append(b"\x00\x00\x00")
    out.extend(lines[6:])
    path.write_bytes(b"\n".join(out) + b"\n")
    sf = read_session_file(path)
    assert sf.spans == expected_spans
    assert [e["id"] for e in sf.entries] == [r["id"] for r in records[1:]]
    assert all(records[i] in sf.entries for i in (2, 3, 4))
    kinds = [(p.line, p.kind) for p in sf.problems]
    torn_line = max(expected_spans.values()) + 1
    assert kinds == [(2, "invalid-json")] + [(first, "split-record") for first in expected_spans] + [
        (torn_line, "invalid-json"),
        (torn_line + 2, "nul-bytes"),
    ]
    result = repair_session(path)
    assert result.rejected is not None
    rejected = result.rejected.read_bytes()
    assert rejected == b'garbage {"a":"\n' + out[torn_line - 1] + b"\n\x00\x00\x00\n"  # no piece of a rejoined record
    assert [orjson.loads(line) for line in path.read_bytes().split(b"\n")[:-1]] == records
    assert check_session(path).ok


def test_pieces_that_are_objects_are_not_joined(tmp_path: Path) -> None:
    # a piece that is an object on its own ends the search: the text "a\n{}\nb"
    assert rejoin_split([b'{"type":"x","id":"1","t":"a', b"{}", b'b"}']) is not None  # as pieces they would join
    path = make_session(tmp_path / "s")
    lines = path.read_bytes().split(b"\n")[:-1]
    lines[3] = b'{"type":"message","id":"q","parentId":null,"t":"a\n{}\nb"}'
    path.write_bytes(b"\n".join(lines) + b"\n")
    sf = read_session_file(path)
    assert sf.spans == {} and "q" not in [e["id"] for e in sf.entries]
    assert [(p.line, p.kind) for p in sf.problems] == [(4, "invalid-json"), (5, "no-type"), (6, "invalid-json")]


@pytest.mark.parametrize(
    "pieces",
    [
        [b'{"a":"x'],  # one piece
        [b'{"a":"x', b'y"} junk'],  # bytes after the object
        [b'{"a":"x', b'y"}{"b":1}'],  # two objects
        [b'{"a":"x\\', b'y"}'],  # a backslash before the newline
        [b'{"a":1,', b'"b":2}'],  # cut outside a string (pretty-printed, not this kind)
        [b'["x', b'y"]'],  # not an object
        [b'{"a":"x', b'y", "b": nope}'],  # not JSON once joined
        [b'garbage{"a":"x', b'y"}'],
    ],
)
def test_rejoin_refuses(pieces: list[bytes]) -> None:
    assert rejoin_split(pieces) is None


def test_rejoin_accepts() -> None:
    record, clean, kinds = rejoin_split([b'\x00\x00{"a":"x', b"", b"  42", b'y\xff", "b": [1, {"c": "]"}]}\r'])  # type: ignore[misc]
    assert record == {"a": "x\n\n  42\ny\ufffd", "b": [1, {"c": "]"}]}
    assert clean == '{"a":"x\\n\\n  42\\ny\ufffd", "b": [1, {"c": "]"}]}'.encode()
    assert kinds == ("invalid-utf8", "nul-bytes", "crlf")


def test_scanning_a_damaged_file_is_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every line could start a split record and every one could continue one
    header = b'{"type":"session","version":3,"id":"h","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
    body = b"".join([b'{"a":"' + b"x" * 200 + b"\n", b"y" * 200 + b"\n", b'{"b":1,"c":"\n'] * 300)
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + body)
    scanned = []
    real = storage.lines.scan_piece

    def counting(data: bytes, in_string: bool, depth: int) -> tuple[int, int]:
        scanned.append(len(data))
        return real(data, in_string, depth)

    monkeypatch.setattr(storage.lines, "scan_piece", counting)
    sf = read_session_file(path)
    assert sf.spans == {} and len(sf.problems) == 900
    assert sum(scanned) <= 2 * len(body)


def test_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, record, _good = example(tmp_path)
    monkeypatch.setattr(storage.lines, "SPLIT_MAX_LINES", 2)
    sf = read_session_file(path)
    assert record not in sf.entries and [p.kind for p in sf.problems] == ["invalid-json"] * 3
    monkeypatch.setattr(storage.lines, "SPLIT_MAX_LINES", 3)
    assert record in read_session_file(path).entries


def test_migration_rewrite_writes_one_line(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    header = {"type": "session", "version": 2, "id": "v2s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    msg = {"type": "message", "id": "m1", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
           "message": {"role": "user", "content": "one\ntwo", "timestamp": 1}}
    path.write_bytes(jsonio.dumps_line(header) + _split(jsonio.dumps_line(msg)[:-1]) + b"\n")
    m = SessionManager.open(path)
    assert [e["id"] for e in m.get_entries()] == ["m1"]
    lines = path.read_bytes().split(b"\n")[:-1]
    assert len(lines) == 2 and orjson.loads(lines[1])["message"]["content"] == "one\ntwo"


# --------------------------------------------------------------------------
# generated sessions


def _strings(value: object, path: tuple = ()) -> list[tuple]:
    """Paths of the non-empty string values of a record (not keys, not type/id)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() if k not in ("type", "id", "parentId") for p in _strings(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, (*path, i))]
    return [path] if isinstance(value, str) and value else []


_NEWLINE_ESCAPES = re.compile(rb"\\\\|\\r\\n|\\n")


def _unescape_newlines(line: bytes) -> bytes:
    """A JSON text with every ``\\n`` (and ``\\r\\n``) escape written raw."""
    return _NEWLINE_ESCAPES.sub(lambda m: {b"\\r\\n": b"\r\n", b"\\n": b"\n"}.get(m.group(), m.group()), line)


def _set(value: dict, path: tuple, new: str) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), data=st.data())
def test_generated_sessions_with_split_records(tmp_path_factory: pytest.TempPathFactory, seed: int, data: st.DataObject) -> None:
    header, entries = generate_session(seed, turns=4, pi16=seed % 2 == 0)
    records = [header, *entries]
    chosen = data.draw(st.sets(st.integers(0, len(records) - 1), max_size=4), label="split records")
    expected: dict[int, int] = {}
    out: list[bytes] = []
    for i, record in enumerate(records):
        paths = _strings(record)
        if i in chosen and paths:
            where = data.draw(st.sampled_from(paths), label="string")
            for _ in range(data.draw(st.integers(1, 3), label="newlines")):
                text = record_value(record, where)
                cut = data.draw(st.integers(0, len(text)), label="at")
                crlf = data.draw(st.booleans(), label="crlf")
                _set(record, where, text[:cut] + ("\r\n" if crlf else "\n") + text[cut:])
            pieces = _unescape_newlines(jsonio.dumps(record).encode()).split(b"\n")
            if len(pieces) > 1:
                expected[len(out) + 1] = len(out) + len(pieces)
            out.extend(pieces)
        else:
            out.append(jsonio.dumps(record).encode())
    path = tmp_path_factory.mktemp("gen") / "s.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    sf = read_session_file(path)
    assert sf.header == header
    assert sf.entries == entries
    assert sf.spans == expected
    assert [(p.line, p.end_line) for p in sf.problems] == sorted(expected.items())
    assert all(p.kind == "split-record" and f"lines {p.line}-{p.end_line}" in p.message for p in sf.problems)


def record_value(record: dict, path: tuple) -> str:
    value: object = record
    for key in path:
        value = value[key]  # type: ignore[index]
    assert isinstance(value, str)
    return value


_GARBAGE = st.binary(max_size=40) | st.lists(
    st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b"a", b"1", b"\r", b"\x00", b"\xff", b" ", b'{"type":"', b'"x"']),
    max_size=25,
).map(b"".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.lists(_GARBAGE, max_size=8), at=st.integers(0, 6), newline=st.booleans())
def test_garbage_lines_never_crash(tmp_path_factory: pytest.TempPathFactory, garbage: list[bytes], at: int, newline: bool) -> None:
    header, entries = generate_session(7, turns=2)
    lines = session_text(header, entries).split(b"\n")[:-1]
    at = min(at, len(lines))
    data = b"\n".join(lines[:at] + garbage + lines[at:]) + (b"\n" if newline else b"")
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    path.write_bytes(data)
    try:
        sf = read_session_file(path)
    except SessionFileError:
        return
    assert path.read_bytes() == data
    check_session(path)
    if at > 0:
        ids = {e["id"] for e in sf.entries}
        assert {e["id"] for e in entries} <= ids
        repair_session(path)
        after = read_session_file(path)
        assert [e for e in after.entries if e in entries] == entries


@pytest.mark.oracle
def test_pi_drops_the_pieces(tmp_path: Path, oracle) -> None:  # type: ignore[no-untyped-def]
    # beyond pi: pi 1.6 leaves the split record out of the context (and the
    # entry after it, whose parent is gone, starts the path); we keep it
    path, record, _good = example(tmp_path)
    theirs = orjson.loads(oracle("context", str(path)))["messages"]
    ours = SessionManager.open(path, read_only=True).build_session_context()["messages"]
    assert record["message"] not in theirs and record["message"] in ours
    assert len(theirs) < len(ours)
