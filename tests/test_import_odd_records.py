"""``pi-session import --from claude-code|codex`` on hostile input: one odd
record never stops an import (it is reported ``FILE:LINE: reason;
skipped``, everything else is imported), only regular files are read (a
FIFO or a link to ``/dev/zero`` is refused without a byte read), a line
longer than the cap is skipped as it is read. The property test mutates
the real sessions of ../shared/fixtures/other-agents (read from there,
never copied into the repository)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_import_helpers import CODEX_ID, CWD, SID, cc_assistant, cc_user, cx_meta, cx_msg, cx_tokens, cx_turn, session_entries, write_jsonl
from conftest import SHARED
from pi_session import read_session_file
from pi_session.importers import import_agent_sessions, pi_session_id
from pi_session.importers import codex
from pi_session.importers.common import MAX_LINE_BYTES, RecordError, SourceRecord, convert_skipping
from pi_session.stores import open_store

AGENTS = SHARED / "fixtures" / "other-agents"
FIXTURES = sorted(AGENTS.glob("claude-code/projects/*/*.jsonl")) + sorted(AGENTS.glob("codex/sessions/*/*/*/rollout-*.jsonl"))

needs_fixtures = pytest.mark.skipif(not FIXTURES, reason=f"needs {AGENTS} (the ../shared checkout beside this repository)")


def _fmt(path: Path) -> str:
    return "codex" if path.name.startswith("rollout-") else "claude-code"


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


# ------------------------------------------------------ the records


def test_odd_codex_records_are_reported_or_imported_never_an_internal_error(tmp_path, cli):
    """A lone surrogate escape and an invalid UTF-8 byte in a reasoning
    summary, a payload ``type`` that is an array and one that is an
    object: the file imports (exit 0), every message with it."""
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}], "encrypted_content": "gAAA"}
    records = [
        cx_meta(0),
        cx_turn(1),
        cx_msg(2, "user", "hello"),
        {"timestamp": "2025-06-01T10:00:03.000Z", "type": "response_item", "payload": {**reasoning, "summary": [{"type": "summary_text", "text": "x\ud800y"}]}},
        cx_msg(4, "assistant", "hi"),
        cx_tokens(5, 100, 0, 10),
        {"timestamp": "2025-06-01T10:00:06.000Z", "type": "event_msg", "payload": {"type": ["token_count"]}},
        {"timestamp": "2025-06-01T10:00:07.000Z", "type": "response_item", "payload": {"type": {"a": 1}, "role": "user"}},
        cx_msg(8, "user", "again"),
        cx_msg(9, "assistant", "done"),
    ]
    src = tmp_path / "codex" / "rollout-2025-06-01T10-00-00-x.jsonl"
    src.parent.mkdir(parents=True)
    lines = [json.dumps(r, ensure_ascii=True).encode() for r in records]
    lines.insert(4, json.dumps({"timestamp": "2025-06-01T10:00:03.500Z", "type": "response_item", "payload": reasoning}).encode().replace(b"plan", b"pl\xffan"))
    src.write_bytes(b"\n".join(lines) + b"\n")
    old = time.time() - 3600
    os.utime(src, (old, old))
    proc = cli("import", "--from", "codex", str(src), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    target = open_store(str(tmp_path / "sessions"))
    _h, entries = session_entries(Path(target.locator(pi_session_id("codex", CODEX_ID))))
    texts = [json.dumps(e["message"]["content"]) for e in entries if e["type"] == "message"]
    assert any("hello" in t for t in texts) and any("done" in t for t in texts)
    thinking = [b["thinking"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant" for b in e["message"]["content"] if b["type"] == "thinking"]
    assert "x\ud800y" in thinking


def test_a_lone_surrogate_in_a_claude_code_session_id_imports(tmp_path, cli):
    sid = "\udc00" + SID
    records = [cc_user("u1", None, 1, "list the files", sessionId=sid), cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "Sure."}], sessionId=sid)]
    src = tmp_path / "claude" / "projects" / "-home-ada-project" / f"{SID}.jsonl"
    src.parent.mkdir(parents=True)
    src.write_bytes(b"".join(json.dumps(r, ensure_ascii=True).encode() + b"\n" for r in records))
    old = time.time() - 3600
    os.utime(src, (old, old))
    proc = cli("import", "--from", "claude-code", str(src), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    target = open_store(str(tmp_path / "sessions"))
    _h, entries = session_entries(Path(target.locator(pi_session_id("claude-code", sid))))
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"]
    again = cli("import", "--from", "claude-code", str(src), "--store", str(tmp_path / "sessions"), "--recheck")
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout + again.stderr


def test_a_working_directory_that_cannot_be_a_path_is_passed_over(tmp_path, cli):
    """A ``cwd`` holding NUL or a lone surrogate names no directory: the
    session takes the next record's, the odd one stays in its record."""
    records = [
        cc_user("u1", None, 1, "hi", cwd="/a\ud800b\x00c"),
        cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "yo"}]),
    ]
    src = tmp_path / "claude" / "p" / f"{SID}.jsonl"
    src.parent.mkdir(parents=True)
    src.write_bytes(b"".join(json.dumps(r, ensure_ascii=True).encode() + b"\n" for r in records))
    old = time.time() - 3600
    os.utime(src, (old, old))
    proc = cli("import", "--from", "claude-code", str(src), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0 and "1 imported" in proc.stdout, proc.stdout + proc.stderr
    header, entries = session_entries(Path(open_store(str(tmp_path / "sessions")).locator(pi_session_id("claude-code", SID))))
    assert header["cwd"] == CWD
    assert any(r.get("cwd") == "/a\ud800b\x00c" for e in entries for r in e.get("imported", {}).get("fields", []))


def test_a_record_the_conversion_cannot_use_is_left_out_and_reported():
    """:func:`convert_skipping` drops the record a conversion fails on,
    reports it, and converts the rest again from scratch."""
    records = [SourceRecord(n, cx_msg(n, "user", f"m{n}")) for n in (1, 2, 3, 4)]
    seen: list[list[int]] = []

    def convert(recs: list[SourceRecord]):
        seen.append([r.line for r in recs])
        for r in recs:
            if r.line in (2, 4):
                raise RecordError(r.line, TypeError("unhashable type: 'list'"))
        return codex.convert_records(recs, source="f.jsonl", file_id="rollout-x")

    sessions, damaged = convert_skipping(convert, records, "f.jsonl")
    assert seen == [[1, 2, 3, 4], [1, 3, 4], [1, 3]]
    assert [d.format() for d in damaged] == [
        "f.jsonl:2: a record of an unexpected shape (TypeError: unhashable type: 'list'); skipped",
        "f.jsonl:4: a record of an unexpected shape (TypeError: unhashable type: 'list'); skipped",
    ]
    assert [e["message"]["content"][0]["text"] for e in sessions[0].entries if e["type"] == "message"] == ["m1", "m3"]
    with pytest.raises(RecordError):
        convert_skipping(lambda recs: (_ for _ in ()).throw(RecordError(99, ValueError("x"))), records, "f.jsonl")


# ------------------------------------------------------ only regular files


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_fifo_or_a_link_to_dev_zero_is_refused_without_reading(tmp_path, cli, fmt):
    """Named one by one or found in a directory, neither blocks nor fills
    memory: each is one ``failed`` line, the healthy file beside them is
    imported."""
    folder = tmp_path / "src" / "2025"
    folder.mkdir(parents=True)
    name = "rollout-{}.jsonl" if fmt == "codex" else "{}.jsonl"
    fifo = folder / name.format("fifo")
    os.mkfifo(fifo)
    zero = folder / name.format("zero")
    zero.symlink_to("/dev/zero")
    if fmt == "codex":
        write_jsonl(folder / name.format("ok"), [cx_meta(0), cx_msg(1, "user", "hi"), cx_msg(2, "assistant", "hello")])
    else:
        write_jsonl(folder / name.format("ok"), [cc_user("u1", None, 1, "hi"), cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "hello"}])])
    for args in ([str(fifo)], [str(zero)], [str(tmp_path / "src")]):
        proc = cli("import", "--from", fmt, *args, "--store", str(tmp_path / "sessions"))
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert proc.returncode == 1, proc.stdout + proc.stderr
        for bad in (fifo, zero):
            if str(bad) in args or len(args) == 1 and args[0] == str(tmp_path / "src"):
                assert f"{bad}: not a regular file" in proc.stderr
    assert "1 imported" in proc.stdout or "1 unchanged" in proc.stdout


def test_a_line_longer_than_the_cap_is_skipped_as_it_is_read(tmp_path, cli):
    big = json.dumps(cc_user("u0", None, 0, "x" * (MAX_LINE_BYTES + 10))).encode() + b"\n"
    src = write_jsonl(
        tmp_path / "claude" / "projects" / "-home-ada-project" / f"{SID}.jsonl",
        [cc_user("u1", None, 1, "hello")],
        (big, json.dumps(cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "hi"}])).encode() + b"\n"),
    )
    proc = cli("import", "--from", "claude-code", str(src), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0, proc.stderr
    assert f"{src}:2: a line longer than {MAX_LINE_BYTES:,} bytes; skipped" in proc.stderr
    target = open_store(str(tmp_path / "sessions"))
    _h, entries = session_entries(Path(target.locator(pi_session_id("claude-code", SID))))
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"]


# ------------------------------------------------------ property test

_SURROGATES = st.sampled_from(["\ud800", "\udc00", "\udfff", "a\ud83db", "\udcff"])
_TEXT = st.one_of(st.text(max_size=20), _SURROGATES, st.sampled_from(["", " ", "\x00", "\u2028", "[REDACTED:x]", "2025-99-99T99:99:99Z", "../../etc", "/"]))
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False), _TEXT)
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(record: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return record


@st.composite
def mutated_file(draw: st.DrawFn) -> tuple[Path, dict[int, bytes]]:
    """A fixture file and some of its lines replaced (line number -> new
    bytes): a value anywhere in a record replaced or deleted (an array or
    object where a string was, lone surrogates, huge integers), or the
    raw bytes broken (an invalid UTF-8 byte, a cut line)."""
    path = draw(st.sampled_from(FIXTURES))
    lines = _lines(path)
    changed: dict[int, bytes] = {}
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, len(lines) - 1))
        raw = changed.get(n + 1, lines[n])
        if not raw.strip():
            continue
        how = draw(st.sampled_from(["value", "value", "value", "delete", "byte", "cut"]))
        if how == "byte":
            at = draw(st.integers(0, len(raw)))
            changed[n + 1] = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + raw[at:]
            continue
        if how == "cut":
            changed[n + 1] = raw[: draw(st.integers(0, len(raw)))]
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        where = draw(st.sampled_from(_paths(record)))
        record = _set(record, where, draw(_VALUE), how == "delete")
        changed[n + 1] = json.dumps(record, ensure_ascii=True).encode()
    return path, changed


@needs_fixtures
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=mutated_file())
def test_mutated_real_records_import_with_only_reported_skips(tmp_path_factory, case):
    """Whatever a record holds, import raises nothing: each session is
    imported (or skipped as holding no conversation, with its reason), the
    records it cannot use are reported with their file and line, and every
    imported session reads back as a pi session."""
    path, changed = case
    work = tmp_path_factory.mktemp("odd")
    fmt = _fmt(path)
    folder = work / ("projects" if fmt == "claude-code" else "sessions") / "p"
    folder.mkdir(parents=True)
    src = folder / path.name
    lines = _lines(path)
    for n, raw in changed.items():
        lines[n - 1] = raw
    src.write_bytes(b"\n".join(lines))
    old = time.time() - 3600
    os.utime(src, (old, old))
    store = open_store(str(work / "store"))
    results = list(import_agent_sessions(fmt, [folder.parent], store))
    assert results
    for item in results:
        r = item.result
        assert r.status in ("imported", "skipped"), (r.status, r.message)
        for d in item.damaged:
            assert d.path == str(src) and d.line in changed, d.format()
            assert d.format().endswith("; skipped")
        if r.status == "imported":
            sf = read_session_file(store.locator(r.session_id))
            assert sf.header is not None and sf.header["id"] == r.session_id
