"""Summarizers: the models that write compaction and branch summaries (pi 1.6 compaction calls a model; we add an offline one).

- :class:`OpenAISummarizer` -- Chat Completions via the ``openai`` SDK; with
  ``base_url`` any compatible server (Ollama, vLLM, llama.cpp).
  Default model :data:`DEFAULT_OPENAI_MODEL` (official API) or the server's
  first listed model (other ``base_url``).
- :class:`AnthropicSummarizer` -- Messages API via the ``anthropic`` SDK.
  Default model :data:`DEFAULT_ANTHROPIC_MODEL`.
- :class:`ExtractiveSummarizer` -- offline and deterministic, no model.

:func:`make_summarizer` picks one from a provider name or the environment.
"""

from __future__ import annotations

import os

from .sdk import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, is_context_overflow
from .anthropic import DEFAULT_ANTHROPIC_MODEL, AnthropicSummarizer
from .base import Summarizer, SummarizerError, SummaryRequest
from .extractive import EXTRACTIVE_NOTE, ExtractiveSummarizer
from .openai import DEFAULT_OPENAI_MODEL, OpenAISummarizer

__all__ = [
    "Summarizer",
    "SummarizerError",
    "SummaryRequest",
    "OpenAISummarizer",
    "AnthropicSummarizer",
    "ExtractiveSummarizer",
    "make_summarizer",
    "provider_name",
    "PROVIDERS",
    "DEFAULT_OPENAI_MODEL",
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "EXTRACTIVE_NOTE",
    "is_context_overflow",
]

PROVIDERS = ("openai", "anthropic", "extractive")
"""Accepted provider names for :func:`make_summarizer` (case-insensitive)."""


def provider_name(provider: str | None) -> str | None:
    """A summarizer provider's name as :func:`make_summarizer` reads it
    (trimmed, lower-cased; None or empty: the automatic choice).

    Raises:
        SummarizerError: not one of :data:`PROVIDERS` (kind ``config``).
    """
    name = provider.strip().lower() if provider else None
    if name is not None and name not in PROVIDERS:
        raise SummarizerError(
            f"unknown summarizer provider '{provider}' (choose from {', '.join(PROVIDERS)})", kind="config"
        )
    return name


def make_summarizer(
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = DEFAULT_MAX_RETRIES,
    api_key: str | None = None,
) -> Summarizer:
    """Build a summarizer.

    Args:
        provider: ``"openai"``, ``"anthropic"``, ``"extractive"`` or ``None``
            for automatic choice: ``openai`` when ``OPENAI_API_KEY`` is set
            (or ``base_url``/``api_key`` is given), else ``anthropic`` when
            ``ANTHROPIC_API_KEY`` is set, else ``extractive``.
        model: model id (``None``: the provider's default, see module docs).
        base_url: API root for the model provider (ignored by extractive).
        timeout: seconds per request.
        max_retries: retries the SDK makes on connection errors, timeouts,
            408/409/429/5xx (see :mod:`pi_session.llm.sdk`).
        api_key: key instead of the environment variable.

    Returns:
        A :class:`Summarizer`. Every returned object has ``fallback_reason``:
        ``None`` normally; a one-line explanation when ``provider`` was
        ``None`` and no key was found, so the extractive summarizer was chosen
        (the CLI prints it).

    Raises:
        SummarizerError: unknown provider (kind ``config``), or a model
            provider named explicitly without a key (kind ``missing_key``).
    """
    fallback_reason: str | None = None
    name = provider_name(provider)
    if name is None:
        if os.environ.get("OPENAI_API_KEY") or base_url or api_key:
            name = "openai"
        elif os.environ.get("ANTHROPIC_API_KEY"):
            name = "anthropic"
        else:
            name = "extractive"
            fallback_reason = (
                "no OPENAI_API_KEY or ANTHROPIC_API_KEY set: using the offline extractive summarizer"
            )
    s: Summarizer
    if name == "openai":
        s = OpenAISummarizer(
            model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
    elif name == "anthropic":
        s = AnthropicSummarizer(
            model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
    else:  # "extractive" (provider_name refused any other)
        s = ExtractiveSummarizer()
    s.fallback_reason = fallback_reason
    return s
