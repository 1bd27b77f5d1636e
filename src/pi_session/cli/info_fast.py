"""``pi-session info SESSION [--json]`` answered before the command line's
own modules (typer, rich) load: the session is opened, measured and shown
by the same functions the typer command uses (:mod:`.info_view`), and the
rows written without rich when rich would write them as plain bytes.

:func:`answer` takes only command lines it reads exactly as ``info``
does, on a session file of the default sessions directory (no ``--store``
and no ``PI_SESSION_STORE``), opened without damage or notes to warn about
(unless ``--json``, which prints no warnings), and, for the rows, only an
output rich leaves plain (not a terminal) or only bolds (a terminal that
is not ``dumb``), with no environment variable that changes rich's choice
(``FORCE_COLOR``, ``NO_COLOR``, ``TTY_COMPATIBLE``, ``TTY_INTERACTIVE``) and
values without tabs, newlines or other characters rich lays out itself.
Anything else — another option, ``--help``, a store, an unknown or
ambiguous id, a damaged file — is left to the full command, having
printed nothing, so the output, warnings and errors are always the full
command's.
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["answer", "parse", "row_style"]

_RICH_ENV = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES", "DATABRICKS_RUNTIME_VERSION")


def parse(args: "list[str]") -> "dict[str, Any] | None":
    """The options of a command line (without the program name) that is
    ``info SESSION [--json]`` (``--json`` before or after SESSION), as
    ``{"session": str, "json": bool}``; None for anything else (a global
    or environment store included: those sessions are opened by the full
    command)."""
    if os.environ.get("PI_SESSION_STORE") or not args or args[0] != "info":
        return None
    session = None
    as_json = False
    for arg in args[1:]:
        if arg == "--json":
            as_json = True
        elif arg.startswith("-") or session is not None:
            return None
        else:
            session = arg
    if session is None or not session.strip():
        return None
    return {"session": session, "json": as_json}


def row_style(stream: "Any") -> "str | None":
    """How the typer command's rich console writes ``info``'s bold keys on
    ``stream``: ``""`` (plain text: not a terminal), ``"\\x1b[1m"`` (a
    terminal that is not ``dumb``: the whole row bold, then ``\\x1b[0m``, as
    rich writes a text whose base style is bold), or None when an
    environment variable that changes rich's choice is set (then rich
    itself must write)."""
    if any(name in os.environ for name in _RICH_ENV):
        return None
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        return None
    if not terminal:
        return ""
    return None if os.environ.get("TERM", "").lower() in ("dumb", "unknown") else "\x1b[1m"


def answer(args: "list[str]") -> bool:
    """Print ``info``'s report of ``args`` (a command line without the
    program name) and return True when this module can answer it (see the
    module docstring); False, having printed nothing, otherwise."""
    options = parse(args)
    if options is None:
        return False
    style = "" if options["json"] else row_style(sys.stdout)
    if style is None:
        return False
    from ..manager.locating import resolve_session_file
    from ..operations import OperationError, open_for_reading, session_notes
    from ..stores.base import StoreError

    try:
        manager = open_for_reading(resolve_session_file(options["session"]), shown_as=options["session"])
    except (StoreError, OperationError, OSError):
        return False  # the full command says what is wrong
    from .answers import write_answer
    from .info_view import info_json, info_rows

    stats, lean, data = info_json(manager)
    if options["json"]:
        from ..core.jsonio import write_pretty

        return write_answer(lambda: write_pretty(data, sys.stdout, indent=1))
    if session_notes(manager):
        return False  # the full command warns about them
    from ..core.text import show_controls

    from ..core.text import wrap_text
    from .info_view import FIELD_FLOOR
    from .widths import layout_width

    rows = info_rows(stats, lean, data)
    pad = max(len(key) for key, _value in rows) + 2
    width = layout_width(sys.stdout)
    room = None if width is None else max(FIELD_FLOOR, width - pad)
    lines = []
    for key, value in rows:
        shown = show_controls(value.replace("\r\n", "\n"))  # as render.terminal.sanitize shows it
        if not shown.isprintable():
            return False  # rich lays out tabs, newlines, ...
        if not shown.isascii() and room is not None and 2 * len(shown) > room:
            return False  # wide characters to wrap: the full command measures their cells
        for n, part in enumerate(wrap_text(shown, room)):
            head = key.ljust(pad) if n == 0 else " " * pad
            lines.append(f"{style}{head}{part}\x1b[0m\n" if style else f"{head}{part}\n")
    text = "".join(lines)
    return write_answer(lambda: sys.stdout.write(text))
