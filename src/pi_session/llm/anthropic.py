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

from typing import Any

from ..core.text import well_formed
from .base import ModelSummarizer, SummarizerError, SummaryRequest, SummaryText, make_usage, usage_count
from .sdk import call_sdk, refused_length, refused_tool_call

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


class AnthropicSummarizer(ModelSummarizer):
    """Writes summaries with the Anthropic Messages API.

    One request per summary: ``system=request.system_prompt`` and one
    ``user`` message with ``request.prompt``; ``max_tokens`` is
    ``request.max_tokens``, or :func:`output_limit` when that is ``None``.
    Both texts are sent well formed (:func:`pi_session.core.text.well_formed`: a
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
            :mod:`pi_session.llm.sdk`).
        temperature: sampling temperature or ``None`` for the default.

    Raises:
        SummarizerError: (kind ``missing_key``) when no key is available for a
            remote server.
    """

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    dummy_key = LOCAL_DUMMY_KEY
    default_url = ANTHROPIC_DEFAULT_URL
    default_model = DEFAULT_ANTHROPIC_MODEL

    def _client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**self.client_options())

    async def summarize(self, request: SummaryRequest) -> str:
        """Return the model's summary for ``request`` (see class docs).

        Raises:
            SummarizerError: one-line message (kinds: ``auth``,
                ``model_not_found``, ``context_overflow``, ``rate_limited``,
                ``server``, ``connection``, ``timeout``, ``bad_request``,
                ``empty``, ``length``, ``tool_call``).
            asyncio.CancelledError: when the task is cancelled.
        """
        import anthropic

        model = self.model or DEFAULT_ANTHROPIC_MODEL
        info = self.call_info(model)
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": output_limit(model) if request.max_tokens is None else int(request.max_tokens),
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
            raise refused_tool_call(self.name, model)
        parts = [getattr(b, "text", "") for b in (getattr(message, "content", None) or []) if getattr(b, "type", "") == "text"]
        text = "\n".join(parts).strip()
        if not text:
            reason = getattr(message, "stop_reason", None)
            raise SummarizerError(
                f"anthropic: model '{model}' returned an empty summary (stop reason: {reason})", kind="empty"
            )
        if getattr(message, "stop_reason", None) == "max_tokens":
            raise refused_length(self.name, model)
        return SummaryText(text, _usage(getattr(message, "usage", None)))


def _usage(usage: Any) -> dict[str, Any] | None:
    """A pi ``Usage`` object from a Messages API ``usage`` (None when absent)."""
    if usage is None:
        return None

    return make_usage(
        usage_count(usage, "input_tokens"),
        usage_count(usage, "output_tokens"),
        usage_count(usage, "cache_read_input_tokens"),
        usage_count(usage, "cache_creation_input_tokens"),
    )
