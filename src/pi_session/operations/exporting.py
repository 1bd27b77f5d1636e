"""Exports: where one may be written (never over a session), its bytes,
and the atomic write."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..manager import SessionManager
from .errors import OperationError, OutputExists

__all__ = ["check_export_target", "export_chunks", "write_export"]


def check_export_target(output: str | os.PathLike[str], session_file: str | os.PathLike[str] | None, *, overwrite: bool = False) -> Path:
    """The file an export may write to for ``output``: never the session
    being exported or any pi session file, never a directory; an existing
    file only with ``overwrite`` (a symlink is kept: the file it points to
    is replaced).

    Returns:
        The absolute path to write (atomically).

    Raises:
        OutputExists: ``output`` exists and ``overwrite`` is false.
        OperationError: a session file or a directory in the way, or a
            missing directory.
    """
    from ..listing import looks_like_session_file

    target = Path(os.path.abspath(Path(output).expanduser()))
    if not target.parent.is_dir():
        raise OperationError(f"{output}: directory {target.parent} does not exist")
    if not os.path.lexists(target):
        return target
    real = Path(os.path.realpath(target))
    try:
        same = session_file is not None and os.path.samefile(real, os.path.abspath(session_file))
    except OSError:
        same = False
    if same:
        raise OperationError(f"{output}: that is the session being exported; refusing to overwrite it")
    if real.is_dir():
        raise OperationError(f"{output}: is a directory")
    if real.exists() and looks_like_session_file(real):
        why = "a .jsonl file may be a session" if real.suffix.lower() == ".jsonl" else "it is a pi session file"
        raise OperationError(f"{output}: refusing to overwrite it: {why}")
    if not overwrite:
        raise OutputExists(f"{output}: already exists (use --force to overwrite it)")
    return real


def export_chunks(manager: SessionManager, kind: str, leaf_id: Any = None) -> tuple[Iterator[bytes], int]:
    """The export of a session as UTF-8 pieces (:func:`pi_session.export.export_session`):
    ``kind`` ``"html"`` (the viewer: the whole tree, the path to ``leaf_id``
    shown) or ``"md"`` (the path root→``leaf_id``, its terminal escapes
    shown as visible escapes). ``leaf_id`` None: the leaf; ``"null"``: no
    path (an empty conversation).

    Returns:
        ``(chunks, count)``: the document, and how many entries it holds.

    Raises:
        OperationError: no entry ``leaf_id``.
        ValueError: an unknown ``kind``.
    """
    from ..export import export_session
    from ..terminal import sanitize

    if leaf_id == "null":
        path: list[dict[str, Any]] = []
    else:
        if leaf_id is not None and manager.get_entry(leaf_id) is None:
            raise OperationError(f"{manager.get_session_location()}: no entry with id {leaf_id}")
        path = manager.get_branch(leaf_id)
    chunks, count = export_session(manager, kind, path)
    if kind == "md":
        chunks = (sanitize(chunk) for chunk in chunks)
    return (chunk.encode("utf-8") for chunk in chunks), count


def write_export(target: Path, chunks: Iterable[bytes]) -> None:
    """Write an export to ``target`` (from :func:`check_export_target`)
    atomically: a temp file beside it, fsync, rename; mode 0600.

    Raises:
        OSError: the write failed (the target is unchanged).
    """
    from ..storage import write_atomic

    write_atomic(target, chunks)
