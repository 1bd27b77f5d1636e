"""PiSession with the real OpenAI Agents SDK: ``Runner.run`` against a
scripted model written here (a real ``agents.models.interface.Model``, no
network), real function tools, files checked by pi itself (oracle, 1.6)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import openai
from process_barrier import release_together
import pytest

agents = pytest.importorskip("agents")

from agents import Agent, ModelSettings, RunConfig, Runner, function_tool, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import (  # noqa: E402
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary  # noqa: E402

from pi_session import SessionManager  # noqa: E402
from pi_session.adapters import MISSING_RESULT_TEXT  # noqa: E402
from pi_session.integrations.openai_agents import (  # noqa: E402
    ITEM_CUSTOM_TYPE,
    CompactionEvent,
    PiSession,
    is_context_overflow_error,
    pi_session_id_for,
)
from pi_session.session.settings import CompactionSettings  # noqa: E402

set_tracing_disabled(True)


# ---------------------------------------------------------------------------
# a scripted model


def _text(text: str, n: int) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{n}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def _call(name: str, args: dict[str, Any], n: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{n}", call_id=f"call_{n}", name=name, arguments=json.dumps(args), type="function_call", status="completed"
    )


def _reasoning(text: str, n: int) -> ResponseReasoningItem:
    return ResponseReasoningItem(id=f"rs_{n}", type="reasoning", summary=[Summary(type="summary_text", text=text)])


class ScriptedModel(Model):
    """Answers a user message naming a city with a weather tool call (and a
    reasoning item), then, once the tool output is in the input, with text
    quoting it. Records every input it is given. ``overflow_above``: raise
    the provider's context-length error when the input has more items."""

    def __init__(self, overflow_above: int | None = None) -> None:
        self.inputs: list[list[dict[str, Any]]] = []
        self.overflow_above = overflow_above
        self.n = 0

    def _respond(self, input: Any) -> tuple[list[Any], int]:
        items = [input] if isinstance(input, str) else list(input)
        items = [{"role": "user", "content": i} if isinstance(i, str) else dict(i) for i in items]
        self.inputs.append(items)
        if self.overflow_above is not None and len(items) > self.overflow_above:
            response = httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1/v1/responses"))
            raise openai.BadRequestError(
                "This model's maximum context length is 100 tokens.",
                response=response,
                body={"message": "This model's maximum context length is 100 tokens.", "code": "context_length_exceeded"},
            )
        self.n += 1
        last = items[-1]
        prompt = sum(len(json.dumps(i)) for i in items) // 4  # about what a tokenizer would count
        if last.get("type") == "function_call_output":
            out: list[Any] = [_text(f"The tool said: {last['output']}", self.n)]
        else:
            content = last.get("content")
            text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])
            city = text.split()[-1].strip("?.!") if "weather" in text else None
            if city:
                out = [_reasoning(f"I should look up {city}.", self.n), _call("get_weather", {"city": city}, self.n)]
            else:
                out = [_text(f"You said: {text}", self.n)]
        return out, prompt

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs):  # type: ignore[no-untyped-def, override]
        out, prompt = self._respond(input)
        usage = Usage(requests=1, input_tokens=prompt, output_tokens=20, total_tokens=prompt + 20)
        return ModelResponse(output=out, usage=usage, response_id=None)

    async def stream_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs):  # type: ignore[no-untyped-def, override]
        """The whole response as one ``response.completed`` event."""
        from openai.types.responses import Response, ResponseCompletedEvent, ResponseUsage
        from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

        out, prompt = self._respond(input)
        usage = ResponseUsage(
            input_tokens=prompt,
            output_tokens=20,
            total_tokens=prompt + 20,
            input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        )
        response = Response(
            id=f"resp_{self.n}", created_at=0, model="scripted", object="response", output=out, tool_choice="auto",
            tools=[], top_p=None, parallel_tool_calls=False, status="completed", usage=usage,
        )  # fmt: skip
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=0)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21 degrees. " + "Details: " + "clear skies " * 40


def _agent(model: Model) -> Agent[Any]:
    return Agent(name="assistant", instructions="Be brief.", model=model, tools=[get_weather], model_settings=ModelSettings())


def _session(tmp_path: Path, session_id: str = "chat-1", **kwargs: Any) -> PiSession:
    kwargs.setdefault("settings", CompactionSettings())
    return PiSession(session_id, cwd=str(tmp_path), session_dir=tmp_path / "sessions", **kwargs)


def _pi_context(oracle: Any, path: Path) -> list[dict[str, Any]]:
    return json.loads(oracle("context", str(path)))["messages"]


def _our_context(path: Path) -> list[dict[str, Any]]:
    return SessionManager.open(path, read_only=True).build_session_context()["messages"]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def valid_pairing(items: list[dict[str, Any]]) -> bool:
    """Each function call is answered by exactly one output before the next
    message, and every output answers an earlier call (the rules the
    Responses API enforces)."""
    open_calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            if open_calls and set(open_calls) <= answered:
                open_calls, answered = [], set()
            open_calls.append(item["call_id"])
        elif kind == "function_call_output":
            assert item["call_id"] in open_calls and item["call_id"] not in answered, item
            answered.add(item["call_id"])
        elif kind == "message":
            assert set(open_calls) <= answered, f"unanswered calls {open_calls} before {item}"
            open_calls, answered = [], set()
    assert set(open_calls) <= answered
    return True


# ---------------------------------------------------------------------------
# conversations


def test_multi_turn_with_tools_round_trips_and_opens_in_pi(tmp_path, oracle):
    model = ScriptedModel()
    agent = _agent(model)
    session = _session(tmp_path)

    async def go() -> list[Any]:
        r1 = await Runner.run(agent, "What is the weather in Paris?", session=session)
        r2 = await Runner.run(agent, "Thanks, noted", session=session)
        r3 = await Runner.run(agent, "And the weather in Oslo?", session=session)
        return [r1.final_output, r2.final_output, r3.final_output]

    outputs = run(go())
    assert outputs[0].startswith("The tool said: Sunny in Paris")
    assert outputs[1] == "You said: Thanks, noted"
    # the model saw the history the session gave back
    assert model.inputs[-2][0] == {"content": "What is the weather in Paris?", "role": "user"}

    items = run(session.get_items())
    kinds = [i.get("type", i.get("role")) for i in items]
    assert kinds == [
        "user", "reasoning", "function_call", "function_call_output", "message",
        "user", "message",
        "user", "reasoning", "function_call", "function_call_output", "message",
    ]  # fmt: skip
    assert items[1]["id"] == "rs_1" and items[1]["summary"][0]["text"] == "I should look up Paris."
    assert items[2]["call_id"] == "call_1" and json.loads(items[2]["arguments"]) == {"city": "Paris"}
    assert items[3]["call_id"] == "call_1" and items[3]["output"].startswith("Sunny in Paris")
    assert valid_pairing(items)

    # pi's form: one assistant message holds the reasoning and the call
    path = session.session_file
    assert path is not None and path.exists()
    ours = _our_context(path)
    roles = [m["role"] for m in ours]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant", "user", "assistant", "toolResult", "assistant"]
    first = ours[1]
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]
    assert first["content"][1]["id"] == "call_1|fc_1" and first["content"][1]["arguments"] == {"city": "Paris"}
    assert ours[2]["toolCallId"] == "call_1|fc_1" and ours[2]["toolName"] == "get_weather"
    assert first["usage"]["totalTokens"] > 0  # the model request's usage, from the SDK's run context

    assert _pi_context(oracle, path) == ours

    # reopening: the same id finds the same file and gives the same items
    again = _session(tmp_path)
    assert run(again.get_items()) == items
    assert again.session_file == path
    assert run(again.get_items(limit=3)) == items[-3:]
    # a limit cuts the items as they stand (as the SDK's sessions do): an
    # output whose call falls outside the slice stays in it
    tail = run(again.get_items(limit=2))
    assert tail == items[-2:] and [i.get("type") for i in tail] == ["function_call_output", "message"]


def test_streamed_runs_store_the_same(tmp_path, oracle):
    model = ScriptedModel()
    session = _session(tmp_path, "streamed")

    async def go() -> Any:
        result = Runner.run_streamed(_agent(model), "What is the weather in Paris?", session=session)
        async for _event in result.stream_events():
            pass
        return result.final_output

    assert run(go()).startswith("The tool said: Sunny in Paris")
    items = run(session.get_items())
    assert [i.get("type", i.get("role")) for i in items] == ["user", "reasoning", "function_call", "function_call_output", "message"]
    path = session.session_file
    assert path is not None
    ours = _our_context(path)
    assert ours[1]["usage"]["totalTokens"] > 0
    assert _pi_context(oracle, path) == ours
    assert run(_session(tmp_path, "streamed").get_items()) == items


def test_items_without_pi_equivalent_are_kept(tmp_path, oracle):
    session = _session(tmp_path, "odd-items")
    odd = [
        {"role": "user", "content": [{"type": "input_text", "text": "look this up"}, {"type": "input_file", "file_id": "file-1"}]},
        {"role": "developer", "content": "Answer in French."},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
        {"role": "assistant", "content": "Voilà."},
    ]
    run(session.add_items(odd))
    items = run(session.get_items())
    assert items == odd
    again = _session(tmp_path, "odd-items")
    assert run(again.get_items()) == odd
    path = session.session_file
    assert path is not None
    customs = [e for e in SessionManager.open(path).get_entries() if e["type"] == "custom"]
    assert [e["customType"] for e in customs] == [ITEM_CUSTOM_TYPE, ITEM_CUSTOM_TYPE]
    # pi sees the user message (a placeholder for the file) and the answer
    context = _pi_context(oracle, path)
    assert [m["role"] for m in context] == ["user", "assistant"]
    assert context[0]["content"][1] == {"type": "text", "text": "[input_file]"}
    assert context == _our_context(path)


def test_chat_completions_items_are_stored_compactly(tmp_path):
    """Items as the SDK's Chat Completions model makes them (logprobs,
    provider_data) come back equal; the text is stored once."""
    text = "A long answer. " * 50
    item = {
        "id": "__fake_id__",
        "content": [{"annotations": [], "text": text, "type": "output_text", "logprobs": []}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
        "provider_data": {"model": "m", "response_id": "chatcmpl-1"},
    }
    session = _session(tmp_path, "compact-store")
    run(session.add_items([{"role": "user", "content": "hi"}, item]))
    items = run(session.get_items())
    assert items[1] == item
    items[1]["content"][0]["text"] = "changed by the caller"
    assert run(session.get_items())[1] == item
    path = session.session_file
    assert path is not None
    assert path.read_text().count("A long answer.") == 50


def test_concurrent_calls_are_serialized(tmp_path):
    session = _session(tmp_path, "concurrent")

    async def go() -> list[Any]:
        await asyncio.gather(*(session.add_items([{"role": "user", "content": f"m{n}"}]) for n in range(20)))
        return await session.get_items()

    items = run(go())
    assert sorted(i["content"] for i in items) == sorted(f"m{n}" for n in range(20))
    assert len(SessionManager.open(session.session_file).get_entries()) == 20


def test_items_come_back_as_added_without_pairing_repairs(tmp_path, oracle):
    """``get_items()`` returns the items as they were added (the SDK owns
    pairing): an output without a call stays where it was, a call without
    an output gets no invented output, an output apart from its call is
    not moved, and every item names the entry holding it."""
    session = _session(tmp_path, "pairing")
    added: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"type": "function_call_output", "call_id": "nobody", "output": "orphan"},
        {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"},
        {"role": "user", "content": "interrupting"},
        {"type": "function_call", "call_id": "c2", "name": "t", "arguments": '{"a": 1}'},
        {"role": "user", "content": "between"},
        {"type": "function_call_output", "call_id": "c2", "output": "late"},
        {"role": "user", "content": "   "},
    ]
    run(session.add_items(added))
    assert run(session.get_items()) == added
    assert run(_session(tmp_path, "pairing").get_items()) == added
    with_ids = run(session.get_items_with_entry_ids())
    assert [item for _, item in with_ids] == added and all(entry_id is not None for entry_id, _ in with_ids)
    assert MISSING_RESULT_TEXT not in json.dumps(run(session.get_items()))
    # the file stays valid for pi (the late output is named after its call)
    path = session.session_file
    assert path is not None
    context = _pi_context(oracle, path)
    assert context == _our_context(path)
    assert [m["role"] for m in context] == ["user", "toolResult", "assistant", "user", "assistant", "user", "toolResult", "user"]
    assert context[6]["toolName"] == "t"
    # popping gives them back newest first
    assert [run(session.pop_item()) for _ in added] == added[::-1]


def test_reasoning_items_with_an_empty_summary_round_trip(tmp_path, oracle):
    """A reasoning item with an empty summary (with ``encrypted_content``)
    that no text or call follows in its batch comes back (it vanished:
    the OpenAI API refuses a request whose reasoning item is missing)."""
    session = _session(tmp_path, "reasoning")
    batch: list[dict[str, Any]] = [
        {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-one"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
        {"id": "rs_2", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-two"},
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "found it", "annotations": []}]},
    ]  # fmt: skip
    alone = [{"id": "rs_3", "type": "reasoning", "summary": []}]
    run(session.add_items([{"role": "user", "content": "search"}]))
    run(session.add_items(batch))
    run(session.add_items(alone))
    expected = [{"role": "user", "content": "search"}, *batch, *alone]
    assert run(session.get_items()) == expected
    assert run(_session(tmp_path, "reasoning").get_items()) == expected
    path = session.session_file
    assert path is not None
    assert _pi_context(oracle, path) == _our_context(path)
    assert run(session.pop_item()) == alone[0]
    assert run(session.get_items()) == expected[:-1]


def _approval_scenario(session: Any, *, lose_first_acknowledgement: bool) -> tuple[list[Any], list[str], Any]:
    """A run that stops for a tool's approval, then (approved) resumed with
    ``Runner.run``; with ``lose_first_acknowledgement`` the resumed run's
    first session write is stored but reported failed (a dropped
    connection), and the same state is resumed again, as the SDK says to.

    Returns:
        (the items while the call waits, the tool's executions, the final output).
    """
    from agents import function_tool as tool
    from agents.testing import ModelStep, assistant_message, function_call
    from agents.testing import ScriptedModel as SdkScriptedModel

    executed: list[str] = []

    @tool(needs_approval=True)
    def write_note(text: str) -> str:
        """Write a note (needs approval)."""
        executed.append(text)
        return f"wrote {text}"

    original = session.add_items
    lost: list[bool] = [lose_first_acknowledgement]

    async def add_items(items: list[Any], **kwargs: Any) -> None:
        await original(items, **kwargs)
        if lost[0] and any(i.get("type") == "function_call_output" for i in items):
            lost[0] = False
            raise ConnectionError("the write was stored but its acknowledgement was lost")

    session.add_items = add_items
    model = SdkScriptedModel(
        [
            ModelStep(output=[function_call("write_note", {"text": "x"}, call_id="call_note")]),
            ModelStep(output=[assistant_message("done")]),
        ]
    )
    agent = Agent(name="assistant", model=model, tools=[write_note])

    async def go() -> tuple[list[Any], Any]:
        first = await Runner.run(agent, "Write x.", session=session)
        assert len(first.interruptions) == 1
        waiting = await session.get_items()
        state = first.to_state()
        state.approve(first.interruptions[0])
        if lose_first_acknowledgement:
            with pytest.raises(ConnectionError):
                await Runner.run(agent, state, session=session)
        resumed = await Runner.run(agent, state, session=session)
        return waiting, resumed.final_output

    waiting, final = run(go())
    return waiting, executed, final


def test_a_call_waiting_for_approval_resumes_as_with_the_sdks_own_session(tmp_path):
    """While a call waits for approval it comes back without an (invented)
    output; resuming after a write whose acknowledgement was lost
    reconciles (it raised the SDK's ``UserError: Cannot reconcile the
    pending Session write``), runs the tool once and ends as with the SDK's
    ``SQLiteSession``."""
    from agents import SQLiteSession

    for lose in (True, False):
        ours = _approval_scenario(_session(tmp_path, f"approval-{lose}"), lose_first_acknowledgement=lose)
        theirs = _approval_scenario(SQLiteSession(f"approval-{lose}"), lose_first_acknowledgement=lose)
        assert ours == theirs
        waiting, executed, final = ours
        assert [i.get("type", i.get("role")) for i in waiting] == ["user", "function_call"]
        assert executed == ["x"] and final == "done"


def _compaction_while_waiting(inner: Any) -> list[Any]:
    """``OpenAIResponsesCompactionSession`` over ``inner``: a run stops for
    a tool's approval, a manual compaction (a compactor that keeps its
    input) runs while the call waits, then the approved run is resumed.
    Returns the items stored at the end."""
    from types import SimpleNamespace

    from agents.memory import OpenAIResponsesCompactionSession
    from agents.testing import ModelStep, assistant_message, function_call
    from agents.testing import ScriptedModel as SdkScriptedModel

    @function_tool(needs_approval=True)
    def write_note(text: str) -> str:
        """Write a note (needs approval)."""
        return f"wrote {text}"

    async def compact(**kwargs: Any) -> Any:
        return SimpleNamespace(output=json.loads(json.dumps(kwargs["input"])), usage=None)

    session = OpenAIResponsesCompactionSession(
        "responses-compaction",
        inner,
        client=SimpleNamespace(responses=SimpleNamespace(compact=compact)),  # type: ignore[arg-type]
        compaction_mode="input",
        should_trigger_compaction=lambda context: False,
    )
    model = SdkScriptedModel(
        [
            ModelStep(output=[function_call("write_note", {"text": "x"}, call_id="call_note")]),
            ModelStep(output=[assistant_message("done")]),
        ]
    )
    agent = Agent(name="assistant", model=model, tools=[write_note])

    async def go() -> list[Any]:
        first = await Runner.run(agent, "Write x.", session=session)
        assert len(first.interruptions) == 1
        await session.run_compaction({"force": True})
        state = first.to_state()
        state.approve(first.interruptions[0])
        assert (await Runner.run(agent, state, session=session)).final_output == "done"
        return await inner.get_items()

    return run(go())


def test_responses_compaction_over_a_waiting_call_keeps_the_real_output(tmp_path):
    """A compaction made while a call waits for approval stored the error
    output pi-session invented for it for good, and the approved run's
    real output was then lost; now the stored items end as with the SDK's
    ``SQLiteSession``: the call, its real output, the answer."""
    from agents import SQLiteSession

    ours = _compaction_while_waiting(_session(tmp_path, "responses-compaction"))
    assert MISSING_RESULT_TEXT not in json.dumps(ours)
    outputs = [i["output"] for i in ours if i.get("type") == "function_call_output"]
    assert outputs == ["wrote x"]
    assert ours == _compaction_while_waiting(SQLiteSession("responses-compaction"))


# ---------------------------------------------------------------------------
# compaction


def test_compaction_from_a_small_context_window(tmp_path, oracle, cli):
    model = ScriptedModel()
    agent = _agent(model)
    events: list[CompactionEvent] = []
    session = _session(
        tmp_path,
        "compacting",
        context_window=700,
        settings={"compaction": {"reserveTokens": 200, "keepRecentTokens": 150}},
        on_compaction=events.append,
    )

    async def go() -> None:
        for city in ("Paris", "Oslo", "Rome", "Lima"):
            await Runner.run(agent, f"What is the weather in {city}?", session=session)

    run(go())
    assert events, "pi's trigger should have fired"
    event = events[0]
    assert event.reason == "threshold" and event.summarizer == "extractive"
    assert event.tokens_after < event.tokens_before
    path = session.session_file
    assert path is not None
    entries = SessionManager.open(path).get_entries()
    compactions = [e for e in entries if e["type"] == "compaction"]
    assert len(compactions) == len(events)
    assert compactions[0]["id"] == event.entry_id and compactions[0]["tokensBefore"] == event.tokens_before

    # the context starts with the summary, as pi places it
    items = run(session.get_items())
    assert items[0]["role"] == "user" and "<summary>" in items[0]["content"] and items[0]["content"].endswith("</summary>")
    assert valid_pairing(items)
    # the next run fed the model the compacted history
    assert any("<summary>" in json.dumps(inp[0]) for inp in model.inputs[1:])

    # `pi-session tokens` shows the same number as the last event's "after"
    # (measured at the same leaf: the compaction entry)
    # and the "before" at the compaction's parent; pi 1.6 counts the same
    last = events[-1]
    before_leaf = next(e["parentId"] for e in entries if e["id"] == last.entry_id)
    for leaf, expected in ((last.entry_id, last.tokens_after), (before_leaf, last.tokens_before)):
        out = cli("tokens", str(path), "--leaf", leaf, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["projected"]["tokens"] == expected
        assert json.loads(oracle("tokens", str(path), "--leaf", leaf))["projected"]["tokens"] == expected

    assert _pi_context(oracle, path) == _our_context(path)
    assert run(_session(tmp_path, "compacting").get_items()) == items


def test_overflow_compacts_and_retries_once(tmp_path):
    session = _session(tmp_path, "overflow", settings={"compaction": {"reserveTokens": 100, "keepRecentTokens": 60}})
    ok = ScriptedModel()

    async def go() -> Any:
        for word in ("alpha", "beta", "gamma", "delta"):
            await Runner.run(_agent(ok), f"note {word} " + "padding " * 30, session=session)
        small = ScriptedModel(overflow_above=6)
        result = await session.run(_agent(small), "Final question")
        return small, result

    small, result = run(go())
    assert result.final_output == "You said: Final question"
    assert len(small.inputs) == 2  # refused once, then accepted after compacting
    assert len(small.inputs[1]) <= 6 and "<summary>" in json.dumps(small.inputs[1][0])
    items = run(session.get_items())
    # the failed attempt's input is not in the context twice
    assert sum(1 for i in items if i.get("content") == "Final question") == 1
    assert items[-1]["content"][0]["text"] == "You said: Final question"
    error = openai.BadRequestError(
        "too long", response=httpx.Response(400, request=httpx.Request("POST", "http://x")), body={"code": "context_length_exceeded"}
    )
    assert is_context_overflow_error(error)
    assert not is_context_overflow_error(ValueError("context length"))


def test_overflow_with_nothing_to_compact_raises(tmp_path):
    session = _session(tmp_path, "overflow-2")
    with pytest.raises(openai.BadRequestError):
        run(session.run(_agent(ScriptedModel(overflow_above=0)), "hi"))


# ---------------------------------------------------------------------------
# pop, clear, branch, fork


def test_pop_and_clear_move_the_leaf_and_keep_history(tmp_path, oracle):
    model = ScriptedModel()
    session = _session(tmp_path, "popping")
    run(Runner.run(_agent(model), "What is the weather in Paris?", session=session))
    before = run(session.get_items())
    assert len(before) == 5

    popped = run(session.pop_item())
    assert popped == before[-1]
    assert run(session.get_items()) == before[:-1]
    popped = run(session.pop_item())  # the tool output
    assert popped == before[-2]
    # the call is now unanswered and comes back so (no output invented)
    assert run(session.get_items()) == before[:3]
    popped = run(session.pop_item())  # the call, out of the assistant message holding the reasoning too
    assert popped == before[2]
    assert run(session.get_items()) == before[:2]

    path = session.session_file
    assert path is not None
    assert run(_session(tmp_path, "popping").get_items()) == before[:2]
    assert _pi_context(oracle, path) == _our_context(path)

    run(session.clear_session())
    assert run(session.get_items()) == []
    assert run(_session(tmp_path, "popping").get_items()) == []
    assert _pi_context(oracle, path) == []
    # nothing was deleted
    entries = SessionManager.open(path).get_entries()
    assert sum(1 for e in entries if e["type"] == "message") >= 4
    assert run(session.pop_item()) is None

    # after a clear the conversation goes on from a new root
    run(Runner.run(_agent(model), "Hello again", session=session))
    assert [i.get("role") for i in run(session.get_items())] == ["user", "assistant"]


def test_pop_of_an_item_kept_by_a_compaction_uses_a_context_edit(tmp_path, oracle):
    session = _session(tmp_path, "pop-kept", settings={"compaction": {"keepRecentTokens": 30}})
    for n in range(4):
        run(session.add_items([{"role": "user", "content": f"question {n} " + "x " * 40}, {"role": "assistant", "content": f"answer {n}"}]))
    event = run(session.compact())
    assert event is not None and event.reason == "manual"
    before = run(session.get_items())
    popped = run(session.pop_item())
    assert popped == {"role": "assistant", "content": "answer 3"}
    after = run(session.get_items())
    assert after == before[:-1] and "<summary>" in after[0]["content"]
    path = session.session_file
    assert path is not None
    last = SessionManager.open(path).get_entries()[-1]
    assert last["type"] == "context_edit" and last["replacement"] is None
    assert _pi_context(oracle, path) == _our_context(path)
    assert run(_session(tmp_path, "pop-kept", settings={"compaction": {"keepRecentTokens": 30}}).get_items()) == after


def test_context_edits_made_in_pi_show_in_the_items(tmp_path):
    session = _session(tmp_path, "edited")
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "secret: 1234"}]}
    answer = [
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]},
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "noted 1234", "annotations": [], "logprobs": []}]},
    ]  # fmt: skip
    run(session.add_items([user, *answer]))
    manager = session.manager
    user_id, answer_id = (e["id"] for e in manager.get_entries())
    manager.append_context_edit(user_id, {"content": "secret: (redacted)"})
    manager.append_context_edit(answer_id, {"content": "noted"})
    items = run(session.get_items())
    assert items[0] == {"type": "message", "role": "user", "content": "secret: (redacted)"}
    assert items[1]["type"] == "message" and items[1]["content"][0]["text"] == "noted"
    assert "1234" not in json.dumps(items)
    # popping the edited answer takes the whole entry out
    assert run(session.pop_item()) == items[1]
    assert run(session.get_items()) == items[:1]


def test_branch_with_summary_and_fork(tmp_path, oracle):
    model = ScriptedModel()
    session = _session(tmp_path, "branching")
    run(Runner.run(_agent(model), "Hello there", session=session))
    run(Runner.run(_agent(model), "What is the weather in Paris?", session=session))
    with_ids = run(session.get_items_with_entry_ids())
    second_user = [eid for eid, item in with_ids if item.get("role") == "user"][1]

    result = run(session.branch(second_user))
    assert result.editor_text == "What is the weather in Paris?"
    assert result.summary_entry_id is not None
    items = run(session.get_items())
    # back before the second question, with a summary of the branch left
    assert [i.get("role") for i in items] == ["user", "assistant", "user"]
    assert "<summary>" in items[2]["content"]

    run(Runner.run(_agent(model), "What is the weather in Oslo?", session=session))
    items = run(session.get_items())
    assert "Oslo" in items[-1]["content"][0]["text"]
    path = session.session_file
    assert path is not None
    assert _pi_context(oracle, path) == _our_context(path)
    assert run(_session(tmp_path, "branching").get_items()) == items

    # a branch without a summary records the move only
    first_user = with_ids[0][0]
    assert first_user is not None
    run(session.branch(first_user, summarize=False))
    assert run(session.get_items()) == []
    assert run(_session(tmp_path, "branching").get_items()) == []

    # fork: a new session file from a point of this one
    run(session.branch(result.summary_entry_id, summarize=False))
    forked = run(session.fork())
    assert forked.session_id != session.session_id
    assert run(forked.get_items()) == run(session.get_items())
    run(Runner.run(_agent(model), "Only in the fork", session=forked))
    assert run(session.get_items()) != run(forked.get_items())
    fork_file = forked.session_file
    assert fork_file is not None and fork_file != path
    assert SessionManager.open(fork_file).get_header()["parentSession"] == str(path)
    assert run(PiSession(forked.session_id, cwd=str(tmp_path), session_dir=tmp_path / "sessions").get_items()) == run(forked.get_items())


def test_sessions_live_in_any_store(tmp_path, store_url):
    """The same conversation on files, SQLite and PostgreSQL: reopened by
    the same id from the store with the same items, and forked inside it."""
    from pi_session.stores import open_store

    model = ScriptedModel()
    agent = _agent(model)
    session = PiSession("chat-store", cwd=str(tmp_path), store=store_url, settings=CompactionSettings())

    async def go() -> None:
        await Runner.run(agent, "What is the weather in Rome?", session=session)
        await Runner.run(agent, "Thanks, noted", session=session)

    run(go())
    items = run(session.get_items())
    assert [i.get("type", i.get("role")) for i in items] == [
        "user", "reasoning", "function_call", "function_call_output", "message", "user", "message",
    ]  # fmt: skip
    store = open_store(store_url)
    try:
        assert store.exists("chat-store")
        again = PiSession("chat-store", cwd=str(tmp_path), store=store_url, settings=CompactionSettings())
        assert run(again.get_items()) == items
        # a session whose id merely starts with ours is another session
        other = PiSession("chat-store-2", cwd=str(tmp_path), store=store_url, settings=CompactionSettings())
        run(Runner.run(agent, "Hello there", session=other))
        assert run(PiSession("chat-store", cwd=str(tmp_path), store=store_url, settings=CompactionSettings()).get_items()) == items
        forked = run(again.fork())
        assert forked.session_id != "chat-store" and store.exists(forked.manager.get_session_id())
        assert run(forked.get_items()) == items
    finally:
        store.close()


def test_session_ids(tmp_path):
    assert pi_session_id_for("chat-1") == "chat-1"
    odd = pi_session_id_for("user@example.com/chat 1")
    assert odd == pi_session_id_for("user@example.com/chat 1") and odd != "user@example.com/chat 1"
    session = PiSession("user@example.com/chat 1", cwd=str(tmp_path), session_dir=tmp_path / "s", settings=CompactionSettings())
    run(session.add_items([{"role": "user", "content": "hi"}]))
    assert session.session_id == "user@example.com/chat 1"
    assert session.manager.get_session_id() == odd
    again = PiSession("user@example.com/chat 1", cwd=str(tmp_path), session_dir=tmp_path / "s", settings=CompactionSettings())
    assert run(again.get_items()) == [{"role": "user", "content": "hi"}]


def test_session_ids_holding_lone_surrogates_map_too():
    """Any string maps to a fixed id, even one that is not valid Unicode (a
    lone surrogate, e.g. from a cut emoji), and valid strings keep their
    uuid5 mapping."""
    import uuid

    from pi_session.integrations.openai_agents.ids import ID_NAMESPACE

    odd = pi_session_id_for("chat \ud83d")
    assert odd == pi_session_id_for("chat \ud83d") and odd != pi_session_id_for("chat \ud83e")
    assert uuid.UUID(odd).version == 5
    assert pi_session_id_for("user@x/1") == str(uuid.uuid5(ID_NAMESPACE, "user@x/1"))


def test_runner_with_run_config_and_session_settings(tmp_path):
    """The SDK's own session options (a history limit) work with PiSession."""
    from agents.memory import SessionSettings

    session = _session(tmp_path, "limited")
    model = ScriptedModel()
    for word in ("one", "two", "three"):
        run(Runner.run(_agent(model), word, session=session))
    run(Runner.run(_agent(model), "four", session=session, run_config=RunConfig(session_settings=SessionSettings(limit=2))))
    assert model.inputs[-1] == [
        {"role": "user", "content": "three"},
        {"id": "msg_3", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "You said: three", "annotations": []}]},
        {"role": "user", "content": "four"},
    ]


# ---------------------------------------------------------------------------
# end to end: the example against a real local model (llama.cpp, SmolLM2)

from llama_server import llama_server  # noqa: E402,F401  (session fixture)


@pytest.mark.slow
def test_example_agent_chat_against_a_local_model(llama_server, tmp_path, oracle):  # noqa: F811
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    sessions = tmp_path / "sessions"
    cmd = [
        sys.executable, str(root / "examples" / "agent_chat.py"),
        "--base-url", llama_server, "--session", "e2e", "--session-dir", str(sessions),
        # a threshold of 98 tokens: the second answer makes pi's trigger fire
        "--context-window", "2048", "--reserve-tokens", "1950", "--keep-recent-tokens", "40", "--max-tokens", "48",
        "Hello, who are you?", "What is 17 + 25?", "Name a colour.",
    ]  # fmt: skip
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("assistant: ")) == 3
    assert any(line.startswith("[compacted: ") for line in lines), out.stdout
    files = list(sessions.glob("*.jsonl"))
    assert len(files) == 1
    manager = SessionManager.open(files[0], read_only=True)
    entries = manager.get_entries()
    assert any(e["type"] == "compaction" for e in entries)
    users = [e["message"]["content"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert users == ["Hello, who are you?", "What is 17 + 25?", "Name a colour."]
    assert _pi_context(oracle, files[0]) == manager.build_session_context()["messages"]
    # the last line's context size is what `pi-session tokens` counts
    tokens = int(lines[-1].removeprefix("context tokens: "))
    assert tokens == manager.estimate_projected_context_tokens()["tokens"]
    # running again continues the same session
    again = subprocess.run(cmd[:-3] + ["Thanks!"], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert list(sessions.glob("*.jsonl")) == files
    reopened = SessionManager.open(files[0], read_only=True).get_entries()
    assert [e["message"]["content"] for e in reopened if e["type"] == "message" and e["message"]["role"] == "user"][-1] == "Thanks!"


# ---------------------------------------------------------------------------
# any well-formed conversation comes back as it was added

from hypothesis import HealthCheck, given  # noqa: E402
from hypothesis import settings as hsettings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# also empty and whitespace-only texts: every item added comes back
_text_st = st.text(max_size=30)


@st.composite
def _conversations(draw: Any) -> list[list[dict[str, Any]]]:
    batches: list[list[dict[str, Any]]] = []
    n = 0
    for _turn in range(draw(st.integers(1, 4))):
        user: dict[str, Any] = (
            {"role": "user", "content": draw(_text_st)}
            if draw(st.booleans())
            else {"type": "message", "role": "user", "content": [{"type": "input_text", "text": draw(_text_st)}]}
        )
        batch = [user]
        for _step in range(draw(st.integers(0, 2))):
            n += 1
            if draw(st.booleans()):
                summary = [{"type": "summary_text", "text": draw(_text_st)}] if draw(st.booleans()) else []
                batch.append({"id": f"rs_{n}", "type": "reasoning", "summary": summary})
            calls = []
            for k in range(draw(st.integers(0, 2))):
                args = draw(st.dictionaries(st.sampled_from(["a", "b", "path"]), st.integers() | _text_st, max_size=2))
                call = {"type": "function_call", "call_id": f"call_{n}_{k}", "name": "tool", "arguments": json.dumps(args)}
                if draw(st.booleans()):
                    call.update(id=f"fc_{n}_{k}", status="completed")
                calls.append(call)
            batch.extend(calls)
            # a call may stay without output (e.g. waiting for approval): no output is invented
            batch.extend(
                {"type": "function_call_output", "call_id": c["call_id"], "output": draw(st.text(max_size=30))}
                for c in calls
                if draw(st.integers(0, 3))
            )
        text = draw(_text_st)
        batch.append(
            {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}
            if draw(st.booleans())
            else {"role": "assistant", "content": text}
        )  # fmt: skip
        batches.append(batch)
    return batches


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=_conversations())
def test_any_conversation_round_trips(tmp_path_factory, batches):
    directory = tmp_path_factory.mktemp("prop")
    session = PiSession("prop", cwd=str(directory), session_dir=directory, settings=CompactionSettings())
    for batch in batches:
        run(session.add_items(batch))
    added = [item for batch in batches for item in batch]
    assert run(session.get_items()) == added
    again = PiSession("prop", cwd=str(directory), session_dir=directory, settings=CompactionSettings())
    assert run(again.get_items()) == added
    # popping every item gives them back newest first and leaves nothing
    popped = [run(again.pop_item()) for _ in added]
    assert popped == added[::-1]
    assert run(again.get_items()) == [] and run(again.pop_item()) is None


def test_a_valid_id_too_long_for_a_file_name_maps_to_a_fixed_id(tmp_path):
    """``<timestamp>_<id>.jsonl`` and its temp file must fit in 255 bytes:
    an id of over 200 characters (which failed at the first write to a
    file store from about 211 on) maps to its uuid5 instead."""
    fits, too_long = "a" * 200, "a" * 240
    assert pi_session_id_for(fits) == fits
    mapped = pi_session_id_for(too_long)
    assert mapped != too_long and len(mapped) == 36 and mapped == pi_session_id_for(too_long)
    for sid in (fits, too_long):
        session = PiSession(sid, cwd=str(tmp_path), session_dir=tmp_path / "s", settings=CompactionSettings())
        run(session.add_items([{"role": "user", "content": "hi"}]))
        assert session.session_file is not None and session.session_file.exists()
        again = PiSession(sid, cwd=str(tmp_path), session_dir=tmp_path / "s", settings=CompactionSettings())
        assert run(again.get_items()) == [{"role": "user", "content": "hi"}]


# ---------------------------------------------------------------------------
# behaving as the SDK's own sessions do


def _users(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"m{k}"} for k in range(n)]


def test_session_settings_are_coerced_and_applied_as_by_sqlite_session(tmp_path):
    """``session_settings`` as the SDK's ``SQLiteSession`` takes it: a dict
    becomes a ``SessionSettings``, its ``limit`` applies to ``get_items()``,
    an explicit ``limit`` wins (also 0 and negative values, as SQLite's
    ``LIMIT``), and the default is ``SessionSettings()``."""
    from agents import SQLiteSession
    from agents.memory import SessionSettings

    async def answers(session: Any) -> list[Any]:
        await session.add_items(_users(5))
        out = [await session.get_items()]
        for limit in (None, 1, 3, 0, -1, 9):
            out.append(await session.get_items(limit=limit))
        return out

    for settings in ({"limit": 2}, SessionSettings(limit=2), {}, None):
        ours = _session(tmp_path, f"settings-{len(str(settings))}-{type(settings).__name__}", session_settings=settings)
        theirs = SQLiteSession("x", session_settings=settings)
        assert type(ours.session_settings) is SessionSettings
        assert ours.session_settings == theirs.session_settings
        assert run(answers(ours)) == run(answers(theirs))
    assert run(answers(_session(tmp_path, "limit-2", session_settings={"limit": 2})))[0] == _users(5)[-2:]


def test_session_settings_with_unknown_keys_are_refused_as_by_the_sdk(tmp_path):
    from agents import SQLiteSession

    for bad in ({"limt": 2}, 5):
        with pytest.raises(TypeError) as theirs:
            SQLiteSession("x", session_settings=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError) as ours:
            _session(tmp_path, "bad", session_settings=bad)
        assert str(ours.value) == str(theirs.value) and "\n" not in str(ours.value)


def test_runner_with_session_settings_given_as_a_dict(tmp_path):
    """A dict ``{"limit": 2}`` (kept as a dict, ``Runner.run`` raised
    ``AttributeError``) limits the history the runner sends."""
    session = _session(tmp_path, "dict-settings", session_settings={"limit": 2})
    model = ScriptedModel()
    for word in ("one", "two", "three"):
        run(Runner.run(_agent(model), word, session=session))
    assert [i.get("content") if i.get("role") == "user" else i["id"] for i in model.inputs[-1]] == ["two", "msg_2", "three"]


def test_items_holding_lone_surrogates_are_given_to_the_sdk_well_formed(tmp_path):
    """A lone surrogate stored in a session (a tool cut an emoji in half;
    in the file as the JSON escape ``\\ud83d``) reaches the SDK as U+FFFD,
    so ``Runner.run`` can encode its request; the file keeps what was written."""
    session = _session(tmp_path, "surrogates")
    run(
        session.add_items(
            [
                {"role": "user", "content": "half \ud83d emoji"},
                {"type": "function_call", "call_id": "c\udc00", "name": "t", "arguments": '{"q": "\ud800"}'},
                {"type": "function_call_output", "call_id": "c\udc00", "output": "cut \udfff"},
            ]
        )
    )
    path = session.session_file
    assert path is not None
    raw = path.read_bytes()
    assert b"\\ud83d" in raw and b"\\ud800" in raw
    reopened = _session(tmp_path, "surrogates")
    for s in (session, reopened):
        items = run(s.get_items())
        json.dumps(items, ensure_ascii=False).encode("utf-8")
        assert items[0]["content"] == "half \ufffd emoji"
        assert items[2]["output"] == "cut \ufffd" and items[1]["call_id"] == items[2]["call_id"] == "c\ufffd"
        json.dumps(run(s.get_items_with_entry_ids()), ensure_ascii=False).encode("utf-8")
    assert path.read_bytes() == raw
    model = ScriptedModel()
    run(Runner.run(_agent(model), "next", session=reopened))
    json.dumps(model.inputs[-1], ensure_ascii=False).encode("utf-8")
    popped = run(reopened.pop_item())
    json.dumps(popped, ensure_ascii=False).encode("utf-8")
    assert path.read_bytes().startswith(raw)  # appended to, never rewritten


def test_a_context_window_too_small_for_the_compaction_settings_warns_once(tmp_path, caplog):
    """Pi's defaults (reserve 16,384, keep 20,000) with a 3,000-token window
    never compact (everything is "recent"): one warning per session object
    says so and names the settings; sane settings, no window or compaction
    disabled: no warning."""
    caplog.set_level(logging.WARNING, logger="pi_session.integrations.openai_agents")
    session = _session(tmp_path, "small", context_window=3000)
    model = ScriptedModel()
    for word in ("one", "two", "three"):
        run(Runner.run(_agent(model), word, session=session))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert "\n" not in message
    for part in ("'small'", "context_window 3000", "keepRecentTokens 20000", "reserveTokens 16384", "never compacted"):
        assert part in message, message
    caplog.clear()
    _session(tmp_path, "sane", context_window=3000, settings={"compaction": {"reserveTokens": 750, "keepRecentTokens": 1500}})
    _session(tmp_path, "no-window")
    _session(tmp_path, "disabled", context_window=3000, settings={"compaction": {"enabled": False}})
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    caplog.clear()
    _session(tmp_path, "small", context_window=3000)  # another object on the same id warns again
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


def _contents(items: list[Any]) -> list[Any]:
    return [i.get("content") for i in items]


def test_two_objects_on_one_id_see_each_others_writes_and_pops(tmp_path, store_url):
    """An open ``PiSession`` answers from the session as stored now: another
    object's appends and pops show at its next read, and two objects never
    pop the same item (in files and in every store)."""

    def make(where: str) -> PiSession:
        if where == "dir":
            return _session(tmp_path, "shared")
        return PiSession("shared", cwd=str(tmp_path), store=store_url, settings=CompactionSettings())

    for where in ("dir", "store"):
        a, b = make(where), make(where)
        run(a.add_items(_users(2)))
        assert _contents(run(b.get_items())) == ["m0", "m1"]
        run(a.add_items([{"role": "user", "content": "m2"}]))
        assert _contents(run(b.get_items())) == ["m0", "m1", "m2"]
        assert [e[1]["content"] for e in run(b.get_items_with_entry_ids())] == ["m0", "m1", "m2"]
        assert run(a.pop_item())["content"] == "m2"
        assert run(b.pop_item())["content"] == "m1"
        assert _contents(run(a.get_items())) == _contents(run(b.get_items())) == ["m0"]
        run(b.add_items([{"role": "user", "content": "m3"}]))
        assert _contents(run(a.get_items())) == ["m0", "m3"]


_POPPER = """
import asyncio, json, sys
from pi_session.integrations.openai_agents import PiSession
from pi_session.session.settings import CompactionSettings
cwd, session_dir = sys.argv[1], sys.argv[2]
session = PiSession("raced", cwd=cwd, session_dir=session_dir, settings=CompactionSettings())
asyncio.run(session.get_items())  # opened and read: the state both processes start from
print("ready", flush=True)
sys.stdin.readline()
item = asyncio.run(session.pop_item())
print(json.dumps(item), flush=True)
"""


def test_two_processes_popping_at_once_pop_different_items(tmp_path):
    import os
    import subprocess
    import sys

    session = _session(tmp_path, "raced")
    run(session.add_items(_users(4)))
    args = [sys.executable, "-c", _POPPER, str(tmp_path), str(tmp_path / "sessions")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    for round_ in (1, 2):  # each round: both processes read m0..m3 as stored, then pop at once
        procs = [subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
        release_together(procs)
        popped = []
        for p in procs:
            out, _ = p.communicate(timeout=60)
            assert p.returncode == 0
            popped.append(json.loads(out)["content"])
        remaining = _contents(run(_session(tmp_path, "raced").get_items()))
        assert sorted(popped) == [f"m{4 - 2 * round_}", f"m{5 - 2 * round_}"], popped
        assert remaining == [f"m{k}" for k in range(4 - 2 * round_)]
