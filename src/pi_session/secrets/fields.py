"""The text fields of a session record (pure functions): which strings of
a record are scanned (:func:`text_fields`, each with its field path and
field kind) and a copy of a record with some strings replaced
(:func:`replace_strings`).

Every string value of a record is scanned, at any depth, except the ones
that hold no text of the user, the model or a tool:

- the plain id and name strings of structural keys (:data:`SKIPPED_KEYS`:
  ``type``, ``id``, ``parentId``, ``timestamp``, ``targetId``, roles, model
  and provider names, tool-call ids, …): a string of at most 256
  characters without blanks. An object or array under such a key is
  scanned like any other, and so is a longer string or one with blanks;
- opaque signatures (:data:`SIGNATURE_KEYS`: ``thinkingSignature``,
  ``textSignature``, ``signature``, ``encrypted_content``): a string
  without blanks that is not JSON. A signature holding a JSON object or
  array (the raw reasoning item a Codex import or an Agents SDK session
  keeps in ``thinkingSignature``) is scanned as that value (its fields are
  paths under the signature's, ``…thinkingSignature.summary[0].text``), and
  one with blanks as text;
- the base64 ``data`` of image blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["FIELD_KINDS", "SIGNATURE_KEYS", "SKIPPED_KEYS", "field_kind", "replace_strings", "text_fields"]

SKIPPED_KEYS = frozenset(
    (
        "type", "id", "parentId", "timestamp", "targetId", "fromId", "firstKeptEntryId", "role", "api",
        "provider", "model", "modelId", "stopReason", "toolCallId", "toolName", "customType", "mimeType",
        "thinkingSignature", "textSignature", "signature", "thinkingLevel", "version", "display", "redacted",
        "encrypted_content", "call_id",
    )
)
"""Keys whose plain string values (ids, roles, names of models, signatures)
are not scanned, wherever they stand; what else they hold is."""

SIGNATURE_KEYS = frozenset(("thinkingSignature", "textSignature", "signature", "encrypted_content"))
"""Keys holding a provider's opaque signature, or (``thinkingSignature`` of
a Codex import or an Agents SDK session) a reasoning item as JSON."""

_PLAIN_MAX = 256

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
    for where, text in _walk(record, None):
        yield render_path(where), text


def scanned_strings(record: Any, min_len: int = 0) -> Iterator[tuple[Any, str]]:
    """:func:`text_fields` with each path unrendered (cheap to make; turn
    one into text with :func:`render_path`, only for the strings that need
    it), strings shorter than ``min_len`` left out."""
    yield from _walk(record, None, min_len)


def render_path(where: Any) -> str:
    """The JavaScript-notation path of an unrendered path of
    :func:`scanned_strings` (``(parent, key)`` pairs; None is the root)."""
    keys: list[Any] = []
    while where is not None:
        where, key = where
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = _join(path, key)
    return path


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    from ..jsonio import js_stringify

    return f"{path}[{js_stringify(key)}]"


class _Embedded:
    """A string holding a JSON object or array (a signature keeping a
    reasoning item), scanned as the value it holds."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any) -> None:
        self.text, self.value = text, value


def _walk(value: Any, path: Any, min_len: int = 0) -> Iterator[tuple[Any, str]]:
    """The strings of ``value`` (of at least ``min_len`` characters) in
    document order, with an explicit stack (any nesting depth: a record
    nested deeper than Python's recursion limit is scanned too). The same
    members as :func:`_children`, inlined: this runs on every record
    scanned."""
    stack: list[tuple[Any, Any]] = [(value, path)]
    pop, push = stack.pop, stack.append
    skipped, structural, embedded = SKIPPED_KEYS, _structural, _Embedded
    while stack:
        value, path = pop()
        cls = value.__class__
        if cls is str:
            yield path, value
        elif cls is dict:
            image = value.get("type") == "image"
            for key, item in reversed(value.items()):
                kind = item.__class__
                if kind is str:
                    if len(item) < min_len:
                        continue
                    if key in skipped:
                        item = structural(key, item)
                        if item is None:
                            continue
                    elif image and key == "data":
                        continue
                    push((item, (path, key)))
                elif kind is dict or kind is list:
                    push((item, (path, key)))
                elif isinstance(item, (str, dict, list)):
                    push((item, (path, key)))
        elif cls is list:
            for i in range(len(value) - 1, -1, -1):
                item = value[i]
                kind = item.__class__
                if (kind is str and len(item) >= min_len) or kind is dict or kind is list:
                    push((item, (path, i)))
        elif cls is embedded:
            push((value.value, path))
        elif isinstance(value, str):  # subclasses of str, dict and list
            push((str(value), path))
        elif isinstance(value, dict):
            push((dict(value), path))
        elif isinstance(value, list):
            push((list(value), path))


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


def _structural(key: str, item: str) -> Any:
    """What of ``item``, the string under structural key ``key``, is
    scanned: None (a plain id or name, an opaque signature), the string,
    or an :class:`_Embedded` JSON value."""
    if key in SIGNATURE_KEYS:
        if item[:1] in ("{", "["):
            from ..jsonio import loads

            try:
                value = loads(item)
            except ValueError:
                value = None
            if isinstance(value, (dict, list)):
                return _Embedded(item, value)
        return item if _BLANK.search(item) else None
    if len(item) <= _PLAIN_MAX and not _BLANK.search(item):
        return None
    return item


_BLANK = re.compile(r"\s")


def _children(value: Any, path: Any) -> list[tuple[Any, Any, Any]]:
    """The scanned members of a container: ``(key or index, item, path)``
    (paths unrendered, see :func:`render_path`)."""
    if value.__class__ is dict:
        image = value.get("type") == "image"
        out: list[tuple[Any, Any, Any]] = []
        for key, item in value.items():
            cls = item.__class__
            if cls is str:
                if key in SKIPPED_KEYS:
                    item = _structural(key, item)
                    if item is None:
                        continue
                elif image and key == "data":
                    continue
                out.append((key, item, (path, key)))
            elif cls is dict or cls is list or isinstance(item, (dict, list)):
                out.append((key, item, (path, key)))
        return out
    if isinstance(value, dict):
        return _children(dict(value), path)
    return [(i, item, (path, i)) for i, item in enumerate(value) if isinstance(item, (str, dict, list))]


def _prefixed(prefix: str, where: Any) -> str:
    """The rendered path of ``where`` below the rendered path ``prefix``."""
    rel = render_path(where)
    if not prefix or not rel:
        return prefix or rel
    return prefix + rel if rel.startswith("[") else f"{prefix}.{rel}"


def _rebuilt(value: Any, changed: dict[Any, Any]) -> Any:
    """``value`` with the members in ``changed`` replaced (a copy), or
    ``value`` itself when none is."""
    if not changed:
        return value
    out: Any = dict(value) if isinstance(value, dict) else list(value)
    for key, new in changed.items():
        out[key] = new
    if isinstance(value, dict) and value.get("type") == "thinking" and "thinking" in changed and "thinkingSignature" not in changed:
        # the provider's signature was made over the old text: a request
        # with the changed text and that signature is refused (a reasoning
        # item kept as JSON is written again with its text masked instead)
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
    stack: list[list[Any]] = [[value, _children(value, None), 0, {}]]
    while True:
        frame = stack[-1]
        container, members, i, changed = frame
        if i < len(members):
            key, item, item_path = members[i]
            if isinstance(item, str):
                frame[2] = i + 1
                new = change(_prefixed(path, item_path), item)
                if new is not item:
                    changed[key] = new
            else:
                inner = item.value if isinstance(item, _Embedded) else item
                stack.append([inner, _children(inner, item_path), 0, {}])
            continue
        result = _rebuilt(container, changed)
        stack.pop()
        if not stack:
            return result
        parent = stack[-1]
        key, item, _path = parent[1][parent[2]]
        parent[2] += 1
        if isinstance(item, _Embedded):
            if result is not item.value:  # the signature's JSON, written again with the text changed
                from ..jsonio import dumps

                parent[3][key] = dumps(result)
        elif result is not item:
            parent[3][key] = result
