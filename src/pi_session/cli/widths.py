"""How wide the command line's output is: the width its rich consoles are
made with (:func:`console_width_for`), and the width rich then lays text out
to (:func:`layout_width`), decided without importing rich, so that a fast
path (:mod:`pi_session.cli.info_fast`) lays out its lines as the full
command does."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["NO_WIDTH", "console_width_for", "layout_width"]

NO_WIDTH = 100_000
"""The console width when no terminal is involved (output to a pipe or a
file, and neither stdin nor stderr a terminal): in effect unlimited, so
lines are never cut or wrapped for a width nobody sees."""


def _columns_env() -> int | None:
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def _terminal_columns(fd: int) -> int | None:
    try:
        return os.get_terminal_size(fd).columns if os.isatty(fd) else None
    except (OSError, ValueError):
        return None


def console_width_for(stream: Any) -> int | None:
    """The console width for ``stream``: ``$COLUMNS`` when set; None (rich's
    own choice: the terminal's width) when ``stream`` is a terminal; when it
    is piped, the width of the terminal the command runs in (stdin's or
    stderr's, e.g. ``pi-session ls | less``); else :data:`NO_WIDTH`."""
    columns = _columns_env()
    if columns is not None:
        return columns
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        pass
    for fd in (0, 2, 1):
        found = _terminal_columns(fd)
        if found:
            return found
    return NO_WIDTH


def layout_width(stream: Any) -> int | None:
    """The width a console made with :func:`console_width_for` lays
    ``stream``'s lines out to, or None (no limit: :data:`NO_WIDTH`). Where
    rich chooses (a terminal, no ``$COLUMNS``) it takes the size of the
    first of standard input, output and error that has one, else 80; a
    ``dumb`` or ``unknown`` terminal is 80 wide."""
    width = console_width_for(stream)
    if width is None:
        if os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
            return 80
        for fd in (0, 1, 2):
            try:
                width = os.get_terminal_size(fd).columns
            except (OSError, ValueError):
                continue
            break
        width = width or 80
    return None if width >= NO_WIDTH else width
