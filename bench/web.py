#!/usr/bin/env python3
"""Benchmark of ``pi-session serve``: the sessions page over many sessions
and the first screen of a huge session, through the real server (the
console script on 127.0.0.1) and HTTP, as a browser asks for them.

    python bench/web.py [--sessions 10000] [--entries 100000] [--data DIR] [--json OUT]
                        [--baseline SRC [--pairs N]]

Prints, per page, the time of the first request (cold: the listing index
is built) and the median of the next ones (warm), each with the server's
CPU time. Targets: the sessions page of 10,000 sessions in under 300 ms,
the first screen of a 100,000-entry session in under a second.

``--baseline SRC`` (a ``src`` directory of another checkout, e.g.
``git archive main src | tar -x -C /tmp/base``): runs a server of those
sources ("before") and one of this checkout's ("after") in turn, ``--pairs``
times, each with a fresh cache directory, on the same store; the
machine's load then weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

BIG = "0196b000-0000-7000-8000-0000000b1600"


def _line(record: dict) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def make_sessions(root: Path, count: int) -> None:
    """``count`` small sessions (a user question and an answer each), in
    20 project directories."""
    for n in range(count):
        project = root / f"--p{n % 20}--"
        project.mkdir(parents=True, exist_ok=True)
        sid = f"0196a000-0000-7000-8000-{n:012x}"
        stamp = f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:00:00.000Z"
        lines = [
            _line({"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": f"/p{n % 20}"}),
            _line({"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
                   "message": {"role": "user", "content": f"question number {n} about the build", "timestamp": 1764000000000 + n}}),
            _line({"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp,
                   "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}], "provider": "p", "model": "m",
                               "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                               "stopReason": "stop", "timestamp": 1764000000001 + n}}),
        ]
        (project / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl").write_text("".join(lines))


def make_big(root: Path, entries: int) -> None:
    """One session of ``entries`` messages in a chain."""
    project = root / "--big--"
    project.mkdir(parents=True, exist_ok=True)
    with open(project / f"2026-11-30T00-00-00-000Z_{BIG}.jsonl", "w") as f:
        f.write(_line({"type": "session", "version": 3, "id": BIG, "timestamp": "2026-11-30T00:00:00.000Z", "cwd": "/big"}))
        parent = None
        for k in range(entries):
            eid = f"{k:08x}"
            if k % 2 == 0:
                message = {"role": "user", "content": f"step {k}: run the tests again", "timestamp": 1764460800000 + k}
            else:
                message = {"role": "assistant", "content": [{"type": "text", "text": f"ran them, {k} passed"}], "provider": "p", "model": "m",
                           "stopReason": "stop", "timestamp": 1764460800000 + k}
            f.write(_line({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-11-30T00:00:00.000Z", "message": message}))
            parent = eid


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` so far (Linux ``/proc``;
    0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(client: httpx.Client, path: str, runs: int, pid: int = 0) -> dict:
    times, cpus = [], []
    for _ in range(runs + 1):
        cpu = cpu_seconds(pid)
        start = time.perf_counter()
        response = client.get(path)
        times.append(time.perf_counter() - start)
        cpus.append(cpu_seconds(pid) - cpu)
        response.raise_for_status()
    return {"cold_s": round(times[0], 3), "cold_cpu_s": round(cpus[0], 2), "warm_median_s": round(statistics.median(times[1:]), 3),
            "warm_cpu_s": round(statistics.median(cpus[1:]), 2), "bytes": len(response.content)}


def serve_and_time(root: Path, cache: Path, args: argparse.Namespace, src: Path | None) -> dict:
    """Start ``pi-session serve`` over ``root`` (with ``src`` first on the
    path when given), time the pages, stop it."""
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.Popen([str(exe), "--store", str(root), "serve", "--port", "0", "--read-only"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        url = re.search(r"http://\S+?/", proc.stdout.readline())[0]  # type: ignore[index]
        pages = {
            f"sessions page ({args.sessions + 1:,} sessions)": "/",
            f"session page, first screen ({args.entries:,} entries)": f"/s/{BIG}?at={args.entries - 1:08x}",
            f"session page, first screen, secrets shown ({args.entries:,} entries)": f"/s/{BIG}?secrets=show",
        }
        order = list(pages)
        if args.session_first:  # the server's very first request is the huge session's page
            order = order[1:] + order[:1]
        with httpx.Client(base_url=url, timeout=600) as client:
            times = {name: timed(client, pages[name], args.runs, proc.pid) for name in order}
        return {name: times[name] for name in pages}
    finally:
        proc.terminate()
        proc.wait(10)


def print_table(results: dict) -> None:
    width = max(len(k) for k in results)
    print(f"{'page':<{width}}  {'cold':>8}  {'cpu':>6}  {'warm':>8}  {'cpu':>6}  {'size':>10}")
    for name, r in results.items():
        print(f"{name:<{width}}  {r['cold_s']:>7.3f}s  {r['cold_cpu_s']:>5.2f}s  {r['warm_median_s']:>7.3f}s  {r['warm_cpu_s']:>5.2f}s  {r['bytes']:>10,}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=None, help="where to write the store (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--baseline", type=Path, default=None, help="src directory of the sources to compare with (before)")
    parser.add_argument("--pairs", type=int, default=2, help="with --baseline: before/after runs, in turn")
    parser.add_argument("--session-first", action="store_true", help="ask for the session pages before the sessions page")
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="pi-session-web-bench-"))
    root = data / "sessions"
    if not root.exists():
        make_sessions(root, args.sessions)
        make_big(root, args.entries)
    if args.baseline is None:
        results = serve_and_time(root, data / "cache", args, None)
        print_table(results)
    else:
        ours = Path(__file__).resolve().parents[1] / "src"
        results = {}
        for n in range(1, args.pairs + 1):
            for label, src in (("before", args.baseline), ("after", ours)):
                cache = Path(tempfile.mkdtemp(prefix="cache-", dir=data))
                results[f"{label}, pair {n}"] = run = serve_and_time(root, cache, args, src)
                print(f"-- {label}, pair {n} ({src})")
                print_table(run)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
