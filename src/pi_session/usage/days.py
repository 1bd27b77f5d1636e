"""Local days of instants for usage reports: the 15-minute slots every
report sums messages in, a time zone by name, the day of a slot in it
(:class:`LocalDays`) and the UTC offsets of many slots in it
(:func:`offsets_key`, what a remembered report is keyed by). Imports
nothing at load; ``datetime`` (and ``zoneinfo`` for a named zone) when a
day is asked."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["SLOT_MS", "LocalDays", "offsets_key", "zone_of"]

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
        import datetime

        return datetime.timezone.utc  # the same days as zoneinfo's UTC, without loading zoneinfo
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{name!r}: not an IANA time zone (such as Europe/Berlin or UTC)") from None


class LocalDays:
    """The local date (``YYYY-MM-DD``) of instants (ms since the epoch) in
    ``zone`` (None: the machine's), memoised per 15 minutes."""

    def __init__(self, zone: Any) -> None:
        import datetime

        self.zone = zone
        self.memo: dict[int, str] = {}
        self._moment = datetime.datetime.fromtimestamp

    def __call__(self, ms: int) -> str:
        return self.of_slot(ms // SLOT_MS)

    def of_slot(self, slot: int) -> str:
        """The local date of the 15-minute slot ``slot`` (``ms // SLOT_MS``)."""
        day = self.memo.get(slot)
        if day is None:
            seconds = slot * (SLOT_MS // 1000)
            try:
                moment = self._moment(seconds, self.zone) if self.zone is not None else self._moment(seconds)
                day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"  # strftime's %Y does not pad years before 1000
            except (OverflowError, OSError, ValueError):
                day = "0000-00-00"
            self.memo[slot] = day
        return day


def offsets_key(slots: list[int], timezone: str | None) -> str:
    """The UTC offsets of the 15-minute ``slots`` (in order) in
    ``timezone`` (None: the machine's, as the process sees it now) as a
    short string (``index:offset`` where the offset changes): two reports
    over the same messages whose slots have the same offsets put them on
    the same local days, so they are the same report. ``UTC`` and a zone
    name are read as :func:`zone_of` reads them; the machine's zone through
    ``localtime`` as :class:`LocalDays` reads it.

    Raises:
        ValueError: not an IANA zone name.
    """
    if timezone == "UTC":
        return "UTC"
    offset: Callable[[int], object]
    if timezone is None:
        import time

        def offset(seconds: int) -> object:
            return time.localtime(seconds).tm_gmtoff
    else:
        import datetime

        zone = zone_of(timezone)

        def offset(seconds: int) -> object:
            return datetime.datetime.fromtimestamp(seconds, zone).utcoffset()

    runs = []
    last: object = ()
    step = SLOT_MS // 1000
    for i, slot in enumerate(slots):
        try:
            now = offset(slot * step)
        except (OverflowError, OSError, ValueError):
            now = None
        if now != last:
            runs.append(f"{i}:{now}")
            last = now
    return ",".join(runs)
