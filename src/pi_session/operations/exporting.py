"""Exports: where one may be written (never over a session), the file name
when none is given (pi's ``pi-session-<session file name>.html``), its
bytes, and the atomic write (mode 0644: an export is made to be shared)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..manager.session_manager import SessionManager
from .errors import OperationError, OutputExists

__all__ = [
    "check_export_target", "default_export_name", "export_chunks", "is_stream_target", "export_secrets", "redacted_jsonl", "redacted_manager",
    "reporting", "write_export",
    "EXPORT_MODE", "PRIVATE_MODE", "PROGRESS_EVERY",
]

EXPORT_MODE = 0o644
"""Permission bits of an HTML or Markdown export (less the umask): a page
is made to be shared."""
PRIVATE_MODE = 0o600
"""Permission bits of a private export (``--private``) and of a JSONL
export (a copy of the session, with every text a context edit hides)."""

_EXTENSIONS = {"html": ".html", "md": ".md", "jsonl": ".jsonl"}


def default_export_name(session: str | os.PathLike[str], kind: str) -> str:
    """The file an export writes when no output is given, in the current
    directory, as pi's ``/export`` names it: ``pi-session-<name of the
    session file without .jsonl>.html`` (``.md``, ``.jsonl`` for those
    kinds). ``session`` is the session file, or a stored session's file
    name or id.

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind not in _EXTENSIONS:
        raise ValueError(f"unknown export kind {kind!r} (html, md, jsonl)")
    base = os.path.basename(os.fspath(session))
    if base.lower().endswith(".jsonl"):
        base = base[: -len(".jsonl")]
    return f"pi-session-{base}{_EXTENSIONS[kind]}"


def check_export_target(output: str | os.PathLike[str], session_file: str | os.PathLike[str] | None, *, overwrite: bool = False) -> Path:
    """The file an export may write to for ``output``: never the session
    being exported or any pi session file, never a directory; an existing
    file only with ``overwrite`` (a symlink is kept: the file it points to
    is replaced). A character device or a FIFO (``/dev/null``,
    ``/dev/stdout`` on a terminal or a pipe, a named pipe) is written to
    as it is, with or without ``overwrite``: nothing there is replaced.

    Returns:
        The absolute path to write (atomically).

    Raises:
        OutputExists: ``output`` exists and ``overwrite`` is false.
        OperationError: a session file or a directory in the way, or a
            missing directory.
    """
    from ..stores.listing import looks_like_session_file

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
    if is_stream_target(target):
        return target
    if real.exists() and looks_like_session_file(real):
        why = "a .jsonl file may be a session" if real.suffix.lower() == ".jsonl" else "it is a pi session file"
        raise OperationError(f"{output}: refusing to overwrite it: {why}")
    if not overwrite:
        raise OutputExists(f"{output}: already exists (use --force to overwrite it)")
    return real


def is_stream_target(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (symlinks followed) is a character device or a
    FIFO: an export is written straight into it, with no temp file to
    rename and nothing to back up. False when it does not exist."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def export_chunks(manager: SessionManager, kind: str, leaf_id: Any = None, *, full_outputs: bool = False) -> tuple[Iterator[bytes], int]:
    """The export of a session as UTF-8 pieces (:func:`pi_session.render.export.export_session`):
    ``kind`` ``"html"`` (the viewer: the whole tree, the path to ``leaf_id``
    shown) or ``"md"`` (the path root→``leaf_id``, its terminal escapes
    shown as visible escapes; long tool output cut unless
    ``full_outputs``). ``leaf_id`` None: the leaf; ``"null"``: no path (an
    empty conversation).

    Returns:
        ``(chunks, count)``: the document, and how many entries it holds.

    Raises:
        OperationError: no entry ``leaf_id``.
        ValueError: an unknown ``kind``.
    """
    from ..render.export import export_session
    from ..render.terminal import sanitize

    if leaf_id == "null":
        path: list[dict[str, Any]] = []
    else:
        if leaf_id is not None and manager.get_entry(leaf_id) is None:
            raise OperationError(f"{manager.get_session_location()}: no entry with id {leaf_id}")
        path = manager.get_branch(leaf_id)
    chunks, count = export_session(manager, kind, path, full_outputs=full_outputs)
    if kind == "md":
        chunks = (sanitize(chunk) for chunk in chunks)
    return (chunk.encode("utf-8") for chunk in chunks), count


def write_export(target: Path, chunks: Iterable[bytes], *, mode: int = EXPORT_MODE) -> None:
    """Write an export to ``target`` (from :func:`check_export_target`)
    atomically: a temp file beside it, fsync, rename; permission bits
    ``mode`` less the umask (default :data:`EXPORT_MODE`, 0644; a file
    replaced gets them too). A character device or FIFO
    (:func:`is_stream_target`) is written to directly, its mode untouched.

    Raises:
        OSError: the write failed (a file target is unchanged).
    """
    from ..storage import write_atomic

    if is_stream_target(target):
        with open(target, "wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
        return
    write_atomic(target, chunks, mode=mode)


def export_secrets(
    manager: SessionManager, kind: str, leaf_id: Any = None, *, allow: Any = None, on_progress: Callable[[int, int], None] | None = None
) -> list[Any]:
    """The secrets an export of ``kind`` (``"html"``, ``"md"``) would show
    (:func:`pi_session.secrets.shown_records`: text as context edits leave
    it; Markdown: the path to ``leaf_id`` only), as
    :class:`pi_session.secrets.SecretHit` objects (masked previews).

    The scan (:class:`pi_session.secrets.Scanner`: over 20 MB of session
    per CPU second) is a part of an export's time. ``on_progress(done,
    total)`` is called with the records scanned so far and their number
    (every :data:`PROGRESS_EVERY` records, and at the end)."""
    from ..secrets import find_secrets, shown_records

    path = None
    if kind == "md":
        path = [] if leaf_id == "null" else manager.get_branch(leaf_id)
    records = shown_records(manager, path)
    return find_secrets(reporting(records, on_progress), session=manager.get_session_location(), allow=allow)


PROGRESS_EVERY = 256
"""Records between two ``on_progress`` calls of the export scans."""


def reporting(items: Sequence[Any], on_progress: Callable[[int, int], None] | None, every: int = PROGRESS_EVERY) -> Iterator[Any]:
    """``items`` one by one, calling ``on_progress(done, len(items))``
    before every ``every``-th item is handed on (``done`` items handed on
    and processed) and once at the end; just ``iter(items)`` without
    ``on_progress``."""
    if on_progress is None:
        yield from items
        return
    total = len(items)
    for i, item in enumerate(items):
        if i % every == 0:
            on_progress(i, total)
        yield item
    on_progress(total, total)


def redacted_manager(manager: SessionManager, *, allow: Any = None, on_progress: Callable[[int, int], None] | None = None) -> SessionManager:
    """An in-memory copy of ``manager``'s session with every secret of its
    records replaced by ``[REDACTED:<kind>]`` (ids, tree, labels and leaf
    as they are): what ``export --redact`` renders. The session itself is
    not touched. ``on_progress(done, total)``: records scanned so far, as
    for :func:`export_secrets`."""
    from ..secrets import redacted_records

    header = manager.get_header()
    originals = [header, *manager.get_entries()] if header is not None else list(manager.get_entries())
    records = redacted_records(reporting(originals, on_progress), allow)
    copy = SessionManager.in_memory(manager.get_cwd(), entries=records)
    leaf = manager.get_leaf_id()
    if leaf is None:
        copy.reset_leaf()
    else:
        copy.branch(leaf)
    return copy


def redacted_jsonl(
    data: bytes, *, session: str | None = None, allow: Any = None, on_progress: Callable[[int, int], None] | None = None
) -> tuple[bytes, list[Any]]:
    """A JSONL export (a session's bytes) with every secret replaced by
    ``[REDACTED:<kind>]`` (:func:`pi_session.secrets.redacted_lines`: lines
    without one byte for byte), and the secrets found
    (:class:`pi_session.secrets.SecretHit`, hits name ``session``).
    ``on_progress(done, total)``: the bytes of lines scanned so far and of
    all (about every MB, and at the end)."""
    from ..secrets import Scanner, redacted_lines

    lines = data.splitlines(keepends=True)
    with Scanner(allow) as scanner:
        done = list(redacted_lines(_reporting_bytes(lines, len(data), on_progress), scanner, session=session))
    return b"".join(line for line, _found in done), [h for _line, found in done for h in found]


def _reporting_bytes(lines: list[bytes], total: int, on_progress: Callable[[int, int], None] | None) -> Iterator[bytes]:
    if on_progress is None:
        yield from lines
        return
    done = reported = 0
    on_progress(0, total)
    for line in lines:
        if done - reported >= 1 << 20:
            on_progress(reported := done, total)
        yield line
        done += len(line)
    on_progress(done, total)
