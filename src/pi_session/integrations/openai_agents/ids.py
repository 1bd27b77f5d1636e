"""The pi session id of an OpenAI Agents SDK session id (**beyond pi**)."""

from __future__ import annotations

import hashlib
import uuid

from ...manager.session_manager import validate_session_id

__all__ = ["ID_NAMESPACE", "MAX_FILE_ID", "pi_session_id_for"]

ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/pi-session/openai-agents-session-id")
"""The namespace of the uuid5 pi ids of SDK session ids that are not pi ids."""
MAX_FILE_ID = 200
"""The longest id used as it is: ``<timestamp>_<id>.jsonl`` (25 + id + 6
characters) must leave room in a 255-byte file name for the temp file of
an atomic write (``.<name>.<8 hex>.tmp``) and side files (``.torn-<offset>``)."""


def pi_session_id_for(session_id: str) -> str:
    """The pi session id of an SDK session id.

    A valid pi session id (letters, digits, ``.``, ``_``, ``-``, starting
    and ending with a letter or digit; see
    :func:`pi_session.manager.session_manager.validate_session_id`) is used as it is. Any
    other string, and a valid one too long to name a session file safely
    (over 200 characters: the file name and its temp and side files must
    fit in 255 bytes), maps
    to ``uuid5(NS, session_id)`` (a fixed namespace), so the same SDK id
    always opens the same pi session, on files and in databases alike.

    Raises:
        TypeError: ``session_id`` is not a string.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a string, not {type(session_id).__name__}")
    try:
        if len(session_id) > MAX_FILE_ID:
            raise ValueError("too long to name a session file")
        return validate_session_id(session_id)
    except ValueError:
        # uuid5 by hand: the same value as uuid.uuid5(ID_NAMESPACE, id) for
        # valid text, and a lone surrogate (which uuid5 cannot encode) is
        # hashed as its surrogatepass bytes instead of raising
        digest = hashlib.sha1(ID_NAMESPACE.bytes + session_id.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
        return str(uuid.UUID(bytes=digest[:16], version=5))
