"""Generator of realistic pi session files for the benchmarks.

Writes version 3 JSONL as pi writes it (``JSON.stringify`` per line: compact,
non-ASCII kept as UTF-8): a header, then turns of a user message, assistant
messages with thinking, text and tool calls (read / bash / edit / write / ls)
with usage and cost, tool results carrying sizable outputs (source code, logs,
directory listings), plus model and thinking-level changes, labels, a session
name, custom entries and a few compactions. ``branchy`` sessions also jump the
leaf back now and then and leave branch summaries.

A second shape, :func:`generate_spaced_session_file`, is JSON as other
tools write it: only message entries, written with a
space after ``:`` and ``,`` (valid JSON, not ``JSON.stringify``'s bytes).

Everything comes from ``random.Random(seed)``: the same arguments always give
the same bytes. Text is cut from a pre-generated corpus, so 100 MB take
seconds, not minutes.

Usage::

    python bench/gen.py session OUT.jsonl --entries 100000 --mb 100 [--branchy]
    python bench/gen.py spaced OUT.jsonl --entries 100000
    python bench/gen.py dir OUT_DIR --sessions 1000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import uuid
from pathlib import Path
from typing import Any

import orjson

__all__ = ["generate_session_file", "generate_spaced_session_file", "generate_session_dir"]

_WORDS = (
    "the parser keeps line numbers when nested blocks close early so we check "
    "storage module tests fail because an index is off by one then we fix it "
    "and rerun the suite refactor function return value config option handler "
    "request response cache entry tree node leaf branch summary context token done"
).split()
# Real sessions are mostly ASCII; now and then a word is not (a Python str
# holding one such character takes 2 or 4 bytes per character for all of it).
_RARE_WORDS = ["naïve", "café", "→", "✅", "日本語", "🎉"]

_CODE_LINES = [
    "def handle(request: Request) -> Response:",
    '    """Handle one request and return the response."""',
    "    if request.method not in ALLOWED:",
    '        raise HTTPError(405, f"method {request.method} not allowed")',
    "    body = json.loads(request.body or b'{}')",
    "    for key, value in sorted(body.items()):",
    "        cache[key] = transform(value, depth=depth + 1)",
    "    return Response(status=200, headers={\"content-type\": \"application/json\"})",
    "export function buildIndex(entries: Entry[]): Map<string, Entry> {",
    "  const byId = new Map<string, Entry>();",
    "  for (const e of entries) byId.set(e.id, e);",
    "  return byId;",
    "}",
    "\tat Object.<anonymous> (/home/user/project/src/index.ts:42:17)",
    "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
    "PASS  tests/parser.test.ts (1.234 s)",
    "FAIL  tests/storage.test.ts",
    "  storage > appends an entry > keeps the leaf",
    "    expect(received).toBe(expected) // Object.is equality",
    "drwxr-xr-x  5 user user  4096 Jan  3 10:12 src",
    "-rw-r--r--  1 user user 18231 Jan  3 10:12 package-lock.json",
    "+    const leaf = this.byId.get(leafId) ?? null;",
    "-    const leaf = this.byId.get(leafId);",
    "@@ -120,7 +120,9 @@ export class SessionManager {",
    "# TODO: handle the case where the cache is stale (size or mtime changed)",
    "    ",
    "",
]

_PATHS = [
    "src/main.ts",
    "src/parser.py",
    "README.md",
    "src/utils/strings.ts",
    "tests/test_parser.py",
    "docs/guide.md",
    "src/core/session-manager.ts",
    "src/core/compaction/compaction.ts",
    "package.json",
    "src/ünïcode/файл.py",
]

_MODELS = [("anthropic", "claude-sonnet-4-5", "anthropic-messages"), ("openai", "gpt-5", "openai-responses")]


class _Corpus:
    """Random text and code, cut from big pre-generated strings."""

    def __init__(self, r: random.Random) -> None:
        self.r = r
        words = [r.choice(_WORDS) if r.random() > 0.0005 else r.choice(_RARE_WORDS) for _ in range(60_000)]
        self.prose = " ".join(words)
        self.code = "\n".join(r.choice(_CODE_LINES) for _ in range(40_000))

    def _cut(self, source: str, n: int) -> str:
        n = max(1, min(n, len(source) - 1))
        start = self.r.randrange(0, len(source) - n)
        return source[start : start + n]

    def text(self, lo: int, hi: int) -> str:
        return self._cut(self.prose, self.r.randint(lo, hi)).strip() or "ok"

    def output(self, n: int) -> str:
        return self._cut(self.code, n)


class _Writer:
    """Builds entries and writes them as JSONL lines."""

    def __init__(self, f: Any, r: random.Random, start_ms: int) -> None:
        self.f = f
        self.r = r
        self.t = start_ms
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.parents: dict[str, str | None] = {}
        self.order: list[str] = []
        self.kinds: dict[str, str] = {}
        self.count = 0
        self.bytes = 0

    def new_id(self) -> str:
        while True:
            value = f"{self.r.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def tick(self, lo: int = 200, hi: int = 30_000) -> int:
        self.t += self.r.randrange(lo, hi)
        return self.t

    @staticmethod
    def iso(ms: int) -> str:
        import datetime as _dt

        dt = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def write(self, record: dict[str, Any]) -> None:
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self.f.write(line)
        self.bytes += len(line)

    def append(self, etype: str, kind: str = "", **fields: Any) -> str:
        eid = self.new_id()
        entry = {"type": etype, "id": eid, "parentId": self.leaf, "timestamp": self.iso(self.t), **fields}
        self.write(entry)
        self.parents[eid] = self.leaf
        self.order.append(eid)
        self.kinds[eid] = kind or etype
        self.leaf = eid
        self.count += 1
        return eid

    def path(self, limit: int | None = None) -> list[str]:
        """Ids root→leaf (only the last ``limit`` when given)."""
        out = []
        current = self.leaf
        while current is not None and (limit is None or len(out) < limit):
            out.append(current)
            current = self.parents[current]
        out.reverse()
        return out


def _cost(r: random.Random, scale: float) -> float:
    # never integral: JSON.stringify writes 1.0 as 1 and orjson as 1.0
    return round(r.uniform(0.0001, scale), 6) + 0.0000001


def _usage(r: random.Random) -> dict[str, Any]:
    inp = r.randint(200, 40_000)
    out = r.randint(20, 3_000)
    cache_read = r.choice([0, r.randint(1_000, 120_000)])
    cache_write = r.choice([0, 0, r.randint(0, 8_000)])
    cost = {
        "input": _cost(r, 0.12),
        "output": _cost(r, 0.05),
        "cacheRead": _cost(r, 0.04),
        "cacheWrite": _cost(r, 0.03),
    }
    cost["total"] = round(sum(cost.values()), 7)
    return {
        "input": inp,
        "output": out,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": inp + out + cache_read + cache_write,
        "cost": cost,
    }


def _tool_call(w: _Writer, c: _Corpus) -> dict[str, Any]:
    r = w.r
    name = r.choice(["read", "read", "read", "bash", "bash", "edit", "write", "ls"])
    path = r.choice(_PATHS)
    if name == "read":
        args: dict[str, Any] = {"path": path}
        if r.random() < 0.3:
            args.update(offset=r.randint(1, 400), limit=200)
    elif name == "bash":
        args = {"command": r.choice(["npm test", "git status", "pytest -q", "rg -n cache src", "ls -la"]), "timeout": 120}
    elif name == "edit":
        args = {"path": path, "oldText": c.output(r.randint(40, 300)), "newText": c.output(r.randint(40, 300))}
    elif name == "write":
        args = {"path": path, "content": c.output(r.randint(200, 3000))}
    else:
        args = {"path": r.choice([".", "src", "tests"])}
    return {"type": "toolCall", "id": f"toolu_{w.new_id()}{w.new_id()}", "name": name, "arguments": args}


def _turn(w: _Writer, c: _Corpus, output_bytes: int, model: tuple[str, str, str]) -> None:
    r = w.r
    user_content: Any
    if r.random() < 0.3:
        user_content = c.text(20, 400)
    else:
        user_content = [{"type": "text", "text": c.text(20, 600)}]
    w.append("message", "user", message={"role": "user", "content": user_content, "timestamp": w.tick()})
    steps = r.choice([0, 1, 2, 2, 3, 4, 6])
    provider, model_id, api = model
    for step in range(steps + 1):
        last = step == steps
        content: list[dict[str, Any]] = []
        if r.random() < 0.5:
            content.append({"type": "thinking", "thinking": c.text(40, 600), "thinkingSignature": "EqQBCkgIBxABGAIiQ" + w.new_id()})
        if last or r.random() < 0.6:
            content.append({"type": "text", "text": c.text(20, 900 if last else 200)})
        calls = [] if last else [_tool_call(w, c) for _ in range(r.choice([1, 1, 1, 2, 3]))]
        content.extend(calls)
        msg = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model_id,
            "usage": _usage(r),
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": w.tick(),
        }
        w.append("message", "assistant", message=msg)
        for call in calls:
            size = max(10, int(r.expovariate(1.0 / output_bytes)))
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": [{"type": "text", "text": c.output(size)}],
                "isError": r.random() < 0.05,
                "timestamp": w.tick(50, 3000),
            }
            if call["name"] == "edit":
                result["details"] = {"diff": c.output(min(size, 600)), "firstChangedLine": r.randint(1, 400)}
            w.append("message", "toolResult", message=result)


def generate_session_file(
    path: str | os.PathLike[str],
    entries: int,
    *,
    mb: float | None = None,
    branchy: bool = False,
    seed: int = 1,
    cwd: str = "/home/user/project",
    compactions: int | None = None,
    compact_every: int | None = None,
    keep: int = 70,
) -> dict[str, Any]:
    """Write one session file of about ``entries`` entries.

    Args:
        path: output file (parent directories are created).
        entries: number of entries to write (the last turn may overshoot by a few).
        mb: target size in megabytes (10**6 bytes); tool outputs are sized to
            reach it. Default: about 1 KB per entry.
        branchy: jump the leaf back now and then (with branch summaries).
        seed: random seed.
        cwd: the header's cwd.
        compactions: number of compaction entries (default: one per 25,000
            entries, at least 1 for sessions over 500 entries).
        compact_every: instead of ``compactions``, a compaction every this
            many entries (a long real session's shape), keeping the last
            ``keep`` entries of the path (``firstKeptEntryId``).
        keep: see ``compact_every``.

    Returns:
        ``{"path", "entries", "bytes", "leaf_depth"}``.
    """
    r = random.Random(seed)
    c = _Corpus(r)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    target_bytes = int((mb if mb is not None else entries / 1000) * 1_000_000)
    # ~45% of entries are tool results; they carry most of the bytes
    per_entry_overhead = 760
    output_bytes = max(60, int((target_bytes / max(entries, 1) - per_entry_overhead) / 0.45))
    if compact_every:
        compactions = 0
    if compactions is None:
        compactions = max(1 if entries > 500 else 0, entries // 25_000)
    compaction_at = sorted(r.sample(range(entries // 4, entries), compactions)) if compactions else []
    start = 1_765_000_000_000 + r.randrange(10**9)
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "wb") as f:
        w = _Writer(f, r, start)
        session_id = str(uuid.UUID(int=r.getrandbits(128), version=4))
        w.write({"type": "session", "version": 3, "id": session_id, "timestamp": w.iso(start), "cwd": cwd})
        model = _MODELS[0]
        w.append("model_change", provider=model[0], modelId=model[1])
        w.append("thinking_level_change", thinkingLevel="medium")
        turns = 0
        next_compaction = compact_every or 0
        while w.count < entries:
            turns += 1
            roll = r.random()
            if roll < 0.01:
                model = r.choice(_MODELS)
                w.tick()
                w.append("model_change", provider=model[0], modelId=model[1])
            elif roll < 0.02:
                w.tick()
                w.append("thinking_level_change", thinkingLevel=r.choice(["low", "medium", "high"]))
            elif roll < 0.025:
                w.tick()
                w.append("custom", customType="todo-state", data={"open": r.randint(0, 9), "turn": turns})
            elif roll < 0.03:
                w.tick()
                w.append("custom_message", customType="reminder", content=c.text(20, 200), display=True)
            if turns == 3:
                w.tick()
                w.append("session_info", name=c.text(10, 40))
            _turn(w, c, output_bytes, model)
            if r.random() < 0.02:
                w.tick()
                w.append("label", targetId=r.choice(w.path(30)), label=r.choice(["checkpoint", "works", "before refactor"]))
            while compaction_at and w.count >= compaction_at[0]:
                compaction_at.pop(0)
                candidates = [i for i in w.path(200) if w.kinds[i] == "user"]
                if not candidates:
                    continue
                w.tick()
                w.append(
                    "compaction",
                    summary="## Goal\n" + c.text(200, 800) + "\n\n## Progress\n### Done\n- " + c.text(100, 400),
                    firstKeptEntryId=candidates[len(candidates) // 2],
                    tokensBefore=r.randint(120_000, 190_000),
                    details={"readFiles": sorted(r.sample(_PATHS, 3)), "modifiedFiles": sorted(r.sample(_PATHS, 2))},
                )
            if compact_every and w.count >= next_compaction:
                next_compaction += compact_every
                w.tick()
                w.append(
                    "compaction",
                    summary="## Goal\n" + c.text(200, 800) + "\n\n## Progress\n### Done\n- " + c.text(100, 400),
                    firstKeptEntryId=w.path(keep)[0],
                    tokensBefore=r.randint(120_000, 190_000),
                    details={"readFiles": sorted(r.sample(_PATHS, 3)), "modifiedFiles": sorted(r.sample(_PATHS, 2))},
                )
            if branchy and r.random() < 0.08 and w.count > 20:
                target = r.choice(w.path(400)[:-1])
                w.leaf = target
                w.tick()
                if r.random() < 0.5:
                    w.append(
                        "branch_summary",
                        fromId=target,
                        summary="The branch tried another approach: " + c.text(100, 500),
                        details={"readFiles": [r.choice(_PATHS)], "modifiedFiles": []},
                    )
    os.replace(tmp, p)
    return {"path": str(p), "entries": w.count, "bytes": w.bytes, "leaf_depth": len(w.path())}


def generate_spaced_session_file(
    path: str | os.PathLike[str],
    entries: int = 100_000,
    *,
    seed: int = 1,
    cwd: str = "/home/user/project",
) -> dict[str, Any]:
    """Write one linear session of ``entries`` message entries in spaced JSON.

    JSON as other tools write it (spaces after ``:`` and ``,``): turns of a
    user message, an assistant message with one tool call and full usage
    (tokens and cost), and the tool's result; every text block (and the
    text argument of an edit or write call) 20 to 3,000 characters,
    log-uniformly, half prose, half code: 100,000 entries make about
    109 MB. Lines are written by Python's ``json.dumps`` with its default
    separators, a space after ``:`` and ``,`` (``{"type": "message",
    "id": ...}``), non-ASCII kept as UTF-8:
    valid JSON that pi reads like any other, but not the bytes
    ``JSON.stringify`` writes, so code that assumes compact lines is slow
    or wrong on it.

    Args:
        path: output file (parent directories are created).
        entries: number of message entries after the header (exact).
        seed: random seed (same arguments, same bytes).
        cwd: the header's cwd.

    Returns:
        ``{"path", "entries", "bytes", "leaf_depth"}``.
    """
    r = random.Random(seed)
    c = _Corpus(r)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    log_span = math.log(3000 / 20)

    def size() -> int:
        return min(3000, int(20 * math.exp(r.random() * log_span)))

    def text() -> str:
        # prose or code (code has newlines and quotes to escape)
        n = size()
        return c._cut(c.prose, n) if r.random() < 0.5 else c.output(n)

    provider, model_id, api = _MODELS[0]
    start = 1_765_000_000_000 + r.randrange(10**9)
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "wb") as f:
        w = _Writer(f, r, start)

        def write(record: dict[str, Any]) -> None:
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            f.write(line)
            w.bytes += len(line)

        w.write = write  # type: ignore[method-assign]
        session_id = str(uuid.UUID(int=r.getrandbits(128), version=4))
        w.write({"type": "session", "version": 3, "id": session_id, "timestamp": w.iso(start), "cwd": cwd})
        call: dict[str, Any] | None = None
        while w.count < entries:
            step = w.count % 3
            if step == 0:
                msg: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text()}], "timestamp": w.tick()}
            elif step == 1:
                name = r.choice(["read", "bash", "edit", "write"])
                arguments: dict[str, Any]
                if name == "read":
                    arguments = {"path": r.choice(_PATHS)}
                elif name == "bash":
                    arguments = {"command": r.choice(["npm test", "git status", "pytest -q", "rg -n cache src"]), "timeout": 120}
                else:  # edit / write carry a text as big as the others
                    arguments = {"path": r.choice(_PATHS), "newText" if name == "edit" else "content": text()}
                call = {"type": "toolCall", "id": f"toolu_{w.new_id()}{w.new_id()}", "name": name, "arguments": arguments}
                msg = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text()}, call],
                    "api": api,
                    "provider": provider,
                    "model": model_id,
                    "usage": _usage(r),
                    "stopReason": "toolUse",
                    "timestamp": w.tick(),
                }
            else:
                assert call is not None
                msg = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "content": [{"type": "text", "text": text()}],
                    "isError": r.random() < 0.05,
                    "timestamp": w.tick(50, 3000),
                }
            w.tick()
            w.append("message", msg["role"], message=msg)
    os.replace(tmp, p)
    return {"path": str(p), "entries": w.count, "bytes": w.bytes, "leaf_depth": len(w.path())}


def generate_session_dir(
    directory: str | os.PathLike[str], sessions: int, *, seed: int = 7, cwd: str = "/home/user/project"
) -> dict[str, Any]:
    """Write ``sessions`` session files (10-400 entries each, 2-400 KB) into
    ``directory``, named as pi names them (``<timestamp>_<uuid>.jsonl``).

    Returns:
        ``{"path", "sessions", "bytes"}``.
    """
    r = random.Random(seed)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(sessions):
        n = int(min(400, max(10, r.lognormvariate(4.0, 0.8))))
        tmp = d / f"tmp-{i}.jsonl"
        info = generate_session_file(tmp, n, mb=n * 600 / 1_000_000, seed=seed * 100_003 + i, cwd=cwd, compactions=0)
        with open(tmp, "rb") as f:
            header = orjson.loads(f.readline())
        name = header["timestamp"].replace(":", "-").replace(".", "-") + "_" + header["id"] + ".jsonl"
        os.replace(tmp, d / name)
        total += info["bytes"]
    return {"path": str(d), "sessions": sessions, "bytes": total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("session", help="one session file")
    s.add_argument("out")
    s.add_argument("--entries", type=int, default=10_000)
    s.add_argument("--mb", type=float, default=None)
    s.add_argument("--branchy", action="store_true")
    s.add_argument("--seed", type=int, default=1)
    sp = sub.add_parser("spaced", help="one session of message entries in spaced JSON (as other tools write JSON)")
    sp.add_argument("out")
    sp.add_argument("--entries", type=int, default=100_000)
    sp.add_argument("--seed", type=int, default=1)
    d = sub.add_parser("dir", help="a directory of sessions")
    d.add_argument("out")
    d.add_argument("--sessions", type=int, default=1000)
    d.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.cmd == "session":
        print(generate_session_file(args.out, args.entries, mb=args.mb, branchy=args.branchy, seed=args.seed))
    elif args.cmd == "spaced":
        print(generate_spaced_session_file(args.out, args.entries, seed=args.seed))
    else:
        print(generate_session_dir(args.out, args.sessions, seed=args.seed))


if __name__ == "__main__":
    main()
