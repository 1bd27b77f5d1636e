"""Helpers for the Pydantic AI conversation store tests: messages built
from a few values (the same objects for every store compared), a clock
that ticks on every read, an async runner."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage, RunUsage

T = TypeVar("T")

EPOCH = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def at(n: int) -> datetime:
    """A fixed time ``n`` milliseconds after :data:`EPOCH`."""
    return EPOCH + timedelta(milliseconds=n)


def turn(text: str, n: int, *, tool: bool = False, instructions: str | None = "Answer briefly.", system: str | None = None) -> list[ModelMessage]:
    """The messages of one run: a request with a user prompt (and a system
    prompt), a response (with thinking, and a tool call answered by a tool
    return and a final text when ``tool``)."""
    parts: list[Any] = [SystemPromptPart(system, timestamp=at(n))] if system else []
    parts.append(UserPromptPart(text, timestamp=at(n)))
    messages: list[ModelMessage] = [ModelRequest(parts=parts, timestamp=at(n), instructions=instructions, run_id=f"run-{n}")]
    usage = RequestUsage(input_tokens=10 + n % 7, output_tokens=3, cache_read_tokens=n % 3, details={"reasoning_tokens": 1})
    if tool:
        messages.append(
            ModelResponse(
                parts=[ThinkingPart(f"think {n}", signature="sig"), ToolCallPart("lookup", {"q": text, "n": n}, tool_call_id=f"call-{n}")],
                usage=usage,
                model_name="test-model",
                provider_name="test",
                timestamp=at(n + 1),
                provider_details={"finish": "tool_use", "n": n},
                provider_response_id=f"resp-{n}",
                finish_reason="tool_call",
            )
        )
        messages.append(
            ModelRequest(
                parts=[ToolReturnPart("lookup", {"found": text, "n": n}, tool_call_id=f"call-{n}", timestamp=at(n + 2))],
                timestamp=at(n + 2),
                instructions=instructions,
            )
        )
    messages.append(
        ModelResponse(
            parts=[TextPart(f"answer to {text}")],
            usage=usage,
            model_name="test-model",
            provider_name="test",
            timestamp=at(n + 3),
            finish_reason="stop",
        )
    )
    return messages


def retry_turn(n: int) -> list[ModelMessage]:
    """A run whose tool call was retried (a retry prompt answering the call)."""
    return [
        ModelRequest(parts=[UserPromptPart(f"retry {n}", timestamp=at(n))], timestamp=at(n)),
        ModelResponse(parts=[ToolCallPart("lookup", {"bad": True}, tool_call_id=f"r-{n}")], timestamp=at(n + 1), model_name="m"),
        ModelRequest(
            parts=[ToolReturnPart("lookup", "wrong arguments", tool_call_id=f"r-{n}", outcome="retried", timestamp=at(n + 2))],
            timestamp=at(n + 2),
        ),
        ModelResponse(parts=[TextPart("done")], timestamp=at(n + 3), model_name="m"),
    ]


def run_usage(n: int) -> RunUsage:
    return RunUsage(requests=n, input_tokens=10 * n, output_tokens=3 * n, tool_calls=n // 2, details={"k": n})


def copies(value: T) -> T:
    """A deep copy (each store gets objects of its own)."""
    return copy.deepcopy(value)


class Runner:
    """Runs coroutines on one event loop, under a clock that ticks one
    millisecond on every read (so records are ordered the same way in
    every store and ``updated_at`` never ties)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ticks = 0

    def now(self) -> datetime:
        self.ticks += 1
        return EPOCH + timedelta(days=1, milliseconds=self.ticks)

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        from pydantic_ai._utils import override_now_utc

        async def main() -> T:
            with override_now_utc(self.now):
                return await make()

        return self.loop.run_until_complete(main())

    def close(self) -> None:
        self.loop.close()


def outcome(runner: Runner, make: Callable[[], Awaitable[T]]) -> tuple[str, Any]:
    """``("ok", value)`` or ``("error", exception class name)``."""
    try:
        return "ok", runner.run(make)
    except Exception as exc:  # compared between stores: same class, same outcome
        return "error", type(exc).__name__


@contextmanager
def quiet_loop(runner: Runner) -> Iterator[Runner]:
    try:
        yield runner
    finally:
        runner.close()


def record_view(record: Any) -> tuple[Any, ...]:
    """What of a ConversationRecord two stores must agree on (not the ids
    they mint: entry ids, revisions)."""
    return (
        record.conversation_id,
        record.head_id is None,
        record.usage,
        record.deferred_tool_requests,
        record.scope,
        record.forked_from,
        record.forked_at is None,
        record.title,
        record.metadata,
        len(record.branches),
        record.updated_at,
        record.format_version,
    )
