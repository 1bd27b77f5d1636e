"""5-hour billing blocks (:func:`blocks`), as ccusage's ``blocks``
command defines them: the messages in time order; a block starts at its
first message's time floored to the hour (UTC) and lasts 5 hours; a message
more than 5 hours after the block's start, or more than 5 hours after the
previous message, starts a new block, and a gap of more than 5 hours
between messages is shown as a gap block. A block is active when its last
message is less than 5 hours ago and the block has not ended.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .report import LocalDays, UsageData, counted_rows, date_range, iso_utc, model_label, pricing_notes, zone_of

__all__ = ["BLOCK_HOURS", "Block", "BlocksReport", "blocks"]

BLOCK_HOURS = 5
_HOUR_MS = 3_600_000
_BLOCK_MS = BLOCK_HOURS * _HOUR_MS


@dataclass
class Block:
    """A 5-hour billing block (:func:`blocks`); ``gap``: the time between
    two blocks with no messages (more than 5 hours)."""

    start_ms: int
    end_ms: int
    last_ms: int | None = None
    gap: bool = False
    active: bool = False
    entries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    other_tokens: int = 0
    cost: float = 0.0
    models: list[str] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        """Every token of the block (ccusage's ``totalTokens``)."""
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens + self.other_tokens

    def to_json(self) -> dict[str, Any]:
        """The block as ccusage's ``blocks --json`` writes one (``burnRate``
        and ``projection`` are null)."""
        start = iso_utc(self.start_ms)
        return {
            "id": f"gap-{start}" if self.gap else start,
            "startTime": start,
            "endTime": iso_utc(self.end_ms),
            "actualEndTime": iso_utc(self.last_ms) if self.last_ms is not None else None,
            "isActive": self.active,
            "isGap": self.gap,
            "entries": self.entries,
            "tokenCounts": {
                "inputTokens": self.input_tokens, "outputTokens": self.output_tokens,
                "cacheCreationInputTokens": self.cache_creation_tokens, "cacheReadInputTokens": self.cache_read_tokens,
            },
            "totalTokens": self.total_tokens,
            "costUSD": self.cost,
            "models": list(self.models),
            "burnRate": None,
            "projection": None,
        }


@dataclass
class BlocksReport:
    """The blocks of :func:`blocks`, oldest first, gap blocks included."""

    blocks: list[Block]
    missing_pricing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    estimated: list[str] = field(default_factory=list)
    """Models with messages priced offline from their tokens."""

    def to_json(self) -> dict[str, Any]:
        """``{"blocks": [...]}`` as ccusage's ``blocks --json``, with
        ``missingPricing`` and ``estimatedPricing`` as
        :meth:`pi_session.usage.report.UsageReport.to_json` has them."""
        out: dict[str, Any] = {"blocks": [b.to_json() for b in self.blocks]}
        if self.missing_pricing:
            out["missingPricing"] = list(self.missing_pricing)
        if self.estimated:
            out["estimatedPricing"] = list(self.estimated)
        return out


def blocks(
    data: UsageData,
    *,
    timezone: str | None = None,
    since: str | None = None,
    until: str | None = None,
    last: int | None = None,
    now_ms: int | None = None,
) -> BlocksReport:
    """The 5-hour billing blocks of every message (see the module
    docstring for the rule).

    Args:
        timezone, since, until: keep the blocks starting on those days in
            that zone.
        last: keep only the last ``last`` blocks (gaps not counted).
        now_ms: the current time (ms, UTC; default now), for ``isActive``.

    Raises:
        ValueError: a bad date or time zone, ``last`` below 1.
    """
    if last is not None and last < 1:
        raise ValueError("--last must be at least 1")
    lo, hi = date_range(since, until)
    days = LocalDays(zone_of(timezone))
    now = int(time.time() * 1000) if now_ms is None else now_ms
    counted = counted_rows(data)
    out: list[Block] = []
    current: Block | None = None
    for row, s in counted:
        ts = row[0]
        if current is not None:
            last_ts = current.last_ms if current.last_ms is not None else current.start_ms
            if ts - current.start_ms > _BLOCK_MS or ts - last_ts > _BLOCK_MS:
                out.append(current)
                if ts - last_ts > _BLOCK_MS:
                    out.append(Block(last_ts + _BLOCK_MS, ts, gap=True))
                current = None
        if current is None:
            start = ts - ts % _HOUR_MS
            current = Block(start, start + _BLOCK_MS)
        current.entries += 1
        current.last_ms = ts
        current.input_tokens += row[2]
        current.output_tokens += row[3]
        current.cache_creation_tokens += row[4]
        current.cache_read_tokens += row[5]
        current.other_tokens += row[6]
        current.cost += row[7]
        if row[1]:
            label = model_label(s.agent, row[1])
            if label not in current.models:
                current.models.append(label)
    if current is not None:
        out.append(current)
    for b in out:
        b.active = not b.gap and b.last_ms is not None and now - b.last_ms < _BLOCK_MS and now < b.end_ms
    if lo is not None or hi is not None:
        def keep(b: Block) -> bool:
            day = days(b.start_ms).replace("-", "")
            return (lo is None or day >= lo) and (hi is None or day <= hi)

        out = [b for b in out if keep(b)]
    if last is not None:
        real = [i for i, b in enumerate(out) if not b.gap]
        if len(real) > last:
            out = out[real[-last]:]
    missing, estimated = pricing_notes(counted, 1, 8)
    return BlocksReport(out, missing, list(data.problems), estimated)
