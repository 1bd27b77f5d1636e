"""Benchmark of usage reports: ``pi-session usage daily --json`` over a
generated sessions directory (bench/gen.py's sessions, spread over
projects), cold (an empty cache: every file read) and warm (the root's
digest: every file only ``stat``-ed, answered before typer loads; the
first warm run sums the digest's rows, the next ones print the remembered
answer; after one session file is appended to, the digest is brought up to
date), side by side with ccusage 20.0.24's
``ccusage pi daily --offline --json`` on the same directory in the same run
(ccusage keeps no cache: every run reads every file). Both are timed as the
user runs them, a new process each time (ours with its bytecode cached, as
an installed package has it, whatever ``PYTHONDONTWRITEBYTECODE`` says);
their totals are checked to agree.

Usage::

    python bench/usage.py                    # 10,000 sessions
    python bench/usage.py --sessions 2000
    python bench/usage.py --quick            # a smoke run (seconds)
    python bench/usage.py --baseline /tmp/base/src   # another version in the same run

ccusage: ``--ccusage PATH``, else the copy the tests install
(``~/.cache/ccusage-ref-20.0.24``), else ``ccusage`` on PATH; without it
only ours is timed. Results: a table on stdout, ``--json FILE`` / ``--md
FILE`` (default ``bench/results/usage.{json,md}`` unless ``--quick``). The
corpus is kept in ``--data`` (default ``bench/data/usage-<sessions>``) and
reused.
"""

from __future__ import annotations

import argparse
import datetime
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


def append_message(path: Path, n: int) -> None:
    """Append one assistant message to ``path`` (a copy of its last one
    under a new id, a minute later), as pi does during a session; a file
    linked from elsewhere (a corpus shared with ``cp -al``) is copied first."""
    if path.stat().st_nlink > 1:
        temp = path.with_name(path.name + ".tmp")
        shutil.copy2(path, temp)
        os.replace(temp, path)
    last = None
    with open(path, "rb") as f:
        for line in f:
            if b'"assistant"' in line and b'"usage"' in line:
                last = line
    if last is None:
        raise SystemExit(f"{path}: no assistant message to copy")
    entry = json.loads(last)
    entry["parentId"], entry["id"] = entry["id"], f"bench{n:04d}{os.getpid() % 10000:04d}"
    moment = datetime.datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")) + datetime.timedelta(minutes=1)
    entry["timestamp"] = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    with open(path, "ab") as f:
        f.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(args.data or HERE / "data" / f"usage-{args.sessions}")
    corpus = make_corpus(data, args.sessions)
    sessions = str(data / "sessions")
    cache = Path(tempfile.mkdtemp(prefix="usage-bench-cache-"))
    exe = str(Path(sys.executable).parent / "pi-session")
    ours = [exe, "usage", "daily", "--json", "--timezone", "UTC", "--store", sessions]
    variants = {"ours": str(ROOT / "src")}
    if args.baseline:
        variants["base"] = str(Path(args.baseline).resolve())
    # bytecode cached, as an installed package has it (pip compiles it)
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {
        name: {**plain, "XDG_CACHE_HOME": str(cache / name), "TZ": "UTC", "PYTHONPATH": src}
        for name, src in variants.items()
    }
    for env in envs.values():
        os.makedirs(env["XDG_CACHE_HOME"], exist_ok=True)
    files = sorted(Path(sessions).glob("*/*.jsonl"))
    result: dict[str, Any] = {**corpus}
    report: dict[str, Any] = {}
    totals: dict[str, Any] = {}

    def timed(name: str, key: str) -> None:
        elapsed, out = _time(ours, envs[name])
        result.setdefault(f"{name}_{key}_runs", []).append(elapsed)
        result.setdefault(f"{name}_{key}_cpu_runs", []).append(CPU[-1])
        totals[name] = out["totals"]
        report.update(out)

    try:
        for name in envs:  # cold: an empty cache, every file read
            timed(name, "cold")
        for name in envs:  # the digest's rows summed (then remembered)
            for answers in Path(envs[name]["XDG_CACHE_HOME"]).glob("pi-session/usage/*.answers.*"):
                answers.unlink()  # a cold run may have remembered its answer already
            timed(name, "warm_first")
        for _ in range(args.repeat):  # nothing changed: the remembered answer
            for name in envs:
                timed(name, "warm")
        for i in range(args.repeat):  # one session file appended to: the digest brought up to date
            append_message(files[(i * 7919) % len(files)], i)
            for name in envs:
                timed(name, "append")
        # in-process: the report without the interpreter's start-up
        from pi_session.usage import report_for

        os.environ["XDG_CACHE_HOME"] = envs["ours"]["XDG_CACHE_HOME"]
        lib_runs = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            report_for(sessions, "daily", timezone="UTC")
            lib_runs.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for key in [k for k in result if k.endswith("_runs")]:
        result[key[: -len("_runs")] + "_s"] = statistics.median(result.pop(key))
    result.update({
        "ours_warm_library_s": statistics.median(lib_runs),
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "days": len(report["daily"]),
        "total_cost": report["totals"]["totalCost"],
        "total_tokens": report["totals"]["totalTokens"],
        "baseline": args.baseline,
    })
    if "base" in totals:
        result["same_totals_as_baseline"] = totals["base"]["totalTokens"] == totals["ours"]["totalTokens"] and abs(
            totals["base"]["totalCost"] - totals["ours"]["totalCost"]) <= 1e-6
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
            theirs["totals"]["totalTokens"] == totals["ours"]["totalTokens"]
            and abs(theirs["totals"]["totalCost"] - totals["ours"]["totalCost"]) <= 1e-6 * max(1.0, len(report["daily"]))
        )
        result["warm_speedup"] = result["ccusage_s"] / result["ours_warm_s"]
        result["append_speedup"] = result["ccusage_s"] / result["ours_append_s"]
        result["cold_speedup"] = result["ccusage_s"] / result["ours_cold_s"]
        result["warm_cpu_ratio"] = result["ccusage_cpu_s"] / result["ours_warm_cpu_s"]
    return result


RUNS = [
    ("cold", "cold (empty cache: every file read)"),
    ("warm_first", "warm, first (files only stat-ed, the digest's rows summed)"),
    ("append", "warm, one session file appended to (the digest brought up to date)"),
    ("warm", "warm, asked again (files only stat-ed, the answer remembered)"),
]


def table(r: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    base = "base_cold_s" in r
    lines = [
        f"Corpus: {r['sessions']:,} sessions in {r['projects']} projects, {r['bytes'] / 1e6:,.0f} MB of JSONL, {r['days']} days; "
        f"`usage daily --json`, a new process each run (median); {r['cpus']} CPUs, load average {r['load_average']:.1f} at the end."
        + (f" Baseline: the package at `{r['baseline']}`, timed in the same run, interleaved." if base else ""),
        "",
        "| run | wall time | vs ccusage | CPU time | vs ccusage |" + (" baseline wall | baseline CPU |" if base else ""),
        "|---|---:|---:|---:|---:|" + ("---:|---:|" if base else ""),
    ]
    speed = lambda s: f"{r['ccusage_s'] / s:,.1f}×" if "ccusage_s" in r else "-"  # noqa: E731
    cpu = lambda s: f"{r['ccusage_cpu_s'] / s:,.1f}×" if "ccusage_cpu_s" in r else "-"  # noqa: E731
    for key, label in RUNS:
        wall, cpu_s = r[f"ours_{key}_s"], r[f"ours_{key}_cpu_s"]
        line = f"| pi-session, {label} | {wall:.3f} s | {speed(wall)} | {cpu_s:.3f} s | {cpu(cpu_s)} |"
        if base:
            line += f" {r[f'base_{key}_s']:.3f} s | {r[f'base_{key}_cpu_s']:.3f} s |"
        lines.append(line)
    lines.append(f"| pi-session, warm, in-process (`pi_session.usage.report_for`, no interpreter start-up) | {r['ours_warm_library_s']:.3f} s | {speed(r['ours_warm_library_s'])} | - | - |" + (" - | - |" if base else ""))
    if "ccusage_s" in r:
        lines.append(f"| ccusage {r['ccusage_version']} `pi daily --offline --json` (no cache) | {r['ccusage_s']:.2f} s | 1× | {r['ccusage_cpu_s']:.2f} s | 1× |" + (" - | - |" if base else ""))
        lines.append("")
        lines.append(f"Same totals as ccusage: {'yes' if r['same_totals'] else 'NO'}.")
    if base:
        lines.append(f"Same totals as the baseline: {'yes' if r['same_totals_as_baseline'] else 'NO'}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=10_000)
    p.add_argument("--data")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--ccusage")
    p.add_argument("--baseline", help="another checkout's src directory, timed in the same run (git archive main src | tar -x -C DIR)")
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
