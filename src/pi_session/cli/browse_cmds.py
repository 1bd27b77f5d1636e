"""``browse``: the interactive session browser (see :mod:`pi_session.browse`)."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from .common import CliError, active_store, database_store, entry_id_arg, fail, resolve_session, store_url
from .compact_cmds import BASE_URL_OPTION, MAX_RETRIES_OPTION, MODEL_OPTION, PROVIDER_OPTION, TIMEOUT_OPTION


def browse(
    ctx: typer.Context,
    session: Optional[str] = typer.Argument(None, help="Session file or session id prefix (default: pick one)."),
    all_: bool = typer.Option(False, "--all", "-a", help="Start the picker on every project's sessions."),
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Project directory (default: the current directory)."),
    provider: Optional[str] = PROVIDER_OPTION,
    model: Optional[str] = MODEL_OPTION,
    base_url: Optional[str] = BASE_URL_OPTION,
    timeout: Optional[float] = TIMEOUT_OPTION,
    max_retries: Optional[int] = MAX_RETRIES_OPTION,
    at: Optional[str] = typer.Option(None, "--at", metavar="ENTRY", help="Start in SESSION with the cursor on this entry (its id or a unique prefix; e.g. a search hit)."),
) -> None:
    """Browse sessions in the terminal: pick one, walk its tree, read any
    entry in full, and label, name, navigate (with a branch summary),
    clone, export or compact it.

    Without SESSION, a picker lists this directory's sessions (a: all
    projects; / searches names and first messages). In a session: / search,
    f filter, space fold, enter detail, l label, r name, g navigate here,
    c clone, e export, k compact, ? all keys, q back. Every change asks
    first. --at ENTRY starts with the cursor on that entry. The summarizer options are those of navigate and compact."""
    import math

    from ..browse.actions import open_read
    from ..operations import OperationError
    from ..browse.summaries import SummarizerConfig

    chosen = active_store(store_url(ctx))
    db = database_store(store_url(ctx))
    if db is not None:
        fail(f"browse works on session files, and the store is the database {db.url} (--store or PI_SESSION_STORE); "
             "export a session with `export SESSION --format jsonl -o FILE` to browse it")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("browse needs a terminal (standard input and output must be a terminal)")
    if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
        fail("--timeout must be a positive number of seconds")
    if max_retries is not None and max_retries < 0:
        fail("--max-retries must be >= 0")
    path = None
    if at is not None and session is None:
        fail("--at needs a SESSION")
    if session is not None:
        try:
            path = resolve_session(session, chosen)
            opened = open_read(path)  # refuse a file that is not a session before the screen changes
        except (CliError, OperationError) as exc:
            fail(str(exc))
        if at is not None:
            at = entry_id_arg(opened, at)
    project = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    config = SummarizerConfig(provider, model, base_url, timeout, max_retries)
    try:
        config.make()  # an unknown provider or a missing key fails here, in one line
    except OperationError as exc:
        fail(str(exc))
    from ..browse.app import BrowseApp

    app = BrowseApp(path, cwd=project, all_projects=all_, summarizer=config, store=chosen, at=at)
    app.run()
    if app.crash is not None:
        message = " ".join(f"internal error: {type(app.crash).__name__}: {app.crash}".split())
        fail(f"{message} (set PI_SESSION_DEBUG=1 for a traceback)", code=2)


def register(app: typer.Typer) -> None:
    """Add ``browse`` to ``app``."""
    app.command()(browse)
