"""A Pydantic AI agent on a scripted model (``FunctionModel``, offline) for
the conversation store's end-to-end tests, runnable as a process:

    python pydantic_ai_agent.py URL CONVERSATION PROMPT
        load the conversation (or start it), run PROMPT, save; print the
        output as JSON (``{"pending": [tool call ids]}`` when the run
        paused for approvals).
    python pydantic_ai_agent.py URL CONVERSATION --approve
        load the conversation, approve every call it waits on, run, save.

The model: ``add A B`` calls the ``add`` tool; ``pay N`` calls ``pay``,
which needs approval; otherwise, and after a tool result, it answers in
text (naming the last tool result)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from pi_session.integrations.pydantic_ai import PiConversationStore


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(f"The {returns[-1].tool_name} tool said {returns[-1].model_response_str()}.")])
    prompt = next((p.content for p in reversed(last.parts) if isinstance(p, UserPromptPart)), "")
    words = str(prompt).split()
    if words[:1] == ["add"] and len(words) == 3:
        return ModelResponse(parts=[TextPart("Adding."), ToolCallPart("add", {"a": int(words[1]), "b": int(words[2])})])
    if words[:1] == ["pay"] and len(words) == 2:
        return ModelResponse(parts=[ToolCallPart("pay", {"cents": int(words[1])})])
    return ModelResponse(parts=[TextPart(f"You said: {prompt}")])


def make_agent() -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(scripted, model_name="scripted"), instructions="You are a careful cashier.", output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @agent.tool(requires_approval=True)
    def pay(ctx: RunContext[None], cents: int) -> str:
        """Pay an amount (needs approval)."""
        return f"paid {cents} cents"

    return agent


async def turn(store: PiConversationStore, conversation_id: str, prompt: str | None, *, approve: bool = False) -> Any:
    agent = make_agent()
    conversation = await store.load(conversation_id) or Conversation(conversation_id=conversation_id)
    results = None
    if approve:
        assert conversation.deferred_tool_requests is not None
        results = conversation.deferred_tool_requests.build_results(approve_all=True)
    result = await agent.run(prompt, conversation=conversation, deferred_tool_results=results)
    await store.save(result)
    output = result.output
    if isinstance(output, DeferredToolRequests):
        return {"pending": [call.tool_call_id for call in output.approvals]}
    return output


async def main(url: str, conversation_id: str, prompt: str) -> None:
    store = PiConversationStore(url, cwd="/work/shop")
    output = await (turn(store, conversation_id, None, approve=True) if prompt == "--approve" else turn(store, conversation_id, prompt))
    print(json.dumps(output))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
