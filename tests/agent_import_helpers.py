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
from pi_session.check.report import check_session

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


def kept_fields(entries: list[dict[str, Any]]) -> list[Any]:
    """What the entries keep of the fields of the source records they were
    made from (``imported.fields``, in file order)."""
    return [f for e in entries for f in e.get("imported", {}).get("fields", [])]


def kept_records(entries: list[dict[str, Any]]) -> list[Any]:
    """The whole source records the entries keep (``imported.records``, in
    file order)."""
    return [r for e in entries for r in e.get("imported", {}).get("records", [])]


def _texts(value: Any) -> list[str]:
    """Every string inside a JSON value but the ``type`` names."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k != "type" for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def assert_claude_code_lossless(records: list[dict[str, Any]], sessions: list[Any]) -> None:
    """Every field of every Claude Code source record is in the converted
    sessions: the record kept whole (``imported.records``), or its fields
    pi has no place for kept (``imported.fields``, found by ``uuid``) and
    the rest where the conversion put it (``cwd`` in the header, the
    timestamp on an entry, ``toolUseResult`` in a result's details, every
    string of the content in an entry)."""
    entries = [e for s in sessions for e in s.entries]
    whole = [json.dumps(r, sort_keys=True) for r in kept_records(entries)]
    by_uuid = {f.get("uuid"): f for f in kept_fields(entries) if isinstance(f, dict)}
    stamps = {e["timestamp"] for e in entries}
    converted = {t for e in entries for t in _texts({k: v for k, v in e.items() if k != "imported"})}
    converted |= {t for e in entries for b in e.get("message", {}).get("content", []) if isinstance(b, dict) and isinstance(b.get("thinkingSignature"), str) for t in [b["thinkingSignature"]]}
    details = [e["message"].get("details", {}).get("toolUseResult") for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    cwds = {s.cwd for s in sessions}
    checked = 0
    for r in records:
        if json.dumps(r, sort_keys=True) in whole:
            checked += 1
            continue
        assert r.get("uuid") in by_uuid, ("record lost", r.get("type"), r.get("uuid"))
        kept = by_uuid[r["uuid"]]
        for key, value in r.items():
            if key == "message":
                for mkey, mvalue in value.items():
                    if mkey == "content":
                        unconverted = set(_texts(kept.get("message", {}).get("content", [])))
                        for t in _texts(mvalue):
                            assert t in converted or t in unconverted, (r["uuid"], t[:80])
                    elif mkey != "role":
                        assert kept["message"][mkey] == mvalue, (r["uuid"], mkey)
            elif key == "timestamp":
                assert value in stamps or kept.get("timestamp") == value, (r["uuid"], value)
            elif key == "cwd" and key not in kept:
                assert value in cwds
            elif key == "toolUseResult" and key not in kept:
                assert value in details, r["uuid"]
            elif key in ("type", "uuid", "parentUuid", "sessionId", "isSidechain"):
                continue  # the entry's kind, its id and place in the tree, the session
            else:
                assert key in kept and kept[key] == value, (r["uuid"], key)
        checked += 1
    assert checked == len(records)


def assert_codex_lossless(records: list[dict[str, Any]], sessions: list[Any]) -> None:
    """Every Codex source record is in the converted session: kept whole
    (``imported.records``), or its item converted with every string of it
    in an entry (a reasoning item's in its ``thinkingSignature``, a call's
    JSON arguments parsed) or in the fields kept (``imported.fields``,
    with the record's other top-level fields), its timestamp on an entry."""
    entries = [e for s in sessions for e in s.entries]
    whole = [json.dumps(r, sort_keys=True) for r in kept_records(entries)]
    stamps = {e["timestamp"] for e in entries}
    fields = kept_fields(entries)
    converted = {t for e in entries for t in _texts({k: v for k, v in e.items() if k != "imported"})} | set(_texts(fields))
    stamps |= {f.get("timestamp") for f in fields}
    for e in entries:
        for b in e.get("message", {}).get("content", []) if isinstance(e.get("message", {}).get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "thinking":
                converted |= set(_texts(json.loads(b["thinkingSignature"])))
    for r in records:
        if json.dumps(r, sort_keys=True) in whole:
            continue
        assert r["type"] == "response_item", ("record lost", r["type"])
        assert r["timestamp"] in stamps
        extra = {k: v for k, v in r.items() if k not in ("timestamp", "type", "payload")}
        if extra:
            assert any(f.get("record") == extra for f in fields), extra
        for t in _texts(r["payload"]):
            if t in converted:
                continue
            try:
                parsed = json.loads(t)
            except ValueError:
                parsed = None
            assert parsed is not None and set(_texts(parsed)) <= converted, t[:80]
