"""pi 0.58.3's ``packages/coding-agent/test/compaction.test.ts``, case by case,
against pi-session's compaction API (see ``README.md`` beside this file for
the cases that do not apply and for differences decided by pi 1.6).

Entries are built the way pi's test builds them: ids ``test-id-N`` in
creation order, each entry the child of the one before."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_session import parse_session_entries
from pi_session.compaction import (
    CompactionResult,
    SummaryRequest,
    calculate_context_tokens,
    compact,
    find_cut_point,
    get_last_assistant_usage,
    prepare_compaction,
    should_compact,
)
from pi_session.session.context import build_session_context
from pi_session.llm import ExtractiveSummarizer
from pi_session.storage.versions import migrate_session_entries
from pi_session.session.settings import CompactionSettings
from shared_paths import ORACLE, SHARED, needs_oracle, shared_missing

LARGE_SESSION = SHARED / "fixtures" / "pi-tests" / "large-session.jsonl"
needs_large_session = pytest.mark.skipif(
    shared_missing(LARGE_SESSION) is not None, reason=shared_missing(LARGE_SESSION) or ""
)

TS = "2025-01-01T00:00:00.000Z"


def usage(inp: int, out: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": inp + out + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 0}


def assistant(text: str, u: dict[str, Any] | None = None, stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": u or usage(100, 50),
        "stopReason": stop,
        "timestamp": 0,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
    }


class Chain:
    """Builds a linear path of entries with predictable ids."""

    def __init__(self) -> None:
        self.count = 0
        self.last: str | None = None

    def _entry(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry_id = f"test-id-{self.count}"
        self.count += 1
        entry = {"type": kind, "id": entry_id, "parentId": self.last, "timestamp": TS, **fields}
        self.last = entry_id
        return entry

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._entry("message", message=message)

    def compaction(self, summary: str, first_kept: str) -> dict[str, Any]:
        return self._entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=10000)

    def model_change(self, provider: str, model_id: str) -> dict[str, Any]:
        return self._entry("model_change", provider=provider, modelId=model_id)

    def thinking(self, level: str) -> dict[str, Any]:
        return self._entry("thinking_level_change", thinkingLevel=level)


def large_session_entries() -> list[dict[str, Any]]:
    records = parse_session_entries(Path(LARGE_SESSION).read_text(encoding="utf-8"))
    migrate_session_entries(records)
    return [r for r in records if r.get("type") != "session"]


def first_summary(ctx: Any) -> str:
    """The summary text of the context's first message (a compaction summary)."""
    first: dict[str, Any] = dict(ctx["messages"][0])
    return str(first["summary"])


def kept_role(entries: list[dict[str, Any]], index: int) -> str:
    entry = entries[index]
    assert entry["type"] == "message"
    return str(entry["message"]["role"])


# ------------------------------------------------------------ Token calculation


def test_token_calculation_sums_all_four_usage_fields() -> None:
    assert calculate_context_tokens(usage(1000, 500, 200, 100)) == 1800


def test_token_calculation_of_zero_usage_is_zero() -> None:
    assert calculate_context_tokens(usage(0, 0, 0, 0)) == 0


# ------------------------------------------------------ getLastAssistantUsage


def test_last_assistant_usage_is_the_latest_assistant_message() -> None:
    c = Chain()
    entries = [
        c.message(user("Hello")),
        c.message(assistant("Hi", usage(100, 50))),
        c.message(user("How are you?")),
        c.message(assistant("Good", usage(200, 100))),
    ]
    found = get_last_assistant_usage(entries)
    assert found is not None
    assert found["input"] == 200


def test_last_assistant_usage_skips_an_aborted_reply() -> None:
    c = Chain()
    entries = [
        c.message(user("Hello")),
        c.message(assistant("Hi", usage(100, 50))),
        c.message(user("How are you?")),
        c.message(assistant("Aborted", usage(300, 150), stop="aborted")),
    ]
    found = get_last_assistant_usage(entries)
    assert found is not None
    assert found["input"] == 100


def test_last_assistant_usage_is_none_without_assistant_messages() -> None:
    c = Chain()
    assert get_last_assistant_usage([c.message(user("Hello"))]) is None


# --------------------------------------------------------------- shouldCompact


def test_should_compact_once_context_passes_window_minus_reserve() -> None:
    settings = CompactionSettings(enabled=True, reserve_tokens=10000, keep_recent_tokens=20000)
    assert should_compact(95000, 100000, settings) is True
    assert should_compact(89000, 100000, settings) is False


def test_should_compact_never_when_disabled() -> None:
    settings = CompactionSettings(enabled=False, reserve_tokens=10000, keep_recent_tokens=20000)
    assert should_compact(95000, 100000, settings) is False


# ---------------------------------------------------------------- findCutPoint


def ten_turns() -> list[dict[str, Any]]:
    c = Chain()
    entries: list[dict[str, Any]] = []
    for i in range(10):
        entries.append(c.message(user(f"User {i}")))
        entries.append(c.message(assistant(f"Assistant {i}", usage(0, 100, (i + 1) * 1000, 0))))
    return entries


def one_assistant() -> list[dict[str, Any]]:
    return [Chain().message(assistant("a"))]


def all_fit() -> list[dict[str, Any]]:
    c = Chain()
    return [
        c.message(user("1")),
        c.message(assistant("a", usage(0, 50, 500, 0))),
        c.message(user("2")),
        c.message(assistant("b", usage(0, 50, 1000, 0))),
    ]


def long_second_turn() -> list[dict[str, Any]]:
    c = Chain()
    return [
        c.message(user("Turn 1")),
        c.message(assistant("A1", usage(0, 100, 1000, 0))),
        c.message(user("Turn 2")),
        c.message(assistant("A2-1", usage(0, 100, 5000, 0))),
        c.message(assistant("A2-2", usage(0, 100, 8000, 0))),
        c.message(assistant("A2-3", usage(0, 100, 10000, 0))),
    ]


def test_find_cut_point_lands_on_a_user_or_assistant_message() -> None:
    entries = ten_turns()
    result = find_cut_point(entries, 0, len(entries), 2500)
    assert kept_role(entries, result.first_kept_entry_index) in ("user", "assistant")


def test_find_cut_point_without_valid_cut_point_returns_start() -> None:
    entries = one_assistant()
    assert find_cut_point(entries, 0, len(entries), 1000).first_kept_entry_index == 0


def test_find_cut_point_keeps_everything_within_budget() -> None:
    entries = all_fit()
    assert find_cut_point(entries, 0, len(entries), 50000).first_kept_entry_index == 0


def test_find_cut_point_at_an_assistant_message_reports_split_turn() -> None:
    entries = long_second_turn()
    result = find_cut_point(entries, 0, len(entries), 3000)
    if kept_role(entries, result.first_kept_entry_index) == "assistant":
        assert result.is_split_turn is True
        assert result.turn_start_index == 2


# -------------------------------------------------------- buildSessionContext


def test_context_without_compaction_has_every_message() -> None:
    c = Chain()
    entries = [c.message(user("1")), c.message(assistant("a")), c.message(user("2")), c.message(assistant("b"))]
    ctx = build_session_context(entries)
    assert len(ctx["messages"]) == 4
    assert ctx["thinkingLevel"] == "off"
    assert ctx["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


def test_context_with_one_compaction_is_summary_kept_and_later() -> None:
    c = Chain()
    u1, a1, u2, a2 = c.message(user("1")), c.message(assistant("a")), c.message(user("2")), c.message(assistant("b"))
    comp = c.compaction("Summary of 1,a,2,b", u2["id"])
    u3, a3 = c.message(user("3")), c.message(assistant("c"))
    ctx = build_session_context([u1, a1, u2, a2, comp, u3, a3])
    assert len(ctx["messages"]) == 5
    assert ctx["messages"][0]["role"] == "compactionSummary"
    assert "Summary of 1,a,2,b" in first_summary(ctx)


def test_context_with_two_compactions_uses_only_the_latest() -> None:
    c = Chain()
    u1, a1 = c.message(user("1")), c.message(assistant("a"))
    comp1 = c.compaction("First summary", u1["id"])
    u2, b, u3, cc = c.message(user("2")), c.message(assistant("b")), c.message(user("3")), c.message(assistant("c"))
    comp2 = c.compaction("Second summary", u3["id"])
    u4, d = c.message(user("4")), c.message(assistant("d"))
    ctx = build_session_context([u1, a1, comp1, u2, b, u3, cc, comp2, u4, d])
    assert len(ctx["messages"]) == 5
    assert "Second summary" in first_summary(ctx)


def test_context_keeps_all_when_first_kept_is_the_first_entry() -> None:
    c = Chain()
    u1, a1 = c.message(user("1")), c.message(assistant("a"))
    comp = c.compaction("First summary", u1["id"])
    u2, b = c.message(user("2")), c.message(assistant("b"))
    ctx = build_session_context([u1, a1, comp, u2, b])
    assert len(ctx["messages"]) == 5


def test_context_follows_model_and_thinking_level_changes() -> None:
    c = Chain()
    entries = [
        c.message(user("1")),
        c.model_change("openai", "gpt-4"),
        c.message(assistant("a")),
        c.thinking("high"),
    ]
    ctx = build_session_context(entries)
    # the assistant reply after the model change names the model in use
    assert ctx["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert ctx["thinkingLevel"] == "high"


# --------------------------------------------------------- Large session fixture


@needs_large_session
def test_large_session_parses_into_many_message_entries() -> None:
    entries = large_session_entries()
    assert len(entries) > 100
    assert sum(1 for e in entries if e["type"] == "message") > 100


@needs_large_session
def test_large_session_cut_point_is_a_message() -> None:
    entries = large_session_entries()
    result = find_cut_point(entries, 0, len(entries), CompactionSettings().keep_recent_tokens)
    assert kept_role(entries, result.first_kept_entry_index) in ("user", "assistant")


@needs_large_session
def test_large_session_builds_a_context() -> None:
    ctx = build_session_context(large_session_entries())
    assert len(ctx["messages"]) > 100
    assert ctx["model"] is not None


# ------------------------------------------------------------ LLM summarization
# pi runs these against a real model when a key is set; here the offline
# ExtractiveSummarizer writes the summary, so the cases check compact's
# result and the compacted context, not a model's prose.


def run_compact() -> tuple[list[dict[str, Any]], CompactionResult]:
    entries = large_session_entries()
    preparation = prepare_compaction(entries, CompactionSettings())
    assert preparation is not None
    return entries, asyncio.run(compact(preparation, ExtractiveSummarizer()))


@needs_large_session
def test_llm_summarization_compacts_the_large_session() -> None:
    _, result = run_compact()
    assert len(result.summary) > 100
    assert result.first_kept_entry_id
    assert result.tokens_before > 0


@needs_large_session
def test_llm_summarization_leaves_a_valid_compacted_session() -> None:
    entries, result = run_compact()
    before = build_session_context(entries)
    entry = {"type": "compaction", "id": "compaction-test-id", "parentId": entries[-1]["id"], "timestamp": TS}
    entry.update(result.to_json())
    after = build_session_context([*entries, entry])
    assert len(after["messages"]) < len(before["messages"])
    assert after["messages"][0]["role"] == "compactionSummary"
    assert result.summary in first_summary(after)


class StubSummarizer:
    """A stand-in for the model: returns a fixed text and records requests."""

    name = "stub"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return "## Goal\nStub summary of the conversation so far."


@needs_large_session
def test_llm_summarization_with_a_stub_model_uses_its_text() -> None:
    entries = large_session_entries()
    preparation = prepare_compaction(entries, CompactionSettings())
    assert preparation is not None
    stub = StubSummarizer()
    result = asyncio.run(compact(preparation, stub))
    assert stub.requests
    assert "Stub summary of the conversation so far." in result.summary
    assert result.first_kept_entry_id == preparation.first_kept_entry_id


# ------------------------------------------------ the same cases against pi 1.6
# pi's findCutPoint cases assert only properties of the cut; here the cuts
# themselves (and the large session's preparation) must equal pi 1.6's.

CUT_CASES = {
    "ten-turns": (ten_turns, 2500),
    "one-assistant": (one_assistant, 1000),
    "all-fit": (all_fit, 50000),
    "long-second-turn": (long_second_turn, 3000),
}


def oracle_batch(tmp_path: Path, calls: list[list[str]]) -> list[Any]:
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    env = {**os.environ, "PI_ORACLE_PI": "1.6.0"}
    proc = subprocess.run(
        [str(ORACLE), "batch", str(tmp_path / "calls.json")], capture_output=True, text=True, check=True, env=env
    )
    return [item["json"] for item in json.loads(proc.stdout)]


def prep_shape(prep: dict[str, Any]) -> dict[str, Any]:
    return {
        "summarize": len(prep["messagesToSummarize"]),
        "prefix": len(prep["turnPrefixMessages"]),
        "split": prep["isSplitTurn"],
        "tokensBefore": prep["tokensBefore"],
        "fileLists": prep["fileLists"],
    }


@needs_oracle
@needs_large_session
def test_cut_point_cases_and_large_session_match_pi16(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "pi-suite", "timestamp": TS, "cwd": "/proj"}
    calls: list[list[str]] = []
    for name, (build, keep) in CUT_CASES.items():
        file = tmp_path / f"{name}.jsonl"
        file.write_text("".join(json.dumps(r) + "\n" for r in [header, *build()]))
        calls.append(["cut", str(file), "--keep", str(keep)])
    keep_default = str(CompactionSettings().keep_recent_tokens)
    calls.append(["cut", str(LARGE_SESSION), "--keep", keep_default])
    calls.append(["prepare", str(LARGE_SESSION)])
    answers = oracle_batch(tmp_path, calls)
    fields = ("firstKeptEntryIndex", "turnStartIndex", "isSplitTurn")
    for (name, (build, keep)), answer in zip(CUT_CASES.items(), answers, strict=False):
        entries = build()
        assert find_cut_point(entries, 0, len(entries), keep).to_json() == {k: answer[k] for k in fields}, name
    entries = large_session_entries()
    ours = find_cut_point(entries, 0, len(entries), int(keep_default)).to_json()
    assert ours == {k: answers[4][k] for k in fields}
    prep = prepare_compaction(entries, CompactionSettings())
    assert prep is not None
    assert prep_shape(prep.to_json()) == prep_shape(answers[5])
