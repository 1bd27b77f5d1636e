"""A small corpus of sessions for the search tests: every kind of searched
text (user/assistant text, thinking, tool calls, tool results, bash
executions, compaction and branch summaries, custom messages, names,
labels, model changes) and a context edit, in two projects. Written as
files, or imported into a store, it gives the same hits everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

S1 = "0192aaaa-0000-7000-8000-000000000001"
S2 = "0192aaaa-0000-7000-8000-000000000002"
S3 = "0192bbbb-0000-7000-8000-000000000003"


def _ts(minute: int, day: int = 1) -> str:
    return f"2026-03-{day:02d}T10:{minute:02d}:00.000Z"


def _msg(eid: str, parent: str | None, minute: int, message: dict[str, Any], day: int = 1) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": _ts(minute, day), "message": message}


def _assistant(content: list[dict[str, Any]], model: str = "claude-sonnet-4") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": model,
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 1772359200000}


def corpus() -> list[tuple[str, list[dict[str, Any]]]]:
    """``(file name, records)`` per session; the first record the header."""
    s1 = [
        {"type": "session", "version": 3, "id": S1, "timestamp": _ts(0), "cwd": "/work/dnsproject"},
        _msg("u1", None, 1, {"role": "user", "content": "where did we fix that DNS resolver thing?", "timestamp": 1772359260000}),
        _msg("a1", "u1", 2, _assistant([
            {"type": "thinking", "thinking": "the resolver cache hides a pondering secret"},
            {"type": "text", "text": "Let me read the resolver configuration."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/net/auth.py"}},
        ])),
        _msg("t1", "a1", 3, {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                             "content": [{"type": "text", "text": "def authenticate(user): return resolver.lookup(user)"}],
                             "isError": False, "timestamp": 1772359380000}),
        _msg("b1", "t1", 4, {"role": "bashExecution", "command": "dig example.org", "output": "status: NXDOMAIN flaky",
                             "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1772359440000}),
        {"type": "session_info", "id": "n1", "parentId": "b1", "timestamp": _ts(5), "name": "DNS debugging"},
        {"type": "label", "id": "l1", "parentId": "n1", "timestamp": _ts(6), "targetId": "u1", "label": "bookmark-resolver"},
        _msg("u2", "l1", 7, {"role": "user", "content": "my password is hunter2swordfish please forget it", "timestamp": 1772359620000}),
        {"type": "context_edit", "id": "e1", "parentId": "u2", "timestamp": _ts(8), "targetId": "u2",
         "replacement": {"content": "[redacted]"}},
        {"type": "compaction", "id": "k1", "parentId": "e1", "timestamp": _ts(9), "summary": "We traced the resolver timeout to a stale cache.",
         "firstKeptEntryId": "u2", "tokensBefore": 100, "details": {"readFiles": ["src/net/auth.py"], "modifiedFiles": ["src/net/cache.py"]}},
    ]
    s2 = [
        {"type": "session", "version": 3, "id": S2, "timestamp": _ts(0, 2), "cwd": "/work/themeproject"},
        {"type": "model_change", "id": "m1", "parentId": None, "timestamp": _ts(1, 2), "provider": "openai", "modelId": "gpt-5-mini"},
        _msg("u1", "m1", 2, {"role": "user", "content": "switch the theme to a dark palette", "timestamp": 1772445720000}, day=2),
        _msg("a1", "u1", 3, _assistant([
            {"type": "text", "text": "I will edit the theme file."},
            {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"path": "ui/theme.css", "oldText": "light", "newText": "dark"}},
        ], model="gpt-5-mini"), day=2),
        _msg("x1", "a1", 4, {"role": "custom", "customType": "note", "content": "custom reminder about the palette", "display": True,
                             "timestamp": 1772445840000}, day=2),
        {"type": "branch_summary", "id": "bs1", "parentId": "x1", "timestamp": _ts(5, 2), "fromId": "u1",
         "summary": "Tried a resolver-free theme loader."},
    ]
    s3 = [
        {"type": "session", "version": 3, "id": S3, "timestamp": _ts(0, 3), "cwd": "/work/dnsproject"},
        _msg("u1", None, 1, {"role": "user", "content": "resolver works now, thanks", "timestamp": 1772532060000}, day=3),
        {"type": "custom_message", "id": "cm1", "parentId": "u1", "timestamp": _ts(2, 3), "customType": "ext",
         "content": "extension says resolver ok", "display": True},
    ]
    return [
        (f"2026-03-01T10-00-00-000Z_{S1}.jsonl", s1),
        (f"2026-03-02T10-00-00-000Z_{S2}.jsonl", s2),
        (f"2026-03-03T10-00-00-000Z_{S3}.jsonl", s3),
    ]


def lines_of(records: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(r) + b"\n" for r in records]


def write_corpus(root: Path) -> dict[str, Path]:
    """The corpus as session files under a sessions root (one directory per
    project, as pi names them); returns session id -> file."""
    from pi_session.core.paths import encode_cwd

    out = {}
    for name, records in corpus():
        d = root / encode_cwd(records[0]["cwd"])
        d.mkdir(parents=True, exist_ok=True)
        path = d / name
        path.write_bytes(b"".join(lines_of(records)))
        out[records[0]["id"]] = path
    return out


QUERIES = [
    "resolver",
    "dns",
    '"resolver configuration"',
    "resolv*",
    "resolver -cache",
    "role:user resolver",
    "role:tool",
    "tool:bash",
    "tool:read",
    "file:auth.py",
    "file:theme resolver",
    "project:dnsproject",
    "model:gpt theme",
    "after:2026-03-02 resolver",
    "before:2026-03-02 resolver",
    "session:0192bbbb",
    "palette",
    "bookmark",
    "nxdomain",
    "re:look(up|out)",
    "hunter2swordfish",
    "pondering",
    "authenticate",
    "-resolver",
    "role:user -resolver",
    "-resolver -theme role:session",
    "file: theme",
]
"""Queries the backends must answer alike."""
