"""Shared pieces of the ``pi-session browse`` tests: a small branchy session
written by the real SessionManager, and helpers to drive the app through
Textual's pilot (no sleeps: conditions are polled with a generous limit)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pi_session import SessionManager
from pi_session.core import jsonio

LONG_OUTPUT = "\n".join(f"line {i}: def parse_block(tokens, depth={i}) -> Node" for i in range(120)) + "\nEND-OF-OUTPUT-MARKER"


def _user(text: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def _assistant(text: str, ts: int, call: tuple[str, str, dict[str, Any]] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if call is not None:
        content.append({"type": "toolCall", "id": call[0], "name": call[1], "arguments": call[2]})
    return {
        "role": "assistant",
        "content": content,
        "provider": "openai",
        "model": "gpt-test",
        "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "toolUse" if call else "stop",
        "timestamp": ts,
    }


def _result(call_id: str, name: str, text: str, ts: int) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": [{"type": "text", "text": text}],
            "isError": False, "timestamp": ts}


def make_session(tmp: Path, *, turns: int = 1, default_dir: bool = False, first: str = "Fix the parser: nested blocks lose their line numbers") -> tuple[Path, dict[str, str]]:
    """A session file in ``tmp/sessions`` (``default_dir``: the project's
    default session directory of the agent dir) for the project
    ``tmp/project``:

    u1 user "Fix the parser" [label: task]
    a1 assistant (read call) → t1 toolResult (long output)
      ├─ a2 assistant "Approach A" → u2 user "try nested blocks" → a3 assistant "nested done"
      └─ b1 assistant "Approach B: rewrite the tokenizer" → u3 user "ship it" → b2 assistant (leaf)

    ``turns`` > 1 adds more user/assistant turns at the end (for compaction).

    Returns:
        ``(path, ids)`` with the ids by the names above.
    """
    project = tmp / "project"
    project.mkdir(exist_ok=True)
    sm = SessionManager.create(str(project), None if default_dir else tmp / "sessions")
    ts = 1_764_000_000_000
    ids: dict[str, str] = {}
    ids["u1"] = sm.append_message(_user(first, ts))
    ids["a1"] = sm.append_message(_assistant("Let me read the parser.", ts + 1000, ("call_1", "read", {"path": "src/parser.py"})))
    ids["t1"] = sm.append_message(_result("call_1", "read", LONG_OUTPUT, ts + 2000))
    ids["a2"] = sm.append_message(_assistant("Approach A: keep a line table per block.", ts + 3000))
    ids["u2"] = sm.append_message(_user("try nested blocks", ts + 4000))
    ids["a3"] = sm.append_message(_assistant("nested done", ts + 5000))
    sm.branch(ids["t1"])
    ids["b1"] = sm.append_message(_assistant("Approach B: rewrite the tokenizer", ts + 6000))
    ids["u3"] = sm.append_message(_user("ship it", ts + 7000))
    ids["b2"] = sm.append_message(_assistant("Shipped the tokenizer rewrite.", ts + 8000))
    for i in range(turns - 1):
        sm.append_message(_user(f"follow-up question {i}: " + "more detail please " * 40, ts + 9000 + 2 * i))
        sm.append_message(_assistant(f"answer {i}: " + "here is the detail " * 40, ts + 9001 + 2 * i))
    ids["label"] = sm.append_label_change(ids["u1"], "task")
    sm.save()
    path = sm.get_session_file()
    assert path is not None
    return path, ids


def records(path: Path) -> list[dict[str, Any]]:
    """Every record of a session file (header first)."""
    return [jsonio.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def run(app: Any, body: Callable[[Any], Awaitable[None]], size: tuple[int, int] = (80, 24)) -> None:
    """Run ``body(pilot)`` against ``app`` in a headless terminal of ``size``."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await body(pilot)

    asyncio.run(main())


async def until(pilot: Any, condition: Callable[[], Any], what: str, limit: float = 30.0) -> Any:
    """Let the app run until ``condition()`` is true (returns its value);
    fails after ``limit`` seconds (a generous bound, not a timing check)."""
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def type_text(pilot: Any, text: str) -> None:
    """Type ``text`` key by key (the pilot names punctuation itself)."""
    await pilot.press(*text)
