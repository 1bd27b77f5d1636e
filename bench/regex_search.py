#!/usr/bin/env python3
"""Benchmark of ``pi-session serve`` under hostile ``re:`` searches: while
N searches whose patterns backtrack for the whole time budget or would
take hundreds of megabytes run at once (threads, each its own
connection), other pages are asked for again and again through HTTP;
prints how long those pages took (median and worst), how the hostile
searches answered and the server's peak resident memory.

    python bench/regex_search.py [--hostile 8] [--sessions 200] [--data DIR] [--json OUT]
                                 [--baseline DIR]

With ``--baseline DIR`` (a checkout's ``src`` under DIR, e.g. ``git
archive main src | tar -x -C DIR``) the same run is made on that version
too, on the same store. The server is started with a token
(``PI_SESSION_SERVE_TOKEN``), sent with every request. The target: other
pages answer within a second while the hostile searches run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from web import make_sessions  # noqa: E402

HOG = "0196d000-0000-7000-8000-00000000a0a0"
SRC = Path(__file__).resolve().parents[1] / "src"
PATTERNS = ("re:((?:a|aa)+)+b", "re:(((a)))*$")
"""Backtracks for the whole budget on a run of ``a``; takes about 250
bytes a character matched (500 MB on the hog's 2 MB message)."""


def make_hog(root: Path, chars: int = 2_000_000) -> None:
    """A session whose user message is ``chars`` letters ``a``."""
    d = root / "--hog--"
    d.mkdir(parents=True, exist_ok=True)
    stamp = "2026-11-30T11:00:00.000Z"
    records = [
        {"type": "session", "version": 3, "id": HOG, "timestamp": stamp, "cwd": "/hog"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
         "message": {"role": "user", "content": "a" * chars, "timestamp": 1_796_000_000_000}},
    ]
    (d / f"2026-11-30T11-00-00-000Z_{HOG}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def peak_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def run(src: Path, root: Path, cache: Path, hostile: int) -> dict:
    """Start the server of ``src`` over ``root``, run the hostile searches
    and time the other pages meanwhile; stop it."""
    exe = Path(sys.executable).parent / "pi-session"
    token = secrets.token_urlsafe(16)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PI_SESSION_SERVE_TOKEN": token,
           "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([str(exe), "--store", str(root), "serve", "--port", "0", "--read-only"], stdout=subprocess.PIPE, text=True, env=env)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        assert proc.stdout is not None
        url = re.search(r"http://\S+?/", proc.stdout.readline())[0]  # type: ignore[index]
        with httpx.Client(base_url=url, timeout=600, headers=headers) as client:
            sid = client.get("/api/v1/sessions").json()["sessions"][-1]["id"]
            pages = ["/", f"/s/{sid}", f"/api/v1/sessions/{sid}", "/api/v1/search?q=question"]
            for page in pages:
                client.get(page).raise_for_status()  # warm: the index built, the listing read
            answers: list[tuple[int, float, str]] = []
            lock = threading.Lock()

            def one(q: str) -> None:
                started = time.perf_counter()
                with httpx.Client(base_url=url, timeout=600, headers=headers) as own:
                    response = own.get("/api/v1/search", params={"q": q})
                took = time.perf_counter() - started
                message = response.json().get("error", {}).get("message", "") if response.status_code != 200 else "200 with hits"
                with lock:
                    answers.append((response.status_code, took, message))

            threads = [threading.Thread(target=one, args=(PATTERNS[i % len(PATTERNS)],)) for i in range(hostile)]
            started = time.perf_counter()
            for t in threads:
                t.start()
            latencies: dict[str, list[float]] = {p: [] for p in pages}
            while any(t.is_alive() for t in threads):
                for page in pages:
                    t0 = time.perf_counter()
                    client.get(page).raise_for_status()
                    latencies[page].append(time.perf_counter() - t0)
            for t in threads:
                t.join()
            window = time.perf_counter() - started
    finally:
        peak = peak_mb(proc.pid)
        proc.terminate()
        proc.wait(10)
    return {
        "hostile": hostile,
        "window_s": round(window, 2),
        "pages": {p: {"n": len(v), "median_s": round(statistics.median(v), 3), "max_s": round(max(v), 3)} for p, v in latencies.items() if v},
        "hostile_answers": sorted({f"{code}: {message[:110]}" for code, _, message in answers}),
        "hostile_max_s": round(max(took for _, took, _ in answers), 2),
        "server_peak_mb": round(peak) if peak is not None else None,
    }


def show(title: str, result: dict) -> None:
    print(f"\n{title}: {result['hostile']} hostile re: searches, done in {result['window_s']} s "
          f"(slowest {result['hostile_max_s']} s); server peak memory {result['server_peak_mb']} MB")
    print(f"  {'page':<60} {'n':>4} {'median':>8} {'worst':>8}")
    for page, r in result["pages"].items():
        print(f"  {page:<60} {r['n']:>4} {r['median_s']:>7.3f}s {r['max_s']:>7.3f}s")
    for answer in result["hostile_answers"]:
        print(f"  hostile answer: {answer}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hostile", type=int, default=8)
    p.add_argument("--sessions", type=int, default=200)
    p.add_argument("--data")
    p.add_argument("--json", dest="json_out")
    p.add_argument("--baseline")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.data) if args.data else Path(tmp)
        root = data / "sessions"
        if not root.exists():
            make_sessions(root, args.sessions)
            make_hog(root)
        results = {"this": run(SRC, root, data / "cache-this", args.hostile)}
        show("this version", results["this"])
        if args.baseline:
            results["baseline"] = run(Path(args.baseline), root, data / "cache-baseline", args.hostile)
            show(f"baseline ({args.baseline})", results["baseline"])
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
