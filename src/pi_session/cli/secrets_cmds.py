"""Secrets commands: ``secrets`` (find) and ``scrub`` (remove). The work is
:mod:`pi_session.secrets`; these parse options and print, never a secret
(only masked previews)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, Optional

import typer

from .common import (
    JSON_OPTION,
    STORE_OPTION,
    CliError,
    active_store,
    console,
    database_store,
    err_console,
    fail,
    print_json,
    resolve_session,
    store_url,
    warn,
)
from .render import plural, sanitize

ALLOW_OPTION = typer.Option(
    None, "--allow-list", metavar="FILE",
    help="Known false positives, one value (or re:PATTERN) a line (default: $PI_SESSION_SECRETS_ALLOW).",
)


def allow_list_from(path: Optional[str]) -> Any:
    """The allow-list of the file ``path`` or ``$PI_SESSION_SECRETS_ALLOW``,
    or None; a bad file ends the command (exit 2)."""
    from ..secrets import ALLOW_LIST_ENV, AllowList, AllowListError

    path = path or os.environ.get(ALLOW_LIST_ENV) or None
    if path is None:
        return None
    try:
        return AllowList.load(path)
    except AllowListError as exc:
        fail(str(exc), code=2)


def _sessions(url: Optional[str], session: Optional[str], all_: bool) -> tuple[list[str], Any]:
    """The sessions to work on (file paths, or ids of a database store) and
    the database store or None, in the store of ``url`` (None: pi's
    sessions directory)."""
    from ..operations import all_sessions
    from ..stores import StoreError

    if all_ and session:
        fail("give a SESSION or --all, not both", code=2)
    if not all_ and not session:
        fail("give a SESSION, or --all for every session", code=2)
    chosen = active_store(url)
    db = database_store(url)
    if all_:
        try:
            return all_sessions(db if db is not None else chosen), db
        except StoreError as exc:
            fail(str(exc), code=2)
    if db is not None:
        return [str(session)], db
    try:
        return [str(resolve_session(str(session), chosen))], None
    except CliError as exc:
        fail(str(exc), code=2)


@contextlib.contextmanager
def _progress(locations: list[str], db: Any) -> Iterator[Callable[[str], Callable[[int], None] | None]]:
    """A rich progress bar on stderr over the bytes of the sessions (a
    database's: over the sessions) while they are scanned, only when stderr
    is a terminal (quiet when piped). Yields ``advance(location)``: the
    ``on_progress`` callback for that session's scan."""
    if not err_console.is_terminal:
        yield lambda _location: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    sizes = {loc: (os.path.getsize(loc) if db is None and os.path.isfile(loc) else 0) for loc in locations}
    by_bytes = db is None
    columns = [TextColumn("scanning"), BarColumn(), DownloadColumn() if by_bytes else TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn()]
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("scan", total=sum(sizes.values()) if by_bytes else len(locations))
        before = [0]

        def advance(location: str) -> Callable[[int], None]:
            start = before[0]
            before[0] += sizes[location] if by_bytes else 1
            if not by_bytes:
                bar.update(task, completed=start)
            return lambda done: bar.update(task, completed=start + (min(done, sizes[location]) if by_bytes else 1))

        yield advance


def _hit_line(hit: Any) -> str:
    from ..secrets.finding import RAW_LINE_FIELD

    where = f"{hit.session}:{hit.line}" if hit.line is not None else str(hit.session)
    hidden = " (hidden from the model by a context edit; still in the file)" if hit.hidden else ""
    if hit.field == RAW_LINE_FIELD:  # a line that is not a JSON record: no entry, no field
        return sanitize(f"{where}: (a line that is not a JSON record): {hit.kind} {hit.preview}{hidden}")
    return sanitize(f"{where}: {hit.entry_id or '-'} {hit.field} ({hit.field_kind}): {hit.kind} {hit.preview}{hidden}")


def secrets(
    ctx: typer.Context,
    session: Optional[str] = typer.Argument(None, help="Session file or session id prefix."),
    all_: bool = typer.Option(False, "--all", "-a", help="Every session of the store (or of pi's sessions directory)."),
    allow_list: Optional[str] = ALLOW_OPTION,
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Find secrets (API keys, tokens, private keys, passwords) in every
    text a session holds (and its side files: torn and rejected lines,
    backups); print where, their kind and a masked preview, never the
    secret. A hit a context edit already hides from the model (scrub
    --mode edit) is marked so.

    Exit status: 0 none found, or only hidden ones; 1 found (for hooks); 2 a session could not be read."""
    from ..operations import OperationError, find_in_session
    from ..stores import StoreError

    locations, db = _sessions(store_url(ctx, store), session, all_)
    if db is None and not all_ and os.path.isfile(locations[0]):
        from ..stores.listing import read_session_header

        if read_session_header(locations[0]) is None:
            warn(f"{locations[0]}: not a pi session file (no session header); scanned as text lines")
    allow = allow_list_from(allow_list)
    hits: list[Any] = []
    with _progress(locations, db) as advance:
        for location in locations:
            try:
                hits.extend(find_in_session(location, store=db, allow=allow, on_progress=advance(location)))
            except (StoreError, OperationError) as exc:
                fail(str(exc), code=2)
            except OSError as exc:
                fail(f"{location}: {exc.strerror or exc}", code=2)
    if as_json:
        print_json([h.to_json() for h in hits])
    else:
        for hit in hits:
            console.print(_hit_line(hit), markup=False, soft_wrap=True)
        sessions = len({h.session for h in hits})
        hidden = sum(h.hidden for h in hits)
        err_console.print(
            f"{plural(len(hits), 'secret')} in {plural(sessions, 'file')} ({plural(len(locations), 'session')} scanned)"
            + (f"; {hidden:,} hidden from the model by context edits (--mode rewrite removes them from the file)" if hidden else ""),
            markup=False, soft_wrap=True,
        )
    if any(not h.hidden for h in hits):
        raise typer.Exit(1)


def scrub(
    ctx: typer.Context,
    session: Optional[str] = typer.Argument(None, help="Session file or session id prefix."),
    all_: bool = typer.Option(False, "--all", "-a", help="Every session of the store (or of pi's sessions directory)."),
    mode: str = typer.Option(..., "--mode", metavar="edit|rewrite", help="edit: append context edits that hide the secrets from the model (history kept); rewrite: replace them with [REDACTED:<kind>] in the file or rows."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change; write nothing."),
    backup: bool = typer.Option(False, "--backup", help="rewrite: keep the old content as <file>.secrets.bak (mode 0600; it holds the secrets)."),
    allow_list: Optional[str] = ALLOW_OPTION,
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Remove secrets from a session.

    --mode edit (pi 1.6's way): context edits replace each affected
    message's content with the secrets masked, so the model never sees them
    again; a bash execution holding one (!cat .env) is left out of the
    context whole (an edit cannot replace a bash output); the file keeps
    them. A secret an edit cannot hide without dropping far more (a
    compaction or branch summary, a system prompt) is named, with its file
    and entry, and the exit status is 1. --mode rewrite: an atomic rewrite
    replacing each secret with [REDACTED:<kind>] in every record (ids,
    parents, timestamps kept); no backup unless --backup. Running it twice
    is a no-op. Side files of a session file holding secrets
    (<file>.torn-*, <file>.rejected-*, backups) are rewritten too and
    named.

    With --all, a session that cannot be changed is reported and the others
    are still done; the exit status is then 1, naming the sessions left."""
    from ..operations import OperationError
    from ..operations import scrub_session
    from ..storage import SessionFileError
    from ..stores import StoreError

    if mode not in ("edit", "rewrite"):
        fail(f"--mode: {mode!r}: give edit or rewrite", code=2)
    if backup and mode != "rewrite":
        fail("--backup: only with --mode rewrite (an edit keeps the file as it is)", code=2)
    locations, db = _sessions(store_url(ctx, store), session, all_)
    allow = allow_list_from(allow_list)
    results: list[Any] = []
    failed: list[tuple[str, str]] = []
    for location in locations:
        try:
            results.append(scrub_session(location, mode=mode, store=db, dry_run=dry_run, backup=backup, allow=allow))  # type: ignore[arg-type]
        except (SessionFileError, StoreError, OperationError) as exc:
            message = str(exc)
        except OSError as exc:
            message = f"{location}: {exc.strerror or exc}"
        else:
            if not as_json:
                _print_result(results[-1])
            continue
        if not all_:
            fail(message)
        failed.append((location, message))
        results.append(None)
        if not as_json:
            err_console.print(sanitize(f"{location}: not scrubbed: {message}"), markup=False, soft_wrap=True)
    if as_json:
        if all_:
            errors = dict(failed)
            print_json([r.to_json() if r is not None else {"session": loc, "error": errors[loc]} for loc, r in zip(locations, results)])
        else:
            print_json(results[0].to_json())
    left = [r for r in results if r is not None and r.not_hidden]
    if failed or left:
        reasons = []
        if failed:
            reasons.append(f"{plural(len(failed), 'session')} not scrubbed (their secrets stay): " + ", ".join(loc for loc, _m in failed))
        if left:
            count = sum(len(r.not_hidden) for r in left)
            reasons.append(
                f"{plural(count, 'secret')} {'would be left' if dry_run else 'left'} in the model context of "
                + ", ".join(r.session for r in left) + ": a context edit cannot hide them; --mode rewrite removes them"
            )
        fail("; ".join(reasons), code=1)


def _print_result(result: Any) -> None:
    for hit in result.hits:
        console.print(_hit_line(hit), markup=False, soft_wrap=True)
    if result.mode == "rewrite":
        if result.changed_lines:
            console.print(sanitize(
                f"{result.session}: {'would redact' if result.dry_run else 'redacted'} {plural(len(result.hits), 'secret')} "
                f"in {plural(result.changed_lines, 'line')}"
            ), markup=False, soft_wrap=True)
        else:
            console.print(sanitize(f"{result.session}: no secrets; nothing to do"), markup=False, soft_wrap=True)
        if result.backup:
            console.print(sanitize(f"backup (holds the secrets, mode 0600): {result.backup}"), markup=False, soft_wrap=True)
    else:
        if result.edits:
            console.print(sanitize(
                f"{result.session}: {'would append' if result.dry_run else 'appended'} {plural(len(result.edits), 'context edit')} hiding "
                f"{plural(len(result.hits), 'secret')} from the model (the file keeps them; --mode rewrite removes them)"
            ), markup=False, soft_wrap=True)
        elif not result.not_hidden:
            console.print(sanitize(f"{result.session}: no secrets in the model context; nothing to do"), markup=False, soft_wrap=True)
        for target in result.omitted:
            console.print(sanitize(
                f"{result.session}: bash execution {target} {'would be left' if result.dry_run else 'left'} out of the model context "
                "whole, command and output (a context edit cannot replace a bash output, only leave it out)"
            ), markup=False, soft_wrap=True)
        for hit in result.not_hidden:
            err_console.print(sanitize(
                f"{hit.session}: {hit.entry_id or '-'} {hit.field} ({hit.field_kind}): {hit.kind} {hit.preview}: "
                "a context edit cannot hide it (it would drop the whole entry); --mode rewrite removes it"
            ), markup=False, soft_wrap=True)
        if result.elsewhere:
            warn(f"{result.session}: {plural(result.elsewhere, 'secret')} outside the model context (other branches, compacted history, labels, header) stay in the file; --mode rewrite removes them")
    for side, count, action in result.side_files:
        if action == "kept":
            warn(f"{side}: {plural(count, 'secret')} in this side file (not sent to the model); --mode rewrite removes them")
        else:
            console.print(sanitize(f"{side}: {action} {plural(count, 'secret')}"), markup=False, soft_wrap=True)
    for blob, count, action in result.blobs:
        if action == "kept" and result.mode == "edit":
            warn(f"{blob}: {plural(count, 'secret')} in a blob slim moved a payload to (the model sees only its note); --mode rewrite removes them")
        elif action in ("removed", "would remove"):
            console.print(sanitize(
                f"{blob}: {plural(count, 'secret')} in a slimmed payload: "
                + ("would be put back in the session redacted, and the blob removed" if action == "would remove"
                   else "put back in the session redacted; blob removed (pi-session slim moves it out again)")
            ), markup=False, soft_wrap=True)
    for note in result.notes:
        warn(note)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command()(secrets)
    app.command()(scrub)
