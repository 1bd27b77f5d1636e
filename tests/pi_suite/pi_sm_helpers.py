"""Messages and entries for the translated pi session-manager tests
(tests/pi_suite/test_pi_session_manager_*.py): the shapes pi's tests use
(pi's ``test/utilities.ts`` ``userMsg``/``assistantMsg``), as wire-format
dicts."""

from __future__ import annotations

import time
from typing import Any

ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def now_ms() -> int:
    return int(time.time() * 1000)


def user_msg(text: str, timestamp: int | None = None) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": now_ms() if timestamp is None else timestamp}


def assistant_msg(
    text: str, timestamp: int | None = None, *, model: str = "test", provider: str = "anthropic", api: str = "anthropic-messages"
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": dict(ZERO_COST)},
        "stopReason": "stop",
        "timestamp": now_ms() if timestamp is None else timestamp,
    }


TS = "2025-01-01T00:00:00Z"


def msg_entry(entry_id: str, parent_id: str | None, role: str, text: str) -> dict[str, Any]:
    """A ``message`` entry with fixed timestamps (pi's build-context ``msg``)."""
    message = user_msg(text, 1) if role == "user" else assistant_msg(text, 1, model="claude-test")
    return {"type": "message", "id": entry_id, "parentId": parent_id, "timestamp": TS, "message": message}


def compaction_entry(entry_id: str, parent_id: str | None, summary: str, first_kept: str) -> dict[str, Any]:
    return {
        "type": "compaction", "id": entry_id, "parentId": parent_id, "timestamp": TS,
        "summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": 1000,
    }


def branch_summary_entry(entry_id: str, parent_id: str | None, summary: str, from_id: str) -> dict[str, Any]:
    return {"type": "branch_summary", "id": entry_id, "parentId": parent_id, "timestamp": TS, "summary": summary, "fromId": from_id}


def thinking_entry(entry_id: str, parent_id: str | None, level: str) -> dict[str, Any]:
    return {"type": "thinking_level_change", "id": entry_id, "parentId": parent_id, "timestamp": TS, "thinkingLevel": level}


def model_change_entry(entry_id: str, parent_id: str | None, provider: str, model_id: str) -> dict[str, Any]:
    return {"type": "model_change", "id": entry_id, "parentId": parent_id, "timestamp": TS, "provider": provider, "modelId": model_id}
