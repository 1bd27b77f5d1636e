"""Memory-saving decoding of session records: :func:`compact_record`
interns the strings that repeat from line to line and turns entries,
their messages and usage into key-sharing dicts
(:func:`_key_sharing`, PEP 412). Values and key order are unchanged; only
object identity differs. Used by the read loop of
:mod:`pi_session.storage.reader`."""

from __future__ import annotations

import sys
from typing import Any, Literal
from ..entries.questions import ASSISTANT, TOOL_RESULT

_intern = sys.intern
_ASSISTANT_WORDS = ("api", "provider", "model", "stopReason")


_MAX_SHAPES = 4096
# key sequence -> (class, first key) of its key-sharing dicts, or None: not shared
_shapes: dict[tuple[str, ...], tuple[type, str] | None] = {}


def _new_shape(d: dict[str, Any], shape: tuple[str, ...]) -> dict[str, Any]:
    """:func:`_key_sharing` of the first dict of a key sequence: makes its
    class (whose shared key table this dict fills, in this order)."""
    if len(_shapes) >= _MAX_SHAPES or len(shape) > 30 or not shape:
        if len(_shapes) < _MAX_SHAPES:
            _shapes[shape] = None
        return d
    cls = type("SharedKeys", (), {})
    shared = cls().__dict__
    shared.update(d.items())  # item by item: merging a dict would copy its own table
    _shapes[shape] = (cls, shape[0])
    return shared


def _key_sharing(d: dict[str, Any]) -> dict[str, Any]:
    """An equal dict (same keys, same order, same value objects) that shares
    its key table with every other dict of the same keys in the same order.

    This is CPython's key-sharing dictionary (PEP 412), the one instance
    attributes use: the result is an ordinary ``dict`` (``type(d) is dict``)
    that stores only its values, which makes a 5-key dict about 110 bytes
    instead of about 180, and an 8-key one about 140 instead of about 270.
    It behaves as any dict: adding a key it did not have turns it into an
    ordinary one. One class per key sequence supplies the shared table (at
    most 4,096 sequences; further ones, empty dicts and dicts of more than
    30 keys are returned as they are). On other Python implementations it
    is just a copy.

    Cost: about 0.5 us for a small dict to 1.4 us for a message's 8 keys
    (measured: more than decoding the dict); the first key is
    stored on its own, so that ``update`` merges into a non-empty dict,
    entry by entry, instead of cloning ``d``'s own table."""
    shape = tuple(d)
    plan: tuple[type, str] | None | Literal[False] = _shapes.get(shape, False)
    if plan is False:
        return _new_shape(d, shape)
    if plan is None:
        return d
    shared = plan[0]().__dict__
    shared[plan[1]] = None
    shared.update(d)
    return shared


def compact_record(
    record: dict[str, Any],
    previous: dict[str, Any] | None,
    call_ids: dict[str, str] | None = None,
    *,
    deep: bool = False,
) -> dict[str, Any]:
    """The same record stored in less memory, at a small cost (a 100 MB
    never-compacted session: about 75 MB less than ``orjson.loads`` alone
    gives, for about 0.2 s):

    - the strings that repeat from line to line become one shared object
      each: the entry type, the message's role, each content block's
      type, an assistant message's api, provider, model, stop reason and
      tool-call names, a tool result's tool name (interned); a parentId
      equal to the previous entry's id (``previous``); a tool result's
      toolCallId equal to a call id of the latest assistant message
      (``call_ids``, updated here);
    - the entry, its message and an assistant message's usage and cost
      become key-sharing dicts (:func:`_key_sharing`).

    ``deep`` also turns content blocks and tool-call arguments into
    key-sharing dicts: about 17 MB less per 100 MB, but it costs about
    half as much as decoding itself (measured), so only a bulk
    decode of a lazily read file uses it.

    Values and key order are unchanged; only object identity differs.

    Args:
        record: a decoded entry line (``orjson.loads``), changed in place
            where a string is replaced by its shared copy.
        previous: the entry decoded just before it, or None.
        call_ids: the call ids of the latest assistant message (id -> the
            same string), kept across the records of one read; None: not
            shared.
        deep: see above.

    Returns:
        The record (a dict equal to ``record``)."""
    intern = _intern
    share = _key_sharing
    value = record.get("type")
    if value.__class__ is str:
        record["type"] = intern(value)
    if previous is not None:
        parent = record.get("parentId")
        if parent.__class__ is str:
            pid = previous.get("id")
            if parent == pid:
                record["parentId"] = pid
    message = record.get("message")
    if message.__class__ is not dict:
        return share(record)
    role = message.get("role")
    if role.__class__ is str:
        message["role"] = role = intern(role)
    content = message.get("content")
    if content.__class__ is list:
        for block in content:
            if block.__class__ is dict:
                value = block.get("type")
                if value.__class__ is str:
                    block["type"] = intern(value)
    if role == ASSISTANT:
        for key in _ASSISTANT_WORDS:
            value = message.get(key)
            if value.__class__ is str:
                message[key] = intern(value)
        if content.__class__ is list:
            _tool_calls(content, call_ids, deep)
        usage = message.get("usage")
        if usage.__class__ is dict:
            cost = usage.get("cost")
            if cost.__class__ is dict:
                usage["cost"] = share(cost)
            message["usage"] = share(usage)
    elif role == TOOL_RESULT:
        value = message.get("toolName")
        if value.__class__ is str:
            message["toolName"] = intern(value)
        if call_ids:
            value = message.get("toolCallId")
            if value.__class__ is str:
                message["toolCallId"] = call_ids.get(value, value)
    if deep and content.__class__ is list:
        for i, block in enumerate(content):
            if block.__class__ is dict:
                content[i] = share(block)
    record["message"] = share(message)
    return share(record)


def _tool_calls(content: list[Any], call_ids: dict[str, str] | None, deep: bool) -> None:
    """:func:`compact_record` of an assistant message's content: tool-call
    names interned, their ids remembered in ``call_ids`` (cleared first
    when the message has a tool call), their arguments key-sharing when
    ``deep``."""
    first = True
    for block in content:
        if block.__class__ is dict and block.get("type") == "toolCall":
            name = block.get("name")
            if name.__class__ is str:
                block["name"] = _intern(name)
            if call_ids is not None:
                call_id = block.get("id")
                if call_id.__class__ is str:
                    if first:
                        call_ids.clear()
                        first = False
                    call_ids[call_id] = call_id
            if deep:
                arguments = block.get("arguments")
                if arguments.__class__ is dict:
                    block["arguments"] = _key_sharing(arguments)
