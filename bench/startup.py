"""Start-up time of the ``pi-session`` command line, as ratios to a bare
``python -c pass`` measured in the same run.

Each repetition runs, one after the other in an order that rotates from
repetition to repetition (to share the machine's load fairly): the bare
interpreter, ``pi-session --version``, ``pi-session --help`` (written to
/dev/null: the plain help, and to a pseudo-terminal: the help in typer's
rich layout) and ``pi-session info SMALL`` (a session of four messages, made in a temporary
directory; to /dev/null and to a pseudo-terminal). Every process is timed from the outside (spawn to exit,
``time.perf_counter``) and by the CPU time it used (user + system, from
its resource usage: less disturbed by other work on the machine); output
goes to ``/dev/null`` (but for the terminal row's). The table shows the medians of each and their
ratios to the bare interpreter's medians, next to the targets (``--version`` within 2.5 times, ``--help`` and ``info`` within 8
times).

The console script next to this interpreter is used (``pi-session`` in the
virtualenv's ``bin``), else ``python -c "from pi_session.cli import main;
main()"``. Byte-code caches are used as an installed package uses them
(``PYTHONDONTWRITEBYTECODE`` is dropped; one warm-up run of each first).

Where the time goes: ``python -X importtime -m pi_session.cli ...`` or
``--importtime`` here, which prints the 15 slowest imports of each command.

Usage::

    python bench/startup.py              # 21 repetitions
    python bench/startup.py -n 51        # more
    python bench/startup.py --markdown   # also as a markdown table (README)
    python bench/startup.py --importtime # also the slowest imports
    python bench/startup.py --baseline /tmp/base/src  # and the baseline's, interleaved
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TERMINAL = "(terminal)"
"""A command name ending with this runs with its standard output on a
pseudo-terminal (read and discarded), as in an interactive shell."""


BEFORE = " [before]"
"""A command name ending with this runs the baseline's sources (``--baseline``)."""

TARGETS = {"--version": 2.5, "--help": 8.0, f"--help {TERMINAL}": 8.0, "info": 8.0, f"info {TERMINAL}": 8.0}


def small_session(directory: Path) -> Path:
    """A session file of four messages (two turns) in ``directory``."""
    from pi_session import SessionManager

    manager = SessionManager.create(str(directory), session_dir=str(directory))
    now = int(time.time() * 1000)
    for i in range(2):
        manager.append_message({"role": "user", "content": f"Question {i}: what does the parser do?", "timestamp": now})
        manager.append_message({
            "role": "assistant", "content": [{"type": "text", "text": f"Answer {i}: it reads lines."}], "api": "openai-completions",
            "provider": "openai", "model": "gpt-4o", "stopReason": "stop", "timestamp": now,
            "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        })
    path = manager.get_session_file()
    assert path is not None
    return Path(path)


def command_line() -> list[str]:
    """How to run ``pi-session`` with this interpreter."""
    script = Path(sys.executable).parent / "pi-session"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from pi_session.cli import main; main()"]


def run_once(argv: list[str], env: dict[str, str], terminal: bool = False) -> tuple[float, float]:
    """Wall seconds (spawn to exit) and CPU seconds (user + system, from
    the child's resource usage) of one run; ``terminal``: standard output
    on a pseudo-terminal instead of /dev/null."""
    import pty
    import threading

    master = slave = -1
    reader = None
    if terminal:
        master, slave = pty.openpty()

        def drain() -> None:
            try:
                while os.read(master, 65536):
                    pass
            except OSError:
                pass

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=slave if terminal else subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped above
    if terminal:
        os.close(slave)
        assert reader is not None
        reader.join(5)
        os.close(master)
    return wall, usage.ru_utime + usage.ru_stime


def measure(
    commands: dict[str, list[str]], repetitions: int, env: dict[str, str], envs: dict[str, dict[str, str]] | None = None
) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of each command per repetition (rotating order);
    ``envs`` gives some commands their own environment (a baseline's)."""
    envs = envs or {}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for name in names:  # warm-up: byte-code caches, the page cache
        run_once(commands[name], envs.get(name, env), name.removesuffix(BEFORE).endswith(TERMINAL))
    for rep in range(repetitions):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(run_once(commands[name], envs.get(name, env), name.removesuffix(BEFORE).endswith(TERMINAL)))
    return times


def slowest_imports(argv: list[str], env: dict[str, str], count: int = 15) -> list[tuple[int, str]]:
    """The ``count`` imports with the largest cumulative time (µs) of one run."""
    code = "import sys; from pi_session.cli import main; sys.argv = ['pi-session', *sys.argv[1:]]; main()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *argv], env=env, capture_output=True, text=True, check=False)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=21, help="repetitions (default 21)")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    parser.add_argument("--importtime", action="store_true", help="also print the slowest imports of each command")
    parser.add_argument("--baseline", metavar="SRC", help="also run each command on the package under SRC (e.g. a "
                        "`git archive main src` checkout's src), interleaved with the others, as rows marked [before]")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tmp = Path(tempfile.mkdtemp(prefix="pi-session-startup-"))
    try:
        env["PI_CODING_AGENT_DIR"] = str(tmp / "agent")
        session = small_session(tmp)
        cli = command_line()
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--version": [*cli, "--version"],
            "--help": [*cli, "--help"],
            f"--help {TERMINAL}": [*cli, "--help"],
            "info": [*cli, "info", str(session)],
            f"info {TERMINAL}": [*cli, "info", str(session)],
        }
        envs: dict[str, dict[str, str]] = {}
        if args.baseline:
            before_env = {**env, "PYTHONPATH": os.path.abspath(args.baseline)}
            for name in [name for name in commands if name != "python -c pass"]:
                commands[name + BEFORE] = commands[name]
                envs[name + BEFORE] = before_env
        times = measure(commands, args.n, env, envs)
        base_wall = statistics.median(w for w, _c in times["python -c pass"])
        base_cpu = statistics.median(c for _w, c in times["python -c pass"])
        rows = []
        for name, values in times.items():
            wall = statistics.median(w for w, _c in values)
            cpu = statistics.median(c for _w, c in values)
            target = TARGETS.get(name)
            rows.append((name, wall * 1000, wall / base_wall, cpu * 1000, cpu / base_cpu, f"{target:g}×" if target else ""))
        print(f"start-up, median of {args.n} runs (python {sys.version.split()[0]}, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f})")
        print(f"  {'':<28} {'wall':>9}  {'ratio':>6}  {'cpu':>9}  {'ratio':>6}  target")
        for name, wall_ms, wall_ratio, cpu_ms, cpu_ratio, target in rows:
            over = " OVER" if target and wall_ratio > TARGETS[name] else ""
            print(f"  {name:<28} {wall_ms:6.1f} ms  {wall_ratio:5.2f}×  {cpu_ms:6.1f} ms  {cpu_ratio:5.2f}×  {target}{over}")
        if args.markdown:
            print()
            print("| command | wall (median) | × bare | CPU (median) | × bare | target |")
            print("|---|---:|---:|---:|---:|---:|")
            for name, wall_ms, wall_ratio, cpu_ms, cpu_ratio, target in rows:
                bare = name.removesuffix(BEFORE)
                shown = "`python -c pass`" if name == "python -c pass" else f"`pi-session {bare.removesuffix(TERMINAL).strip()}`" + (" in a terminal" if bare.endswith(TERMINAL) else "")
                shown += " (before)" if name.endswith(BEFORE) else ""
                print(f"| {shown} | {wall_ms:.0f} ms | {wall_ratio:.1f}× | {cpu_ms:.0f} ms | {cpu_ratio:.1f}× | {target} |")
        if args.importtime:
            for name, argv in (("--help", ["--help"]), ("info", ["info", str(session)])):
                print(f"\nslowest imports of {name} (cumulative µs, one run, -X importtime):")
                for micros, module in slowest_imports(argv, env):
                    print(f"  {micros:9,}  {module}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
