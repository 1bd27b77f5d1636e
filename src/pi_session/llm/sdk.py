"""Shared machinery for the model-backed summarizers: classification of
SDK errors into one-line :class:`SummarizerError` messages, and redaction of
secrets.

Retries are the official SDKs' own (``max_retries`` of the ``openai`` and
``anthropic`` clients): connection errors, timeouts, 408, 409, 429 and 5xx
(Anthropic's 529 included) are retried with exponential backoff (0.5 s
doubling up to 8 s, with jitter), a server's ``Retry-After`` /
``retry-after-ms`` is honoured instead (the OpenAI SDK does not retry when
it asks for more than two minutes; the Anthropic SDK waits as asked) and an
``x-should-retry`` header is obeyed.

Beyond the SDKs: one call (all its attempts and waits) has a deadline,
:func:`call_deadline` (by default ``(timeout + 8 s) × (retries + 1) + 2 s``,
about 8.5 minutes with the defaults), so a server that asks to be retried in
an hour, which the Anthropic SDK would wait for, fails the summary instead.

Both SDKs raise the same shapes of exception (``APIStatusError`` with
``status_code``/``response``/``body``, ``APIConnectionError``,
``APITimeoutError``), so one classifier (:func:`classify`) turns the error
the SDK finally raises into one line.
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, TypeVar
from urllib.parse import urlsplit

from ..core.text import clip_line
from ..compaction.summarizer import SummarizerError

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "redact",
    "one_line",
    "server_message",
    "is_context_overflow",
    "parse_retry_after",
    "host_of",
    "is_local_url",
    "Failure",
    "CallInfo",
    "call_deadline",
    "resolve_api_key",
    "classify",
    "call_sdk",
    "refused_tool_call",
    "refused_length",
]

T = TypeVar("T")

DEFAULT_TIMEOUT = 120.0
"""Seconds one request may take before it fails (summaries are long, non-streamed answers)."""

DEFAULT_MAX_RETRIES = 3
"""Retries the SDK makes after the first attempt (see the module docstring)."""


# ---------------------------------------------------------------------------
# secrets and one-line messages

_KEY_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-*]{6,}"),  # OpenAI / Anthropic style keys (also partially masked)
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.=]{8,}"),
    re.compile(r"(?i)(x-api-key[\"':\s=]+)[A-Za-z0-9_\-.=]{8,}"),
]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` with every given secret and anything that looks like
    an API key (``sk-...``, ``Bearer ...``) replaced by ``***``.

    Args:
        text: any message.
        secrets: exact strings to remove (``None`` and strings shorter than
            4 characters are ignored).
    """
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    text = _KEY_PATTERNS[0].sub("sk-***", text)
    text = _KEY_PATTERNS[1].sub(r"\1***", text)
    text = _KEY_PATTERNS[2].sub(r"\1***", text)
    return text


def one_line(text: str, limit: int = 300) -> str:
    """:func:`pi_session.core.text.clip_line` with a default limit of 300 characters."""
    return clip_line(text, limit)


def server_message(body: Any, fallback: str = "") -> str:
    """The human message inside an error body as the SDKs keep it: OpenAI
    style ``{"message": ...}`` (the SDK already unwraps ``error``) or
    Anthropic style ``{"type": "error", "error": {"message": ...}}``; a
    string body is used as is; otherwise ``fallback``."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("detail"), str):
            return body["detail"]
    if isinstance(body, str) and body.strip():
        return body
    return fallback


def _error_code(body: Any) -> str:
    """``code`` or ``type`` of an error body (either SDK's layout), lower case."""
    parts: list[str] = []
    if isinstance(body, dict):
        for d in (body, body.get("error") if isinstance(body.get("error"), dict) else None):
            if isinstance(d, dict):
                for k in ("code", "type"):
                    v = d.get(k)
                    if isinstance(v, str):
                        parts.append(v.lower())
    return " ".join(parts)


_OVERFLOW_RE = re.compile(
    r"context[_ ]length|context[_ ]window|maximum context|prompt is too long|too many tokens"
    r"|exceeds? (?:the )?(?:model'?s? )?(?:context|max)|input is too long|reduce the length"
    r"|too long for|exceed context",
    re.IGNORECASE,
)
_MODEL_NOT_FOUND_RE = re.compile(r"model[_ ]not[_ ]found|model .*(?:not found|does not exist)|unknown model", re.I)


def is_context_overflow(status: int | None, body: Any, message: str) -> bool:
    """Whether an error response means the request does not fit the model's
    context window (OpenAI ``context_length_exceeded``, Anthropic "prompt is
    too long", llama.cpp/vLLM "exceed context window", HTTP 413)."""
    if status == 413:
        return True
    code = _error_code(body)
    if "context_length_exceeded" in code or "request_too_large" in code:
        return True
    return bool(_OVERFLOW_RE.search(message))


def parse_retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait, from ``retry-after-ms`` or
    ``retry-after`` (seconds or an HTTP date); ``None`` when absent or
    unreadable."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            v = float(ms) / 1000.0
            return v if math.isfinite(v) and v >= 0 else None
        ra = headers.get("retry-after")
    except (TypeError, ValueError):
        return None
    if ra is None:
        return None
    try:
        v = float(ra)
        return v if math.isfinite(v) and v >= 0 else None
    except ValueError:
        pass
    import email.utils  # only for HTTP-date Retry-After values

    try:
        tup = email.utils.parsedate_tz(ra)
        if tup is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(tup) - time.time()))
    except (TypeError, ValueError, OverflowError):
        return None


def host_of(url: str | None) -> str:
    """``scheme://host:port`` of a URL for messages (path and query dropped)."""
    if not url:
        return "?"
    try:
        p = urlsplit(str(url))
        return f"{p.scheme}://{p.netloc}" if p.netloc else str(url)
    except ValueError:
        return "?"


def is_local_url(url: str | None) -> bool:
    """Whether ``url`` points at this machine (localhost, 127.x, ::1, 0.0.0.0),
    where a compatible server usually needs no key."""
    if not url:
        return False
    try:
        host = (urlsplit(str(url)).hostname or "").lower()
    except ValueError:
        return False
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.") or host.endswith(".localhost")


# ---------------------------------------------------------------------------
# classification


@dataclass
class Failure:
    """One failed attempt, classified.

    Attributes:
        kind: see :class:`SummarizerError`.
        message: the one-line message (already redacted).
        retryable: whether another attempt may succeed.
        retry_after: seconds the server asked to wait, if it did.
        status: HTTP status, if any.
    """

    kind: str
    message: str
    retryable: bool
    retry_after: float | None = None
    status: int | None = None


@dataclass
class CallInfo:
    """What the messages name: provider label, model, endpoint, timeout,
    the secrets to redact and the environment variable holding the key."""

    provider: str
    model: str
    base_url: str | None
    timeout: float
    key_env: str
    secrets: tuple[str | None, ...] = ()
    max_retries: int = 0
    deadline: float | None = None  # seconds for the whole call; None: call_deadline()


_BACKOFF_MAX = 8.0
"""The SDKs' longest wait between attempts (seconds)."""


def call_deadline(timeout: float, max_retries: int) -> float:
    """Seconds one SDK call may take with all its attempts: each attempt's
    ``timeout``, the SDKs' longest backoff (8 s) before each retry, and 2 s
    to spare."""
    retries = max(0, max_retries)
    return timeout * (retries + 1) + _BACKOFF_MAX * retries + 2.0


def resolve_api_key(provider: str, api_key: str | None, env_var: str, base_url: str | None, dummy_key: str) -> str:
    """The key to use: ``api_key``, else ``$env_var``, else (for a server on
    this machine) ``dummy_key``.

    Raises:
        SummarizerError: (kind ``missing_key``) no key for a remote server.
    """
    key = api_key or os.environ.get(env_var) or None
    if key is not None:
        return key
    if is_local_url(base_url):
        return dummy_key
    where = f" for {host_of(base_url)}" if base_url else ""
    raise SummarizerError(
        f"{provider}: no API key{where}: set {env_var} (or use --provider extractive)", kind="missing_key"
    )


def classify(exc: BaseException, sdk: Any, info: CallInfo) -> Failure | None:
    """Turn an exception raised by an SDK call into a :class:`Failure`, or
    ``None`` when it is not an SDK/network error (then it propagates).

    Args:
        exc: the exception.
        sdk: the SDK module (``openai`` or ``anthropic``), whose exception
            classes are used.
        info: names for the message.
    """
    where = host_of(info.base_url)
    p = info.provider

    def fin(kind: str, text: str, retryable: bool, retry_after: float | None = None, status: int | None = None):
        return Failure(kind, one_line(redact(text, info.secrets)), retryable, retry_after, status)

    if isinstance(exc, (TimeoutError, sdk.APITimeoutError)):
        return fin(
            "timeout",
            f"{p}: no answer from {where} within {info.timeout:g}s (timeout); try a larger --timeout",
            False,
        )
    if isinstance(exc, sdk.APIStatusError):
        status = int(getattr(exc, "status_code", 0) or 0)
        body = getattr(exc, "body", None)
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        msg = one_line(server_message(body, fallback=str(getattr(exc, "message", "") or "")), 200)
        detail = f": {msg}" if msg else ""
        should_retry = None
        if headers is not None:
            sr = headers.get("x-should-retry")
            should_retry = {"true": True, "false": False}.get(sr) if sr else None
        code = _error_code(body)
        if status == 401:
            return fin(
                "auth",
                f"{p}: authentication failed (401) at {where}: the API key was rejected; check {info.key_env}",
                False,
                status=status,
            )
        if status == 403:
            return fin("auth", f"{p}: permission denied (403) at {where}{detail}", False, status=status)
        if is_context_overflow(status, body, msg):
            return fin(
                "context_overflow",
                f"{p}: the request is too large for model '{info.model}' (context length exceeded, {status}){detail}",
                False,
                status=status,
            )
        if status == 404 or "model_not_found" in code or (status == 400 and _MODEL_NOT_FOUND_RE.search(msg)):
            return fin(
                "model_not_found",
                f"{p}: model '{info.model}' not found at {where} ({status}){detail}",
                False,
                status=status,
            )
        retry_after = parse_retry_after(headers)
        retryable = status in (408, 409, 429) or status >= 500
        if should_retry is not None:
            retryable = should_retry
        if status == 429:
            return fin("rate_limited", f"{p}: rate limited (429) at {where}{detail}", retryable, retry_after, status)
        if status >= 500:
            return fin("server", f"{p}: server error ({status}) at {where}{detail}", retryable, retry_after, status)
        return fin("bad_request", f"{p}: request rejected ({status}) at {where}{detail}", retryable, retry_after, status)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = f": {type(cause).__name__}" if cause is not None else ""
        return fin("connection", f"{p}: cannot connect to {where}{why}", True)
    if isinstance(exc, sdk.APIError):
        return fin("bad_request", f"{p}: {getattr(exc, 'message', '') or type(exc).__name__}", False)
    return None


def _retries_taken(exc: BaseException) -> int:
    """How many retries the SDK made before ``exc``: the SDKs number each
    attempt in the ``x-stainless-retry-count`` request header."""
    request = getattr(getattr(exc, "response", None), "request", None) or getattr(exc, "request", None)
    try:
        return int(request.headers.get("x-stainless-retry-count", 0)) if request is not None else 0
    except (AttributeError, RuntimeError, TypeError, ValueError):
        return 0


async def call_sdk(attempt: Callable[[], Awaitable[T]], *, sdk: Any, info: CallInfo) -> T:
    """Run one SDK call (which retries on its own, see the module
    docstring) and turn its final error into a one-line
    :class:`SummarizerError`.

    Returns:
        What ``attempt`` returns.

    Raises:
        SummarizerError: a one-line message (saying how many retries were
            made, or how long the server asked to wait when the SDK did not
            retry).
        asyncio.CancelledError: propagates untouched (also during the SDK's
            backoff).
    """
    import asyncio  # here: importing pi_session loads no asyncio (start-up time)

    deadline = info.deadline if info.deadline is not None else call_deadline(info.timeout, info.max_retries)
    try:
        return await asyncio.wait_for(attempt(), deadline)
    except asyncio.TimeoutError:
        raise SummarizerError(
            f"{info.provider}: no answer from {host_of(info.base_url)} within {deadline:g}s "
            "(the server kept the request waiting or asked to be retried later); giving up",
            kind="timeout",
        ) from None
    except Exception as exc:  # CancelledError is a BaseException: not caught
        failure = classify(exc, sdk, info)
        if failure is None:
            raise
        retries = _retries_taken(exc)
        suffix = ""
        if retries:
            suffix = f" (after {retries} {'retry' if retries == 1 else 'retries'})"
        elif failure.retryable and failure.retry_after is not None:
            suffix = f" (the server asks to wait {failure.retry_after:g}s; giving up)"
        raise SummarizerError(failure.message + suffix, kind=failure.kind, status=failure.status) from None


def refused_tool_call(provider: str, model: str) -> SummarizerError:
    """The error for a reply that called a tool instead of writing the
    summary (kind ``tool_call``; pi 1.6 refuses such a reply)."""
    return SummarizerError(
        f"{provider}: model '{model}' answered with a tool call instead of a summary", kind="tool_call"
    )


def refused_length(provider: str, model: str) -> SummarizerError:
    """The error for a reply cut at the model's output limit (kind
    ``length``): the summary would be partial, so it is refused, as pi 1.6
    does."""
    return SummarizerError(
        f"{provider}: model '{model}' stopped at its output limit; the summary would be incomplete",
        kind="length",
    )
