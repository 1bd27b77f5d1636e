"""Temp files an interrupted rewrite or creation left beside a session
file (``.<file>.<8 hex>.tmp``, beyond pi): :func:`leftover_temps` finds
them and says which can be deleted without losing anything; ``check``
reports them as ``leftover-temp`` (:func:`temp_problems`) and ``repair``
deletes the safe ones."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from .problems import CheckProblem
from ..entries.records import StrPath, is_session_header
from . import is_regular_mode, loads_js

__all__ = ["STALE_TEMP_SECONDS", "leftover_temps", "temp_problems"]


STALE_TEMP_SECONDS = 600
"""A temp file untouched this long (seconds) is no rewrite in progress."""


def _first_line(path: Path, limit: int = 1 << 20) -> bytes:
    """The first line of ``path`` with its newline, at most ``limit`` bytes."""
    with open(path, "rb") as f:
        return f.readline(limit)


def _header_session_id(line: bytes) -> str | None:
    """The session id of a complete header line, else None."""
    if not line.endswith(b"\n"):
        return None
    header = loads_js(line.strip().lstrip(b"\xef\xbb\xbf"))  # NOT_JSON when not JSON
    return header["id"] if is_session_header(header) else None


def leftover_temps(path: StrPath, *, now: float | None = None) -> list[tuple[Path, bool, str]]:
    """Temp files an interrupted write left beside a session file.

    :func:`pi_session.storage.create_file` and
    :func:`pi_session.storage.atomic_rewrite` write ``.<name>.<8 hex>.tmp``
    beside the file (beside the real file when ``path`` is a symlink)
    first; a process killed before the rename (or the last unlink) leaves it.

    Args:
        path: the session file (a symlink is followed).
        now: the current time in seconds since the epoch (tests).

    Returns:
        ``(temp path, safe to delete, why)`` for each, sorted by name;
        anything of that name that is not a regular file is listed as kept.
        Safe means deleting it cannot lose data:

        - a second hard link to the session file (which stays), or
        - untouched for :data:`STALE_TEMP_SECONDS` (so no rewrite is still
          writing it), and either its first line is a complete header with
          the session's id (a rewrite or migration of this session whose
          rename never happened, so the session file is whole) or all it
          holds is the start of the session's own first line (a rewrite
          killed before it finished the header).

        The session file itself is never listed, even when its name looks
        like a temp file's. Never raises.
    """
    if not os.fspath(path):
        return []
    p = Path(os.path.realpath(path))
    if not p.name:
        return []
    pattern = re.compile(rf"\.{re.escape(p.name)}\.[0-9a-f]{{8}}\.tmp")
    try:
        names = sorted(n for n in os.listdir(p.parent) if pattern.fullmatch(n))
    except OSError:
        return []
    try:
        session_st: os.stat_result | None = os.stat(p)
    except OSError:
        session_st = None
    now = time.time() if now is None else now
    found: list[tuple[Path, bool, str]] = []
    for name in names:
        tmp = p.parent / name
        try:
            st = os.lstat(tmp)
            if not is_regular_mode(st.st_mode):
                found.append((tmp, False, "not a regular file; kept"))
                continue
            if session_st is not None and (st.st_dev, st.st_ino) == (session_st.st_dev, session_st.st_ino):
                found.append((tmp, True, "a second name of the session file (its creation was interrupted after the file appeared)"))
                continue
            age = now - st.st_mtime
            if age < STALE_TEMP_SECONDS:
                found.append((tmp, False, f"modified {age:.0f}s ago: may be a rewrite in progress; kept"))
                continue
            if session_st is not None:
                head = _first_line(tmp)
                session_head = _first_line(p)
                if not head.endswith(b"\n") and st.st_size == len(head) and session_head.startswith(head):
                    found.append((tmp, True, f"an unfinished rewrite that wrote only the start of the header ({st.st_size} bytes)"))
                    continue
                sid = _header_session_id(head)
                if sid is not None and sid == _header_session_id(session_head):
                    found.append((tmp, True, f"an unfinished rewrite ({st.st_size} bytes); the session file was never replaced and is whole"))
                    continue
            found.append((tmp, False, f"{st.st_size} bytes without this session's header; kept (inspect it)"))
        except OSError as exc:
            found.append((tmp, False, f"cannot be read ({exc.strerror or exc}); kept"))
    return found


def temp_problems(path: Path) -> list[CheckProblem]:
    return [
        CheckProblem(None, "leftover-temp", f"leftover temp file {tmp.name}: {why}", safe)
        for tmp, safe, why in leftover_temps(path)
    ]
