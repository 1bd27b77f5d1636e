"""Session store commands: ``import`` (session files, directories of them,
or every session of another store, into the store of ``--store``).
``export --format jsonl`` (a stored session back as its file) lives with
the other exports in :mod:`.check_cmds`."""

from __future__ import annotations

from typing import Any, Optional

import typer
from rich.text import Text

from ..operations import is_store_url
from . import common
from .common import JSON_OPTION, STORE_OPTION, console, fail, print_json, warn
from ..terminal import plural, sanitize



def _report_problems(source: str) -> None:
    """Print a damaged file's problems the way ``check`` prints them."""
    from ..repair import check_session
    from ..storage import SessionFileError

    try:
        report = check_session(source)
    except (SessionFileError, OSError):
        return
    for problem in report.problems:
        style = "yellow" if problem.fixable else "red"
        console.print(Text(sanitize(problem.format(source)), style=style), soft_wrap=True)


def import_(
    sources: list[str] = typer.Argument(
        ..., metavar="SOURCE...", help="Session files, directories of them (searched at any depth), or a store URL to copy every session of."
    ),
    store: Optional[str] = STORE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Import pi sessions into the store of --store (or PI_SESSION_STORE).

    Each session keeps its exact lines, damaged ones included (reported as
    ``check`` reports them), so ``export --format jsonl`` gives the file
    back byte for byte; a v1/v2 file is migrated to version 3 on the way.
    Idempotent: a session the store holds already is left alone
    (``unchanged``), but for the lines a file gained since it was imported,
    which are appended (``updated``: pi went on with the session, also
    after repairing a torn last line); other differences are a
    ``conflict``, left alone. Several imports at once find each other's
    sessions and lines. The source files are never changed.

    Exit status: 0 all imported (or unchanged, updated); 1 a source failed
    or conflicted."""
    from ..operations import import_sessions
    from ..stores import StoreError
    from ..stores.transfer import ImportResult

    url = store or common.store_url()
    if not url:
        fail("import: say where the sessions go: --store URL (or set PI_SESSION_STORE)")
    for source in sources:  # before the target is created
        if is_store_url(source):
            common.refuse_missing_sqlite(source)
    target = common.active_store(url, create=True)
    results: list[ImportResult] = []

    def done(result: ImportResult) -> None:
        results.append(result)
        if as_json:
            return
        if result.problems and result.status in ("imported", "updated", "unchanged") and not is_store_url(result.source):
            _report_problems(result.source)
        line = f"{result.status}: {result.source}" + (f" -> {result.session_id}" if result.session_id else "")
        if result.migrated_from is not None:
            line += f" (migrated from version {result.migrated_from})"
        if result.status == "updated":
            line += f" ({plural(result.appended, 'new line')} appended)"
        if result.status in ("failed", "conflict", "skipped"):
            warn(result.message or line)
        else:
            console.print(sanitize(line), markup=False, soft_wrap=True)

    try:
        for result in import_sessions(sources, target):
            done(result)
    except StoreError as exc:
        fail(str(exc))
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    if as_json:
        print_json(
            [
                {
                    "source": r.source,
                    "status": r.status,
                    "id": r.session_id,
                    "migratedFrom": r.migrated_from,
                    **({"appended": r.appended} if r.status == "updated" else {}),
                    "problems": [p.to_json() for p in r.problems],
                    **({"message": r.message} if r.message else {}),
                }
                for r in results
            ]
        )
    else:
        summary: list[Any] = [f"{counts.get(k, 0):,} {k}" for k in ("imported", "updated", "unchanged", "conflict", "skipped", "failed") if counts.get(k)]
        console.print(
            sanitize(f"{plural(len(results), 'session')} into {target.url}: " + (", ".join(summary) or "nothing to import")),
            markup=False,
            soft_wrap=True,
        )
    raise typer.Exit(1 if counts.get("failed") or counts.get("conflict") else 0)


def register(app: typer.Typer) -> None:
    """Add ``import`` to ``app``."""
    app.command("import")(import_)
