"""``AnthropicSummarizer``: summaries through the Anthropic Messages API with
the official ``anthropic`` SDK (``AsyncAnthropic``)."""

from __future__ import annotations

import os
from typing import Any

from ._common import (
    resolve_api_key,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    CallInfo,
    RetryPolicy,
    call_with_retries,
)
from ..text import well_formed
from .base import SummarizerError, SummaryRequest

DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
"""Model used when none is given (fast and inexpensive; summaries need no
deep reasoning)."""

ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
LOCAL_DUMMY_KEY = "sk-ant-no-key-required"


class AnthropicSummarizer:
    """Writes summaries with the Anthropic Messages API.

    One request per summary: ``system=request.system_prompt`` and one
    ``user`` message with ``request.prompt``; ``max_tokens`` is
    ``request.max_tokens``. Both texts are sent well formed
    (:func:`pi_session.text.well_formed`: a lone UTF-16 surrogate becomes
    U+FFFD). The text blocks of the reply, joined with
    newlines and stripped, are the summary.

    Args:
        model: model id; ``None`` means :data:`DEFAULT_ANTHROPIC_MODEL`.
        base_url: API root (without ``/v1``); ``None`` uses
            ``ANTHROPIC_BASE_URL`` or the official API.
        api_key: key; ``None`` reads ``ANTHROPIC_API_KEY``. For a
            ``base_url`` on this machine a dummy key is used when none is set.
        timeout: seconds per request.
        max_retries: retries on 408/409/429/5xx (529 overloaded included)
            and connection errors.
        retry: full :class:`RetryPolicy` (overrides ``max_retries``).
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
        retry: RetryPolicy | None = None,
        temperature: float | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = resolve_api_key("anthropic", api_key, "ANTHROPIC_API_KEY", self.base_url, LOCAL_DUMMY_KEY)
        self._api_key = key
        self.model = model or DEFAULT_ANTHROPIC_MODEL
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self.temperature = temperature

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicSummarizer(model={self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # retries are ours (pi_session.llm._common)
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
        )
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": int(request.max_tokens),
            "system": well_formed(request.system_prompt),
            "messages": [{"role": "user", "content": well_formed(request.prompt)}],
        }
        if self.temperature is not None:
            params["temperature"] = self.temperature
        async with self._client() as client:

            async def attempt() -> Any:
                return await client.messages.create(**params)

            message = await call_with_retries(attempt, sdk=anthropic, info=info, policy=self.retry)
        parts = [getattr(b, "text", "") for b in (getattr(message, "content", None) or []) if getattr(b, "type", "") == "text"]
        text = "\n".join(parts).strip()
        if not text:
            reason = getattr(message, "stop_reason", None)
            raise SummarizerError(
                f"anthropic: model '{self.model}' returned an empty summary (stop reason: {reason})", kind="empty"
            )
        return text
