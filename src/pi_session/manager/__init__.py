"""``SessionManager``: one session, read and appended to, whatever its store
(pi 1.6's ``SessionManager``)."""

from .session_manager import SessionManager

__all__ = ["SessionManager"]
