"""Regenerate the pi 1.6 projection goldens from the oracle.

    python tests/tools/make_projection_goldens.py

Writes tests/goldens/projection/: session files (``gen16-*.jsonl`` from
tests/sessiongen.py with ``pi16=True``; ``case-*.jsonl`` crafted around
context edits, system messages and compaction snapshots) and for each
``<name>.golden.json.gz``: pi 1.6's ``projection``, ``context-entries``,
``context`` and ``tokens`` at the file's leaf, at ``null`` and at a few
entry ids, and its ``tree`` (under the key ``"<file>"``).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
ORACLE = ROOT.parent / "shared" / "pi-oracle" / "pi-oracle"
OUT = ROOT / "tests" / "goldens" / "projection"

from projection_cases import CASES, HEADER  # noqa: E402
from sessiongen import generate_session, write_session  # noqa: E402

COMMANDS = ("projection", "context-entries", "context", "tokens")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sessions: dict[str, list[dict]] = {}
    for seed in range(40):
        header, entries = generate_session(1000 + seed, pi16=True, turns=4 + seed % 10)
        name = f"gen16-{seed:03d}"
        write_session(OUT / f"{name}.jsonl", header, entries)
        sessions[name] = entries
    for name, entries in CASES.items():
        write_session(OUT / f"case-{name}.jsonl", HEADER, entries)
        sessions[f"case-{name}"] = entries
    calls, keys = [], []
    for name, entries in sessions.items():
        r = random.Random(name)
        ids = [e["id"] for e in entries]
        leaves = ["<leaf>", "null", *sorted(set(r.sample(ids, min(4, len(ids)))), key=ids.index)]
        calls.append(["tree", str(OUT / f"{name}.jsonl")])
        keys.append((name, "<file>", "tree"))
        for leaf in leaves:
            for cmd in COMMANDS:
                args = [cmd, str(OUT / f"{name}.jsonl")]
                if leaf != "<leaf>":
                    args += ["--leaf", leaf]
                calls.append(args)
                keys.append((name, leaf, cmd))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(calls, f)
    env = {**os.environ, "PI_ORACLE_PI": "1.6.0"}
    out = json.loads(subprocess.run([str(ORACLE), "batch", f.name], check=True, capture_output=True, text=True, env=env).stdout)
    goldens: dict[str, dict] = {}
    for (name, leaf, cmd), result in zip(keys, out):
        goldens.setdefault(name, {}).setdefault(leaf, {})[cmd] = result
    for name, data in goldens.items():
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        (OUT / f"{name}.golden.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"wrote {len(goldens)} goldens to {OUT}")


if __name__ == "__main__":
    main()
