"""Responses-API input items ⇄ pi agent messages (pure; **beyond pi**).

Owns the mapping :class:`~pi_session.integrations.openai_agents.PiSession`
stores and reads back:

* a user message item (``{"role": "user", "content": ...}``) is a pi
  ``user`` message (``input_text`` → text, an ``input_image`` with a
  ``data:`` URL → image block, other parts → a ``[type]`` text placeholder);
* the assistant-side items of one batch that follow each other (``reasoning``,
  assistant ``message``, ``function_call``) are the content blocks of one pi
  ``assistant`` message, in order: a reasoning item is a ``thinking`` block
  (summary texts joined by a blank line, empty for an empty summary, the
  whole item JSON in ``thinkingSignature``, so the item comes back also
  when it is alone in its message), an output message a ``text`` block
  (``textSignature`` ``{"v":1,"id":...}``), a function call a ``toolCall``
  block whose id is ``call_id|item_id`` — the encodings pi's own OpenAI
  Responses provider writes, so pi can continue such a session;
* a ``function_call_output`` is a pi ``toolResult`` (tool name taken from
  its call; ``unknown_tool`` for an output whose call is not on the path);
* every other item (system/developer messages, hosted tool calls, item
  references, ...) has no pi equivalent and is stored verbatim in a
  ``custom`` entry of type :data:`ITEM_CUSTOM_TYPE` (not in pi's context).

Whatever the pi form cannot hold (item ids, ``status``, annotations, the
exact ``arguments`` text, ...) is kept in an overlay (:mod:`.overlay`) under
:data:`ITEM_KEY` on the message (user, toolResult) or on the block
(assistant), holding only what differs from what the pi form renders, so
:func:`.render.render_items` returns the items as they were added.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ...core import jsonio
from ...errors import PiSessionError
from .overlay import apply_overlay, make_overlay


ITEM_KEY = "agentsItem"
"""Key of the overlay (see :mod:`.overlay`) on a pi message or content
block: what of the item the pi form does not reproduce."""

ITEM_CUSTOM_TYPE = "openai-agents:item"
"""``customType`` of the ``custom`` entries holding items with no pi
equivalent (``data``: ``{"item": item}``)."""

MARK_CUSTOM_TYPE = "openai-agents:leaf"
"""``customType`` of the ``custom`` entries that record a leaf move made by
``pop_item``/``clear_session`` (``data``: ``{"op": "pop"|"clear", ...}``),
so the move survives reopening (a file's leaf is its last entry)."""

API = "openai-responses"

_ASSISTANT_TYPES = ("reasoning", "function_call")


def zero_usage() -> dict[str, Any]:
    """pi's usage object with every count 0 (pi 1.6 ignores all-zero usage
    when measuring the context, so token counts fall back to estimates)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def now_ms() -> int:
    """The current time in Unix milliseconds (pi's message ``timestamp``)."""
    return int(time.time() * 1000)


def _json_default(value: Any) -> Any:
    if callable(getattr(value, "model_dump", None)):
        return value.model_dump(mode="json", exclude_unset=True)
    raise TypeError(f"session items must hold JSON values, not {type(value).__name__}")


class InvalidItemError(PiSessionError, ValueError, TypeError):
    """An item :meth:`~pi_session.integrations.openai_agents.PiSession.add_items`
    cannot store; nothing of its batch was written. A ``ValueError`` (and,
    as a value of the wrong type is, a ``TypeError``).

    Attributes:
        index: the item's position in the batch (0-based).
        problem: what is wrong with it, one line.
    """

    def __init__(self, index: int, problem: str) -> None:
        super().__init__(f"session item {index}: {problem}; nothing of this batch was stored")
        self.index = index
        self.problem = problem


def _kind_of_value(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def item_problem(item: Mapping[str, Any]) -> str | None:
    """What is wrong with a plain item (see :func:`plain_item`), or None:
    the fields the conversion reads must have the types the Responses API
    gives them. A user message's ``content`` is a string or a list of
    content parts (objects); an assistant message's a string or a list of
    objects; a ``function_call`` has string ``call_id``, ``name`` and
    ``arguments``; a ``function_call_output`` a string ``call_id``; a
    ``reasoning`` item's ``summary`` is a list. Other items are stored
    verbatim and may hold any JSON."""
    kind = item_kind(item)
    itype = item.get("type")
    if kind in ("user", "assistant") and itype in (None, "message"):
        content = item.get("content")
        role = item.get("role")
        if isinstance(content, str):
            return None
        if not isinstance(content, list):
            return f"a {role} message's content must be a string or a list of content parts, not {_kind_of_value(content)}"
        for n, part in enumerate(content):
            if not isinstance(part, Mapping):
                return f"a {role} message's content part {n} must be an object, not {_kind_of_value(part)}"
        return None
    if itype == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str):
                return f"a function_call's {key} must be a string, not {_kind_of_value(item.get(key))}"
        return None
    if itype == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            return f"a function_call_output's call_id must be a string, not {_kind_of_value(item.get('call_id'))}"
        return None
    if itype == "reasoning" and "summary" in item and not isinstance(item.get("summary"), list):
        return f"a reasoning item's summary must be a list, not {_kind_of_value(item.get('summary'))}"
    return None


def plain_items(items: Sequence[Any]) -> list[dict[str, Any]]:
    """Every item of a batch as a plain JSON dict (:func:`plain_item`),
    each checked (:func:`item_problem`) before any is stored.

    Raises:
        InvalidItemError: an item that is not a dict (or model), holds a
            value JSON cannot represent, or has a field of the wrong type;
            the error names its index and the problem.
    """
    plain: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        try:
            value = plain_item(item)
        except (TypeError, ValueError) as exc:
            raise InvalidItemError(index, str(exc)) from None
        problem = item_problem(value)
        if problem is not None:
            raise InvalidItemError(index, problem)
        plain.append(value)
    return plain


def plain_item(item: Any) -> dict[str, Any]:
    """An input item as a plain JSON dict (a deep copy; pydantic models,
    also nested ones, are dumped as the SDK would send them).

    Raises:
        TypeError: ``item`` is neither a mapping nor a model with
            ``model_dump``, or holds a value JSON cannot represent.
    """
    if isinstance(item, Mapping):
        data: Any = dict(item)
    elif callable(getattr(item, "model_dump", None)):
        data = item.model_dump(mode="json", exclude_unset=True)
    else:
        raise TypeError(f"session items must be dicts (Responses input items), not {type(item).__name__}")
    copied = json.loads(json.dumps(data, default=_json_default))
    assert isinstance(copied, dict)
    return copied


def item_kind(item: Mapping[str, Any]) -> str:
    """``"user"``, ``"assistant"`` (reasoning, assistant message, function
    call), ``"result"`` (function call output) or ``"other"``."""
    itype = item.get("type")
    role = item.get("role")
    if itype in (None, "message"):
        if role == "user":
            return "user"
        if role == "assistant":
            return "assistant"
        return "other"
    if itype in _ASSISTANT_TYPES:
        return "assistant"
    if itype == "function_call_output":
        return "result"
    return "other"


# --------------------------------------------------------------------------
# parts


def _data_url_image(url: Any) -> dict[str, Any] | None:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, _, data = url[5:].partition(";base64,")
        if mime and data:
            return {"type": "image", "data": data, "mimeType": mime}
    return None


def _part_to_pi(part: Any) -> dict[str, Any]:
    if isinstance(part, Mapping):
        ptype = part.get("type")
        if ptype in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            return {"type": "text", "text": part["text"]}
        if ptype == "input_image":
            image = _data_url_image(part.get("image_url"))
            if image is not None:
                return image
        return {"type": "text", "text": f"[{ptype or 'part'}]"}
    return {"type": "text", "text": "[part]"}


def _part_from_pi(block: Mapping[str, Any]) -> dict[str, Any]:
    if block.get("type") == "image":
        return {"type": "input_image", "detail": "auto", "image_url": f"data:{block.get('mimeType')};base64,{block.get('data')}"}
    return {"type": "input_text", "text": block.get("text", "")}


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping) and b.get("type") in ("text", "image")]
    return []


# --------------------------------------------------------------------------
# user messages


def user_from_pi(message: Mapping[str, Any], *, plain_text: bool = False) -> dict[str, Any]:
    """The user message item for an LLM user message (no overlay).

    Args:
        plain_text: when every block is text, send one string (the texts
            joined by a blank line) instead of a list of parts; used for
            the messages pi makes (summaries, custom and bash messages),
            since some servers (llama.cpp) take only string content.
    """
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": content}
    blocks = _blocks(content)
    if plain_text and blocks and all(b.get("type") == "text" for b in blocks):
        return {"role": "user", "content": "\n\n".join(str(b.get("text", "")) for b in blocks)}
    return {"role": "user", "content": [_part_from_pi(b) for b in blocks]}


def user_to_pi(item: Mapping[str, Any], timestamp: int) -> dict[str, Any]:
    """A pi ``user`` message for a user message item (with its overlay)."""
    content = item.get("content")
    pi_content: Any = content if isinstance(content, str) else [_part_to_pi(p) for p in content or []]
    message: dict[str, Any] = {"role": "user", "content": pi_content, "timestamp": timestamp}
    overlay = make_overlay(item, user_from_pi(message))
    if overlay:
        message[ITEM_KEY] = overlay
    return message


# --------------------------------------------------------------------------
# assistant blocks


def _text_signature(item_id: Any, phase: Any) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return jsonio.dumps(payload)


def _parse_text_signature(signature: Any) -> tuple[str | None, str | None]:
    if not isinstance(signature, str) or not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = jsonio.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if isinstance(phase, str) else None
    return signature, None


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
    return "".join(texts)


def _bare_block(item: Mapping[str, Any]) -> dict[str, Any]:
    itype = item.get("type")
    if itype == "reasoning":
        summary = item.get("summary")
        texts = [s.get("text") for s in summary if isinstance(s, Mapping)] if isinstance(summary, list) else []
        return {
            "type": "thinking",
            "thinking": "\n\n".join(t for t in texts if isinstance(t, str)),
            "thinkingSignature": jsonio.dumps(item),
        }
    if itype == "function_call":
        raw = item.get("arguments")
        try:
            args = jsonio.loads(raw) if isinstance(raw, str) and raw.strip() else {}
        except ValueError:
            args = {}
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else ""
        item_id = item.get("id")
        return {
            "type": "toolCall",
            "id": f"{call_id}|{item_id}" if isinstance(item_id, str) and item_id else call_id,
            "name": item.get("name") if isinstance(item.get("name"), str) else "unknown_tool",
            "arguments": args if isinstance(args, dict) else {},
        }
    block: dict[str, Any] = {"type": "text", "text": _message_text(item.get("content"))}
    if isinstance(item.get("id"), str) and item["id"]:
        block["textSignature"] = _text_signature(item["id"], item.get("phase"))
    return block


def assistant_block_to_pi(item: Mapping[str, Any]) -> dict[str, Any]:
    """The pi content block for an assistant-side item (with its overlay)."""
    block = _bare_block(item)
    rebuilt = assistant_block_from_pi(block)
    overlay = make_overlay(item, rebuilt or {})
    if overlay:
        block[ITEM_KEY] = overlay
    return block


def split_call_id(pi_id: Any) -> str:
    """The Responses ``call_id`` of a pi tool-call id (``call_id|item_id``)."""
    return pi_id.split("|", 1)[0] if isinstance(pi_id, str) else ""


def assistant_block_from_pi(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The item for one assistant content block (overlay applied), or None
    for a block with no item (a thinking block without a reasoning item in
    its signature, an unknown block). A thinking block holding a reasoning
    item gives it back whatever its summary (also an empty one)."""
    btype = block.get("type")
    item: dict[str, Any]
    if btype == "thinking":
        try:
            parsed = jsonio.loads(block["thinkingSignature"]) if isinstance(block.get("thinkingSignature"), str) else None
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or parsed.get("type") != "reasoning":
            return None
        item = parsed
    elif btype == "text":
        item_id, phase = _parse_text_signature(block.get("textSignature"))
        item = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": block.get("text", ""), "annotations": []}],
            "status": "completed",
        }
        if item_id:
            item["id"] = item_id
        if phase:
            item["phase"] = phase
    elif btype == "toolCall":
        pi_id = block.get("id")
        item = {
            "type": "function_call",
            "call_id": split_call_id(pi_id),
            "name": block.get("name"),
            "arguments": jsonio.dumps(block.get("arguments") if block.get("arguments") is not None else {}),
        }
        if isinstance(pi_id, str) and "|" in pi_id and pi_id.split("|", 1)[1]:
            item["id"] = pi_id.split("|", 1)[1]
    else:
        return None
    overlay = block.get(ITEM_KEY)
    if overlay is not None:
        item = apply_overlay(item, overlay)
    return item


def assistant_to_pi(
    items: Sequence[Mapping[str, Any]], *, provider: str, model: str, timestamp: int, usage: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One pi ``assistant`` message for consecutive assistant-side items."""
    content = [assistant_block_to_pi(i) for i in items]
    return {
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": provider,
        "model": model,
        "usage": dict(usage) if usage else zero_usage(),
        "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop",
        "timestamp": timestamp,
    }


# --------------------------------------------------------------------------
# tool results


def result_from_pi(message: Mapping[str, Any], call_id: str, *, edited: bool = False) -> dict[str, Any]:
    """The ``function_call_output`` item for a pi toolResult message."""
    blocks = _blocks(message.get("content"))
    output: Any
    if any(b.get("type") == "image" for b in blocks):
        output = [_part_from_pi(b) for b in blocks]
    else:
        output = "\n".join(str(b.get("text", "")) for b in blocks)
    item: dict[str, Any] = {"type": "function_call_output", "call_id": call_id, "output": output}
    overlay = message.get(ITEM_KEY)
    if overlay is not None:
        item = apply_overlay(item, overlay, edited=edited)
        item["call_id"] = call_id
    return item


def result_to_pi(item: Mapping[str, Any], pi_call_id: str, tool_name: str, timestamp: int) -> dict[str, Any]:
    """A pi ``toolResult`` message for a function call output item."""
    output = item.get("output")
    content: list[dict[str, Any]]
    if isinstance(output, str):
        content = [{"type": "text", "text": output}]
    elif isinstance(output, list):
        content = [_part_to_pi(p) for p in output]
    else:
        content = [{"type": "text", "text": jsonio.dumps(output)}]
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": pi_call_id,
        "toolName": tool_name,
        "content": content,
        "isError": False,
        "timestamp": timestamp,
    }
    raw_id = item.get("call_id")
    overlay = make_overlay(item, result_from_pi(message, raw_id if isinstance(raw_id, str) else ""))
    if overlay:
        message[ITEM_KEY] = overlay
    return message
