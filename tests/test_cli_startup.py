"""Start-up of the ``pi-session`` console script: ``--version`` loads
neither typer nor rich, ``--help`` loads no command module and none of
what only Markdown help, pretty tracebacks or typer's pydantic checks need,
``info`` loads only what it uses, and the root group's table of commands
is every command the modules register. Checked by running what the console script
runs and listing ``sys.modules`` at exit, never by timing (``bench/startup.py`` measures the times)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from pi_session import SessionManager
from pi_session.cli.app import COMMANDS

EXE = Path(sys.executable).parent / "pi-session"


_RUN = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
    "from pi_session.cli import main\n"  # what the console script runs
    "sys.argv[0] = 'pi-session'\n"
    "sys.exit(main())\n"
)


def imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run what the console script runs; returns the result (stderr
    without the list of modules) and the modules loaded when it exited
    (``sys.modules``: also those imported through ``importlib``, which
    ``-X importtime`` does not list)."""
    assert EXE.exists()
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-c", _RUN, *args], capture_output=True, text=True, env=env, timeout=600)
    head, _sep, tail = done.stderr.rpartition("\nMODULES ")
    assert _sep, done.stderr
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, head), set(tail.split())


def loaded(modules: set[str], *prefixes: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("argv", [["--version"], ["--store", "sqlite:///nowhere.db", "--version"], ["--store=x", "--version"]])
def test_version_loads_neither_typer_nor_rich(tmp_path, argv):
    result, modules = imported(tmp_path, *argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pi-session 0.1.0\n"
    assert modules  # the profile was taken
    assert loaded(modules, "typer", "rich", "click", "pi_session.cli.app", "pi_session.manager.session_manager") == []


def test_help_loads_no_command_module(tmp_path):
    for argv in (["--help"], ["-h"], []):
        result, modules = imported(tmp_path, *argv)
        assert result.returncode in (0, 2) and "Usage:" in result.stdout + result.stderr, argv
        assert all(f" {name} " in result.stdout + result.stderr for name in ("ls", "info", "search", "eval-compaction")), argv
        assert loaded(modules, *(f"pi_session.cli.{module}" for module, _summary in COMMANDS.values())) == [], argv
        assert loaded(modules, "pydantic", "markdown_it", "pygments", "textual", "pi_session.manager.session_manager", "pi_session.operations") == [], argv


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--store", "sqlite:///nowhere.db", "--help"]])
def test_piped_help_loads_neither_typer_nor_rich(tmp_path, argv):
    """The root help written to a pipe (not a terminal) is plain text from
    the command table, loaded without typer, rich or click."""
    result, modules = imported(tmp_path, *argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: pi-session [OPTIONS] COMMAND [ARGS]...\n")
    assert modules  # the profile was taken
    assert loaded(modules, "typer", "rich", "click", "pi_session.cli.app", "pi_session.cli.common", "pi_session.manager.session_manager") == []
    one_line = " ".join(result.stdout.split())
    for name, (_module, summary) in COMMANDS.items():
        assert f" {name} {summary}" in one_line, name
    assert all(len(line) <= 100 for line in result.stdout.splitlines())  # COLUMNS=100


def _words(text: str) -> set[str]:
    """The words of a help screen without its boxes and punctuation of layout."""
    for box in "╭╮╰╯─│":
        text = text.replace(box, " ")
    return {word.strip(",:") for word in text.split()} - {""}


def test_plain_help_holds_the_words_of_the_terminal_help():
    """The plain root help (:func:`pi_session.cli.catalog.plain_root_help`)
    and the one typer shows in a terminal, in rich's layout, hold the same
    words: the command table, the descriptions and the options' help are
    one source."""
    from typer.testing import CliRunner

    from pi_session.cli.app import app
    from pi_session.cli.catalog import plain_root_help

    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "╭─ Commands" in shown.output  # rich's layout
    assert _words(plain_root_help(200)) == _words(shown.output)


def test_info_loads_only_what_it_uses(tmp_path):
    manager = SessionManager.create(str(tmp_path), tmp_path)
    manager.append_message({"role": "user", "content": "hello", "timestamp": 1})
    manager.save()
    result, modules = imported(tmp_path, "info", str(manager.get_session_file()))
    assert result.returncode == 0, result.stderr
    assert "messages" in result.stdout
    assert "pi_session.cli.info_fast" in modules and "pi_session.manager.session_manager" in modules
    # answered before typer loads (tests/test_cli_fast_paths.py): no command module at all
    assert loaded(modules, *(f"pi_session.cli.{module}" for module, _summary in COMMANDS.values())) == []
    assert loaded(modules, "pydantic", "markdown_it", "pygments", "textual", "pi_session.operations.compacting",
                  "pi_session.compaction", "pi_session.viewer", "pi_session.search") == []


def test_a_command_that_needs_typers_checks_still_gets_them(cli):
    """An integer typed on the command line still goes through typer's
    parsing and bounds (only missing values and defaults skip them)."""
    bad = cli("search", "x", "--limit", "0")
    assert bad.returncode == 2 and "--limit" in bad.stderr
    worse = cli("search", "x", "--limit", "many")
    assert worse.returncode == 2 and "--limit" in worse.stderr


def test_the_command_table_is_every_registered_command():
    """:data:`pi_session.cli.app.COMMANDS` names each module's commands,
    in the order the modules register them."""
    found: dict[str, str] = {}
    for module_name in dict.fromkeys(module for module, _summary in COMMANDS.values()):
        module = importlib.import_module(f"pi_session.cli.{module_name}")
        sub = typer.Typer()
        module.register(sub)
        for info in sub.registered_commands:
            assert info.callback is not None
            name = info.name or info.callback.__name__.lower().replace("_", "-")
            found[name] = module_name
    assert {name: module for name, (module, _summary) in COMMANDS.items()} == found
    assert all(summary.endswith(".") and len(summary) <= 100 for _module, summary in COMMANDS.values())


def test_the_startup_benchmark_prints_its_ratios():
    """``bench/startup.py`` runs (one repetition): a smoke run, not a timing."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "bench" / "startup.py"), "-n", "1", "--markdown"],
                          capture_output=True, text=True, timeout=600, cwd=root)
    assert done.returncode == 0, done.stderr
    for row in ("python -c pass", "--version", "--help", "info", "| `pi-session --version` |"):
        assert row in done.stdout, row
