"""Pydantic AI messages as pi agent messages, and their lossless JSON
(pure; **beyond pi**).

Owns the mapping :class:`~.store.PiConversationStore` writes, so that pi
builds the context a conversation holds:

* a ``ModelRequest`` gives, in order: one pi ``system`` message when it holds
  system prompt parts (their texts joined by a blank line as ``content``) or
  when its ``instructions`` differ from those in effect before it (then
  ``sections: {"instructions": text}``, or ``null`` when they were
  dropped; pi replays the sections of every system message into one
  prompt); then per part: a user prompt is a ``user`` message (text as
  text, an image given as bytes as an image block, any other file as a
  one-line ``[kind: url or media type]`` text), a tool return a
  ``toolResult`` (``isError`` unless its outcome is ``success``; the text
  the model was shown), a retry without a tool call a ``user`` message
  holding the feedback the model was shown; other parts (speech,
  capability and instruction deltas, compaction parts) give nothing;
* a ``ModelResponse`` is one ``assistant`` message: text parts are text
  blocks, thinking parts thinking blocks (the signature as
  ``thinkingSignature``), tool calls ``toolCall`` blocks (``arguments`` as
  an object); provider-run tool calls, files and speech are left out of
  the pi form. ``usage`` is the request's tokens (``input`` without cache
  reads and writes), ``provider``/``model`` the response's, ``api``
  :data:`API`, ``stopReason`` ``toolUse``, ``length``, ``error`` or
  ``stop``.

What the pi form cannot hold is not lost: every message is also kept
whole as the JSON of Pydantic AI's own ``ModelMessagesTypeAdapter``
(:func:`message_json`, :func:`message_from_json`), so a loaded message
equals the saved one to the fidelity of that serializer (which, for
instance, gives bytes held in an ``Any`` field back as their base64 text).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pydantic
import pydantic_core
from pydantic_ai.conversation_store import ConversationRecord
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

from ...errors import PiSessionError

__all__ = [
    "API",
    "PI_METADATA_KEY",
    "SummaryPart",
    "summary_of",
    "UnstorableValueError",
    "instructions_digest",
    "message_json",
    "message_from_json",
    "record_json",
    "record_from_json",
    "to_pi_messages",
    "time_ms",
]

API = "pydantic-ai"
"""The ``api`` of the assistant messages written for model responses."""

PI_METADATA_KEY = "pi-session"
"""The key, in a ``CompactionPart``'s ``metadata``, of what pi-session's
compaction (:class:`~.compaction.PiCompaction`) records for the pi
compaction entry: ``keptBefore`` (how many of the messages it kept come
before the summary in the conversation's log), ``tokensBefore`` and
``details`` (pi's read and modified files)."""

_MESSAGE = pydantic.TypeAdapter(ModelMessage)
_RECORD = pydantic.TypeAdapter(ConversationRecord)


class UnstorableValueError(PiSessionError, ValueError):
    """A message or record holding a value JSON cannot represent (say, an
    object in a record's ``metadata``); nothing was written."""


def _dumped(adapter: pydantic.TypeAdapter[Any], value: Any, what: str) -> str:
    """``value`` as the JSON text of ``adapter``.

    Raises:
        UnstorableValueError: ``what: <the serializer's reason>``.
    """
    try:
        return adapter.dump_json(value).decode()
    except (pydantic_core.PydanticSerializationError, TypeError, ValueError) as exc:
        raise UnstorableValueError(f"{what}: {exc}") from None


def message_json(message: ModelMessage) -> str:
    """The message as Pydantic AI's own JSON (``ModelMessagesTypeAdapter``'s
    form of one message).

    Raises:
        UnstorableValueError: a value in it cannot be serialized.
    """
    return _dumped(_MESSAGE, message, f"a {type(message).__name__} cannot be stored")


def message_from_json(text: str | bytes) -> ModelMessage:
    """The message :func:`message_json` wrote.

    Raises:
        pydantic.ValidationError: ``text`` is not one.
    """
    return _MESSAGE.validate_json(text)


def record_json(record: ConversationRecord) -> str:
    """The record as JSON (its every field).

    Raises:
        UnstorableValueError: a value in it (``metadata``, the deferred tool
            requests' metadata) cannot be serialized.
    """
    return _dumped(_RECORD, record, f"conversation {record.conversation_id!r}: its record cannot be stored")


def record_from_json(text: str | bytes) -> ConversationRecord:
    """The record :func:`record_json` wrote.

    Raises:
        pydantic.ValidationError: ``text`` is not one.
    """
    return _RECORD.validate_json(text)


@dataclass(frozen=True)
class SummaryPart:
    """A summary an application or capability wrote into a conversation
    (a ``CompactionPart`` with text in a ``ModelRequest``): written as a pi
    ``compaction`` entry.

    Attributes:
        summary: its text.
        kept_before: how many of the messages the compaction kept come
            before it in the conversation's log (0: none, or not known).
        tokens_before: the context size it replaced, in tokens (0: not known).
        details: pi's ``details`` (read and modified files), or None.
        system: the text of the system prompt parts the request holds
            with it ("" when none).
    """

    summary: str
    kept_before: int
    tokens_before: int | float
    details: dict[str, Any] | None
    system: str


def summary_of(message: ModelMessage) -> SummaryPart | None:
    """The summary ``message`` holds (see :class:`SummaryPart`), or None:
    a ``ModelRequest`` with a ``CompactionPart`` that has text and no
    provider (a provider's own compaction stays as it is)."""
    if not isinstance(message, ModelRequest):
        return None
    part = next(
        (p for p in message.parts if getattr(p, "part_kind", None) == "compaction" and getattr(p, "provider_name", None) is None and getattr(p, "content", None)),
        None,
    )
    if part is None:
        return None
    mine = (getattr(part, "metadata", None) or {}).get(PI_METADATA_KEY)
    mine = mine if isinstance(mine, dict) else {}
    kept = mine.get("keptBefore")
    tokens = mine.get("tokensBefore")
    details = mine.get("details")
    system = "\n\n".join(_text(p.content) for p in message.parts if getattr(p, "part_kind", None) == "system-prompt")  # type: ignore[union-attr]
    return SummaryPart(
        _text(part.content),  # type: ignore[union-attr]
        kept if isinstance(kept, int) and not isinstance(kept, bool) and kept > 0 else 0,
        tokens if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) else 0,
        details if isinstance(details, dict) else None,
        system,
    )


def time_ms(value: datetime | None, default: int) -> int:
    """``value`` in Unix milliseconds (pi's message ``timestamp``), or
    ``default`` when it is None."""
    if value is None:
        return default
    return int(value.timestamp() * 1000)


def instructions_digest(instructions: str | None) -> str:
    """What :func:`to_pi_messages` compares instructions by: ``""`` for
    none, else the SHA-256 of the text (hex)."""
    if instructions is None:
        return ""
    return hashlib.sha256(instructions.encode("utf-8", "surrogatepass")).hexdigest()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _user_block(item: Any) -> dict[str, Any] | None:
    """One item of a user prompt's content as a pi content block (None: left out)."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    kind = getattr(item, "kind", None)
    if kind in ("text", "structured") or (kind is None and isinstance(getattr(item, "content", None), str)):
        return {"type": "text", "text": _text(getattr(item, "content", ""))}
    if kind == "cache-point":
        return None
    data = getattr(item, "data", None)
    media_type = getattr(item, "media_type", None)
    if isinstance(data, bytes) and isinstance(media_type, str) and media_type.startswith("image/"):
        return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": media_type}
    where = getattr(item, "url", None) or media_type or type(item).__name__
    return {"type": "text", "text": f"[{kind or type(item).__name__}: {where}]"}


def _user_message(content: Any, timestamp: int) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "user", "content": content, "timestamp": timestamp}
    blocks = [block for block in map(_user_block, content) if block is not None]
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return {"role": "user", "content": blocks[0]["text"], "timestamp": timestamp}
    return {"role": "user", "content": blocks, "timestamp": timestamp}


def _tool_result_text(part: Any) -> str:
    try:
        return _text(part.model_response_str())
    except Exception:  # a content the part cannot render: show it as it is
        return _text(getattr(part, "content", ""))


def _retry_text(part: Any) -> str:
    try:
        return _text(part.model_response())
    except Exception:  # pragma: no cover - the part renders its own feedback
        return _text(getattr(part, "content", ""))


def _request_messages(message: ModelRequest, instructions_before: str | None) -> tuple[list[dict[str, Any]], str]:
    default = time_ms(message.timestamp, 0)
    system_texts: list[str] = []
    messages: list[dict[str, Any]] = []
    for part in message.parts:
        kind = getattr(part, "part_kind", None)
        stamp = time_ms(getattr(part, "timestamp", None), default)
        if kind == "system-prompt":
            system_texts.append(_text(part.content))  # type: ignore[union-attr]
        elif kind == "user-prompt":
            messages.append(_user_message(part.content, stamp))  # type: ignore[union-attr]
        elif kind in ("retry-feedback", "retry-prompt") and getattr(part, "tool_name", None) is None:
            messages.append({"role": "user", "content": _retry_text(part), "timestamp": stamp})
        elif isinstance(getattr(part, "tool_call_id", None), str) and isinstance(getattr(part, "tool_name", None), str):
            outcome = getattr(part, "outcome", "success")
            text = _tool_result_text(part) if kind != "retry-prompt" else _retry_text(part)
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": part.tool_call_id,  # type: ignore[union-attr]
                    "toolName": part.tool_name,  # type: ignore[union-attr]
                    "content": [{"type": "text", "text": text}],
                    "isError": kind == "retry-prompt" or outcome != "success",
                    "timestamp": stamp,
                }
            )
    digest = instructions_digest(message.instructions)
    system: dict[str, Any] | None = None
    if system_texts or digest != instructions_before:
        system = {"role": "system", "content": "\n\n".join(system_texts)}
        if digest != instructions_before and (instructions_before is not None or message.instructions is not None):
            system["sections"] = {"instructions": message.instructions}
        system["timestamp"] = default
        if system["content"] == "" and "sections" not in system:
            system = None
    return ([system] if system is not None else []) + messages, digest


def _usage(message: ModelResponse) -> dict[str, Any]:
    usage = message.usage
    cache_read = int(getattr(usage, "cache_read_tokens", 0) or 0)
    cache_write = int(getattr(usage, "cache_write_tokens", 0) or 0)
    input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    return {
        "input": max(input_tokens - cache_read - cache_write, 0),
        "output": output_tokens,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_tokens + output_tokens,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _arguments(part: Any) -> Any:
    try:
        return part.args_as_dict()
    except Exception:  # arguments that are not a JSON object: kept as text
        return {"arguments": _text(part.args)}


def _response_message(message: ModelResponse) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    calls = False
    for part in message.parts:
        kind = getattr(part, "part_kind", None)
        if kind == "text":
            content.append({"type": "text", "text": _text(part.content)})  # type: ignore[union-attr]
        elif kind == "thinking":
            block: dict[str, Any] = {"type": "thinking", "thinking": _text(part.content)}  # type: ignore[union-attr]
            signature = getattr(part, "signature", None)
            if isinstance(signature, str):
                block["thinkingSignature"] = signature
            content.append(block)
        elif kind in ("tool-call", "tool-search-call", "capability-load-call") and isinstance(getattr(part, "tool_call_id", None), str):
            content.append({"type": "toolCall", "id": part.tool_call_id, "name": part.tool_name, "arguments": _arguments(part)})  # type: ignore[union-attr]
            calls = True
    finish = message.finish_reason
    stop = "toolUse" if calls else "length" if finish == "length" else "error" if finish == "error" else "stop"
    return {
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": message.provider_name or API,
        "model": message.model_name or "unknown",
        "usage": _usage(message),
        "stopReason": stop,
        "timestamp": time_ms(message.timestamp, 0),
    }


def to_pi_messages(message: ModelMessage, instructions_before: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """The pi agent messages of one Pydantic AI message (see the module
    docstring), in order; may be none.

    Args:
        instructions_before: :func:`instructions_digest` of the
            instructions in effect on the pi path before this message, or
            None when unknown (then a request's instructions, if any, are
            written again).

    Returns:
        ``(messages, instructions after)``: the digest in effect after it.
    """
    if isinstance(message, ModelRequest):
        return _request_messages(message, instructions_before)
    if isinstance(message, ModelResponse):
        return [_response_message(message)], instructions_before
    return [], instructions_before  # pragma: no cover - ModelMessage has two kinds

