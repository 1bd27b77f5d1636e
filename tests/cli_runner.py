"""Running ``pi-session`` command lines inside the test process.

:func:`run_in_process` calls the console script's own entry point,
:func:`pi_session.cli.main` (so the answers given before typer loads —
``--version``, the root ``--help``, the ``info`` and ``usage`` fast paths —
are exercised too), with everything a process would get of its own patched
for the call and restored after it:

- ``sys.argv`` (``argv[0]`` is the console script's path);
- ``os.environ`` (replaced by exactly the given environment; ``TZ`` is
  applied with ``time.tzset()``); an environment variable read only as
  Python starts (``PYTHON*``, the locale's) that differs from the test
  process's is refused (:class:`NeedsAProcess`): it would be silently
  ignored, so such a test needs the ``cli_process`` fixture;
- ``sys.modules["__main__"]`` (a script's, without a package: click names
  the program after ``argv[0]``, not ``python -m pytest``);
- the working directory and the umask;
- ``sys.stdin`` (the given input, or nothing: like ``/dev/null``),
  ``sys.stdout`` and ``sys.stderr`` (captured separately; none is a
  terminal, like the pipes of ``subprocess.run(capture_output=True)``;
  none has a file descriptor, so nothing reaches the test process's own);
- the warning filters and ``warnings.showwarning`` (the entry point sets
  its own), the recursion limit;
- the command line's rich consoles (:mod:`pi_session.cli.common` makes them
  at import, with the width and colour settings of the environment then):
  remade for each call from the call's environment, as a new process makes
  them.

The answer is a :class:`subprocess.CompletedProcess` (``args``,
``returncode``, ``stdout``, ``stderr`` as text, newlines translated as
``text=True`` does): ``SystemExit``'s code is the return code (None is 0; a
message is written to stderr and is 1, as Python does); any other exception
escaping ``main()`` is a traceback on stderr and return code 1, as an
uncaught exception ends a process.

Why not click's / typer's ``CliRunner``: it invokes a typer app's click
command rather than the entry point (so the fast paths and the entry
point's own error handling would be skipped), forces click's help width to
80 columns, echoes prompted input into the output, and leaves ``sys.argv``,
the working directory and the umask alone.

The test process's own file descriptors 0–2 stay as they are: a program
the command starts writes its stderr there, not into the captured stderr,
and the width a command takes without ``$COLUMNS`` (from a terminal on any
of them) is the test run's (none under pytest's capture; the fixtures set
``COLUMNS``).

What a process gives and this cannot (tests of these use the
``cli_process`` fixture): start-up time and what start-up imports, signals,
real pipes (a closed reader, ``| head``), terminals, file descriptors
(``os.dup2`` onto stdout), concurrency between command lines, and
directories the process cannot return to.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import traceback
import types
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["EXE", "NeedsAProcess", "run_in_process"]

EXE = Path(sys.executable).parent / "pi-session"
"""The console script (``argv[0]`` of an in-process call; what the
``cli_process`` fixture runs)."""


STARTUP_ONLY = ("LANG", "LC_ALL", "LC_CTYPE")
"""Environment variables (besides ``PYTHON*``) read only as Python starts."""


class NeedsAProcess(ValueError):
    """A command line asks for what only a new process gives (see
    :func:`run_in_process`): use the ``cli_process`` fixture."""


def _startup_changes(env: Mapping[str, str]) -> list[str]:
    """The variables read only at start-up whose value in ``env`` differs
    from the test process's."""
    names = {n for n in (*env, *os.environ) if n.startswith("PYTHON") or n in STARTUP_ONLY}
    return sorted(n for n in names if env.get(n) != os.environ.get(n))


class _Captured(io.BytesIO):
    """A byte buffer that keeps what was written when it is closed (a
    command may close its standard output)."""

    kept: bytes = b""

    def close(self) -> None:
        if not self.closed:
            self.kept = self.getvalue()
        super().close()

    def value(self) -> bytes:
        return self.kept if self.closed else self.getvalue()


def _text(data: bytes, errors: str) -> str:
    """``data`` decoded as ``subprocess.run(text=True)`` does (UTF-8 here;
    ``\\r\\n`` and ``\\r`` read as ``\\n``)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, newline=None).read()


def _remake_consoles() -> None:
    """Remake the command line's module-level rich consoles for the current
    environment and streams, if :mod:`pi_session.cli.common` is loaded (it
    made them at import, for the environment and streams of that moment);
    the objects stay the same, since command modules import them by name."""
    common = sys.modules.get("pi_session.cli.common")
    if common is None:
        return  # loaded during the call: made for this call's environment
    from pi_session.cli.widths import console_width_for

    common.console.__init__(highlight=False, emoji=False, width=console_width_for(sys.stdout))
    common.err_console.__init__(stderr=True, highlight=False, emoji=False, width=console_width_for(sys.stderr))


def run_in_process(
    args: Sequence[str],
    env: Mapping[str, str],
    input: str | bytes | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``pi-session ARGS`` in this process (see the module's docstring).

    Args:
        args: the command line without the program name.
        env: the whole environment of the call (``os.environ`` is exactly
            this during the call).
        input: standard input (text is encoded as UTF-8), or None for none.
        cwd: the working directory of the call, or None for the current one.

    Returns:
        ``CompletedProcess(args=[EXE, *args], returncode, stdout, stderr)``.

    Raises:
        NeedsAProcess: ``env`` changes a variable read only at start-up.
    """
    from pi_session.cli import main

    changed = _startup_changes(env)
    if changed:
        raise NeedsAProcess(f"{', '.join(changed)} only take effect in a new process: use the cli_process fixture")

    argv = [str(EXE), *args]
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    out, err = _Captured(), _Captured()
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", line_buffering=True)

    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv = sys.argv
    saved_main = sys.modules["__main__"]
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    saved_limit = sys.getrecursionlimit()
    code: int
    with warnings.catch_warnings():
        try:
            os.environ.clear()
            os.environ.update(env)
            time.tzset()
            if cwd is not None:
                os.chdir(cwd)
            sys.argv = argv
            sys.modules["__main__"] = types.ModuleType("__main__")
            sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
            _remake_consoles()
            try:
                main()
                code = 0
            except SystemExit as exc:
                if exc.code is None:
                    code = 0
                elif isinstance(exc.code, int):
                    code = exc.code
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except KeyboardInterrupt:  # the test run's own Ctrl-C
                raise
            except BaseException:  # an uncaught exception ends a process with a traceback and 1
                traceback.print_exc(file=stderr)
                code = 1
            for stream in (stdout, stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            sys.argv = saved_argv
            sys.modules["__main__"] = saved_main
            os.chdir(saved_cwd)
            os.umask(saved_umask)
            sys.setrecursionlimit(saved_limit)
            os.environ.clear()
            os.environ.update(saved_env)
            time.tzset()
            _remake_consoles()
    return subprocess.CompletedProcess(argv, code, _text(out.value(), "strict"), _text(err.value(), "backslashreplace"))
