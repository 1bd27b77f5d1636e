"""Identifiers as pi makes them: UUIDv7 session ids, 8-hex-char entry ids."""

from __future__ import annotations

import uuid
from collections.abc import Container

__all__ = ["new_session_id", "new_entry_id"]


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
