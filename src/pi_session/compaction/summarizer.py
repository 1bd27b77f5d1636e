"""The ``Summarizer`` interface: what compaction and branch summaries call to
have a summary written (the request, the answer with its usage, the error).

Compaction defines the seam and :mod:`pi_session.llm` implements it:
``openai`` and ``anthropic`` (official SDKs) and ``extractive`` (offline,
deterministic). ``pi_session.llm.base`` re-exports these names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import PiSessionError

__all__ = [
    "SummaryKind",
    "SummaryRequest",
    "USAGE_COUNTS",
    "COST_FIELDS",
    "make_usage",
    "combine_usage",
    "SummaryText",
    "usage_of",
    "SummarizerError",
    "Summarizer",
]

SummaryKind = Literal["history", "update", "turn_prefix", "branch"]


@dataclass(frozen=True)
class SummaryRequest:
    """One summary to write.

    Attributes:
        kind: ``"history"`` (first compaction), ``"update"`` (merge into
            ``previous_summary``), ``"turn_prefix"`` (the early part of a split
            turn) or ``"branch"`` (a branch left behind on navigation).
        system_prompt: the system prompt for a model.
        prompt: the full user prompt for a model (serialized conversation in
            ``<conversation>`` tags, previous summary, instructions). Built by
            ``build_summary_request`` it is well formed (a lone UTF-16
            surrogate of the session became U+FFFD, see
            :mod:`pi_session.core.text`); the model summarizers make both texts
            well formed again before sending, whoever built the request.
        max_tokens: an output budget in tokens, or ``None`` (the default
            for compaction and branch summaries since pi 1.6): no cap is
            sent and the model's own output limit applies.
        messages: the LLM messages being summarized (after ``convert_to_llm``),
            for summarizers that read them directly (extractive).
        previous_summary: the summary being updated, if any.
        custom_instructions: the user's additional focus, if any.
    """

    kind: SummaryKind
    system_prompt: str
    prompt: str
    max_tokens: int | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    previous_summary: str | None = None
    custom_instructions: str | None = None


USAGE_COUNTS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
"""The token counts of a pi ``Usage`` object, in pi's key order."""

COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite", "total")
"""The fields of a pi ``Usage.cost`` object (dollars)."""


def make_usage(input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    """A pi ``Usage`` object (``{input, output, cacheRead, cacheWrite,
    totalTokens, cost{input, output, cacheRead, cacheWrite, total}}``) for
    token counts a provider reported; ``totalTokens`` is their sum and the
    costs are 0 (we know no prices)."""
    counts = [int(input), int(output), int(cache_read), int(cache_write)]
    return {
        **dict(zip(USAGE_COUNTS, [*counts, sum(counts)])),
        "cost": dict.fromkeys(COST_FIELDS, 0),
    }


def combine_usage(first: dict[str, Any] | None, second: dict[str, Any] | None) -> dict[str, Any] | None:
    """Sum two pi ``Usage`` objects field by field (pi's ``combineUsage``):
    the five token counts and the five costs; the optional ``cacheWrite1h``
    and ``reasoning`` counts only when either side has them, and
    ``cost.totalFromProvider`` (when either side has it) true only when both
    are. ``None`` on one side (a summarizer that reports no usage) gives the
    other side unchanged; both ``None`` gives ``None``. Missing or
    non-numeric fields count as 0. Pure."""
    if first is None:
        return second
    if second is None:
        return first

    def num(obj: Any, key: str) -> Any:
        v = obj.get(key) if isinstance(obj, dict) else None
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0

    out: dict[str, Any] = {k: num(first, k) + num(second, k) for k in USAGE_COUNTS[:4]}
    for extra in ("cacheWrite1h", "reasoning"):
        if extra in first or extra in second:
            out[extra] = num(first, extra) + num(second, extra)
    out["totalTokens"] = num(first, "totalTokens") + num(second, "totalTokens")
    c1, c2 = first.get("cost"), second.get("cost")
    cost = {k: num(c1, k) + num(c2, k) for k in COST_FIELDS}
    if (isinstance(c1, dict) and "totalFromProvider" in c1) or (isinstance(c2, dict) and "totalFromProvider" in c2):
        cost["totalFromProvider"] = (
            isinstance(c1, dict) and c1.get("totalFromProvider") is True
            and isinstance(c2, dict) and c2.get("totalFromProvider") is True
        )
    out["cost"] = cost
    return out


class SummaryText(str):
    """A summary as returned by :meth:`Summarizer.summarize`: the text (a
    ``str``) plus the request's ``usage`` (a pi ``Usage`` object, see
    :func:`make_usage`), or ``None`` when the summarizer reports none.
    Summarizers may also return a plain ``str`` (no usage)."""

    usage: dict[str, Any] | None

    def __new__(cls, text: str, usage: dict[str, Any] | None = None) -> "SummaryText":
        obj = super().__new__(cls, text)
        obj.usage = usage
        return obj


def usage_of(text: str) -> dict[str, Any] | None:
    """The usage a summarizer attached to its answer (``None`` for a plain
    ``str``)."""
    return getattr(text, "usage", None)


class SummarizerError(PiSessionError):
    """A summary could not be written (bad key, unknown model, request too
    large, server errors after retries, timeout). The message is one line
    meant for the user and never contains an API key.

    Attributes:
        kind: a machine-readable category, or ``None``: ``"missing_key"``,
            ``"auth"`` (401/403), ``"model_not_found"`` (404),
            ``"context_overflow"`` (request too large for the model),
            ``"bad_request"`` (other 4xx), ``"rate_limited"`` (429 after
            retries), ``"server"`` (5xx after retries), ``"connection"``,
            ``"timeout"``, ``"empty"`` (the model returned no text),
            ``"length"`` (the model stopped at its output limit: the
            summary would be partial, so it is refused, as pi 1.6 does),
            ``"tool_call"`` (the model answered with a tool call),
            ``"config"`` (bad settings).
        status: the HTTP status code when the failure came from a response.
    """

    def __init__(self, message: str, *, kind: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@runtime_checkable
class Summarizer(Protocol):
    """Writes summaries. ``name`` identifies the implementation in output."""

    name: str

    async def summarize(self, request: SummaryRequest) -> str:
        """Return the summary text for ``request`` (a :class:`SummaryText`
        when the summarizer reports usage).

        Raises:
            SummarizerError: on any failure; ``asyncio.CancelledError`` when
                cancelled.
        """
        ...
