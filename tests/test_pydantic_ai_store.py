"""PiConversationStore: what a conversation looks like as a pi session (pi
1.6 builds the context it holds: oracle), messages kept losslessly, forks
and deletes, sessions damaged by hand or edited with pi-session."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.conversation import Conversation  # noqa: E402
from pydantic_ai.conversation_store import ConversationConflict  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    BinaryImage,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import DeferredToolRequests  # noqa: E402
from pydantic_ai.usage import RequestUsage, RunUsage  # noqa: E402

from pi_session import SessionManager  # noqa: E402
from pi_session.core import jsonio  # noqa: E402
from pi_session.integrations.pydantic_ai import (  # noqa: E402
    MESSAGE_KEY,
    RECORD_TYPE,
    ConversationDataError,
    PiConversationStore,
    UnstorableValueError,
    pi_session_id_for,
)
from pi_session.integrations.pydantic_ai.convert import to_pi_messages  # noqa: E402
from pydantic_ai_helpers import at, run_usage, turn  # noqa: E402


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def file_of(root: Path, conversation_id: str) -> Path:
    (path,) = root.rglob(f"*_{pi_session_id_for(conversation_id)}.jsonl")
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def every_kind_of_message() -> list[ModelMessage]:
    """Messages with the parts a run records, and what pi has no form for."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("You are terse.", timestamp=at(1)),
                UserPromptPart(["Look:", BinaryImage(b"\x89PNG\r\n", media_type="image/png"), ImageUrl("https://example.com/a.png")], timestamp=at(1)),
            ],
            timestamp=at(1),
            instructions="Answer in one line.",
            run_id="r1",
            metadata={"tenant": "t1"},
        ),
        ModelResponse(
            parts=[
                ThinkingPart("the user wants a look", signature="c2ln", provider_name="anthropic"),
                TextPart("Looking."),
                ToolCallPart("describe", {"what": "image", "depth": 2.5}, tool_call_id="call-1"),
                NativeToolCallPart("web_search", {"q": "png"}, tool_call_id="ws-1", provider_name="openai"),
                NativeToolReturnPart("web_search", {"hits": 1}, tool_call_id="ws-1", provider_name="openai"),
            ],
            usage=RequestUsage(input_tokens=120, output_tokens=30, cache_read_tokens=100, cache_write_tokens=5, details={"reasoning_tokens": 12}),
            model_name="claude-x",
            provider_name="anthropic",
            provider_details={"stop_sequence": None, "ids": ["a", "b"]},
            provider_response_id="msg_1",
            finish_reason="tool_call",
            timestamp=at(2),
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("describe", {"colour": "red", "pixels": [1, 2, 3]}, tool_call_id="call-1", timestamp=at(3), metadata={"ms": 4}),
                RetryFeedbackPart("Return JSON, please.", retry=RetryInfo(cause="model_retry"), timestamp=at(3)),
            ],
            timestamp=at(3),
            instructions="Answer in one line.",
        ),
        ModelResponse(parts=[TextPart("It is red.")], model_name="claude-x", timestamp=at(4), finish_reason="length"),
        ModelRequest(parts=[UserPromptPart("thanks", timestamp=at(5))], timestamp=at(5), instructions=None),
        ModelResponse(parts=[], timestamp=at(6)),
    ]


# ---------------------------------------------------------------------------
# lossless


def test_every_kind_of_message_loads_as_it_was_saved(store_url: str) -> None:
    messages = every_kind_of_message()
    usage = RunUsage(requests=2, input_tokens=120, output_tokens=30, tool_calls=1, details={"x": 1})
    requests = DeferredToolRequests(approvals=[ToolCallPart("pay", {"cents": 5}, tool_call_id="p1")], metadata={"p1": {"by": "bob"}})

    async def go() -> tuple[Conversation | None, list[Any]]:
        store = PiConversationStore(store_url, cwd="/work/proj")
        conversation = Conversation(conversation_id="every", messages=messages, usage=usage, deferred_tool_requests=requests)
        saved = await store.save(conversation, scope="alice")
        fresh = PiConversationStore(store_url, cwd="/work/proj")
        return await fresh.load("every"), [await fresh.read_entry(entry.id) for entry in saved]

    loaded, entries = run(go())
    assert loaded is not None
    assert loaded.messages == messages
    assert [m.metadata for m in loaded.messages if isinstance(m, ModelRequest)] == [{"tenant": "t1"}, None, None]
    assert loaded.usage == usage and loaded.deferred_tool_requests == requests
    assert [e.message for e in entries] == messages
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]


def test_a_value_json_cannot_hold_stores_nothing(store_url: str) -> None:
    async def go() -> Any:
        store = PiConversationStore(store_url, cwd="/work/proj")
        await store.save(Conversation(conversation_id="meta", messages=turn("a", 1)))
        with pytest.raises(UnstorableValueError):
            await store.update("meta", metadata={"when": object()})
        return await store.load("meta")

    loaded = run(go())
    assert loaded is not None and loaded.messages == turn("a", 1)


# ---------------------------------------------------------------------------
# the session pi sees


def expected_pi_messages(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """The pi messages of a history, system messages left out (they depend
    on what was written before a branch)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        out.extend(m for m in to_pi_messages(message, None)[0] if m["role"] != "system")
    return out


def normal(value: Any) -> Any:
    return json.loads(jsonio.dumps(value))


@pytest.mark.oracle
def test_pi_builds_the_context_each_conversation_holds(tmp_path: Path, oracle) -> None:
    """pi 1.6 opens the session of a conversation (after runs with tools,
    a branch back, a new run on the branch, a fork) and its context holds
    the conversation's messages; pi-session builds the same context."""
    root = tmp_path / "sessions"

    async def go() -> dict[str, Conversation]:
        store = PiConversationStore(str(root), cwd="/work/proj")
        conversation = Conversation(conversation_id="main", messages=every_kind_of_message())
        await store.save(conversation)
        for n, text in enumerate(["weather", "sum"]):
            loaded = await store.load("main")
            loaded.messages.extend(turn(text, 100 * (n + 1), tool=True, system="You are a calculator." if n else None))
            await store.save(loaded)
        loaded = await store.load("main")
        branched = await store.branch("main", at=8, expected_revision=loaded.revision)
        branched.messages.extend(turn("on the branch", 500, instructions="Use French."))
        await store.save(branched)
        fork = await store.fork("main", at=6, new_conversation_id="side")
        fork.messages.extend(turn("in the fork", 600))
        await store.save(fork)
        return {cid: await store.load(cid) for cid in ("main", "side")}

    loaded = run(go())
    for cid, conversation in loaded.items():
        path = file_of(root, cid)
        context = json.loads(oracle("context", str(path)))
        pi_messages = [m for m in context["messages"] if m["role"] != "system"]
        assert pi_messages == normal(expected_pi_messages(conversation.messages)), cid
        ours = SessionManager.open(path).build_session_context()
        assert normal(ours["messages"]) == context["messages"], cid
        system = [m for m in context["messages"] if m["role"] == "system" and "sections" in m]
        last_instructions = [m.instructions for m in conversation.messages if isinstance(m, ModelRequest)][-1]
        assert system[-1]["sections"]["instructions"] == last_instructions, cid
        assert context["model"] == {"provider": "test", "modelId": "test-model"}
    header = records(file_of(root, "side"))[0]
    assert header["parentSession"] == str(file_of(root, "main"))


def test_each_entry_is_carried_by_its_last_pi_entry_and_the_record_follows_the_head(tmp_path: Path) -> None:
    root = tmp_path / "sessions"

    async def go() -> list[Any]:
        store = PiConversationStore(str(root), cwd="/work/proj")
        return await store.save(Conversation(conversation_id="layout", messages=turn("hi", 1, tool=True, system="Be kind.")))

    entries = run(go())
    lines = records(file_of(root, "layout"))
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == "/work/proj"
    carriers = [r for r in lines if MESSAGE_KEY in r]
    assert [c["id"] for c in carriers] == [e.id for e in entries]
    assert [c[MESSAGE_KEY]["parentId"] for c in carriers] == [e.parent_id for e in entries]
    first_chain = [r for r in lines[1:] if r["id"].startswith(entries[0].id)]
    assert [r["message"]["role"] for r in first_chain] == ["system", "user"]
    assert first_chain[0]["message"]["content"] == "Be kind."
    assert first_chain[0]["message"]["sections"] == {"instructions": "Answer briefly."}
    record = lines[-1]
    assert record["type"] == "custom" and record["customType"] == RECORD_TYPE
    assert record["parentId"] == entries[-1].id
    assert record["data"]["conversationId"] == "layout" and record["data"]["headId"] == entries[-1].id


def test_an_id_pi_cannot_name_a_session_by_maps_to_a_fixed_uuid(tmp_path: Path) -> None:
    root = tmp_path / "sessions"

    async def go() -> list[str]:
        store = PiConversationStore(str(root), cwd="/work/proj")
        await store.save(Conversation(conversation_id="alice@example.com/chat 1", messages=turn("hi", 1)))
        fresh = PiConversationStore(str(root), cwd="/work/proj")
        loaded = await fresh.load("alice@example.com/chat 1")
        assert loaded is not None and loaded.messages == turn("hi", 1)
        return [r.conversation_id for r in await fresh.list_conversations()]

    assert run(go()) == ["alice@example.com/chat 1"]
    assert file_of(root, "alice@example.com/chat 1").exists()


# ---------------------------------------------------------------------------
# forks and deletes


def test_delete_removes_the_whole_session_and_a_fork_keeps_its_copy(store_url: str) -> None:
    async def go() -> None:
        store = PiConversationStore(store_url, cwd="/work/proj")
        conversation = Conversation(conversation_id="src", messages=turn("one", 1))
        await store.save(conversation)
        loaded = await store.load("src")
        loaded.messages.extend(turn("secret branch", 10))
        await store.save(loaded)
        loaded = await store.load("src")
        await store.branch("src", at=2, expected_revision=loaded.revision)  # the secret turn is now a branch
        fork = await store.fork("src", new_conversation_id="copy")
        assert fork.messages == turn("one", 1)
        await store.delete("src")
        assert await store.load("src") is None
        assert not store.store.exists(pi_session_id_for("src"))
        kept = await PiConversationStore(store_url, cwd="/work/proj").load("copy")
        assert kept is not None and kept.messages == turn("one", 1)
        stored = b"".join(b"".join(store.store.read_lines(sid)) for sid in store.store.find(""))
        assert b"secret branch" not in stored  # the fork copied only the path it kept
        await store.delete("copy")
        assert store.store.find("") == []

    run(go())


def test_deleting_a_conversation_saved_meanwhile_is_a_conflict(store_url: str) -> None:
    async def go() -> None:
        first = PiConversationStore(store_url, cwd="/work/proj")
        second = PiConversationStore(store_url, cwd="/work/proj")
        await first.save(Conversation(conversation_id="busy", messages=turn("a", 1)))
        stale = await first.read_record("busy")
        loaded = await second.load("busy")
        loaded.messages.extend(turn("b", 2))
        await second.save(loaded)
        with pytest.raises(ConversationConflict):
            await first.delete_record("busy", expected_revision=stale.revision)
        assert (await first.load("busy")).messages == turn("a", 1) + turn("b", 2)

    run(go())


# ---------------------------------------------------------------------------
# damaged or edited sessions


def saved_file(root: Path, cid: str = "chat", runs: int = 2) -> list[ModelMessage]:
    async def go() -> list[ModelMessage]:
        store = PiConversationStore(str(root), cwd="/work/proj")
        conversation = Conversation(conversation_id=cid)
        for n in range(runs):
            conversation.messages.extend(turn(f"question {n}", 10 * n, tool=n == 0))
            await store.save(conversation)
        return conversation.messages

    return run(go())


def load(root: Path, cid: str = "chat") -> Conversation | None:
    return run(PiConversationStore(str(root), cwd="/work/proj").load(cid))


def test_a_torn_last_line_and_a_foreign_line_are_passed_over(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    messages = saved_file(root)
    path = file_of(root, "chat")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + [b"this is not json\n"] + lines[3:]) + b'{"type":"custom","id":"torn","parentId":nu')
    loaded = load(root)
    assert loaded is not None and loaded.messages == messages

    async def more() -> Conversation | None:
        store = PiConversationStore(str(root), cwd="/work/proj")
        loaded.messages.extend(turn("after the damage", 99))
        await store.save(loaded)
        return await store.load("chat")

    assert run(more()).messages == messages + turn("after the damage", 99)


def _edit_line(path: Path, match: Any, edit: Any) -> int:
    lines = path.read_bytes().splitlines(keepends=True)
    for n, raw in enumerate(lines):
        record = json.loads(raw)
        if match(record):
            lines[n] = jsonio.dumps_line(edit(record))
            path.write_bytes(b"".join(lines))
            return n + 1
    raise AssertionError("no line matched")


def test_a_message_edited_into_something_else_is_one_error_naming_the_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    saved_file(root)
    path = file_of(root, "chat")

    def broken(record: dict[str, Any]) -> dict[str, Any]:
        record[MESSAGE_KEY]["message"] = '{"kind": "request", "parts": [{"part_kind": "no-such-part"}]}'
        return record

    line = _edit_line(path, lambda r: MESSAGE_KEY in r and r["message"]["role"] == "toolResult", broken)
    with pytest.raises(ConversationDataError) as info:
        load(root)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: the Pydantic AI message of entry ")
    assert "\n" not in message


def test_a_record_edited_by_hand_is_one_error_naming_the_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    saved_file(root)
    path = file_of(root, "chat")
    line = len(path.read_bytes().splitlines())

    def broken(record: dict[str, Any]) -> dict[str, Any]:
        record["data"]["record"] = "{}"
        return record

    _edit_line(path, lambda r: r.get("customType") == RECORD_TYPE and r["id"] == records(path)[-1]["id"], broken)
    with pytest.raises(ConversationDataError) as info:
        load(root)
    assert str(info.value).startswith(f"{path}:{line}: the conversation record cannot be read: ")


def test_a_label_and_a_compaction_made_with_pi_session_stay_on_the_path_the_next_save_continues(tmp_path: Path, cli) -> None:
    root = tmp_path / "sessions"
    messages = saved_file(root, runs=4)
    path = file_of(root, "chat")
    first_user = next(r["id"] for r in records(path) if r.get("message", {}).get("role") == "user")
    assert cli("label", str(path), first_user, "start").returncode == 0
    done = cli("compact", str(path), "--provider", "extractive", "--keep-recent-tokens", "40", "--reserve-tokens", "100")
    assert done.returncode == 0, done.stderr
    compaction = records(path)[-1]
    assert compaction["type"] == "compaction"
    loaded = load(root)
    assert loaded is not None and loaded.messages == messages

    async def more() -> None:
        store = PiConversationStore(str(root), cwd="/work/proj")
        loaded.messages.extend(turn("after compaction", 500))
        await store.save(loaded)

    run(more())
    assert load(root).messages == messages + turn("after compaction", 500)
    context = [m for m in SessionManager.open(path).build_session_context()["messages"] if m["role"] != "system"]
    assert context[0]["role"] == "compactionSummary"
    assert context[-1]["content"][0]["text"] == "answer to after compaction"
    tree = cli("tree", str(path))
    assert tree.returncode == 0 and "start" in tree.stdout


def test_a_scrubbed_session_loads_what_it_holds(tmp_path: Path, cli) -> None:
    root = tmp_path / "sessions"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    async def go() -> None:
        store = PiConversationStore(str(root), cwd="/work/proj")
        await store.save(Conversation(conversation_id="chat", messages=turn(f"my token is {token}", 1)))

    run(go())
    path = file_of(root, "chat")
    done = cli("scrub", str(path), "--mode", "rewrite")
    assert done.returncode == 0, done.stderr + done.stdout
    assert token.encode() not in path.read_bytes()
    loaded = load(root)
    assert loaded is not None
    prompt = loaded.messages[0].parts[0].content
    assert token not in prompt and prompt.startswith("my token is [REDACTED")
    loaded.messages.extend(turn("after the scrub", 5))

    async def more() -> Conversation | None:
        store = PiConversationStore(str(root), cwd="/work/proj")
        await store.save(loaded)
        return await store.load("chat")

    assert run(more()).messages[-1].parts[0].content == "answer to after the scrub"


def test_a_session_written_by_pi_alone_is_no_conversation(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    manager = SessionManager.create("/work/proj", session_dir=root / "--work-proj--", id="plain")
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})

    async def go() -> tuple[Any, Any]:
        store = PiConversationStore(str(root), cwd="/work/proj")
        return await store.load("plain"), await store.list_conversations()

    assert run(go()) == (None, [])


def test_updated_at_and_usage_survive_a_fresh_store(store_url: str) -> None:
    async def go() -> None:
        store = PiConversationStore(store_url, cwd="/work/proj")
        conversation = Conversation(conversation_id="u", messages=turn("a", 1), usage=run_usage(3))
        await store.save(conversation, scope="s")
        record = await store.read_record("u")
        again = await PiConversationStore(store_url, cwd="/work/proj").read_record("u")
        assert again == record
        assert again.updated_at - record.updated_at == timedelta(0)

    run(go())


def test_a_title_is_the_pi_session_name_and_the_next_save_continues_after_it(store_url: str, cli) -> None:
    async def go() -> None:
        store = PiConversationStore(store_url, cwd="/work/proj")
        await store.save(Conversation(conversation_id="named", messages=turn("a", 1)))
        await store.update("named", title="Weather\nin Paris", expected_title=None)
        loaded = await store.load("named")
        loaded.messages.extend(turn("b", 2))
        await store.save(loaded)
        await store.update("named", metadata={"model": "m"})  # the name stays

    run(go())
    listed = cli("--store", store_url, "ls", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    (info,) = json.loads(listed.stdout)
    assert info["name"] == "Weather in Paris"

    async def read() -> Any:
        store = PiConversationStore(store_url, cwd="/work/proj")
        return (await store.read_record("named")).title, (await store.load("named")).messages

    title, messages = run(read())
    assert title == "Weather\nin Paris" and messages == turn("a", 1) + turn("b", 2)
