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
from ..render.terminal import fit_cells, plural, sanitize



def _report_problems(source: str) -> None:
    """Print a damaged file's problems the way ``check`` prints them."""
    from ..check.repair import check_session
    from ..storage import SessionFileError

    try:
        report = check_session(source)
    except (SessionFileError, OSError):
        return
    for problem in report.problems:
        style = "yellow" if problem.fixable else "red"
        console.print(Text(sanitize(problem.format(source)), style=style), soft_wrap=True)


def import_(
    ctx: typer.Context,
    sources: Optional[list[str]] = typer.Argument(
        None,
        metavar="SOURCE...",
        help="Session files, directories of them (searched at any depth), or a store URL to copy every session of; "
        "with --from, the other agent's files or directories (default: its sessions directory).",
    ),
    store: Optional[str] = STORE_OPTION,
    source_format: Optional[str] = typer.Option(
        None, "--from", metavar="AGENT", help="Import another agent's sessions: claude-code or codex (docs/import.md)."
    ),
    recheck: bool = typer.Option(
        False, "--recheck", help="With --from: convert every source file again, also those unchanged since the last import."
    ),
    settle: float = typer.Option(
        60.0, "--settle", metavar="SECONDS",
        help="With --from: a response still being written in a file changed less than SECONDS ago waits for the next import "
        "(0: import it now; if the agent then adds to it, that session becomes a conflict).",
    ),
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

    With --from claude-code or --from codex: import that agent's sessions
    (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects;
    $CODEX_HOME/sessions or ~/.codex/sessions) as pi sessions, into
    --store or, by default, pi's sessions directory (one sub-directory per
    cwd, as pi names it). Importing again appends only what a source
    session gained; a rewritten one is a conflict; a source file unchanged
    since the last import into that store (size, modification time, inode)
    is not read again (--recheck reads it). Damaged source lines are
    reported with file and line and skipped (docs/import.md).

    Exit status: 0 all imported (or unchanged, updated); 1 a source failed
    or conflicted."""
    import math

    from ..operations import import_sessions
    from ..stores import StoreError
    from ..stores.transfer import ImportResult

    if not (settle >= 0 and math.isfinite(settle)):
        fail(f"--settle: give a number of seconds, 0 or more, not {settle}", code=2)
    if source_format is not None:
        _import_from(source_format, sources or [], common.store_url(ctx, store), as_json, recheck, settle)
        return
    if not sources:
        fail("import: name the sessions to import (SOURCE...), or use --from claude-code|codex")
    url = common.store_url(ctx, store)
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
        if result.missing_blobs:
            names = ", ".join(f"sha256:{d}" for d in result.missing_blobs)
            warn(f"{result.source}: {plural(len(result.missing_blobs), 'blob')} its notes name not found (restore cannot put those payloads back): {names}")

    try:
        for result in import_sessions(sources, target):
            done(result)
    except StoreError as exc:
        fail(str(exc))
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    if as_json:
        print_json([r.to_json() for r in results])
    else:
        summary: list[Any] = [f"{counts.get(k, 0):,} {k}" for k in ("imported", "updated", "unchanged", "conflict", "skipped", "failed") if counts.get(k)]
        console.print(
            sanitize(f"{plural(len(results), 'session')} into {target.url}: " + (", ".join(summary) or "nothing to import")),
            markup=False,
            soft_wrap=True,
        )
    raise typer.Exit(1 if counts.get("failed") or counts.get("conflict") else 0)


def _import_from(source_format: str, paths: list[str], store: Optional[str], as_json: bool, recheck: bool = False, settle: float = 60.0) -> None:
    """``import --from AGENT`` into the store of URL ``store`` (None: pi's
    sessions directory): :func:`pi_session.importers.import_agent_sessions`
    with a progress bar on a terminal, one line per session that changed,
    the damaged lines and a summary with the entries by kind."""
    import os

    from ..importers import FORMATS, AgentImportResult, default_paths, import_agent_sessions
    from ..core.paths import sessions_dir
    from ..stores import StoreError

    if source_format not in FORMATS:
        fail(f"import: --from {source_format}: unknown agent; use one of {', '.join(FORMATS)}")
    for path in paths or [str(p) for p in default_paths(source_format)]:
        if not os.path.exists(path):
            fail(f"import: {path}: no such file or directory" + ("" if paths else f" (where {source_format} keeps its sessions; name them: import --from {source_format} PATH...)"))
    url = store or str(sessions_dir())
    target = common.active_store(url, create=True)
    results: list[AgentImportResult] = []
    progress = None
    task: Any = None
    if console.is_terminal and not as_json:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), TextColumn("{task.description}"), console=console, transient=True)
        task = progress.add_task("", total=None)
        progress.start()

    def on_file(done: int, total: int, path: str) -> None:
        if progress is not None:
            progress.update(task, completed=done, total=total, description=fit_cells(sanitize(os.path.basename(path)), 40))

    try:
        for item in import_agent_sessions(source_format, paths, target, on_file=on_file, recheck=recheck, settle_seconds=settle):
            results.append(item)
            if as_json:
                continue
            for line in item.damaged:
                warn(line.format())
            r = item.result
            if r.status == "conflict":
                warn(f"conflict: {r.message} (the source was rewritten since it was imported)")
            elif r.status == "failed":
                warn(r.message)
            elif r.status == "skipped":
                warn(f"skipped: {r.message or r.source}")
            elif r.status in ("imported", "updated"):
                extra = f" ({plural(r.appended, 'new line')} appended)" if r.status == "updated" else ""
                console.print(sanitize(f"{r.status}: {r.source} -> {r.session_id}{extra}"), markup=False, soft_wrap=True)
                if item.older_layout:
                    console.print(
                        sanitize(f"  {r.session_id} keeps the layout of its first import (a custom entry per source record); delete it and import again for the newer one"),
                        markup=False,
                        soft_wrap=True,
                    )
            if item.held_back:
                warn(sanitize(
                    f"{r.source}: the last response ({plural(item.held_back, 'record')}) may still be being written "
                    f"(the file changed less than {plural(round(settle), 'second')} ago): left for the next import (--settle 0 imports it now)"
                ))
    except StoreError as exc:
        fail(str(exc))
    finally:
        if progress is not None:
            progress.stop()
    counts: dict[str, int] = {}
    kinds: dict[str, int] = {}
    damaged = 0
    for item in results:
        counts[item.result.status] = counts.get(item.result.status, 0) + 1
        damaged += len(item.damaged)
        if item.result.status in ("imported", "updated", "unchanged"):
            for kind, n in item.counts.items():
                kinds[kind] = kinds.get(kind, 0) + n
    if as_json:
        print_json([i.to_json() for i in results])
    else:
        summary = [f"{counts.get(k, 0):,} {k}" for k in ("imported", "updated", "unchanged", "conflict", "skipped", "failed") if counts.get(k)]
        console.print(
            sanitize(f"{plural(len(results), 'session')} from {source_format} into {target.url}: " + (", ".join(summary) or "nothing to import")),
            markup=False,
            soft_wrap=True,
        )
        if kinds:
            console.print(sanitize("entries in them: " + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))), markup=False, soft_wrap=True)
        if damaged:
            console.print(f"{plural(damaged, 'damaged source line')} skipped", markup=False, soft_wrap=True)
    raise typer.Exit(1 if counts.get("failed") or counts.get("conflict") else 0)


def register(app: typer.Typer) -> None:
    """Add ``import`` to ``app``."""
    app.command("import")(import_)
