"""Writing a fast path's answer to standard output the way the full
command line ends: a closed pipe (``pi-session info F | head -1``) is
quiet with exit status 0, any other failed write exits 1. Loads neither
typer nor rich (:mod:`pi_session.cli.info_fast`,
:mod:`pi_session.cli.usage_fast`, the terminal help)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["quiet_stdout", "write_answer"]


def quiet_stdout() -> None:
    """After a closed pipe: point standard output at /dev/null so that the
    interpreter's final flush does not report the pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_answer(write: Callable[[], object]) -> bool:
    """Call ``write`` and flush standard output; True. Once writing has
    begun the answer is the fast path's, whatever happens: a closed pipe
    ends quietly (:func:`quiet_stdout`); another failed write exits with
    status 1 (``SystemExit``)."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
    except (OSError, ValueError):
        raise SystemExit(1) from None
    return True
