#!/usr/bin/env python3
"""Benchmark of ``pi-session serve``: the sessions page over many sessions
and the first screen of a huge session, through the real server (the
console script on 127.0.0.1) and HTTP, as a browser asks for them.

    python bench/web.py [--sessions 10000] [--entries 100000] [--data DIR] [--json OUT]
                        [--baseline DIR --rounds N] [--fresh-index] [--session-first]

Prints, per page, the time of the first request of a freshly started
server (cold) and the median of the next ones (warm), each with the CPU
time the server spent on it, and the time from starting the server to its
printed URL. With ``--baseline DIR`` (a checkout's ``src`` under DIR, e.g.
``git archive main src | tar -x -C DIR``) the same pages are timed on that
version too, the two servers started alternately on the same store, so
both see the same machine load. Targets: the sessions page of 10,000
sessions in under 300 ms, the first screen of a 100,000-entry session in
under a second, from the first request.
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


ROOT = Path(__file__).resolve().parents[1]


def server_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) the process has used, from
    ``/proc/<pid>/stat``; None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(client: httpx.Client, path: str, runs: int, pid: int | None = None) -> dict:
    """The first request of ``path`` and the median of ``runs`` more:
    wall seconds, and the server's CPU seconds (``pid``) next to them."""
    times, cpus = [], []
    for _ in range(runs + 1):
        before = server_cpu(pid) if pid else None
        start = time.perf_counter()
        response = client.get(path)
        times.append(time.perf_counter() - start)
        after = server_cpu(pid) if pid else None
        cpus.append(after - before if before is not None and after is not None else None)
        response.raise_for_status()
    out = {"cold_s": round(times[0], 3), "warm_median_s": round(statistics.median(times[1:]), 3), "bytes": len(response.content)}
    if cpus[0] is not None:
        out["cold_cpu_s"] = round(cpus[0], 3)
        out["warm_cpu_median_s"] = round(statistics.median(c or 0.0 for c in cpus[1:]), 3)
    return out


def serve_and_time(src: Path, root: Path, cache: Path, pages: list[tuple[str, str]], runs: int) -> dict:
    """Start ``pi-session serve --read-only`` on the sources ``src`` over
    ``root`` (listing index in ``cache``), time ``pages`` and stop it.
    ``ready_s``: from the start of the process to its printed URL."""
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    started = time.perf_counter()
    proc = subprocess.Popen([str(exe), "--store", str(root), "serve", "--port", "0", "--read-only"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://\S+?/", line)[0]  # type: ignore[index]
        token = re.search(r"[?&]token=([^&\s]+)", line)  # the access token of a version that makes one
        headers = {"Authorization": f"Bearer {token[1]}"} if token else {}
        results: dict = {"ready_s": round(time.perf_counter() - started, 3)}
        with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
            for name, path in pages:
                results[name] = timed(client, path, runs, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    return results


def print_table(title: str, results: dict) -> None:
    names = [k for k in results if k != "ready_s"]
    width = max(len(k) for k in names)
    print(f"{title}: ready after {results['ready_s']:.3f}s")
    print(f"{'page':<{width}}  {'cold':>8}  {'cold cpu':>8}  {'warm':>8}  {'warm cpu':>8}  {'size':>10}")
    for name in names:
        r = results[name]
        print(f"{name:<{width}}  {r['cold_s']:>7.3f}s  {r.get('cold_cpu_s', float('nan')):>7.3f}s  {r['warm_median_s']:>7.3f}s  "
              f"{r.get('warm_cpu_median_s', float('nan')):>7.3f}s  {r['bytes']:>10,}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=None, help="where to write the store (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout's source tree (DIR/src) to time too, alternately with this one, on the same store")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: this many before/after pairs")
    parser.add_argument("--fresh-index", action="store_true", help="start each server without a listing index (default: one built first)")
    parser.add_argument("--session-first", action="store_true", help="ask for the huge session's pages before the sessions pages")
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="pi-session-web-bench-"))
    root = data / "sessions"
    if not root.exists():
        make_sessions(root, args.sessions)
        make_big(root, args.entries)
    pages = [
        (f"sessions page ({args.sessions + 1:,} sessions)", "/"),
        (f"sessions API, sessions 151-300 ({args.sessions + 1:,} sessions)", "/api/v1/sessions?offset=150&limit=150"),
        (f"sessions API, filter of one session ({args.sessions + 1:,} sessions)", "/api/v1/sessions?q=000000000007&limit=150"),
        (f"session page, first screen ({args.entries:,} entries)", f"/s/{BIG}?at={args.entries - 1:08x}"),
        (f"session page, first screen, secrets shown ({args.entries:,} entries)", f"/s/{BIG}?secrets=show"),
    ]
    if args.session_first:  # a fresh server's very first request is the huge session's page
        pages = pages[3:] + pages[:3]
    current = ROOT / "src"
    variants = [("after", current)] if args.baseline is None else [("before", args.baseline / "src"), ("after", current)]
    runs: list[dict] = []

    def cache_dir(n: int) -> Path:
        if not args.fresh_index:
            return data / "cache"
        fresh = data / f"cache-{n}"
        if fresh.exists():
            import shutil

            shutil.rmtree(fresh)
        return fresh

    if not args.fresh_index and not (data / "cache").exists():
        serve_and_time(current, root, data / "cache", [], 0)  # builds the listing index, unmeasured
    n = 0
    for round_no in range(args.rounds if args.baseline is not None else 1):
        order = variants if round_no % 2 == 0 else variants[::-1]
        for label, src in order:
            results = serve_and_time(src, root, cache_dir(n), pages, args.runs)
            n += 1
            runs.append({"variant": label, "round": round_no + 1, "results": results})
            print_table(f"{label}, round {round_no + 1}" if args.baseline is not None else label, results)
    if args.json:
        if args.baseline is None:
            args.json.write_text(json.dumps(runs[0]["results"], indent=2) + "\n")
        else:
            args.json.write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
