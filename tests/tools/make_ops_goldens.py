"""Regenerate tests/goldens/ops/: SessionManager scripts run by pi-oracle ``ops``.

    python tests/tools/make_ops_goldens.py

Each ``<name>.spec.json`` is a script of SessionManager calls; ``<name>.out.json``
is what pi printed (results, leaf, header, entries, context, files written).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_session_goldens import oracle, random_ops  # noqa: E402

OUT = HERE.parent / "goldens" / "ops"

ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "a", "provider": "p", "model": "m",
             "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "stopReason": "stop", "timestamp": 5}
USER = {"role": "user", "content": "hi", "timestamp": 1}

HANDWRITTEN = {
    # nothing is written before the first assistant message
    "no-assistant": {"cwd": "/w", "persist": True, "ops": [["appendMessage", USER], ["appendModelChange", "p", "m"]]},
    # then everything at once
    "first-assistant": {"cwd": "/w", "persist": True, "ops": [["appendMessage", USER], ["appendThinkingLevelChange", "high"], ["appendMessage", ASSISTANT], ["appendSessionInfo", " x "]]},
    # errors: unknown ids
    "errors": {"cwd": "/w", "persist": False, "ops": [["appendMessage", USER], ["branch", "nope"], ["appendLabelChange", "nope", "x"], ["branchWithSummary", "nope", "s"]]},
    # branched session with labels on the path, persisted
    "branched": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendLabelChange", "@0", "L0"],
        ["appendMessage", USER], ["appendLabelChange", "@3", "L3"], ["appendLabelChange", "@0", ""],
        ["appendLabelChange", "@1", "L1"], ["createBranchedSession", "@3"], ["appendMessage", USER]]},
    "branched-no-assistant": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["resetLeaf"], ["appendMessage", USER],
        ["createBranchedSession", "@3"], ["appendMessage", USER], ["appendMessage", ASSISTANT]]},
    "in-memory-branched": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", USER], ["appendLabelChange", "@0", "L"], ["appendMessage", ASSISTANT], ["createBranchedSession", "@2"]]},
    "reset-and-summary": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["resetLeaf"], ["appendMessage", USER],
        ["branchWithSummary", None, "from root"], ["appendCustomMessageEntry", "t", "c", False, {"d": 1}],
        ["appendCustomEntry", "t"], ["appendCompaction", "s", "@0", 9, None, True]]},
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    specs = dict(HANDWRITTEN)
    for seed in range(6):
        specs[f"random-{seed}"] = random_ops(100 + seed)
    for name, spec in specs.items():
        spec_path = OUT / f"{name}.spec.json"
        spec_path.write_text(json.dumps(spec, indent=1) + "\n")
        (OUT / f"{name}.out.json").write_text(oracle("ops", str(spec_path)))


if __name__ == "__main__":
    main()
