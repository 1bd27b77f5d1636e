"""pi-session: the session system of the pi coding agent, in Python."""

from .context import build_session_context, convert_to_llm
from .manager import SessionManager
from .records import CURRENT_SESSION_VERSION

__all__ = [
    "CURRENT_SESSION_VERSION",
    "SessionManager",
    "build_session_context",
    "convert_to_llm",
]
__version__ = "0.1.0"
