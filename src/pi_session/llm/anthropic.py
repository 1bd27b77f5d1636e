"""``AnthropicSummarizer``: summaries through the Anthropic Messages API with
the official ``anthropic`` SDK (``AsyncAnthropic``).

pi 1.6 sends compaction and branch-summary requests without an output cap
(the model's own limit applies). The Messages API requires ``max_tokens``,
so for a request without a budget we send the model's output limit as far
as we know it (:func:`output_limit`). A reply that stopped at that limit
(``stop_reason`` ``max_tokens``) or that uses a tool is refused
(:class:`SummarizerError` kinds ``length`` / ``tool_call``), as in pi 1.6.
The summary carries the reply's usage.
"""

from __future__ import annotations

import os
from typing import Any

from ._common import (
    resolve_api_key,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    CallInfo,
    call_sdk,
)
from ..text import well_formed
from .base import SummarizerError, SummaryRequest, SummaryText, make_usage

DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
"""Model used when none is given (fast and inexpensive; summaries need no
deep reasoning)."""

ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
LOCAL_DUMMY_KEY = "sk-ant-no-key-required"


_OUTPUT_LIMITS = (
    ("claude-3-5-", 8192),
    ("claude-3-7-", 64000),
    ("claude-3-", 4096),
    ("claude-opus-4-0", 32000),
    ("claude-opus-4-1", 32000),
    ("claude-opus-4-2025", 32000),
)
DEFAULT_OUTPUT_LIMIT = 32000
"""``max_tokens`` sent for an uncapped request to a model not in the table
(every current Claude model accepts it)."""


def output_limit(model: str) -> int:
    """The ``max_tokens`` sent for an uncapped request to ``model``: its
    output limit for the older models whose limit is lower (Claude 3: 4096,
    3.5: 8192), else :data:`DEFAULT_OUTPUT_LIMIT`."""
    for prefix, limit in _OUTPUT_LIMITS:
        if model.startswith(prefix):
            return limit
    return DEFAULT_OUTPUT_LIMIT


class AnthropicSummarizer:
    """Writes summaries with the Anthropic Messages API.

    One request per summary: ``system=request.system_prompt`` and one
    ``user`` message with ``request.prompt``; ``max_tokens`` is
    ``request.max_tokens``, or :func:`output_limit` when that is ``None``.
    Both texts are sent well formed (:func:`pi_session.text.well_formed`: a
    lone UTF-16 surrogate becomes U+FFFD). The text blocks of the reply,
    joined with newlines and stripped, are the summary (a
    :class:`~pi_session.llm.base.SummaryText` with the reply's usage).

    Args:
        model: model id; ``None`` means :data:`DEFAULT_ANTHROPIC_MODEL`.
        base_url: API root (without ``/v1``); ``None`` uses
            ``ANTHROPIC_BASE_URL`` or the official API.
        api_key: key; ``None`` reads ``ANTHROPIC_API_KEY``. For a
            ``base_url`` on this machine a dummy key is used when none is set.
        timeout: seconds per request.
        max_retries: retries the SDK makes (connection errors, timeouts,
            408/409/429/5xx, 529 overloaded included; see
            :mod:`pi_session.llm._common`).
        temperature: sampling temperature or ``None`` for the default.

    Raises:
        SummarizerError: (kind ``missing_key``) when no key is available for a
            remote server.
    """

    name = "anthropic"
    fallback_reason: str | None = None

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        temperature: float | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = resolve_api_key("anthropic", api_key, "ANTHROPIC_API_KEY", self.base_url, LOCAL_DUMMY_KEY)
        self._api_key = key
        self.model = model or DEFAULT_ANTHROPIC_MODEL
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.deadline: float | None = None
        """Seconds the whole call (all attempts and waits) may take; None:
        :func:`pi_session.llm._common.call_deadline` of timeout and retries."""
        self.temperature = temperature

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicSummarizer(model={self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,  # the SDK retries (see pi_session.llm._common)
        )

    async def summarize(self, request: SummaryRequest) -> str:
        """Return the model's summary for ``request`` (see class docs).

        Raises:
            SummarizerError: one-line message (kinds: ``auth``,
                ``model_not_found``, ``context_overflow``, ``rate_limited``,
                ``server``, ``connection``, ``timeout``, ``bad_request``,
                ``empty``).
            asyncio.CancelledError: when the task is cancelled.
        """
        import anthropic

        info = CallInfo(
            provider="anthropic",
            model=self.model,
            base_url=self.base_url or ANTHROPIC_DEFAULT_URL,
            timeout=self.timeout,
            key_env="ANTHROPIC_API_KEY",
            secrets=(self._api_key,),
            max_retries=self.max_retries,
            deadline=self.deadline,
        )
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": output_limit(self.model) if request.max_tokens is None else int(request.max_tokens),
            "system": well_formed(request.system_prompt),
            "messages": [{"role": "user", "content": well_formed(request.prompt)}],
        }
        if self.temperature is not None:
            params["temperature"] = self.temperature
        async with self._client() as client:

            async def attempt() -> Any:
                return await client.messages.create(**params)

            message = await call_sdk(attempt, sdk=anthropic, info=info)
        blocks = getattr(message, "content", None) or []
        if any(getattr(b, "type", "") in ("tool_use", "server_tool_use") for b in blocks):
            raise SummarizerError(
                f"anthropic: model '{self.model}' answered with a tool call instead of a summary", kind="tool_call"
            )
        parts = [getattr(b, "text", "") for b in (getattr(message, "content", None) or []) if getattr(b, "type", "") == "text"]
        text = "\n".join(parts).strip()
        if not text:
            reason = getattr(message, "stop_reason", None)
            raise SummarizerError(
                f"anthropic: model '{self.model}' returned an empty summary (stop reason: {reason})", kind="empty"
            )
        if getattr(message, "stop_reason", None) == "max_tokens":
            raise SummarizerError(
                f"anthropic: model '{self.model}' stopped at its output limit; the summary would be incomplete",
                kind="length",
            )
        return SummaryText(text, _usage(getattr(message, "usage", None)))


def _usage(usage: Any) -> dict[str, Any] | None:
    """A pi ``Usage`` object from a Messages API ``usage`` (None when absent)."""
    if usage is None:
        return None

    def count(name: str) -> int:
        v = getattr(usage, name, None)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    return make_usage(
        count("input_tokens"), count("output_tokens"), count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    )
