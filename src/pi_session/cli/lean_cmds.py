"""Keeping sessions lean: ``slim`` (payloads to blobs), ``restore`` (back)
and ``prune`` (abandoned branches to an archive session). The work is
:mod:`pi_session.operations.slimming` and :mod:`pi_session.operations.pruning`."""

from __future__ import annotations

from typing import Any, Optional

import typer

from .common import STORE_OPTION, JSON_OPTION, CliError, active_store, console, database_store, err_console, fail, print_json, resolve_session, store_url
from .render import plural, sanitize


def _locations(session: Optional[str], all_: bool, url: str | None) -> tuple[list[str], Any]:
    """The sessions to work on (file paths, or ids of a database store) and
    the database store or None; ``url``: the command's store URL, if any."""
    from ..operations import OperationError, all_sessions
    from ..stores import StoreError

    if all_ == bool(session):
        fail("give a SESSION or --all (not both)", code=2)
    db = database_store(url)
    if all_:
        try:
            return all_sessions(db if db is not None else active_store(url)), db
        except (StoreError, OperationError) as exc:
            fail(str(exc), code=2)
    if db is not None:
        return [str(session)], db
    try:
        return [str(resolve_session(str(session), active_store(url)))], None
    except CliError as exc:
        fail(str(exc), code=2)


def _run_each(locations: list[str], all_: bool, work: Any) -> list[Any]:
    """``work(location)`` for each session; an error ends the command for
    one session, is reported and skipped with ``--all`` (exit 1 at the end)."""
    from ..operations import OperationError
    from ..storage import SessionFileError
    from ..stores import StoreError

    results: list[Any] = []
    failed = 0
    for location in locations:
        try:
            results.append(work(location))
            continue
        except (OperationError, SessionFileError, StoreError) as exc:
            message = str(exc)
        except OSError as exc:
            message = f"{location}: {exc.strerror or exc}"
        if not all_:
            fail(message)
        failed += 1
        err_console.print(sanitize(f"{location}: skipped: {message}"), markup=False, soft_wrap=True)
    if failed:
        results.append(None)
    return results


def _report(results: list[Any], all_: bool, as_json: bool, nothing: str, describe: Any) -> None:
    """Print ``slim``'s or ``restore``'s results (JSON: a list with
    ``--all``, else the one object); a session with no payload says
    ``nothing`` unless ``--all``; exit 1 when a session failed."""
    done = [r for r in results if r is not None]
    if as_json:
        print_json([r.to_json() for r in done] if all_ else done[0].to_json())
    else:
        for r in done:
            if r.payloads:
                describe(r)
            elif not all_:
                console.print(sanitize(f"{r.session}: {nothing}"), markup=False, soft_wrap=True)
    if None in results:
        raise typer.Exit(1)


def slim(
    ctx: typer.Context,
    session: Optional[str] = typer.Argument(None, help="Session file or session id prefix."),
    all_: bool = typer.Option(False, "--all", "-a", help="Every session of the store (or of pi's sessions directory)."),
    images: bool = typer.Option(False, "--images", help="Move image blocks."),
    outputs_over: Optional[str] = typer.Option(None, "--outputs-over", metavar="SIZE", help="Move tool outputs, bash outputs and tool arguments over SIZE (e.g. 64K, 1M)."),
    outside_context: bool = typer.Option(True, "--outside-context/--everywhere", help="Only entries outside the model context at the leaf (default; the context is unchanged), or every entry."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be saved; write nothing."),
    backup: bool = typer.Option(True, "--backup/--no-backup", help="Keep the original as <file>.slim.bak (its bytes stay on disk until you delete it)."),
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Move bulky payloads (images; tool outputs and arguments over a size)
    out of a session into a content-addressed blob store (.blobs beside pi's
    sessions directory, or beside the file; refused unless it belongs to
    the session's owner and no one else may write into it), leaving a short note naming
    each blob. pi still opens the file with the same tree; by default only
    what is outside the model context at the leaf moves, so the context pi
    builds is unchanged. Without --images or --outputs-over: images and
    outputs over 16K. `pi-session restore` puts every payload back, byte for
    byte. Atomic rewrite, owner and mode kept, refused if the file changed
    meanwhile."""
    from ..session.lean import human_size, parse_size
    from ..operations.slimming import DEFAULT_OUTPUTS_OVER, slim_session

    url = store_url(ctx, store)
    limit: int | None = None
    if outputs_over is not None:
        try:
            limit = parse_size(outputs_over)
        except ValueError as exc:
            fail(f"--outputs-over: {exc}", code=2)
    if not images and outputs_over is None:
        images, limit = True, DEFAULT_OUTPUTS_OVER
    locations, db = _locations(session, all_, url)
    results = _run_each(locations, all_, lambda loc: slim_session(
        loc, images=images, outputs_over=limit, outside_context=outside_context, dry_run=dry_run, backup=backup, store=db))

    def describe(r: Any) -> None:
        verb = "would move" if r.dry_run else "moved"
        console.print(sanitize(
            f"{r.session}: {verb} {plural(r.payloads, 'payload')} from {plural(r.lines, 'line')} to {r.blobs}: "
            f"{human_size(r.before)} → {human_size(r.after)} (saves {human_size(r.before - r.after)})"
        ), markup=False, soft_wrap=True)
        if r.backup:
            console.print(sanitize(f"backup: {r.backup} (delete it to free the space once you are happy)"), markup=False, soft_wrap=True)
        for n in r.skipped:
            err_console.print(sanitize(f"{r.session}:{n}: left as it is (it quotes a slim note, or its payload could not be located)"), markup=False, soft_wrap=True)

    _report(results, all_, as_json, "nothing to slim", describe)


def restore(
    ctx: typer.Context,
    session: Optional[str] = typer.Argument(None, help="Session file or session id prefix."),
    all_: bool = typer.Option(False, "--all", "-a", help="Every session of the store (or of pi's sessions directory)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count the payloads to put back; write nothing."),
    backup: bool = typer.Option(False, "--backup", help="Keep the slimmed file as <file>.restore.bak."),
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Put every payload `slim` moved out of a session back from its blob,
    byte for byte. Every blob is read and checked against its hash before
    the file is rewritten; a missing or damaged blob changes nothing.
    Blobs are kept (another session may share them)."""
    from ..session.lean import human_size
    from ..operations.slimming import restore_session

    url = store_url(ctx, store)
    locations, db = _locations(session, all_, url)
    results = _run_each(locations, all_, lambda loc: restore_session(loc, dry_run=dry_run, backup=backup, store=db))

    def describe(r: Any) -> None:
        verb = "would put back" if r.dry_run else "put back"
        console.print(sanitize(
            f"{r.session}: {verb} {plural(r.payloads, 'payload')} in {plural(r.lines, 'line')}: "
            f"{human_size(r.before)} → {human_size(r.after)}"
        ), markup=False, soft_wrap=True)

    _report(results, all_, as_json, "nothing to restore", describe)


def prune(
    ctx: typer.Context,
    session: str = typer.Argument(..., help="Session file or session id prefix."),
    keep_branches: Optional[list[str]] = typer.Option(None, "--keep-branches", metavar="LEAF", help="Keep the path to this entry too (its id or a unique prefix; repeatable)."),
    archive: Optional[str] = typer.Option(None, "--archive", metavar="PATH", help="Write the archive session here (default: a new session file beside the session)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would move; write nothing."),
    backup: bool = typer.Option(True, "--backup/--no-backup", help="Keep the original as <file>.prune.bak."),
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Move a session's abandoned branches to an archive session (its own
    file, parentSession = this one, which pi opens with those branches
    intact). The session keeps the path to its leaf (and to each
    --keep-branches LEAF), the labels of what it keeps, the entries its
    kept labels name (a label made on the path for an entry of another
    branch keeps that entry and its path), its name and the branch
    summaries on that path, byte for byte; pi builds the same context at
    the leaf. A label always stays in the file of the entry it names; the
    output says which entries off the path stay for which label. Atomic rewrite, owner and mode kept, refused if the file
    changed meanwhile."""
    from ..session.lean import human_size
    from ..operations.pruning import prune_session

    url = store_url(ctx, store)
    (location,), db = _locations(session, False, url)
    if db is not None and archive is not None:
        fail("--archive: a database session's archive is a new session of the store", code=2)
    result = _run_each([location], False, lambda loc: prune_session(
        loc, keep_branches=keep_branches or (), archive=archive, dry_run=dry_run, backup=backup, store=db))[0]
    if as_json:
        print_json(result.to_json())
        return
    pinned = (
        f"{plural(result.off_path, 'entry', 'entries')} off the path kept: {', '.join(result.kept_for)}"
        if result.off_path else ""
    )
    if not result.moved:
        nothing = f"nothing to prune; {pinned}" if pinned else "no abandoned branches; nothing to prune"
        console.print(sanitize(f"{result.session}: {nothing}"), markup=False, soft_wrap=True)
        return
    verb = "would move" if result.dry_run else "moved"
    console.print(sanitize(
        f"{result.session}: {verb} {plural(result.moved, 'entry', 'entries')} of abandoned branches to {result.archive} "
        f"({plural(result.archive_entries, 'entry', 'entries')} with the path they hang from); "
        f"{human_size(result.before)} → {human_size(result.after)}, {plural(result.kept, 'entry', 'entries')} kept"
    ), markup=False, soft_wrap=True)
    if pinned:
        console.print(sanitize(pinned), markup=False, soft_wrap=True)
    if result.backup:
        console.print(sanitize(f"backup: {result.backup}"), markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command()(slim)
    app.command()(restore)
    app.command()(prune)
