"""Benchmark of ``slim``: open + context of an image-heavy session before and
after slimming it, pi-session next to pi 1.6, plus the time ``slim`` and
``restore`` take.

The session is generated (``tests/lean_helpers.image_session``: 40 turns,
each with one image of random base64, a compaction keeping the last turn,
an abandoned branch), slimmed with the defaults (only what is outside the
model context at the leaf moves, so both tools build the same context),
and each tool opens it in a fresh process (bench/run.py's workers:
pi-session's ``SessionManager.open`` + ``build_session_context``, pi's
``SessionManager.open`` + ``buildSessionContext`` via bench/pi_bench.mjs;
copying the file is not timed).

Usage::

    python bench/lean.py                 # 100 MB, about a minute on 2 cores
    python bench/lean.py --size 1024     # the 1 GB figure (a few minutes; needs ~3 GB of disk)
    python bench/lean.py --quick --no-pi # a smoke run (seconds)

Results: a table on stdout, ``--json FILE`` (default
``bench/results/lean.json`` unless ``--quick``). The session is written
under ``--data`` (default: a temporary directory, removed after).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

import run as bench_run  # noqa: E402  (bench/run.py: the workers and pi's location)


def _pi_cli(*args: str) -> float:
    """Run the real ``pi-session`` console script; returns wall seconds."""
    exe = Path(sys.executable).parent / "pi-session"
    t = time.perf_counter()
    subprocess.run([str(exe), *args], check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - t


def _sample(path: Path, pi: Any) -> dict[str, Any]:
    """Open + context, ms and peak RSS, by pi-session and (when it runs) pi 1.6."""
    out: dict[str, Any] = {"bytes": path.stat().st_size}
    py = bench_run.run_python("file", path)
    if py is not None:
        out["py"] = {"open_context_ms": py["ops"]["open_context"], "peak_rss": py.get("peak_rss_context"), "messages": py["context_messages"]}
    if pi is not None:
        js = bench_run.run_pi(pi, "file", path)
        if js is not None:
            ops = js["ops"]
            out["pi"] = {"open_context_ms": ops["open"][0] + ops["context"][0], "peak_rss": js.get("maxRssContextBytes"), "messages": js.get("contextMessages")}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100, help="session size in MB (default 100; 1024 for the 1 GB figure)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: a 5 MB session")
    ap.add_argument("--no-pi", action="store_true", help="do not run pi (node)")
    ap.add_argument("--data", type=Path, default=None, help="where to write the session (default: a temporary directory)")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)
    from lean_helpers import image_session

    size_mb = 5 if args.quick else args.size
    pi = None
    if not args.no_pi:
        (pv,) = bench_run.pi_versions(["1.6.0"])
        pi = pv if pv.node is not None else None
        if pi is None:
            print(f"pi 1.6.0 not timed: {pv.why}", file=sys.stderr)
    tmp = None
    data = args.data
    if data is None:
        tmp = tempfile.mkdtemp(prefix="pi-session-lean-bench-")
        data = Path(tmp)
    data.mkdir(parents=True, exist_ok=True)
    try:
        path = data / "images.jsonl"
        t = time.perf_counter()
        image_session(path, total_bytes=size_mb << 20, rounds=40)
        gen_s = time.perf_counter() - t
        before = _sample(path, pi)
        slim_s = _pi_cli("slim", str(path), "--no-backup")
        after = _sample(path, pi)
        restore_s = _pi_cli("restore", str(path))
        restored = path.stat().st_size
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    result = {"sizeMB": size_mb, "generate_s": gen_s, "slim_s": slim_s, "restore_s": restore_s,
              "before": before, "after": after, "restoredBytes": restored}

    def cell(sample: dict[str, Any], who: str) -> str:
        s = sample.get(who)
        if s is None:
            return "n/a"
        rss = f", {s['peak_rss'] / 2**20:.0f} MB RSS" if s.get("peak_rss") else ""
        return f"{s['open_context_ms']:,.0f} ms{rss}"

    print(f"slim of a {size_mb} MB image-heavy session (only what is outside the context at the leaf)")
    print(f"{'':22}{'bytes':>14}  {'pi-session open+context':>32}  {'pi 1.6 open+context':>32}")
    for name, sample in (("before slim", before), ("after slim", after)):
        print(f"{name:22}{sample['bytes']:>14,}  {cell(sample, 'py'):>32}  {cell(sample, 'pi'):>32}")
    print(f"slim {slim_s:.1f} s, restore {restore_s:.1f} s (back to {restored:,} bytes)")
    target = args.json or (None if args.quick else HERE / "results" / "lean.json")
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
