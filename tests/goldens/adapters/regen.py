"""Regenerate the adapter goldens from the pi oracle (needs node).

    python tests/goldens/adapters/regen.py

Writes, next to this file:

* ``<fixture>.entries.json``: ``pi-oracle entries`` of the two real pi
  fixtures (v1, migrated by the oracle), with every long string cut to 60
  characters + "…" (ids, roles, types, timestamps and names are kept) so the
  files stay small; the message structure (roles, tool call ids, stop
  reasons, empty vs non-empty content) is unchanged.
* ``contexts.json``: for each fixture, ``pi-oracle context --leaf ID`` at a
  set of leaves, reduced to a skeleton (role, stopReason, tool call ids;
  stored as count + sha256, and in full for the default leaf), so the tests can check our ``build_session_context`` over the committed
  entries gives the oracle's contexts before feeding them to the adapters.
* ``cut_scenarios.json``: small hand-built sessions where pi's
  ``findCutPoint``/``prepareCompaction`` (oracle ``prepare``) keep a tool
  result without its call, or a call without its result; each holds the
  entries with the compaction the oracle chose appended, the oracle's cut,
  and the oracle's context skeleton after the compaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ORACLE = os.environ.get("PI_ORACLE", "/work/shared/pi-oracle/pi-oracle")
FIXTURES = Path("/work/shared/fixtures/pi")
LIMIT = 60
KEEP_KEYS = {
    "id", "parentId", "toolCallId", "firstKeptEntryId", "targetId", "fromId", "type", "role",
    "stopReason", "timestamp", "mimeType", "name", "toolName", "provider", "model", "api",
    "modelId", "thinkingLevel", "customType", "version", "cwd",
}  # fmt: skip


def oracle(*args: str) -> Any:
    proc = subprocess.run([ORACLE, *args], capture_output=True, check=True)
    return json.loads(proc.stdout)


def shrink(value: Any, key: str | None = None) -> Any:
    if isinstance(value, str):
        if key in KEEP_KEYS or len(value) <= LIMIT:
            return value
        return value[:LIMIT] + "…"
    if isinstance(value, list):
        return [shrink(v) for v in value]
    if isinstance(value, dict):
        return {k: ("sig" if k.endswith("Signature") else shrink(v, k)) for k, v in value.items()}
    return value


def skeleton(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.get("role")}
        if m.get("role") == "assistant":
            item["stopReason"] = m.get("stopReason")
            item["toolCalls"] = [b.get("id") for b in m.get("content", []) if b.get("type") == "toolCall"]
        elif m.get("role") == "toolResult":
            item["toolCallId"] = m.get("toolCallId")
        out.append(item)
    return out


def skeleton_line(item: dict[str, Any]) -> str:
    """One message of a skeleton as a short string: ``assistant:toolUse:id1,id2``,
    ``toolResult:id`` or the role."""
    if item["role"] == "assistant":
        return f"assistant:{item['stopReason']}:{','.join(item['toolCalls'])}"
    if item["role"] == "toolResult":
        return f"toolResult:{item['toolCallId']}"
    return str(item["role"])


def compact_contexts(skeletons: dict[str, list[dict[str, Any]]], default_leaf: str) -> dict[str, Any]:
    """``{leaf: {"count", "sha256"}}`` per leaf (sha256 of the skeleton lines
    joined by newlines), plus the full lines for the default leaf."""
    out: dict[str, Any] = {}
    for leaf, sk in skeletons.items():
        lines = [skeleton_line(x) for x in sk]
        entry: dict[str, Any] = {"count": len(lines), "sha256": hashlib.sha256("\n".join(lines).encode()).hexdigest()}
        if leaf == default_leaf:
            entry["lines"] = lines
        out[leaf] = entry
    return out


def pick_leaves(entries: list[dict[str, Any]]) -> list[str]:
    """Default leaf, each compaction and the entry before it, the first few
    assistant messages that stop for tool use (mid-turn leaves: calls not
    answered yet), aborted/errored assistants, and every 97th entry."""
    ids: list[str] = [entries[-1]["id"]]
    for i, e in enumerate(entries):
        msg = e.get("message") or {}
        if e["type"] == "compaction":
            ids += [entries[i - 1]["id"], e["id"]]
        elif msg.get("role") == "assistant" and msg.get("stopReason") in ("aborted", "error"):
            ids.append(e["id"])
        elif i % 97 == 0:
            ids.append(e["id"])
    tool_use = [e["id"] for e in entries if (e.get("message") or {}).get("stopReason") == "toolUse"]
    ids += tool_use[:3] + tool_use[-3:]
    seen: set[str] = set()
    return [x for x in ids if not (x in seen or seen.add(x))]


# --- hand-built sessions for the findCutPoint investigation ----------------

HEADER = {"type": "session", "version": 3, "id": "00000000-0000-4000-8000-000000000000",
          "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/tmp/x"}  # fmt: skip
BIG = "x" * 400
USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip


class Builder:
    def __init__(self) -> None:
        self.n = 0
        self.entries: list[dict[str, Any]] = []

    def _ts(self) -> tuple[str, int]:
        self.n += 1
        return f"2025-01-01T00:00:{self.n:02d}.000Z", 1735689600000 + self.n * 1000

    def add(self, eid: str, parent: str | None, **fields: Any) -> None:
        iso, _ = self._ts()
        self.entries.append({"id": eid, "parentId": parent, "timestamp": iso, **fields})

    def msg(self, eid: str, parent: str | None, message: dict[str, Any]) -> None:
        iso, ms = self._ts()
        self.entries.append({"type": "message", "id": eid, "parentId": parent, "timestamp": iso,
                             "message": {**message, "timestamp": ms}})  # fmt: skip

    def user(self, eid: str, parent: str | None, text: str) -> None:
        self.msg(eid, parent, {"role": "user", "content": text})

    def assistant(self, eid: str, parent: str | None, text: str | None, calls=(), stop: str | None = None) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": "/tmp/f"}} for c in calls]
        self.msg(eid, parent, {"role": "assistant", "content": content, "api": "anthropic-messages",
                               "provider": "anthropic", "model": "m", "usage": USAGE,
                               "stopReason": stop or ("toolUse" if calls else "stop")})  # fmt: skip

    def result(self, eid: str, parent: str | None, call: str) -> None:
        self.msg(eid, parent, {"role": "toolResult", "toolCallId": call, "toolName": "read",
                               "content": [{"type": "text", "text": "contents"}], "isError": False})  # fmt: skip

    def bash(self, eid: str, parent: str | None) -> None:
        self.msg(eid, parent, {"role": "bashExecution", "command": "ls", "output": BIG, "exitCode": 0,
                               "cancelled": False, "truncated": False})  # fmt: skip


def scenarios() -> list[dict[str, Any]]:
    out = []

    b = Builder()  # a user message between a call and its result (steering written out of order)
    b.user("u1", None, "start " + BIG)
    b.assistant("a1", "u1", None, ["t1"])
    b.user("u2", "a1", "steer " + BIG)
    b.result("r1", "u2", "t1")
    b.assistant("a2", "r1", "done")
    out.append({"name": "user_between_call_and_result", "keep": 100, "entries": b.entries,
                "description": "cut at the user message u2 keeps toolResult t1 whose call a1 is summarized"})  # fmt: skip

    b = Builder()  # a bashExecution message entry between a call and its result
    b.user("u1", None, "start " + BIG)
    b.assistant("a1", "u1", "reading", ["t1"])
    b.bash("b1", "a1")
    b.result("r1", "b1", "t1")
    b.assistant("a2", "r1", "done")
    b.user("u2", "a2", "next")
    b.assistant("a3", "u2", "ok")
    out.append({"name": "bash_between_call_and_result", "keep": 100, "entries": b.entries,
                "description": "cut at bashExecution b1 (split turn) keeps toolResult t1 without its call"})  # fmt: skip

    b = Builder()  # an aborted assistant message with a call is the cut point
    b.user("u1", None, "start " + BIG)
    b.assistant("a1", "u1", "let me look", ["t1"], stop="aborted")
    b.user("u2", "a1", "continue " + BIG)
    b.assistant("a2", "u2", "ok")
    out.append({"name": "aborted_call_kept", "keep": 110, "entries": b.entries,
                "description": "cut at the aborted assistant a1 keeps its call t1, which never got a result"})  # fmt: skip

    b = Builder()  # two compactions: the orphan kept by the first survives the second
    b.user("u1", None, "start " + BIG)
    b.assistant("a1", "u1", None, ["t1"])
    b.user("u2", "a1", "steer " + BIG)
    b.result("r1", "u2", "t1")
    b.assistant("a2", "r1", "done")
    out.append({"name": "chained_compactions", "keep": 100, "keep2": 400, "entries": b.entries,
                "description": "second compaction (keep 400) starts again at u2: toolResult t1 stays orphaned"})  # fmt: skip

    b = Builder()  # compaction whose firstKeptEntryId names a tool result (extension-supplied)
    b.user("u1", None, "start")
    b.assistant("a1", "u1", None, ["t1", "t2"])
    b.result("r1", "a1", "t1")
    b.result("r2", "r1", "t2")
    b.assistant("a2", "r2", "done")
    b.add("k1", "a2", type="compaction", summary="S", firstKeptEntryId="r2", tokensBefore=100, fromHook=True)
    b.user("u2", "k1", "next")
    out.append({"name": "hook_compaction_keeps_result", "keep": None, "entries": b.entries,
                "description": "an extension-supplied compaction keeps from toolResult r2: t2 is orphaned"})  # fmt: skip

    b = Builder()  # tree navigation back to an assistant with calls, then a new prompt
    b.user("u1", None, "start")
    b.assistant("a1", "u1", None, ["t1"])
    b.result("r1", "a1", "t1")
    b.assistant("a2", "r1", "done")
    b.user("u2", "a1", "do something else")
    out.append({"name": "branch_from_assistant_with_calls", "keep": None, "entries": b.entries,
                "description": "the new branch u2 hangs off a1; its result r1 is on the old branch"})  # fmt: skip
    return out


def compacted(tmp: Path, name: str, entries: list[dict[str, Any]], keep: int, n: int) -> tuple[list, dict]:
    path = tmp / f"{name}-{n}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [HEADER, *entries]))
    prep = oracle("prepare", str(path), "--keep", str(keep))
    comp = {"type": "compaction", "id": f"k{n}", "parentId": entries[-1]["id"],
            "timestamp": f"2025-01-01T00:1{n}:00.000Z", "summary": f"S{n}",
            "firstKeptEntryId": prep["firstKeptEntryId"], "tokensBefore": prep["tokensBefore"]}  # fmt: skip
    cut = {"firstKeptEntryId": prep["firstKeptEntryId"], "isSplitTurn": prep["isSplitTurn"]}
    return [*entries, comp], cut


def main() -> None:
    if not shutil.which("node"):
        raise SystemExit("node is needed to run the oracle")
    contexts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for name in ("before-compaction", "large-session"):
            src = tmp / f"{name}.jsonl"
            shutil.copyfile(FIXTURES / f"{name}.jsonl", src)
            data = oracle("entries", str(src))
            data.pop("onDisk", None)
            entries = data["entries"]
            (HERE / f"{name}.entries.json").write_text(json.dumps(shrink(data), ensure_ascii=False) + "\n")
            # v1 ids are random per open: query the migrated (v3) entries from now on.
            v3 = tmp / f"{name}.v3.jsonl"
            v3.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [data["header"], *entries]))
            contexts[name] = {}
            for leaf in pick_leaves(entries):
                ctx = oracle("context", str(v3), "--leaf", leaf)
                contexts[name][leaf] = skeleton(ctx["messages"])
            contexts[name] = compact_contexts(contexts[name], data["leafId"])
        (HERE / "contexts.json").write_text(json.dumps(contexts, indent=1) + "\n")
        # (each leaf: count + sha256 of its skeleton; the default leaf also lists it)

        out = []
        for sc in scenarios():
            entries = sc["entries"]
            cuts = []
            if sc["keep"] is not None:
                entries, cut = compacted(tmp, sc["name"], entries, sc["keep"], 1)
                cuts.append(cut)
            if "keep2" in sc:
                b = Builder()
                b.n = 30
                b.user("u3", entries[-1]["id"], "more " + BIG)
                b.assistant("a3", "u3", "fine")
                entries, cut = compacted(tmp, sc["name"], entries + b.entries, sc["keep2"], 2)
                cuts.append(cut)
            path = tmp / f"{sc['name']}.json"
            path.write_text(json.dumps(entries))
            ctx = oracle("build-context-entries", str(path))
            out.append({"name": sc["name"], "description": sc["description"], "cuts": cuts,
                        "entries": entries, "context": skeleton(ctx["messages"])})  # fmt: skip
        (HERE / "cut_scenarios.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
