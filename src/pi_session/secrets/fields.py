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
    yield from _walk(record, "")


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    from ..jsonio import js_stringify

    return f"{path}[{js_stringify(key)}]"


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """The strings of ``value`` in document order, with an explicit stack
    (any nesting depth: a record nested deeper than Python's recursion
    limit is scanned too)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            yield path, value
        elif isinstance(value, (dict, list)):
            stack.extend((item, item_path) for _key, item, item_path in reversed(_children(value, path)))


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


def _children(value: Any, path: str) -> list[tuple[Any, Any, str]]:
    """The scanned members of a container: ``(key or index, item, path)``."""
    if isinstance(value, dict):
        image = value.get("type") == "image"
        return [
            (key, item, _join(path, key))
            for key, item in value.items()
            if isinstance(key, str) and key not in SKIPPED_KEYS and not (image and key == "data") and isinstance(item, (str, dict, list))
        ]
    return [(i, item, _join(path, i)) for i, item in enumerate(value) if isinstance(item, (str, dict, list))]


def _rebuilt(value: Any, changed: dict[Any, Any]) -> Any:
    """``value`` with the members in ``changed`` replaced (a copy), or
    ``value`` itself when none is."""
    if not changed:
        return value
    out: Any = dict(value) if isinstance(value, dict) else list(value)
    for key, new in changed.items():
        out[key] = new
    if isinstance(value, dict) and value.get("type") == "thinking" and "thinking" in changed:
        # the provider's signature was made over the old text: a request
        # with the changed text and that signature is refused
        out.pop("thinkingSignature", None)
    return out


def replace_strings(value: Any, change: Callable[[str, str], str], path: str = "") -> Any:
    """A copy of ``value`` whose scanned strings (those :func:`text_fields`
    yields) are ``change(path, text)``; containers whose strings all stay
    the same are returned as they are (the same object), so an unchanged
    record is ``is``-identical to its input. A thinking block whose text
    changes loses its ``thinkingSignature`` (signed over the old text).
    Never mutates its input. Any nesting depth (an explicit stack)."""
    if isinstance(value, str):
        return change(path, value)
    if not isinstance(value, (dict, list)):
        return value
    # frames: [container, its members, next member, members changed]
    stack: list[list[Any]] = [[value, _children(value, path), 0, {}]]
    while True:
        frame = stack[-1]
        container, members, i, changed = frame
        if i < len(members):
            key, item, item_path = members[i]
            if isinstance(item, str):
                frame[2] = i + 1
                new = change(item_path, item)
                if new is not item:
                    changed[key] = new
            else:
                stack.append([item, _children(item, item_path), 0, {}])
            continue
        result = _rebuilt(container, changed)
        stack.pop()
        if not stack:
            return result
        parent = stack[-1]
        key, item, _path = parent[1][parent[2]]
        parent[2] += 1
        if result is not item:
            parent[3][key] = result
