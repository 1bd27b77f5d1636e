"""What ``pi-session browse`` does to sessions: library calls, no UI.

Each action opens the session file through :mod:`pi_session.operations`,
as the matching CLI command does (``label``, ``name``, ``navigate``,
``clone``, ``export``, ``compact``), so the browser writes exactly what the
command would: a session is read read-only, and the file is opened for
writing only when there is something to write (an old v1/v2 file is
migrated then, with its backup, and the note says so). Every failure is an
:class:`OperationError` (the workflow layer's
:class:`~pi_session.operations.OperationError`) with a one-line message;
the file is unchanged unless an :class:`Outcome` came back. The actions
that need a summarizer (navigate, compact) are in
:mod:`pi_session.browse.summaries`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import operations
from ..manager.session_manager import SessionManager
from ..storage import SessionFileError
from ..operations import OperationError, OutputExists, one_line
from ..render.terminal import plural
from ..core.text import is_well_formed

__all__ = [
    "OperationError",
    "OutputExists",
    "Outcome",
    "open_read",
    "list_sessions",
    "load_notes",
    "open_write",
    "save",
    "one_line",
    "set_label",
    "set_name",
    "clone",
    "default_export_path",
    "export",
]


@dataclass(frozen=True)
class Outcome:
    """What an action did.

    Attributes:
        message: one line for the user.
        notes: notes of the write (a migration with its backup, another
            writer's entries loaded), one line each.
        path: a file the action made (clone, export), else None.
        select_id: the entry to select afterwards (the new leaf), or None.
    """

    message: str
    notes: tuple[str, ...] = ()
    path: Path | None = None
    select_id: str | None = None


def open_read(path: Path) -> SessionManager:
    """Open a session read-only (an old file is migrated in memory only;
    :func:`pi_session.operations.open_for_reading`).

    Raises:
        OperationError: missing, empty or unreadable file, or not a session.
    """
    try:
        return operations.open_for_reading(path)
    except OperationError as exc:
        raise OperationError(one_line(str(exc))) from None


def list_sessions(cwd: str, *, all_projects: bool = False, store: Any = None) -> list[dict[str, Any]]:
    """The sessions of ``cwd`` (or of every project), newest first, as
    ``pi-session ls [--all]`` lists them (pi's ``SessionInfo`` dicts), from
    ``store`` (a files store; None: pi's sessions directory)."""
    return SessionManager.list_all(store=store) if all_projects else SessionManager.list(cwd, store=store)


def index_hits(text: str, cwd: str, *, all_projects: bool = False, store: Any = None, limit: int = 500) -> dict[str, str | None]:
    """What the picker's search finds through the search index
    (:func:`pi_session.search.search`): ``{session location: entry id of
    its best hit}``, best session first. ``text`` is a query of the search
    language; its last word is taken as a prefix (the user is still typing
    it). A query that does not parse, or an index that cannot be read,
    finds nothing here (the picker still matches ids, cwds, names and first
    messages itself)."""
    from ..search import QueryError, search
    from ..stores import StoreError

    words = text.strip()
    if not words:
        return {}
    if words[-1].isalnum() and '"' not in words:
        words += "*"
    try:
        result = search(store, words, cwd=None if all_projects else cwd, limit=limit)
    except (QueryError, StoreError, OSError):
        return {}
    found: dict[str, str | None] = {}
    for hit in result.hits:
        found.setdefault(hit.location, hit.entry_id)
    return found


def load_notes(manager: SessionManager) -> list[str]:
    """The damage and notes found when ``manager`` opened its file, one line
    each (what the CLI prints as warnings)."""
    return [one_line(line) for line in operations.session_notes(manager)]


def open_write(path: Path) -> SessionManager:
    """The session opened for writing (a v1/v2 file is migrated now, with a
    backup; :func:`save` reports the notes of that too).

    Raises:
        OperationError: the file cannot be read or rewritten.
    """
    try:
        return operations.open_for_writing(path)
    except OperationError as exc:
        raise OperationError(one_line(str(exc))) from None


def save(manager: SessionManager) -> tuple[str, ...]:
    """Write what is pending (:func:`pi_session.operations.save`).

    Returns:
        The manager's notes (opening and writing), one line each.

    Raises:
        OperationError: the write failed.
    """
    return operations.save(manager)


def _check_text(text: str, what: str) -> None:
    if not is_well_formed(text):
        raise OperationError(f"{what}: not valid Unicode text")


def set_label(path: Path, entry_id: str, text: str) -> Outcome:
    """Set the label of ``entry_id`` (empty ``text``: clear it), as
    ``pi-session label``.

    Raises:
        OperationError: no such entry, or the write failed.
    """
    _check_text(text, "label")
    text = text.strip()
    if open_read(path).get_entry(entry_id) is None:
        raise OperationError(f"{path}: no entry with id {entry_id}")
    manager = open_write(path)
    try:
        manager.append_label_change(entry_id, text) if text else manager.append_label_change(entry_id)
    except KeyError:
        raise OperationError(f"{path}: no entry with id {entry_id}") from None
    except SessionFileError as exc:  # e.g. the file was deleted since it was opened
        raise OperationError(str(exc)) from None
    except OSError as exc:
        raise OperationError(f"{path}: {exc.strerror or exc}") from None
    notes = save(manager)
    done = f"labelled {entry_id}: {text}" if text else f"cleared the label of {entry_id}"
    return Outcome(one_line(done), notes, select_id=entry_id)


def set_name(path: Path, text: str) -> Outcome:
    """Name the session (empty ``text``: clear the name), as ``pi-session
    name``.

    Raises:
        OperationError: the write failed.
    """
    _check_text(text, "name")
    manager = open_write(path)
    try:
        manager.append_session_info(text)
    except SessionFileError as exc:  # e.g. the file was deleted since it was opened
        raise OperationError(str(exc)) from None
    except OSError as exc:
        raise OperationError(f"{path}: {exc.strerror or exc}") from None
    notes = save(manager)
    current = manager.get_session_name()
    return Outcome(one_line(f"named: {current}") if current else "name cleared", notes)


def clone(path: Path, entry_id: str) -> Outcome:
    """Write a new session holding the path root→``entry_id``, as
    ``pi-session clone --leaf``; the source stays untouched. A note says
    when the clone leaves out context edits of entries it keeps.

    Raises:
        OperationError: no such entry, or the write failed.
    """
    try:
        done = operations.clone_session(open_read(path), entry_id)
    except OperationError as exc:
        raise OperationError(str(exc)) from None
    notes = (done.warning,) if done.warning is not None else ()
    location = Path(done.location)
    return Outcome(f"cloned {plural(done.entries, 'entry', 'entries')} to {location}", notes, path=location)


def default_export_path(session: Path, directory: str | None = None) -> Path:
    """Where an export goes unless the user says otherwise: the file
    ``pi-session export`` writes without ``--output``
    (:func:`pi_session.operations.default_export_name`:
    ``pi-session-<session file name>.html``), in ``directory`` (default:
    the process cwd)."""
    return Path(directory or os.getcwd()) / operations.default_export_name(session, "html")




def export(path: Path, leaf_id: str | None, output: Path, *, overwrite: bool = False) -> Outcome:
    """Export as ``pi-session export --leaf leaf_id -o output`` does
    (:func:`pi_session.render.export.export_session`): Markdown of the
    conversation root→``leaf_id`` (None: the leaf) for a ``.md`` or
    ``.markdown`` name, else the HTML viewer (the whole tree, opened at
    ``leaf_id``); written atomically; never over a session file.

    Raises:
        OutputExists: ``output`` exists and ``overwrite`` is false.
        OperationError: no such entry, a session file or a directory in the
            way, a missing directory, or the write failed.
    """
    manager = open_read(path)
    chunks, count = operations.export_chunks(manager, "md" if output.suffix.lower() in (".md", ".markdown") else "html", leaf_id)
    target = operations.check_export_target(output, path, overwrite=overwrite)
    try:
        operations.write_export(target, chunks)
    except OSError as exc:
        raise OperationError(f"{output}: {exc.strerror or exc}") from None
    return Outcome(f"exported {plural(count, 'entry', 'entries')} to {target}", path=target)
