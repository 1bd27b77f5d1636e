"""The one walk of a record's text fields, driven by the entry descriptors'
declarations (:mod:`.base`): :func:`text_fields` (which strings of a record
are text, with their path and field kind), :func:`scanned_strings` (the
same, paths unrendered) and :func:`replace_strings` (a copy with some of
those strings replaced). Secrets scanning and scrubbing, and through them
redacted exports, viewer pages and contexts, use these functions; pure.

Every string of a record is text except where a declaration says otherwise:
plain ids and names in :data:`~.base.PLAIN` fields *of the declared
objects* (a record, a message, a content block, not an object nested in
tool arguments or ``data``) and :data:`~.base.BINARY` image data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.jsonio import dumps, js_stringify, loads
from .base import BINARY, JSON, PLAIN, PLAIN_MAX, SIGNATURE, Content, Role, Shape, Variant
from .registry import RECORD

__all__ = ["FIELD_KINDS", "TextField", "render_path", "replace_strings", "scanned_strings", "text_fields"]

FIELD_KINDS = (
    "header", "user text", "assistant text", "thinking", "tool-call arguments", "tool result", "bash output",
    "compaction summary", "branch summary", "custom data", "custom message", "label", "name", "context edit",
    "system prompt", "other",
)
"""The field kinds the declarations name (:attr:`TextField.kind`)."""


@dataclass(frozen=True)
class TextField:
    """One text field of a record: ``path`` in JavaScript notation relative
    to the record (``message.content[0].text``), its ``text`` and its
    ``kind`` (one of :data:`FIELD_KINDS`)."""

    path: str
    text: str
    kind: str


_ANY = Shape({})
_IMAGE_IN_JSON = Shape({"data": BINARY})
_BLANK = re.compile(r"\s")


class _Embedded:
    """A signature string holding a JSON object or array, walked as that value."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any) -> None:
        self.text, self.value = text, value


def _string(item: str, role: Role) -> Any:
    """What of string ``item`` in a field of ``role`` is text: the string,
    None (an id or a name, image data) or an :class:`_Embedded` value."""
    if role is PLAIN:
        return item if len(item) > PLAIN_MAX or _BLANK.search(item) else None
    if role is BINARY:
        return None
    if role is SIGNATURE and item[:1] in ("{", "["):
        try:
            value = loads(item)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            return _Embedded(item, value)
    return item


def _shape(value: dict[str, Any], role: Role) -> Shape:
    """The shape an object in a field of ``role`` is walked with."""
    if role.__class__ is Shape:
        return role
    if role.__class__ is Variant:
        tag = value.get(role.key)
        return role.shapes.get(tag, role.other) if tag.__class__ is str else role.other
    return _IMAGE_IN_JSON if value.get("type") == "image" else _ANY


def _members(value: Any, path: Any, role: Role, kind: str, min_len: int = 0) -> list[tuple[Any, Any, Any, Role, str]]:
    """The text-holding members of a container in a field of ``role``:
    ``(key or index, item, path, item role, item kind)``, item a string, a
    container or an :class:`_Embedded`; strings that are not text and
    strings shorter than ``min_len`` left out."""
    out: list[tuple[Any, Any, Any, Role, str]] = []
    if isinstance(value, dict):
        shape = _shape(value, role)
        fields, rest = shape.fields, shape.rest
        kind = shape.kind or kind
        for key, item in value.items():
            sub = fields.get(key, rest)
            if isinstance(item, str):
                if len(item) < min_len:
                    continue
                item = _string(item, sub)
                if item is None:
                    continue
            elif not isinstance(item, (dict, list)):
                continue
            out.append((key, item, (path, key), sub, kind))
        return out
    sub = role.blocks if role.__class__ is Content else JSON
    for i, item in enumerate(value):
        if isinstance(item, str):
            if len(item) >= min_len:
                out.append((i, item, (path, i), sub, kind))
        elif isinstance(item, (dict, list)):
            out.append((i, item, (path, i), sub, kind))
    return out


def scanned_strings(record: Any, min_len: int = 0) -> Iterator[tuple[Any, str, str]]:
    """The text of ``record`` (any JSON value; a record is an object) as
    ``(path, text, kind)`` in document order, the path unrendered (turn it
    into text with :func:`render_path`, only where needed), strings
    shorter than ``min_len`` left out. Any nesting depth (an explicit stack)."""
    if isinstance(record, str):
        if len(record) >= min_len:
            yield None, str(record), "other"
        return
    if not isinstance(record, (dict, list)):
        return
    # (value, path, role, kind); a value that is a str is text to yield
    stack: list[tuple[Any, Any, Role, str]] = [(record, None, RECORD, "other")]
    pop, push = stack.pop, stack.append
    while stack:
        value, path, role, kind = pop()
        if isinstance(value, str):
            yield path, str(value), kind
            continue
        for _key, item, item_path, sub, item_kind in reversed(_members(value, path, role, kind, min_len)):
            if item.__class__ is _Embedded:
                push((item.value, item_path, JSON, item_kind))
            else:
                push((item, item_path, sub, item_kind))


def text_fields(record: Any) -> Iterator[TextField]:
    """The text fields of ``record`` in document order (see the module
    docstring), each a :class:`TextField`; an object key that is not an
    identifier is quoted in the path (``details["a b"]``)."""
    for where, text, kind in scanned_strings(record):
        yield TextField(render_path(where), text, kind)


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
    return f"{path}[{js_stringify(key)}]"


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
        # item kept as JSON is written again with its text changed instead)
        out.pop("thinkingSignature", None)
    return out


def replace_strings(value: Any, change: Callable[[str, str], str], path: str = "") -> Any:
    """A copy of ``value`` (a record, or any JSON value walked as one) whose
    text strings (those :func:`text_fields` yields) are ``change(path,
    text)``; containers whose strings all stay the same are returned as
    they are (the same object), so an unchanged record is ``is``-identical
    to its input. A thinking block whose text changes loses its
    ``thinkingSignature`` (signed over the old text); a signature holding
    JSON is written again as JSON with its strings changed. Never mutates
    its input. Any nesting depth (an explicit stack). ``path``: the
    rendered path of ``value`` (prefixed to the paths given to ``change``)."""
    if isinstance(value, str):
        return change(path, value)
    if not isinstance(value, (dict, list)):
        return value
    # frames: [container, its members, next member, members changed]
    stack: list[list[Any]] = [[value, _members(value, None, RECORD, "other"), 0, {}]]
    while True:
        frame = stack[-1]
        container, members, i, changed = frame
        if i < len(members):
            key, item, item_path, sub, kind = members[i]
            if isinstance(item, str):
                frame[2] = i + 1
                new = change(_prefixed(path, item_path), item)
                if new is not item:
                    changed[key] = new
            elif isinstance(item, _Embedded):
                stack.append([item.value, _members(item.value, item_path, JSON, kind), 0, {}])
            else:
                stack.append([item, _members(item, item_path, sub, kind), 0, {}])
            continue
        result = _rebuilt(container, changed)
        stack.pop()
        if not stack:
            return result
        parent = stack[-1]
        key, item, _path, _sub, _kind = parent[1][parent[2]]
        parent[2] += 1
        if isinstance(item, _Embedded):
            if result is not item.value:  # the signature's JSON, written again with its text changed
                parent[3][key] = dumps(result)
        elif result is not item:
            parent[3][key] = result
