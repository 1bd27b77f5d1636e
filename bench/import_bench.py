"""Benchmark ``pi-session import --from claude-code``: importing
``--sessions`` generated Claude Code sessions (default 1,000, about 200 MB)
into files, SQLite and PostgreSQL.

The sessions are generated once into ``--data`` (deterministic: the same
arguments give the same bytes) in Claude Code's layout,
``projects/<encoded cwd>/<session id>.jsonl``, shaped like the real ones:
a prompt, then assistant turns written one record per content block
(thinking with a signature, text, one to three parallel tool calls sharing
one ``message.id``), their results (sizable outputs, ``toolUseResult``),
progress and attachment records, a compaction now and then.

Measured for each store, in a fresh Python process each (time taken inside
it, interpreter start-up excluded), with
:func:`pi_session.importers.import_agent_sessions` (what the CLI runs):
``first`` (an empty store: every session converted and created) and
``again`` (the same sources again: every session converted and compared,
nothing written: unchanged sources are passed over after a ``stat``).
Wall and CPU seconds of the importing process (CPU: user + system, what
a loaded machine distorts least). Stores at their durable defaults.
PostgreSQL: ``PI_SESSION_TEST_POSTGRES``, else the tests' throw-away
cluster (``tests/postgres_cluster.py``), in a new database.

``--baseline SRC`` also runs every measurement with another checkout's
package (``SRC`` the directory holding ``pi_session``, e.g. ``git archive
<rev> src | tar -x -C /tmp/base`` then ``/tmp/base/src``), alternating
with this one on the same corpus, so that before and after come from one
run on one machine state.

Usage::

    python bench/import_bench.py                      # writes bench/results/import.md
    python bench/import_bench.py --sessions 20 --out /tmp/x.md   # smoke run
    python bench/import_bench.py --baseline /tmp/base/src --backends file
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = Path(os.environ.get("PI_SESSION_BENCH_SRC") or ROOT / "src")
for _p in (SRC, ROOT / "tests", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

BACKENDS = ("file", "sqlite", "postgresql")
LABELS = {"file": "files", "sqlite": "SQLite", "postgresql": "PostgreSQL"}

_WORDS = "the parser keeps line numbers when nested blocks close early so we check storage module tests fail because an index is off by one".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _output(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    while total < size:
        line = f"{rng.randint(1, 999):>4}\t{_text(rng, rng.randint(4, 14))}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def generate_session(path: Path, seed: int, target_bytes: int) -> int:
    """Write one Claude Code session of about ``target_bytes``; its size."""
    rng = random.Random(seed)
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    cwd = f"/home/user/project{seed % 50}"
    t = 1_750_000_000_000 + seed * 10_000_000

    def stamp() -> str:
        nonlocal t
        t += rng.randint(200, 5000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t / 1000)) + f".{t % 1000:03d}Z"

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": "2.1.80", "gitBranch": "main"}
    out = bytearray()
    parent: str | None = None

    def write(rec: dict[str, Any]) -> None:
        out.extend(orjson.dumps(rec) + b"\n")

    def record(rtype: str, **extra: Any) -> str:
        nonlocal parent
        u = uid()
        write({"parentUuid": parent, **base, "type": rtype, "uuid": u, "timestamp": stamp(), **extra})
        parent = u
        return u

    record("user", message={"role": "user", "content": _text(rng, 30)}, promptId=uid())
    turn = 0
    while len(out) < target_bytes:
        turn += 1
        mid = f"msg_{seed}_{turn}"
        usage = {"input_tokens": rng.randint(1, 50), "output_tokens": rng.randint(50, 2000), "cache_read_input_tokens": rng.randint(0, 90000), "cache_creation_input_tokens": rng.randint(0, 5000)}

        def assistant(block: dict[str, Any], stop: str | None) -> str:
            message = {"model": "claude-sonnet-4-5", "id": mid, "type": "message", "role": "assistant", "content": [block], "stop_reason": stop, "usage": usage}
            return record("assistant", message=message, requestId=f"req_{mid}")

        assistant({"type": "thinking", "thinking": _text(rng, 60), "signature": "EqQB" + "A" * 200}, None)
        assistant({"type": "text", "text": _text(rng, 40)}, None)
        calls = [(f"toolu_{seed}_{turn}_{i}", uid()) for i in range(rng.randint(1, 3))]
        call_records = []
        for call_id, _ in calls:
            call_records.append(assistant({"type": "tool_use", "id": call_id, "name": rng.choice(["Read", "Bash", "Grep"]), "input": {"file_path": f"src/m{rng.randint(1, 99)}.py"}}, "tool_use"))
        for (call_id, _), on in zip(calls, call_records):
            write({"parentUuid": on, "type": "progress", "uuid": uid(), "timestamp": stamp(), "data": {"type": "hook_progress", "hookEvent": "PostToolUse"}, "toolUseID": call_id, **base})
            text = _output(rng, rng.randint(1500, 12000))
            parent = on
            record("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": rng.random() < 0.05}]}, toolUseResult={"stdout": text[:200], "stderr": "", "interrupted": False})
        if rng.random() < 0.3:
            record("user", message={"role": "user", "content": _text(rng, 25)}, promptId=uid())
        if turn % 60 == 0:
            boundary = uid()
            write({"parentUuid": None, "logicalParentUuid": parent, **base, "type": "system", "subtype": "compact_boundary", "uuid": boundary, "timestamp": stamp(), "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 160000}})
            parent = boundary
            record("user", message={"role": "user", "content": "This session is being continued. Summary: " + _text(rng, 200)}, isCompactSummary=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    old = time.time() - 86400  # sessions at rest (Claude Code not running): nothing left waiting for the next import
    os.utime(path, (old, old))
    return len(out)


def generate(data: Path, sessions: int, mb: float) -> tuple[Path, int]:
    """The source tree (generated once); its root and size in bytes."""
    root = data / f"claude-{sessions}-{mb:g}" / "projects"
    marker = root.parent / "done.json"
    if marker.exists():
        return root, int(json.loads(marker.read_text())["bytes"])
    per = int(mb * 1_000_000 / sessions)
    total = 0
    for seed in range(sessions):
        d = root / f"-home-user-project{seed % 50}"
        total += generate_session(d / f"s{seed:05d}.jsonl", seed, per)
    marker.write_text(json.dumps({"bytes": total}))
    return root, total


def worker(source: str, url: str) -> dict[str, Any]:
    from pi_session.importers import import_agent_sessions
    from pi_session.stores import open_store

    store = open_store(url)
    out: dict[str, Any] = {}
    for label in ("first", "again"):
        t = time.perf_counter()
        cpu = time.process_time()
        statuses: dict[str, int] = {}
        for r in import_agent_sessions("claude-code", [source], store):
            statuses[r.result.status] = statuses.get(r.result.status, 0) + 1
        out[label] = time.perf_counter() - t
        out[f"{label}_cpu"] = time.process_time() - cpu
        out[f"{label}_statuses"] = statuses
    store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--mb", type=float, default=200.0, help="total source size (MB)")
    ap.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "pi-session-import-bench"))
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--out", default=str(HERE / "results" / "import.md"))
    ap.add_argument("--baseline", help="another checkout's src directory, measured too (before/after)")
    ap.add_argument("--worker", nargs=2, metavar=("SOURCE", "URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    data = Path(args.data)
    t = time.perf_counter()
    source, size = generate(data, args.sessions, args.mb)
    print(f"sources: {args.sessions} sessions, {size / 1e6:.0f} MB ({time.perf_counter() - t:.1f} s to generate)", file=sys.stderr)
    rows = []
    pg = None
    versions = [("baseline", args.baseline), ("this", str(SRC))] if args.baseline else [("this", str(SRC))]
    for kind in args.backends.split(","):
        for version, src in versions:
            work = Path(tempfile.mkdtemp(prefix=f"import-{kind}-", dir=data))
            env = {**os.environ, "PI_SESSION_BENCH_SRC": src, "XDG_CACHE_HOME": str(work / "cache")}
            if kind == "file":
                url = str(work / "sessions")
            elif kind == "sqlite":
                url = f"sqlite:///{work / 'sessions.db'}"
            else:
                from stores import Postgres  # type: ignore[import-not-found]

                pg = Postgres()
                url = pg.url
            proc = subprocess.run([sys.executable, __file__, "--worker", str(source), url], capture_output=True, text=True, cwd=ROOT, env=env, timeout=7200)
            if pg is not None:
                pg.close()
                pg = None
            if proc.returncode != 0:
                raise SystemExit(f"{kind} failed:\n{proc.stderr[-3000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append((kind, version, result))
            print(kind, version, result, file=sys.stderr)
    lines = [
        f"# import --from claude-code: {args.sessions:,} sessions, {size / 1e6:.0f} MB",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} at the end. "
        "`first`: into an empty store; `again`: the same sources again (all unchanged). "
        "Wall seconds, CPU seconds of the importing process in brackets; MB/s of wall time (of CPU time).",
        "",
        "| store | version | first import | MB/s | again (nothing new) |",
        "|---|---|---:|---:|---:|",
    ]
    for kind, version, r in rows:
        mb = size / 1e6
        lines.append(
            f"| {LABELS[kind]} | {version} | {r['first']:.1f} s ({r['first_cpu']:.1f}) | {mb / r['first']:.1f} ({mb / r['first_cpu']:.1f}) | {r['again']:.2f} s ({r['again_cpu']:.2f}) |"
        )
    lines.append("")
    lines.append("Statuses: " + "; ".join(f"{LABELS[k]} ({v}): first {r['first_statuses']}, again {r['again_statuses']}" for k, v, r in rows))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
