"""Other coding agents' sessions as pi sessions (**beyond pi**):
``pi-session import --from claude-code|codex``.

One module per source format, each a pure conversion from the source's
records to pi entries plus a thin file reader (:mod:`.claude_code`,
:mod:`.codex`); :mod:`.common` holds what they share. :func:`import_agent_sessions`
is the workflow: find the source files, convert each, write every session
into a store through the idempotent, incremental import path (see
:func:`pi_session.importers.common.write_session`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import AgentImportResult, ConvertedSession, DamagedLine, pi_session_id, write_session

if TYPE_CHECKING:
    from ..stores import SessionStore

__all__ = ["FORMATS", "AgentImportResult", "ConvertedSession", "DamagedLine", "pi_session_id", "default_paths", "source_files", "import_agent_sessions"]

FORMATS = ("claude-code", "codex")
"""The source formats ``--from`` takes."""


def _module(source_format: str) -> Any:
    if source_format == "claude-code":
        from . import claude_code

        return claude_code
    if source_format == "codex":
        from . import codex

        return codex
    raise ValueError(f"unknown source format {source_format!r}: use one of {', '.join(FORMATS)}")


def default_paths(source_format: str) -> list[Path]:
    """Where the source agent keeps its sessions (``claude-code``:
    ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/projects``; ``codex``:
    ``$CODEX_HOME/sessions`` or ``~/.codex/sessions``).

    Raises:
        ValueError: an unknown format.
    """
    paths: list[Path] = _module(source_format).default_paths()
    return paths


def source_files(source_format: str, paths: Sequence[str | os.PathLike[str]] | None = None) -> list[Any]:
    """The source session files under ``paths`` (default :func:`default_paths`),
    in import order.

    Raises:
        ValueError: an unknown format.
    """
    module = _module(source_format)
    files: list[Any] = module.session_files(list(paths) if paths else module.default_paths())
    return files


def import_agent_sessions(
    source_format: str,
    paths: Sequence[str | os.PathLike[str]] | None,
    store: SessionStore,
    *,
    on_file: Callable[[int, int, str], None] | None = None,
    settle_seconds: float = 60.0,
) -> Iterator[AgentImportResult]:
    """Import every session of another agent under ``paths`` into ``store``.

    Each source session becomes one pi session whose id is derived from the
    source's (:func:`pi_session_id`), so importing again appends only what
    the source gained since (``updated``), leaves an unchanged one alone
    (``unchanged``) and reports a source that was rewritten as a
    ``conflict`` (nothing written). Damaged source lines are skipped and
    reported (:class:`DamagedLine`, with the file's first result). A file
    that cannot be read is a ``failed`` result. The sources are never
    changed.

    Args:
        source_format: ``claude-code`` or ``codex``.
        paths: files or directories (searched at any depth); None or empty:
            the format's default directory.
        on_file: called as ``on_file(done, total, path)`` before each file.
        settle_seconds: a file modified less than this long ago may be
            in the middle of a model response (the agent is running): its
            last response is left out until it is complete (the module's
            ``unfinished_tail``), so that the next import appends it whole
            instead of finding half of it stored (a conflict). 0: import
            everything there is.

    Yields:
        One :class:`AgentImportResult` per pi session.

    Raises:
        ValueError: an unknown format.
        pi_session.stores.StoreError: the store cannot be written.
    """
    from ..stores.transfer import ImportResult

    module = _module(source_format)
    files = source_files(source_format, paths)
    for n, file in enumerate(files):
        if on_file is not None:
            on_file(n, len(files), str(file.path))
        try:
            settle = settle_seconds > 0 and time.time() - os.stat(file.path).st_mtime < settle_seconds
            sessions, damaged = module.convert_file(file, settle=settle)
        except OSError as exc:
            yield AgentImportResult(ImportResult(str(file.path), "failed", message=f"{file.path}: {exc.strerror or exc}"))
            continue
        for i, session in enumerate(sessions):
            if not session.entries and i > 0:
                continue
            yield AgentImportResult(write_session(store, session), session.counts, damaged if i == 0 else [], session.held_back)
    if on_file is not None:
        on_file(len(files), len(files), "")
