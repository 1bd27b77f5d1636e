"""Real Pydantic AI agent runs (``Agent.run(..., conversation=...)`` on a
scripted ``FunctionModel``, offline) kept in a PiConversationStore on
every store kind: several turns with tool calls, a run paused for a tool
approval and resumed in another process, a fork explored and dropped;
then ``pi-session ls``, ``tree``, ``context`` and ``search`` show them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.messages import ModelRequest, ToolReturnPart  # noqa: E402

from pi_session.integrations.pydantic_ai import PiConversationStore, pi_session_id_for  # noqa: E402
from pydantic_ai_agent import make_agent, turn  # noqa: E402

AGENT = Path(__file__).resolve().parent / "pydantic_ai_agent.py"


def _process(url: str, conversation_id: str, prompt: str) -> object:
    done = subprocess.run(
        [sys.executable, str(AGENT), url, conversation_id, prompt], capture_output=True, text=True, timeout=120, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_agent_runs_kept_as_pi_sessions_that_pi_session_lists_shows_and_searches(store_url: str, cli, tmp_path: Path) -> None:
    async def chat() -> tuple[list[object], int]:
        store = PiConversationStore(store_url, cwd="/work/shop")
        outputs = [await turn(store, "till-1", prompt) for prompt in ("hello", "add 2 3", "add 40 2", "what now")]
        loaded = await store.load("till-1")
        assert loaded is not None
        # a fork explored and dropped: the original is untouched
        fork = await store.fork("till-1", at=6, new_conversation_id="till-1-what-if")
        result = await make_agent().run("add 100 200", conversation=fork)
        await store.save(result)
        explored = await store.load("till-1-what-if")
        assert explored is not None and explored.messages[:6] == loaded.messages[:6] and len(explored.messages) == 10
        await store.delete("till-1-what-if")
        assert await store.load("till-1-what-if") is None
        again = await store.load("till-1")
        assert again is not None and again.messages == loaded.messages
        return outputs, len(loaded.messages)

    outputs, count = asyncio.run(chat())
    assert outputs == ["You said: hello", "The add tool said 5.", "The add tool said 42.", "You said: what now"]
    assert count == 12

    # paused on an approval in one process, resumed in another
    paused = _process(store_url, "till-2", "pay 250")
    assert isinstance(paused, dict) and len(paused["pending"]) == 1
    assert _process(store_url, "till-2", "--approve") == "The pay tool said paid 250 cents."

    async def check_resumed() -> None:
        store = PiConversationStore(store_url, cwd="/work/shop")
        conversation = await store.load("till-2")
        assert conversation is not None and conversation.deferred_tool_requests is None
        returns = [p for m in conversation.messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
        assert [r.content for r in returns] == ["paid 250 cents"]
        assert sorted(r.conversation_id for r in await store.list_conversations()) == ["till-1", "till-2"]

    asyncio.run(check_resumed())

    store_args = ["--store", store_url]
    listed = cli(*store_args, "ls", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    infos = {info["id"]: info for info in json.loads(listed.stdout)}
    assert set(infos) == {pi_session_id_for("till-1"), pi_session_id_for("till-2")}
    assert infos["till-1"]["firstMessage"] == "hello" and infos["till-1"]["cwd"] == "/work/shop"
    tree = cli(*store_args, "tree", "till-1")
    assert tree.returncode == 0, tree.stderr
    assert "add 40 2" in tree.stdout and "← leaf" in tree.stdout
    context = cli(*store_args, "context", "till-2")
    assert context.returncode == 0, context.stderr
    assert "pay 250" in context.stdout and "paid 250 cents" in context.stdout and "The pay tool said" in context.stdout
    found = cli(*store_args, "search", "tool said 42", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    hits = hits["hits"] if isinstance(hits, dict) else hits
    assert {hit["sessionId"] if "sessionId" in hit else hit.get("session") for hit in hits} >= {"till-1"}, hits
