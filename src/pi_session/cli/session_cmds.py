"""Session commands: ls, info, tree, context, label, name, clone, fork, migrate."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
