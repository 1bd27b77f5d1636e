"""Helpers shared by the CLI commands: output, errors, session arguments."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

from ..jsonio import dumps_pretty

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


class CliError(Exception):
    """An error reported to the user as one line, exit status 1."""


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``pi-session: <message>`` on stderr and exit with ``code``."""
    err_console.print(f"pi-session: {message}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """Print a one-line warning on stderr."""
    err_console.print(f"warning: {message}", style="yellow", markup=False, soft_wrap=True)


def print_json(value: Any) -> None:
    """Print ``value`` as the oracle does (``JSON.stringify(v, null, 1)``)."""
    sys.stdout.write(dumps_pretty(value) + "\n")
    sys.stdout.flush()
