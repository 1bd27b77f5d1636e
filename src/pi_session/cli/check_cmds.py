"""``check`` and ``export``: find and repair damage, export a conversation.

Exit status of ``check``: 0 when the file has no problem (with ``--repair``:
no problem is left after the repair); 1 when problems are found and not
repaired (without ``--repair``: any problem; with it: tree problems, which
repair reports but does not change); 2 when the file cannot be read as a
session (a one-line error on stderr).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from ..export import export_html, export_markdown
from ..repair import check_session, repair_session
from ..storage import SessionFileError
from .common import CliError, console, err_console, fail, open_session, print_json, resolve_session

JSON_OPTION = typer.Option(False, "--json", help="Machine-readable JSON output.")


def _resolve(session: str) -> Path:
    try:
        return resolve_session(session)
    except CliError as exc:
        fail(str(exc), code=2)


def check(
    session: str = typer.Argument(..., help="Session file or session id prefix."),
    repair: bool = typer.Option(False, "--repair", help="Fix damaged lines: atomic rewrite, original kept as <file>.repair.bak."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Report every problem of a session file with its line number.

    Exit status: 0 no problem left; 1 problems found (without --repair), or
    problems repair does not fix (tree problems); 2 unreadable file.
    """
    path = _resolve(session)
    try:
        if repair:
            result = repair_session(path)
            report = result.after
        else:
            result = None
            report = check_session(path)
    except SessionFileError as exc:
        fail(str(exc), code=2)
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}", code=2)
    if as_json:
        print_json(result.to_json() if result is not None else report.to_json())
    else:
        shown = result.before if result is not None else report
        for problem in shown.problems:
            style = "yellow" if problem.fixable else "red"
            console.print(Text(problem.format(path), style=style), soft_wrap=True)
        for note in shown.notes:
            console.print(Text(f"{path}: note: {note}", style="dim"), soft_wrap=True)
        if result is not None and result.changed:
            console.print(
                f"repaired {path}: {len(result.recovered_lines)} line(s) written clean, {len(result.removed_lines)} removed",
                markup=False,
                soft_wrap=True,
            )
            console.print(f"  original kept as {result.backup}", markup=False, soft_wrap=True)
            if result.rejected:
                console.print(f"  removed bytes kept in {result.rejected}", markup=False, soft_wrap=True)
            if report.problems:
                console.print(f"{len(report.problems)} problem(s) left that repair does not fix", markup=False)
        elif report.ok:
            console.print(f"{path}: ok ({report.entry_count} entries, {report.line_count} lines)", markup=False, soft_wrap=True)
        elif not repair:
            console.print(f"{len(report.problems)} problem(s); {len(report.fixable)} fixable with --repair", markup=False)
    raise typer.Exit(0 if report.ok else 1)


def export(
    session: str = typer.Argument(..., help="Session file or session id prefix."),
    fmt: str = typer.Option("html", "--format", "-f", help="html or md."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here (default: standard output)."),
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Export the path to this entry (default: the leaf)."),
) -> None:
    """Export the conversation (root to leaf) as self-contained HTML or Markdown."""
    if fmt not in ("html", "md", "markdown"):
        fail(f"unknown format {fmt!r} (use html or md)")
    manager = open_session(session, read_only=True)
    if leaf is not None and manager.get_entry(leaf) is None:
        fail(f"{manager.get_session_file()}: no entry with id {leaf}")
    path_entries = manager.get_branch(leaf)
    render = export_html if fmt == "html" else export_markdown
    text = render(manager.get_header(), path_entries, labels=dict(manager.tree.labels), name=manager.get_session_name())
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        fail(f"{output}: {exc.strerror or exc}")
    err_console.print(f"exported {len(path_entries)} entries to {output}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``check`` and ``export`` to ``app``."""
    app.command()(check)
    app.command()(export)
