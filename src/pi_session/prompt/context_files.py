"""Project context files (``AGENTS.md`` / ``CLAUDE.md``), as pi's
``loadProjectContextFiles`` in ``core/resource-loader.js`` finds them."""

from __future__ import annotations

import os
from typing import TypedDict

__all__ = ["ContextFile", "ContextFileDiagnostic", "CONTEXT_FILE_NAMES", "load_project_context_files"]

CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""Candidate names, in order of preference; at most one file per directory is used."""


class ContextFile(TypedDict):
    """One context file: its path (as built from the directory, not resolved
    through symlinks) and its full text (UTF-8, undecodable bytes replaced)."""

    path: str
    content: str


class ContextFileDiagnostic(TypedDict):
    """A file that exists but could not be read: ``{type: "warning", message, path}``."""

    type: str
    message: str
    path: str


def _from_dir(directory: str, diagnostics: list[ContextFileDiagnostic] | None) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = os.path.normpath(os.path.join(directory, name))
        if not os.path.exists(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                return {"path": path, "content": fh.read()}
        except OSError as exc:
            # pi warns and tries the next candidate name.
            if diagnostics is not None:
                reason = exc.strerror or str(exc)
                diagnostics.append(
                    {"type": "warning", "message": f"cannot read context file: {reason}", "path": path}
                )
    return None


def load_project_context_files(
    cwd: str | os.PathLike[str] | None = None,
    agent_dir: str | os.PathLike[str] | None = None,
    *,
    diagnostics: list[ContextFileDiagnostic] | None = None,
) -> list[ContextFile]:
    """Find the context files that go into the system prompt.

    Order: the agent dir's file first (global instructions), then one file per
    directory from the filesystem root down to ``cwd`` (outermost first). In
    each directory the first existing, readable name of
    :data:`CONTEXT_FILE_NAMES` is used; a path already taken is not repeated
    (e.g. when cwd is the agent dir). Broken symlinks count as absent; a
    candidate that exists but cannot be read (a directory, no permission)
    appends a ``warning`` to ``diagnostics`` (when given) and the next name is
    tried. ``cwd`` defaults to the process cwd, ``agent_dir`` to
    :func:`pi_session.paths.agent_dir`.

    Returns ``[{path, content}, ...]``. Never raises for unreadable files."""
    from ..paths import agent_dir as default_agent_dir

    cwd_s = os.fspath(cwd) if cwd is not None else os.getcwd()
    agent_s = os.fspath(agent_dir) if agent_dir is not None else os.fspath(default_agent_dir())

    found: list[ContextFile] = []
    seen: set[str] = set()
    global_file = _from_dir(agent_s, diagnostics)
    if global_file is not None:
        found.append(global_file)
        seen.add(global_file["path"])

    ancestors: list[ContextFile] = []
    current = cwd_s
    root = os.path.abspath(os.sep)
    while True:
        item = _from_dir(current, diagnostics)
        if item is not None and item["path"] not in seen:
            ancestors.append(item)
            seen.add(item["path"])
        if current == root:
            break
        parent = os.path.abspath(os.path.join(current, os.pardir))
        if parent == current:
            break
        current = parent
    found.extend(reversed(ancestors))
    return found
