"""compact(): prompts, split turns made one after the other (pi 1.6), hooks,
file lists, usage."""

from __future__ import annotations

import asyncio

import pytest

from pi_session.compaction import (
    SUMMARY_SECTIONS,
    CompactionCancelled,
    CompactionResult,
    compact,
    prepare_compaction,
)
from pi_session.compaction.summary import (
    ensure_sections,
    HISTORY_INSTRUCTIONS,
    SPLIT_TURN_SEPARATOR,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_INSTRUCTIONS,
)
from pi_session.llm.base import SummarizerError, SummaryRequest, SummaryText, make_usage
from pi_session.session.settings import CompactionSettings


class Recorder:
    name = "recorder"

    def __init__(self, delay: float = 0.0, fail_kind: str | None = None, usage: bool = False):
        self.requests: list[SummaryRequest] = []
        self.delay = delay
        self.fail_kind = fail_kind
        self.usage = usage
        self.active = 0
        self.max_active = 0

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.delay)
            if request.kind == self.fail_kind:
                raise SummarizerError("boom")
            text = f"SUMMARY[{request.kind}]"
            if self.usage:
                n = len(self.requests)
                return SummaryText(text, {**make_usage(10 * n, n, 0, 0), "cost": {
                    "input": 0.5, "output": 0.25, "cacheRead": 0, "cacheWrite": 0, "total": 0.75, "totalFromProvider": True}})
            return text
        finally:
            self.active -= 1


def msg_entry(i, role, text, content=None):
    msg = {"role": role, "timestamp": i}
    if role == "assistant":
        msg["content"] = content or [{"type": "text", "text": text}]
        msg["stopReason"] = "stop"
    elif role == "toolResult":
        msg.update(toolCallId="c", toolName="read", content=[{"type": "text", "text": text}], isError=False)
    else:
        msg["content"] = text
    return {"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None,
            "timestamp": "2025-01-01T00:00:00.000Z", "message": msg}


def split_turn_path():
    read = [{"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "src/a.py"}}]
    edit = [{"type": "toolCall", "id": "d", "name": "edit", "arguments": {"path": "src/b.py"}}]
    return [
        msg_entry(0, "user", "first task " * 30),
        msg_entry(1, "assistant", "", read),
        msg_entry(2, "toolResult", "file body " * 30),
        msg_entry(3, "user", "second task " * 30),
        msg_entry(4, "assistant", "", edit),
        msg_entry(5, "toolResult", "ok " * 100),
        msg_entry(6, "assistant", "done " * 100),
    ]


def test_prompts_ask_for_exact_sections():
    for heading in SUMMARY_SECTIONS:
        assert heading in HISTORY_INSTRUCTIONS
        assert heading in UPDATE_INSTRUCTIONS
    assert "<previous-summary>" in UPDATE_INSTRUCTIONS
    for heading in ("## Original Request", "## Progress So Far", "## Context Needed to Continue"):
        assert heading in TURN_PREFIX_INSTRUCTIONS


def test_split_turn_runs_one_after_the_other_and_joins():
    prep = prepare_compaction(split_turn_path(), CompactionSettings(reserve_tokens=1000, keep_recent_tokens=100))
    assert prep is not None and prep.is_split_turn and prep.turn_prefix_messages
    rec = Recorder(delay=0.01, usage=True)
    result = asyncio.run(compact(prep, rec, custom_instructions="focus on tests"))
    assert rec.max_active == 1  # pi 1.6: never two requests in flight
    assert [r.kind for r in rec.requests] == ["history", "turn_prefix"]
    kinds = {r.kind: r for r in rec.requests}
    # no output cap is sent any more (pi 1.6)
    assert kinds["history"].max_tokens is None and kinds["turn_prefix"].max_tokens is None
    assert kinds["history"].custom_instructions == "focus on tests"
    assert "focus on tests" in kinds["history"].prompt
    assert kinds["history"].prompt.startswith("<conversation>\n[User]: first task")
    assert "[Assistant tool calls]: read(path=\"src/a.py\")" in kinds["history"].prompt
    assert all(m["role"] in ("user", "assistant", "toolResult") for m in kinds["history"].messages)
    # the turn-prefix request: Markdown headings, custom instructions passed
    prefix = kinds["turn_prefix"].prompt
    assert prefix.startswith("# Conversation\n[User]: second task")
    assert "\n\n# Instructions\n" in prefix and "<conversation>" not in prefix
    assert prefix.endswith("focus on tests") and kinds["turn_prefix"].custom_instructions == "focus on tests"
    for heading in ("## Original Request", "## Progress So Far", "## Context Needed to Continue"):
        assert heading in prefix
    assert result.summary == (
        ensure_sections("SUMMARY[history]") + SPLIT_TURN_SEPARATOR + "SUMMARY[turn_prefix]"
        + "\n\n<read-files>\nsrc/a.py\n</read-files>\n\n<modified-files>\nsrc/b.py\n</modified-files>"
    )
    assert "\n\n---\n\n" in result.summary
    assert result.first_kept_entry_id == prep.first_kept_entry_id
    assert result.tokens_before == prep.tokens_before
    assert result.details == {"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}
    # usage summed field by field (request 1: 10/1, request 2: 20/2)
    assert result.usage == {"input": 30, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 33,
                            "cost": {"input": 1.0, "output": 0.5, "cacheRead": 0, "cacheWrite": 0, "total": 1.5,
                                     "totalFromProvider": True}}
    assert result.to_json() == {
        "summary": result.summary, "firstKeptEntryId": prep.first_kept_entry_id,
        "tokensBefore": prep.tokens_before, "details": result.details, "usage": result.usage,
    }


def test_usage_absent_when_the_summarizer_reports_none():
    prep = prepare_compaction(split_turn_path(), CompactionSettings(keep_recent_tokens=100))
    result = asyncio.run(compact(prep, Recorder()))
    assert result.usage is None and "usage" not in result.to_json()


def test_combine_usage_rules():
    from pi_session.llm.base import combine_usage

    a = {**make_usage(1, 2, 3, 4), "reasoning": 5}
    b = make_usage(10, 20, 30, 40)
    b["cost"]["totalFromProvider"] = True
    c = combine_usage(a, b)
    assert (c["input"], c["output"], c["cacheRead"], c["cacheWrite"], c["totalTokens"]) == (11, 22, 33, 44, 110)
    assert c["reasoning"] == 5 and "cacheWrite1h" not in c
    assert c["cost"]["totalFromProvider"] is False  # only true when both parts are
    assert combine_usage(None, b) is b and combine_usage(a, None) is a and combine_usage(None, None) is None


def test_update_kind_with_previous_summary():
    path = split_turn_path()
    path.insert(3, {"type": "compaction", "id": "c1", "parentId": "e2", "summary": "OLD SUMMARY",
                    "firstKeptEntryId": "e2", "tokensBefore": 10, "timestamp": "2025-01-01T00:00:00.000Z"})
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=30))
    rec = Recorder()
    asyncio.run(compact(prep, rec))
    hist = [r for r in rec.requests if r.kind in ("history", "update")]
    assert hist[0].kind == "update"
    assert hist[0].previous_summary == "OLD SUMMARY"
    assert "<previous-summary>\nOLD SUMMARY\n</previous-summary>" in hist[0].prompt


def test_a_failed_request_fails_the_compaction():
    prep = prepare_compaction(split_turn_path(), CompactionSettings(keep_recent_tokens=100))
    rec = Recorder(fail_kind="history")
    with pytest.raises(SummarizerError):
        asyncio.run(compact(prep, rec))
    assert [r.kind for r in rec.requests] == ["history"]  # the prefix request is not made
    rec = Recorder(fail_kind="turn_prefix")
    with pytest.raises(SummarizerError):
        asyncio.run(compact(prep, rec))


def test_hook_none_cancel_string_result():
    prep = prepare_compaction(split_turn_path(), CompactionSettings(keep_recent_tokens=100))
    rec = Recorder()
    seen = []

    def passthrough(p):
        seen.append(p)
        return None

    asyncio.run(compact(prep, rec, hook=passthrough))
    assert seen == [prep] and rec.requests

    def cancel(p):
        raise CompactionCancelled("no")

    with pytest.raises(CompactionCancelled):
        asyncio.run(compact(prep, Recorder(), hook=cancel))
    with pytest.raises(CompactionCancelled):
        asyncio.run(compact(prep, Recorder(), hook=lambda p: CompactionCancelled))

    async def supply(p):
        return "hook summary"

    rec2 = Recorder()
    res = asyncio.run(compact(prep, rec2, hook=supply))
    assert rec2.requests == []
    assert res.summary == "hook summary" and res.from_hook
    assert res.to_json()["fromHook"] is True
    res = asyncio.run(compact(prep, rec2, hook=lambda p: {"summary": "S", "details": {"x": 1}}))
    assert res.from_hook and res.details == {"x": 1} and res.first_kept_entry_id == prep.first_kept_entry_id
    res = asyncio.run(compact(prep, rec2, hook=lambda p: CompactionResult("R", "e1", 5)))
    assert res.from_hook and res.first_kept_entry_id == "e1"
    with pytest.raises(TypeError):
        asyncio.run(compact(prep, rec2, hook=lambda p: 42))


def test_not_split_single_request_no_file_blocks():
    path = [msg_entry(0, "user", "a " * 200), msg_entry(1, "assistant", "b " * 200),
            msg_entry(2, "user", "c " * 200), msg_entry(3, "assistant", "d " * 200)]
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=150))
    assert not prep.is_split_turn
    rec = Recorder()
    res = asyncio.run(compact(prep, rec))
    assert [r.kind for r in rec.requests] == ["history"]
    assert res.summary == ensure_sections("SUMMARY[history]")
    assert res.details == {"readFiles": [], "modifiedFiles": []}
