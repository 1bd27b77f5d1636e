"""The session file format's basics: its version, the header rule
(:func:`is_session_header`, :func:`make_header`) and :data:`UNDEFINED`.

The shape of every record type (TypedDicts, text fields, context
contribution) lives in :mod:`pi_session.entries`.
"""

from __future__ import annotations

import os
from ..core.paths import StrPath
from ..core.undefined import UNDEFINED, Undefined
from typing import Any, ClassVar, Final, TypeAlias, TypeGuard

CURRENT_SESSION_VERSION = 3
"""The session file format version pi writes (``CURRENT_SESSION_VERSION``), the
one place it is named. pi 1.6 still writes 3:
its new entry types and fields need no migration."""





HEADER_TYPE = "session"
"""The ``type`` of a session header record (every other record is an entry)."""


def is_session_header(record: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a decoded record is a usable session header: an object with
    ``type`` ``"session"`` and a string ``id`` (pi 1.6 ``loadEntriesFromFile``
    and ``readSessionHeader`` refuse a file whose first record is not one).
    A record of type ``"session"`` later in a file is an *extra* header,
    tested with ``record.get("type") == HEADER_TYPE``."""
    return isinstance(record, dict) and record.get("type") == HEADER_TYPE and isinstance(record.get("id"), str)


def header_version(header: Any) -> int:
    """The format version a session header declares: its ``version`` when
    that is an integer, else 1 (version-1 files have none)."""
    version = header.get("version") if isinstance(header, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def make_header(session_id: str, cwd: str, timestamp: str, parent_session: str | None = None) -> dict[str, Any]:
    """A version-3 session header as pi writes it (keys in pi's order:
    type, version, id, timestamp, cwd, parentSession when given)."""
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header
