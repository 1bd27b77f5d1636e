"""PiCompaction: pi-session's compaction (offline extractive summary, pi's
cut) as a Pydantic AI capability. The agent's runs are compacted when pi's
trigger fires or when the run asks; saved in a PiConversationStore, each
compaction is a pi ``compaction`` entry keeping the messages the model
kept, so pi (oracle) and pi-session build the context the model saw."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, RunContext  # noqa: E402
from pydantic_ai.conversation import Conversation  # noqa: E402
from pydantic_ai.conversation_store import InMemoryConversationStore  # noqa: E402
from pydantic_ai.messages import CompactionPart, ModelMessage, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from pi_session import SessionManager  # noqa: E402
from pi_session.core import jsonio  # noqa: E402
from pi_session.integrations.pydantic_ai import PiConversationStore, pi_session_id_for  # noqa: E402
from pi_session.integrations.pydantic_ai.compaction import HANDLER, PiCompaction  # noqa: E402
from pi_session.integrations.pydantic_ai.convert import PI_METADATA_KEY, to_pi_messages  # noqa: E402
from pi_session.session.settings import CompactionSettings  # noqa: E402
from pydantic_ai_agent import scripted  # noqa: E402

PROMPTS = ["hello there " * 10, "add 1 2", "tell me more " * 10, "add 3 4", "what else " * 10, "add 5 6"]


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """:func:`pydantic_ai_agent.scripted`, and ``forget`` calls the tool that asks for a compaction."""
    last = messages[-1]
    if any(isinstance(p, UserPromptPart) and p.content == "forget" for p in last.parts):
        return ModelResponse(parts=[ToolCallPart("forget", {})])
    return scripted(messages, info)


def _agent(capability: PiCompaction) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(_model, model_name="scripted"), instructions="Be brief.", capabilities=[capability])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @agent.tool
    def forget(ctx: RunContext[None]) -> str:
        """Compact the conversation before the next request."""
        ctx.request_compaction(focus="the sums")
        return "compacting"

    return agent


def _shape(messages: list[ModelMessage]) -> list[list[str]]:
    return [[type(p).__name__ for p in m.parts] for m in messages]


def _chat(url: str, capability: PiCompaction, prompts: list[str]) -> tuple[list[Any], Conversation]:
    """Run the prompts, each on the conversation as stored, saving each
    result, also into Pydantic AI's own store: both hold the same log."""

    async def go() -> tuple[list[Any], Conversation]:
        stores: dict[str, Any] = {"pi": PiConversationStore(url, cwd="/work/shop"), "memory": InMemoryConversationStore()}
        agent = _agent(capability)
        compactions = []
        for n, prompt in enumerate(prompts):
            for name, store in stores.items():
                conversation = await store.load("compacted") or Conversation(conversation_id="compacted")
                result = await agent.run(prompt, conversation=conversation)
                if name == "pi":
                    compactions.extend(result.compactions)
                    if n % 2:
                        store = PiConversationStore(url, cwd="/work/shop")  # a store that has read nothing yet
                await store.save(result)
            loaded = await PiConversationStore(url, cwd="/work/shop").load("compacted")
            mirror = await stores["memory"].load("compacted")
            assert loaded is not None and loaded.messages == (await stores["pi"].load("compacted")).messages
            assert _shape(loaded.messages) == _shape(mirror.messages)
        return compactions, loaded

    return asyncio.run(go())


def _file(root: Path) -> Path:
    (path,) = root.rglob(f"*_{pi_session_id_for('compacted')}.jsonl")
    return path


def _expected_context(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """pi's context after the last summary in a conversation's log: the
    summary, then the messages it kept before it and everything after it
    (system messages left out)."""
    at = max(i for i, m in enumerate(messages) if isinstance(m, ModelRequest) and any(isinstance(p, CompactionPart) for p in m.parts))
    part = next(p for p in messages[at].parts if isinstance(p, CompactionPart))
    kept_before = part.metadata[PI_METADATA_KEY]["keptBefore"]
    kept = messages[at - kept_before : at] + messages[at + 1 :]
    out: list[dict[str, Any]] = [{"role": "compactionSummary", "summary": part.content}]
    for message in kept:
        out.extend(m for m in to_pi_messages(message, None)[0] if m["role"] != "system")
    return json.loads(jsonio.dumps(out))


def _context(path: Path) -> list[dict[str, Any]]:
    """pi-session's context of a session (system messages left out; a
    summary as its role and text)."""
    messages = json.loads(jsonio.dumps(SessionManager.open(path).build_session_context()["messages"]))
    return [{"role": m["role"], "summary": m["summary"]} if m["role"] == "compactionSummary" else m for m in messages if m["role"] != "system"]


def test_pi_trigger_compacts_and_the_session_holds_the_compacted_context(store_url: str, tmp_path: Path) -> None:
    capability = PiCompaction(context_window=200, settings=CompactionSettings(reserve_tokens=100, keep_recent_tokens=40))
    compactions, loaded = _chat(store_url, capability, PROMPTS)
    assert len(compactions) >= 2 and {c.handler for c in compactions} == {HANDLER}
    assert {c.reason for c in compactions} == {"threshold"}
    from pi_session.stores import open_store

    store = open_store(store_url)
    export = tmp_path / "compacted.jsonl"
    export.write_bytes(b"".join(store.read_lines(pi_session_id_for("compacted"))))
    store.close()
    entries = [json.loads(line) for line in export.read_bytes().splitlines()]
    summaries = [e for e in entries if e["type"] == "compaction"]
    assert len(summaries) == len(compactions)
    ids = {e["id"]: e for e in entries}
    for summary in summaries:
        assert "_Extractive summary" in summary["summary"] and summary["tokensBefore"] > 0
        kept = summary["firstKeptEntryId"]
        assert kept == summary["id"] or kept in ids  # itself ("keep nothing before it") or an entry of the session
    context = _context(export)
    expected = _expected_context(loaded.messages)
    assert context == expected


def test_a_run_that_asks_for_a_compaction_gets_one_without_a_context_window(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    compactions, loaded = _chat(str(root), PiCompaction(settings=CompactionSettings(keep_recent_tokens=30)), [*PROMPTS[:4], "forget"])
    assert [c.reason for c in compactions] == ["manual"]
    part = next(p for m in loaded.messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, CompactionPart))
    assert "Requested focus: the sums" in part.content
    assert _context(_file(root)) == _expected_context(loaded.messages)


def test_nothing_is_compacted_while_everything_fits(tmp_path: Path) -> None:
    compactions, loaded = _chat(str(tmp_path / "sessions"), PiCompaction(context_window=100_000), PROMPTS[:3])
    assert compactions == [] and not any(isinstance(p, CompactionPart) for m in loaded.messages for p in m.parts)


@pytest.mark.oracle
def test_pi_builds_the_compacted_context_too(tmp_path: Path, oracle) -> None:
    root = tmp_path / "sessions"
    capability = PiCompaction(context_window=200, settings=CompactionSettings(reserve_tokens=100, keep_recent_tokens=40))
    _chat(str(root), capability, PROMPTS)
    path = _file(root)
    pi = json.loads(oracle("context", str(path)))["messages"]
    ours = json.loads(jsonio.dumps(SessionManager.open(path).build_session_context()["messages"]))
    assert pi == ours
    assert pi[0]["role"] == "compactionSummary"
