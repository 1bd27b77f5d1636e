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
from typer.core import TyperCommand, TyperGroup

from . import common
from .catalog import COMMANDS, ROOT_HELP, STORE_ENV, STORE_HELP, VERSION_HELP
from .interrupts import interrupted_by

__all__ = ["COMMANDS", "LazyGroup", "app", "help_text", "main"]

class LazyGroup(TyperGroup):
    """The root command group: a command's module is imported when the
    command is looked up to run (or to show its own ``--help``), not at
    start-up; the root ``--help`` lists the commands from :data:`COMMANDS`
    without importing any."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = self.commands.get(cmd_name)
        if found is not None or cmd_name not in COMMANDS:
            return found
        module_name, summary = COMMANDS[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=summary)
        self._load(module_name)
        return self.commands.get(cmd_name)

    def _load(self, module_name: str) -> None:
        """Import a command module and add its commands (with the CLI's
        help layout and Ctrl-C handling: :func:`help_text`,
        :func:`_interruptible`)."""
        import importlib

        module = importlib.import_module(f".{module_name}", __package__)
        sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        module.register(sub)
        for info in sub.registered_commands:
            if info.callback is not None:
                if info.help is None:
                    info.help = help_text(info.callback.__doc__)
                info.callback = _interruptible(info.callback)
        plain = not _stdout_is_terminal()
        for name, command in typer.main.get_group(sub).commands.items():
            if plain:  # piped or redirected: click's plain help, as the root help is then
                command.rich_markup_mode = None  # type: ignore[attr-defined]
            self.commands.setdefault(name, command)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (a command's ``--help`` is
    then rich's boxed layout, else plain text)."""
    try:
        return sys.stdout.isatty()
    except (OSError, ValueError, AttributeError):
        return False


app = typer.Typer(
    name="pi-session",
    help=ROOT_HELP,
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        from .. import __version__

        sys.stdout.write(f"pi-session {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Optional[bool] = typer.Option(
        None, "--version", help=VERSION_HELP, is_eager=True, callback=_version_callback
    ),
    store: Optional[str] = typer.Option(None, "--store", envvar=STORE_ENV, metavar="URL", help=STORE_HELP),
) -> None:
    """Inspect, branch, compact, repair and export pi coding-agent sessions."""
    ctx.obj = common.Invocation(store_url=store or None)


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


def _plain_values_without_pydantic() -> None:
    """typer 0.29 checks every parameter's value through a pydantic
    ``TypeAdapter``, built on first use, and so imports pydantic (a fifth
    of a short command's start-up) even for an option nobody gave. A
    missing value (None), a text for a ``str`` parameter and a default of
    its own type for an ``int``/``float`` one pass those checks unchanged,
    so they are taken as they are; every other value (a number typed on
    the command line, a list, a path) goes through typer's own checks.
    Skipped if typer changes."""
    try:
        from typer.core import _TyperParameter
        from typer._click.exceptions import MissingParameter
    except ImportError:  # pragma: no cover - other typer versions
        return
    original = getattr(_TyperParameter, "process_value", None)
    if original is None or getattr(original, "_pi_session_patched", False):
        return
    plain = {str: str, Optional[str]: str, int: int, Optional[int]: int, float: float, Optional[float]: float}

    def process_value(self: Any, ctx: Any, value: Any) -> Any:
        desc = getattr(self, "type_descriptor", None)
        info = getattr(desc, "parameter_info", None)
        single = self.nargs == 1 and not self.multiple
        if desc is None or info is None or getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
            return original(self, ctx, value)
        if not (single and (value is None or (desc.file_annotation is None and type(value) is plain.get(desc.annotation)))):
            return original(self, ctx, value)
        if type(value) is str and desc.annotation not in (str, Optional[str]):
            return original(self, ctx, value)  # a number typed as text: typer parses and checks it
        if self.required and self.value_is_missing(value):
            raise MissingParameter(ctx=ctx, param=self)
        if self.callback is not None:
            value = self.callback(ctx, self, value)
        return value

    process_value._pi_session_patched = True  # type: ignore[attr-defined]
    _TyperParameter.process_value = process_value  # type: ignore[method-assign]


_plain_values_without_pydantic()


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
    from ..render.terminal import sanitize

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


class _NotLoaded:
    """What typer's help module sees as rich's ``Markdown`` and
    ``Traceback`` when :func:`import_help_formatter` loads it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("not loaded for a help screen (pi-session uses rich markup help and no pretty tracebacks)")


def import_help_formatter() -> None:
    """Import typer's rich help formatter (``typer.rich_utils``) for a help
    screen without ``rich.markdown`` (markdown-it) and ``rich.traceback``
    (pygments), which it imports for Markdown help and pretty tracebacks:
    this CLI uses rich markup help and turns pretty tracebacks off, and the
    two take a third of a help screen's start-up time. Stand-ins are in
    ``sys.modules`` only while it loads, so a later ``import rich.markdown``
    gets the real module. Does nothing when either is loaded already or
    typer changed (then it loads as usual)."""
    import types

    if "typer.rich_utils" in sys.modules or "rich.markdown" in sys.modules or "rich.traceback" in sys.modules:
        return
    stand_ins = {}
    for name, attr in (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback")):
        module = types.ModuleType(name)
        setattr(module, attr, _NotLoaded)
        stand_ins[name] = module
    sys.modules.update(stand_ins)
    try:
        import typer.rich_utils  # noqa: F401
    except ImportError:
        sys.modules.pop("typer.rich_utils", None)  # another typer: it loads with the real modules when needed
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def main() -> None:
    """Console-script entry point.

    Exit statuses besides the commands' own: 0, silently, when the reader of
    standard output went away (a closed pipe); 1 for any other OSError (``pi-session:
    <file>: <reason>``) or any :class:`pi_session.PiSessionError` (its one
    line); 130 when interrupted;
    2 for an unexpected internal error (one line; ``PI_SESSION_DEBUG=1``
    re-raises it for a traceback). Usage errors stay typer's.
    """
    debug = os.environ.get("PI_SESSION_DEBUG", "") not in ("", "0")
    if not debug:
        warnings.showwarning = _show_warning
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    if len(sys.argv) < 2 or "--help" in sys.argv or "-h" in sys.argv:
        import_help_formatter()
    try:
        app()
    except SystemExit as exc:
        if exc.code == 130:
            _say_interrupted()  # typer ends a Ctrl-C during parsing with 130, silently
        if exc.code == 1 and _reader_went_away():
            sys.exit(0)
        raise
    except KeyboardInterrupt:
        _say_interrupted()
        sys.exit(130)
    except Exception as exc:
        if _reported_as_one_line(exc):
            _say(_one_line(str(exc)))
            sys.exit(1)
        if isinstance(exc, OSError):
            _os_error(exc, debug)
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


def _reader_went_away() -> bool:
    """Whether typer's click ended the command because its output pipe was
    closed (``| head``): it then wraps ``sys.stdout`` in its
    ``PacifyFlushWrapper`` (silencing the final flush) and exits 1, which
    :func:`main` turns into 0."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"  # typer's vendored click or click itself


def _reported_as_one_line(exc: BaseException) -> bool:
    """Whether ``exc`` is an error the library raised on bad input or state
    (:class:`pi_session.PiSessionError`, the root of them all): its message
    is the one line shown. (:mod:`pi_session.errors` imports nothing.)"""
    from ..errors import PiSessionError

    return isinstance(exc, PiSessionError)


def _os_error(exc: OSError, debug: bool) -> None:
    """End with one line for an OSError (see :func:`main`); re-raises it
    with ``debug``."""
    if exc.errno == errno.EPIPE:
        # the reader went away (``| head``): not a failure of the command,
        # so stop quietly with 0
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the final flush
        except OSError:
            pass
        sys.exit(0)
    if debug:
        raise exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = exc.filename if exc.filename is not None else None
    if exc.errno == errno.EEXIST and where is not None and os.path.exists(where) and not os.path.isdir(where):
        reason = "not a directory (a file is in the way)"
    _say(_one_line(f"{os.fsdecode(where)}: {reason}" if where is not None else reason))
    sys.exit(1)
