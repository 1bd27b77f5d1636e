"""Whether a path can be read as a session file, and if not, why in
words (the reader's errors and the command line's say the same)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..entries.records import StrPath

__all__ = ["is_regular_mode", "session_path_problem"]


def is_regular_mode(mode: int) -> bool:
    """Whether an ``st_mode`` is a regular file's (session files must be)."""
    return stat.S_ISREG(mode)


def session_path_problem(path: StrPath) -> str | None:
    """Why ``path`` cannot be read as a session file, in words (the reader's
    error and the command line's say the same), or None when it is a
    regular file: no such file, a dangling or looping symbolic link (its
    target named), a directory, not a regular file, or the system's
    reason (e.g. no permission to search a directory)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            return f"a symbolic link to {os.readlink(p)}, which does not exist (or loops)"
        return "no such session file"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a session file"
    if not is_regular_mode(st.st_mode):
        return "not a regular file"
    return None
