"""The files of a Claude Code session file that are not its records
(**beyond pi**): finding session files (:func:`session_files`,
:class:`ClaudeCodeFile`), a sub-agent's ``.meta.json`` (:func:`read_meta`)
and the working directory of the session that spawned a sub-agent
(:func:`parent_cwd`). Every read goes through
:func:`pi_session.importers.common.open_regular` (regular files only,
bounded)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.jsonio import loads
from .common import SourceRecord, first_str, iter_source_lines, open_regular, usable_cwd

__all__ = ["META_MAX_BYTES", "ClaudeCodeFile", "session_files", "read_meta", "parent_cwd"]


@dataclass
class ClaudeCodeFile:
    """A Claude Code session file found by :func:`session_files`.

    Attributes:
        path: the file.
        agent_of: for a sub-agent file (``<session id>/subagents/agent-*.jsonl``),
            the id of the session that spawned it; else None.
    """

    path: Path
    agent_of: str | None = None


def session_files(paths: Sequence[str | os.PathLike[str]]) -> list[ClaudeCodeFile]:
    """The Claude Code session files under ``paths`` (files as they are,
    directories searched at any depth for ``*.jsonl``), main sessions
    first, then sub-agent files (so their parent is imported first)."""
    from ..stores.transfer import session_files as walk

    found: list[ClaudeCodeFile] = []
    for p in walk(paths):
        agent_of = p.parent.parent.name if p.parent.name == "subagents" and p.name.startswith("agent-") else None
        found.append(ClaudeCodeFile(p, agent_of))
    return sorted(found, key=lambda f: (f.agent_of is not None, str(f.path)))


META_MAX_BYTES = 1024 * 1024
"""The largest sub-agent ``.meta.json`` read (1 MiB); a larger one is left out."""


def _main_cwd(path: Path) -> str | None:
    """The first ``cwd`` of the main conversation (no ``isSidechain``
    record) of the session file ``path``, read line by line until found;
    None when there is none or the file cannot be read."""
    try:
        for _n, raw, _nl in iter_source_lines(path):
            if raw is None or b'"cwd"' not in raw:
                continue
            try:
                rec = loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict) and rec.get("isSidechain") is not True and usable_cwd(rec.get("cwd")):
                return str(rec["cwd"])
    except OSError:
        return None
    return None


def parent_cwd(file: ClaudeCodeFile, records: Sequence[SourceRecord]) -> str | None:
    """The working directory of the session that spawned ``file``'s
    sub-agent conversations: for a sub-agent file
    (``<session id>/subagents/agent-*.jsonl``) the first ``cwd`` of
    ``<session id>.jsonl`` beside that directory; for an older
    ``agent-*.jsonl`` in the project directory, that of the session file
    its ``sessionId`` names there. None when there is no such file (or it
    names no ``cwd``)."""
    path = Path(file.path)
    if file.agent_of is not None:
        parent_file = path.parent.parent.parent / f"{file.agent_of}.jsonl"
    elif path.name.startswith("agent-") and (sid := first_str(records, "sessionId")) is not None and "/" not in sid and "\0" not in sid:
        parent_file = path.with_name(f"{sid}.jsonl")
    else:
        return None
    if parent_file == path:
        return None
    return _main_cwd(parent_file)


def read_meta(path: Path) -> dict[str, Any] | None:
    """A sub-agent's ``.meta.json``: its object, or None (missing, not a
    regular file, larger than :data:`META_MAX_BYTES`, not a JSON object)."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        data = os.read(fd, META_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > META_MAX_BYTES:
        return None
    try:
        value = loads(data)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
