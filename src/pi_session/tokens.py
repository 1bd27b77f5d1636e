"""Token estimates and the compaction trigger (SPEC 6).

Pure functions implementing pi's ``estimateTokens``, ``calculateContextTokens``,
``getLastAssistantUsage``, ``estimateContextTokens`` and ``shouldCompact``
(``core/compaction/compaction.js``). Estimates are ``ceil(chars / 4)`` where
"chars" are JavaScript string lengths (UTF-16 code units), so an emoji outside
the Basic Multilingual Plane counts 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .jsonio import js_len, js_stringify

__all__ = [
    "IMAGE_CHARS",
    "estimate_tokens",
    "calculate_context_tokens",
    "get_assistant_usage",
    "get_last_assistant_usage",
    "estimate_context_tokens",
    "should_compact",
]

IMAGE_CHARS = 4800
"""Characters an image block counts for in toolResult and custom messages."""


def _slen(value: Any) -> int:
    """UTF-16 length of a string; 0 for anything else (missing fields)."""
    return js_len(value) if isinstance(value, str) else 0


def _content_chars(content: Any, *, images: bool) -> int:
    if isinstance(content, str):
        return js_len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text" and block.get("text"):
                chars += _slen(block.get("text"))
            elif btype == "image" and images:
                chars += IMAGE_CHARS
    return chars


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """Estimate the tokens of one agent message (pi's ``estimateTokens``).

    Args:
        message: an agent message dict (any role).

    Returns:
        ``ceil(chars / 4)`` tokens, where chars (UTF-16 code units) are:
        user: text blocks (images count 0); assistant: text, thinking, and for
        each tool call its name plus ``JSON.stringify(arguments)``;
        toolResult/custom: text plus 4800 per image; bashExecution: command +
        output; branchSummary/compactionSummary: the summary. Unknown roles
        give 0. Never raises on missing fields (they count 0).
    """
    role = message.get("role")
    chars = 0
    if role == "user":
        chars = _content_chars(message.get("content"), images=False)
    elif role == "assistant":
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "text":
                chars += _slen(block.get("text"))
            elif btype == "thinking":
                chars += _slen(block.get("thinking"))
            elif btype == "toolCall":
                chars += _slen(block.get("name"))
                if "arguments" in block:
                    chars += js_len(js_stringify(block["arguments"]))
    elif role in ("custom", "toolResult"):
        chars = _content_chars(message.get("content"), images=True)
    elif role == "bashExecution":
        chars = _slen(message.get("command")) + _slen(message.get("output"))
    elif role in ("branchSummary", "compactionSummary"):
        chars = _slen(message.get("summary"))
    else:
        return 0
    return math.ceil(chars / 4)


def calculate_context_tokens(usage: Mapping[str, Any]) -> int:
    """Context size in tokens reported by a usage record (pi's
    ``calculateContextTokens``): ``totalTokens`` when non-zero, else
    ``input + output + cacheRead + cacheWrite`` (missing fields count 0)."""
    total = usage.get("totalTokens")
    if total:
        return total
    return sum(usage.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite"))


def get_assistant_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant message that counts for context size: None
    unless the role is assistant, usage is present and truthy, and
    stopReason is neither ``"aborted"`` nor ``"error"``."""
    if message.get("role") != "assistant" or "usage" not in message:
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    return usage if usage else None


def get_last_assistant_usage(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The usage of the newest ``message`` entry whose assistant message has
    valid usage (see :func:`get_assistant_usage`), or None (pi's
    ``getLastAssistantUsage``)."""
    for entry in reversed(entries):
        if entry.get("type") == "message":
            msg = entry.get("message")
            if isinstance(msg, Mapping):
                usage = get_assistant_usage(msg)
                if usage:
                    return usage
    return None


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Estimate the context size of a message list (pi's
    ``estimateContextTokens``).

    Args:
        messages: agent messages (as from ``build_session_context``).

    Returns:
        ``{"tokens", "usageTokens", "trailingTokens", "lastUsageIndex"}``:
        with a usable assistant usage at index i, usageTokens is its context
        size and trailingTokens the estimates of messages after i; otherwise
        usageTokens is 0, trailingTokens the sum of all estimates and
        lastUsageIndex None. tokens = usageTokens + trailingTokens.
    """
    index = None
    usage = None
    for i in range(len(messages) - 1, -1, -1):
        usage = get_assistant_usage(messages[i])
        if usage:
            index = i
            break
    if index is None or usage is None:
        estimated = sum(estimate_tokens(m) for m in messages)
        return {"tokens": estimated, "usageTokens": 0, "trailingTokens": estimated, "lastUsageIndex": None}
    usage_tokens = calculate_context_tokens(usage)
    trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
    return {
        "tokens": usage_tokens + trailing,
        "usageTokens": usage_tokens,
        "trailingTokens": trailing,
        "lastUsageIndex": index,
    }


def should_compact(tokens: int, context_window: int, settings: Any) -> bool:
    """Whether compaction should trigger (pi's ``shouldCompact``): settings
    enabled and ``tokens > context_window - reserveTokens`` (all in tokens).

    Args:
        tokens: the current context size.
        context_window: the model's context window.
        settings: a :class:`pi_session.settings.CompactionSettings` or a
            mapping with ``enabled`` and ``reserveTokens``.
    """
    if isinstance(settings, Mapping):
        enabled = settings.get("enabled", True)
        reserve = settings.get("reserveTokens", 16384)
    else:
        enabled = settings.enabled
        reserve = settings.reserve_tokens
    if not enabled:
        return False
    return tokens > context_window - reserve
