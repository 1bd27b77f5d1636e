"""pi 0.58.3's ``packages/coding-agent/test/compaction-serialization.test.ts``
against :func:`pi_session.compaction.serialize_conversation`: tool results
longer than 2000 characters are cut for the summary request; user and
assistant text never is."""

from __future__ import annotations

from typing import Any

from pi_session.compaction import TOOL_RESULT_MAX_CHARS, serialize_conversation


def tool_result(text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "tc1",
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 0,
    }


def test_serialization_cuts_a_long_tool_result() -> None:
    assert TOOL_RESULT_MAX_CHARS == 2000
    out = serialize_conversation([tool_result("x" * 5000)])
    assert "[Tool result]:" in out
    assert "[... 3000 more characters truncated]" in out
    assert "x" * 2000 in out
    assert "x" * 3000 not in out


def test_serialization_keeps_a_short_tool_result_whole() -> None:
    text = "x" * 1500
    out = serialize_conversation([tool_result(text)])
    assert out == f"[Tool result]: {text}"
    assert "truncated" not in out


def test_serialization_never_cuts_user_or_assistant_text() -> None:
    text = "y" * 5000
    messages = [
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic",
            "provider": "anthropic",
            "model": "test",
            "usage": {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 0,
        },
    ]
    out = serialize_conversation(messages)
    assert "truncated" not in out
    assert text in out
