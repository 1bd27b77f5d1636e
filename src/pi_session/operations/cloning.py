"""Cloning: a new session holding one path of another (pi's ``/clone``, and
``clone --leaf`` for an earlier entry), the same for the CLI and ``browse``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..manager.session_manager import SessionManager
from ..storage import SessionFileError
from .errors import OperationError, one_line
from .navigating import clone_warning

__all__ = ["CloneDone", "clone_session"]


@dataclass(frozen=True)
class CloneDone:
    """A clone written by :func:`clone_session`.

    Attributes:
        location: the new session's file (a :class:`~pathlib.Path`), or its
            ``<store url>#<id>`` location in a database store.
        session_id: the new session's id.
        parent_session: where the source is (the new header's ``parentSession``).
        entries: how many entries the new session holds (header excluded).
        warning: :func:`clone_warning`'s text, or None.
    """

    location: Path | str
    session_id: str
    parent_session: str
    entries: int
    warning: str | None

    def to_json(self) -> dict[str, Any]:
        """The clone as ``pi-session clone --json`` prints it: ``path``
        (the location as text), ``id``, ``parentSession``, ``entries``."""
        return {"path": str(self.location), "id": self.session_id, "parentSession": self.parent_session, "entries": self.entries}


def clone_session(manager: SessionManager, entry_id: str | None = None) -> CloneDone:
    """Write a new session holding the path root→``entry_id`` (None: the
    leaf) of ``manager``'s session, in the same place (a file in the same
    sessions directory, or a new session of the same database store), with
    the source as ``parentSession`` (pi 1.6 ``createBranchedSession`` +
    write). The source is not changed; ``manager`` is switched to the new
    session (it may be a read-only manager).

    Raises:
        OperationError: the session has no entries, no entry ``entry_id``,
            or the write failed (one line naming the session).
    """
    source = str(manager.get_session_file() or manager.get_session_location())
    target = entry_id if entry_id is not None else manager.get_leaf_id()
    if target is None:
        raise OperationError(f"{source}: the session has no entries to clone")
    if manager.get_entry(target) is None:
        raise OperationError(f"{source}: no entry with id {target}")
    warning = clone_warning(manager, target)
    try:
        new_file = manager.create_branched_session(target)
        manager.save()
    except KeyError:
        raise OperationError(f"{source}: no entry with id {target}") from None
    except (OSError, SessionFileError) as exc:
        raise OperationError(one_line(f"{source}: clone failed: {exc}")) from None
    location: Path | str = new_file if new_file is not None else str(manager.get_session_location())
    return CloneDone(location, manager.get_session_id(), source, len(manager.get_entries()), warning)
