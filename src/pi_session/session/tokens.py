"""Token estimates and the compaction trigger (pi 1.6 ``estimateTokens``,
``estimateProjectedContextTokens``, ``shouldCompact``).

Pure functions implementing pi's ``estimateTokens``, ``calculateContextTokens``,
``getLastAssistantUsage``, ``estimateContextTokens`` and ``shouldCompact``
(``core/compaction/compaction.js``). Estimates are ``ceil(chars / 4)`` where
"chars" are JavaScript string lengths (UTF-16 code units), so an emoji outside
the Basic Multilingual Plane counts 2.

Malformed input (these functions read arbitrary session files) never
raises: a field of the wrong type counts as absent. Where pi's JavaScript
would produce ``NaN`` or a concatenated string (a ``usage`` value that is not
a number, a text block whose ``text`` is a number), we count 0; booleans are
not token counts and count 0 too (JavaScript would add ``true`` as 1). A
``usage`` that is not an object is no usage at all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.jsonio import js_len, js_stringify
from ..entries.records import UNDEFINED
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE, CUSTOM_ROLE, SYSTEM, TOOL_RESULT, USER, is_assistant,
    is_compaction, is_context_edit, is_message, is_system,
)
from .settings import coerce_compaction_settings
from ..entries.system_messages import get_current_system_message

__all__ = [
    "IMAGE_CHARS",
    "estimate_tokens",
    "calculate_context_tokens",
    "get_assistant_usage",
    "get_last_assistant_usage",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "usage_is_stale",
    "usage_trusted",
    "should_compact",
]

IMAGE_CHARS = 4800
"""Characters an image block counts for in toolResult and custom messages."""


def _num(value: Any) -> int | float:
    """A token count as a number: ints and floats as they are; anything
    else (strings, null, booleans, containers) 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return value
    return 0


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


def _stringify_len(value: Any) -> int:
    """UTF-16 length of ``JSON.stringify(value)``; 0 for what cannot be
    serialized (only possible for values not read from JSON)."""
    try:
        return js_len(js_stringify(value))
    except (TypeError, ValueError):
        return 0


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """Estimate the tokens of one agent message (pi's ``estimateTokens``).

    Args:
        message: an agent message dict (any role).

    Returns:
        ``ceil(chars / 4)`` tokens, where chars (UTF-16 code units) are:
        user/toolResult/custom: text plus 4800 per image (pi 1.6 counts
        user images too); assistant: text, thinking, and for each tool call
        its name plus ``JSON.stringify(arguments)``; system (pi 1.6): its
        content, every non-null section value and
        ``JSON.stringify(toolsAdded)``; bashExecution: command + output;
        branchSummary/compactionSummary: the summary. Unknown roles give 0. Never raises: missing or wrong-typed fields count 0 (a
        ``content`` that is neither a string nor a list, a ``text`` that is
        not a string, a ``message`` that is not an object); tool-call
        ``arguments`` of any JSON type count by their ``JSON.stringify``
        length, as in pi.
    """
    if not isinstance(message, Mapping):
        return 0
    role = message.get("role")
    chars = 0
    if role == USER:
        chars = _content_chars(message.get("content"), images=True)
    elif role == SYSTEM:
        chars = _system_chars(message)
    elif role == ASSISTANT:
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
                    chars += _stringify_len(block["arguments"])
    elif role == CUSTOM_ROLE or role == TOOL_RESULT:
        chars = _content_chars(message.get("content"), images=True)
    elif role == BASH_EXECUTION:
        chars = _slen(message.get("command")) + _slen(message.get("output"))
    elif role == BRANCH_SUMMARY_ROLE or role == COMPACTION_SUMMARY_ROLE:
        chars = _slen(message.get("summary"))
    else:
        return 0
    return math.ceil(chars / 4)


def _system_chars(message: Mapping[str, Any]) -> int:
    """Characters of a system message (pi 1.6): content (4800 per image
    block), each non-null section value, and the JSON of ``toolsAdded``
    (``toolsRemoved`` does not count)."""
    chars = _content_chars(message.get("content"), images=True)
    sections = message.get("sections")
    if isinstance(sections, Mapping):
        chars += sum(_slen(v) for v in sections.values())
    if "toolsAdded" in message and message["toolsAdded"] is not None:
        chars += _stringify_len(message["toolsAdded"])
    return chars


def calculate_context_tokens(usage: Mapping[str, Any]) -> int | float:
    """Context size in tokens reported by a usage record (pi's
    ``calculateContextTokens``): ``totalTokens`` when non-zero, else
    ``input + output + cacheRead + cacheWrite``.

    Missing fields, and values that are not numbers (strings, null,
    booleans, containers), count 0 where JavaScript would give NaN or
    concatenate strings; a ``usage`` that is not an object gives 0.
    """
    if not isinstance(usage, Mapping):
        return 0
    total = _num(usage.get("totalTokens"))
    if total:
        return total
    return sum(_num(usage.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite"))


def get_assistant_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant message that counts for context size: None
    unless ``message`` is an object with role assistant, ``usage`` is a
    non-empty object (pi takes any truthy value; a string, number or list
    is malformed and ignored here) whose context size
    (:func:`calculate_context_tokens`) is above 0 (pi 1.6 skips all-zero
    usage), and stopReason is neither ``"aborted"`` nor ``"error"``."""
    if not is_assistant(message):
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, Mapping) or not usage:
        return None
    return usage if calculate_context_tokens(usage) > 0 else None


def get_last_assistant_usage(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The usage of the newest ``message`` entry whose assistant message has
    valid usage (see :func:`get_assistant_usage`), or None (pi's
    ``getLastAssistantUsage``). Entries that are not objects, and messages
    that are not objects, are skipped."""
    for entry in reversed(entries):
        if is_message(entry):
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
        lastUsageIndex None. tokens = usageTokens + trailingTokens. Never
        raises on malformed messages (see :func:`estimate_tokens` and
        :func:`calculate_context_tokens`).
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


def estimate_projected_context_tokens(
    projection: Mapping[str, Any], branch_entries: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The context size pi 1.6 itself uses for its compaction trigger, its
    footer and ``tokensBefore`` (pi's ``estimateProjectedContextTokens``).

    Usage reported by an assistant is trusted only when that assistant's
    entry comes after the branch's last ``context_edit`` or ``compaction``:
    usage recorded before a compaction or an edit measured a context that no
    longer exists.

    Args:
        projection: a :class:`pi_session.entries.SessionProjection` (from
            :func:`pi_session.session.context.build_session_projection`).
        branch_entries: the raw root→leaf path the projection was built from.

    Returns:
        ``{"tokens", "usageTokens", "trailingTokens", "lastUsageIndex"}``
        (tokens): :func:`estimate_context_tokens` of the projection's messages
        when its usage is trusted; otherwise a pure estimate, the replayed
        system message (:func:`pi_session.session.context.get_current_system_message`,
        counted once) plus every non-system message, with usageTokens 0 and
        lastUsageIndex None.
    """


    messages = projection["messages"]
    estimate = estimate_context_tokens(messages)
    index = estimate["lastUsageIndex"]
    if index is not None and usage_trusted(_source_of_message(projection, index), branch_entries):
        return estimate
    system = get_current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    tokens += sum(
        estimate_tokens(m) for m in messages if not is_system(m)
    )
    return {"tokens": tokens, "usageTokens": 0, "trailingTokens": tokens, "lastUsageIndex": None}


def usage_trusted(source: Mapping[str, Any] | None, branch_entries: Sequence[Mapping[str, Any]]) -> bool:
    """Whether pi 1.6 trusts the usage an assistant reported (pi's
    ``estimateProjectedContextTokens``): its entry ``source`` (or an entry
    with ``source``'s string id) comes after the branch's last
    ``context_edit`` or ``compaction``, or the branch has neither. Usage
    recorded before a compaction or an edit measured a context that no
    longer exists. Walks back from the end of ``branch_entries`` (the raw
    root→leaf path), so only the entries after the usage are read.

    Args:
        source: the context entry that contributed the assistant message
            (None: not known, trusted only without any edit or compaction).
        branch_entries: the root→leaf path.
    """
    source_id = source.get("id") if source is not None else None
    if not isinstance(source_id, str):
        source_id = UNDEFINED  # matches no entry's id
    for i in range(len(branch_entries) - 1, -1, -1):
        entry = branch_entries[i]
        if is_context_edit(entry) or is_compaction(entry):
            return False
        if source is not None and (entry is source or entry.get("id") == source_id):
            return True
    return True


def usage_is_stale(projection: Mapping[str, Any], branch_entries: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the context holds reported usage that pi 1.6 does not trust:
    an assistant reported usage, but only before the branch's latest
    ``compaction`` or ``context_edit``, so it measured a context that no
    longer exists and :func:`estimate_projected_context_tokens` estimates
    every message instead (until the model answers again).

    Args:
        projection: a :class:`pi_session.entries.SessionProjection`.
        branch_entries: the raw root→leaf path the projection was built from.

    Returns:
        True when :func:`estimate_context_tokens` of the projection's messages
        finds usage (``lastUsageIndex`` set) and
        :func:`estimate_projected_context_tokens` does not.
    """
    if estimate_context_tokens(projection["messages"])["lastUsageIndex"] is None:
        return False
    return estimate_projected_context_tokens(projection, branch_entries)["lastUsageIndex"] is None


def _source_of_message(projection: Mapping[str, Any], index: int) -> Mapping[str, Any] | None:
    """The context entry that contributed ``projection["messages"][index]``."""
    seen = 0
    for item in projection["entries"]:
        count = len(item["messages"])
        if index < seen + count:
            return item["sourceEntry"]
        seen += count
    return None


def should_compact(tokens: int, context_window: int, settings: Any) -> bool:
    """Whether compaction should trigger (pi's ``shouldCompact``): settings
    enabled and ``tokens > context_window - reserveTokens`` (all in tokens).

    Args:
        tokens: the current context size.
        context_window: the model's context window.
        settings: a :class:`pi_session.session.settings.CompactionSettings`, None
            (defaults) or a pi-style mapping ``{"enabled", "reserveTokens"}``
            (see :func:`pi_session.session.settings.coerce_compaction_settings`:
            missing keys and non-number token counts take the defaults).
            ``tokens`` or ``context_window`` that are not numbers count 0.

    Raises:
        TypeError: ``settings`` is not a mapping or settings object.
    """
    s = coerce_compaction_settings(settings)
    if not s.enabled:
        return False
    return _num(tokens) > _num(context_window) - _num(s.reserve_tokens)
