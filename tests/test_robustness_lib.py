"""Robustness of the library against malformed session data: deep JSON,
wrong-typed fields, structurally invalid files, and error quoting in the
extractive summarizer."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_session.core import jsonio
from pi_session.core.jsonio import dumps_line, dumps_pretty, iter_pretty, js_stringify, loads

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
    assert pretty == _reindent(js_stringify(loads(_deep_text(300))), 1)
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


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^{}\[\]:,"]+')


def _reindent(compact: str, indent: int) -> str:
    """``JSON.stringify(v, null, indent)``'s layout of ``JSON.stringify(v)``'s text:
    the reference the encoders are held to (written from the layout rules,
    independently of the package)."""
    out: list[str] = []
    level = 0
    tokens = _TOKEN.findall(compact)
    for i, token in enumerate(tokens):
        if token in "{[" and len(token) == 1:
            if tokens[i + 1] in ("}", "]"):
                out.append(token)
                continue
            level += 1
            out.append(token + "\n" + " " * indent * level)
        elif token in "}]" and len(token) == 1:
            if tokens[i - 1] in ("{", "["):
                out.append(token)
                continue
            level -= 1
            out.append("\n" + " " * indent * level + token)
        elif token == ",":
            out.append(",\n" + " " * indent * level)
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
    return "".join(out)


def test_reindent_reference_is_the_javascript_layout():
    # JSON.stringify({"a": [], "b": {}, "c": [1, {"d": "x,y:{"}]}, null, 1), from node
    node = '{\n "a": [],\n "b": {},\n "c": [\n  1,\n  {\n   "d": "x,y:{"\n  }\n ]\n}'
    assert _reindent('{"a":[],"b":{},"c":[1,{"d":"x,y:{"}]}', 1) == node


@settings(max_examples=300, deadline=None)
@given(_json_values, st.sampled_from([None, 1, 2]))
def test_streamed_encoder_writes_what_json_stringify_writes(value, indent):
    # iter_pretty is the iterative encoder; js_stringify goes through orjson or
    # the standard library's recursive encoder
    compact = js_stringify(value)
    expected = compact if indent is None else _reindent(compact, indent)
    assert "".join(iter_pretty(value, indent)) == expected


def test_encoder_errors_match():
    cyc: list = []
    cyc.append(cyc)
    for encode in (js_stringify, dumps_pretty, lambda v: "".join(iter_pretty(v, None))):
        with pytest.raises(TypeError):
            encode({"a": object()})
        with pytest.raises(ValueError):
            encode(cyc)


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
    from pi_session.storage import migrate_file
    from pi_session.check.repair import check_session, repair_session
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


# ---------------------------------------------------------------- 1. wrong-typed fields

_scalar = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8)
_garbage = st.recursive(_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3), max_leaves=6)
_ids = st.sampled_from(["e1", "e2", "e3", "e4", ""]) | _garbage


def _field(plausible):
    return plausible | _garbage


_block = st.fixed_dictionaries(
    {},
    optional={
        "type": _field(st.sampled_from(["text", "thinking", "toolCall", "image"])),
        "text": _field(st.text(max_size=20)),
        "thinking": _field(st.text(max_size=10)),
        "name": _field(st.sampled_from(["read", "write", "edit", "bash"])),
        "id": _field(st.sampled_from(["c1", "c2"])),
        "arguments": _field(st.fixed_dictionaries({"path": _field(st.sampled_from(["a.py", "b.py"]))})),
        "data": _garbage,
    },
)
_usage = _field(
    st.fixed_dictionaries(
        {},
        optional={k: _field(st.integers(0, 10**6)) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")},
    )
)
_message = st.fixed_dictionaries(
    {},
    optional={
        "role": _field(
            st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"])
        ),
        "content": _field(st.text(max_size=20) | st.lists(_block | _garbage, max_size=4)),
        "usage": _usage,
        "stopReason": _field(st.sampled_from(["stop", "error", "aborted", "toolUse"])),
        "toolCallId": _field(st.sampled_from(["c1", "c2"])),
        "toolName": _field(st.sampled_from(["bash", "read"])),
        "isError": _garbage,
        "command": _garbage,
        "output": _field(st.text(max_size=30)),
        "exitCode": _garbage,
        "summary": _field(st.text(max_size=20)),
        "timestamp": _garbage,
        "excludeFromContext": _garbage,
        "errorMessage": _garbage,
        "provider": _garbage,
        "model": _garbage,
    },
)
_entry = st.fixed_dictionaries(
    {},
    optional={
        "type": _field(
            st.sampled_from(
                ["message", "custom_message", "branch_summary", "compaction", "model_change", "thinking_level_change", "label", "session_info"]
            )
        ),
        "id": _ids,
        "parentId": _ids,
        "timestamp": _field(st.just("2024-01-01T00:00:00.000Z")),
        "message": _field(_message),
        "summary": _field(st.text(max_size=20)),
        "firstKeptEntryId": _ids,
        "tokensBefore": _garbage,
        "details": _field(st.fixed_dictionaries({}, optional={"readFiles": _garbage, "modifiedFiles": _garbage})),
        "fromHook": _garbage,
        "content": _garbage,
        "customType": _garbage,
        "provider": _garbage,
        "modelId": _garbage,
        "thinkingLevel": _garbage,
        "name": _garbage,
        "targetId": _ids,
    },
)
_settings_like = st.fixed_dictionaries(
    {},
    optional={"enabled": _garbage, "reserveTokens": _field(st.integers(0, 5000)), "keepRecentTokens": _field(st.integers(0, 500))},
)


def _all_pure_functions(entries, settings_value, leaf):
    from pi_session.compaction import prepare_compaction, serialize_conversation
    from pi_session.compaction.file_ops import FileOps, extract_file_ops_from_message
    from pi_session.session.context import build_session_context, convert_to_llm
    from pi_session.session.tokens import (
        calculate_context_tokens,
        estimate_context_tokens,
        estimate_tokens,
        get_last_assistant_usage,
        should_compact,
    )

    raw_messages = [e.get("message") for e in entries]
    for m in raw_messages:
        estimate_tokens(m)
        extract_file_ops_from_message(m, FileOps())
        if isinstance(m, dict):
            calculate_context_tokens(m.get("usage"))
    get_last_assistant_usage(entries)
    ctx = build_session_context(entries)
    build_session_context(entries, leaf)
    est = estimate_context_tokens(ctx["messages"])
    assert isinstance(est["tokens"], (int, float))
    estimate_context_tokens(raw_messages)
    should_compact(est["tokens"], 1000, settings_value)
    llm = convert_to_llm(ctx["messages"])
    convert_to_llm(raw_messages)
    assert isinstance(serialize_conversation(llm), str)
    serialize_conversation(raw_messages)
    for keep in (True, False):
        prep = prepare_compaction(entries, settings_value, keep_tool_pairs=keep)
        if prep is not None:
            prep.to_json()
            js_stringify(prep.to_json())
    return llm


@settings(max_examples=400, deadline=None)
@given(st.lists(_entry, max_size=8), _settings_like | st.none(), _ids | st.none())
def test_pure_functions_never_raise_on_garbage_entries(entries, settings_value, leaf):
    _all_pure_functions(entries, settings_value, leaf)


@settings(max_examples=150, deadline=None)
@given(st.lists(_entry, max_size=6))
def test_extractive_summary_never_raises_on_garbage(entries):
    from pi_session.session.context import build_session_context, convert_to_llm
    from pi_session.llm.base import SummaryRequest
    from pi_session.llm.extractive import extractive_summary

    messages = convert_to_llm(build_session_context(entries)["messages"])
    messages += [m for m in (e.get("message") for e in entries) if isinstance(m, dict)]
    for kind in ("history", "turn_prefix", "branch"):
        request = SummaryRequest(kind=kind, messages=messages, max_tokens=300, system_prompt="", prompt="")
        assert extractive_summary(request).startswith("_Extractive")


_header = st.fixed_dictionaries(
    {"type": st.just("session"), "id": _field(st.just("sess-1"))},
    optional={
        "version": _field(st.sampled_from([1, 2, 3])),
        "timestamp": _field(st.just("2024-01-01T00:00:00.000Z")) | st.integers(-(10**20), 10**20),
        "cwd": _field(st.just("/w")),
        "parentSession": _garbage,
    },
)


@settings(max_examples=100, deadline=None)
@given(_header, st.lists(_entry, max_size=6))
def test_one_bad_session_file_never_breaks_listing(tmp_path_factory, header, entries):
    from pi_session.stores.listing import build_session_info, list_session_dir

    d = tmp_path_factory.mktemp("ls")
    good = d / "good.jsonl"
    good.write_text(
        '{"type":"session","version":3,"id":"good","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}\n'
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hello","timestamp":1704067201000}}\n'
    )
    bad = d / "bad.jsonl"
    bad.write_bytes(b"".join(dumps_line(r) for r in [header, *entries]))
    info = build_session_info(bad)
    infos = list_session_dir(d)
    assert "good" in [i["id"] for i in infos]
    for i in infos:
        js_stringify(i)  # JSON-ready
        assert isinstance(i["modified"], str)
    if info is not None:
        assert isinstance(info["firstMessage"], str) and isinstance(info["allMessagesText"], str)
    assert list_session_dir(d) == infos  # the index gives the same answer


def test_listing_reads_what_it_can_of_a_malformed_file(tmp_path):
    from pi_session.stores.listing import list_session_dir

    f = tmp_path / "s.jsonl"
    records = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": ["x"], "parentSession": 5},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "nope", "message": "just a string"},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2024-01-02T00:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": 5}, {"type": "text", "text": "hi"}], "timestamp": 1e300}},
        {"type": "message", "id": "c", "parentId": "b", "timestamp": 7, "message": {"role": "assistant", "content": {"a": 1}}},
    ]
    f.write_bytes(b"".join(dumps_line(r) for r in records))
    (info,) = list_session_dir(tmp_path)
    assert info["id"] == "s" and info["cwd"] == "" and "parentSessionPath" not in info
    assert info["messageCount"] == 3
    assert info["firstMessage"] == "hi"
    # the message timestamp 1e300 is no date: the entry's ISO timestamp counts
    assert info["modified"] == "2024-01-02T00:00:00.000Z"
    assert info["created"] == "2024-01-01T00:00:00.000Z"


def test_usage_values_that_are_not_numbers_count_zero():
    from pi_session.session.tokens import (
        calculate_context_tokens,
        estimate_context_tokens,
        get_last_assistant_usage,
    )

    assert calculate_context_tokens({"input": "lots", "output": None, "totalTokens": "x"}) == 0
    assert calculate_context_tokens({"input": 5, "output": True, "cacheRead": 2, "cacheWrite": [1]}) == 7
    assert calculate_context_tokens({"totalTokens": False, "input": 3}) == 3
    assert calculate_context_tokens({"totalTokens": 40, "input": 3}) == 40
    assert calculate_context_tokens("usage") == 0
    good = {"role": "assistant", "content": [], "usage": {"totalTokens": 10}}
    for bad_usage in ("lots", [1, 2], 12, True):
        bad = {"role": "assistant", "content": [], "usage": bad_usage}
        entries = [{"type": "message", "message": good}, {"type": "message", "message": bad}, {"type": "message", "message": "str"}]
        assert get_last_assistant_usage(entries) == {"totalTokens": 10}
        est = estimate_context_tokens([good, bad])
        assert est["lastUsageIndex"] == 0 and est["usageTokens"] == 10


def test_estimate_tokens_ignores_wrong_typed_content():
    from pi_session.session.tokens import estimate_tokens

    assert estimate_tokens({"role": "user", "content": 12345}) == 0
    assert estimate_tokens({"role": "user", "content": {"type": "text", "text": "abcd"}}) == 0
    assert estimate_tokens({"role": "user", "content": [{"type": "text", "text": 12345678}, {"type": "text", "text": "abcd"}]}) == 1
    assert estimate_tokens({"content": "abcdefgh"}) == 0  # no role
    assert estimate_tokens("a message as a string") == 0  # type: ignore[arg-type]
    # arguments of any JSON type count by their JSON.stringify length, as in pi
    call = {"type": "toolCall", "name": "bash", "arguments": "ls -la"}  # 4 + len('"ls -la"') = 12
    assert estimate_tokens({"role": "assistant", "content": [call]}) == 3
    call = {"type": "toolCall", "name": "bash", "arguments": [1, 2]}  # 4 + 5
    assert estimate_tokens({"role": "assistant", "content": [call]}) == 3


def test_convert_and_serialize_skip_malformed_parts():
    from pi_session.compaction import serialize_conversation
    from pi_session.compaction.file_ops import FileOps, extract_file_ops_from_message
    from pi_session.session.context import build_session_context, convert_to_llm

    msgs = [
        "not a message",
        {"content": "no role"},
        {"role": "custom", "content": 5, "timestamp": 1},
        {"role": "compactionSummary", "summary": 5, "timestamp": 1},
        {"role": "assistant", "content": [{"type": "toolCall", "name": "write", "arguments": "x=1"}, {"type": "text", "text": 3}]},
        {"role": "toolResult", "content": {"type": "text", "text": "x"}},
    ]
    llm = convert_to_llm(msgs)
    assert [m["role"] for m in llm] == ["user", "user", "assistant", "toolResult"]
    assert llm[0]["content"] == []
    assert "<summary>\n5\n</summary>" in llm[1]["content"][0]["text"]
    text = serialize_conversation(llm)
    assert "[Assistant tool calls]: write()" in text and "[Assistant]: 3" in text
    assert "[Tool result]" not in text
    ops = FileOps()
    for m in msgs:
        extract_file_ops_from_message(m, ops)  # type: ignore[arg-type]
    assert ops.to_json() == {"read": [], "written": [], "edited": []}
    entries = [
        {"type": "message", "id": "a", "parentId": None, "message": "a string"},
        {"type": "message", "id": ["x"], "parentId": "a", "message": {"role": "user", "content": "hi"}},
        {"type": "message", "id": "c", "parentId": {"o": 1}, "message": {"role": "user", "content": "there"}},
    ]
    assert [m["content"] for m in build_session_context(entries)["messages"]] == ["there"]
    assert [m["content"] for m in build_session_context(entries[:2])["messages"]] == ["hi"]


# ---------------------------------------------------------------- 2. settings as pi-style dicts


def test_prepare_compaction_takes_pi_style_settings():
    from pi_session.compaction import prepare_compaction
    from pi_session.session.settings import CompactionSettings, coerce_compaction_settings
    from pi_session.session.tokens import should_compact

    entries = []
    parent = None
    for i in range(12):
        role = "user" if i % 2 == 0 else "assistant"
        content = "word " * 200 if role == "user" else [{"type": "text", "text": "reply " * 200}]
        entries.append({"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2024-01-01T00:00:00.000Z",
                        "message": {"role": role, "content": content, "timestamp": i}})
        parent = f"e{i}"
    as_dict = prepare_compaction(entries, {"enabled": True, "reserveTokens": 1000, "keepRecentTokens": 500})
    as_obj = prepare_compaction(entries, CompactionSettings(True, 1000, 500))
    assert as_dict is not None and as_obj is not None
    assert as_dict.to_json() == as_obj.to_json()
    assert as_dict.settings == CompactionSettings(True, 1000, 500)
    assert as_dict.first_kept_entry_id != "e0"
    # snake_case keys, missing keys and garbage values
    assert coerce_compaction_settings({"keep_recent_tokens": 5}) == CompactionSettings(True, 16384, 5)
    assert coerce_compaction_settings({"reserveTokens": "x", "enabled": None}) == CompactionSettings()
    assert coerce_compaction_settings({"enabled": 0}).enabled is False
    assert should_compact(9001, 10000, {"reserveTokens": 1000})
    assert should_compact(20000, 30000, {"reserveTokens": "lots"})  # default 16384
    with pytest.raises(TypeError):
        coerce_compaction_settings([1])


def test_branch_summary_settings_from_pi_style_dicts():
    from pi_session.session.settings import BranchSummarySettings, coerce_branch_summary_settings

    assert coerce_branch_summary_settings({"reserveTokens": 100, "skipPrompt": True}) == BranchSummarySettings(100, True)
    assert coerce_branch_summary_settings(None) == BranchSummarySettings()
    s = BranchSummarySettings(5, False)
    assert coerce_branch_summary_settings(s) is s


# ---------------------------------------------------------------- 4. check reports structural problems

_HDR = {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/w"}


def _entry_rec(eid, parent, **fields):
    rec = {"type": "message", "id": eid, "parentId": parent, "timestamp": "2024-01-01T00:00:00.000Z"}
    rec.update(fields)
    return rec


def _check(tmp_path, header, *records):
    from pi_session.check.repair import check_session

    f = tmp_path / "s.jsonl"
    f.write_bytes(b"".join(dumps_line(r) for r in [header, *records]))
    return check_session(f)


def _kinds(report):
    return [(p.line, p.kind, p.fixable) for p in report.problems]


def test_check_accepts_a_well_formed_session(tmp_path):
    report = _check(
        tmp_path,
        _HDR,
        _entry_rec("a", None, message={"role": "user", "content": "hi", "timestamp": 1}),
        _entry_rec("b", "a", message={"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]}),
        _entry_rec("c", "b", message={"role": "toolResult", "toolCallId": "c", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}),
        _entry_rec("d", "c", message={"role": "hookMessage", "customType": "x", "content": "v2 name kept in a v3 file"}),
        _entry_rec("e", "d", message={"role": "bashExecution", "command": "ls", "output": ""}),
        {"type": "custom_message", "id": "f", "parentId": "e", "timestamp": "2024-01-01T00:00:00Z", "customType": "x", "content": [{"type": "text", "text": "t"}]},
    )
    assert report.ok, report.problems


def test_check_warns_about_messages_of_the_wrong_shape(tmp_path):
    report = _check(
        tmp_path,
        _HDR,
        _entry_rec("a", None, message="just a string"),
        _entry_rec("b", "a", message={"content": "no role"}),
        _entry_rec("c", "b", message={"role": "robot", "content": "x"}),
        _entry_rec("d", "c", message={"role": "user", "content": 5}),
        _entry_rec("e", "d", message={"role": "assistant", "content": "a string"}),
        _entry_rec("f", "e", message={"role": "user", "content": [{"type": "text", "text": 7}]}),
        _entry_rec("g", "f", message={"role": "assistant", "content": [{"type": "toolCall", "name": "x", "arguments": "{}"}]}),
        _entry_rec("h", "g", message={"role": "toolResult", "content": {"type": "text", "text": "x"}}),
        _entry_rec("i", "h", message={"role": "compactionSummary", "summary": None}),
        {"type": "custom_message", "id": "j", "parentId": "i", "timestamp": "2024-01-01T00:00:00.000Z", "content": 3},
    )
    assert _kinds(report) == [
        (2, "bad-message", False),
        (3, "unknown-role", False),
        (4, "unknown-role", False),
        (5, "bad-content", False),
        (6, "bad-content", False),
        (7, "bad-content", False),
        (8, "bad-content", False),
        (9, "bad-content", False),
        (10, "bad-content", False),
        (11, "bad-field", False),  # a custom_message with no customType
        (11, "bad-content", False),
    ]
    assert not report.ok
    messages = [p.message for p in report.problems]
    assert "message is string, not an object" in messages[0]
    assert "role missing" in messages[1] and "'robot'" in messages[2]
    assert "content is number" in messages[3]


def test_check_warns_about_fields_that_are_not_what_pi_writes(tmp_path):
    """Text fields holding another JSON type (what exports show as JSON and
    pi may show as ``[object Object]``) are warnings of kind bad-field, one
    per field; a label's absent or empty text (a cleared label) is fine."""
    ts = "2024-01-01T00:00:00.000Z"
    report = _check(
        tmp_path,
        _HDR,
        _entry_rec("a", None, message={"role": "user", "content": "hi", "timestamp": 1}),
        {"type": "label", "id": "b", "parentId": "a", "timestamp": ts, "targetId": "a", "label": {"a": 1}},
        {"type": "label", "id": "c", "parentId": "b", "timestamp": ts, "targetId": "a"},
        {"type": "session_info", "id": "d", "parentId": "c", "timestamp": ts, "name": ["n"]},
        {"type": "model_change", "id": "e", "parentId": "d", "timestamp": ts, "provider": None, "modelId": "m"},
        {"type": "compaction", "id": "f", "parentId": "e", "timestamp": ts, "summary": {"s": 1}, "firstKeptEntryId": "a", "tokensBefore": 1},
        _entry_rec("g", "f", message={"role": "bashExecution", "command": 42, "output": "", "exitCode": "zero"}),
        _entry_rec("h", "g", message={"role": "assistant", "content": [{"type": "thinking", "thinking": {"t": True}}]}),
        _entry_rec("i", "h", message={"role": "toolResult", "toolCallId": "x", "toolName": ["bash"], "content": []}),
    )
    assert _kinds(report) == [
        (3, "bad-field", False),
        (5, "bad-field", False),
        (6, "bad-field", False),
        (7, "bad-field", False),
        (8, "bad-field", False),
        (8, "bad-field", False),
        (9, "bad-field", False),
        (10, "bad-field", False),
    ]
    messages = [p.message for p in report.problems]
    assert messages[0] == "label entry b: label is object, not a string"
    assert messages[2] == "model_change entry e: provider is null, not a string"
    assert messages[4:6] == ["message entry g: bashExecution message command is number, not a string",
                             "message entry g: bashExecution message exitCode is string, not a number"]
    assert messages[7] == "message entry i: toolResult message toolName is array, not a string"


def test_check_warns_about_headers_versions_and_timestamps(tmp_path):
    header = dict(_HDR, cwd=["x"], timestamp=12, version=7)
    report = _check(
        tmp_path,
        header,
        _entry_rec("a", None, message={"role": "user", "content": "hi"}, timestamp="yesterday"),
        {"type": "label", "id": "b", "parentId": "a", "targetId": "a", "label": "x"},
    )
    assert sorted(_kinds(report)) == [
        (1, "bad-header", False),
        (1, "bad-header", False),
        (1, "unknown-version", False),
        (2, "bad-timestamp", False),
        (3, "bad-timestamp", False),
    ]
    text = " ".join(p.message for p in report.problems)
    assert "cwd is array" in text and "timestamp is number" in text and "version 7" in text
    assert "'yesterday'" in text and "no timestamp" in text


def test_check_says_which_field_is_not_a_string(tmp_path):
    report = _check(
        tmp_path,
        _HDR,
        {"type": 5, "id": "a", "parentId": None, "timestamp": "2024-01-01T00:00:00.000Z"},
        {"type": "label", "id": 1, "parentId": None, "timestamp": "2024-01-01T00:00:00.000Z"},
        {"id": "c", "parentId": None, "timestamp": "2024-01-01T00:00:00.000Z"},
        {"type": "label", "parentId": None, "timestamp": "2024-01-01T00:00:00.000Z"},
    )
    by_line = {p.line: p for p in report.problems}
    assert by_line[2].kind == "no-type" and "type" in by_line[2].message and "not a string" in by_line[2].message
    assert by_line[3].kind == "no-id" and "id is not a string" in by_line[3].message
    assert by_line[4].kind == "no-type" and "has no" in by_line[4].message
    assert by_line[5].kind == "no-id" and "has no id" in by_line[5].message
    assert all(p.fixable for p in report.problems)


# ---------------------------------------------------------------- 5. extractive summaries quote the error line


def _summary_of(messages):
    from pi_session.llm.base import SummaryRequest
    from pi_session.llm.extractive import extractive_summary

    return extractive_summary(SummaryRequest(kind="history", messages=messages, max_tokens=4000, system_prompt="", prompt=""))


def _call_and_result(cid, command, output, is_error):
    return [
        {"role": "user", "content": f"please run {command}", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": command}}], "timestamp": 2},
        {"role": "toolResult", "toolCallId": cid, "toolName": "bash", "content": [{"type": "text", "text": output}], "isError": is_error, "timestamp": 3},
    ]


PYTEST_OUT = """============================= test session starts ==============================
collected 3 items

tests/test_a.py ..F                                                      [100%]

=================================== FAILURES ===================================
    def test_c():
>       assert add(1, 1) == 3
E       assert 2 == 3

tests/test_a.py:9: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_c - assert 2 == 3
========================= 1 failed, 2 passed in 0.05s =========================="""

TRACEBACK_OUT = """Starting job
loading config from conf.yaml
Traceback (most recent call last):
  File "main.py", line 3, in <module>
    main()
  File "main.py", line 2, in main
    raise KeyError("missing")
KeyError: 'missing'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "main.py", line 5, in <module>
    raise RuntimeError("config broken")
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: config broken
cleanup done"""


@pytest.mark.parametrize(
    "output, is_error, expected",
    [
        (PYTEST_OUT, True, "FAILED tests/test_a.py::test_c - assert 2 == 3"),
        (PYTEST_OUT, False, "FAILED tests/test_a.py::test_c - assert 2 == 3"),  # `pytest || true`
        (TRACEBACK_OUT, True, "RuntimeError: config broken"),
        (TRACEBACK_OUT, False, "RuntimeError: config broken"),
        ("compiling...\nlinking...\nError: cannot find module 'x'\nexit 1", True, "Error: cannot find module 'x'"),
        ("npm install\nadded 3 packages\nnpm ERR! code E404", True, "npm ERR! code E404"),
        ("building\nsrc/a.c:3:5: error: expected ';'", True, "src/a.c:3:5: error: expected ';'"),
        ("Command exited with code 2", True, "Command exited with code 2"),
    ],
)
def test_failing_tool_results_quote_the_error_line(output, is_error, expected):
    text = _summary_of(_call_and_result("c1", "make test", output, is_error))
    blocked = text.split("### Blocked", 1)[1].split("##", 1)[0]
    assert expected in blocked, blocked
    assert f"- Last error: {expected}" in text
    first_line = output.splitlines()[0]
    if first_line != expected:
        assert first_line not in blocked


def test_successful_bash_output_is_not_a_failure():
    output = "def f():\n    raise ValueError('x')\nerrors.log\nerror_handler.py"
    text = _summary_of(_call_and_result("c1", "cat f.py", output, False))
    assert "Last error" not in text
    assert "- [x] Ran `cat f.py`" in text


def test_a_failure_repeated_successfully_is_not_blocked():
    msgs = _call_and_result("c1", "pytest", PYTEST_OUT, True) + _call_and_result("c2", "pytest", "3 passed", False)[1:]
    text = _summary_of(msgs)
    blocked = text.split("### Blocked", 1)[1].split("##", 1)[0]
    assert "FAILED" not in blocked


@settings(max_examples=300, deadline=None)
@given(st.lists(_entry, max_size=8))
def test_manager_and_tree_never_raise_on_garbage_entries(tmp_path_factory, entries):
    """Wrong-typed ids and parentIds (arrays, objects, numbers, "") once made
    opening a file raise TypeError; they are orphans or roots, as in pi."""
    from pi_session.cli.render import tree_json, tree_lines
    from pi_session.manager.session_manager import SessionManager

    f = tmp_path_factory.mktemp("mgr") / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/w"}
    f.write_bytes(b"".join(dumps_line(r) for r in [header, *entries]))
    manager = SessionManager.open(f, read_only=True)
    roots = manager.get_tree()
    js_stringify(tree_json(roots, manager.get_leaf_id()))
    tree_lines(roots, manager.get_leaf_id(), set())
    manager.build_session_context()
    for entry in manager.get_entries():
        branch = manager.get_branch(entry["id"])
        assert branch and branch[-1] is manager.get_entry(entry["id"])  # a repeated id: the last one


_NAVIGATE_CRASH = [  # found by this test on CI: the branch walk hashed a list parentId
    {"type": "message", "targetId": "e1", "timestamp": "2024-01-01T00:00:00.000Z", "id": "e1"},
    {"type": "message", "id": "e2", "parentId": [None]},
]
_USER_WITH_LIST_PARENT = [
    {"type": "message", "id": "e1", "parentId": None, "message": {"role": "assistant", "content": []}},
    {"type": "message", "id": "e2", "parentId": [1], "message": {"role": "user", "content": "hi"}},
    {"type": "message", "id": "e3", "parentId": "e2", "message": {"role": "assistant", "content": []}},
]


@settings(max_examples=60, deadline=None)
@example(entries=_NAVIGATE_CRASH)
@example(entries=_USER_WITH_LIST_PARENT)
@given(st.lists(_entry, min_size=1, max_size=6))
def test_cli_commands_never_crash_on_garbage_entries(tmp_path_factory, entries):
    """Every command on a file of wrong-typed entries ends with a message and
    an exit status, never an internal error (run in process for speed)."""
    from typer.testing import CliRunner

    from pi_session.cli.app import app

    d = tmp_path_factory.mktemp("cli")
    f = d / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/w"}
    f.write_bytes(b"".join(dumps_line(r) for r in [header, *entries]))
    ids = [e["id"] for e in entries if isinstance(e.get("id"), str) and e["id"]] or ["e1"]
    runner = CliRunner()
    env = {"PI_CODING_AGENT_DIR": str(d / "agent"), "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    commands = [
        ["info", str(f)], ["tree", str(f)], ["tree", str(f), "--json"], ["context", str(f)],
        ["context", str(f), "--json"], ["tokens", str(f)], ["tokens", str(f), "--json"],
        ["compact", str(f), "--dry-run", "--json", "--keep-recent-tokens", "1"], ["check", str(f), "--json"],
        ["export", str(f), "--format", "md", "-o", "-"], ["export", str(f), "-o", "-"], ["context", str(f), "--leaf", ids[0]],
        ["compact", str(f), "--provider", "extractive", "--keep-recent-tokens", "1"],
        *(["navigate", str(f), some_id] for some_id in ids), ["label", str(f), ids[0], "x"], ["clone", str(f)],
    ]
    for args in commands:
        result = runner.invoke(app, args, env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))


def test_edits_left_out_takes_ids_of_any_json_type():
    """A damaged session's ids may be lists or numbers (clone's warning
    crashed with "unhashable type: 'list'"): only string ids name entries."""
    from pi_session.session.context_edits import edits_left_out

    path = [{"id": ["x"]}, {"id": "a"}, {"id": 7}]
    entries = [
        {"type": "context_edit", "id": ["q"], "targetId": "a", "replacement": None},
        {"type": "context_edit", "id": "e", "targetId": ["a"], "replacement": None},
        {"type": "context_edit", "id": "a2", "targetId": 7, "replacement": None},
    ]
    assert edits_left_out(path, entries) == [entries[0]]


def test_clone_of_a_compaction_whose_first_kept_id_is_not_a_string(tmp_path):
    """A damaged compaction with ``firstKeptEntryId: [...]`` (found by the
    garbage-entries property test on CI) crashed create_branched_session
    with "unhashable type: 'list'"; it is cloned as it is."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/w"}
    user = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2024-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1}}
    label = {"type": "label", "id": "l1", "parentId": "e1", "targetId": "e1", "label": "x", "timestamp": "2024-01-01T00:00:02.000Z"}
    comp = {"type": "compaction", "id": "c1", "parentId": "l1", "summary": "s", "firstKeptEntryId": [["x"]],
            "tokensBefore": 1, "timestamp": "2024-01-01T00:00:03.000Z"}
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"".join(dumps_line(r) for r in (header, user, label, comp)))
    from pi_session import SessionManager

    sm = SessionManager.open(f, tmp_path / "out")
    new = sm.create_branched_session("c1")
    assert new is not None and "compaction" in [e["type"] for e in sm.get_entries()]
