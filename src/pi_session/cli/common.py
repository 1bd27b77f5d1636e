"""Helpers shared by the CLI commands: output, errors, session arguments."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console

from ..errors import PiSessionError
from .catalog import STORE_HELP
from .widths import NO_WIDTH, console_width_for

if TYPE_CHECKING:
    from ..stores import SessionStore


class PipeConsole(Console):
    """A rich console whose closed pipe (``pi-session tree F | head -1``)
    is a ``BrokenPipeError`` like any other write's, not rich's own
    ``SystemExit(1)``: the command line's entry point ends every closed
    pipe the same way (quietly, exit status 0)."""

    def on_broken_pipe(self) -> None:
        import errno

        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


console = PipeConsole(highlight=False, emoji=False, width=console_width_for(sys.stdout))
err_console = Console(stderr=True, highlight=False, emoji=False, width=console_width_for(sys.stderr))


def output_width() -> int | None:
    """The width of stdout's lines: the console's, or None (no limit) when
    no terminal is involved (:data:`NO_WIDTH`)."""
    return None if console.width >= NO_WIDTH else console.width


JSON_OPTION = typer.Option(False, "--json", help="Machine-readable JSON output.")
"""The ``--json`` flag every command shares."""
SESSION_ARGUMENT = typer.Argument(..., help="Session file or session id prefix.")
"""The ``SESSION`` argument every session command shares: a path, or a
unique prefix of a session id (see :func:`resolve_session`)."""


class CliError(PiSessionError):
    """An error reported to the user as one line, exit status 1."""


STORE_OPTION = typer.Option(None, "--store", metavar="URL", help=STORE_HELP)
"""The ``--store URL`` option of the commands that name it after themselves
(``ls``, ``import``, ``export``); the global ``pi-session --store URL
COMMAND`` works for every command."""


@dataclass
class Invocation:
    """What one command line's root options give its command (typer's
    context object, ``ctx.obj``): nothing is kept between command lines run
    in one process.

    Attributes:
        store_url: the store of ``pi-session --store URL COMMAND`` (or
            ``PI_SESSION_STORE``; a command's own ``--store`` wins), or
            None: the session files under ``~/.pi/agent/sessions``.
    """

    store_url: str | None = None


def invocation(ctx: typer.Context) -> Invocation:
    """The :class:`Invocation` of the command line ``ctx`` belongs to (set
    by the root callback; a fresh one when a command runs without it)."""
    root = ctx.find_root()
    if not isinstance(root.obj, Invocation):
        root.obj = Invocation()
    return root.obj


def store_url(ctx: typer.Context, option: str | None = None) -> str | None:
    """The store URL a command uses: its own ``--store`` (``option``) when
    given, else the root's (:class:`Invocation`), else None."""
    return option or invocation(ctx).store_url


def refuse_missing_sqlite(url: str, *, create: bool = False) -> None:
    """Fail with one line when ``url`` is a ``sqlite:///`` URL whose file
    does not exist: only ``import`` creates a database (a mistyped or
    relative URL must not leave an empty one behind and list nothing).
    With ``create`` (``import``'s target) the file may be missing, but not
    its directory: a mistyped directory is an error naming it, never
    created."""
    import os

    from ..stores import StoreError
    from ..stores.base import sqlite_path

    if not url.lower().startswith("sqlite://"):
        return
    try:
        path = sqlite_path(url)
    except StoreError as exc:
        fail(str(exc))
    if create:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            fail(f"{url}: no such directory ({parent}); import creates the database file, not its directory")
    elif not os.path.exists(path):
        fail(f"{url}: no such database file ({path})")


def active_store(url: str | None, *, create: bool = False) -> Any:
    """The :class:`pi_session.stores.SessionStore` of ``url`` (see
    :func:`store_url`), opened once per URL and process
    (:func:`pi_session.stores.shared_store`), or None when no store is
    given. Fails with one line (password masked) when it cannot be opened,
    or when it is a SQLite file that does not exist, unless ``create``
    (``import``'s target), which still needs the file's directory."""
    from ..stores import StoreError, shared_store

    if not url:
        return None
    refuse_missing_sqlite(url, create=create)
    try:
        return shared_store(url)  # the one the managers of this process use too
    except StoreError as exc:
        fail(str(exc))


def database_store(url: str | None) -> SessionStore | None:
    """:func:`active_store` when it is a database (not a store of files), else None."""
    store = active_store(url)
    from ..stores import StoreCapability

    return None if store is None or store.can(StoreCapability.FILES) else store


interrupt_reported = False
"""True once a line about Ctrl-C was printed (exit status 130), so the
entry point does not print a second one."""


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``pi-session: <message>`` (sanitized for a terminal) on stderr
    and exit with ``code`` (130 is reserved for Ctrl-C)."""
    from ..render.terminal import sanitize

    global interrupt_reported
    if code == 130:
        interrupt_reported = True
    err_console.print(f"pi-session: {sanitize(message)}", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def text_argument(value: str, what: str) -> str:
    """``value`` checked as text to store in a session: a command-line
    argument holding bytes that are not UTF-8 reaches Python as lone
    surrogates (``surrogateescape``), which must never be written to a
    file. Fails with one line naming ``what``."""
    for ch in value:
        if "\ud800" <= ch <= "\udfff":
            code = ord(ch)
            shown = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
            fail(f"{what}: not valid UTF-8 text ({shown}); session files hold UTF-8 only")
    return value


def warn(message: str) -> None:
    """Print a one-line warning (sanitized for a terminal) on stderr."""
    from ..render.terminal import sanitize

    err_console.print(f"warning: {sanitize(message)}", style="yellow", markup=False, soft_wrap=True)


def print_json(value: Any, indent: int | None = 1) -> None:
    """Print ``value`` as the oracle does (``JSON.stringify(v, null, 1)``)
    and a newline, streamed (:func:`pi_session.core.jsonio.write_pretty`). Every
    ``--json`` output goes through this one encoder: JavaScript's rules for
    numbers (integers beyond ±2**53), lone surrogates (escaped, so the output
    is always valid UTF-8) and any nesting depth. ``indent=None`` prints the
    compact layout instead."""
    from ..core.jsonio import write_pretty

    write_pretty(value, sys.stdout, indent=indent)


def resolve_session(arg: str, store: Any = None) -> Path:
    """Turn a session argument into a file path
    (:func:`pi_session.manager.locating.resolve_session_file`: a path, or a unique
    id prefix of a file under the sessions directory or of ``store``, a
    store of files).

    Raises:
        CliError: no such file, unknown id, an ambiguous prefix, or
            ``store`` is a database (these commands work on files).
    """
    import os

    from ..manager.locating import resolve_session_file
    from ..stores import StoreCapability, StoreError

    if not arg.strip():
        raise CliError("no session given: pass a session file or a session id (prefix)")
    if store is not None and not store.can(StoreCapability.FILES):
        if os.path.isfile(os.path.expanduser(arg)):
            raise CliError(f"{arg}: a file, and the store is the database {store.url} (--store or PI_SESSION_STORE): "
                           "run this command without a database store to work on the file")
        raise CliError(f"{arg}: this command works on session files, and the store is the database {store.url} "
                       "(export the session with `export SESSION --format jsonl -o FILE` first)")
    try:
        return resolve_session_file(arg, store=store)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def project_dir(cwd: str) -> str:
    """The project directory ``ls --cwd`` names: a Windows absolute path
    (``C:\\Users\\me\\app``, ``C:/x``, ``\\\\server\\share``: a session made
    on Windows, or imported from one) as given, for its sessions live in
    the directory pi names after it (:func:`pi_session.core.paths.encode_cwd`:
    ``--C--Users-me-app--``); anything else made absolute (``~`` expanded)."""
    import os

    from ..core.paths import is_windows_absolute

    if is_windows_absolute(cwd):
        return cwd.rstrip("\\/") if len(cwd.rstrip("\\/")) > 2 else cwd
    return os.path.abspath(os.path.expanduser(cwd))


def project_cwd(project: str) -> str:
    """``project`` (from :func:`project_dir`) as listings match header cwds:
    resolved (:func:`pi_session.core.paths.resolve_path`), a Windows path as it
    is."""
    from ..core.paths import is_windows_absolute, resolve_path

    return project if is_windows_absolute(project) else resolve_path(project)


def other_session_ids(db: SessionStore | None, chosen: SessionStore | None) -> Iterator[str]:
    """The ids of every session (of the store, or under the sessions
    directory), read only if ``ls`` shortens ids: those its short ids must
    not be a prefix of. Files give the id their name gives
    (``<time>_<id>.jsonl``, what every command also matches; a file named
    otherwise is matched by its header, which only ``ls --all`` reads)."""
    from ..core.paths import sessions_dir
    from ..stores.file import named_session_files

    if db is not None:
        yield from (str(info.get("id")) for info in db.list(cwd=None, with_text=False))
        return
    from ..stores import StoreCapability

    root = chosen.files_root if chosen is not None and chosen.can(StoreCapability.FILES) else sessions_dir()
    yield from (session_id for session_id, _path in named_session_files(root))


def open_session(ctx: typer.Context, arg: str, *, read_only: bool = True, quiet: bool = False, notes: bool = True):
    """Resolve and open a session for a command (in the store of ``ctx``'s
    command line, :func:`store_url`)
    (:func:`pi_session.operations.open_for_reading` / ``open_for_writing``:
    the policy every front end shares), printing damage warnings (and,
    unless ``notes`` is false, the manager's notes, such as "migrated in
    memory only": a command that opens the file again to write says what
    that did instead). Any failure ends the command with one line.

    Returns:
        A :class:`pi_session.SessionManager`.
    """
    import os

    from ..operations import OperationError, open_for_reading, open_for_writing
    from ..stores import SessionNotFoundError, StoreCapability, StoreError

    opener = open_for_reading if read_only else open_for_writing
    chosen = active_store(store_url(ctx))
    db = chosen if chosen is not None and not chosen.can(StoreCapability.FILES) else None
    try:
        if db is not None:
            if not arg.strip():
                raise CliError("no session given: pass a session id (prefix)")
            try:
                manager = opener(arg, store=db)
            except SessionNotFoundError:
                if os.path.isfile(os.path.expanduser(arg)):
                    raise CliError(f"{arg}: a file, and the store is the database {db.url} (--store or PI_SESSION_STORE), "
                                   "where SESSION is a session id: run without a database store to open the file") from None
                raise
        else:
            manager = opener(resolve_session(arg, chosen), shown_as=arg)
    except (CliError, StoreError, OperationError) as exc:
        fail(str(exc))
    if not quiet:
        _print_problems(manager, notes, read_only)
    return manager


def _print_problems(manager: Any, notes: bool, read_only: bool) -> None:
    """The warnings of :func:`open_session`. A read-only open of an old
    (v1/v2) file leaves out its note "migrated in memory only" (the first
    note, the only one such an open makes): reading changes nothing, and
    ``info``'s version row and ``check`` say it once, instead of every
    command repeating it."""
    from ..operations import session_notes
    from ..entries.records import CURRENT_SESSION_VERSION

    lines = session_notes(manager)
    shown = lines if notes else lines[: len(lines) - len(manager.notes)]
    if notes and read_only and manager.file_version != CURRENT_SESSION_VERSION and manager.notes:
        shown = lines[: len(lines) - len(manager.notes)] + list(manager.notes[1:])
    for line in shown:
        warn(line)


def report_new_notes(manager: Any, seen: int) -> None:
    """Print the notes a write added after the first ``seen`` (a torn last
    line moved aside, another writer's entries loaded, ...)."""
    for note in manager.notes[seen:]:
        warn(note)


def check_leaf_option(leaf: str | None) -> None:
    """Fail with one line when a ``--leaf`` option was given empty (neither
    an entry id nor ``null``)."""
    if leaf is not None and not leaf.strip():
        fail("--leaf: give an entry id, or 'null' for none")


def apply_leaf(manager: Any, leaf: str | None) -> None:
    """Apply a ``--leaf ID|null`` option to an opened manager (in memory
    only): ``null`` resets the leaf, an id (or a unique prefix of one:
    :func:`entry_id_arg`) moves it; an unknown id fails with a one-line
    error."""
    if leaf is None:
        return
    check_leaf_option(leaf)
    if leaf == "null":
        manager.reset_leaf()
        return
    leaf = entry_id_arg(manager, leaf)
    try:
        manager.branch(leaf)
    except KeyError:
        fail(f"{manager.get_session_location()}: no entry with id {leaf}")


def entry_id_arg(manager: Any, text: str) -> str:
    """The entry id a command-line argument names: the whole id of an
    entry, else the one id that starts with it (a unique prefix, as for
    sessions and as git takes commits; :meth:`pi_session.SessionManager.find_entry_ids`).
    Fails with one line when no id starts with it, or listing the
    candidates when several do."""
    if manager.get_entry(text) is not None or not text:
        return text
    found = manager.find_entry_ids(text, limit=6)
    if len(found) == 1:
        return str(found[0])
    where = manager.get_session_location()
    if not found:
        fail(f"{where}: no entry with id {text}, and no entry id starts with it")
    shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
    fail(f"{where}: ambiguous entry id prefix {text} (entries {shown}); give more of the id")
