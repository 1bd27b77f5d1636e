"""Helpers of the tests of ``pi-session import --from``: Claude Code and
Codex records built from the formats' public descriptions, and the checks
every imported session must pass (pi-session check, provider validators)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pi_session import build_session_context, read_session_file
from pi_session.adapters import (
    to_anthropic_messages,
    to_openai_chat,
    to_openai_responses,
    validate_anthropic_messages,
    validate_openai_chat,
    validate_openai_responses,
)
from pi_session.check import check_session

CWD = "/home/ada/project"
SID = "11111111-2222-4333-8444-555555555555"


def ts(n: int) -> str:
    return f"2025-06-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def cc(rtype: str, uuid: str, parent: str | None, n: int, **extra: Any) -> dict[str, Any]:
    """A Claude Code conversation record."""
    rec: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SID,
        "version": "2.1.0",
        "gitBranch": "main",
        "type": rtype,
        "uuid": uuid,
        "timestamp": ts(n),
    }
    rec.update(extra)
    return rec


def cc_user(uuid: str, parent: str | None, n: int, content: Any, **extra: Any) -> dict[str, Any]:
    return cc("user", uuid, parent, n, message={"role": "user", "content": content}, **extra)


def cc_assistant(uuid: str, parent: str | None, n: int, mid: str, blocks: list[Any], *, model: str = "claude-sonnet-4-5", stop: str | None = "end_turn", **extra: Any) -> dict[str, Any]:
    message = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20},
    }
    return cc("assistant", uuid, parent, n, message=message, requestId=f"req_{mid}", **extra)


def tool_use(call_id: str, name: str = "Bash", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args or {"command": "ls"}}


def tool_result(call_id: str, content: Any = "ok", is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}


def write_jsonl(path: Path, records: list[Any], raw_lines: tuple[bytes, ...] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records) + b"".join(raw_lines)
    path.write_bytes(data)
    old = time.time() - 3600  # written an hour ago: the agent is not running (see settle_seconds)
    os.utime(path, (old, old))
    return path


def session_entries(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sf = read_session_file(path)
    assert sf.header is not None
    return sf.header, list(sf.entries)


def assert_valid_for_pi_and_providers(path: Path) -> dict[str, Any]:
    """``check`` finds nothing; every entry's parent exists and ids are
    unique; the context converts to OpenAI Chat, OpenAI Responses and
    Anthropic requests their validators accept. Returns the context."""
    report = check_session(path)
    assert report.ok, [p.format(str(path)) for p in report.problems]
    _header, entries = session_entries(path)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    known: set[str] = set()
    roots = 0
    for e in entries:
        if e["parentId"] is None:
            roots += 1
        else:
            assert e["parentId"] in known, e
        known.add(e["id"])
    assert roots == 1
    context = build_session_context(entries)
    assert_messages_valid(context["messages"])
    return dict(context)


def assert_messages_valid(messages: list[Any]) -> None:
    """The three providers' validators accept the adapters' requests."""
    for convert, validate in (
        (to_openai_chat, validate_openai_chat),
        (to_openai_responses, validate_openai_responses),
        (to_anthropic_messages, validate_anthropic_messages),
    ):
        result = convert(messages, "You are pi.")
        assert validate(result.payload()) == [], (convert.__name__, validate(result.payload()))


def path_to_leaf(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {e["id"]: e for e in entries}
    out = []
    cur: dict[str, Any] | None = entries[-1]
    while cur is not None:
        out.append(cur)
        cur = by_id.get(cur["parentId"]) if cur["parentId"] else None
    return out[::-1]


CODEX_ID = "019a0000-aaaa-7bbb-8ccc-dddddddddddd"


def cx(rtype: str, n: int, **payload: Any) -> dict[str, Any]:
    """A Codex rollout record ``{timestamp, type, payload}``."""
    return {"timestamp": ts(n), "type": rtype, "payload": payload}


def cx_meta(n: int = 0, cwd: str = CWD) -> dict[str, Any]:
    return cx("session_meta", n, id=CODEX_ID, timestamp=ts(n), cwd=cwd, originator="codex_cli_rs", cli_version="0.121.0", model_provider="openai", git={"branch": "main"})


def cx_turn(n: int, model: str = "gpt-5.1-codex") -> dict[str, Any]:
    return cx("turn_context", n, cwd=CWD, approval_policy="on-request", model=model, effort="high", summary="auto")


def cx_msg(n: int, role: str, text: str, kind: str | None = None) -> dict[str, Any]:
    block = kind or ("output_text" if role == "assistant" else "input_text")
    return cx("response_item", n, type="message", role=role, content=[{"type": block, "text": text}])


def cx_tokens(n: int, inp: int, cached: int, out: int, reasoning: int = 0) -> dict[str, Any]:
    usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": reasoning, "total_tokens": inp + out}
    return cx("event_msg", n, type="token_count", info={"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 258400})
