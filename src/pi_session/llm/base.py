"""The ``Summarizer`` interface (SPEC 12): what writes compaction and branch
summaries. Implementations: ``openai`` and ``anthropic`` (official SDKs) and
``extractive`` (offline, deterministic)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

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
            :mod:`pi_session.text`); the model summarizers make both texts
            well formed again before sending, whoever built the request.
        max_tokens: the output budget in tokens.
        messages: the LLM messages being summarized (after ``convert_to_llm``),
            for summarizers that read them directly (extractive).
        previous_summary: the summary being updated, if any.
        custom_instructions: the user's additional focus, if any.
    """

    kind: SummaryKind
    system_prompt: str
    prompt: str
    max_tokens: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    previous_summary: str | None = None
    custom_instructions: str | None = None


class SummarizerError(Exception):
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
        """Return the summary text for ``request``.

        Raises:
            SummarizerError: on any failure; ``asyncio.CancelledError`` when
                cancelled.
        """
        ...
