"""Seeded generator of sessions for the usage tests: multi-day, multi-model,
branchy pi sessions whose assistant messages carry every shape of ``usage``
ccusage and ``pi-session usage`` must agree on (recorded costs, the
``totalTokens`` fallback, no model, zero usage, a model pi could not price
with cost 0), times spread over days and across daylight-saving changes."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

MODELS = [("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-opus-4-5"), ("openai", "gpt-5"), ("google", "gemini-2.5-pro")]
DST_EDGES = [
    # instants near daylight-saving changes (UTC ms): Europe 2025-03-30 01:00Z,
    # 2025-10-26 01:00Z; US 2025-03-09 07:00Z, 2025-11-02 06:00Z; Lord Howe (30 min) 2025-04-05 15:00Z
    1743296400000, 1761440400000, 1741503600000, 1762063200000, 1743865200000,
]


def iso(ms: int) -> str:
    """pi's timestamp (``toISOString``) of ``ms``."""
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _usage(r: random.Random, model: str | None) -> dict[str, Any]:
    inp, out = r.randint(0, 20_000), r.randint(0, 3_000)
    cr, cw = r.choice([0, r.randint(0, 80_000)]), r.choice([0, r.randint(0, 6_000)])
    total = inp + out + cr + cw
    kind = r.random()
    if kind < 0.08:
        out, total = 0, inp + cr + cw + r.randint(1, 900)  # totalTokens names output the parts miss
    elif kind < 0.14:
        total += r.randint(1, 500)  # totalTokens larger than the parts: "other" tokens
    elif kind < 0.18:
        inp = out = cr = cw = total = 0  # counts nothing
    cost = round(inp * 3e-6 + out * 15e-6 + cr * 3e-7 + cw * 3.75e-6 + r.random() * 1e-4, 9)
    return {
        "input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def generate(seed: int, *, messages: int = 40, start_ms: int | None = None) -> list[bytes]:
    """A version-3 session file's lines: a header, user and assistant
    messages (the leaf jumping back now and then: branches), model
    changes, and now and then a message without a model, a model with cost
    0 (``local-llama``), a duplicated line and a non-message record."""
    r = random.Random(seed)
    t = start_ms if start_ms is not None else r.choice(DST_EDGES) - r.randint(0, 3 * 86_400_000)
    sid = f"{r.getrandbits(32):08x}-0000-4000-8000-{r.getrandbits(48):012x}"
    lines = [json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": iso(t), "cwd": f"/work/p{seed % 3}"})]
    ids: list[str] = []
    leaf = None
    provider, model = r.choice(MODELS)
    for _ in range(messages):
        t += r.choice([r.randint(1_000, 600_000), r.randint(600_000, 7 * 3_600_000), r.randint(1, 30) * 3_600_000 // 10])
        if ids and r.random() < 0.15:
            leaf = r.choice(ids)  # a branch
        if r.random() < 0.1:
            provider, model = r.choice(MODELS)
        eid = f"{r.getrandbits(32):08x}"
        user = {"type": "message", "id": eid, "parentId": leaf, "timestamp": iso(t),
                "message": {"role": "user", "content": "hi", "timestamp": t}}
        lines.append(json.dumps(user))
        ids.append(eid)
        leaf = eid
        t += r.randint(100, 120_000)
        aid = f"{r.getrandbits(32):08x}"
        msg: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "x", "provider": provider,
                               "model": model, "stopReason": "stop", "timestamp": t}
        roll = r.random()
        if roll < 0.05:
            del msg["model"]
        elif roll < 0.09:
            msg["model"], msg["provider"] = "local-llama", "llama.cpp"
        msg["usage"] = _usage(r, msg.get("model"))
        if msg.get("model") == "local-llama":
            msg["usage"]["cost"]["total"] = 0
        line = json.dumps({"type": "message", "id": aid, "parentId": leaf, "timestamp": iso(t), "message": msg})
        lines.append(line)
        if r.random() < 0.05:
            lines.append(line)  # the same line twice (a bad merge): one message
        ids.append(aid)
        leaf = aid
        if r.random() < 0.05:
            lines.append(json.dumps({"type": "custom", "id": f"{r.getrandbits(32):08x}", "parentId": leaf, "timestamp": iso(t),
                                     "customType": "note", "data": {"usage": {"input": 5}, "message": "not counted"}}))
    return [(line + "\n").encode() for line in lines]


def write_tree(root: Path, seeds: range, *, projects: int = 3) -> list[Path]:
    """Write one session per seed under ``root/<project>/`` (pi's file
    names), returning the files."""
    out = []
    for seed in seeds:
        lines = generate(seed)
        header = json.loads(lines[0])
        d = root / f"--work-p{seed % projects}--"
        d.mkdir(parents=True, exist_ok=True)
        name = header["timestamp"].replace(":", "-").replace(".", "-") + "_" + header["id"] + ".jsonl"
        path = d / name
        path.write_bytes(b"".join(lines))
        out.append(path)
    return out
