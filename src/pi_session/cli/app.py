"""The typer application; each command group lives in its own module and
registers itself here."""

from __future__ import annotations

import typer

from . import check_cmds, compact_cmds, prompt_cmds, session_cmds

app = typer.Typer(
    name="pi-session",
    help="Inspect, branch, compact, repair and export pi coding-agent sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (session_cmds, compact_cmds, check_cmds, prompt_cmds):
    module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
