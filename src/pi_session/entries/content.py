"""Content blocks and usage, as pi 1.6 writes them inside messages: their
TypedDicts and the text fields of each block type (:data:`BLOCKS`, and
:data:`ASSISTANT_BLOCKS` naming the kind of each block of an assistant
message)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

from .base import BINARY, JSON, PLAIN, SIGNATURE, TEXT, Content, Shape, Variant

__all__ = [
    "ASSISTANT_CONTENT", "BLOCKS", "CONTENT", "ImageContent", "TextContent", "ThinkingContent", "ToolCall", "Usage",
    "content_text",
]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]  # opaque, or a reasoning item as JSON (Codex imports, Agents SDK sessions)
    redacted: NotRequired[bool]


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: NotRequired[int]
    cost: NotRequired[dict[str, float]]  # input, output, cacheRead, cacheWrite, total (+ totalFromProvider in 1.6)
    cacheWrite1h: NotRequired[int]  # pi 1.6
    reasoning: NotRequired[int]  # pi 1.6


def _blocks(text: str | None, thinking: str | None, call: str | None) -> Variant:
    return Variant(
        "type",
        {
            "text": Shape({"type": PLAIN, "text": TEXT, "textSignature": SIGNATURE}, text),
            "image": Shape({"type": PLAIN, "data": BINARY, "mimeType": PLAIN}),
            "thinking": Shape({"type": PLAIN, "thinking": TEXT, "thinkingSignature": SIGNATURE, "redacted": PLAIN}, thinking),
            "toolCall": Shape({"type": PLAIN, "id": PLAIN, "name": PLAIN, "arguments": JSON, "partialJson": TEXT}, call),
        },
        Shape({"type": PLAIN}, text),
    )


BLOCKS = _blocks(None, None, None)
"""The content blocks of any message (their text keeps the message's kind)."""

ASSISTANT_BLOCKS = _blocks("assistant text", "thinking", "tool-call arguments")
"""The content blocks of an assistant message, each naming its kind."""

CONTENT = Content(BLOCKS)
"""A message content: a string or a list of :data:`BLOCKS`."""

ASSISTANT_CONTENT = Content(ASSISTANT_BLOCKS)
"""An assistant message's content (:data:`ASSISTANT_BLOCKS`)."""


def content_text(content: Any, block_text: Callable[[str, Mapping[str, Any]], str | None], sep: str) -> str:
    """A message's ``content`` as one text: a string as it is, a list of
    blocks as ``block_text(type, block)`` of each block object joined with
    ``sep`` (blocks it answers None for are left out), anything else ``""``.
    Each view (terminal previews, the viewer, the web app) says how it
    shows a block; this is the one walk over the blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict):
            text = block_text(str(block.get("type")), block)
            if text is not None:
                parts.append(text)
    return sep.join(parts)
