"""Helpers shared by the CLI commands: output, errors, session arguments."""

from __future__ import annotations

import sys
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console

from ..errors import PiSessionError

if TYPE_CHECKING:
    from ..stores import SessionStore

NO_WIDTH = 100_000
"""The console width when no terminal is involved (output to a pipe or a
file, and neither stdin nor stderr a terminal): in effect unlimited, so
lines are never cut or wrapped for a width nobody sees."""


def _terminal_columns(fd: int) -> int | None:
    import os

    try:
        return os.get_terminal_size(fd).columns if os.isatty(fd) else None
    except (OSError, ValueError):
        return None


def _width_for(stream: Any) -> int | None:
    """The console width for ``stream``: ``$COLUMNS`` when set; None (rich's
    own choice: the terminal's width) when ``stream`` is a terminal; when it
    is piped, the width of the terminal the command runs in (stdin's or
    stderr's, e.g. ``pi-session ls | less``); else :data:`NO_WIDTH`."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        pass
    for fd in (0, 2, 1):
        found = _terminal_columns(fd)
        if found:
            return found
    return NO_WIDTH


class PipeConsole(Console):
    """A rich console whose closed pipe (``pi-session tree F | head -1``)
    is a ``BrokenPipeError`` like any other write's, not rich's own
    ``SystemExit(1)``: the command line's entry point ends every closed
    pipe the same way (quietly, exit status 0)."""

    def on_broken_pipe(self) -> None:
        import errno

        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


console = PipeConsole(highlight=False, emoji=False, width=_width_for(sys.stdout))
err_console = Console(stderr=True, highlight=False, emoji=False, width=_width_for(sys.stderr))


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


STORE_HELP = (
    "Session store: a sessions directory, sqlite:///FILE or postgresql://USER@HOST/DB "
    "(default: $PI_SESSION_STORE, else the files under ~/.pi/agent/sessions)."
)
"""Help of the ``--store`` options."""
STORE_OPTION = typer.Option(None, "--store", metavar="URL", help=STORE_HELP)
"""The ``--store URL`` option of the commands that name it after themselves
(``ls``, ``import``, ``export``); the global ``pi-session --store URL
COMMAND`` works for every command."""

_store_url: str | None = None


def store_url() -> str | None:
    """The store the session commands use (see :func:`set_store_url`), or None."""
    return _store_url


def set_store_url(url: str | None) -> None:
    """Set the store the session commands use (the global ``--store`` /
    ``PI_SESSION_STORE``; None or empty: files as without a store)."""
    global _store_url
    _store_url = url or None


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


def active_store(url: str | None = None, *, create: bool = False) -> Any:
    """The :class:`pi_session.stores.SessionStore` of ``url`` (default: the
    global ``--store``), opened once per URL and process
    (:func:`pi_session.stores.shared_store`), or None when no store is
    given. Fails with one line (password masked) when it cannot be opened,
    or when it is a SQLite file that does not exist, unless ``create``
    (``import``'s target), which still needs the file's directory."""
    from ..stores import StoreError, shared_store

    url = url or _store_url
    if not url:
        return None
    refuse_missing_sqlite(url, create=create)
    try:
        return shared_store(url)  # the one the managers of this process use too
    except StoreError as exc:
        fail(str(exc))


def database_store(url: str | None = None) -> SessionStore | None:
    """:func:`active_store` when it is a database (not a store of files), else None."""
    store = active_store(url)
    return None if store is None or store.files_root is not None else store


interrupt_reported = False
"""True once a line about Ctrl-C was printed (exit status 130), so the
entry point does not print a second one."""


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``pi-session: <message>`` (sanitized for a terminal) on stderr
    and exit with ``code`` (130 is reserved for Ctrl-C)."""
    from ..terminal import sanitize

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
    from ..terminal import sanitize

    err_console.print(f"warning: {sanitize(message)}", style="yellow", markup=False, soft_wrap=True)


def print_json(value: Any, indent: int | None = 1) -> None:
    """Print ``value`` as the oracle does (``JSON.stringify(v, null, 1)``)
    and a newline, streamed (:func:`pi_session.jsonio.write_pretty`). Every
    ``--json`` output goes through this one encoder: JavaScript's rules for
    numbers (integers beyond ±2**53), lone surrogates (escaped, so the output
    is always valid UTF-8) and any nesting depth. ``indent=None`` prints the
    compact layout instead."""
    from ..jsonio import write_pretty

    write_pretty(value, sys.stdout, indent=indent)


def resolve_session(arg: str, *, agent_dir: str | None = None) -> Path:
    """Turn a session argument into a file path.

    A path to an existing file is made absolute (symlinks are kept, not
    resolved), so paths printed and stored (``parentSession``) are
    absolute. Anything else must be a
    (unique prefix of a) session id: any id
    :func:`pi_session.ids.validate_session_id` accepts (``user_123``,
    ``chat.v2``, ``Support-42``) or a prefix of one (letters, digits, ``.``,
    ``_``, ``-``, starting with a letter or digit, so it can never address a
    path outside the sessions directory). Every ``.jsonl`` file under
    ``<agent dir>/sessions`` answers to two ids: the WHOLE id its name
    ``<timestamp>_<id>.jsonl`` gives
    (:func:`pi_session.stores.file.session_id_of_file_name`: ``123`` never
    finds ``user_123``) and its header's id (:func:`header_session_id`,
    the id ``ls`` lists it by, also for a file named otherwise, copied or
    renamed). A whole id is matched first, else a prefix; when nothing
    matches, the argument's lower-case form is tried (pi's ids are
    lower-case UUIDs), as the stores' ``resolve`` does. When several files
    match (a prefix of several ids, or two files holding one id) nothing
    is picked: the error lists the candidates.

    Raises:
        CliError: no such file, unknown id, or an ambiguous prefix.
    """
    import os
    import re
    from pathlib import Path

    from ..paths import sessions_dir

    from ..stores import SessionNotFoundError
    from ..stores.file import FileStore, session_id_of_file_name

    if not arg.strip():
        raise CliError("no session given: pass a session file or a session id (prefix)")
    store = active_store()
    if store is not None and not isinstance(store, FileStore):
        if os.path.isfile(os.path.expanduser(arg)):
            raise CliError(f"{arg}: a file, and the store is the database {store.url} (--store or PI_SESSION_STORE): "
                           "run this command without a database store to work on the file")
        raise CliError(f"{arg}: this command works on session files, and the store is the database {store.url} "
                       "(export the session with `export SESSION --format jsonl -o FILE` first)")
    candidate = Path(arg).expanduser()
    if candidate.is_file():
        return Path(os.path.abspath(candidate))
    if candidate.exists() or candidate.is_symlink():
        from ..storage import session_path_problem

        raise CliError(f"{arg}: {session_path_problem(candidate) or 'not a session file'}")
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z._-]*", arg):
        raise CliError(f"{arg}: no such session file")  # a path (no id looks like one)
    if store is not None:
        try:
            return store.path_of(store.resolve(arg))
        except SessionNotFoundError as exc:
            raise CliError(str(exc)) from None
    root = sessions_dir(agent_dir)
    files: list[tuple[str | None, Path]] = []  # (the id the file's name gives, file)
    if root.is_dir():
        for sub in sorted(root.iterdir()):
            if not sub.is_dir():
                continue
            try:
                names = os.listdir(sub)
            except OSError:
                continue
            files.extend((session_id_of_file_name(name), sub / name) for name in sorted(names) if name.endswith(".jsonl"))
    # each file answers to the id its name gives and to its header's id (the
    # id `ls` lists it by): a file named <time>_<other>.jsonl, a copy or a
    # renamed file is found by the id `ls` shows
    ids_of = {path: {i for i in (name_id, header_session_id(path)) if i is not None} for name_id, path in files}

    def matching(wanted: str) -> list[Path]:
        exact = [path for path, ids in ids_of.items() if wanted in ids]
        return exact or [path for path, ids in ids_of.items() if any(i.startswith(wanted) for i in ids)]

    matches = matching(arg)
    if not matches and arg != arg.lower():
        matches = matching(arg.lower())
    if not matches:
        raise CliError(f"{arg}: no such session file, and no session id starts with it (looked in {root})")
    if len(matches) > 1:
        shown = "; ".join(f"{' / '.join(sorted(ids_of[m]))} ({m})" for m in matches[:5])
        what = "session id" if all(arg in ids_of[m] for m in matches) else "session id prefix"
        raise CliError(f"{arg}: ambiguous {what}: {len(matches)} session files match: {shown}{'; ...' if len(matches) > 5 else ''}; "
                       "give more of the id or the file's path")
    match = matches[0]
    if not match.resolve().is_relative_to(root.resolve()):
        raise CliError(f"{arg}: the session file for this id lies outside {root} (a symlink); give its path instead")
    return match


def project_dir(cwd: str) -> str:
    """The project directory ``ls --cwd`` names: a Windows absolute path
    (``C:\\Users\\me\\app``, ``C:/x``, ``\\\\server\\share``: a session made
    on Windows, or imported from one) as given, for its sessions live in
    the directory pi names after it (:func:`pi_session.paths.encode_cwd`:
    ``--C--Users-me-app--``); anything else made absolute (``~`` expanded)."""
    import os

    from ..paths import is_windows_absolute

    if is_windows_absolute(cwd):
        return cwd.rstrip("\\/") if len(cwd.rstrip("\\/")) > 2 else cwd
    return os.path.abspath(os.path.expanduser(cwd))


def project_cwd(project: str) -> str:
    """``project`` (from :func:`project_dir`) as listings match header cwds:
    resolved (:func:`pi_session.paths.resolve_path`), a Windows path as it
    is."""
    from ..paths import is_windows_absolute, resolve_path

    return project if is_windows_absolute(project) else resolve_path(project)


def other_session_ids(db: SessionStore | None, chosen: SessionStore | None) -> Iterator[str]:
    """The ids of every session (of the store, or under the sessions
    directory), read only if ``ls`` shortens ids: those its short ids must
    not be a prefix of. Files give the id their name gives
    (``<time>_<id>.jsonl``, what every command also matches; a file named
    otherwise is matched by its header, which only ``ls --all`` reads)."""
    from ..paths import sessions_dir
    from ..stores.file import named_session_files

    if db is not None:
        yield from (str(info.get("id")) for info in db.list(cwd=None, with_text=False))
        return
    root = (chosen.files_root if chosen is not None else None) or sessions_dir()
    yield from (session_id for session_id, _path in named_session_files(root))


def header_session_id(path: Path) -> str | None:
    """The id of a file's session header, as ``ls`` lists the file: the
    first line that is JSON (blank and unparseable lines skipped, at most
    1 MiB read, as pi's header discovery), when it is a session header
    with a string id; else None (also for a file that cannot be read or is
    not a regular file)."""
    from ..listing import open_regular
    from ..records import is_session_header
    from ..storage import NOT_JSON, line_record

    try:
        f = open_regular(path)
        if f is None:
            return None
        with f:
            budget = 1 << 20
            for line_no, raw in enumerate(f, 1):
                budget -= len(raw)
                if budget < 0:
                    return None
                record = line_record(raw.rstrip(b"\n"), line_no)
                if record is NOT_JSON:
                    continue
                return str(record["id"]) if is_session_header(record) else None
    except OSError:
        return None
    return None


def open_session(arg: str, *, read_only: bool = True, quiet: bool = False, notes: bool = True):
    """Resolve and open a session for a command
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
    from ..stores import SessionNotFoundError, StoreError

    opener = open_for_reading if read_only else open_for_writing
    db = database_store()
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
            manager = opener(resolve_session(arg), shown_as=arg)
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
    from ..records import CURRENT_SESSION_VERSION

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
