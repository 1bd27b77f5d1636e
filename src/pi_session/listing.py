"""Session listings (pi's ``SessionManager.list`` / ``listAll``).

**beyond pi**: listing keeps an index per session directory, the file
``<session dir>/.pi-session-index`` (mode 0600, JSON), holding each session
file's info together with the file's size, mtime (ns) and inode when it was
read. A listing stats every ``*.jsonl`` file and re-reads only those whose
size, mtime or inode differ from the index (or that are new), so the index is
never stale; files that are gone are dropped from it. The index is written
atomically (temp file + rename) only when something changed; a missing,
unreadable or corrupt index is ignored and rebuilt; a directory we cannot
write to is listed without one. pi ignores the file (it lists ``*.jsonl``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from ._gc import gc_paused
from .context import text_content
from .storage import iter_lines, parse_line
from .timestamps import iso_to_ms, ms_to_iso

__all__ = ["INDEX_NAME", "build_session_info", "list_session_dir", "list_sessions_dirs"]

INDEX_NAME = ".pi-session-index"
"""File name of the per-directory listing index."""
_INDEX_VERSION = 1


_MAX_DATE_MS = 8.64e15
"""JavaScript dates reach ±8.64e15 ms; ``toISOString`` throws beyond."""


def _valid_ms(ms: Any) -> bool:
    """A time in ms that can be shown as an ISO date (a finite number within
    JavaScript's date range, and not a boolean)."""
    return (
        isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms == ms and -_MAX_DATE_MS <= ms <= _MAX_DATE_MS
    )


def _iso_or_none(ms: Any) -> str | None:
    """:func:`ms_to_iso` of ``ms``, or None when it is not a showable time
    (or the platform cannot show it, e.g. years before 1 or after 9999)."""
    if not _valid_ms(ms):
        return None
    try:
        return ms_to_iso(ms)
    except (OverflowError, OSError, ValueError):
        return None


def build_session_info(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Summary of one session file for listings, with the keys pi's
    ``SessionInfo`` has: ``path, id, cwd, name?, parentSessionPath?, created,
    modified`` (ISO strings), ``messageCount, firstMessage, allMessagesText``.

    ``modified`` is the newest user/assistant message time (message
    ``timestamp`` in ms, else the entry's ISO timestamp), else the header
    time, else the file's mtime. Records are read as they are (no
    migration); damaged lines are skipped.

    Malformed records never make it raise: a header whose ``id`` is not a
    string makes the file "not a session" (our reader refuses it too);
    a ``cwd`` or ``parentSession`` that is not a string is left out (cwd
    ``""``); a ``created`` time that cannot be read is None; message and
    entry timestamps that are not valid times are ignored; content that is
    neither a string nor a list of blocks, and text blocks whose ``text``
    is not a string, give no text. (pi's own listing would throw on some of
    these; one bad file must not hide the others.)

    Returns:
        The info dict, or None for a file that is not a session (empty, no
        header first) or cannot be read.
    """
    p = Path(path)
    header: dict[str, Any] | None = None
    name: str | None = None
    message_count = 0
    first_message = ""
    texts: list[str] = []
    last_activity: float | None = None
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    try:
        for line_no, raw, _nl in iter_lines(p):
            try:
                record = loads(raw)
            except decode_error:
                parsed = parse_line(raw, line_no)
                if not parsed.ok:
                    continue
                record = parsed.record
            if header is None:
                if not isinstance(record, dict) or record.get("type") != "session" or not isinstance(record.get("id"), str):
                    return None
                header = record
                continue
            if not isinstance(record, dict):
                continue
            rtype = record.get("type")
            if rtype == "session_info":
                value = record.get("name")
                name = value.strip() or None if isinstance(value, str) else None
            if rtype != "message":
                continue
            message_count += 1
            message = record.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("role"), str) or "content" not in message:
                continue
            role = message["role"]
            if role not in ("user", "assistant"):
                continue
            ts = message.get("timestamp")
            if _valid_ms(ts):
                last_activity = max(last_activity or 0, ts)
            else:
                ms = iso_to_ms(record.get("timestamp")) if isinstance(record.get("timestamp"), str) else None
                if _valid_ms(ms):
                    last_activity = max(last_activity or 0, ms)
            text = text_content(message.get("content"), " ")
            if not text:
                continue
            texts.append(text)
            if not first_message and role == "user":
                first_message = text
        st = os.stat(p)
    except OSError:
        return None
    if header is None:
        return None
    header_ms = iso_to_ms(header.get("timestamp")) if isinstance(header.get("timestamp"), str) else None
    modified = (
        (_iso_or_none(last_activity) if last_activity is not None and last_activity > 0 else None)
        or _iso_or_none(header_ms)
        or ms_to_iso(st.st_mtime_ns // 1_000_000)
    )
    info: dict[str, Any] = {
        "path": str(p),
        "id": header.get("id"),
        "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else "",
    }
    if name is not None:
        info["name"] = name
    if isinstance(header.get("parentSession"), str):
        info["parentSessionPath"] = header.get("parentSession")
    info.update(
        {
            "created": _iso_or_none(iso_to_ms(header.get("timestamp"))),
            "modified": modified,
            "messageCount": message_count,
            "firstMessage": first_message or "(no messages)",
            "allMessagesText": " ".join(texts),
        }
    )
    return info


def _sorted(infos: Iterable[dict[str, Any] | None]) -> list[dict[str, Any]]:
    out = [i for i in infos if i is not None]
    out.sort(key=lambda i: iso_to_ms(i["modified"]) or 0, reverse=True)
    return out


def _load_index(path: Path) -> dict[str, list[Any]]:
    """The index's ``{file name: [size, mtime_ns, ino, info | None]}``, or
    ``{}`` when it is missing, unreadable or not in the expected shape."""
    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    good: dict[str, list[Any]] = {}
    for name, item in files.items():
        if (
            isinstance(item, list)
            and len(item) == 4
            and all(type(x) is int for x in item[:3])
            and (item[3] is None or isinstance(item[3], dict))
        ):
            good[name] = item
    return good


def _save_index(path: Path, files: dict[str, list[Any]]) -> None:
    """Write the index atomically; silently gives up when the directory is
    not writable (the listing itself does not need the index)."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        data = orjson.dumps({"version": _INDEX_VERSION, "files": files})
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except (OSError, TypeError, orjson.JSONEncodeError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _dir_infos(d: Path) -> list[dict[str, Any] | None]:
    """Infos of the ``*.jsonl`` files of one directory (unsorted), through
    the directory's index."""
    try:
        with os.scandir(d) as it:
            names = [e.name for e in it if e.name.endswith(".jsonl")]
    except OSError:
        return []
    index_path = d / INDEX_NAME
    old = _load_index(index_path)
    new: dict[str, list[Any]] = {}
    infos: list[dict[str, Any] | None] = []
    changed = False
    with gc_paused(promote=False):
        for name in names:
            path = d / name
            try:
                st = os.stat(path)  # before reading: a later change gives a new key
            except OSError:
                changed = True
                continue
            key = [st.st_size, st.st_mtime_ns, st.st_ino]
            item = old.get(name)
            if item is not None and item[:3] == key:
                info = item[3]
                new[name] = item
            else:
                changed = True
                try:
                    info = build_session_info(path)
                except Exception:  # noqa: BLE001 - one bad file must not break the listing
                    infos.append(None)  # skipped, and not indexed: read again next time
                    continue
                if info is not None:
                    info = dict(info)
                    del info["path"]
                new[name] = [*key, info]
            if info is not None:
                info = {"path": str(path), **info}
            infos.append(info)
    if changed or len(new) != len(old):
        _save_index(index_path, new)
    return infos


def list_session_dir(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Infos of every ``*.jsonl`` session in one directory, newest first
    (pi's ``SessionManager.list`` with an explicit directory).

    Uses and refreshes the directory's index (see the module docstring):
    only new or changed files are read.
    """
    d = Path(directory)
    if not d.is_dir():
        return []
    return _sorted(_dir_infos(d))


def list_sessions_dirs(sessions_root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Infos of every session in every directory under ``sessions_root``,
    newest first (pi's ``SessionManager.listAll``)."""
    root = Path(sessions_root)
    if not root.is_dir():
        return []
    infos: list[dict[str, Any] | None] = []
    for sub in sorted(root.iterdir()):
        if sub.is_dir():
            infos.extend(_dir_infos(sub))
    return _sorted(infos)
