"""Project context files (``AGENTS.md`` / ``CLAUDE.md`` and friends), as pi
1.6's ``loadProjectContextFiles`` in ``core/resource-loader.js`` finds them."""

from __future__ import annotations

import os
from typing import TypedDict

from ..core import paths
from ..entries.records import StrPath
from ._paths import canonical_path, normalize_text, resolve_path

__all__ = ["ContextFile", "ContextFileDiagnostic", "CONTEXT_FILE_NAMES", "load_project_context_files"]

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""Candidate names, in order of preference; at most one file per directory is used."""


class ContextFile(TypedDict):
    """One context file: its path (as built from the directory, not resolved
    through symlinks) and its text (UTF-8, undecodable bytes replaced, no
    byte-order mark, line ends ``\\n``)."""

    path: str
    content: str


class ContextFileDiagnostic(TypedDict):
    """A file that exists but could not be read: ``{type: "warning", message, path}``."""

    type: str
    message: str
    path: str


def _from_dir(directory: str, diagnostics: list[ContextFileDiagnostic] | None) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):  # absent, a directory, a broken link, a fifo...: next name
            continue
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                return {"path": path, "content": normalize_text(fh.read())}
        except OSError as exc:
            # pi warns and tries the next candidate name.
            if diagnostics is not None:
                reason = exc.strerror or str(exc)
                diagnostics.append(
                    {"type": "warning", "message": f"cannot read context file: {reason}", "path": path}
                )
    return None


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _git_paths(cwd: str) -> tuple[str, str] | None:
    """``(worktree root, common git dir)`` of the repository holding ``cwd``
    (pi's ``findGitPaths``): the nearest ancestor with a ``.git`` directory
    that has a ``HEAD``, or a ``.git`` file ``gitdir: DIR`` whose DIR has a
    ``HEAD`` (the common dir then comes from DIR's ``commondir`` file, if
    any). ``None`` when there is none or the nearest one is broken."""
    directory = cwd
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isfile(dot_git):
            text = _read_text(dot_git)
            if text is None:
                return None
            text = text.strip()
            if text.startswith("gitdir: "):
                git_dir = os.path.normpath(os.path.join(directory, text[8:].strip()))
                if not os.path.exists(os.path.join(git_dir, "HEAD")):
                    return None
                common = git_dir
                commondir_file = os.path.join(git_dir, "commondir")
                if os.path.exists(commondir_file):
                    common_text = _read_text(commondir_file)
                    if common_text is None:
                        return None
                    common = os.path.normpath(os.path.join(git_dir, common_text.strip()))
                return directory, common
        elif os.path.isdir(dot_git):
            if not os.path.exists(os.path.join(dot_git, "HEAD")):
                return None
            return directory, dot_git
        # no .git here, or one that is neither a gitdir file nor a directory: look further up
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _is_within(parent: str, child: str) -> bool:
    if child == parent:
        return True
    return child.startswith(parent if parent.endswith(os.sep) else parent + os.sep)


def _shadowed_file(cwd: str) -> str | None:
    """In a linked worktree nested inside its main repository, the main
    repository's context file that the worktree root's own file stands in
    for (same name, same logical scope), as a canonical path; else ``None``."""
    found = _git_paths(cwd)
    if found is None:
        return None
    worktree_root = canonical_path(found[0])
    common_git_dir = canonical_path(found[1])
    main_root = os.path.dirname(common_git_dir)
    if worktree_root == main_root or not _is_within(main_root, worktree_root):
        return None  # an ordinary checkout, or a worktree beside (not inside) its main repository
    if canonical_path(os.path.join(main_root, ".git")) != common_git_dir:
        return None  # a bare layout or a submodule: the directory above holds no checkout
    own = _from_dir(worktree_root, None)
    return os.path.join(main_root, os.path.basename(own["path"])) if own is not None else None


def load_project_context_files(
    cwd: StrPath | None = None,
    agent_dir: StrPath | None = None,
    *,
    diagnostics: list[ContextFileDiagnostic] | None = None,
) -> list[ContextFile]:
    """Find the context files that go into the system prompt (pi 1.6).

    ``cwd`` and ``agent_dir`` are resolved first (``~`` expanded, relative
    paths taken from the process's cwd). Order: the agent dir's file first
    (global instructions), then one file per directory from the filesystem
    root down to ``cwd`` (outermost first). In each directory the first name
    of :data:`CONTEXT_FILE_NAMES` that is a regular file (symlinks followed)
    is used; a directory, a broken symlink or any other non-file counts as
    absent. A path already taken is not repeated (e.g. when cwd is the agent
    dir). In a git linked worktree nested inside its main repository, the
    main repository's file of the same name as the worktree root's own file
    is left out (the two cover the same scope). A file that cannot be read
    (no permission) appends a ``warning`` to ``diagnostics`` (when given) and
    the next name is tried. ``cwd`` defaults to the process cwd,
    ``agent_dir`` to :func:`pi_session.core.paths.agent_dir`.

    Content is read as UTF-8 (undecodable bytes replaced); a leading
    byte-order mark is dropped (as pi does) and ``\\r\\n`` / ``\\r`` line ends
    become ``\\n`` (beyond pi, which keeps ``\\r``: a file saved with CRLF reads
    the same as the plain one).

    Returns ``[{path, content}, ...]``. Never raises for unreadable files."""
    cwd_s = resolve_path(cwd if cwd is not None else os.getcwd())
    agent_s = resolve_path(agent_dir if agent_dir is not None else paths.agent_dir())

    found: list[ContextFile] = []
    seen: set[str] = set()
    global_file = _from_dir(agent_s, diagnostics)
    if global_file is not None:
        found.append(global_file)
        seen.add(global_file["path"])

    shadowed = _shadowed_file(cwd_s)
    ancestors: list[ContextFile] = []
    current = cwd_s
    while True:
        item = _from_dir(current, diagnostics)
        if item is not None:
            is_shadowed = shadowed is not None and (
                os.path.join(canonical_path(current), os.path.basename(item["path"])) == shadowed
            )
            if not is_shadowed and item["path"] not in seen:
                ancestors.append(item)
                seen.add(item["path"])
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    found.extend(reversed(ancestors))
    return found
