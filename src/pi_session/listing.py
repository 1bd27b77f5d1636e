"""Session listings (pi's ``SessionManager.list`` / ``listAll``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .storage import iter_lines, parse_line
from .timestamps import iso_to_ms, ms_to_iso

__all__ = ["build_session_info", "list_session_dir", "list_sessions_dirs"]


def _text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def build_session_info(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Summary of one session file for listings, with the keys pi's
    ``SessionInfo`` has: ``path, id, cwd, name?, parentSessionPath?, created,
    modified`` (ISO strings), ``messageCount, firstMessage, allMessagesText``.

    ``modified`` is the newest user/assistant message time (message
    ``timestamp`` in ms, else the entry's ISO timestamp), else the header
    time, else the file's mtime. Records are read as they are (no
    migration); damaged lines are skipped.

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
    try:
        for line_no, raw, _nl in iter_lines(p):
            parsed = parse_line(raw, line_no)
            if not parsed.ok:
                continue
            record = parsed.record
            if header is None:
                if not isinstance(record, dict) or record.get("type") != "session":
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
            if isinstance(ts, (int, float)) and not isinstance(ts, bool):
                last_activity = max(last_activity or 0, ts)
            else:
                ms = iso_to_ms(record.get("timestamp")) if isinstance(record.get("timestamp"), str) else None
                if ms is not None:
                    last_activity = max(last_activity or 0, ms)
            text = _text_of(message)
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
    if last_activity is not None and last_activity > 0:
        modified = ms_to_iso(last_activity)
    else:
        header_ms = iso_to_ms(header.get("timestamp")) if isinstance(header.get("timestamp"), str) else None
        modified = ms_to_iso(header_ms) if header_ms is not None else ms_to_iso(st.st_mtime_ns // 1_000_000)
    created_ms = iso_to_ms(header.get("timestamp"))
    info: dict[str, Any] = {
        "path": str(p),
        "id": header.get("id"),
        "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else "",
    }
    if name is not None:
        info["name"] = name
    if header.get("parentSession") is not None:
        info["parentSessionPath"] = header.get("parentSession")
    info.update(
        {
            "created": ms_to_iso(created_ms) if created_ms is not None else None,
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


def list_session_dir(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Infos of every ``*.jsonl`` session in one directory, newest first
    (pi's ``SessionManager.list`` with an explicit directory)."""
    d = Path(directory)
    if not d.is_dir():
        return []
    try:
        files = [d / name for name in os.listdir(d) if name.endswith(".jsonl")]
    except OSError:
        return []
    return _sorted(build_session_info(f) for f in files)


def list_sessions_dirs(sessions_root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Infos of every session in every directory under ``sessions_root``,
    newest first (pi's ``SessionManager.listAll``)."""
    root = Path(sessions_root)
    if not root.is_dir():
        return []
    infos: list[dict[str, Any] | None] = []
    for sub in sorted(root.iterdir()):
        if sub.is_dir():
            try:
                names = os.listdir(sub)
            except OSError:
                continue
            infos.extend(build_session_info(sub / n) for n in names if n.endswith(".jsonl"))
    return _sorted(infos)
