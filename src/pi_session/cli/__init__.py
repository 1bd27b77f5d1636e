"""The ``pi-session`` command line.

This module stays tiny so that :func:`main` is running before the command
line's own modules load: Ctrl-C during that first tenth of a second ends
with one line and status 130, like Ctrl-C at any later point.
"""

# no `from __future__ import annotations`: that imports the __future__ module,
# which start-up has not loaded, and a Ctrl-C landing in that import would
# show a traceback through this file before main() runs (the annotations
# here are valid at run time)

import sys

from .interrupts import interrupted_by
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from .app import app

__all__ = ["app", "main"]


def _root_option(args: list[str], names: tuple[str, ...]) -> bool:
    """Whether a command line (without the program name) is one of
    ``names`` before any command, maybe after the global ``--store URL``."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in names:
            return True
        elif arg == "--store":
            skip = True
        elif not arg.startswith("--store="):
            return False
    return False


def asks_version(args: list[str]) -> bool:
    """Whether a command line (without the program name) is ``--version``
    before any command, maybe after the global ``--store URL``: answered
    without loading the command line's modules (typer, rich), in the time
    Python takes to start."""
    return _root_option(args, ("--version",))


def asks_root_help(args: list[str]) -> bool:
    """Whether a command line (without the program name) asks for the root
    help: ``--help`` or ``-h`` before any command, maybe after the global
    ``--store URL``. It is written from :mod:`.catalog` without loading
    typer: as plain text when standard output is not a terminal
    (:func:`asks_plain_help`), else in rich's layout."""
    return _root_option(args, ("--help", "-h"))


def asks_plain_help(args: list[str]) -> bool:
    """Whether a command line (without the program name) asks for the root
    help (:func:`asks_root_help`) while standard output is not a terminal:
    then the help is written as plain text from :mod:`.catalog` without
    loading typer or rich."""
    if not asks_root_help(args):
        return False
    try:
        return not sys.stdout.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def main() -> None:
    """Console-script entry point (see :func:`pi_session.cli.app.main`).
    ``--version``, the root ``--help`` (plain text when standard output is
    not a terminal, else in typer's rich layout drawn by rich alone), a warm
    ``usage daily|weekly|monthly --json`` and ``info SESSION [--json]``
    (:func:`_answered_early`) are answered here, before typer is
    imported."""
    if asks_version(sys.argv[1:]):
        from .. import __version__

        try:
            sys.stdout.write(f"pi-session {__version__}\n")
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            raise SystemExit(1) from None
        return
    if asks_root_help(sys.argv[1:]):
        try:
            if asks_plain_help(sys.argv[1:]):
                from .catalog import plain_root_help, terminal_width

                sys.stdout.write(plain_root_help(terminal_width()))
            else:
                from .catalog import print_terminal_root_help

                print_terminal_root_help()
            sys.stdout.flush()
        except BrokenPipeError:
            from .answers import quiet_stdout

            quiet_stdout()
        except (OSError, ValueError, AttributeError):
            raise SystemExit(1) from None
        except BaseException as exc:
            _exit_if_interrupted(exc)
            raise
        return
    if _answered_early(sys.argv[1:]):
        return
    try:
        from .app import main as run
    except BaseException as exc:
        _exit_if_interrupted(exc)
        raise
    run()


def _exit_if_interrupted(exc: BaseException) -> None:
    """When ``exc`` is (or was caused by) Ctrl-C: print one line and exit
    with status 130 (no traceback), as every command does."""
    if not interrupted_by(exc):
        return
    try:
        sys.stderr.write("pi-session: interrupted\n")
    except (OSError, ValueError):
        pass
    raise SystemExit(130) from None


def _answered_early(args: list[str]) -> bool:
    """Whether a start-up fast path printed the answer of ``args`` (a
    command line without the program name): a warm ``usage
    daily|weekly|monthly --json`` (:mod:`.usage_fast`) or ``info SESSION
    [--json]`` (:mod:`.info_fast`). Each module's ``answer(args)`` answers
    only what it reads exactly as the full command does and returns False,
    having printed nothing, otherwise; anything it raises (but Ctrl-C: one
    line, exit status 130) leaves the command to typer's path, which then
    reports what went wrong."""
    usage = "usage" in args[:3] and "--json" in args  # not an entry literal: the subcommand
    if not usage and args[:1] != ["info"]:
        return False
    try:
        if usage:
            from .usage_fast import answer
        else:
            from .info_fast import answer
        return answer(args)
    except BaseException as exc:
        _exit_if_interrupted(exc)  # Ctrl-C, also wrapped in another error
        if isinstance(exc, Exception):
            return False  # the full command answers (and reports what went wrong)
        raise


def __getattr__(name: str) -> object:
    if name == "app":
        from .app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
