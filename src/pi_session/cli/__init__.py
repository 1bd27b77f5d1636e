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


def asks_version(args: list[str]) -> bool:
    """Whether a command line (without the program name) is ``--version``
    before any command, maybe after the global ``--store URL``: answered
    without loading the command line's modules (typer, rich), in the time
    Python takes to start."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--version":
            return True
        elif arg == "--store":
            skip = True
        elif not arg.startswith("--store="):
            return False
    return False


def main() -> None:
    """Console-script entry point (see :func:`pi_session.cli.app.main`).
    ``--version`` is answered here, before anything else is imported, and
    so is a warm ``usage daily|weekly|monthly --json``
    (:mod:`pi_session.cli.usage_fast`)."""
    if asks_version(sys.argv[1:]):
        from .. import __version__

        try:
            sys.stdout.write(f"pi-session {__version__}\n")
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            raise SystemExit(1) from None
        return
    if "usage" in sys.argv[1:4] and "--json" in sys.argv:
        try:
            from .usage_fast import answer

            if answer(sys.argv[1:]):
                return
        except Exception:
            pass  # the full command answers (and reports what went wrong)
        except BaseException as exc:
            if not interrupted_by(exc):
                raise
            try:
                sys.stderr.write("pi-session: interrupted\n")
            except (OSError, ValueError):
                pass
            raise SystemExit(130) from None
    try:
        from .app import main as run
    except BaseException as exc:
        if not interrupted_by(exc):
            raise
        try:
            sys.stderr.write("pi-session: interrupted\n")
        except (OSError, ValueError):
            pass
        raise SystemExit(130) from None
    run()


def __getattr__(name: str) -> object:
    if name == "app":
        from .app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
