"""Local days of instants for usage reports: the 15-minute slots every
report sums messages in, a time zone by name, the day of a slot in it
(:class:`LocalDays`) and a fingerprint of the days of many slots
(:func:`days_fingerprint`, what a remembered report is keyed by). Imports
only ``datetime`` (and ``zoneinfo`` for a named zone)."""

from __future__ import annotations

import datetime as _dt
import hashlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["SLOT_MS", "LocalDays", "days_fingerprint", "zone_of"]

SLOT_MS = 900_000
"""Rows are summed per 15 minutes (UTC) for reports: every time zone's
offset is a multiple of 15 minutes and changes on a 15-minute boundary, so
all of a slot falls on one local day."""


def zone_of(name: str | None) -> Any:
    """A ``zoneinfo`` zone (``UTC``: :data:`datetime.timezone.utc`), or
    None for the machine's.

    Raises:
        ValueError: not an IANA zone name.
    """
    if name is None:
        return None
    if name == "UTC":
        return _dt.timezone.utc  # the same days as zoneinfo's UTC, without loading zoneinfo
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{name!r}: not an IANA time zone (such as Europe/Berlin or UTC)") from None


class LocalDays:
    """The local date (``YYYY-MM-DD``) of instants (ms since the epoch) in
    ``zone`` (None: the machine's), memoised per 15 minutes."""

    def __init__(self, zone: Any) -> None:
        self.zone = zone
        self.memo: dict[int, str] = {}

    def __call__(self, ms: int) -> str:
        return self.of_slot(ms // SLOT_MS)

    def of_slot(self, slot: int) -> str:
        """The local date of the 15-minute slot ``slot`` (``ms // SLOT_MS``)."""
        day = self.memo.get(slot)
        if day is None:
            seconds = slot * (SLOT_MS // 1000)
            try:
                moment = _dt.datetime.fromtimestamp(seconds, self.zone) if self.zone is not None else _dt.datetime.fromtimestamp(seconds)
                day = moment.strftime("%Y-%m-%d")
            except (OverflowError, OSError, ValueError):
                day = "0000-00-00"
            self.memo[slot] = day
        return day


def days_fingerprint(slots: list[int], timezone: str | None) -> bytes:
    """A SHA-256 of the local days of ``slots`` in ``timezone`` (None: the
    machine's, as the process sees it now): two reports over the same
    messages whose slots fall on the same days are the same report.

    Raises:
        ValueError: not an IANA zone name.
    """
    days = LocalDays(zone_of(timezone))
    return hashlib.sha256("\n".join(days.of_slot(slot) for slot in slots).encode()).digest()
