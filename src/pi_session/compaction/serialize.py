"""Conversation → plain text for summarization (pi's ``serializeConversation``).

The model gets the conversation as labelled text rather than as chat turns,
so it summarizes instead of continuing it. Labels (``[User]:``,
``[Assistant thinking]:``, ``[Assistant]:``, ``[Assistant tool calls]:``,
``[Tool result]:``) and the truncation marker are pi's format.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..context import text_content
from ..jsonio import js_key_order, js_len, js_stringify

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary", "js_slice"]

TOOL_RESULT_MAX_CHARS = 2000
"""Tool results longer than this many UTF-16 code units are cut."""



def js_slice(text: str, end: int) -> str:
    """``text.slice(0, end)`` in UTF-16 code units. Cutting inside a
    surrogate pair leaves a lone surrogate, exactly as JavaScript does."""
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", errors="surrogatepass")[: 2 * end]
    return units.decode("utf-16-le", errors="surrogatepass")


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """Keep the first ``max_chars`` UTF-16 code units of ``text`` and append
    ``\\n\\n[... N more characters truncated]`` (N in UTF-16 code units);
    text within the limit is returned unchanged."""
    length = js_len(text)
    if length <= max_chars:
        return text
    return f"{js_slice(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _format_tool_call(block: Mapping[str, Any]) -> str:
    args = block.get("arguments")
    pairs = []
    if isinstance(args, Mapping):
        for key, value in js_key_order(dict(args)).items():
            pairs.append(f"{key}={js_stringify(value)}")
    name = block.get("name", _MISSING)
    # a template literal writes a missing name as "undefined", null as "null"
    if name is _MISSING:
        name_text = "undefined"
    elif isinstance(name, str):
        name_text = name
    else:
        name_text = js_stringify(name)
    return f"{name_text}({', '.join(pairs)})"


_MISSING: Any = object()


def serialize_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """Serialize LLM messages (after ``convert_to_llm``) to text.

    Args:
        messages: user / assistant / toolResult messages; other roles are
            skipped.

    Returns:
        Parts joined by a blank line: ``[User]: <text>`` (text blocks joined,
        skipped when empty); for an assistant message ``[Assistant thinking]:``
        (thinking blocks joined by newlines), ``[Assistant]:`` (text blocks
        joined by newlines) and ``[Assistant tool calls]: name(k=<json>, ...)``
        (calls joined by ``"; "``), each only when present; ``[Tool result]:
        <text>`` cut to 2000 UTF-16 code units by :func:`truncate_for_summary`
        (skipped when empty). Pure; never raises on odd shapes: messages
        and blocks that are not objects are skipped, ``content`` that is
        neither a string nor a list counts as empty, a text block whose
        ``text`` is not a string counts as empty for users and tool results
        (assistant text/thinking that is not a string is written as its
        JSON, as ``Array.prototype.join`` would stringify it), and tool-call
        ``arguments`` that are not an object list no arguments.
    """
    parts: list[str] = []
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == "user":
            text = text_content(msg.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            texts: list[str] = []
            thinking: list[str] = []
            calls: list[str] = []
            content = msg.get("content")
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, Mapping):
                    continue
                btype = block.get("type")
                if btype == "text":
                    texts.append(_js_str(block.get("text")))
                elif btype == "thinking":
                    thinking.append(_js_str(block.get("thinking")))
                elif btype == "toolCall":
                    calls.append(_format_tool_call(block))
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            content = msg.get("content")
            text = text_content(content) if isinstance(content, list) else ""
            if text:
                parts.append("[Tool result]: " + truncate_for_summary(text))
    return "\n\n".join(parts)


def _js_str(value: Any) -> str:
    # Array.prototype.join writes undefined/null as "".
    if value is None:
        return ""
    return value if isinstance(value, str) else js_stringify(value)
