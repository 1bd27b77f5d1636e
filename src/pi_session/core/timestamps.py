"""ISO 8601 timestamps as pi reads them (``new Date(iso).getTime()``)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any
from .undefined import UNDEFINED

__all__ = ["MISSING", "iso_to_ms", "now_iso", "ms_to_iso", "file_timestamp"]

_CANONICAL = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")

_CANONICAL_SEEN: dict[str, int] = {}
"""Canonical UTC timestamps already converted by :func:`iso_to_ms` (their
value does not depend on the local time zone): a record's timestamp is
asked for several times while it is imported or read."""
_CANONICAL_SEEN_MAX = 4096

MISSING: Any = UNDEFINED
"""Pass to :func:`iso_to_ms` for an absent field (JavaScript's ``undefined``,
which gives NaN, where ``null`` gives 0)."""

# ECMAScript's date time string format, with V8's leniencies: lower-case t/z
# or a space between date and time, an offset without a colon, and any
# number of fraction digits.
_ES_DATE = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?"
    r"([Zz]|[+-]\d{2}:?\d{2})?"
)
_MAX_TIME = 8.64e15  # ms: the range of a JavaScript Date


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date; ``d`` may
    overflow the month (JavaScript counts on: February 30 is March 1)."""
    y -= m <= 2
    era = y // 400  # floor division: also right for years before 0
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + d - 1


def _offset_at(utc_ms: int) -> int:
    """The local time zone's offset from UTC (ms) at an instant."""
    try:
        offset = datetime.fromtimestamp(utc_ms / 1000, tz=timezone.utc).astimezone().utcoffset()
    except (OverflowError, OSError, ValueError):
        return 0
    return int(offset.total_seconds() * 1000) if offset is not None else 0


def _local_to_utc(local_ms: int) -> int:
    """UTC ms of a local wall-clock time given as ms since 1970, as V8 picks
    it around daylight-saving changes: a time that occurs twice is the
    earlier instant; a time skipped by the change uses the offset before it."""
    before = _offset_at(local_ms - 86_400_000)
    after = _offset_at(local_ms + 86_400_000)
    valid = [local_ms - o for o in {before, after} if _offset_at(local_ms - o) == o]
    return min(valid) if valid else local_ms - before


def _parse_es_date(text: str) -> int | None:
    m = _ES_DATE.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, frac, zone = m.groups()
    if year == "-000000":
        return None
    mo = int(month or 1)
    d = int(day or 1)
    h, mi, sec = int(hour or 0), int(minute or 0), int(second or 0)
    ms = int((frac or "0")[:3].ljust(3, "0"))
    if not (1 <= mo <= 12 and 1 <= d <= 31 and mi <= 59 and sec <= 59):
        return None
    if h > 24 or (h == 24 and (mi or sec or ms)):
        return None
    value = ((_days_from_civil(int(year), mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms
    if zone is None:
        if hour is not None:  # a date-time without an offset is local time
            value = _local_to_utc(value)
    elif zone not in ("Z", "z"):
        digits = zone[1:].replace(":", "")
        zone_h, zone_m = int(digits[:2]), int(digits[2:])
        if hour is None or zone_h > 23 or zone_m > 59:
            return None  # an offset needs a time; JavaScript refuses +24:00
        sign = -1 if zone[0] == "+" else 1
        value += sign * (zone_h * 60 + zone_m) * 60_000
    return value if abs(value) <= _MAX_TIME else None


_RFC_NO_ZONE = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?\s*$")  # ends with the time: no zone


def _parse_rfc2822(text: str) -> int | None:
    import email.utils

    try:
        parts = email.utils.parsedate_tz(text)
    except (TypeError, ValueError, IndexError):
        return None
    if parts is None:
        return None
    y, mo, d, h, mi, sec = parts[:6]
    value = ((_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000
    if _RFC_NO_ZONE.search(text):
        value = _local_to_utc(value)  # no zone: local time, as in JavaScript
    else:
        value -= (parts[9] or 0) * 1000
    return value if abs(value) <= _MAX_TIME else None


def iso_to_ms(value: Any) -> int | None:
    """Milliseconds since the Unix epoch for an entry timestamp, as JavaScript's
    ``new Date(value).getTime()`` computes it (pi sorts tree children and
    stamps messages built from entries this way).

    Args:
        value: the field's decoded JSON value, or :data:`MISSING` when the
            entry has no such field. Strings: ECMAScript's date time format
            (pi writes ``YYYY-MM-DDTHH:MM:SS.mmmZ``; date-only forms are UTC,
            date-times without an offset local time, day overflow counts on
            as in V8) and RFC 2822 dates; numbers are milliseconds (truncated
            toward zero); ``null`` is 0, ``true`` 1 and ``false`` 0.

    Returns:
        Integer milliseconds, or None where JavaScript gives NaN (missing,
        unparseable, or beyond ±8.64e15 ms), which ``JSON.stringify`` writes
        as ``null``. Matched against node on 671 values in five time zones
        (``tests/goldens/timestamps.json``). Not imitated: the rest of V8's
        legacy date parser (``"2024-1-1"``, ``"2025/12/02"``, ``"Dec 2
        2025"``, bare numbers such as ``"0"``) and its RFC 2822 oddities
        (two-digit years, second 60, ``+05`` offsets): they give None here.
    """
    if value.__class__ is str:
        known = _CANONICAL_SEEN.get(value)
        if known is not None:
            return known
        m = _CANONICAL.match(value)
        if m:
            y, mo, d, h, mi, s, frac = m.groups()
            ms = int((frac or "0")[:3].ljust(3, "0"))
            if 1 <= int(mo) <= 12 and 1 <= int(d) <= 31 and int(h) <= 23 and int(mi) <= 59 and int(s) <= 59:
                known = (_days_from_civil(int(y), int(mo), int(d)) * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)) * 1000 + ms
                if len(_CANONICAL_SEEN) >= _CANONICAL_SEEN_MAX:
                    _CANONICAL_SEEN.clear()
                _CANONICAL_SEEN[value] = known
                return known
        parsed = _parse_es_date(value)
        return parsed if parsed is not None else _parse_rfc2822(value)
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        if value != value or abs(value) > _MAX_TIME:  # NaN, infinities, out of range
            return None
        return int(value)
    return None  # undefined, arrays and objects


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
