"""The text fields of a session record (pure functions): which strings of
a record are scanned (:func:`text_fields`, each with its field path and
field kind) and a copy of a record with some strings replaced
(:func:`replace_strings`).

Every string value of a record is scanned except the ones that hold no
text of the user, the model or a tool: structural keys (:data:`SKIPPED_KEYS`:
``type``, ``id``, ``parentId``, ``timestamp``, ``targetId``, roles, model and
provider names, tool-call ids, signatures of thinking and text blocks) and
the base64 ``data`` of image blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["FIELD_KINDS", "SKIPPED_KEYS", "field_kind", "replace_strings", "text_fields"]

SKIPPED_KEYS = frozenset(
    (
        "type", "id", "parentId", "timestamp", "targetId", "fromId", "firstKeptEntryId", "role", "api",
        "provider", "model", "modelId", "stopReason", "toolCallId", "toolName", "customType", "mimeType",
        "thinkingSignature", "textSignature", "signature", "thinkingLevel", "version", "display", "redacted",
        "encrypted_content", "call_id",
    )
)
"""Keys whose string values are never scanned (ids, roles, names of
models, signatures): wherever they stand."""

FIELD_KINDS = (
    "header", "user text", "assistant text", "thinking", "tool-call arguments", "tool result", "bash output",
    "compaction summary", "branch summary", "custom data", "custom message", "label", "name", "context edit",
    "system prompt", "other",
)
"""The field kinds :func:`field_kind` names."""


def text_fields(record: Any) -> Iterator[tuple[str, str]]:
    """The scanned strings of ``record`` (any JSON value; a record is an
    object): ``(path, text)`` pairs in document order, ``path`` in
    JavaScript notation relative to the record (``message.content[0].text``,
    ``message.content[1].arguments.command``; an object key that is not an
    identifier is quoted: ``details["a b"]``)."""
    yield from _walk(record, "", None)


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    from ..jsonio import js_stringify

    return f"{path}[{js_stringify(key)}]"


def _walk(value: Any, path: str, parent: Mapping[str, Any] | None) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        image = value.get("type") == "image"
        for key, item in value.items():
            if not isinstance(key, str) or key in SKIPPED_KEYS or (image and key == "data"):
                continue
            if isinstance(item, (str, dict, list)):
                yield from _walk(item, _join(path, key), value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (str, dict, list)):
                yield from _walk(item, _join(path, i), parent)


def field_kind(record: Mapping[str, Any], path: str) -> str:
    """The kind of field ``path`` of ``record`` (one of :data:`FIELD_KINDS`):
    by the record's type, the message role and the content block type."""
    etype = record.get("type")
    if etype == "session":
        return "header"
    if etype == "message":
        message = record.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        if role == "user":
            return "user text"
        if role == "assistant" and isinstance(message, dict):
            block = _block_at(message, path)
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "thinking":
                return "thinking"
            if btype == "toolCall":
                return "tool-call arguments"
            return "assistant text"
        if role == "toolResult":
            return "tool result"
        if role == "bashExecution":
            return "bash output"
        if role == "branchSummary":
            return "branch summary"
        if role == "compactionSummary":
            return "compaction summary"
        if role == "custom":
            return "custom message"
        if role == "system":
            return "system prompt"
        return "other"
    return {
        "compaction": "compaction summary",
        "branch_summary": "branch summary",
        "custom": "custom data",
        "custom_message": "custom message",
        "label": "label",
        "session_info": "name",
        "context_edit": "context edit",
    }.get(etype if isinstance(etype, str) else "", "other")


def _block_at(message: Mapping[str, Any], path: str) -> Any:
    """The content block ``path`` (``message.content[N]…``) lies in, or None."""
    prefix = "message.content["
    if not path.startswith(prefix):
        return None
    digits = path[len(prefix) :].split("]", 1)[0]
    content = message.get("content")
    if not digits.isdigit() or not isinstance(content, list) or int(digits) >= len(content):
        return None
    return content[int(digits)]


def replace_strings(value: Any, change: Callable[[str, str], str], path: str = "") -> Any:
    """A copy of ``value`` whose scanned strings (those :func:`text_fields`
    yields) are ``change(path, text)``; containers whose strings all stay
    the same are returned as they are (the same object), so an unchanged
    record is ``is``-identical to its input. A thinking block whose text
    changes loses its ``thinkingSignature`` (signed over the old text).
    Never mutates its input."""
    if isinstance(value, str):
        return change(path, value)
    if isinstance(value, dict):
        image = value.get("type") == "image"
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            if not isinstance(key, str) or key in SKIPPED_KEYS or (image and key == "data") or not isinstance(item, (str, dict, list)):
                continue
            new = replace_strings(item, change, _join(path, key))
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        if out is not None and value.get("type") == "thinking" and out.get("thinking") is not value.get("thinking"):
            # the provider's signature was made over the old text: a request
            # with the changed text and that signature is refused
            out.pop("thinkingSignature", None)
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for i, item in enumerate(value):
            if not isinstance(item, (str, dict, list)):
                continue
            new = replace_strings(item, change, _join(path, i))
            if new is not item:
                if items is None:
                    items = list(value)
                items[i] = new
        return value if items is None else items
    return value
