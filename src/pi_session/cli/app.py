"""The typer application; each command group lives in its own module and
registers itself here.

:func:`main` is the console script. Besides running the app it is the CLI's
safety net: whatever escapes a command becomes one line on stderr instead of
a traceback (``PI_SESSION_DEBUG=1`` shows the traceback of an internal
error).
"""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
import warnings
from typing import Any, Callable, Optional

import typer

from . import check_cmds, common, compact_cmds, eval_cmds, prompt_cmds, secrets_cmds, session_cmds, store_cmds
from . import browse_cmds, search_cmds, usage_cmds
from .interrupts import interrupted_by

app = typer.Typer(
    name="pi-session",
    help="Inspect, branch, compact, repair and export pi coding-agent sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        from .. import __version__

        sys.stdout.write(f"pi-session {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(
        None, "--version", help="Print the version and exit.", is_eager=True, callback=_version_callback
    ),
    store: Optional[str] = typer.Option(None, "--store", envvar="PI_SESSION_STORE", metavar="URL", help=common.STORE_HELP),
) -> None:
    """Inspect, branch, compact, repair and export pi coding-agent sessions."""
    common.set_store_url(store)


for module in (session_cmds, compact_cmds, check_cmds, prompt_cmds, eval_cmds, store_cmds, secrets_cmds):
    module.register(app)
browse_cmds.register(app)
search_cmds.register(app)
usage_cmds.register(app)


def _interruptible(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command so Ctrl-C ends it with one line and exit status 130
    (typer would otherwise exit 130 silently)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            _say_interrupted()
            raise typer.Exit(130) from None

    return wrapper


def help_text(doc: str | None) -> str | None:
    """A command's docstring as ``--help`` shows it: each paragraph on one
    line (rich wraps it to the terminal), bullet lines kept apart, and
    reST's double backquotes shown as plain quotes."""
    if not doc:
        return doc
    import inspect

    paragraphs = []
    for block in inspect.cleandoc(doc).split("\n\n"):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if lines and not line.startswith(("- ", "* ")):
                lines[-1] += " " + line
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs).replace("``", "'")


for _info in app.registered_commands:
    if _info.callback is not None:
        if _info.help is None:
            _info.help = help_text(_info.callback.__doc__)
        _info.callback = _interruptible(_info.callback)


def _hide_flag_types() -> None:
    """Typer's help shows ``<bool>`` beside every on/off flag; flags take no
    value, so show nothing there. A repeatable option shows ``<str>``, not
    ``<list[str]>`` (its help says it repeats). Cosmetic: skipped if typer
    changes."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - other typer versions
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_pi_session_patched", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> Any:
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        shown = original(self, ctx)
        # a repeatable option shows its item type, not Python's "list[str]"
        if isinstance(shown, str) and shown.startswith("<list[") and shown.endswith("]>"):
            return "<" + shown[len("<list[") : -len("]>")] + ">"
        if isinstance(shown, str) and shown.startswith("list[") and shown.endswith("]"):
            return "<" + shown[len("list[") : -1] + ">"
        return shown

    display_type_rich._pi_session_patched = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_hide_flag_types()


def _plain_usage_names() -> None:
    """Typer 0.29 writes required arguments as ``{session}`` in usage lines;
    show them as people write them in docs, ``SESSION`` (optional ones
    ``[ENTRY_ID]``). Cosmetic: skipped if typer changes."""
    try:
        from typer.core import TyperArgument
    except ImportError:  # pragma: no cover - other typer versions
        return
    if not hasattr(TyperArgument, "_usage_display_name") or getattr(TyperArgument, "_pi_session_patched", False):
        return

    def usage_name(self: Any) -> str:
        name = str(self.metavar or self.name or "").upper()
        if not self.required:
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
    TyperArgument._pi_session_patched = True  # type: ignore[attr-defined]


_plain_usage_names()


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"pi-session: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _say_interrupted() -> None:
    """The one line for Ctrl-C, unless one was printed already."""
    if not common.interrupt_reported:
        common.interrupt_reported = True
        _say("interrupted")


def _one_line(text: str) -> str:
    from ..terminal import sanitize

    return " ".join(sanitize(text).split())


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None) -> None:
    """Library warnings (e.g. an ownership a rewrite could not keep) as one
    ``pi-session: warning: ...`` line, without Python's source location."""
    _say(f"warning: {_one_line(str(message))}")


class ClosedOutput(io.TextIOBase):
    """What ``sys.stdout`` is when the process started with its standard
    output closed (``pi-session tree FILE >&-``; Python then sets
    ``sys.stdout`` to None and every print is silently lost): a stream
    whose writes raise ``OSError(EBADF)``, so a command that has something
    to print fails with one line on stderr and exit status 1, as coreutils'
    ``write error`` does, while a command that prints nothing still runs."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed: nothing can be printed")


def main() -> None:
    """Console-script entry point.

    Exit statuses besides the commands' own: 1 for an OSError (``pi-session:
    <file>: <reason>``) or an unreadable session file; 130 when interrupted;
    2 for an unexpected internal error (one line; ``PI_SESSION_DEBUG=1``
    re-raises it for a traceback). Usage errors stay typer's.
    """
    from ..storage import SessionFileError
    from ..stores.base import StoreError

    debug = os.environ.get("PI_SESSION_DEBUG", "") not in ("", "0")
    if not debug:
        warnings.showwarning = _show_warning
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    try:
        app()
    except SystemExit as exc:
        if exc.code == 130:
            _say_interrupted()  # typer ends a Ctrl-C during parsing with 130, silently
        raise
    except KeyboardInterrupt:
        _say_interrupted()
        sys.exit(130)
    except (SessionFileError, StoreError) as exc:
        _say(_one_line(str(exc)))
        sys.exit(1)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            # the reader went away: stop quietly
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the final flush
            except OSError:
                pass
            sys.exit(1)
        if debug:
            raise
        reason = exc.strerror or str(exc) or type(exc).__name__
        where = exc.filename if exc.filename is not None else None
        if exc.errno == errno.EEXIST and where is not None and os.path.exists(where) and not os.path.isdir(where):
            reason = "not a directory (a file is in the way)"
        _say(_one_line(f"{os.fsdecode(where)}: {reason}" if where is not None else reason))
        sys.exit(1)
    except Exception as exc:
        if interrupted_by(exc):  # a Ctrl-C wrapped by an import or class creation
            _say_interrupted()
            sys.exit(130)
        if debug:
            raise
        _say(
            _one_line(f"internal error: {type(exc).__name__}: {exc}")
            + " (set PI_SESSION_DEBUG=1 for a traceback)"
        )
        sys.exit(2)
