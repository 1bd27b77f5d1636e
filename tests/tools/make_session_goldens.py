"""Regenerate the session/context/tree goldens from the pi oracle.

    python tests/tools/make_session_goldens.py

Writes tests/goldens/sessions/: generated session files (``gen-*.jsonl``,
from tests/sessiongen.py), session files written by pi itself through
``pi-oracle ops`` (``pi-*.jsonl``, from random SessionManager scripts), and
for each ``<name>.context.json`` (leaf, null and a few entry ids) and
``<name>.tree.json``; for pi's v1 fixtures the context messages only (their
migrated ids are random).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
ORACLE = ROOT.parent / "shared" / "pi-oracle" / "pi-oracle"
FIXTURES = ROOT.parent / "shared" / "fixtures" / "pi"
OUT = ROOT / "tests" / "goldens" / "sessions"

from sessiongen import generate_session, write_session  # noqa: E402


def oracle(*args: str) -> str:
    for _ in range(3):  # node has been seen to exit with nothing written; retry
        out = subprocess.run([str(ORACLE), *args], check=True, capture_output=True, text=True).stdout
        if out.strip():
            return out
    raise RuntimeError(f"pi-oracle {' '.join(args)} printed nothing")


def random_ops(seed: int) -> dict:
    """A random SessionManager script exercising every append and navigation."""
    r = random.Random(seed)
    ops: list[list] = []
    t = 1_760_000_000_000
    n_entries = 0

    def ref() -> str:
        return f"@{r.choice(entry_ops)}"

    entry_ops: list[int] = []
    for _ in range(r.randint(15, 45)):
        t += r.randint(1, 10_000)
        kind = r.random()
        if n_entries == 0 or kind < 0.25:
            op = ["appendMessage", {"role": "user", "content": r.choice(["hi", "fix the bug", [{"type": "text", "text": "blocks ü 😀"}]]), "timestamp": t}]
        elif kind < 0.5:
            content = [{"type": "text", "text": "answer " * r.randint(1, 30)}]
            if r.random() < 0.5:
                content.append({"type": "toolCall", "id": f"call{t}", "name": r.choice(["read", "edit", "write", "bash"]), "arguments": {"path": f"src/f{r.randint(1, 5)}.py"}})
            msg = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": r.choice(["anthropic", "openai"]), "model": r.choice(["m1", "m2"]), "usage": {"input": r.randint(1, 9000), "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": r.randint(100, 9000), "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": r.choice(["stop", "toolUse", "aborted", "error"]), "timestamp": t}
            op = ["appendMessage", msg]
        elif kind < 0.58:
            op = ["appendMessage", {"role": "toolResult", "toolCallId": f"call{t}", "toolName": "read", "content": [{"type": "text", "text": "out " * r.randint(1, 50)}], "isError": False, "timestamp": t}]
        elif kind < 0.62:
            op = ["appendMessage", {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": r.choice([0, 1]), "cancelled": False, "truncated": False, "timestamp": t, **({"excludeFromContext": True} if r.random() < 0.3 else {})}]
        elif kind < 0.66:
            op = ["appendThinkingLevelChange", r.choice(["low", "high", "off"])]
        elif kind < 0.70:
            op = ["appendModelChange", "openai", r.choice(["gpt-5", "gpt-4.1"])]
        elif kind < 0.74:
            op = ["appendLabelChange", ref(), r.choice(["mark", "", "checkpoint"])]
        elif kind < 0.77:
            op = ["appendCustomEntry", "ext", {"n": r.randint(1, 9)}]
        elif kind < 0.81:
            op = ["appendCustomMessageEntry", "note", r.choice(["plain", [{"type": "text", "text": "block"}]]), r.random() < 0.5]
        elif kind < 0.83:
            op = ["appendSessionInfo", r.choice(["  named  ", "", "Other"])]
        elif kind < 0.89:
            op = ["branch", ref()]
        elif kind < 0.91:
            op = ["resetLeaf"]
        elif kind < 0.95:
            op = ["branchWithSummary", ref(), r.choice(["went elsewhere", ""])]
        else:
            op = ["appendCompaction", "compacted summary", ref(), r.randint(100, 50_000), {"readFiles": ["a"], "modifiedFiles": ["b"]}]
        ops.append(op)
        if op[0].startswith("append") or op[0] == "branchWithSummary":
            entry_ops.append(len(ops) - 1)
            n_entries += 1
    # make sure something is persisted: end with an assistant message
    ops.append(["appendMessage", {"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": "x", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": t + 1}])
    return {"cwd": "/work/project", "persist": True, "ops": ops}


def record(path: Path, name: str, ids_stable: bool = True) -> None:
    contexts = {"<leaf>": json.loads(oracle("context", str(path))), "null": json.loads(oracle("context", str(path), "--leaf", "null"))}
    if ids_stable:
        entries = json.loads(oracle("entries", str(path)))["entries"]
        r = random.Random(name)
        for entry in r.sample(entries, min(6, len(entries))):
            contexts[entry["id"]] = json.loads(oracle("context", str(path), "--leaf", entry["id"]))
        (OUT / f"{name}.tree.json").write_text(oracle("tree", str(path)))
    else:
        for ctx in contexts.values():
            ctx.pop("leafId", None)
    (OUT / f"{name}.context.json").write_text(json.dumps(contexts, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for seed in range(8):
        header, entries = generate_session(seed)
        path = write_session(OUT / f"gen-{seed}.jsonl", header, entries)
        record(path, f"gen-{seed}")
    for seed in range(8):
        with tempfile.TemporaryDirectory() as tmp:
            spec = Path(tmp) / "ops.json"
            spec.write_text(json.dumps(random_ops(seed)))
            result = json.loads(oracle("ops", str(spec)))
        (name, text), = result["fileText"].items()
        path = OUT / f"pi-{seed}.jsonl"
        path.write_text(text)
        record(path, f"pi-{seed}")
    for fixture in sorted(FIXTURES.glob("*.jsonl")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / fixture.name
            copy.write_bytes(fixture.read_bytes())
            record(copy, f"fixture-{fixture.stem}", ids_stable=False)


if __name__ == "__main__":
    main()
