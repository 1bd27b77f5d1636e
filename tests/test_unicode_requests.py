"""Text sent to a provider is always valid Unicode (beyond pi).

A session can hold a lone UTF-16 surrogate (``\\ud83d`` with no partner: a
tool cut an emoji in half, or our own truncation did). The official SDKs
raise ``UnicodeEncodeError`` on such a str before sending, so:

- ``pi_session.core.text``: the replacement policy (lone surrogate -> U+FFFD);
- every adapter payload encodes as UTF-8, whatever the strings (hypothesis),
  and reports ``lone_surrogates_replaced``; the validators flag lone
  surrogates in their input;
- ``compact --provider openai|anthropic`` through the real SDKs against the
  fake servers succeeds on such sessions, and the bodies the server got are
  valid UTF-8 JSON without lone surrogates; the session's own line is kept
  byte for byte;
- ``check`` warns (exit 0, file unchanged) naming the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fake_providers import fake_provider  # noqa: F401  (fixture)
from test_compaction_providers_cli import Builder, provider_args, run_cli
from pi_session.adapters import (
    to_anthropic_messages,
    to_openai_chat,
    to_openai_responses,
    validate_anthropic_messages,
    validate_openai_chat,
    validate_openai_responses,
)
from pi_session.compaction.summary import build_summary_request
from pi_session.core.text import (
    find_lone_surrogates,
    is_well_formed,
    lone_surrogates,
    well_formed,
    well_formed_deep,
)

ADAPTERS = [
    (to_openai_chat, validate_openai_chat),
    (to_openai_responses, validate_openai_responses),
    (to_anthropic_messages, validate_anthropic_messages),
]

# ---------------------------------------------------------------------------
# the policy


def test_well_formed_replaces_lone_surrogates_and_joins_pairs():
    assert well_formed("abc") == "abc"
    assert well_formed("x\ud83d") == "x\ufffd"
    assert well_formed("\ude00x") == "\ufffdx"
    assert well_formed("\ud83d\ude00") == "\U0001f600"  # a pair held as two code points is the character
    assert well_formed("\ude00\ud83d") == "\ufffd\ufffd"  # wrong order: two lone ones
    assert well_formed("é😀") == "é😀"
    for text in ("x\ud83d", "\ud800\ud800\udc00", "a\udfffb"):
        well_formed(text).encode("utf-8")
    assert lone_surrogates("a\ud83d\ude00\ud800") == [(3, "U+D800")]
    assert not is_well_formed("\ud83d\ude00") and is_well_formed("😀")


def test_well_formed_deep_copies_only_what_changes():
    clean = {"a": ["x", {"b": 1}], "c": None}
    assert well_formed_deep(clean) is clean
    value = {"k\ud800": ["ok", {"t": "x\udc00"}], "n": 2**60}
    fixed = well_formed_deep(value)
    assert fixed == {"k\ufffd": ["ok", {"t": "x\ufffd"}], "n": 2**60}
    assert value == {"k\ud800": ["ok", {"t": "x\udc00"}], "n": 2**60}  # not mutated
    deep: Any = "\ud83d"
    for _ in range(50_000):  # far beyond the recursion limit
        deep = [deep]
    out = well_formed_deep(deep)
    for _ in range(50_000):
        out = out[0]
    assert out == "\ufffd"
    assert find_lone_surrogates({"m": [{"t": "a\ud83d"}]}, "msg") == [("msg.m[0].t", 1, "U+D83D")]


# ---------------------------------------------------------------------------
# adapters and validators, property-based

_SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
_TEXT = st.lists(st.one_of(st.characters(), _SURROGATE, st.sampled_from(["😀", "\ud83d", "a"])), max_size=12).map("".join)
_ID = st.sampled_from(["c1", "c2", "c\ud83d", "call|item\udc00"])


def _args() -> st.SearchStrategy[Any]:
    obj = st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers(), st.lists(_TEXT, max_size=2)), max_size=3)
    escaped = st.sampled_from(['{"path":"\\ud83d"}', '{"\\udc00":1}', '"\\ud800"', "not json \ud800"])
    return st.one_of(obj, escaped, _TEXT)


_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _TEXT),
    st.builds(lambda i, n, a: {"type": "toolCall", "id": i, "name": n, "arguments": a}, _ID, _TEXT, _args()),
)
_MESSAGE = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c, "timestamp": 1}, _TEXT),
    st.builds(
        lambda ts, img: {"role": "user", "content": [{"type": "text", "text": t} for t in ts] + img, "timestamp": 1},
        st.lists(_TEXT, max_size=2),
        st.sampled_from([[], [{"type": "image", "mimeType": "image/png", "data": "iVBO\ud800"}]]),
    ),
    st.builds(lambda bs: {"role": "assistant", "content": bs, "stopReason": "toolUse", "timestamp": 1}, st.lists(_BLOCK, max_size=3)),
    st.builds(
        lambda i, name, t: {"role": "toolResult", "toolCallId": i, "toolName": name, "content": [{"type": "text", "text": t}], "isError": False, "timestamp": 1},
        _ID,
        _TEXT,
        _TEXT,
    ),
    st.builds(lambda s: {"role": "branchSummary", "summary": s, "fromId": "x", "timestamp": 1}, _TEXT),
)


def _assert_sendable(payload: dict[str, Any]) -> None:
    """What an SDK does with the payload: JSON with non-ASCII kept, encoded as UTF-8."""
    json.dumps(payload, ensure_ascii=False).encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
    assert find_lone_surrogates(payload) == []
    for where, text in _arguments_texts(payload):
        assert find_lone_surrogates(json.loads(text)) == [], where


def _arguments_texts(value: Any, where: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    stack = [(where, value)]
    while stack:
        w, v = stack.pop()
        if isinstance(v, dict):
            for k, item in v.items():
                if k == "arguments" and isinstance(item, str):
                    out.append((f"{w}.{k}", item))
                else:
                    stack.append((f"{w}.{k}", item))
        elif isinstance(v, list):
            stack.extend((f"{w}[{i}]", item) for i, item in enumerate(v))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(_MESSAGE, max_size=6), system=st.one_of(st.none(), _TEXT))
@example(
    messages=[
        {"role": "user", "content": "x" * 1999 + "\ud83d", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c\ud83d", "name": "r\udc00",
                                           "arguments": '{"a":"\\ud800"}'}], "stopReason": "toolUse", "timestamp": 1},
        {"role": "toolResult", "toolCallId": "c\ud83d", "toolName": "r", "content": [{"type": "text", "text": "\udc00"}],
         "isError": False, "timestamp": 1},
    ],
    system="sys\ud800",
)
def test_every_adapter_payload_encodes_as_utf8(messages, system):
    for adapt, validate in ADAPTERS:
        result = adapt(messages, system)
        payload = result.payload()
        _assert_sendable(payload)
        assert validate(payload) == [], adapt.__name__
        reported = {r.message_index for r in result.repairs if r.kind == "lone_surrogates_replaced"}
        for i, m in enumerate(messages):
            if i not in reported:
                # not reported: nothing of it that is sent held a lone surrogate
                assert not any(find_lone_surrogates(b) for b in _sent_parts(m)), (adapt.__name__, i)
        if system and lone_surrogates(system):
            assert None in reported


def _sent_parts(message: dict[str, Any]) -> list[Any]:
    """Parts of a message an adapter always sends (user/tool-result text,
    assistant text), for the check that replacements are reported."""
    content = message.get("content")
    if message["role"] == "user" and isinstance(content, str):
        return [content] if content.strip() else []
    if message["role"] in ("user", "toolResult", "assistant") and isinstance(content, list):
        return [b.get("text") for b in content if b.get("type") == "text" and str(b.get("text")).strip()]
    return []


@settings(max_examples=150, deadline=None)
@given(messages=st.lists(_MESSAGE, min_size=1, max_size=4), poison=_TEXT.filter(lambda t: bool(lone_surrogates(t))))
def test_validators_flag_lone_surrogates(messages, poison):
    for adapt, validate in ADAPTERS:
        payload = adapt([{"role": "user", "content": "hello", "timestamp": 1}, *messages]).payload()
        key = "input" if "input" in payload else "messages"
        first = payload[key][0]
        first["content"] = [{"type": "input_text" if key == "input" else "text", "text": "hi " + poison}]
        problems = validate(payload)
        assert any(p.startswith(f"{key}[0].content[0].text: ") and "lone UTF-16 surrogate" in p for p in problems), problems


def test_validators_name_the_place():
    assert validate_openai_chat(
        [
            {"role": "system", "content": "s\ud800"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "a", "type": "function", "function": {"name": "n", "arguments": '{"p":"\\ud83d"}'}}]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
        ]
    ) == [
        "messages[0].content: 1 lone UTF-16 surrogate(s) (first U+D800 at character 1); not valid Unicode, the SDKs cannot encode it",
        "messages[2].tool_calls[0].function.arguments: the JSON text decodes to 1 lone UTF-16 surrogate(s) (first U+D83D); not valid Unicode",
    ]
    assert validate_openai_responses({"input": [{"role": "user", "content": "ok"}], "instructions": "\udc00"}) == [
        "instructions: 1 lone UTF-16 surrogate(s) (first U+DC00 at character 0); not valid Unicode, the SDKs cannot encode it"
    ]
    problems = validate_anthropic_messages({"messages": [{"role": "user", "content": "a\ud83db\ud83d"}], "system": "fine"})
    assert problems == [
        "messages[0].content: 2 lone UTF-16 surrogate(s) (first U+D83D at character 1); not valid Unicode, the SDKs cannot encode it"
    ]


def test_adapters_report_each_replacement():
    messages = [
        {"role": "user", "content": "clean", "timestamp": 1},
        {"role": "user", "content": "half \ud83d", "timestamp": 1},
    ]
    for adapt, _ in ADAPTERS:
        result = adapt(messages, "system \udc00")
        kinds = [(r.kind, r.message_index) for r in result.repairs]
        assert ("lone_surrogates_replaced", 1) in kinds and ("lone_surrogates_replaced", None) in kinds
        assert ("lone_surrogates_replaced", 0) not in kinds
        assert "half \ufffd" in json.dumps(result.payload(), ensure_ascii=False)
    assert messages[1]["content"] == "half \ud83d"  # input not mutated


@settings(max_examples=100, deadline=None)
@given(pad=st.integers(1990, 2001), tail=_TEXT, user=_TEXT)
@example(pad=1999, tail="😀", user="half \ud83d")
def test_summary_request_is_well_formed(pad, tail, user):
    """The tool result is cut at 2000 UTF-16 units wherever the characters
    fall; the prompt (and so the request) is always well formed."""
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": "t\udc00"}, {"type": "toolCall", "id": "c", "name": "read",
                                                                             "arguments": {"p": user}}], "timestamp": 1},
        {"role": "toolResult", "toolCallId": "c", "toolName": "read",
         "content": [{"type": "text", "text": "a" * pad + tail}], "isError": False, "timestamp": 1},
        {"role": "user", "content": user, "timestamp": 2},
    ]
    for kind in ("history", "branch"):
        req = build_summary_request(kind, messages, 100)
        req.prompt.encode("utf-8")
        assert is_well_formed(req.prompt) and is_well_formed(req.system_prompt)


# ---------------------------------------------------------------------------
# end to end: compact through the real SDKs


def _tool_result_session(path: Path, text: str) -> Path:
    b = Builder()
    b.user("Read the log please")
    b.call("c1", "read", path="log.txt")
    b.result("c1", "read", text)
    b.say("Read it.")
    b.user("Now summarize what we know. " + "Keep every detail that matters here. " * 3)
    b.say("Done.")
    return b.write(path)


CASES = {
    # our own truncation at 2000 UTF-16 units cuts the emoji in two
    "cut-emoji": "x" * 1999 + "😀",
    # the file itself holds half an emoji
    "lone-high": "before \ud83d after",
}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("case", list(CASES))
def test_compact_with_provider_sends_valid_utf8(tmp_path, fake_provider, provider, case):
    f = _tool_result_session(tmp_path / "s.jsonl", CASES[case])
    before = f.read_bytes()
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, "--json", *provider_args(fake_provider, provider))
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    (req,) = fake_provider.posts()
    body = json.loads(req.raw.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert find_lone_surrogates(body) == []
    prompt = body["messages"][-1]["content"]
    if case == "cut-emoji":
        # the half emoji is sent as U+FFFD (or, cut surrogate-safe, left out)
        assert re.search("\\[Tool result\\]: x{1999}\ufffd?\n\n\\[\\.\\.\\. 1 more characters truncated\\]", prompt), prompt[:200]
    else:
        assert "[Tool result]: before \ufffd after" in prompt
    after = f.read_bytes()
    assert after.startswith(before)  # the session's own lines are kept byte for byte
    if case == "lone-high":
        assert b"before \\ud83d after" in after
    assert json.loads(res.stdout)["summarizer"] == provider


def test_navigate_summarize_sends_valid_utf8(tmp_path, fake_provider):
    b = Builder()
    root = b.user("start")
    b.say("half \ud83d emoji")
    b.user("more")
    f = b.write(tmp_path / "s.jsonl")
    res = run_cli(tmp_path, "navigate", f, root, "--summarize", "--json", *provider_args(fake_provider, "anthropic"))
    assert res.returncode == 0, res.stderr
    (req,) = fake_provider.posts()
    body = json.loads(req.raw.decode("utf-8"))
    assert "half \ufffd emoji" in body["messages"][0]["content"]
    assert find_lone_surrogates(body) == []


# ---------------------------------------------------------------------------
# check


def test_check_warns_about_lone_surrogates_naming_the_line(tmp_path):
    f = _tool_result_session(tmp_path / "s.jsonl", "before \ud83d after")
    pair = _tool_result_session(tmp_path / "pair.jsonl", "a whole emoji \ud83d\ude00 is fine")
    data = f.read_bytes()
    line = next(n for n, raw in enumerate(data.split(b"\n"), 1) if b"\\ud83d" in raw)
    res = run_cli(tmp_path, "check", f)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{f}:{line}: warning: entry " in res.stdout
    assert "message.content[0].text holds a lone UTF-16 surrogate (U+D83D at character 7" in res.stdout
    assert "1 warning" in res.stdout
    as_json = run_cli(tmp_path, "check", f, "--json")
    report = json.loads(as_json.stdout)
    assert as_json.returncode == 0 and report["ok"] and report["problems"] == []
    assert [(w["line"], w["kind"], w["fixable"]) for w in report["warnings"]] == [(line, "lone-surrogate", False)]
    repaired = run_cli(tmp_path, "check", f, "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert f.read_bytes() == data  # never changed, not even by --repair
    assert not list(tmp_path.glob("s.jsonl.*"))
    clean = json.loads(run_cli(tmp_path, "check", pair, "--json").stdout)
    assert clean["ok"] and clean["warnings"] == []
