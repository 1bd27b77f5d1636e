"""Benchmark of usage reports: ``pi-session usage daily --json`` over a
generated sessions directory (bench/gen.py's sessions, spread over
projects), cold (an empty cache: every file read) and warm (the root's
digest: every file only ``stat``-ed, answered before typer loads; the
first warm run sums the digest's rows, the next ones print the remembered
answer), side by side with ccusage 20.0.24's
``ccusage pi daily --offline --json`` on the same directory in the same run
(ccusage keeps no cache: every run reads every file). Both are timed as the
user runs them, a new process each time; their totals are checked to agree.

Usage::

    python bench/usage.py                    # 10,000 sessions
    python bench/usage.py --sessions 2000
    python bench/usage.py --quick            # a smoke run (seconds)

ccusage: ``--ccusage PATH``, else the copy the tests install
(``~/.cache/ccusage-ref-20.0.24``), else ``ccusage`` on PATH; without it
only ours is timed. Results: a table on stdout, ``--json FILE`` / ``--md
FILE`` (default ``bench/results/usage.{json,md}`` unless ``--quick``). The
corpus is kept in ``--data`` (default ``bench/data/usage-<sessions>``) and
reused.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

import gen  # noqa: E402

PROJECTS = 20


def make_corpus(data: Path, sessions: int) -> dict[str, Any]:
    """``data/sessions/<project>/*.jsonl``: ``sessions`` files over
    :data:`PROJECTS` projects (reused when complete)."""
    root = data / "sessions"
    marker = data / "corpus.json"
    if marker.exists():
        return dict(json.loads(marker.read_text()))
    if root.exists():
        shutil.rmtree(root)
    total = 0
    per = [sessions // PROJECTS + (1 if i < sessions % PROJECTS else 0) for i in range(PROJECTS)]
    for i, n in enumerate(per):
        if n:
            info = gen.generate_session_dir(root / f"--home-user-project{i}--", n, seed=1000 + i, cwd=f"/home/user/project{i}")
            total += info["bytes"]
    out = {"sessions": sessions, "bytes": total, "projects": PROJECTS}
    marker.write_text(json.dumps(out))
    return out


def _ccusage(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    installed = Path.home() / ".cache" / "ccusage-ref-20.0.24" / "node_modules" / ".bin" / "ccusage"
    if installed.exists():
        return str(installed)
    return shutil.which("ccusage")


CPU: list[float] = []
"""CPU seconds (user + system) of each timed process, in order."""


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one run of ``cmd`` and its JSON output; its CPU
    seconds are appended to :data:`CPU` (a measure the machine's load
    changes less)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {done.stderr[-2000:]}")
    return elapsed, json.loads(done.stdout)


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(args.data or HERE / "data" / f"usage-{args.sessions}")
    corpus = make_corpus(data, args.sessions)
    sessions = str(data / "sessions")
    cache = Path(tempfile.mkdtemp(prefix="usage-bench-cache-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TZ": "UTC", "PYTHONPATH": str(ROOT / "src")}
    exe = str(Path(sys.executable).parent / "pi-session")
    ours = [exe, "usage", "daily", "--json", "--timezone", "UTC", "--store", sessions]
    try:
        cold, report = _time(ours, env)
        cold_cpu = CPU[-1]
        first_warm = _time(ours, env)[0]  # summed from the digest (then remembered)
        first_warm_cpu = CPU[-1]
        warm_runs = [_time(ours, env)[0] for _ in range(args.repeat)]
        warm_cpu = statistics.median(CPU[-args.repeat:])
        # in-process: the report without the interpreter's start-up
        from pi_session.usage import report_for

        os.environ["XDG_CACHE_HOME"] = str(cache)
        lib_runs = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            report_for(sessions, "daily", timezone="UTC")
            lib_runs.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    result: dict[str, Any] = {
        **corpus,
        "ours_cold_s": cold,
        "ours_warm_first_s": first_warm,
        "ours_warm_first_cpu_s": first_warm_cpu,
        "ours_warm_s": statistics.median(warm_runs),
        "ours_warm_library_s": statistics.median(lib_runs),
        "ours_cold_cpu_s": cold_cpu,
        "ours_warm_cpu_s": warm_cpu,
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "days": len(report["daily"]),
        "total_cost": report["totals"]["totalCost"],
        "total_tokens": report["totals"]["totalTokens"],
    }
    ccu = _ccusage(args.ccusage)
    if ccu is not None and not args.no_ccusage:
        cmd = [ccu, "pi", "daily", "--offline", "--json", "--timezone", "UTC", "--pi-path", sessions]
        runs = []
        theirs: dict[str, Any] = {}
        for _ in range(max(1, args.repeat // 2)):
            elapsed, theirs = _time(cmd, {**os.environ, "TZ": "UTC", "NO_COLOR": "1"})
            runs.append(elapsed)
        result["ccusage_s"] = statistics.median(runs)
        result["ccusage_cpu_s"] = statistics.median(CPU[-len(runs):])
        result["ccusage_version"] = "20.0.24"
        result["same_totals"] = (
            theirs["totals"]["totalTokens"] == report["totals"]["totalTokens"]
            and abs(theirs["totals"]["totalCost"] - report["totals"]["totalCost"]) <= 1e-6 * max(1.0, len(report["daily"]))
        )
        result["warm_speedup"] = result["ccusage_s"] / result["ours_warm_s"]
        result["cold_speedup"] = result["ccusage_s"] / result["ours_cold_s"]
        result["warm_cpu_ratio"] = result["ccusage_cpu_s"] / result["ours_warm_cpu_s"]
    return result


def table(r: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    lines = [
        f"Corpus: {r['sessions']:,} sessions in {r['projects']} projects, {r['bytes'] / 1e6:,.0f} MB of JSONL, {r['days']} days; "
        f"`usage daily --json`, a new process each run (median); {r['cpus']} CPUs, load average {r['load_average']:.1f} at the end.",
        "",
        "| run | wall time | vs ccusage | CPU time | vs ccusage |",
        "|---|---:|---:|---:|---:|",
    ]
    speed = lambda s: f"{r['ccusage_s'] / s:,.1f}×" if "ccusage_s" in r else "-"  # noqa: E731
    cpu = lambda s: f"{r['ccusage_cpu_s'] / s:,.1f}×" if "ccusage_cpu_s" in r else "-"  # noqa: E731
    lines.append(f"| pi-session, cold (empty cache: every file read) | {r['ours_cold_s']:.2f} s | {speed(r['ours_cold_s'])} | {r['ours_cold_cpu_s']:.2f} s | {cpu(r['ours_cold_cpu_s'])} |")
    lines.append(f"| pi-session, warm, first (digest: files only stat-ed, its rows summed) | {r['ours_warm_first_s']:.3f} s | {speed(r['ours_warm_first_s'])} | {r['ours_warm_first_cpu_s']:.3f} s | {cpu(r['ours_warm_first_cpu_s'])} |")
    lines.append(f"| pi-session, warm, asked again (files only stat-ed, the answer remembered) | {r['ours_warm_s']:.3f} s | {speed(r['ours_warm_s'])} | {r['ours_warm_cpu_s']:.3f} s | {cpu(r['ours_warm_cpu_s'])} |")
    lines.append(f"| pi-session, warm, in-process (`pi_session.usage.report_for`, no interpreter start-up) | {r['ours_warm_library_s']:.3f} s | {speed(r['ours_warm_library_s'])} | - | - |")
    if "ccusage_s" in r:
        lines.append(f"| ccusage {r['ccusage_version']} `pi daily --offline --json` (no cache) | {r['ccusage_s']:.2f} s | 1× | {r['ccusage_cpu_s']:.2f} s | 1× |")
        lines.append("")
        lines.append(f"Same totals as ccusage: {'yes' if r['same_totals'] else 'NO'}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=10_000)
    p.add_argument("--data")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--ccusage")
    p.add_argument("--no-ccusage", action="store_true")
    p.add_argument("--quick", action="store_true", help="a smoke run: 60 sessions, 2 repeats, no results written")
    p.add_argument("--json", dest="json_out")
    p.add_argument("--md", dest="md_out")
    args = p.parse_args()
    if args.quick:
        args.sessions, args.repeat = 60, 2
    r = run(args)
    text = table(r)
    sys.stdout.write(text)
    json_out = args.json_out or (None if args.quick else str(HERE / "results" / "usage.json"))
    md_out = args.md_out or (None if args.quick else str(HERE / "results" / "usage.md"))
    if json_out:
        Path(json_out).write_text(json.dumps(r, indent=1) + "\n")
    if md_out:
        Path(md_out).write_text(text)


if __name__ == "__main__":
    main()
