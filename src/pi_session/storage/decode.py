"""Memory-saving decoding of session records: :func:`compact_record`
interns the strings that repeat from line to line and turns entries,
messages, content blocks and usage into key-sharing dicts
(:func:`_key_sharing`, PEP 412). Values and key order are unchanged; only
object identity differs. Used by the read loop of
:mod:`pi_session.storage.reader`."""

from __future__ import annotations

import sys
from typing import Any, Literal

_intern = sys.intern
_MESSAGE_WORDS = ("role", "api", "provider", "model", "stopReason", "toolName")


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

    Cost: about 0.5 us per dict (the first key is stored on its own, so that
    ``update`` merges into a non-empty dict, entry by entry, instead of
    cloning ``d``'s own table)."""
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


# message key sequence -> (its keys among _MESSAGE_WORDS, has "toolCallId",
# has "content", has "usage", its _shapes entry or False while unknown)
_message_plans: dict[tuple[str, ...], tuple[tuple[str, ...], bool, bool, bool, Any]] = {}


def _message_plan(shape: tuple[str, ...]) -> tuple[tuple[str, ...], bool, bool, bool, Any]:
    """What :func:`compact_record` does to a message of these keys (so
    that it looks up only keys the message has)."""
    plan = (
        tuple(k for k in shape if k in _MESSAGE_WORDS),
        "toolCallId" in shape,
        "content" in shape,
        "usage" in shape,
        False,
    )
    if len(_message_plans) < _MAX_SHAPES:
        _message_plans[shape] = plan
    return plan


def compact_record(record: dict[str, Any], previous: dict[str, Any] | None, call_ids: dict[str, str]) -> dict[str, Any]:
    """The same record stored in less memory (a 100 MB session takes about
    85 MB less, for about 0.25 s):

    - the strings that repeat from line to line become one shared object
      each: types, roles, provider, model and tool names (interned), a
      parentId equal to the previous entry's id, a tool result's toolCallId
      equal to a call id of the latest assistant message (``call_ids``,
      updated here);
    - the entry, its message, content blocks, usage, cost and tool-call
      arguments become key-sharing dicts (:func:`_key_sharing`).

    Values and key order are unchanged; only object identity differs."""
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
    shape = tuple(message)
    plan = _message_plans.get(shape)
    if plan is None:
        plan = _message_plan(shape)
    words, call_id_key, content_key, usage_key, sharing = plan
    for key in words:
        value = message[key]
        if value.__class__ is str:
            message[key] = intern(value)
    if call_id_key:
        call_id = message["toolCallId"]
        if call_id.__class__ is str:
            shared = call_ids.get(call_id)
            if shared is not None:
                message["toolCallId"] = shared
    if content_key:
        content = message["content"]
        if content.__class__ is list:
            calls_seen = False
            for i, block in enumerate(content):
                if block.__class__ is dict:
                    value = block.get("type")
                    if value.__class__ is str:
                        block["type"] = intern(value)
                        if value == "toolCall":
                            name = block.get("name")
                            if name.__class__ is str:
                                block["name"] = intern(name)
                            call_id = block.get("id")
                            if call_id.__class__ is str:
                                if not calls_seen:
                                    call_ids.clear()
                                    calls_seen = True
                                call_ids[call_id] = call_id
                            arguments = block.get("arguments")
                            if arguments.__class__ is dict:
                                block["arguments"] = share(arguments)
                    content[i] = share(block)
    if usage_key:
        usage = message["usage"]
        if usage.__class__ is dict:
            cost = usage.get("cost")
            if cost.__class__ is dict:
                usage["cost"] = share(cost)
            message["usage"] = share(usage)
    if sharing is None:  # the message's own key sequence is not shared
        record["message"] = message
        return share(record)
    if sharing is False:
        sharing = _shapes.get(shape, False)
        if sharing is False:
            record["message"] = _new_shape(message, shape)
            return share(record)
        _message_plans[shape] = (words, call_id_key, content_key, usage_key, sharing)
        if sharing is None:
            record["message"] = message
            return share(record)
    shared = sharing[0]().__dict__
    shared[sharing[1]] = None
    shared.update(message)
    record["message"] = shared
    return share(record)
