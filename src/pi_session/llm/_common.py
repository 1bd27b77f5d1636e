"""Old name of :mod:`pi_session.llm.sdk` (kept for callers that import it;
use ``pi_session.llm.sdk``)."""

from .sdk import *  # noqa: F401,F403
from .sdk import __all__  # noqa: F401
