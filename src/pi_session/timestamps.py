"""ISO 8601 timestamps as pi reads them (``new Date(iso).getTime()``)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

__all__ = ["iso_to_ms", "now_iso", "ms_to_iso", "file_timestamp"]

_CANONICAL = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")
_EPOCH_DAYS_CACHE: dict[tuple[int, int, int], int] = {}


def _days(y: int, m: int, d: int) -> int:
    key = (y, m, d)
    days = _EPOCH_DAYS_CACHE.get(key)
    if days is None:
        days = (datetime(y, m, d, tzinfo=timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)).days
        if len(_EPOCH_DAYS_CACHE) < 100_000:
            _EPOCH_DAYS_CACHE[key] = days
    return days


def iso_to_ms(value: Any) -> int | float | None:
    """Milliseconds since the Unix epoch for an entry timestamp, as JavaScript's
    ``new Date(value).getTime()`` computes it.

    Args:
        value: an ISO 8601 string (pi writes ``YYYY-MM-DDTHH:MM:SS.mmmZ``) or a
            number of milliseconds.

    Returns:
        Integer milliseconds, or None where JavaScript gives NaN (unparseable
        or missing), which ``JSON.stringify`` writes as ``null``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        return None
    m = _CANONICAL.match(value)
    try:
        if m:
            y, mo, d, h, mi, s, frac = m.groups()
            ms = int((frac or "0")[:3].ljust(3, "0"))
            return (_days(int(y), int(mo), int(d)) * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)) * 1000 + ms
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1000)


def ms_to_iso(ms: int | float) -> str:
    """``new Date(ms).toISOString()``: ``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC."""
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}Z"


def now_iso() -> str:
    """The current time as pi writes entry timestamps (``toISOString()``)."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def file_timestamp(iso: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` become ``-``."""
    return iso.replace(":", "-").replace(".", "-")
