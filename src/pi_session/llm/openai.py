"""``OpenAISummarizer``: summaries through the OpenAI Chat Completions API with
the official ``openai`` SDK (``AsyncOpenAI``). With ``base_url`` it talks to
any compatible server (Ollama, vLLM, llama.cpp's server, LM Studio, ...).

Output budget parameter: the official OpenAI API deprecated ``max_tokens`` for
Chat Completions and its reasoning models (o-series, gpt-5) reject it, so
when talking to api.openai.com we send ``max_completion_tokens``. Compatible
servers often only know ``max_tokens`` (llama.cpp, older vLLM and Ollama), so
for any other ``base_url`` we send ``max_tokens``. ``token_param`` overrides
the choice. Compaction and branch summaries send no budget at all (their
request's ``max_tokens`` is ``None``, as pi 1.6 sends none): the model's own
output limit applies.

A reply that stopped at the output limit (``finish_reason`` ``length``) or
that calls a tool is refused (:class:`SummarizerError` kinds ``length`` and
``tool_call``): a partial summary must not become a checkpoint (pi 1.6).
The summary carries the reply's usage (:class:`~pi_session.llm.base.SummaryText`).
"""

from __future__ import annotations

from typing import Any, Literal

from ..core.text import well_formed
from .base import ModelSummarizer, SummarizerError, SummaryRequest, SummaryText, make_usage, usage_count
from .sdk import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    CallInfo,
    call_sdk,
    host_of,
    one_line,
    refused_length,
    refused_tool_call,
)

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
"""Model used for the official OpenAI API when none is given."""

OFFICIAL_OPENAI_HOST = "api.openai.com"
LOCAL_DUMMY_KEY = "sk-no-key-required"
"""Key sent to a server on this machine when no key is configured (such
servers ignore it; the SDK insists on one)."""

TokenParam = Literal["auto", "max_tokens", "max_completion_tokens"]


class OpenAISummarizer(ModelSummarizer):
    """Writes summaries with an OpenAI-compatible Chat Completions endpoint.

    One request per summary: a ``system`` message with
    ``request.system_prompt`` and a ``user`` message with ``request.prompt``;
    the output budget is ``request.max_tokens`` tokens (none sent when it is
    ``None``). Both texts are sent well formed
    (:func:`pi_session.core.text.well_formed`: a lone UTF-16 surrogate becomes
    U+FFFD), so a session holding half an emoji can always be summarized.
    The reply's message content, stripped of surrounding whitespace, is the
    summary, returned as a :class:`~pi_session.llm.base.SummaryText` with
    the reply's usage (``prompt_tokens`` minus cached ones as input,
    ``completion_tokens`` as output, cached prompt tokens as cacheRead).

    Args:
        model: model id. ``None``: :data:`DEFAULT_OPENAI_MODEL` for the
            official API; for another ``base_url``, the first model the
            server lists at ``/models`` (handy for llama.cpp and vLLM, which
            serve one model).
        base_url: API root including ``/v1`` (e.g.
            ``http://127.0.0.1:8080/v1``); ``None`` uses ``OPENAI_BASE_URL``
            or the official API.
        api_key: key; ``None`` reads ``OPENAI_API_KEY``. For a ``base_url`` on
            this machine a dummy key is used when none is set.
        timeout: seconds per request.
        max_retries: retries the SDK makes (connection errors, timeouts,
            408/409/429/5xx; see :mod:`pi_session.llm.sdk`).
        token_param: ``"auto"`` (see module docs), ``"max_tokens"`` or
            ``"max_completion_tokens"``.
        temperature: sampling temperature, or ``None`` to leave the server's
            default (reasoning models accept only their default).

    Raises:
        SummarizerError: (kind ``missing_key``) when no key is available for a
            remote server.
    """

    name = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    dummy_key = LOCAL_DUMMY_KEY
    default_url = f"https://{OFFICIAL_OPENAI_HOST}/v1"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        token_param: TokenParam = "auto",
        temperature: float | None = None,
    ) -> None:
        super().__init__(
            model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, temperature=temperature
        )
        self.official = self.base_url is None or OFFICIAL_OPENAI_HOST in host_of(self.base_url)
        self.model = model or (DEFAULT_OPENAI_MODEL if self.official else None)
        if token_param == "auto":
            token_param = "max_completion_tokens" if self.official else "max_tokens"
        if token_param not in ("max_tokens", "max_completion_tokens"):
            raise SummarizerError(f"openai: unknown token_param {token_param!r}", kind="config")
        self.token_param: str = token_param

    def _client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(**self.client_options())

    def _info(self, model: str | None) -> CallInfo:
        return self.call_info(model)

    async def _resolve_model(self, client: Any) -> str:
        if self.model:
            return self.model
        import openai

        async def list_models() -> Any:
            return await client.models.list()

        page = await call_sdk(list_models, sdk=openai, info=self._info(None))
        data = list(getattr(page, "data", None) or [])
        if not data:
            raise SummarizerError(
                f"openai: {host_of(self.base_url)} lists no models; pass --model", kind="model_not_found"
            )
        self.model = str(data[0].id)
        return self.model

    async def summarize(self, request: SummaryRequest) -> str:
        """Return the model's summary for ``request`` (see class docs).

        Raises:
            SummarizerError: one-line message (kinds: ``auth``,
                ``model_not_found``, ``context_overflow``, ``rate_limited``,
                ``server``, ``connection``, ``timeout``, ``bad_request``,
                ``empty``, ``length``, ``tool_call``).
            asyncio.CancelledError: when the task is cancelled; the HTTP
                request is abandoned and nothing is returned.
        """
        import openai

        async with self._client() as client:
            model = await self._resolve_model(client)
            params: dict[str, Any] = {
                "model": model,
                "messages": [
                    {"role": "system", "content": well_formed(request.system_prompt)},
                    {"role": "user", "content": well_formed(request.prompt)},
                ],
            }
            if request.max_tokens is not None:
                params[self.token_param] = int(request.max_tokens)
            if self.temperature is not None:
                params["temperature"] = self.temperature

            async def attempt() -> Any:
                return await client.chat.completions.create(**params)

            completion = await call_sdk(attempt, sdk=openai, info=self._info(model))
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise SummarizerError(f"openai: model '{model}' returned no choices", kind="empty")
        message = choices[0].message
        reason = getattr(choices[0], "finish_reason", None)
        if message is not None and getattr(message, "tool_calls", None):
            raise refused_tool_call(self.name, model)
        text = message.content if message is not None else None
        if isinstance(text, list):  # some compatible servers send content parts
            text = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in text)
        if not text or not str(text).strip():
            hint = " (the output budget ran out, likely on reasoning)" if reason == "length" else ""
            refusal = getattr(message, "refusal", None) if message is not None else None
            extra = f": {one_line(refusal, 120)}" if refusal else ""
            raise SummarizerError(
                f"openai: model '{model}' returned an empty summary{hint}{extra}", kind="empty"
            )
        if reason == "length":
            raise refused_length(self.name, model)
        return SummaryText(str(text).strip(), _usage(getattr(completion, "usage", None)))


def _usage(usage: Any) -> dict[str, Any] | None:
    """A pi ``Usage`` object from a Chat Completions ``usage`` (None when the
    server sent none)."""
    if usage is None:
        return None

    prompt = usage_count(usage, "prompt_tokens")
    cached = min(prompt, usage_count(getattr(usage, "prompt_tokens_details", None), "cached_tokens"))
    return make_usage(prompt - cached, usage_count(usage, "completion_tokens"), cached, 0)
