"""``check`` and ``export``: find and repair damage, export a conversation.

Exit status of ``check``: 0 when the file has no problem (with ``--repair``:
no problem is left after the repair); 1 when problems are found and not
repaired (without ``--repair``: any problem; with it: tree problems, which
repair reports but does not change); 2 when the file cannot be read as a
session (a one-line error on stderr).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional

import typer
from rich.text import Text

from ..operations import (
    EXPORT_MODE, PRIVATE_MODE, OperationError, check_export_target, default_export_name, export_chunks, export_secrets,
    redacted_jsonl, redacted_manager, write_export,
)
from ..storage.problems import grouped_problems
from ..check.repair import check_session, repair_session
from ..storage import SessionFileError
from .common import (
    JSON_OPTION,
    SESSION_ARGUMENT,
    STORE_OPTION,
    CliError,
    active_store,
    check_leaf_option,
    database_store,
    entry_id_arg,
    invocation,
    store_url,
    console,
    err_console,
    fail,
    open_session,
    print_json,
    resolve_session,
    warn,
)
from ..render.terminal import fit_cells, plural, sanitize



def _resolve(ctx: typer.Context, session: str) -> Path:
    try:
        return resolve_session(session, active_store(store_url(ctx)))
    except CliError as exc:
        fail(str(exc), code=2)


def _lean_warnings(path: Any) -> list[str]:
    """What ``check`` says when a session holds more than
    :data:`pi_session.session.lean.WARN_OVER` bytes of payload or of abandoned
    branches, each with the command that fixes it."""
    from ..session.lean import WARN_OVER, human_size, measure_file

    try:
        lean = measure_file(path)
    except OSError:
        return []
    out = []
    if lean.payload > WARN_OVER:
        out.append(f"{human_size(lean.payload)} of images and big tool outputs; `pi-session slim {path}` moves them out of the file")
    if lean.abandoned > WARN_OVER:
        out.append(f"{human_size(lean.abandoned)} in abandoned branches; `pi-session prune {path}` moves them to an archive session")
    return out


def check(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    repair: bool = typer.Option(False, "--repair", help="Fix damaged lines: atomic rewrite, original kept as <file>.repair.bak."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Report every problem of a session file with its line number.

    Exit status: 0 no problem left; 1 problems found (without --repair), or
    problems repair does not fix (tree problems); 2 unreadable file.
    Warnings (a lone UTF-16 surrogate in a string: sent as U+FFFD; over
    8 MB of images and big tool outputs, or of abandoned branches, with the
    `slim` or `prune` command that fixes it) are printed and do not change
    the exit status.
    """
    path = _resolve(ctx, session)
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
    lean_notes = _lean_warnings(path)
    if as_json:
        data = result.to_json() if result is not None else report.to_json()
        if lean_notes:
            data["leanWarnings"] = lean_notes
        print_json(data)
    else:
        for note in lean_notes:
            console.print(Text(sanitize(f"{path}: warning: {note}"), style="yellow"), soft_wrap=True)
        shown = result.before if result is not None else report
        for text, problem in grouped_problems(shown.problems, path):
            console.print(Text(sanitize(text), style="yellow" if problem.fixable else "red"), soft_wrap=True)
        for warning in report.warnings:
            console.print(Text(sanitize(f"{path}:{warning.line}: warning: {warning.message}"), style="yellow"), soft_wrap=True)
        for note in shown.notes:
            console.print(Text(sanitize(f"{path}: note: {note}"), style="dim"), soft_wrap=True)
        if result is not None:
            for tmp in result.removed_temps:
                console.print(sanitize(f"deleted leftover temp file {tmp}"), markup=False, soft_wrap=True)
        if result is not None and result.changed:
            done = [f"{plural(len(result.recovered_lines), 'damaged line')} written clean"] if result.recovered_lines else []
            if result.removed_lines:
                done.append(f"{plural(len(result.removed_lines), 'line')} removed")
            console.print(
                sanitize(f"repaired {result.path}: {', '.join(done) or 'rewritten'}"),
                markup=False,
                soft_wrap=True,
            )
            console.print(sanitize(f"  original kept as {result.backup}"), markup=False, soft_wrap=True)
            if result.rejected:
                console.print(sanitize(f"  removed bytes kept in {result.rejected}"), markup=False, soft_wrap=True)
            if report.problems:
                console.print(f"{plural(len(report.problems), 'problem')} left that repair does not fix", markup=False)
        elif report.ok:
            extra = f", {plural(len(report.warnings), 'warning')}" if report.warnings else ""
            console.print(
                sanitize(f"{path}: ok ({plural(report.entry_count, 'entry', 'entries')}, {plural(report.line_count, 'line')}{extra})"),
                markup=False,
                soft_wrap=True,
            )
        elif not repair:
            console.print(f"{plural(len(report.problems), 'problem')}; {len(report.fixable):,} fixable with --repair", markup=False)
        else:
            console.print(f"nothing to repair: {plural(len(report.problems), 'problem')} that repair does not fix; the file is unchanged", markup=False)
    raise typer.Exit(0 if report.ok else 1)


EXPORT_FORMATS = {"html": "html", "md": "md", "markdown": "md", "jsonl": "jsonl"}

Phase = Callable[[str, str], Optional[Callable[[int, Optional[int]], None]]]


@contextlib.contextmanager
def _export_progress() -> Iterator[Phase]:
    """A rich progress display on stderr while an export scans for secrets
    and writes, only when stderr is a terminal (quiet when piped, as
    ``secrets`` and ``search``). Yields ``phase(description, unit)``
    (unit ``"entries"`` or ``"bytes"``), which starts a bar and returns its
    ``on_progress(done, total)`` (total None: unknown), or None when
    nothing is shown."""
    if not err_console.is_terminal:
        yield lambda _description, _unit: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[amount]}"), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True, redirect_stdout=False, redirect_stderr=False) as bar:

        def phase(description: str, unit: str) -> Callable[[int, Optional[int]], None]:
            task = bar.add_task(description, total=None, amount="")

            def update(done: int, total: Optional[int]) -> None:
                bar.update(task, completed=done, total=total, amount=_amount(done, total, unit))

            return update

        yield phase


def _amount(done: int, total: Optional[int], unit: str) -> str:
    if unit == "bytes":
        shown = f"{done / 1e6:,.1f}" + (f"/{total / 1e6:,.1f}" if total is not None else "")
        return f"{shown} MB"
    return f"{done:,}" + (f"/{total:,}" if total is not None else "") + f" {unit}"


def _counted(chunks: Iterable[bytes], on_progress: Optional[Callable[[int, Optional[int]], None]]) -> Iterator[bytes]:
    """``chunks``, telling ``on_progress`` the bytes handed on so far."""
    done = 0
    for chunk in chunks:
        yield chunk
        done += len(chunk)
        if on_progress is not None:
            on_progress(done, None)




def export(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    fmt: str = typer.Option("html", "--format", "-f", help="html, md or jsonl."),
    output_name: Optional[str] = typer.Option(
        None, "--output", "-o",
        help="Write here; '-': standard output (default: pi-session-<session file name>.html, .md or .jsonl in the current directory, as pi's /export).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file (never a session file)."),
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Export the path to this entry (default: the leaf), or 'null' for none."),
    private: bool = typer.Option(False, "--private", help="Write the file with mode 0600 (default 0644 less the umask: a page is made to be shared)."),
    redact: bool = typer.Option(False, "--redact", help="Replace each detected secret with [REDACTED:<kind>] in the export (the session is not changed)."),
    allow_secrets: bool = typer.Option(False, "--allow-secrets", help="Write the export even though it holds detected secrets; skips the secret scan, most of a long export's time."),
    full_outputs: bool = typer.Option(
        False, "--full-outputs", help="Markdown: keep every line of tool and shell output (by default one longer than 30 lines keeps its first 20 and last 10)."
    ),
    store: Optional[str] = STORE_OPTION,
) -> None:
    """Export the conversation as self-contained HTML or Markdown, or the
    whole session as its JSONL file.

    HTML is the viewer: one offline page with the whole tree in a sidebar
    (click an entry to see the path to it), the path to the leaf (or
    --leaf) shown first. Markdown is the path root to leaf (or --leaf), as
    Markdown that renders as the conversation (a tool or shell output
    longer than 30 lines keeps its first 20 and last 10 lines and says how
    many it left out; --full-outputs keeps all). ``--format jsonl`` gives
    the session's lines exactly as stored (byte-identical to the file
    imported into a store).

    Without --output the file is ``pi-session-<session file name>.html``
    (``.md``, ``.jsonl``) in the current directory, as pi's ``/export``
    names it, and its path is printed; ``-o -`` writes to standard output.
    HTML and Markdown files get mode 0644 less the umask (``--private``:
    0600); a JSONL export, a copy of the session with every text a context
    edit hides, is always 0600.

    Control characters of the session text (terminal escapes) are shown as
    visible escapes such as ``\\x1b``. The output file is written atomically
    and never replaces a session file.

    An export that would hold a detected secret (see ``pi-session secrets``)
    is refused unless --redact (mask them) or --allow-secrets. That scan
    is most of the time of a long export (about 1 to 2 s per MB of
    session: minutes for a 100 MB session, against seconds with
    --allow-secrets, which skips it); on a terminal a progress bar shows
    the scan and the writing."""
    if store:
        invocation(ctx).store_url = store
    kind = EXPORT_FORMATS.get(fmt.lower())
    if kind is None:
        fail(f"--format: unknown format {fmt!r} (formats: html, md, jsonl)")
    if output_name is not None and not output_name.strip():
        fail("--output: the file name is empty (give a file, or - for standard output)")
    output = Path(output_name) if output_name is not None else None
    if redact and allow_secrets:
        fail("give --redact or --allow-secrets, not both")
    check_leaf_option(leaf)
    if kind == "jsonl":
        if leaf is not None:
            fail("--leaf: not with --format jsonl (the whole session is exported)")
        _export_jsonl(ctx, session, output, force, redact, allow_secrets)
        return
    manager = open_session(ctx, session, read_only=True)
    if leaf == "null":
        warn("--leaf null: the context is empty; exporting an empty conversation")
    elif leaf is not None:
        leaf = entry_id_arg(manager, leaf)
    shown = manager
    session_file = manager.get_session_file()
    if output is None:
        named = session_file if session_file is not None else str(manager.get_session_id())
        output = Path.cwd() / default_export_name(named, kind)
    target = _target(output, session_file, force)  # before the scan: a refused target fails at once
    with _export_progress() as phase:
        try:
            if leaf not in (None, "null") and manager.get_entry(leaf) is None:
                raise OperationError(f"{manager.get_session_location()}: no entry with id {leaf}")
            if redact:
                shown = redacted_manager(manager, allow=_allow_list(), on_progress=phase("redacting secrets", "entries"))
            elif not allow_secrets:
                _refuse_secrets(export_secrets(manager, kind, leaf, allow=_allow_list(), on_progress=phase("scanning for secrets", "entries")))
            chunks, count = export_chunks(shown, kind, leaf, full_outputs=full_outputs)
        except OperationError as exc:
            fail(str(exc))
        written = _emit(output, target, _counted(chunks, _writing_phase(phase, output)), PRIVATE_MODE if private else EXPORT_MODE)
    if written:
        err_console.print(f"exported {plural(count, 'entry', 'entries')} to {sanitize(str(output))}", markup=False, soft_wrap=True)


def _writing_phase(phase: Phase, output: Path) -> Optional[Callable[[int, Optional[int]], None]]:
    """The progress bar of the writing, except when the export goes to a
    terminal's standard output (the bar would be drawn over it)."""
    if str(output) == "-" and sys.stdout.isatty():
        return None
    return phase(f"writing {'standard output' if str(output) == '-' else fit_cells(sanitize(output.name), 40)}", "bytes")


def _target(output: Path, session_file: Path | None, force: bool) -> Path | None:
    """Where an export to ``output`` goes: None for standard output
    (``-``), else the path :func:`pi_session.operations.check_export_target`
    allows (never over a session file, an existing file only with
    ``force``, a device or FIFO as it is); a refusal ends the command with
    one line. Checked before the secret scan, which can take minutes."""
    if str(output) == "-":
        return None
    try:
        return check_export_target(output, session_file, overwrite=force)
    except OperationError as exc:
        fail(str(exc))


def _emit(output: Path, target: Path | None, chunks: Iterable[bytes], mode: int) -> bool:
    """Write an export to standard output (``target`` None) or to
    ``target`` (from :func:`_target` for ``output``) with permission bits
    ``mode`` less the umask; errors end the command with one line naming
    ``output``. Returns True when a file was written."""
    if target is None:
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        return False
    try:
        write_export(target, chunks, mode=mode)
    except OSError as exc:
        # the error is about the user's file, never our temp file beside it
        fail(f"{output}: {exc.strerror or exc}")
    return True


def _allow_list() -> Any:
    """The allow-list of ``$PI_SESSION_SECRETS_ALLOW``, or None."""
    from .secrets_cmds import allow_list_from

    return allow_list_from(None)


def _refuse_secrets(hits: list[Any]) -> None:
    """Fail when an export would hold secrets (``hits``), naming the first
    ones masked."""
    if not hits:
        return
    shown = "; ".join(f"{h.entry_id or '-'} {h.field}: {h.kind} {h.preview}" for h in hits[:3])
    more = f" (and {len(hits) - 3:,} more)" if len(hits) > 3 else ""
    fail(f"{hits[0].session}: the export would hold {plural(len(hits), 'secret')}: {shown}{more}; "
         "--redact masks them, --allow-secrets writes them anyway, `pi-session scrub` removes them from the session")


def _export_jsonl(ctx: typer.Context, session: str, output: Optional[Path], force: bool, redact: bool = False, allow_secrets: bool = False) -> None:
    """``export --format jsonl``: the session's lines exactly as stored
    (mode 0600 whatever is asked: a copy of the session, with every text a
    context edit hides)."""
    from ..stores import StoreError
    from ..stores.transfer import export_lines

    db = database_store(store_url(ctx))
    session_file: Path | None = None
    try:
        if db is not None:
            session_id = db.resolve(session)
            data = b"".join(export_lines(db, session_id))
            named = db.file_name(session_id) or session_id
        else:
            session_file = _resolve(ctx, session)
            data = session_file.read_bytes()
            named = str(session_file)
    except StoreError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{session}: {exc.strerror or exc}")
    if output is None:
        output = Path.cwd() / default_export_name(named, "jsonl")
    target = _target(output, session_file, force)  # before the scan: a refused target fails at once
    if redact or not allow_secrets:
        with _export_progress() as phase:
            redacted, hits = redacted_jsonl(data, session=str(session_file or named), allow=_allow_list(),
                                            on_progress=phase("redacting secrets" if redact else "scanning for secrets", "bytes"))
        if redact:
            data = redacted
        else:
            _refuse_secrets(hits)
    if _emit(output, target, [data], PRIVATE_MODE):
        err_console.print(f"exported {len(data):,} bytes to {sanitize(str(output))}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``check`` and ``export`` to ``app``."""
    app.command()(check)
    app.command()(export)
