"""The ``Summarizer`` interface, as :mod:`pi_session.llm` implements it, and
:class:`ModelSummarizer`, what the model-backed summarizers share.

The interface is defined by its caller, compaction
(:mod:`pi_session.compaction.summarizer`); its names are re-exported here,
so that ``pi_session.llm.base`` keeps working. ``llm`` depends on
``compaction``, never the other way round.
"""

from __future__ import annotations

import os
from typing import Any

from ..compaction import summarizer as interface
from ..compaction.summarizer import *  # noqa: F403  (the interface's names, re-exported)
from .sdk import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, CallInfo, resolve_api_key

__all__ = [*interface.__all__, "ModelSummarizer", "usage_count"]


def usage_count(obj: Any, name: str) -> int:
    """The token count ``obj.name`` of an SDK usage object: a positive
    ``int``, else 0 (missing, ``None``, negative, a bool or another type)."""
    v = getattr(obj, name, None) if obj is not None else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


class ModelSummarizer:
    """The settings every model-backed summarizer has (subclasses:
    :class:`~pi_session.llm.OpenAISummarizer`,
    :class:`~pi_session.llm.AnthropicSummarizer`).

    A subclass names its provider (``name``), the environment variables of
    its endpoint and key (``base_url_env``, ``key_env``), the key sent to a
    server on this machine when none is configured (``dummy_key``) and its
    official endpoint (``default_url``, used in messages) and its default
    model (``default_model``).

    Args:
        model: model id, or None: the subclass's ``default_model``.
        base_url: API root; ``None`` reads ``base_url_env`` (unset: the
            official API).
        api_key: key; ``None`` reads ``key_env``. For a ``base_url`` on this
            machine ``dummy_key`` is used when none is set.
        timeout: seconds per request.
        max_retries: retries the SDK makes (see :mod:`pi_session.llm.sdk`).
        temperature: sampling temperature, or ``None`` for the default.

    Raises:
        SummarizerError: (kind ``missing_key``) when no key is available for
            a remote server.
    """

    name = ""
    fallback_reason: str | None = None
    key_env = ""
    base_url_env = ""
    dummy_key = ""
    default_url = ""
    default_model: str | None = None

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
        self.base_url = base_url or os.environ.get(self.base_url_env) or None
        self._api_key = resolve_api_key(self.name, api_key, self.key_env, self.base_url, self.dummy_key)
        self.model: str | None = model or self.default_model
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.deadline: float | None = None
        """Seconds the whole call (all attempts and waits) may take; None:
        :func:`pi_session.llm.sdk.call_deadline` of timeout and retries."""
        self.temperature = temperature

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for the SDK's async client: key, endpoint,
        timeout and ``max_retries`` (the SDK retries, see
        :mod:`pi_session.llm.sdk`)."""
        return {
            "api_key": self._api_key,
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
        }

    def call_info(self, model: str | None) -> CallInfo:
        """What error messages name for a call to ``model`` (``"?"`` when
        not known yet); the key is among the secrets redacted."""
        return CallInfo(
            provider=self.name,
            model=model or "?",
            base_url=self.base_url or self.default_url,
            timeout=self.timeout,
            key_env=self.key_env,
            secrets=(self._api_key,),
            max_retries=self.max_retries,
            deadline=self.deadline,
        )
