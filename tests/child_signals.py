"""Signals as a terminal delivers them, for the tests that interrupt a real
process."""

from __future__ import annotations

import signal


def sigint_as_a_terminal_sends_it() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: the child starts with SIGINT's
    default disposition, so Python turns it into KeyboardInterrupt even when
    the test runner itself was started in the background of a shell without
    job control (which starts it with SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
