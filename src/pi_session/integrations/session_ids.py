"""The pi session id of an agent framework's own session or conversation
id (**beyond pi**), shared by the integrations."""

from __future__ import annotations

import hashlib
import uuid

from ..manager.session_manager import validate_session_id

__all__ = ["MAX_FILE_ID", "session_id_for"]

MAX_FILE_ID = 200
"""The longest id used as it is: ``<timestamp>_<id>.jsonl`` (25 + id + 6
characters) must leave room in a 255-byte file name for the temp file of
an atomic write (``.<name>.<8 hex>.tmp``) and side files (``.torn-<offset>``)."""


def session_id_for(external_id: str, namespace: uuid.UUID) -> str:
    """The pi session id of a framework's id.

    A valid pi session id (letters, digits, ``.``, ``_``, ``-``, starting
    and ending with a letter or digit; see
    :func:`pi_session.manager.session_manager.validate_session_id`) is used
    as it is. Any other string, and a valid one too long to name a session
    file safely (over :data:`MAX_FILE_ID` characters), maps to
    ``uuid5(namespace, external_id)``, so the same id always opens the same
    pi session, on files and in databases alike.

    Raises:
        TypeError: ``external_id`` is not a string.
    """
    if not isinstance(external_id, str):
        raise TypeError(f"the id must be a string, not {type(external_id).__name__}")
    try:
        if len(external_id) > MAX_FILE_ID:
            raise ValueError("too long to name a session file")
        return validate_session_id(external_id)
    except ValueError:
        # uuid5 by hand: the same value as uuid.uuid5(namespace, id) for
        # valid text, and a lone surrogate (which uuid5 cannot encode) is
        # hashed as its surrogatepass bytes instead of raising
        digest = hashlib.sha1(namespace.bytes + external_id.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
        return str(uuid.UUID(bytes=digest[:16], version=5))
