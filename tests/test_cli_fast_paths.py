"""The start-up fast paths of the console script print what typer's path
prints, byte for byte: the root ``--help`` in a terminal (typer's rich
layout drawn by rich alone, :func:`pi_session.cli.catalog.print_terminal_root_help`)
and ``info SESSION [--json]`` (:mod:`pi_session.cli.info_fast`), piped and
in a real pseudo-terminal, on several sessions, with the cases the fast
path leaves to typer (warnings, a store, tabs in a value, errors) among
them. Typer's path is run as ``pi_session.cli.app.main``, the command line
without its fast paths. Also checks, by listing ``sys.modules`` at exit,
that the fast paths load neither typer nor (for ``info``) rich."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from pi_session import SessionManager
from pi_session.cli.catalog import COMMANDS

EXE = Path(sys.executable).parent / "pi-session"
TYPER_PATH = [sys.executable, "-c", "import sys; from pi_session.cli.app import main; sys.argv[0] = 'pi-session'; main()"]
"""The command line through typer only (no fast path)."""

LIST_MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
    "from pi_session.cli import main\n"
    "sys.argv[0] = 'pi-session'\n"
    "sys.exit(main())\n"
)
_RICH_ENV = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PI_SESSION_STORE", "COLUMNS", "LINES", "TERMINAL_WIDTH",
             "PY_COLORS", "GITHUB_ACTIONS", "_TYPER_FORCE_DISABLE_TERMINAL")


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _RICH_ENV}
    env.update({"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "TERM": "xterm-256color"}, **extra)
    return env


def piped(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run(argv, capture_output=True, env=env, timeout=600)
    return done.returncode, done.stdout, done.stderr


def in_terminal(argv: list[str], env: dict[str, str], columns: int = 100, stderr_apart: bool = False) -> tuple[int, bytes, bytes]:
    """Run ``argv`` with its standard output (and error, unless
    ``stderr_apart``) on a pseudo-terminal of ``columns`` columns; returns
    the exit status, what the terminal received and standard error when
    kept apart."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    child = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.PIPE if stderr_apart else slave, env=env)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    err = child.stderr.read() if child.stderr is not None else b""
    return child.wait(timeout=600), shown, err


def modules_of(run: tuple[int, bytes, bytes]) -> tuple[tuple[int, bytes, bytes], set[str]]:
    """Split the module list that :data:`LIST_MODULES` writes at exit off a run's standard error."""
    code, out, err = run
    head, sep, tail = err.decode().rpartition("\nMODULES ")
    assert sep, err
    return (code, out, head.encode()), set(tail.split())


def loaded(modules: set[str], *prefixes: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


# --- the root --help in a terminal ------------------------------------------------


@pytest.mark.parametrize("columns", [60, 100, 200])
def test_terminal_root_help_is_typers_byte_for_byte(tmp_path, columns):
    env = environment(tmp_path)
    fast = in_terminal([str(EXE), "--help"], env, columns)
    typer = in_terminal([*TYPER_PATH, "--help"], env, columns)
    assert fast[0] == typer[0] == 0
    assert "╭─ Commands" in re.sub(r"\x1b\[[0-9;]*m", "", fast[1].decode())
    assert fast[1] == typer[1]


@pytest.mark.parametrize("extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"FORCE_COLOR": "1"}, {"COLUMNS": "70"}, {"TERMINAL_WIDTH": "90"},
                                   {"_TYPER_FORCE_DISABLE_TERMINAL": "1"}])
def test_terminal_root_help_follows_the_environment_as_typer_does(tmp_path, extra):
    env = environment(tmp_path, **extra)
    assert in_terminal([str(EXE), "-h"], env) == in_terminal([*TYPER_PATH, "-h"], env)


def test_terminal_root_help_lists_every_command_without_loading_typer(tmp_path):
    run, modules = modules_of(in_terminal([sys.executable, "-c", LIST_MODULES, "--help"], environment(tmp_path), 120, stderr_apart=True))
    code, shown, err = run
    assert code == 0 and err == b""
    screen = re.sub(r"\x1b\[[0-9;]*m", "", shown.decode())
    rows = [line.strip("│ \r") for line in screen.splitlines()]
    listed = [row.split()[0] for row in rows[rows.index(next(r for r in rows if "Commands" in r)) + 1:] if row and row.split()[0] in COMMANDS]
    assert listed == list(COMMANDS)  # every command of the table, in its order
    for name, (_module, summary) in COMMANDS.items():
        assert summary.split()[0] in screen, name
    assert "rich.console" in modules
    assert loaded(modules, "typer", "click", "pi_session.cli.app", "pi_session.cli.common", "pi_session.manager") == []


# --- info -----------------------------------------------------------------------------


def _session(directory: Path, name: str | None = None, labels: int = 0, damaged: bool = False) -> Path:
    manager = SessionManager.create(str(directory), session_dir=str(directory))
    ids = []
    for i in range(3):
        ids.append(manager.append_message({"role": "user", "content": f"Question {i}: what does the parser do?", "timestamp": 1}))
        ids.append(manager.append_message({
            "role": "assistant", "content": [{"type": "text", "text": f"Answer {i}."}], "api": "openai-completions",
            "provider": "openai", "model": "gpt-4o", "stopReason": "stop", "timestamp": 2,
            "usage": {"input": 1200, "output": 30, "cacheRead": 500, "cacheWrite": 0, "totalTokens": 1730,
                      "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0.0005, "cacheWrite": 0, "total": 0.0125}},
        }))
    for i in range(labels):
        manager.append_label_change(ids[i % len(ids)], f"label {i} 세션")
    if name is not None:
        manager.append_session_info(name)
    manager.save()
    path = Path(str(manager.get_session_file()))
    if damaged:
        with path.open("ab") as f:
            f.write(b'{"type":"message","id":"torn\n')
    return path


@pytest.fixture
def sessions(tmp_path, fixture_copy):
    """Session files as ``info`` meets them, by what they exercise."""
    home = tmp_path / "s"
    home.mkdir()
    return {
        "plain": _session(home),
        "wide name and labels": _session(home, name="리팩터링 세션 — 파서", labels=12),
        "a tab in the name": _session(home, name="tab\there and\nnewline"),
        "damaged": _session(home, damaged=True),
        "version 1 (a note)": fixture_copy("large-session.jsonl"),
    }


def _compare_info(tmp_path, args: list[str], env: dict[str, str]) -> None:
    fast, typer = piped([str(EXE), "info", *args], env), piped([*TYPER_PATH, "info", *args], env)
    assert fast == typer, args
    for columns in (40, 60, 100):  # rows wrapped at word boundaries (a path after a /) alike
        fast_tty = in_terminal([str(EXE), "info", *args], env, columns)
        typer_tty = in_terminal([*TYPER_PATH, "info", *args], env, columns)
        assert fast_tty == typer_tty, (args, columns)


@pytest.mark.parametrize("options", [[], ["--json"]])
def test_info_prints_what_typers_path_prints(tmp_path, sessions, options):
    env = environment(tmp_path)
    for what, path in sessions.items():
        _compare_info(tmp_path, [str(path), *options], env)
        _compare_info(tmp_path, [*options, str(path)], env)
        assert piped([str(EXE), "info", str(path), *options], env)[0] == 0, what


def test_info_by_id_prefix_and_its_errors_are_typers(tmp_path):
    env = environment(tmp_path)
    project = tmp_path / "agent" / "sessions" / "--project--"
    project.mkdir(parents=True)
    path = _session(project, name="by id")
    session_id = path.stem.split("_", 1)[1]
    for args in ([session_id[:8]], [session_id[:8], "--json"], [str(tmp_path / "missing.jsonl")], ["zzzz"], [""], ["--help"],
                 [str(path), "--leaf", "x"], [str(path), "extra"]):
        _compare_info(tmp_path, args, env)
    assert b"by id" in piped([str(EXE), "info", session_id[:8]], env)[1]


@pytest.mark.parametrize("extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"FORCE_COLOR": "1"}, {"COLUMNS": "30"}, {"PI_SESSION_STORE": "."}])
def test_info_follows_the_environment_as_typer_does(tmp_path, sessions, extra):
    env = environment(tmp_path, **extra)
    _compare_info(tmp_path, [str(sessions["wide name and labels"])], env)


@pytest.mark.parametrize("options", [[], ["--json"]])
def test_info_fast_path_loads_neither_typer_nor_rich(tmp_path, sessions, options):
    env = environment(tmp_path)
    # a terminal wide enough for the wide session's rows; at 60 columns the plain
    # session's path wraps (after a /), which the fast path does as the full command does
    for name, columns in (("wide name and labels", 400), ("plain", 60)):
        argv = [sys.executable, "-c", LIST_MODULES, "info", str(sessions[name]), *options]
        for run in (piped(argv, env), in_terminal(argv, env, columns=columns, stderr_apart=True)):
            (code, out, err), modules = modules_of(run)
            assert code == 0 and err == b"" and out
            assert "pi_session.cli.info_fast" in modules and "pi_session.manager.session_manager" in modules
            assert loaded(modules, "typer", "click", "rich", "msgspec", "pi_session.cli.app", "pi_session.cli.session_cmds",
                          "pi_session.cli.common") == []


def test_what_the_fast_path_leaves_goes_through_typer(tmp_path, sessions):
    """A store, or a session with something to warn about, is answered by typer's path."""
    env = environment(tmp_path)
    for args in (["--store", str(tmp_path), "info", str(sessions["plain"])], ["info", str(sessions["damaged"])]):
        (code, _out, err), modules = modules_of(piped([sys.executable, "-c", LIST_MODULES, *args], env))
        assert "pi_session.cli.session_cmds" in modules and "typer" in modules, args
    assert b"warning" in err


_WRAPPED_INTERRUPT = """
import sys
class WrappedInterrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise RuntimeError("Error calling __set_name__") from exc
        return None
sys.meta_path.insert(0, WrappedInterrupt())
from pi_session.cli import main
sys.argv[0] = "pi-session"
main()
"""


def test_ctrl_c_during_a_fast_path_is_an_interrupt(tmp_path, sessions):
    """Ctrl-C landing in a fast path's imports, even wrapped in another
    error (as class creation wraps it), ends the command with one line and
    status 130: it is not taken for a failure to hand to typer's path."""
    env = environment(tmp_path)
    info = [sys.executable, "-c", _WRAPPED_INTERRUPT.format(module="pi_session.cli.info_view"), "info", str(sessions["plain"])]
    assert piped(info, env) == (130, b"", b"pi-session: interrupted\n")
    helps = [sys.executable, "-c", _WRAPPED_INTERRUPT.format(module="rich.panel"), "--help"]
    assert in_terminal(helps, env, stderr_apart=True) == (130, b"", b"pi-session: interrupted\n")
