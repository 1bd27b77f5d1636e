"""Where pi keeps things: the agent dir (pi's ``getAgentDir``) and the session directories."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .records import StrPath

__all__ = ["agent_dir", "sessions_dir", "encode_cwd", "default_session_dir", "session_file_name"]

_SEPARATORS = re.compile(r"[/\\:]")


def agent_dir() -> Path:
    """``$PI_CODING_AGENT_DIR`` (``~`` expanded), else ``~/.pi/agent``."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return Path(os.path.expanduser(env))
    return Path.home() / ".pi" / "agent"


def sessions_dir(agent: StrPath | None = None) -> Path:
    """``<agent dir>/sessions``."""
    return Path(agent if agent is not None else agent_dir()) / "sessions"


def encode_cwd(cwd: str) -> str:
    """The directory name pi uses for a cwd: ``--`` + cwd without its leading
    ``/`` or ``\\``, with every ``/``, ``\\`` and ``:`` replaced by ``-``, + ``--``.
    The result never contains a path separator."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return f"--{_SEPARATORS.sub('-', trimmed)}--"


def default_session_dir(cwd: str, agent: StrPath | None = None) -> Path:
    """``<agent dir>/sessions/<encoded cwd>`` (not created here)."""
    return sessions_dir(agent) / encode_cwd(cwd)


def session_file_name(file_timestamp: str, session_id: str) -> str:
    """``<timestamp>_<session id>.jsonl``."""
    return f"{file_timestamp}_{session_id}.jsonl"
