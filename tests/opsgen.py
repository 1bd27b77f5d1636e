"""SessionManager scripts (pi-oracle ``ops``) for pi 1.6: a random script
generator, a runner that plays a script on our :class:`SessionManager` and
prints what the oracle prints, and the normalization both are compared under.

Used by tests/tools/make_ops_goldens.py (goldens), tests/test_manager_conformance.py
(goldens) and tests/test_manager_oracle.py (live oracle).

A script is ``{"cwd", "persist", "ops": [[methodName, *args], ...]}`` plus,
for pi 1.6, ``"id"`` (session id option), ``"entries"`` (records an
in-memory session starts from) and ``"open"`` (a session file; a copy is
opened and the ops run on it). ``"@N"`` is op N's result (the id when it is
an entry), ``"@leaf"`` the current leaf.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

from pi_session import SessionManager, parse_session_entries
from pi_session.session import context as ctx_mod
from pi_session.storage import LeafMovedError

USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
USER = {"role": "user", "content": "hi", "timestamp": 1}
ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "a", "provider": "p", "model": "m",
             "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "stopReason": "stop", "timestamp": 5}
TOOL_ASSISTANT = {**ASSISTANT, "content": [{"type": "text", "text": "reading"},
                                           {"type": "toolCall", "id": "call1", "name": "read", "arguments": {"path": "a.py"}}],
                  "stopReason": "toolUse", "timestamp": 6}
TOOL_RESULT = {"role": "toolResult", "toolCallId": "call1", "toolName": "read", "content": [{"type": "text", "text": "file"}],
               "isError": False, "timestamp": 7}
BASH = {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0, "cancelled": False, "truncated": False,
        "timestamp": 8}
CUSTOM_ROLE = {"role": "custom", "customType": "ext", "content": "custom text", "display": True, "timestamp": 9}
SYSTEM = {"role": "system", "content": "", "sections": {"preamble": "P", "tools": "<tools>\nT\n</tools>"},
          "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}], "timestamp": 2}
SYSTEM_PATCH = {"role": "system", "content": "extra rules", "sections": {"preamble": None, "later": "L"},
                "toolsRemoved": [{"name": "read"}],
                "toolsAdded": [{"name": "bash", "description": "b", "parameters": {"type": "object"}}], "timestamp": 3}
SYSTEM_TOOLS_ONLY = {"role": "system", "content": "", "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}],
                     "timestamp": 4}

_TS = "2026-11-30T12:00:00.000Z"
RECORDS = [
    {"type": "session", "version": 3, "id": "0195e0e0-0000-7000-8000-00000000000a", "timestamp": _TS, "cwd": "/r"},
    {"type": "message", "id": "r0000001", "parentId": None, "timestamp": _TS, "message": SYSTEM},
    {"type": "message", "id": "r0000002", "parentId": "r0000001", "timestamp": _TS, "message": USER},
    {"type": "context_edit", "id": "r0000003", "parentId": "r0000002", "timestamp": _TS, "targetId": "r0000002",
     "replacement": {"content": "edited"}},
    {"type": "message", "id": "r0000004", "parentId": "r0000003", "timestamp": _TS, "message": ASSISTANT},
]
"""Records an in-memory script may start from (``"entries"``), header first."""

# ops whose result is an entry id (or entry) and that never fail: safe "@N" targets
_SAFE = {"appendMessage", "appendThinkingLevelChange", "appendModelChange", "appendCustomEntry", "appendCustomMessageEntry",
         "appendSessionInfo", "appendUsage", "appendCompaction"}


def random_ops16(r: random.Random, *, max_ops: int = 30) -> dict:
    """A random pi 1.6 SessionManager script: every append (system messages,
    context edits, usage, compactions with a null first-kept entry and
    usage, branch summaries with usage), navigation and branching, and
    the 1.6 read methods. ``r`` is any ``random.Random`` (hypothesis'
    ``st.randoms()`` too)."""
    ops: list[list] = []
    safe: list[int] = []
    t = 1_760_000_000_000

    def ref() -> str:
        return f"@{r.choice(safe)}" if safe else "nope"

    for _ in range(r.randint(1, max_ops)):
        t += r.randint(1, 10_000)
        k = r.random()
        if not safe or k < 0.18:
            op = ["appendMessage", {"role": "user", "content": r.choice(["hi", "fix the bug", [{"type": "text", "text": "blocks ü 😀"}]]), "timestamp": t}]
        elif k < 0.32:
            content: list = [{"type": "text", "text": "answer " * r.randint(1, 5)}]
            if r.random() < 0.4:
                content.append({"type": "toolCall", "id": f"c{t}", "name": "read", "arguments": {"path": f"f{r.randint(1, 3)}.py"}})
            op = ["appendMessage", {**ASSISTANT, "content": content, "provider": r.choice(["p", "q"]), "model": r.choice(["m1", "m2"]),
                                    "usage": {**ASSISTANT["usage"], "totalTokens": r.choice([0, 50, 900])}, "timestamp": t}]
        elif k < 0.38:
            op = ["appendMessage", {**TOOL_RESULT, "toolCallId": f"c{t}", "timestamp": t}]
        elif k < 0.44:
            op = ["appendMessage", r.choice([SYSTEM, SYSTEM_PATCH, SYSTEM_TOOLS_ONLY, {"role": "system", "content": "more", "timestamp": 5}])]
        elif k < 0.47:
            op = ["appendMessage", r.choice([BASH, CUSTOM_ROLE])]
        elif k < 0.50:
            op = ["appendCustomMessageEntry", "note", r.choice(["plain", [{"type": "text", "text": "block"}]]), r.random() < 0.5]
        elif k < 0.62:
            replacement = r.choice([None, {"content": "edited"}, {"content": [{"type": "text", "text": "edited block"}]},
                                    {"content": 3}, {"text": "x"}])
            op = ["appendContextEdit", r.choice([ref(), ref(), "@leaf", "nope"]), replacement]
        elif k < 0.67:
            op = ["appendUsage", "cache_warm", "anthropic", "m", USAGE, *r.choice([[], ["note"], [""]])]
        elif k < 0.72:
            extra = r.choice([[], [{"readFiles": ["a"], "modifiedFiles": []}], [None, True, USAGE]])
            op = ["appendCompaction", "summary", r.choice([None, ref()]), r.randint(1, 5000), *extra]
        elif k < 0.77:
            op = ["branchWithSummary", r.choice([None, ref()]), r.choice(["left", ""]), *r.choice([[], [None, False, USAGE]])]
        elif k < 0.83:
            op = ["branch", ref()]
        elif k < 0.85:
            op = ["resetLeaf"]
        elif k < 0.88:
            op = ["appendLabelChange", ref(), r.choice(["mark", ""])]
        elif k < 0.90:
            op = ["appendThinkingLevelChange", r.choice(["low", "high"])]
        elif k < 0.92:
            op = ["appendModelChange", "openai", r.choice(["gpt-5", "gpt-4.1"])]
        elif k < 0.94:
            op = ["appendSessionInfo", r.choice([" a\r\nb ", "\n", "name"])]
        elif k < 0.97:
            op = [r.choice(["buildSessionProjection", "buildContextEntries", "getEntryCount"])]
        else:
            op = ["createBranchedSession", r.choice([ref(), "@leaf"])]
        ops.append(op)
        if op[0] in _SAFE:
            safe.append(len(ops) - 1)
    if r.random() < 0.5:
        ops.append(["buildSessionProjection"])
    spec: dict[str, Any] = {"cwd": "/work/project", "persist": r.random() < 0.7, "ops": ops}
    if r.random() < 0.2:
        spec["id"] = r.choice(["s1", "my.session_2", "A-b"])
    if not spec["persist"] and r.random() < 0.4:
        spec["entries"] = r.choice([RECORDS, RECORDS[1:], RECORDS[2:4]])
    return compactions_on_path(spec)


def compactions_on_path(spec: dict) -> dict:
    """``spec`` with every ``appendCompaction`` that keeps an entry keeping
    the leaf instead (``"@leaf"``: on the path it is appended to). A random
    reference may name an entry of another branch, which pi writes (the
    context becomes the summary alone) and pi-session refuses
    (``FirstKeptOffPathError``; the golden ``compaction-off-path`` holds
    that difference)."""
    for op in spec["ops"]:
        if op[0] == "appendCompaction" and op[2] is not None:
            op[2] = "@leaf"
    return spec


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _projection_json(projection: dict) -> list:
    return ctx_mod.projection_to_json(projection)


def run_ops(spec: dict, tmp_path: Path, base: Path | None = None) -> dict:
    """Play ``spec`` on our SessionManager in ``tmp_path`` (its session
    directory); the result has the oracle's ``ops`` shape (``{"error"}``
    when the manager cannot be made). ``base``: where a relative ``open``
    path is found."""
    cwd = spec.get("cwd", "/work")
    try:
        if spec.get("open") is not None:
            source = Path(spec["open"])
            if not source.is_absolute() and base is not None:
                source = base / source
            copy = tmp_path / source.name
            shutil.copyfile(source, copy)
            sm = SessionManager.open(copy, tmp_path)
        elif spec.get("persist"):
            sm = SessionManager.create(cwd, tmp_path, id=spec.get("id"))
        else:
            sm = SessionManager.in_memory(cwd, spec.get("entries"), id=spec.get("id"))
    except Exception as exc:  # noqa: BLE001 - reported like the oracle's batch does
        return {"error": str(exc)}
    results: list[Any] = []

    def resolve(arg: Any) -> Any:
        if arg == "@leaf":
            return sm.get_leaf_id()
        if isinstance(arg, str) and re.fullmatch(r"@\d+", arg):
            value = results[int(arg[1:])]
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                return value["id"]
            return value
        return arg

    for name, *args in spec["ops"]:
        method = getattr(sm, _snake(name))
        values = [resolve(a) for a in args]
        try:
            if name == "newSession":
                value = method(**{_snake(k): v for k, v in (values[0] if values else {}).items()})
            else:
                value = method(*values)
            if name == "buildSessionProjection":
                value = dict(value)
            results.append(str(value) if isinstance(value, Path) else value)
        except (KeyError, ValueError, TypeError, LeafMovedError) as exc:
            results.append({"error": exc.args[0] if isinstance(exc, KeyError) else str(exc)})
    files = {}
    text = {}
    for f in sorted(tmp_path.glob("*.jsonl")):
        text[f.name] = f.read_text()
        files[f.name] = parse_session_entries(text[f.name])
    ctx = sm.build_session_context()
    return {
        "results": results,
        "leafId": sm.get_leaf_id(),
        "header": sm.get_header(),
        "entries": sm.get_entries(),
        "context": {"thinkingLevel": ctx.get("thinkingLevel"), "model": ctx["model"], "messages": ctx["messages"]},
        "files": files,
        "fileText": text,
        "projection": _projection_json(sm.build_session_projection()),
    }


_ID = re.compile(r"^[0-9a-f]{8}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_NOW_MS = 10**12  # message times this large were stamped "now" (ops scripts use small ones)
_STAMPED_ROLES = ("compactionSummary", "branchSummary", "custom", "system")


def error_kind(message: str) -> str:
    """pi's and our error messages differ in words; compare what they say."""
    m = message.lower()
    if "replacement" in m:
        return "<bad replacement>"
    if "not on the" in m:
        return "<not on the branch>"
    if "editable" in m or "cannot be edited" in m:
        return "<not editable>"
    if "session id" in m:
        return "<bad session id>"
    if "not a valid" in m or "not a pi session" in m:
        return "<not a session>"
    if "not found" in m:
        return "<not found>"
    return message


PROCESS_CWD = "<process-cwd>"
"""Placeholder for the cwd of the process that made a golden or runs a test."""


def normalize(out: dict) -> dict:
    """Ids → E0, E1, ... in order of first appearance; ISO times, "now"
    message times, file paths and generated session ids → placeholders;
    error messages → their kind (:func:`error_kind`)."""
    if "error" in out and "results" not in out:
        return {"error": error_kind(str(out["error"]))}
    mapping: dict[str, str] = {}

    def walk(v: Any, key: str | None = None) -> Any:
        if isinstance(v, dict):
            if set(v) == {"error"} and isinstance(v["error"], str):
                return {"error": error_kind(v["error"])}
            if v.get("role") in _STAMPED_ROLES and isinstance(v.get("timestamp"), int) and v["timestamp"] >= _NOW_MS:
                v = {**v, "timestamp": "<ms>"}
            return {k: walk(x, k) for k, x in v.items() if k != "parentSession"}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, str):
            if key == "cwd" and v == os.getcwd():
                # an empty file's new header takes the process's cwd, which is
                # wherever the tests run (the goldens store PROCESS_CWD)
                return PROCESS_CWD
            if _ID.match(v):
                return mapping.setdefault(v, f"E{len(mapping)}")
            if _ISO.match(v):
                return "<ts>"
            if v.endswith(".jsonl"):
                return "<file>"
            if _UUID.match(v):
                return "<session-id>"
        return v

    ordered = {k: out[k] for k in ("results", "leafId", "entries", "context", "header", "projection") if k in out}
    normalized = walk(ordered)
    # files in a content order (names hold creation times, which may fall
    # in different milliseconds on the two sides)
    files = [walk(lines) for _, lines in sorted(out["files"].items())]
    normalized["files"] = sorted(files, key=lambda f: json.dumps(f, sort_keys=True))
    return normalized
