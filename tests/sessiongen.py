"""Deterministic generator of realistic pi session files (version 3) for tests.

``generate_session(seed, ...)`` returns ``(header, entries)``: plain dicts as pi
writes them. Everything is derived from ``random.Random(seed)``, so the same
seed always gives the same file (goldens stay valid). What it produces:

- turns of a user message, assistant messages with text / thinking / tool
  calls (read, write, edit, bash, ls; arguments with floats like ``1.0``,
  non-ASCII, astral characters, integer-like keys) and their tool results
  (short, long > 2000 UTF-16 units, images, errors);
- assistant messages with and without ``usage``, and with stopReason
  ``stop`` / ``toolUse`` / ``aborted`` / ``error`` (+ errorMessage);
- bashExecution messages (some ``excludeFromContext``), custom_message
  entries (string or blocks with images), custom, label, session_info,
  model_change and thinking_level_change entries;
- compaction entries (chained; details, some ``fromHook``; firstKeptEntryId on
  the path, occasionally pointing elsewhere), branches (the leaf jumps back to
  an earlier entry) and branch_summary entries (with details, some fromHook,
  some with an empty summary).

With ``pi16=True`` it also writes what pi 1.6 adds (drawn from a second
random stream, so sessions without it are unchanged): ``system`` messages
(a first one with sections and tools, later patches), ``context_edit``
entries (omit / string / blocks; targets on the path, off the path, in a
summarized part, missing), ``usage`` entries, assistants with all-zero
usage, tool results with ``nestedCalls``, compactions with ``systemMessage``,
``usage`` and a self-referencing ``firstKeptEntryId``, branch summaries with
``usage``.

``write_session(path, header, entries)`` writes the JSONL file.
Run ``python tests/sessiongen.py OUT_DIR N`` to write N sessions.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from pi_session.core import jsonio

__all__ = ["generate_session", "write_session", "session_text"]

_WORDS = (
    "refactor the parser so it handles nested blocks and keeps line numbers intact "
    "check the failing test in storage module then fix the off by one error "
    "naïve café über straße 日本語 テキスト emoji 🎉 🚀 𝒳 done quickly please"
).split()
_PATHS = [
    "src/main.ts",
    "src/parser.py",
    "README.md",
    "src/utils/strings.ts",
    "tests/test_parser.py",
    "docs/guide.md",
    "src/ünïcode/файл.py",
    "src/🎉/party.ts",
    "package.json",
]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.t = 1_765_000_000_000 + self.r.randrange(10**8)
        self.ids: set[str] = set()

    # -- primitives --------------------------------------------------------

    def new_id(self) -> str:
        while True:
            value = f"{self.r.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def tick(self) -> int:
        self.t += self.r.randrange(50, 90_000)
        return self.t

    def iso(self, ms: int) -> str:
        import datetime as _dt

        dt = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def text(self, lo: int, hi: int) -> str:
        n = self.r.randint(lo, hi)
        return " ".join(self.r.choice(_WORDS) for _ in range(n))

    def long_text(self) -> str:
        # Longer than the 2000-unit tool result limit; sometimes with astral
        # characters so that the cut can land inside a surrogate pair.
        base = self.text(300, 700)
        if self.r.random() < 0.5:
            base = "🎉" * self.r.randint(900, 1100) + base
        return base

    def usage(self) -> dict[str, Any]:
        inp = self.r.randint(0, 30_000)
        out = self.r.randint(0, 2_000)
        cr = self.r.choice([0, 0, self.r.randint(0, 50_000)])
        cw = self.r.choice([0, self.r.randint(0, 5_000)])
        total = inp + out + cr + cw
        if self.r.random() < 0.15:
            total = 0  # forces the input+output+cacheRead+cacheWrite fallback
        return {
            "input": inp,
            "output": out,
            "cacheRead": cr,
            "cacheWrite": cw,
            "totalTokens": total,
            "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
        }

    def tool_args(self, name: str) -> dict[str, Any]:
        path = self.r.choice(_PATHS)
        r = self.r.random()
        if name == "read":
            args: dict[str, Any] = {"path": path}
            if r < 0.3:
                args["offset"] = self.r.choice([1.0, 10, 2.5, 100.0])
                args["limit"] = 50
        elif name == "write":
            args = {"path": path, "content": self.text(5, 60)}
        elif name == "edit":
            args = {"path": path, "oldText": self.text(2, 8), "newText": self.text(2, 8)}
        elif name == "bash":
            args = {"command": f"grep -rn '{self.r.choice(_WORDS)}' src | head", "timeout": self.r.choice([30, 1e21, 0.5])}
        else:
            args = {"path": self.r.choice(["", ".", path])}
        if r > 0.9:
            args["2"] = "integer-like key"
            args["1"] = {"nested": [1.0, -0.0, 1e-7, True, None], "10": "x"}
        return args

    # -- messages ----------------------------------------------------------

    def user_msg(self) -> dict[str, Any]:
        ts = self.tick()
        if self.r.random() < 0.3:
            content: Any = self.text(3, 40)
        else:
            content = [{"type": "text", "text": self.text(3, 60)}]
            if self.r.random() < 0.2:
                content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
            if self.r.random() < 0.2:
                content.append({"type": "text", "text": self.text(1, 10)})
        return {"role": "user", "content": content, "timestamp": ts}

    def assistant_msg(self, tool_calls: list[dict[str, Any]], stop: str | None = None) -> dict[str, Any]:
        ts = self.tick()
        content: list[dict[str, Any]] = []
        if self.r.random() < 0.4:
            content.append({"type": "thinking", "thinking": self.text(5, 80), "thinkingSignature": "sig"})
        if self.r.random() < 0.8 or not tool_calls:
            content.append({"type": "text", "text": self.text(2, 120)})
        if self.r.random() < 0.1:
            content.append({"type": "thinking", "thinking": self.text(1, 10)})
        content.extend(tool_calls)
        if stop is None:
            stop = "toolUse" if tool_calls else "stop"
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": self.r.choice(["anthropic", "openai"]),
            "model": self.r.choice(["claude-sonnet-4-5", "gpt-5"]),
        }
        if self.r.random() < 0.85:
            msg["usage"] = self.usage()
        msg["stopReason"] = stop
        if stop == "error":
            msg["errorMessage"] = "overloaded_error: server busy"
        msg["timestamp"] = ts
        return msg

    def tool_result(self, call: dict[str, Any]) -> dict[str, Any]:
        ts = self.tick()
        r = self.r.random()
        if r < 0.15:
            content = [{"type": "text", "text": self.long_text()}]
        elif r < 0.25:
            content = [
                {"type": "text", "text": "Read image file [image/png]"},
                {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg==", "mimeType": "image/png"},
            ]
        elif r < 0.3:
            content = []
        else:
            content = [{"type": "text", "text": self.text(1, 150)}]
            if self.r.random() < 0.2:
                content.append({"type": "text", "text": self.text(1, 20)})
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": content,
            "isError": self.r.random() < 0.1,
        }
        if self.r.random() < 0.3:
            msg["details"] = {"diff": "+ added\n- removed"}
        msg["timestamp"] = ts
        return msg

    def bash_msg(self) -> dict[str, Any]:
        ts = self.tick()
        msg: dict[str, Any] = {
            "role": "bashExecution",
            "command": self.r.choice(["ls -la", "git status", "npm test", "echo 🎉"]),
            "output": self.r.choice(["", self.text(1, 80), self.long_text()]),
            "exitCode": self.r.choice([0, 0, 1, None]),
            "cancelled": self.r.random() < 0.1,
            "truncated": self.r.random() < 0.2,
            "timestamp": ts,
        }
        if msg["truncated"]:
            msg["fullOutputPath"] = "/tmp/pi-bash-output.log"
        if self.r.random() < 0.2:
            msg["excludeFromContext"] = True
        return msg


def generate_session(
    seed: int,
    *,
    turns: int | None = None,
    compactions: bool = True,
    branches: bool = True,
    cwd: str = "/work/project",
    pi16: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Generate one session.

    Args:
        seed: the random seed (same seed, same session).
        turns: number of user turns (default: random 3..25).
        compactions: allow compaction entries.
        branches: allow the leaf to jump back (branches, branch summaries).
        cwd: the header's cwd.
        pi16: also write pi 1.6's entries and fields (see the module doc).

    Returns:
        ``(header, entries)`` with entries in file order; the last entry is
        the leaf pi will pick on open.
    """
    g = _Gen(seed)
    r = g.r
    start = g.tick()
    header = {
        "type": "session",
        "version": 3,
        "id": f"{r.getrandbits(32):08x}-0000-4000-8000-{r.getrandbits(48):012x}",
        "timestamp": g.iso(start),
        "cwd": cwd,
    }
    entries: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    leaf: str | None = None

    def path_ids(leaf_id: str | None) -> list[str]:
        out = []
        seen = set()
        while leaf_id and leaf_id in by_id and leaf_id not in seen:
            seen.add(leaf_id)
            out.append(leaf_id)
            leaf_id = by_id[leaf_id].get("parentId")
        out.reverse()
        return out

    def append(etype: str, **fields: Any) -> str:
        nonlocal leaf
        eid = g.new_id()
        ms = g.t
        entry = {"type": etype, "id": eid, "parentId": leaf, "timestamp": g.iso(ms), **fields}
        entries.append(entry)
        by_id[eid] = entry
        leaf = eid
        return eid

    def message(msg: dict[str, Any]) -> str:
        g.t = max(g.t, msg["timestamp"])
        return append("message", message=msg)

    r16 = random.Random(seed * 7919 + 16)

    def usage16() -> dict[str, Any]:
        n = r16.randint(0, 5000)
        return {"input": n, "output": 7, "cacheRead": 0, "cacheWrite": 0, "totalTokens": n + 7,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def system16(first: bool) -> dict[str, Any]:
        g.tick()
        msg: dict[str, Any] = {"role": "system", "content": "" if first or r16.random() < 0.5 else g.text(1, 8)}
        if first:
            msg["sections"] = {"preamble": g.text(5, 20), "tools": "<tools>\n" + g.text(3, 10) + "\n</tools>", "cwd": "<cwd>\n/x\n</cwd>"}
            msg["toolsAdded"] = [{"name": n, "description": g.text(1, 5), "parameters": {"type": "object"}} for n in ("read", "bash", "edit")]
        else:
            msg["sections"] = {r16.choice(["tools", "rules", "extra"]): r16.choice([None, g.text(1, 6)])}
            if r16.random() < 0.3:
                msg["toolsRemoved"] = [{"name": "bash"}]
            if r16.random() < 0.3:
                msg["toolsAdded"] = [{"name": "grep", "description": "g", "parameters": {}}]
        msg["timestamp"] = g.t
        return msg

    def edit16() -> None:
        on_path = path_ids(leaf)
        roll = r16.random()
        if roll < 0.05:
            target = "0badf00d"
        elif roll < 0.25 or not on_path:
            target = r16.choice([e["id"] for e in entries]) if entries else "0badf00d"
        else:
            target = r16.choice(on_path)
        kind = r16.random()
        if kind < 0.35:
            replacement: Any = None
        elif kind < 0.7:
            replacement = {"content": "[elided] " + g.text(1, 6)}
        else:
            replacement = {"content": [{"type": "text", "text": g.text(1, 10)}]}
        g.tick()
        append("context_edit", targetId=target, replacement=replacement)

    if pi16:
        message(system16(True))

    n_turns = turns if turns is not None else r.randint(3, 25)
    for turn in range(n_turns):
        if pi16 and turn:
            if r16.random() < 0.1:
                message(system16(False))
            if r16.random() < 0.1:
                g.tick()
                fields16: dict[str, Any] = {"kind": "cache_warm", "provider": "anthropic", "model": "m", "usage": usage16()}
                if r16.random() < 0.5:
                    fields16["note"] = g.text(1, 4)
                append("usage", **fields16)
            for _ in range(r16.choice([0, 0, 0, 1, 1, 2])):
                edit16()
        roll = r.random()
        # occasional non-message entries between turns
        if roll < 0.08:
            append("model_change", provider="openai", modelId=r.choice(["gpt-5", "gpt-4.1"]))
        elif roll < 0.14:
            append("thinking_level_change", thinkingLevel=r.choice(["off", "low", "high"]))
        elif roll < 0.18:
            g.tick()
            append("custom", customType="my-extension", data={"n": turn})
        elif roll < 0.21:
            g.tick()
            append("session_info", name=g.text(1, 4))
        if r.random() < 0.1:
            g.tick()
            content: Any = g.text(3, 30)
            if r.random() < 0.5:
                content = [{"type": "text", "text": g.text(3, 30)}]
                if r.random() < 0.5:
                    content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/jpeg"})
            fields: dict[str, Any] = {"customType": "note", "content": content, "display": r.random() < 0.7}
            if r.random() < 0.3:
                fields["details"] = {"source": "test"}
            append("custom_message", **fields)
        if r.random() < 0.1:
            message(g.bash_msg())
        # the turn itself (sometimes a turn starts with a bash execution only)
        if r.random() < 0.92:
            message(g.user_msg())
        steps = r.choice([0, 1, 1, 2, 3, 5])
        for step in range(steps + 1):
            calls = []
            last = step == steps
            if not last:
                for _ in range(r.choice([1, 1, 2, 3])):
                    name = r.choice(["read", "read", "write", "edit", "bash", "ls"])
                    calls.append({"type": "toolCall", "id": f"call_{g.new_id()}", "name": name, "arguments": g.tool_args(name)})
            stop = None
            if last and r.random() < 0.08:
                stop = r.choice(["aborted", "error", "length"])
            amsg = g.assistant_msg(calls, stop)
            if pi16 and "usage" in amsg and r16.random() < 0.05:
                amsg["usage"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
            message(amsg)
            for call in calls:
                if r.random() < 0.95:
                    tmsg = g.tool_result(call)
                    if pi16 and r16.random() < 0.15:
                        nested = []
                        for k in range(r16.randint(1, 3)):
                            name = r16.choice(["read", "write", "edit", "grep"])
                            c: dict[str, Any] = {"id": f"n{k}", "name": name, "status": r16.choice(["ok", "error", "unfinished"])}
                            if r16.random() < 0.8:
                                c["arguments"] = {"path": r16.choice(_PATHS)}
                            else:
                                c["argumentsBytes"] = 9000
                            nested.append(c)
                        tmsg["nestedCalls"] = {"calls": nested, "complete": True}
                    message(tmsg)
            if stop in ("aborted", "error"):
                break
        if r.random() < 0.1 and leaf:
            g.tick()
            target = r.choice(path_ids(leaf))
            append("label", targetId=target, label=r.choice(["checkpoint", "important", ""]))
        # compaction
        if compactions and r.random() < 0.15 and leaf:
            ids = path_ids(leaf)
            candidates = [i for i in ids if by_id[i]["type"] in ("message", "custom_message", "branch_summary")]
            if candidates:
                g.tick()
                first_kept = r.choice(candidates[len(candidates) // 2 :])
                if r.random() < 0.05:
                    first_kept = "deadbeef"  # not on the path: pi starts after the compaction
                details: Any = {
                    "readFiles": sorted(r.sample(_PATHS, r.randint(0, 3))),
                    "modifiedFiles": sorted(r.sample(_PATHS, r.randint(0, 2))),
                }
                fields = {
                    "summary": "## Goal\n" + g.text(5, 40),
                    "firstKeptEntryId": first_kept,
                    "tokensBefore": r.randint(1000, 200000),
                }
                if r.random() < 0.8:
                    fields["details"] = details
                if r.random() < 0.15:
                    fields["fromHook"] = True
                if pi16:
                    if r16.random() < 0.5:
                        fields["usage"] = usage16()
                    if r16.random() < 0.5:
                        fields["systemMessage"] = {"role": "system", "content": "", "sections": {"preamble": g.text(2, 8)}, "timestamp": g.t}
                cid = append("compaction", **fields)
                if pi16 and r16.random() < 0.1:
                    by_id[cid]["firstKeptEntryId"] = cid  # pi 1.6: "keep nothing"
        # branching
        if branches and r.random() < 0.15 and leaf:
            ids = path_ids(leaf)
            old_leaf = leaf
            target = r.choice(ids[: max(1, len(ids) - 1)])
            g.tick()
            leaf = target
            if r.random() < 0.6:
                fields = {"fromId": target, "summary": r.choice(["", "Explored: " + g.text(5, 30)])}
                if r.random() < 0.7:
                    fields["details"] = {
                        "readFiles": sorted(r.sample(_PATHS, r.randint(0, 2))),
                        "modifiedFiles": sorted(r.sample(_PATHS, r.randint(0, 2))),
                    }
                if r.random() < 0.2:
                    fields["fromHook"] = True
                if pi16 and r16.random() < 0.3:
                    fields["usage"] = usage16()
                append("branch_summary", **fields)
            del old_leaf
    # sometimes the file ends with a compaction (prepare returns null)
    if compactions and r.random() < 0.05 and leaf:
        candidates = [i for i in path_ids(leaf) if by_id[i]["type"] == "message"]
        if candidates:
            g.tick()
            append("compaction", summary="final", firstKeptEntryId=candidates[-1], tokensBefore=1234)
    return header, entries


def session_text(header: dict[str, Any], entries: list[dict[str, Any]]) -> bytes:
    """The JSONL bytes of a session (header line + one line per entry)."""
    return b"".join(jsonio.dumps_line(x) for x in [header, *entries])


def write_session(path: str | Path, header: dict[str, Any], entries: list[dict[str, Any]]) -> Path:
    """Write a session file; returns its path."""
    path = Path(path)
    path.write_bytes(session_text(header, entries))
    return path


if __name__ == "__main__":  # pragma: no cover
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for seed in range(int(sys.argv[2])):
        write_session(out_dir / f"gen-{seed:03d}.jsonl", *generate_session(seed))
