"""Prices for messages whose session records no cost (imported Claude Code
and Codex sessions, a model pi did not price), from the ``genai-prices``
package's bundled price data: offline (its snapshot ships with the package;
nothing is downloaded), cache-aware (cache reads and cache writes at their
own prices, input above a tier's threshold at the tier's price)."""

from __future__ import annotations

import datetime as _dt

__all__ = ["price", "pricing_version"]

def pricing_version() -> str:
    """The version of the price data (the ``genai-prices`` package's), part
    of the usage cache's key: estimates change with it."""
    try:
        from importlib.metadata import version

        return version("genai-prices")
    except Exception:  # pragma: no cover - not installed
        return "none"


_UNKNOWN: set[tuple[str, str | None]] = set()
"""``(model, provider)`` pairs the library could not price (asked once)."""


def price(model: str | None, provider: str | None, inp: int, out: int, cache_write: int, cache_read: int, ts_ms: int) -> float | None:
    """The cost in US dollars of one model call: ``inp`` uncached input
    tokens, ``out`` output tokens, ``cache_write`` and ``cache_read`` cache
    tokens (pi's ``usage`` fields), at the prices in force at ``ts_ms``
    (ms since the epoch), with ``genai_prices.calc_price`` (the provider
    when the library knows it, else the model's best match). None when the
    pricing library cannot price the model."""
    if not model:
        return None
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - not installed
        return None
    usage = Usage(
        input_tokens=inp + cache_write + cache_read, output_tokens=out,
        cache_write_tokens=cache_write, cache_read_tokens=cache_read,
    )
    when = _dt.datetime.fromtimestamp(ts_ms / 1000, _dt.timezone.utc)
    for provider_id in ([provider] if provider else []) + [None]:
        if (model, provider_id) in _UNKNOWN:
            continue
        try:
            return float(calc_price(usage, model, provider_id=provider_id, genai_request_timestamp=when).total_price)
        except LookupError:
            _UNKNOWN.add((model, provider_id))
        except Exception:
            _UNKNOWN.add((model, provider_id))
    return None
