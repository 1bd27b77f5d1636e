"""Conversation → plain text for summarization (pi's ``serializeConversation``).

The model gets the conversation as labelled text rather than as chat turns,
so it summarizes instead of continuing it. Labels (``[User]:``,
``[Assistant]:``, ``[Assistant tool calls]:``, ``[Tool result]:``) and the
truncation marker are pi's format. As in pi 1.6, thinking is not serialized
(0.73.1 wrote an ``[Assistant thinking]:`` part) and ``system`` messages are
skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..session.context import text_content
from ..core.jsonio import js_key_order, js_len, js_stringify
from ..entries.records import UNDEFINED
from ..entries.questions import ASSISTANT, TOOL_RESULT, USER

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary", "js_slice", "slice_head"]

TOOL_RESULT_MAX_CHARS = 2000
"""Tool results longer than this many UTF-16 code units are cut."""



def js_slice(text: str, end: int) -> str:
    """``text.slice(0, end)`` in UTF-16 code units. Cutting inside a
    surrogate pair leaves a lone surrogate, exactly as JavaScript does."""
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", errors="surrogatepass")[: 2 * end]
    return units.decode("utf-16-le", errors="surrogatepass")


def slice_head(text: str, max_units: int) -> str:
    """At most the first ``max_units`` UTF-16 code units of ``text`` without
    splitting a surrogate pair (pi 1.6's ``sliceHead``): when the cut would
    separate a high surrogate from the low surrogate after it, the whole
    character is left out. A lone surrogate already in ``text`` is kept as
    it is."""
    end = max(0, max_units)
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", errors="surrogatepass")
    if end and len(units) >= 2 * end + 2:
        high = int.from_bytes(units[2 * end - 2 : 2 * end], "little")
        low = int.from_bytes(units[2 * end : 2 * end + 2], "little")
        if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
            end -= 1
    return units[: 2 * end].decode("utf-16-le", errors="surrogatepass")


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """Keep the first ``max_chars`` UTF-16 code units of ``text`` (never half
    a surrogate pair, see :func:`slice_head`) and append ``\\n\\n[... N more
    characters truncated]`` with N = length − ``max_chars`` in UTF-16 code
    units (pi counts the plain difference even when a pair was left out);
    text within the limit is returned unchanged."""
    length = js_len(text)
    if length <= max_chars:
        return text
    return f"{slice_head(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _format_tool_call(block: Mapping[str, Any]) -> str:
    args = block.get("arguments")
    pairs = []
    if isinstance(args, Mapping):
        for key, value in js_key_order(dict(args)).items():
            pairs.append(f"{key}={js_stringify(value)}")
    name = block.get("name", UNDEFINED)
    # a template literal writes a missing name as "undefined", null as "null"
    if name is UNDEFINED:
        name_text = "undefined"
    elif isinstance(name, str):
        name_text = name
    else:
        name_text = js_stringify(name)
    return f"{name_text}({', '.join(pairs)})"




def serialize_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """Serialize LLM messages (after ``convert_to_llm``) to text.

    Args:
        messages: user / assistant / toolResult messages; other roles
            (``system`` included) are skipped.

    Returns:
        Parts joined by a blank line: ``[User]: <text>`` (text blocks joined,
        skipped when empty); for an assistant message ``[Assistant]:`` (text
        blocks joined by newlines; thinking blocks are left out, as in pi 1.6) and ``[Assistant tool calls]: name(k=<json>, ...)``
        (calls joined by ``"; "``), each only when present; ``[Tool result]:
        <text>`` cut to 2000 UTF-16 code units by :func:`truncate_for_summary`
        (skipped when empty). Pure; never raises on odd shapes: messages
        and blocks that are not objects are skipped, ``content`` that is
        neither a string nor a list counts as empty, a text block whose
        ``text`` is not a string counts as empty for users and tool results
        (assistant text that is not a string is written as its
        JSON, as ``Array.prototype.join`` would stringify it), and tool-call
        ``arguments`` that are not an object list no arguments.
    """
    parts: list[str] = []
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == USER:
            text = text_content(msg.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == ASSISTANT:
            texts: list[str] = []
            calls: list[str] = []
            content = msg.get("content")
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, Mapping):
                    continue
                btype = block.get("type")
                if btype == "text":
                    texts.append(_js_str(block.get("text")))
                elif btype == "toolCall":
                    calls.append(_format_tool_call(block))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == TOOL_RESULT:
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
