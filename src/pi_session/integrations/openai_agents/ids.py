"""The pi session id of an OpenAI Agents SDK session id (**beyond pi**)."""

from __future__ import annotations

import uuid

from ..session_ids import MAX_FILE_ID, session_id_for

__all__ = ["ID_NAMESPACE", "MAX_FILE_ID", "pi_session_id_for"]

ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/pi-session/openai-agents-session-id")
"""The namespace of the uuid5 pi ids of SDK session ids that are not pi ids."""


def pi_session_id_for(session_id: str) -> str:
    """The pi session id of an SDK session id.

    A valid pi session id (letters, digits, ``.``, ``_``, ``-``, starting
    and ending with a letter or digit; see
    :func:`pi_session.manager.session_manager.validate_session_id`) is used as it is. Any
    other string, and a valid one too long to name a session file safely
    (over 200 characters: the file name and its temp and side files must
    fit in 255 bytes), maps
    to ``uuid5(NS, session_id)`` (a fixed namespace), so the same SDK id
    always opens the same pi session, on files and in databases alike
    (:func:`pi_session.integrations.session_ids.session_id_for`).

    Raises:
        TypeError: ``session_id`` is not a string.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a string, not {type(session_id).__name__}")
    return session_id_for(session_id, ID_NAMESPACE)
