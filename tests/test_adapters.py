"""Tests for pi_session.adapters: provider-valid requests with reported repairs.

Goldens (tests/goldens/adapters, made by regen.py from the pi oracle): the two
real pi fixtures' entries (strings shortened), oracle context skeletons at a
set of leaves, and hand-built sessions where pi's compaction cut keeps a tool
result without its call or a call without its result.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_session.adapters import (
    MISSING_RESULT_TEXT,
    AdapterResult,
    Repair,
    orphan_tool_results,
    to_anthropic_messages,
    to_openai_chat,
    to_openai_responses,
    unanswered_tool_calls,
    validate_anthropic_messages,
    validate_openai_chat,
    validate_openai_responses,
)
from pi_session.session.context import build_session_context

GOLDENS = Path(__file__).parent / "goldens" / "adapters"
# Skeleton helpers shared with the golden generator, loaded under a unique name.
_spec = importlib.util.spec_from_file_location("adapters_goldens_regen", GOLDENS / "regen.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)

ADAPTERS = [
    (to_openai_chat, validate_openai_chat),
    (to_openai_responses, validate_openai_responses),
    (to_anthropic_messages, validate_anthropic_messages),
]
PNG = "iVBORw0KGgo="


# --- message builders --------------------------------------------------------


def user(text: Any = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def asst(*blocks: Any, stop: str | None = None) -> dict[str, Any]:
    content = [({"type": "text", "text": b} if isinstance(b, str) else b) for b in blocks]
    has_call = any(b.get("type") == "toolCall" for b in content)
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "usage": {},
        "stopReason": stop or ("toolUse" if has_call else "stop"),
        "timestamp": 2,
    }


def call(cid: Any, name: str = "read", args: Any = None) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": name, "arguments": {"path": "a"} if args is None else args}


def result(cid: Any, text: str = "ok", *, images: int = 0, error: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "image", "data": PNG, "mimeType": "image/png"}] * images
    return {"role": "toolResult", "toolCallId": cid, "toolName": "read", "content": content, "isError": error, "timestamp": 3}


def kinds(res: AdapterResult) -> list[str]:
    return [r.kind for r in res.repairs]


def all_valid(messages: list[dict[str, Any]], system: str | None = None) -> list[AdapterResult]:
    out = []
    for adapt, validate in ADAPTERS:
        res = adapt(messages, system)
        assert validate(res) == [], (res.provider, validate(res))
        assert validate(res.payload()) == []
        out.append(res)
    return out


def chat_roles(res: AdapterResult) -> list[str]:
    return [m["role"] + (":" + m["tool_call_id"] if m["role"] == "tool" else "") for m in res.messages]


# --- pairing repairs -----------------------------------------------------------


def test_clean_context_needs_no_repairs():
    msgs = [user(), asst("looking", call("t1"), call("t2")), result("t1"), result("t2"), asst("done")]
    for res in all_valid(msgs, "be brief"):
        assert res.repairs == []
    chat, resp, anth = all_valid(msgs, "be brief")
    assert chat_roles(chat) == ["system", "user", "assistant", "tool:t1", "tool:t2", "assistant"]
    assert chat.messages[2]["tool_calls"][0] == {
        "id": "t1",
        "type": "function",
        "function": {"name": "read", "arguments": '{"path":"a"}'},
    }
    assert [i.get("type", i.get("role")) for i in resp.input] == [
        "user", "assistant", "function_call", "function_call", "function_call_output", "function_call_output", "assistant",
    ]  # fmt: skip
    assert resp.payload()["instructions"] == "be brief"
    assert [m["role"] for m in anth.messages] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in anth.messages[2]["content"]] == ["tool_result", "tool_result"]
    assert anth.payload()["system"] == "be brief"


def test_orphan_result_is_dropped_and_reported():
    msgs = [user(), result("ghost"), asst("fine")]
    for res in all_valid(msgs):
        assert kinds(res) == ["orphan_result_dropped"]
        r = res.repairs[0]
        assert (r.tool_call_id, r.message_index) == ("ghost", 1)
        assert "ghost" in r.description and "\n" not in r.description
    assert orphan_tool_results(msgs) == [{"index": 1, "toolCallId": "ghost"}]


def test_result_before_its_call_is_dropped_and_call_answered_with_error():
    msgs = [user(), result("t1"), asst(call("t1")), user("next")]
    for res in all_valid(msgs):
        assert kinds(res) == ["orphan_result_dropped", "missing_result_inserted"]
        assert "before the call" in res.repairs[0].description
    chat = to_openai_chat(msgs)
    assert chat_roles(chat) == ["user", "assistant", "tool:t1", "user"]
    assert chat.messages[2]["content"] == MISSING_RESULT_TEXT


def test_missing_result_inserted_before_next_user_turn():
    msgs = [user(), asst(call("t1"), call("t2")), result("t1"), user("stop that")]
    chat, resp, anth = all_valid(msgs)
    for res in (chat, resp, anth):
        assert [(r.kind, r.tool_call_id, r.message_index) for r in res.repairs] == [("missing_result_inserted", "t2", 1)]
    assert chat_roles(chat) == ["user", "assistant", "tool:t1", "tool:t2", "user"]
    assert chat.messages[3]["content"] == MISSING_RESULT_TEXT
    outputs = [i for i in resp.input if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["t1", "t2"] and outputs[1]["output"] == MISSING_RESULT_TEXT
    # Anthropic: the synthetic error result and the user text share one user message, results first.
    last = anth.messages[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[1]["is_error"] is True and "is_error" not in last[0]
    assert unanswered_tool_calls(msgs) == [{"index": 1, "toolCallId": "t2", "name": "read"}]


def test_missing_result_at_end_of_context():
    msgs = [user(), asst("let me check", call("t1"))]
    for res in all_valid(msgs):
        assert kinds(res) == ["missing_result_inserted"]


def test_duplicate_result_keeps_first():
    msgs = [user(), asst(call("t1")), result("t1", "first"), result("t1", "second"), asst("done")]
    chat, resp, anth = all_valid(msgs)
    for res in (chat, resp, anth):
        assert [(r.kind, r.message_index) for r in res.repairs] == [("duplicate_result_dropped", 3)]
    assert [m["content"] for m in chat.messages if m["role"] == "tool"] == ["first"]
    assert [i["output"] for i in resp.input if i.get("type") == "function_call_output"] == ["first"]
    assert anth.messages[2]["content"][0]["content"] == [{"type": "text", "text": "first"}]


def test_result_after_user_message_is_moved_back_to_its_call():
    msgs = [user(), asst(call("t1")), user("steer"), result("t1", "late"), asst("done")]
    chat, resp, anth = all_valid(msgs)
    for res in (chat, resp, anth):
        assert [(r.kind, r.tool_call_id, r.message_index) for r in res.repairs] == [("result_moved", "t1", 3)]
    assert chat_roles(chat) == ["user", "assistant", "tool:t1", "user", "assistant"]
    assert chat.messages[2]["content"] == "late"
    assert unanswered_tool_calls(msgs) == [{"index": 1, "toolCallId": "t1", "name": "read"}]
    assert orphan_tool_results(msgs) == []  # out of position, not an orphan


def test_result_after_later_assistant_is_moved():
    msgs = [user(), asst(call("t1")), asst("meanwhile"), result("t1")]
    for res in all_valid(msgs):
        assert kinds(res) == ["result_moved"]


def test_aborted_assistant_keeps_text_and_gets_error_results():
    msgs = [user(), asst("partial answer", call("t1", args={}), stop="aborted"), user("go on")]
    chat, _, anth = all_valid(msgs)
    assert kinds(chat) == ["missing_result_inserted"]
    assert chat.messages[1]["content"] == "partial answer"
    assert anth.messages[1]["content"][0] == {"type": "text", "text": "partial answer"}


def test_empty_assistant_dropped():
    msgs = [user(), asst(stop="aborted"), asst({"type": "thinking", "thinking": "hmm"}, "  ", stop="error"), user("again")]
    for res in all_valid(msgs):
        assert [(r.kind, r.message_index) for r in res.repairs] == [
            ("empty_assistant_dropped", 1),
            ("empty_assistant_dropped", 2),
        ]
        assert "aborted" in res.repairs[0].description
    anth = to_anthropic_messages(msgs)
    assert [m["role"] for m in anth.messages] == ["user"]
    assert [b["text"] for b in anth.messages[0]["content"]] == ["hi", "again"]


def test_duplicate_and_missing_call_ids_get_fresh_ids():
    msgs = [
        user(),
        asst(call("x")), result("x", "one"),
        asst(call("x")), result("x", "two"),
        asst(call(None)), asst("end"),
    ]  # fmt: skip
    chat, resp, anth = all_valid(msgs)
    for res in (chat, resp, anth):
        assert kinds(res) == ["duplicate_call_id_renamed", "missing_call_id_assigned", "missing_result_inserted"]
    tools = [m for m in chat.messages if m["role"] == "tool"]
    assert [t["content"] for t in tools] == ["one", "two", MISSING_RESULT_TEXT]
    assert len({t["tool_call_id"] for t in tools}) == 3


def test_provider_safe_ids():
    long_id = "call_abc|fc_" + "Z+/=" * 40
    msgs = [user(), asst(call(long_id), call("toolu_" + "a" * 80)), result(long_id), result("toolu_" + "a" * 80)]
    chat, resp, anth = all_valid(msgs)
    assert [c["id"] for c in chat.messages[1]["tool_calls"]] == ["call_abc", "toolu_" + "a" * 34]
    assert [i["call_id"] for i in resp.input if i.get("type") == "function_call"] == ["call_abc", "toolu_" + "a" * 58]
    ids = [b["id"] for b in anth.messages[1]["content"]]
    assert ids == ["call_abc", "toolu_" + "a" * 58]
    assert [b["tool_use_id"] for b in anth.messages[2]["content"]] == ids
    for res in (chat, resp, anth):
        assert res.repairs == []


def test_ids_colliding_after_normalization_stay_unique():
    a, b = "call_1|fc_a", "call_1|fc_b"
    msgs = [user(), asst(call(a), call(b)), result(a, "A"), result(b, "B")]
    chat, _, anth = all_valid(msgs)
    ids = [c["id"] for c in chat.messages[1]["tool_calls"]]
    assert ids == ["call_1", "call_1_2"]
    assert [(m["tool_call_id"], m["content"]) for m in chat.messages[2:]] == [("call_1", "A"), ("call_1_2", "B")]


def test_non_object_arguments_coerced():
    msgs = [user(), asst(call("t1", args='{"path": "x"}'), call("t2", args="not json"), call("t3", args=[1])),
            result("t1"), result("t2"), result("t3")]  # fmt: skip
    chat, _, anth = all_valid(msgs)
    assert kinds(chat) == ["arguments_coerced"] * 3
    assert [c["function"]["arguments"] for c in chat.messages[1]["tool_calls"]] == [
        '{"path":"x"}', '{"value":"not json"}', '{"value":[1]}',
    ]  # fmt: skip
    assert anth.messages[1]["content"][0]["input"] == {"path": "x"}


# --- roles, merging, content ------------------------------------------------------


def test_anthropic_placeholder_user_when_context_starts_with_assistant():
    msgs = [asst("hello"), user("hi")]
    anth = to_anthropic_messages(msgs)
    assert validate_anthropic_messages(anth) == []
    assert anth.repairs[0].kind == "placeholder_user_inserted" and anth.repairs[0].message_index is None
    assert [m["role"] for m in anth.messages] == ["user", "assistant", "user"]
    # OpenAI accepts an assistant first: nothing to repair there.
    assert to_openai_chat(msgs).repairs == [] and to_openai_responses(msgs).repairs == []


def test_anthropic_merges_user_like_messages_after_tool_results():
    msgs = [
        {"role": "compactionSummary", "summary": "earlier work", "tokensBefore": 5, "timestamp": 1},
        asst(call("t1")),
        result("t1"),
        {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1},
        {"role": "custom", "customType": "note", "content": "remember", "display": True, "timestamp": 1},
        {"role": "bashExecution", "command": "x", "output": "", "exitCode": 0, "cancelled": False, "truncated": False,
         "excludeFromContext": True, "timestamp": 1},
        user("next"),
    ]  # fmt: skip
    anth = all_valid(msgs)[2]
    assert [m["role"] for m in anth.messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in anth.messages[2]["content"]] == ["tool_result", "text", "text", "text"]
    assert "<summary>" in anth.messages[0]["content"][0]["text"]


def test_repair_indices_point_into_the_given_list():
    excluded = {"role": "bashExecution", "command": "x", "output": "", "exitCode": 0, "cancelled": False,
                "truncated": False, "excludeFromContext": True, "timestamp": 1}  # fmt: skip
    msgs = [excluded, user(), excluded, result("nope")]
    for res in all_valid(msgs):
        assert [(r.kind, r.message_index) for r in res.repairs] == [("orphan_result_dropped", 3)]


def test_thinking_dropped_by_default_or_converted_to_text():
    msgs = [user(), asst({"type": "thinking", "thinking": "secret plan", "thinkingSignature": "sig"}, "answer")]
    for adapt, validate in ADAPTERS:
        dropped = adapt(msgs)
        assert "secret plan" not in json.dumps(dropped.payload())
        as_text = adapt(msgs, thinking="text")
        assert validate(as_text) == [] and "secret plan" in json.dumps(as_text.payload())
        with pytest.raises(ValueError):
            adapt(msgs, thinking="keep")


def test_anthropic_final_assistant_has_no_trailing_whitespace():
    anth = all_valid([user(), asst("answer  \n")])[2]
    assert anth.messages[-1]["content"][-1]["text"] == "answer"


def test_user_and_tool_images():
    img = {"type": "image", "data": PNG, "mimeType": "image/png"}
    msgs = [user([{"type": "text", "text": "look"}, img]), asst(call("t1")), result("t1", "", images=1), asst("seen")]
    chat, resp, anth = all_valid(msgs)
    assert chat.messages[0]["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    # Chat tool messages carry text only: the image follows in a user message.
    assert chat_roles(chat) == ["user", "assistant", "tool:t1", "user", "assistant"]
    assert chat.messages[3]["content"][1]["type"] == "image_url"
    assert resp.input[0]["content"][1] == {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
    out = [i for i in resp.input if i.get("type") == "function_call_output"][0]
    assert out["output"][0]["type"] == "input_image"
    assert anth.messages[0]["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert anth.messages[2]["content"][0]["content"][0]["type"] == "image"


def test_unsupported_image_replaced_by_text():
    msgs = [user([{"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"}])]
    for res in all_valid(msgs):
        assert kinds(res) == ["image_replaced"]
        assert "svg" in json.dumps(res.payload())


def test_empty_user_dropped_and_empty_result_filled():
    msgs = [user(""), user("real"), asst(call("t1")), result("t1", "")]
    chat, _, anth = all_valid(msgs)
    assert kinds(chat) == ["empty_user_dropped"]
    assert chat.messages[-1]["content"] == "(no output)"


def test_inputs_are_not_mutated_and_empty_context():
    msgs = [user(), asst("a  ", call("t|1", args="{}")), user("b"), result("t|1")]
    before = copy.deepcopy(msgs)
    all_valid(msgs)
    assert msgs == before
    for adapt, validate in ADAPTERS:
        res = adapt([])
        assert res.repairs == [] and validate(res) == []
        assert validate(res, allow_empty=False) != []


def test_repair_to_dict():
    r = Repair("result_moved", "t1", 3, "moved")
    assert r.to_dict() == {"kind": "result_moved", "toolCallId": "t1", "messageIndex": 3, "description": "moved"}


# --- validators catch violations ----------------------------------------------------


@pytest.mark.parametrize(
    "messages, expected",
    [
        ([{"role": "tool", "tool_call_id": "x", "content": "r"}], "does not directly follow"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}], "without a tool message"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "a", "content": "r"}], "without a tool message"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "tool", "tool_call_id": "a", "content": "r"}], "second tool message"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "[]"}}]},
          {"role": "tool", "tool_call_id": "a", "content": "r"}], "JSON object"),
        ([{"role": "assistant", "content": None}], "neither content nor tool_calls"),
        ([{"role": "user", "content": []}], "non-empty"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/tiff;base64,AA"}}]}], "unsupported image"),
        ([{"role": "assistant", "content": "x", "tool_calls": [{"id": "a" * 41, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "a" * 41, "content": "r"}], "longer than 40"),
    ],
)  # fmt: skip
def test_validate_openai_chat_flags(messages, expected):
    problems = validate_openai_chat(messages)
    assert any(expected in p for p in problems), problems


FC = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
FCO = {"type": "function_call_output", "call_id": "c1", "output": "r"}


@pytest.mark.parametrize(
    "items, expected",
    [
        ([FCO], "no earlier function_call"),
        ([FC], "without an output"),
        ([FC, FCO, FCO], "second output"),
        ([FC, {"role": "user", "content": "x"}, FCO], "without an output"),
        ([FC, FC, FCO], "duplicate call_id"),
        ([{**FC, "call_id": "a|b"}], "call_id must match"),
        ([{"role": "user", "content": [{"type": "output_text", "text": "x"}]}], "not allowed"),
        ([{"role": "user", "content": ""}], "content empty"),
        ([{"type": "reasoning"}], "unknown item type"),
        ([FC, {**FCO, "call_id": ["c1"]}], "call_id must be a string"),
        ([FC, {**FCO, "call_id": {"id": "c1"}}], "call_id must be a string"),
    ],
)
def test_validate_openai_responses_flags(items, expected):
    problems = validate_openai_responses({"input": items})
    assert any(expected in p for p in problems), problems


TU = {"type": "tool_use", "id": "u1", "name": "f", "input": {}}
TR = {"type": "tool_result", "tool_use_id": "u1", "content": "r"}


@pytest.mark.parametrize(
    "messages, expected",
    [
        ([{"role": "assistant", "content": "x"}], "first message"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "in a row"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [TU]}], "never answered"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [TU]}, {"role": "user", "content": "b"}], "without a tool_result"),
        ([{"role": "user", "content": [TR]}], "answers no tool_use"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [TU]},
          {"role": "user", "content": [{"type": "text", "text": "b"}, TR]}], "must come first"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [TU]}, {"role": "user", "content": [TR, TR]}], "second tool_result"),
        ([{"role": "user", "content": "  "}], "blank"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}], "signature"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b "}], "whitespace"),
        ([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "A"}}]}], "media_type"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [{**TU, "id": "a|b"}]},
          {"role": "user", "content": [{**TR, "tool_use_id": "a|b"}]}], "tool_use id must match"),
    ],
)  # fmt: skip
def test_validate_anthropic_flags(messages, expected):
    problems = validate_anthropic_messages({"messages": messages})
    assert any(expected in p for p in problems), problems


def naive_chat(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a converter without repairs would send (for the negative control)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "toolResult":
            out.append({"role": "tool", "tool_call_id": m["toolCallId"], "content": "r"})
        elif m["role"] == "assistant":
            calls = [b for b in m["content"] if b["type"] == "toolCall"]
            msg: dict[str, Any] = {"role": "assistant", "content": "x"}
            if calls:
                msg["tool_calls"] = [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": "{}"}} for c in calls
                ]
            out.append(msg)
        else:
            out.append({"role": "user", "content": "u"})
    return out


# --- property tests -------------------------------------------------------------------

ID_POOL = ["t0", "t1", "t2", "t3", "call_9|fc_" + "x" * 70, "toolu_" + "b" * 70, "a b"]
text_st = st.sampled_from(["", "  ", "text", "multi\nline", "ünï 😀", "x" * 30])
image_st = st.builds(
    lambda mime, data: {"type": "image", "mimeType": mime, "data": data},
    st.sampled_from(["image/png", "image/jpeg", "image/svg+xml"]),
    st.sampled_from([PNG, ""]),
)
block_st = st.one_of(st.builds(lambda t: {"type": "text", "text": t}, text_st), image_st)
content_st = st.one_of(text_st, st.lists(block_st, max_size=3))


@st.composite
def message_st(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "assistant", "assistant", "toolResult", "toolResult", "bash", "custom", "summary"]))
    if kind == "user":
        return {"role": "user", "content": draw(content_st), "timestamp": 1}
    if kind == "assistant":
        blocks: list[Any] = []
        for _ in range(draw(st.integers(0, 4))):
            b = draw(st.sampled_from(["text", "thinking", "call", "call"]))
            if b == "text":
                blocks.append({"type": "text", "text": draw(text_st)})
            elif b == "thinking":
                blocks.append({"type": "thinking", "thinking": draw(text_st)})
            else:
                args = draw(st.sampled_from([{}, {"path": "a"}, '{"k": 1}', "oops", None, {"f": 1.5}]))
                cid = draw(st.one_of(st.sampled_from(ID_POOL), st.sampled_from([None, ""])))
                blocks.append({"type": "toolCall", "id": cid, "name": draw(st.sampled_from(["read", "bash", ""])), "arguments": args})
        return asst(*blocks, stop=draw(st.sampled_from([None, "aborted", "error", "length"])))
    if kind == "toolResult":
        content = draw(st.lists(block_st, max_size=2))
        return {"role": "toolResult", "toolCallId": draw(st.sampled_from(ID_POOL + ["zz"])), "toolName": "read",
                "content": content, "isError": draw(st.booleans()), "timestamp": 3}  # fmt: skip
    if kind == "bash":
        return {"role": "bashExecution", "command": "ls", "output": draw(text_st), "exitCode": draw(st.sampled_from([0, 1, None])),
                "cancelled": draw(st.booleans()), "truncated": False, "excludeFromContext": draw(st.booleans()), "timestamp": 1}  # fmt: skip
    if kind == "custom":
        return {"role": "custom", "customType": "x", "content": draw(content_st), "display": True, "timestamp": 1}
    role = draw(st.sampled_from(["branchSummary", "compactionSummary"]))
    return {"role": role, "summary": draw(text_st), "fromId": "root", "tokensBefore": 1, "timestamp": 1}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message_st(), max_size=14), st.sampled_from([None, "", "system prompt"]), st.sampled_from(["drop", "text"]))
def test_property_every_adapter_output_is_valid(messages, system, thinking):
    before = copy.deepcopy(messages)
    for adapt, validate in ADAPTERS:
        res = adapt(messages, system, thinking=thinking)
        assert validate(res) == [], validate(res)
        for r in res.repairs:
            assert r.message_index is None or 0 <= r.message_index < len(messages)
            assert r.description and "\n" not in r.description
    assert messages == before


@st.composite
def unique_call_context(draw: Any) -> list[dict[str, Any]]:
    """Contexts where every call id is unique (results may still be orphaned,
    early, late, duplicated or missing)."""
    msgs: list[dict[str, Any]] = [user()]
    n = 0
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["user", "assistant", "result", "result"]))
        if kind == "user":
            msgs.append(user(draw(st.sampled_from(["next", "steer"]))))
        elif kind == "assistant":
            k = draw(st.integers(0, 3))
            msgs.append(asst("t", *[call(f"c{n + i}") for i in range(k)]))
            n += k
        else:
            msgs.append(result(f"c{draw(st.integers(0, n + 2))}"))
    return msgs


@settings(max_examples=300, deadline=None)
@given(unique_call_context())
def test_property_repairs_match_pairing_helpers(messages):
    chat = to_openai_chat(messages)
    assert validate_openai_chat(chat) == []
    by_kind: dict[str, list[Repair]] = {}
    for r in chat.repairs:
        by_kind.setdefault(r.kind, []).append(r)
    unanswered = {u["toolCallId"] for u in unanswered_tool_calls(messages)}
    inserted = {r.tool_call_id for r in by_kind.get("missing_result_inserted", [])}
    moved = {r.tool_call_id for r in by_kind.get("result_moved", [])}
    assert unanswered == inserted | moved and not inserted & moved
    orphans = [o["index"] for o in orphan_tool_results(messages)]
    assert orphans == [r.message_index for r in by_kind.get("orphan_result_dropped", [])]
    # Every call appears exactly once and is answered exactly once.
    calls = [c["id"] for m in chat.messages for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in chat.messages if m["role"] == "tool"]
    assert sorted(calls) == sorted(results) and len(set(calls)) == len(calls)
    # The naive conversion is invalid exactly when something needed repair.
    naive_problems = validate_openai_chat(naive_chat(messages))
    assert bool(naive_problems) == bool(chat.repairs), (naive_problems, chat.repairs)


# --- real pi sessions (oracle goldens) ------------------------------------------------


def load_entries(name: str) -> dict[str, Any]:
    return json.loads((GOLDENS / f"{name}.entries.json").read_text())


CONTEXTS = json.loads((GOLDENS / "contexts.json").read_text())
FIXTURES = sorted(CONTEXTS)


def skeleton_lines(messages: list[dict[str, Any]]) -> list[str]:
    return [regen.skeleton_line(x) for x in regen.skeleton(messages)]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_contexts_match_oracle_and_adapt_cleanly(name):
    data = load_entries(name)
    entries = data["entries"]
    by_id = {e["id"]: e for e in entries}
    for leaf, golden in CONTEXTS[name].items():
        messages = build_session_context(entries, leaf, by_id)["messages"]
        lines = skeleton_lines(messages)
        if "lines" in golden:
            assert lines == golden["lines"]
        assert len(lines) == golden["count"]
        assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == golden["sha256"], leaf
        # Calls the oracle's context leaves without a result in position, from the skeleton alone.
        expected_missing = []
        for i, line in enumerate(lines):
            if line.startswith("assistant:"):
                ids = [x for x in line.split(":", 2)[2].split(",") if x]
                j = i + 1
                answered = set()
                while j < len(lines) and lines[j].startswith("toolResult:"):
                    answered.add(lines[j].split(":", 1)[1])
                    j += 1
                expected_missing += [x for x in ids if x not in answered]
        for res in all_valid(messages, "sys"):
            got = [r.tool_call_id for r in res.repairs if r.kind == "missing_result_inserted"]
            assert got == expected_missing
            assert {r.kind for r in res.repairs} <= {"missing_result_inserted", "empty_assistant_dropped"}


def test_fixture_default_contexts_have_unanswered_calls():
    """The real sessions do contain calls that never got results (aborted and
    errored turns, and one toolUse turn interrupted by the user)."""
    counts = {}
    for name in FIXTURES:
        data = load_entries(name)
        messages = build_session_context(data["entries"])["messages"]
        counts[name] = len(unanswered_tool_calls(messages))
        assert orphan_tool_results(messages) == []
        assert validate_openai_chat(naive_chat(messages)) != []
    assert counts == {"before-compaction": 2, "large-session": 18}


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_contexts_at_many_leaves(name):
    entries = load_entries(name)["entries"]
    by_id = {e["id"]: e for e in entries}
    for e in entries[::40]:
        messages = build_session_context(entries, e["id"], by_id)["messages"]
        all_valid(messages)


def test_generated_sessions_adapt_cleanly():
    sys.path.insert(0, str(Path(__file__).parent))
    sessiongen = pytest.importorskip("sessiongen")
    for seed in range(12):
        _, entries = sessiongen.generate_session(seed)
        by_id = {e["id"]: e for e in entries}
        for e in entries[:: max(1, len(entries) // 6)] + entries[-1:]:
            all_valid(build_session_context(entries, e["id"], by_id)["messages"], "sys")


# --- findCutPoint investigation -----------------------------------------------------

SCENARIOS = json.loads((GOLDENS / "cut_scenarios.json").read_text())
EXPECTED = {
    "user_between_call_and_result": {"orphan_result_dropped": ["t1"]},
    "bash_between_call_and_result": {"orphan_result_dropped": ["t1"]},
    "aborted_call_kept": {"missing_result_inserted": ["t1"]},
    "chained_compactions": {"orphan_result_dropped": ["t1"]},
    "hook_compaction_keeps_result": {"orphan_result_dropped": ["t2"]},
    "branch_from_assistant_with_calls": {"missing_result_inserted": ["t1"]},
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_cut_scenarios_are_repaired(scenario):
    messages = build_session_context(scenario["entries"])["messages"]
    assert [regen.skeleton_line(x) for x in regen.skeleton(messages)] == [
        regen.skeleton_line(x) for x in scenario["context"]
    ]
    expected = EXPECTED[scenario["name"]]
    for res in all_valid(messages):
        got: dict[str, list[str]] = {}
        for r in res.repairs:
            got.setdefault(r.kind, []).append(r.tool_call_id)
        assert got == expected
    orphan_ids = [o["toolCallId"] for o in orphan_tool_results(messages)]
    assert orphan_ids == expected.get("orphan_result_dropped", [])


def test_cut_scenarios_cut_where_pi_cuts():
    cuts = {s["name"]: s["cuts"] for s in SCENARIOS}
    assert cuts["user_between_call_and_result"] == [{"firstKeptEntryId": "u2", "isSplitTurn": False}]
    assert cuts["bash_between_call_and_result"] == [{"firstKeptEntryId": "b1", "isSplitTurn": True}]
    assert cuts["aborted_call_kept"] == [{"firstKeptEntryId": "a1", "isSplitTurn": True}]
    assert [c["firstKeptEntryId"] for c in cuts["chained_compactions"]] == ["u2", "u2"]


from shared_paths import ORACLE, needs_oracle  # noqa: E402


@pytest.mark.oracle
@needs_oracle
@pytest.mark.parametrize("scenario", SCENARIOS[:3], ids=[s["name"] for s in SCENARIOS[:3]])
def test_cut_scenarios_live_oracle(scenario, tmp_path):
    path = tmp_path / "entries.json"
    path.write_text(json.dumps(scenario["entries"]))
    proc = subprocess.run([ORACLE, "build-context-entries", str(path)], capture_output=True, check=True)
    assert regen.skeleton(json.loads(proc.stdout)["messages"]) == scenario["context"]


# --- the SDKs take the payloads as keyword arguments ---------------------------------


def _capture_transport(store: list[dict[str, Any]], response: dict[str, Any], httpx: Any):

    def handler(request):
        store.append(json.loads(request.content))
        return httpx.Response(200, json=response)

    return httpx.MockTransport(handler)


SDK_CONTEXT = [user(), asst("checking", call("t1")), user("steer"), result("t1", "late"), asst("done"), user("thanks")]


def test_openai_sdk_sends_chat_and_responses_payloads():
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")
    sent: list[dict[str, Any]] = []
    chat_reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                  "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]}  # fmt: skip
    client = openai.OpenAI(api_key="test", base_url="http://test/v1",
                           http_client=httpx.Client(transport=_capture_transport(sent, chat_reply, httpx)))  # fmt: skip
    chat = to_openai_chat(SDK_CONTEXT, "sys")
    client.chat.completions.create(model="m", **chat.payload())
    assert sent[-1]["messages"] == chat.messages and sent[-1]["messages"][0] == {"role": "system", "content": "sys"}
    resp = to_openai_responses(SDK_CONTEXT, "sys")
    resp_reply = {"id": "r", "object": "response", "created_at": 0, "model": "m", "output": [], "status": "completed",
                  "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip
    client = openai.OpenAI(api_key="test", base_url="http://test/v1",
                           http_client=httpx.Client(transport=_capture_transport(sent, resp_reply, httpx)))  # fmt: skip
    client.responses.create(model="m", **resp.payload())
    assert sent[-1]["input"] == resp.input and sent[-1]["instructions"] == "sys"


def test_anthropic_sdk_sends_messages_payload():
    anthropic = pytest.importorskip("anthropic")
    try:  # anthropic >= 2 ships on httpx2
        import httpx2 as httpx
    except ImportError:
        httpx = pytest.importorskip("httpx")
    sent: list[dict[str, Any]] = []
    reply = {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "ok"}],
             "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
    client = anthropic.Anthropic(api_key="test", base_url="http://test",
                                 http_client=httpx.Client(transport=_capture_transport(sent, reply, httpx)))  # fmt: skip
    res = to_anthropic_messages(SDK_CONTEXT, "sys")
    client.messages.create(model="m", max_tokens=10, **res.payload())
    assert sent[-1]["messages"] == res.messages and sent[-1]["system"] == "sys"
    assert [m["role"] for m in res.messages] == ["user", "assistant", "user", "assistant", "user"]


def test_pi16_system_messages_become_the_system_prompt():
    """pi 1.6 system messages are replayed into one system prompt (what pi
    sends to providers that take no system message mid-conversation); an
    explicit system_prompt wins; no provider sees role system in place."""
    from pi_session.adapters import to_anthropic_messages, to_openai_chat, to_openai_responses

    messages = [
        {"role": "system", "content": "", "sections": {"preamble": "Be brief.", "cwd": "<cwd>\n/x\n</cwd>"}, "timestamp": 1},
        {"role": "user", "content": "hi", "timestamp": 2},
        {"role": "system", "content": "Also: answer in French.", "sections": {"cwd": None}, "timestamp": 3},
        {"role": "user", "content": "encore", "timestamp": 4},
    ]
    expected = "Also: answer in French.\n\nBe brief."
    chat = to_openai_chat(messages).messages
    assert chat[0] == {"role": "system", "content": expected}
    assert [m["role"] for m in chat[1:]] == ["user"] or [m["role"] for m in chat[1:]] == ["user", "user"]
    anthropic = to_anthropic_messages(messages)
    assert anthropic.system == expected and all(m["role"] != "system" for m in anthropic.messages)
    responses = to_openai_responses(messages).payload()
    assert "Be brief." in json.dumps(responses)
    assert to_openai_chat(messages, "mine").messages[0] == {"role": "system", "content": "mine"}


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6) | st.sampled_from(["c1", "user", "assistant", "tool", "function_call", "function_call_output", "tool_use", "tool_result", "text"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "type", "content", "call_id", "tool_call_id", "tool_use_id", "id", "name", "arguments", "output", "input", "text", "tool_calls", "function", "source"]),
        inner, max_size=5),
    max_leaves=30,
)


_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["message", "function_call", "function_call_output", "tool_use", "tool_result", "text"]),
        "role": st.sampled_from(["user", "assistant", "tool", "system"]),
        "content": _JSON,
        "call_id": _JSON,
        "tool_call_id": _JSON,
        "id": _JSON,
        "name": _JSON,
        "arguments": _JSON,
        "output": _JSON,
        "tool_calls": _JSON,
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ITEM | _JSON, max_size=6))
def test_validators_report_never_raise_on_any_json(items):
    """Whatever JSON a caller hands them, the validators answer with
    problems; they never raise (a list as a call id once raised TypeError)."""
    for problems in (
        validate_openai_chat({"messages": items}),
        validate_openai_responses({"input": items}),
        validate_anthropic_messages({"messages": items}),
    ):
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
