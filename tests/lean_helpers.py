"""Generated sessions for the slim / restore / prune tests and benchmark:
image-heavy sessions with compacted history and abandoned branches,
written line by line as pi writes them (JSON.stringify's compact form)."""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path
from typing import Any

from pi_session.core import jsonio

HEADER_ID = "01900000-0000-7000-8000-000000000001"


def _usage() -> dict[str, Any]:
    return {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


class Writer:
    """Appends entries with ids ``e0001``…-style 8-hex ids and a running clock."""

    def __init__(self, path: Path, cwd: str = "/proj") -> None:
        self.path = path
        self.n = 0
        self.lines: list[bytes] = [jsonio.dumps_line(
            {"type": "session", "version": 3, "id": HEADER_ID, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd})]

    def add(self, parent: str | None, body: dict[str, Any]) -> str:
        self.n += 1
        eid = f"{self.n:08x}"
        ts = f"2026-01-01T00:{self.n // 60 % 60:02d}:{self.n % 60:02d}.000Z"
        self.lines.append(jsonio.dumps_line({"type": body.pop("type", "message"), "id": eid, "parentId": parent, "timestamp": ts, **body}))
        return eid

    def user(self, parent: str | None, text: str) -> str:
        return self.add(parent, {"message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1767225600000 + self.n}})

    def assistant(self, parent: str | None, content: list[dict[str, Any]]) -> str:
        return self.add(parent, {"message": {
            "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "m",
            "usage": _usage(), "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop",
            "timestamp": 1767225600000 + self.n}})

    def tool_result(self, parent: str, call_id: str, content: list[dict[str, Any]], name: str = "read") -> str:
        return self.add(parent, {"message": {
            "role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content, "isError": False,
            "timestamp": 1767225600000 + self.n}})

    def write(self) -> Path:
        self.path.write_bytes(b"".join(self.lines))
        return self.path


def image_block(rng: random.Random, size: int) -> dict[str, Any]:
    raw = rng.randbytes(size * 3 // 4)
    return {"type": "image", "data": base64.b64encode(raw).decode(), "mimeType": "image/png"}


def round_trip(w: Writer, parent: str | None, i: int, rng: random.Random, image_bytes: int, output_bytes: int = 0) -> str:
    """One user turn: ask, a read tool call, its result (an image and a
    text), an answer. Returns the answer's id."""
    u = w.user(parent, f"look at screenshot {i}")
    call = f"call_{i}"
    a = w.assistant(u, [{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"/proj/shot{i}.png"}}])
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Read image file shot{i}.png"}]
    if image_bytes:
        content.append(image_block(rng, image_bytes))
    if output_bytes:
        content.append({"type": "text", "text": "".join(f"line {k} of output {i}\n" for k in range(output_bytes // 20))})
    r = w.tool_result(a, call, content)
    return w.assistant(r, [{"type": "text", "text": f"Screenshot {i} shows the login page."}])


def image_session(path: Path, *, total_bytes: int, rounds: int = 40, seed: int = 1, branch: bool = True) -> dict[str, Any]:
    """An image-heavy session of about ``total_bytes``: ``rounds`` turns
    each with one image, a compaction keeping only the last turn, an
    abandoned branch with an image of its own, labels, a branch summary
    and a session name. Returns ``{"path", "leaf", "kept_first",
    "abandoned"}`` (ids)."""
    rng = random.Random(seed)
    w = Writer(path)
    per_image = max(total_bytes // (rounds + 1), 64)
    leaf = w.add(None, {"type": "model_change", "provider": "anthropic", "modelId": "m"})
    fork = None
    abandoned: list[str] = []
    for i in range(rounds - 1):
        leaf = round_trip(w, leaf, i, rng, per_image, output_bytes=40_000 if i % 3 == 0 else 0)
        if i == 1:
            w.add(leaf, {"type": "label", "targetId": leaf, "label": "first screens"})
            fork = leaf
        if branch and i == rounds // 2 and fork is not None:
            b = round_trip(w, fork, 1000, rng, per_image)
            abandoned = [f"{k:08x}" for k in range(w.n - 3, w.n + 1)]
            lab = w.add(b, {"type": "label", "targetId": b, "label": "tried"})
            abandoned.append(lab)
            leaf = w.add(leaf, {"type": "branch_summary", "fromId": b, "summary": "Tried another screenshot; dropped it."})
    last_user = None
    comp_parent = leaf
    leaf = w.add(comp_parent, {"type": "compaction", "summary": "Looked at many screenshots of the login page.",
                               "firstKeptEntryId": comp_parent, "tokensBefore": 50000})
    last_user = w.n
    leaf = round_trip(w, leaf, rounds, rng, per_image)
    leaf = w.add(leaf, {"type": "session_info", "name": "screenshots"})
    w.write()
    return {"path": path, "leaf": leaf, "kept_first": comp_parent, "abandoned": abandoned, "last_user": last_user}


def branchy_session(path: Path, *, seed: int = 2, branches: int = 4, depth: int = 3) -> dict[str, Any]:
    """A small session with several abandoned branches off the main path,
    labels on both sides, branch summaries and a name (no images).
    Returns ``{"path", "leaf", "side_leaves"}``."""
    rng = random.Random(seed)
    w = Writer(path)
    trunk = [w.user(None, "start")]
    side_leaves: list[str] = []
    for b in range(branches):
        at = trunk[-1]
        x = at
        for d in range(depth):
            x = w.user(x, f"side {b}.{d} {rng.random():.6f}")
            x = w.assistant(x, [{"type": "text", "text": f"side answer {b}.{d}"}])
        side_leaves.append(x)
        # branch 0 labels an entry of the main path (so it stays, up to that
        # label); the others label one of their own entries
        w.add(x, {"type": "label", "targetId": at if b == 0 else x, "label": f"fork {b}"})
        s = w.add(at, {"type": "branch_summary", "fromId": x, "summary": f"Explored side {b}."})
        nxt = w.user(s, f"main {b}")
        trunk.append(w.assistant(nxt, [{"type": "text", "text": f"main answer {b}"}]))
        w.add(trunk[-1], {"type": "label", "targetId": nxt, "label": f"main {b}"})
    leaf = w.add(trunk[-1], {"type": "session_info", "name": "branchy"})
    w.write()
    return {"path": path, "leaf": leaf, "side_leaves": side_leaves}


def env_without_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
