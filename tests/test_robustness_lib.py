"""Robustness of the library against malformed session data: deep JSON,
wrong-typed fields, structurally invalid files, and error quoting in the
extractive summarizer."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session import jsonio
from pi_session.jsonio import _encode_iterative, _stdlib_js_recursive, dumps_line, dumps_pretty, js_stringify, loads

DEPTH = 10_000


def _deep_text(depth: int, leaf: str = '[1.5,"x",{"2":1,"b":2}]') -> str:
    return '{"k":' * depth + leaf + "}" * depth


# ---------------------------------------------------------------- 3. deep JSON


def test_loads_reads_json_deeper_than_orjson_allows_and_restores_limits():
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    text = _deep_text(DEPTH)
    value = loads(text)
    assert sys.getrecursionlimit() == limit and threading.stack_size() == stack
    node = value
    for _ in range(DEPTH):
        node = node["k"]
    assert node == [1.5, "x", {"2": 1, "b": 2}]
    # bytes in, too, and arrays
    assert js_stringify(loads(("[" * DEPTH + "]" * DEPTH).encode())) == "[" * DEPTH + "]" * DEPTH


def test_loads_still_refuses_invalid_deep_json_and_nan():
    with pytest.raises(ValueError):
        loads("[" * DEPTH + "]" * (DEPTH - 1))
    with pytest.raises(ValueError):
        loads('[NaN, "\\ud800"]')  # orjson refuses both; JSON.parse refuses NaN


def test_deep_values_encode_like_json_stringify():
    text = _deep_text(DEPTH)
    value = loads(text)
    expected = text
    assert js_stringify(value) == expected
    assert jsonio.dumps(value) == expected
    assert dumps_line(value) == (expected + "\n").encode()
    pretty = dumps_pretty(loads(_deep_text(300)))
    assert pretty == _stdlib_js_recursive(loads(_deep_text(300)), 1)
    deep_pretty = dumps_pretty(value)
    assert deep_pretty.startswith('{\n "k": {\n  "k": {')
    assert deep_pretty.endswith("\n  }\n }\n}")
    assert "\n" + " " * (DEPTH + 1) + "1.5,\n" in deep_pretty
    assert js_stringify(loads(deep_pretty)) == expected  # reads back to the same value


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "0", "10", "2", "01", "é", "x y"]) | st.text(max_size=3), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json_values, st.sampled_from([None, 1, 2]))
def test_iterative_encoder_writes_what_the_recursive_one_writes(value, indent):
    assert _encode_iterative(value, indent) == _stdlib_js_recursive(value, indent)


def test_iterative_encoder_errors_match():
    with pytest.raises(TypeError):
        _encode_iterative({"a": object()}, None)
    cyc: list = []
    cyc.append(cyc)
    with pytest.raises(ValueError):
        _encode_iterative(cyc, None)


def _write_deep_session(path: Path, version: int = 3) -> list[str]:
    deep = _deep_text(DEPTH)
    lines = [
        f'{{"type":"session","version":{version},"id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/tmp"}}',
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z",'
        '"message":{"role":"user","content":"hi","timestamp":1,"details":' + deep + "}}",
        '{"type":"custom","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:01.000Z","customType":"x","data":'
        + deep
        + "}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return lines


def test_deep_entries_are_read_kept_by_repair_and_rewritten_identically(tmp_path):
    from pi_session.migrate import migrate_file
    from pi_session.repair import check_session, repair_session
    from pi_session.storage import read_session_file

    f = tmp_path / "s.jsonl"
    lines = _write_deep_session(f)
    sf = read_session_file(f)
    assert [e["id"] for e in sf.entries] == ["a1", "a2"]
    assert not sf.problems
    report = check_session(f)
    assert report.ok, report.problems
    result = repair_session(f)
    assert not result.changed
    assert f.read_text().splitlines() == lines
    # a rewrite (migration of a v2 file) writes the deep entries back byte for byte
    g = tmp_path / "v2.jsonl"
    lines2 = _write_deep_session(g, version=2)
    migrate_file(g)
    out = g.read_text().splitlines()
    assert out[0].replace('"version":3', '"version":2') == lines2[0]
    assert out[1:] == lines2[1:]
