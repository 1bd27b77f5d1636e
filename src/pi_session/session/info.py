"""The listing info of a session (pi 1.6's ``SessionInfo``), record by
record: :class:`InfoState` gathers from each record what a listing shows
(session name, message count, first user text, last activity, the text of
each message) and :func:`info_dict` turns it into the info dict. The one
home of that dict: :func:`pi_session.stores.listing.build_session_info` reads a
file through it, and the SQL stores keep its columns up to date on each
append. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from ..entries.agent_messages import text_content
from ..core.text import js_trim
from ..core.timestamps import iso_to_ms, ms_to_iso
from ..entries.questions import ASSISTANT, MESSAGE, SESSION_INFO, USER

__all__ = ["InfoState", "header_ms", "info_dict", "iso_or_none", "modified_iso", "valid_ms"]


_MAX_DATE_MS = 8.64e15
"""JavaScript dates reach ±8.64e15 ms; ``toISOString`` throws beyond."""


def valid_ms(ms: Any) -> TypeGuard[float]:
    """A time in ms that can be shown as an ISO date (a finite number within
    JavaScript's date range, and not a boolean); narrows ``ms`` to a number."""
    return (
        isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms == ms and -_MAX_DATE_MS <= ms <= _MAX_DATE_MS
    )


def iso_or_none(ms: Any) -> str | None:
    """:func:`ms_to_iso` of ``ms``, or None when it is not a showable time
    (or the platform cannot show it, e.g. years before 1 or after 9999)."""
    if not valid_ms(ms):
        return None
    try:
        return ms_to_iso(ms)
    except (OverflowError, OSError, ValueError):
        return None


@dataclass
class InfoState:
    """What a listing needs from a session's records after its header, as
    :func:`pi_session.stores.listing.build_session_info` reads them.

    Attributes:
        name: the latest ``session_info`` name (trimmed; None when empty).
        message_count: ``message`` records.
        first_message: the text of the first user message with text ("" if none).
        last_activity: the newest user/assistant message time (ms), or None.
    """

    name: str | None = None
    message_count: int = 0
    first_message: str = ""
    last_activity: float | None = None

    def add(self, record: Any) -> str | None:
        """Take one decoded record (after the header; anything that is not
        an object is ignored).

        Returns:
            The text this record adds to ``allMessagesText`` (a user or
            assistant message with text), or None.
        """
        if not isinstance(record, dict):
            return None
        rtype = record.get("type")
        if rtype == SESSION_INFO:
            value = record.get("name")
            self.name = js_trim(value) or None if isinstance(value, str) else None
        if rtype != MESSAGE:
            return None
        self.message_count += 1
        message = record.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or "content" not in message:
            return None
        role = message["role"]
        if role not in (USER, ASSISTANT):
            return None
        ts = message.get("timestamp")
        if valid_ms(ts):
            self.last_activity = max(self.last_activity or 0, ts)
        else:
            ms = iso_to_ms(record.get("timestamp")) if isinstance(record.get("timestamp"), str) else None
            if valid_ms(ms):
                self.last_activity = max(self.last_activity or 0, ms)
        text = text_content(message.get("content"), " ")
        if not text:
            return None
        if not self.first_message and role == USER:
            self.first_message = text
        return text


def header_ms(header: dict[str, Any]) -> int | None:
    """The header's ``timestamp`` in ms, or None."""
    ts = header.get("timestamp")
    return iso_to_ms(ts) if isinstance(ts, str) else None


def modified_iso(state: InfoState, header_time_ms: int | None, written_ms: int) -> str:
    """``modified`` as :func:`pi_session.stores.listing.build_session_info`
    computes it, with ``written_ms`` (the last write) standing in for the
    file's mtime."""
    last = state.last_activity
    return (
        (iso_or_none(last) if last is not None and last > 0 else None)
        or iso_or_none(header_time_ms)
        or ms_to_iso(written_ms)
    )


def info_dict(
    path: str,
    header: dict[str, Any],
    state: InfoState,
    written_ms: int,
    all_text: str | None,
) -> dict[str, Any]:
    """The listing info (keys and order of
    :func:`pi_session.stores.listing.build_session_info`); ``allMessagesText`` is
    left out when ``all_text`` is None."""
    info: dict[str, Any] = {
        "path": path,
        "id": header.get("id"),
        "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else "",
    }
    if state.name is not None:
        info["name"] = state.name
    if isinstance(header.get("parentSession"), str):
        info["parentSessionPath"] = header.get("parentSession")
    info["created"] = iso_or_none(iso_to_ms(header.get("timestamp")))
    info["modified"] = modified_iso(state, header_ms(header), written_ms)
    info["messageCount"] = state.message_count
    info["firstMessage"] = state.first_message or "(no messages)"
    if all_text is not None:
        info["allMessagesText"] = all_text
    return info
