"""Opening a session for reading or for writing: the one policy of every
front end, and saving with the notes of the write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..manager.session_manager import SessionManager
from ..storage.problems import grouped_problems
from ..storage import SessionFileError
from .errors import OperationError, one_line

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = ["open_for_reading", "open_for_writing", "session_notes", "save"]


def _open(
    location: str | os.PathLike[str], store: SessionStore | None, read_only: bool, shown_as: str | None, lazy: bool = False
) -> SessionManager:
    name = location if shown_as is None else shown_as
    try:
        if store is not None:
            return SessionManager.open(str(location), store=store, read_only=read_only, lazy_read=lazy)
        path = Path(location)
        if read_only and path.stat().st_size == 0:
            # pi (and SessionManager.open) would start a new session in it:
            # reading must not invent one
            raise OperationError(f"{path}: empty file (0 bytes): no session in it yet")
        # the front ends open sessions that exist: a file gone since it
        # was named is an error, not a new session
        return SessionManager.open(path, read_only=read_only, must_exist=True, lazy_read=lazy)
    except SessionFileError as exc:
        raise OperationError(str(exc)) from None
    except PermissionError as exc:
        raise OperationError(f"{name}: permission denied ({exc.strerror or exc})") from None
    except OSError as exc:
        raise OperationError(f"{name}: {exc.strerror or exc}") from None


def open_for_reading(
    location: str | os.PathLike[str], *, store: SessionStore | None = None, shown_as: str | None = None, lazy: bool = False
) -> SessionManager:
    """Open a session read-only: a v1/v2 file is migrated in memory only;
    nothing is ever written through the manager.

    Args:
        location: the session file (a path), or with ``store`` a session id
            (prefix) in that database store.
        store: a database :class:`pi_session.stores.SessionStore`, or None
            for a file.
        shown_as: how an error reading the file names it (default:
            ``location``), e.g. as the user typed it.
        lazy: index a session file's entries and decode each when first
            accessed, whatever the file's shape (``SessionManager``'s
            ``lazy_read``): for a reader of a few entries of a long session.

    Raises:
        OperationError: missing, empty (0 bytes), unreadable or damaged
            beyond use; not a session. Store errors
            (:class:`pi_session.stores.StoreError`, e.g. no such id)
            propagate.
    """
    return _open(location, store, True, shown_as, lazy)


def open_for_writing(
    location: str | os.PathLike[str], *, store: SessionStore | None = None, shown_as: str | None = None
) -> SessionManager:
    """Open a session to write to it, once there is something to write: a
    v1/v2 file is migrated on disk now, with a backup (the manager's
    ``notes`` say so). See :func:`open_for_reading` for the arguments.

    Raises:
        OperationError: the file cannot be read or rewritten.
    """
    return _open(location, store, False, shown_as)


def session_notes(manager: SessionManager) -> list[str]:
    """The damage and notes found when ``manager`` opened its session, one
    line each, as the CLI prints them as warnings (a run of alike damaged
    lines as one, as ``check`` prints it: :func:`pi_session.storage.problems.grouped_problems`)."""
    where = manager.get_session_location()
    lines = [text for text, _problem in grouped_problems(manager.problems, where)]
    return [*lines, *manager.notes]


def save(manager: SessionManager) -> tuple[str, ...]:
    """Write what is pending.

    Returns:
        The manager's notes (opening and writing), one line each.

    Raises:
        OperationError: the write failed.
    """
    try:
        manager.save()
    except OSError as exc:
        raise OperationError(f"{manager.get_session_location()}: {exc.strerror or exc}") from None
    return tuple(one_line(n) for n in manager.notes)
