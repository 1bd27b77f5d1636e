"""Identifiers as pi makes them: UUIDv7 session ids, 8-hex-char entry ids,
and the form of an explicitly chosen session id."""

from __future__ import annotations

import re
import uuid
from collections.abc import Container
from typing import Any

__all__ = ["new_session_id", "new_entry_id", "validate_session_id"]

_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def validate_session_id(session_id: Any) -> str:
    """Check an explicitly chosen session id (pi 1.6's ``assertValidSessionId``):
    letters, digits, ``.``, ``_`` and ``-``, starting and ending with a letter
    or digit.

    Returns:
        The id.

    Raises:
        ValueError: the id does not have that form.
    """
    if not isinstance(session_id, str) or _SESSION_ID.fullmatch(session_id) is None:
        raise ValueError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    return session_id


def new_session_id() -> str:
    """A new session id: a UUIDv7 string (time-ordered), as pi 0.73 creates."""
    import uuid6  # imported on first use: it pulls in importlib.metadata

    return str(uuid6.uuid7())


def new_entry_id(taken: Container[str]) -> str:
    """A new entry id: the first 8 hex characters of a random UUID, retried
    until it is not in ``taken`` (pi's ``generateId``). After 100 collisions
    a full UUID is returned, as pi does."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())
