"""Crafted pi 1.6 entry lists around context edits, system messages and
compaction snapshots (used for goldens and unit tests). Each answer was
checked with the 1.6 oracle (tests/tools/make_projection_goldens.py)."""

from __future__ import annotations

from typing import Any

HEADER = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
          "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work/project"}


def e(eid: str, etype: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", **fields}


def user(text: Any, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(text: str, total: int = 2, **extra: Any) -> dict[str, Any]:
    msg = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "x", "provider": "p", "model": "m",
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
           "stopReason": "stop", "timestamp": 2}
    msg.update(extra)
    return msg


def system(eid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return e(eid, "message", parent, message={"role": "system", **fields})


CASES: dict[str, list[dict[str, Any]]] = {
    # replace user / assistant / custom_message, last edit wins, missing content, usage entry, system patch
    "edits": [
        system("s1", None, content="", sections={"preamble": "P", "tools": "T"},
               toolsAdded=[{"name": "read", "description": "r", "parameters": {}}], timestamp=1),
        e("u1", "message", "s1", message=user("hello")),
        e("a1", "message", "u1", message=assistant("hi")),
        e("cm", "custom_message", "a1", customType="x", content="cc", display=True),
        e("u2", "message", "cm", message={"role": "user", "timestamp": 3}),
        e("e1", "context_edit", "u2", targetId="u1", replacement={"content": "NEW"}),
        e("e2", "context_edit", "e1", targetId="a1", replacement={"content": "NEWA"}),
        e("e3", "context_edit", "e2", targetId="cm", replacement={"content": "NEWC"}),
        e("e4", "context_edit", "e3", targetId="u1", replacement={"content": [{"type": "text", "text": "LAST"}]}),
        e("us", "usage", "e4", kind="cache_warm", provider="p", model="m", usage={"input": 1}),
        system("s2", "us", content="extra", sections={"tools": None, "x": "X"}, toolsRemoved=[{"name": "read"}], timestamp=9),
    ],
    # omissions and replacements that are not {"content": string|array}
    "omit": [
        e("u1", "message", None, message=user("hello")),
        e("a1", "message", "u1", message=assistant("hi", provider="p1", model="m1")),
        e("e0", "context_edit", "a1", targetId="a1", replacement=None),
        e("e1", "context_edit", "e0", targetId="u1", replacement={"content": 5}),
        e("u2", "message", "e1", message=user("two")),
        e("e2", "context_edit", "u2", targetId="u2", replacement="str"),
        e("u3", "message", "e2", message=user("three")),
        e("e3", "context_edit", "u3", targetId="u3", replacement={"nocontent": 1}),
        e("u4", "message", "e3", message=user("four")),
        e("e4", "context_edit", "u4", targetId="u4", replacement={"content": None}),
        e("u5", "message", "e4", message={"role": "user", "content": None, "timestamp": 5, "extra": 1}),
        e("e5", "context_edit", "u5", targetId="zz", replacement=None),
        e("e6", "context_edit", "e5", targetId="e5", replacement=None),
    ],
    # compaction snapshot, system messages in the kept range, edits before/after the compaction
    "compaction": [
        system("s1", None, content="base", timestamp=1),
        e("u1", "message", "s1", message=user("hello")),
        e("e1", "context_edit", "u1", targetId="u1", replacement={"content": "ED"}),
        e("a1", "message", "e1", message=assistant("hi", total=900)),
        system("s2", "a1", content="kept sys", timestamp=1),
        e("u2", "message", "s2", message=user("two")),
        e("e2", "context_edit", "u2", targetId="u2", replacement={"content": "ED2"}),
        e("c1", "compaction", "e2", summary="SUM", firstKeptEntryId="a1", tokensBefore=10,
          systemMessage={"role": "system", "content": "snap", "timestamp": 7}),
        system("s3", "c1", content="after", timestamp=1),
        e("u3", "message", "s3", message=user("three")),
        e("e3", "context_edit", "u3", targetId="a1", replacement={"content": "A-ED"}),
    ],
    # nested and self-referencing compactions, edits of entries whose content cannot change
    "nested": [
        e("u1", "message", None, message=user("hello")),
        e("a1", "message", "u1", message=assistant("x")),
        e("c1", "compaction", "a1", summary="SUM", firstKeptEntryId="a1", tokensBefore=10),
        e("u2", "message", "c1", message=user("two")),
        e("c2", "compaction", "u2", summary="SUM2", firstKeptEntryId="a1", tokensBefore=10),
        e("bs", "branch_summary", "c2", fromId="u1", summary=""),
        e("bs2", "branch_summary", "bs", fromId="u1", summary="B"),
        e("e9", "context_edit", "bs2", targetId="bs2", replacement={"content": "x"}),
        e("bm", "message", "e9", message={"role": "bashExecution", "command": "ls", "output": "o", "exitCode": 0,
                                          "cancelled": False, "truncated": False, "timestamp": 1}),
        e("e8", "context_edit", "bm", targetId="bm", replacement={"content": "x"}),
        e("cu", "message", "e8", message={"role": "custom", "customType": "t", "content": "c", "display": True, "timestamp": 1}),
        e("e7", "context_edit", "cu", targetId="cu", replacement={"content": "x"}),
        e("tr", "message", "e7", message={"role": "toolResult", "toolCallId": "t", "toolName": "read",
                                          "content": [{"type": "text", "text": "r"}], "isError": False, "timestamp": 1}),
        e("e6", "context_edit", "tr", targetId="tr", replacement={"content": "x"}),
        e("c3", "compaction", "e6", summary="SELF", firstKeptEntryId="c3", tokensBefore=10),
        e("u9", "message", "c3", message=user("after self")),
    ],
    # usage from before the last edit is not trusted by the projected estimate
    "stale_usage": [
        e("u1", "message", None, message=user("x" * 4000)),
        e("a1", "message", "u1", message=assistant("y", total=190000)),
        e("e1", "context_edit", "a1", targetId="u1", replacement={"content": "[elided]"}),
        e("u2", "message", "e1", message=user("next")),
    ],
    # an omitted compaction, an omitted system message, a replaced-then-omitted target
    "omit_compaction": [
        system("s1", None, content="base", sections={"a": "A"}, timestamp=4),
        e("u1", "message", "s1", message=user("hello")),
        e("a1", "message", "u1", message=assistant("hi")),
        e("c1", "compaction", "a1", summary="SUM", firstKeptEntryId="u1", tokensBefore=10,
          systemMessage={"role": "system", "content": "snap", "sections": {"a": "A2"}, "timestamp": 7}),
        e("e1", "context_edit", "c1", targetId="c1", replacement=None),
        e("e2", "context_edit", "e1", targetId="a1", replacement={"content": "A"}),
        e("e3", "context_edit", "e2", targetId="a1", replacement=None),
        system("s2", "e3", content="", sections={"a": None, "b": "B"}, timestamp=9),
        e("e4", "context_edit", "s2", targetId="s2", replacement=None),
        e("u2", "message", "e4", message={"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}], "timestamp": 3}),
    ],
}
