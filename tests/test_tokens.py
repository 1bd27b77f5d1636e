"""Token estimates and the compaction trigger (SPEC 6)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from pi_session.session.settings import CompactionSettings
from pi_session.session.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    should_compact,
)


def user(text):
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text="", usage=None, stop="stop", calls=()):
    msg = {"role": "assistant", "content": [{"type": "text", "text": text}, *calls], "stopReason": stop}
    if usage is not None:
        msg["usage"] = usage
    return msg


def test_user_string_and_blocks():
    assert estimate_tokens(user("abcd")) == 1
    assert estimate_tokens(user("abcde")) == 2
    blocks = {"role": "user", "content": [{"type": "text", "text": "abcd"}, {"type": "image", "data": "x"}]}
    assert estimate_tokens(blocks) == 1201  # pi 1.6: images in user messages count 4800 chars (0.73.1: 0)


def test_utf16_lengths():
    assert estimate_tokens(user("🎉")) == 1  # 2 UTF-16 units
    assert estimate_tokens(user("🎉🎉🎉")) == 2  # 6 units -> ceil(6/4)
    assert estimate_tokens(user("ééé")) == 1  # BMP: 3 units


def test_assistant_tool_call_arguments_as_json_stringify():
    call = {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a", "n": 1.0}}
    # name(4) + '{"path":"a","n":1}'(18) = 22 -> 6
    assert estimate_tokens({"role": "assistant", "content": [call]}) == 6
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": "x" * 9}]}
    assert estimate_tokens(thinking) == 3


def test_tool_result_and_custom_images_count_4800_chars():
    tr = {"role": "toolResult", "content": [{"type": "image", "data": "x"}, {"type": "text", "text": "abcd"}]}
    assert estimate_tokens(tr) == math.ceil(4804 / 4)
    custom = {"role": "custom", "content": "abcdefgh"}
    assert estimate_tokens(custom) == 2


def test_bash_and_summaries_and_unknown():
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "abcdef"}) == 2
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 40}) == 10
    assert estimate_tokens({"role": "branchSummary", "summary": "x" * 41}) == 11
    assert estimate_tokens({"role": "whatever", "content": "x" * 100}) == 0


def test_calculate_context_tokens_falls_back_when_total_zero():
    assert calculate_context_tokens({"totalTokens": 50, "input": 1}) == 50
    assert calculate_context_tokens({"totalTokens": 0, "input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4}) == 10


def test_estimate_context_uses_last_valid_usage_plus_trailing():
    usage = {"totalTokens": 1000}
    msgs = [
        user("a" * 400),
        assistant("x", usage),
        assistant("y", {"totalTokens": 99999}, stop="aborted"),
        assistant("z", {"totalTokens": 99999}, stop="error"),
        user("b" * 40),
    ]
    est = estimate_context_tokens(msgs)
    trailing = estimate_tokens(msgs[2]) + estimate_tokens(msgs[3]) + 10
    assert est == {"tokens": 1000 + trailing, "usageTokens": 1000, "trailingTokens": trailing, "lastUsageIndex": 1}


def test_estimate_context_without_usage():
    msgs = [user("a" * 8), assistant("b" * 4)]
    assert estimate_context_tokens(msgs) == {"tokens": 3, "usageTokens": 0, "trailingTokens": 3, "lastUsageIndex": None}


def test_get_last_assistant_usage_from_entries():
    entries = [
        {"type": "message", "message": assistant("a", {"totalTokens": 5})},
        {"type": "message", "message": assistant("b", {"totalTokens": 7}, stop="aborted")},
        {"type": "label"},
    ]
    assert get_last_assistant_usage(entries) == {"totalTokens": 5}
    assert get_last_assistant_usage([]) is None


def test_should_compact():
    s = CompactionSettings(reserve_tokens=1000)
    assert should_compact(9001, 10000, s)
    assert not should_compact(9000, 10000, s)
    assert not should_compact(10**9, 10000, CompactionSettings(enabled=False))
    assert should_compact(9001, 10000, {"enabled": True, "reserveTokens": 1000})


@given(st.text())
def test_estimate_is_ceil_of_utf16_over_4(text):
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert estimate_tokens(user(text)) == math.ceil(units / 4)
    assert estimate_tokens({"role": "compactionSummary", "summary": text}) == math.ceil(units / 4)


@given(st.lists(st.text(max_size=50), max_size=10), st.integers(1, 10**6))
def test_context_tokens_monotonic_in_trailing_messages(texts, total):
    msgs = [assistant("x", {"totalTokens": total})] + [user(t) for t in texts]
    est = estimate_context_tokens(msgs)
    assert est["tokens"] == total + sum(estimate_tokens(m) for m in msgs[1:])
    assert est["tokens"] >= total


def test_zero_usage_is_not_trusted():
    """pi 1.6: an assistant whose usage totals 0 is skipped like an errored one."""
    msgs = [assistant("x", {"totalTokens": 500}), user("abcd"), assistant("y", {"input": 0, "output": 0}), user("abcdefgh")]
    est = estimate_context_tokens(msgs)
    assert est["lastUsageIndex"] == 0
    assert est["usageTokens"] == 500
    assert est["tokens"] == 500 + 1 + estimate_tokens(msgs[2]) + 2


def test_system_message_tokens():
    """pi 1.6: content, non-null sections and JSON of toolsAdded count; toolsRemoved does not."""
    tools = [{"name": "read", "description": "r", "parameters": {}}]
    msg = {"role": "system", "content": "abcd", "sections": {"a": "12345678", "b": None},
           "toolsAdded": tools, "toolsRemoved": [{"name": "x" * 400}], "timestamp": 1}
    json_len = len('[{"name":"read","description":"r","parameters":{}}]')
    assert estimate_tokens(msg) == -(-(4 + 8 + json_len) // 4)
    assert estimate_tokens({"role": "system", "content": [{"type": "image", "data": "x"}]}) == 1200
