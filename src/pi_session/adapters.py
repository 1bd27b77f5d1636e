"""Provider request adapters that always produce a valid request (SPEC 5, **beyond pi**).

Size (over 500 lines): three providers' renderers and validators over one canonical form. Splitting it into a package (canonical form, one renderer per provider, pairing repair, validation) is still to do.

A session context (``build_session_context(...)["messages"]``) is a list of
agent messages. Turning it into a provider request can fail in ways pi's own
files make easy to hit: an assistant message that was aborted or errored
leaves tool calls without results, a compaction can keep a tool result whose
call was summarized away, a user message can land between a call and its
result, a file edited by hand can repeat a result. The adapters here fix the
tool-call pairing, report every repair, and render the request pieces for
three APIs:

* :func:`to_openai_chat` → OpenAI Chat Completions ``messages``;
* :func:`to_openai_responses` → OpenAI Responses ``input`` items (+ ``instructions``);
* :func:`to_anthropic_messages` → Anthropic Messages ``messages`` (+ ``system``).

Each returns an :class:`AdapterResult`; ``result.payload()`` is the dict to
spread into the SDK call (``client.chat.completions.create(model=...,
**result.payload())``). The matching validators
(:func:`validate_openai_chat`, :func:`validate_openai_responses`,
:func:`validate_anthropic_messages`) list the rules a payload breaks; an
adapter's output always validates clean.

Pairing rules applied for every provider (all repairs are reported as
:class:`Repair`, ``message_index`` pointing into the ``messages`` argument):

* ``orphan_result_dropped``: a toolResult whose call id was not made by an
  earlier assistant message in the context (including one that only appears
  *after* the result) is dropped.
* ``duplicate_result_dropped``: a second result for an already answered call
  is dropped (the first one wins).
* ``result_moved``: a result separated from its call by a user turn (or a
  later assistant turn) is moved back to directly after its call.
* ``missing_result_inserted``: a call that never gets a result (typical for
  aborted/errored assistant messages and interrupted tool runs) is answered
  with an error result saying no result was recorded.
* ``duplicate_call_id_renamed`` / ``missing_call_id_assigned``: calls sharing
  an id, or without one, get a fresh unique id (results pair with the first
  unanswered call of that id).

Other normalizations: thinking blocks are dropped by default (Anthropic only
accepts them with the provider's signature, OpenAI Chat has no place for
them, Responses needs encrypted reasoning items); ``thinking="text"`` turns
non-empty ones into plain text instead. Empty and whitespace-only text
blocks are dropped; an assistant message left with neither text nor tool
calls is dropped (``empty_assistant_dropped``), an empty user message too
(``empty_user_dropped``). Images with a type the APIs do not accept (only
PNG, JPEG, GIF and WebP are) or without data become a short text note
(``image_replaced``). Tool-call arguments that are not a JSON object
(``arguments_coerced``) are parsed when they are a JSON object's text,
else become ``{}`` (null, "") or ``{"value": original}``. Tool-call ids are made provider-safe
(``[A-Za-z0-9_-]``, at most 40 characters for Chat, 64 otherwise; the part
after ``|`` of an OpenAI Responses ``call|item`` id is dropped) and kept
unique; this is not reported. An empty tool result gets the text
``(no output)``.

Text is always valid Unicode (**beyond pi**): a lone UTF-16 surrogate (half
of a character, e.g. an emoji a tool cut in two, stored in the file as a
JSON escape like ``\ud83d``) cannot be encoded as UTF-8, and the official
SDKs raise ``UnicodeEncodeError`` before sending it. Every string of the
request (texts, tool names, ids, tool-call arguments, also arguments parsed
from JSON text, the system prompt) is made well formed with
:func:`pi_session.text.well_formed`: a lone surrogate becomes U+FFFD, a
surrogate pair its character (``lone_surrogates_replaced``, per message;
``message_index`` None for the system prompt). The session is not changed.
Every payload an adapter returns encodes as UTF-8; the validators report
lone surrogates.

These are pure functions: no I/O, inputs are never mutated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .context import convert_to_llm
from .jsonio import js_stringify
from .text import find_lone_surrogates, is_well_formed, lone_surrogates, well_formed, well_formed_deep

__all__ = [
    "Repair",
    "AdapterResult",
    "to_openai_chat",
    "to_openai_responses",
    "to_anthropic_messages",
    "validate_openai_chat",
    "validate_openai_responses",
    "validate_anthropic_messages",
    "unanswered_tool_calls",
    "orphan_tool_results",
    "SUPPORTED_IMAGE_TYPES",
    "MISSING_RESULT_TEXT",
]

SUPPORTED_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image MIME types all three APIs accept as inline base64 data."""

MISSING_RESULT_TEXT = (
    "Error: this tool call has no recorded result (the run was interrupted or the "
    "result was lost), so its outcome is unknown."
)
"""Text of the error result inserted for a call that never got one."""

EMPTY_RESULT_TEXT = "(no output)"
PLACEHOLDER_USER_TEXT = "(The conversation below continues from an earlier point.)"
TOOL_IMAGES_TEXT = "Images returned by the tool calls above:"

ThinkingMode = Literal["drop", "text"]


@dataclass(frozen=True)
class Repair:
    """One change an adapter made so the request is valid.

    Attributes:
        kind: what was done (``orphan_result_dropped``,
            ``duplicate_result_dropped``, ``result_moved``,
            ``missing_result_inserted``, ``duplicate_call_id_renamed``,
            ``missing_call_id_assigned``, ``empty_assistant_dropped``,
            ``empty_user_dropped``, ``placeholder_user_inserted``,
            ``image_replaced``, ``arguments_coerced``,
            ``invalid_message_dropped``, ``lone_surrogates_replaced``).
        tool_call_id: the (original) tool call id concerned, or None.
        message_index: index into the ``messages`` list given to the adapter
            of the message concerned (for an inserted result: the assistant
            message that made the call), or None (placeholder user message).
        description: one line for people.
    """

    kind: str
    tool_call_id: str | None
    message_index: int | None
    description: str

    def to_dict(self) -> dict[str, Any]:
        """``{kind, toolCallId, messageIndex, description}`` for JSON output."""
        return {
            "kind": self.kind,
            "toolCallId": self.tool_call_id,
            "messageIndex": self.message_index,
            "description": self.description,
        }


@dataclass
class AdapterResult:
    """The request pieces an adapter produced.

    Attributes:
        provider: ``"openai-chat"``, ``"openai-responses"`` or ``"anthropic-messages"``.
        messages: Chat: the ``messages`` list (the system message first when a
            system prompt was given); Anthropic: the ``messages`` list; None
            for Responses.
        input: Responses: the ``input`` items; None otherwise.
        system: the system prompt given (Chat already carries it in
            ``messages``; Responses sends it as ``instructions``, Anthropic
            as ``system``).
        repairs: every repair made, in message order.
    """

    provider: str
    messages: list[dict[str, Any]] | None = None
    input: list[dict[str, Any]] | None = None
    system: str | None = None
    repairs: list[Repair] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """The keyword arguments for the SDK call (without model, tools, limits):
        Chat ``{messages}``, Responses ``{input[, instructions]}``, Anthropic
        ``{messages[, system]}``."""
        if self.provider == "openai-chat":
            return {"messages": self.messages}
        if self.provider == "openai-responses":
            out: dict[str, Any] = {"input": self.input}
            if self.system:
                out["instructions"] = self.system
            return out
        out = {"messages": self.messages}
        if self.system:
            out["system"] = self.system
        return out


# --------------------------------------------------------------------------
# Canonical form: user turns and assistant turns whose calls carry exactly
# one result each. Built once, rendered per provider.
# --------------------------------------------------------------------------


@dataclass
class _Result:
    blocks: list[dict[str, Any]]  # normalized text/image blocks
    is_error: bool
    src: int | None


@dataclass
class _Call:
    orig_id: str | None
    uid: str  # unique across the context
    name: str
    arguments: dict[str, Any]
    src: int
    result: _Result | None = None
    moved_from: int | None = None  # src of a result that arrived out of position


@dataclass
class _Turn:
    role: str  # "user" | "assistant"
    blocks: list[dict[str, Any]]  # user: text/image; assistant: text
    src: int
    calls: list[_Call] = field(default_factory=list)
    from_string: bool = False  # user content was a plain string


def _text_blocks_of(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return []


def _norm_user_blocks(content: Any, src: int, repairs: list[Repair], what: str) -> list[dict[str, Any]]:
    """Text and image blocks of a user/tool-result content, empties removed."""
    out: list[dict[str, Any]] = []
    for block in _text_blocks_of(content):
        if not isinstance(block, Mapping):
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                out.append({"type": "text", "text": text})
        elif btype == "image":
            mime = block.get("mimeType")
            data = block.get("data")
            if mime in SUPPORTED_IMAGE_TYPES and isinstance(data, str) and data:
                out.append({"type": "image", "mimeType": mime, "data": data})
            else:
                repairs.append(
                    Repair(
                        "image_replaced",
                        None,
                        src,
                        f"an image in {what} ({mime or 'no type'}"
                        f"{'' if isinstance(data, str) and data else ', no data'}) was replaced by a text note",
                    )
                )
                out.append({"type": "text", "text": f"(image omitted: {mime or 'unknown type'} cannot be sent)"})
    return out


def _coerce_arguments(args: Any) -> tuple[dict[str, Any], bool]:
    """Arguments as a JSON object; returns (object, changed). A JSON string
    holding an object is parsed; anything else non-object becomes
    ``{"value": original}`` (or ``{}`` for null/empty)."""
    if isinstance(args, dict):
        return args, False
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed, True
        return ({"value": args} if args else {}), True
    if args is None:
        return {}, True
    return {"value": args}, True


def _llm_messages_with_index(messages: Sequence[Any]) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            continue
        for converted in convert_to_llm([m]):
            out.append((i, converted))
    return out


def _well_formed_message(m: dict[str, Any], src: int, repairs: list[Repair]) -> dict[str, Any]:
    """``m`` with lone UTF-16 surrogates replaced by U+FFFD in every string
    (:func:`pi_session.text.well_formed_deep`), reported as
    ``lone_surrogates_replaced``; ``m`` itself when it holds none."""
    fixed = well_formed_deep(m)
    if fixed is not m:
        n = len(find_lone_surrogates(m))
        if n:
            repairs.append(
                Repair(
                    "lone_surrogates_replaced",
                    None,
                    src,
                    f"{n} lone UTF-16 surrogate(s) (half of a character, e.g. an emoji cut in two) "
                    "were sent as U+FFFD",
                )
            )
    return fixed


def _system_text(system_prompt: str | None, repairs: list[Repair]) -> str | None:
    """The system prompt made well formed (reported like message text, with
    ``message_index`` None)."""
    if not isinstance(system_prompt, str) or is_well_formed(system_prompt):
        return system_prompt
    n = len(lone_surrogates(system_prompt))
    if n:
        repairs.insert(
            0,
            Repair(
                "lone_surrogates_replaced",
                None,
                None,
                f"{n} lone UTF-16 surrogate(s) in the system prompt were sent as U+FFFD",
            ),
        )
    return well_formed(system_prompt)


def _system_prompt_for(messages: Sequence[Any], system_prompt: str | None) -> str | None:
    """The system prompt to send: ``system_prompt`` when given, else the
    prompt the context's pi 1.6 system messages replay to
    (:func:`pi_session.context.get_current_system_message`), as pi sends it
    to providers that take no system message mid-conversation; None when
    there is neither."""
    if system_prompt is not None:
        return system_prompt
    from .context import get_current_system_message, system_message_text

    replayed = get_current_system_message(m for m in messages if isinstance(m, Mapping))
    return system_message_text(replayed) or None if replayed is not None else None


def _canonicalize(messages: Sequence[Any], thinking: ThinkingMode) -> tuple[list[_Turn], list[Repair]]:
    if thinking not in ("drop", "text"):
        raise ValueError(f"thinking must be 'drop' or 'text', not {thinking!r}")
    repairs: list[Repair] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            repairs.append(Repair("invalid_message_dropped", None, i, "a message that is not an object was dropped"))
    llm = _llm_messages_with_index(messages)
    llm = [(src, _well_formed_message(m, src, repairs)) for src, m in llm]

    # Every call id made anywhere, to tell "result before its call" from "unknown call".
    all_call_ids: set[str] = set()
    for _, m in llm:
        if m.get("role") == "assistant":
            for b in _text_blocks_of(m.get("content")):
                if isinstance(b, Mapping) and b.get("type") == "toolCall" and isinstance(b.get("id"), str):
                    all_call_ids.add(b["id"])

    turns: list[_Turn] = []
    used_uids: set[str] = set()
    calls_by_id: dict[str, list[_Call]] = {}
    open_calls: list[_Call] = []  # calls of the latest assistant turn, until another turn starts
    counter = 0

    def fresh_uid(base: str) -> str:
        nonlocal counter
        while True:
            counter += 1
            uid = f"{base}_{counter}"
            if uid not in used_uids and uid not in all_call_ids:
                return uid

    for src, m in llm:
        role = m.get("role")
        if role == "system":
            continue  # pi 1.6 system messages: replayed into the system prompt (see _system_prompt_for)
        if role == "user":
            open_calls = []
            blocks = _norm_user_blocks(m.get("content"), src, repairs, "a user message")
            if not blocks:
                repairs.append(Repair("empty_user_dropped", None, src, "a user message with no content was dropped"))
                continue
            turns.append(_Turn("user", blocks, src, from_string=isinstance(m.get("content"), str)))
        elif role == "assistant":
            open_calls = []
            blocks = []  # list[dict[str, Any]], as declared in the user branch above
            calls: list[_Call] = []
            for b in _text_blocks_of(m.get("content")):
                if not isinstance(b, Mapping):
                    continue
                btype = b.get("type")
                if btype == "text":
                    text = b.get("text")
                    if isinstance(text, str) and text.strip():
                        blocks.append({"type": "text", "text": text})
                elif btype == "thinking":
                    text = b.get("thinking")
                    if thinking == "text" and isinstance(text, str) and text.strip():
                        blocks.append({"type": "text", "text": text})
                elif btype == "toolCall":
                    orig = b.get("id") if isinstance(b.get("id"), str) and b.get("id") else None
                    if orig is None:
                        uid = fresh_uid("call")
                        repairs.append(
                            Repair("missing_call_id_assigned", None, src, f"a tool call without an id was given id {uid}")
                        )
                    elif orig in used_uids:
                        uid = fresh_uid(orig)
                        repairs.append(
                            Repair(
                                "duplicate_call_id_renamed",
                                orig,
                                src,
                                f"tool call id {orig} was already used by an earlier call; renamed to {uid}",
                            )
                        )
                    else:
                        uid = orig
                    used_uids.add(uid)
                    args, changed = _coerce_arguments(b.get("arguments"))
                    args = well_formed_deep(args)  # arguments parsed from text may hold \\ud800 escapes
                    if changed:
                        repairs.append(
                            Repair("arguments_coerced", orig, src, "tool call arguments were not a JSON object")
                        )
                    raw_name = b.get("name")
                    name = raw_name if isinstance(raw_name, str) and raw_name else "unknown_tool"
                    call = _Call(orig, uid, name, args, src)
                    calls.append(call)
                    if orig is not None:
                        calls_by_id.setdefault(orig, []).append(call)
            if not blocks and not calls:
                reason = m.get("stopReason")
                note = f" (stopReason {reason})" if reason in ("aborted", "error") else ""
                repairs.append(
                    Repair("empty_assistant_dropped", None, src, f"an assistant message with no text or tool calls{note} was dropped")
                )
                continue
            turns.append(_Turn("assistant", blocks, src, calls=calls))
            open_calls = calls
        elif role == "toolResult":
            tid = m.get("toolCallId")
            tid = tid if isinstance(tid, str) else None
            result = _Result(
                _norm_user_blocks(m.get("content"), src, repairs, "a tool result"), m.get("isError") is True, src
            )
            candidates = calls_by_id.get(tid, []) if tid is not None else []
            target = next((c for c in open_calls if c.orig_id == tid and c.result is None), None)
            if target is not None:
                target.result = result
                continue
            target = next((c for c in candidates if c.result is None), None)
            if target is not None:
                target.result = result
                target.moved_from = src
                continue
            if candidates:
                repairs.append(
                    Repair(
                        "duplicate_result_dropped",
                        tid,
                        src,
                        f"a second result for tool call {tid} was dropped (the first one is kept)",
                    )
                )
            elif tid is not None and tid in all_call_ids:
                repairs.append(
                    Repair(
                        "orphan_result_dropped",
                        tid,
                        src,
                        f"the result for tool call {tid} comes before the call itself and was dropped",
                    )
                )
            else:
                repairs.append(
                    Repair(
                        "orphan_result_dropped",
                        tid,
                        src,
                        f"the result for tool call {tid} has no matching call in this context and was dropped",
                    )
                )

    # Reports for calls, in call order.
    for turn in turns:
        for call in turn.calls:
            if call.result is None:
                repairs.append(
                    Repair(
                        "missing_result_inserted",
                        call.orig_id,
                        call.src,
                        f"tool call {call.orig_id or call.uid} ({call.name}) had no result; an error result was inserted",
                    )
                )
            elif call.moved_from is not None:
                repairs.append(
                    Repair(
                        "result_moved",
                        call.orig_id,
                        call.moved_from,
                        f"the result for tool call {call.orig_id} was separated from its call and was moved next to it",
                    )
                )
    repairs.sort(key=lambda r: (r.message_index if r.message_index is not None else -1))
    return turns, repairs


def _result_of(call: _Call) -> _Result:
    if call.result is not None:
        return call.result
    return _Result([{"type": "text", "text": MISSING_RESULT_TEXT}], True, None)


_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


class _IdMap:
    """Maps canonical call uids to provider-safe, unique ids."""

    def __init__(self, max_len: int) -> None:
        self.max_len = max_len
        self.map: dict[str, str] = {}
        self.taken: set[str] = set()

    def __call__(self, uid: str) -> str:
        got = self.map.get(uid)
        if got is not None:
            return got
        base = _UNSAFE_ID.sub("_", uid.split("|", 1)[0])[: self.max_len] or "call"
        candidate = base
        n = 1
        while candidate in self.taken:
            n += 1
            suffix = f"_{n}"
            candidate = base[: self.max_len - len(suffix)] + suffix
        self.taken.add(candidate)
        self.map[uid] = candidate
        return candidate


def _joined_text(blocks: Iterable[Mapping[str, Any]], sep: str) -> str:
    return sep.join(b["text"] for b in blocks if b.get("type") == "text")


def _data_url(block: Mapping[str, Any]) -> str:
    return f"data:{block['mimeType']};base64,{block['data']}"


# --------------------------------------------------------------------------
# OpenAI Chat Completions
# --------------------------------------------------------------------------


def to_openai_chat(
    messages: Sequence[Mapping[str, Any]],
    system_prompt: str | None = None,
    *,
    thinking: ThinkingMode = "drop",
) -> AdapterResult:
    """Render a context for the OpenAI Chat Completions API.

    Args:
        messages: agent messages (``build_session_context(...)["messages"]``;
            ``convert_to_llm`` is applied here). Append the new user prompt
            to this list before calling, if there is one.
        system_prompt: sent as the first message (role ``system``) when
            non-empty. When None, the prompt replayed from the context's
            pi 1.6 ``system`` messages is sent (they never appear in place).
        thinking: ``"drop"`` (default) or ``"text"`` (thinking becomes text).

    Returns:
        :class:`AdapterResult` with ``messages``: user messages (string or
        ``text``/``image_url`` parts), assistant messages (``content`` string
        or None, ``tool_calls`` ``[{id, type:"function", function:{name,
        arguments: JSON string}}]``), and right after each assistant with
        calls one ``{role:"tool", tool_call_id, content}`` per call, in call
        order. Tool-result images (tool messages only take text) follow the
        tool messages as one user message. Call ids: at most 40 characters.

    Raises:
        ValueError: ``thinking`` is not "drop" or "text".
    """
    turns, repairs = _canonicalize(messages, thinking)
    system_prompt = _system_text(_system_prompt_for(messages, system_prompt), repairs)
    ids = _IdMap(40)
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    for turn in turns:
        if turn.role == "user":
            if turn.from_string and all(b["type"] == "text" for b in turn.blocks):
                out.append({"role": "user", "content": _joined_text(turn.blocks, "\n")})
            else:
                out.append({"role": "user", "content": [_chat_part(b) for b in turn.blocks]})
            continue
        msg: dict[str, Any] = {"role": "assistant", "content": _joined_text(turn.blocks, "\n\n") or None}
        if turn.calls:
            msg["tool_calls"] = [
                {
                    "id": ids(c.uid),
                    "type": "function",
                    "function": {"name": c.name, "arguments": js_stringify(c.arguments)},
                }
                for c in turn.calls
            ]
        out.append(msg)
        images: list[dict[str, Any]] = []
        for c in turn.calls:
            res = _result_of(c)
            text = _joined_text(res.blocks, "\n")
            images.extend(_chat_part(b) for b in res.blocks if b["type"] == "image")
            if not text:
                text = "(see the attached image)" if any(b["type"] == "image" for b in res.blocks) else EMPTY_RESULT_TEXT
            out.append({"role": "tool", "tool_call_id": ids(c.uid), "content": text})
        if images:
            out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})
    return AdapterResult("openai-chat", messages=well_formed_deep(out), system=system_prompt, repairs=repairs)


def _chat_part(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    return {"type": "image_url", "image_url": {"url": _data_url(block)}}


# --------------------------------------------------------------------------
# OpenAI Responses
# --------------------------------------------------------------------------


def to_openai_responses(
    messages: Sequence[Mapping[str, Any]],
    system_prompt: str | None = None,
    *,
    thinking: ThinkingMode = "drop",
) -> AdapterResult:
    """Render a context for the OpenAI Responses API (stateless, ``store``
    not needed: no item ids, no reasoning items are sent).

    Args:
        messages: agent messages, as for :func:`to_openai_chat`.
        system_prompt: kept in ``system``; ``payload()`` sends it as ``instructions``.
        thinking: ``"drop"`` (default) or ``"text"``.

    Returns:
        :class:`AdapterResult` with ``input``: ``{role:"user", content:
        [input_text|input_image]}``, ``{role:"assistant", content: str}``,
        ``{type:"function_call", call_id, name, arguments: JSON string}`` for
        each call, then one ``{type:"function_call_output", call_id, output}``
        per call (``output`` a string, or ``input_text``/``input_image`` parts
        when the result has images). Call ids: at most 64 characters.

    Raises:
        ValueError: ``thinking`` is not "drop" or "text".
    """
    turns, repairs = _canonicalize(messages, thinking)
    system_prompt = _system_text(_system_prompt_for(messages, system_prompt), repairs)
    ids = _IdMap(64)
    items: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "user":
            items.append({"role": "user", "content": [_responses_part(b) for b in turn.blocks]})
            continue
        text = _joined_text(turn.blocks, "\n\n")
        if text:
            items.append({"role": "assistant", "content": text})
        for c in turn.calls:
            items.append(
                {"type": "function_call", "call_id": ids(c.uid), "name": c.name, "arguments": js_stringify(c.arguments)}
            )
        for c in turn.calls:
            res = _result_of(c)
            output: Any
            if any(b["type"] == "image" for b in res.blocks):
                output = [_responses_part(b) for b in res.blocks]
            else:
                output = _joined_text(res.blocks, "\n") or EMPTY_RESULT_TEXT
            items.append({"type": "function_call_output", "call_id": ids(c.uid), "output": output})
    return AdapterResult("openai-responses", input=well_formed_deep(items), system=system_prompt, repairs=repairs)


def _responses_part(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "input_text", "text": block["text"]}
    return {"type": "input_image", "detail": "auto", "image_url": _data_url(block)}


# --------------------------------------------------------------------------
# Anthropic Messages
# --------------------------------------------------------------------------


def to_anthropic_messages(
    messages: Sequence[Mapping[str, Any]],
    system_prompt: str | None = None,
    *,
    thinking: ThinkingMode = "drop",
) -> AdapterResult:
    """Render a context for the Anthropic Messages API.

    Args:
        messages: agent messages, as for :func:`to_openai_chat`.
        system_prompt: kept in ``system``; ``payload()`` sends it as ``system``.
        thinking: ``"drop"`` (default; replaying thinking needs Anthropic's
            signature, which other providers' messages lack) or ``"text"``.

    Returns:
        :class:`AdapterResult` with ``messages`` alternating user/assistant,
        starting with user (a placeholder user message is inserted, and
        reported, when the context starts with the assistant). Consecutive
        same-role turns are merged. Assistant content: ``text`` and
        ``tool_use`` ``{id, name, input}`` blocks; the next user message
        starts with one ``tool_result`` ``{tool_use_id, content, is_error?}``
        per call, followed by the user's own blocks; images are ``{type:
        "image", source:{type:"base64", media_type, data}}``. A final
        assistant message has trailing whitespace removed (the API rejects
        it). Call ids: ``[A-Za-z0-9_-]``, at most 64 characters.

    Raises:
        ValueError: ``thinking`` is not "drop" or "text".
    """
    turns, repairs = _canonicalize(messages, thinking)
    system_prompt = _system_text(_system_prompt_for(messages, system_prompt), repairs)
    ids = _IdMap(64)
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for turn in turns:
        if turn.role == "user":
            add("user", [_anthropic_block(b) for b in turn.blocks])
            continue
        blocks = [_anthropic_block(b) for b in turn.blocks]
        blocks.extend({"type": "tool_use", "id": ids(c.uid), "name": c.name, "input": c.arguments} for c in turn.calls)
        add("assistant", blocks)
        if turn.calls:
            results = []
            for c in turn.calls:
                res = _result_of(c)
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": ids(c.uid),
                    "content": [_anthropic_block(b) for b in res.blocks] or [{"type": "text", "text": EMPTY_RESULT_TEXT}],
                }
                if res.is_error:
                    block["is_error"] = True
                results.append(block)
            add("user", results)

    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": PLACEHOLDER_USER_TEXT}]})
        repairs.insert(
            0,
            Repair(
                "placeholder_user_inserted",
                None,
                None,
                "the context starts with an assistant message; a placeholder user message was put first",
            ),
        )
    if out and out[-1]["role"] == "assistant":
        last = out[-1]["content"][-1]
        if last["type"] == "text":
            out[-1]["content"][-1] = {"type": "text", "text": last["text"].rstrip()}
    return AdapterResult("anthropic-messages", messages=well_formed_deep(out), system=system_prompt, repairs=repairs)


def _anthropic_block(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}}


# --------------------------------------------------------------------------
# Pairing helpers on agent messages
# --------------------------------------------------------------------------


def unanswered_tool_calls(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls that get no result in position.

    A call is answered in position when a toolResult with its id follows the
    calling assistant message before any other user or assistant message
    (after ``convert_to_llm``: bashExecution, custom and summary messages
    count as user messages; bashExecution with ``excludeFromContext`` does
    not count).

    Args:
        messages: agent messages (a context's messages).

    Returns:
        ``[{"index": i, "toolCallId": id, "name": name}]`` with ``i`` the
        index of the calling assistant message in ``messages``.
    """
    out: list[dict[str, Any]] = []
    pending: list[tuple[int, Any, Any]] = []
    answered: set[Any] = set()

    def flush() -> None:
        for idx, cid, name in pending:
            if cid not in answered:
                out.append({"index": idx, "toolCallId": cid, "name": name})

    for i, m in _llm_messages_with_index(messages):
        role = m.get("role")
        if role == "toolResult":
            answered.add(m.get("toolCallId"))
            continue
        flush()
        pending, answered = [], set()
        if role == "assistant":
            for b in _text_blocks_of(m.get("content")):
                if isinstance(b, Mapping) and b.get("type") == "toolCall":
                    pending.append((i, b.get("id"), b.get("name")))
    flush()
    return out


def orphan_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool results whose call was not made by an earlier assistant message.

    Args:
        messages: agent messages (a context's messages).

    Returns:
        ``[{"index": i, "toolCallId": id}]`` with ``i`` the index of the
        toolResult in ``messages``. Results that are merely out of position
        (a user message between call and result) or duplicated are not
        orphans; see :func:`unanswered_tool_calls` and the adapters' repairs.
    """
    seen: set[Any] = set()
    out: list[dict[str, Any]] = []
    for i, m in _llm_messages_with_index(messages):
        role = m.get("role")
        if role == "assistant":
            for b in _text_blocks_of(m.get("content")):
                if isinstance(b, Mapping) and b.get("type") == "toolCall":
                    seen.add(b.get("id"))
        elif role == "toolResult" and m.get("toolCallId") not in seen:
            out.append({"index": i, "toolCallId": m.get("toolCallId")})
    return out


# --------------------------------------------------------------------------
# Validators
# --------------------------------------------------------------------------

_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def _payload_list(payload: Any, key: str) -> Any:
    if isinstance(payload, AdapterResult):
        return payload.input if key == "input" else payload.messages
    if isinstance(payload, Mapping):
        return payload.get(key)
    return payload


def _is_json_object_text(s: Any) -> bool:
    if not isinstance(s, str):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except ValueError:
        return False


def _unicode_problems(value: Any, path: str, problems: list[str]) -> None:
    """One line per string of ``value`` holding lone UTF-16 surrogates
    (JSON text in tool-call ``arguments`` strings is parsed and checked too:
    a ``\\ud83d`` escape there decodes to one)."""
    grouped: dict[str, list[tuple[int, str]]] = {}
    for where, index, code in find_lone_surrogates(value, path):
        grouped.setdefault(where, []).append((index, code))
    for where, found in grouped.items():
        index, code = found[0]
        problems.append(
            f"{where}: {len(found)} lone UTF-16 surrogate(s) (first {code} at character {index}); "
            "not valid Unicode, the SDKs cannot encode it"
        )
    for where, text in _argument_texts(value, path):
        if "\\u" in text:
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            decoded = find_lone_surrogates(parsed)
            if decoded:
                problems.append(
                    f"{where}: the JSON text decodes to {len(decoded)} lone UTF-16 surrogate(s) "
                    f"(first {decoded[0][2]}); not valid Unicode"
                )


def _argument_texts(value: Any, path: str) -> Iterable[tuple[str, str]]:
    """(path, text) of every string under an ``arguments`` key."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, Mapping):
            for k, item in v.items():
                sub = f"{where}.{k}" if where else str(k)
                if k == "arguments" and isinstance(item, str):
                    yield sub, item
                else:
                    stack.append((sub, item))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(v))


def _nonblank(s: Any) -> bool:
    return isinstance(s, str) and bool(s.strip())


def _check_data_url(url: Any, where: str, problems: list[str]) -> None:
    if not isinstance(url, str) or not url:
        problems.append(f"{where}: image url missing")
        return
    if url.startswith("data:"):
        m = re.match(r"^data:([^;,]+);base64,(.+)$", url, re.S)
        if not m:
            problems.append(f"{where}: malformed data URL")
        elif m.group(1) not in SUPPORTED_IMAGE_TYPES:
            problems.append(f"{where}: unsupported image type {m.group(1)}")
    elif not url.startswith(("http://", "https://")):
        problems.append(f"{where}: image url is neither a data URL nor http(s)")


def validate_openai_chat(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the OpenAI Chat Completions ``messages`` a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``messages``, or the
            messages list itself.
        allow_empty: when False an empty list is a violation.

    Returns:
        One line per violation (``messages[i]...: problem``); empty when valid.
        Checked: roles; user content non-empty (string or ``text`` /
        ``image_url`` parts); assistant has content or ``tool_calls``; call
        shape (id ≤ 40 chars, unique; type function; name; arguments a JSON
        object text); each assistant's calls answered by exactly the run of
        ``tool`` messages directly after it; no other tool messages; no
        string (nor the JSON text of ``arguments``) holds a lone UTF-16
        surrogate.
    """
    msgs = _payload_list(payload, "messages")
    problems: list[str] = []
    if not isinstance(msgs, list):
        return ["messages: not a list"]
    if not msgs and not allow_empty:
        problems.append("messages: empty")
    seen_ids: set[str] = set()
    expecting: list[str] | None = None  # call ids of the assistant whose tool run we are in
    answered: set[str] = set()

    def close(at: str) -> None:
        nonlocal expecting
        if expecting is not None:
            missing = [c for c in expecting if c not in answered]
            if missing:
                problems.append(f"{at}: tool calls without a tool message right after the assistant: {missing}")
        expecting = None

    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not an object")
            continue
        role = m.get("role")
        if role != "tool":
            close(w)
        content = m.get("content")
        if role in ("system", "developer"):
            if not _nonblank(content) and not (isinstance(content, list) and content):
                problems.append(f"{w}: {role} content empty")
        elif role == "user":
            if isinstance(content, str):
                if not content:
                    problems.append(f"{w}: user content empty")
            elif isinstance(content, list) and content:
                for j, part in enumerate(content):
                    pw = f"{w}.content[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype == "text":
                        if not isinstance(part.get("text"), str):
                            problems.append(f"{pw}: text missing")
                    elif ptype == "image_url":
                        iu = part.get("image_url")
                        _check_data_url(iu.get("url") if isinstance(iu, Mapping) else None, pw, problems)
                    else:
                        problems.append(f"{pw}: unknown part type {ptype!r}")
            else:
                problems.append(f"{w}: user content must be a non-empty string or part list")
        elif role == "assistant":
            calls = m.get("tool_calls")
            has_content = (isinstance(content, str) and content != "") or (isinstance(content, list) and content)
            if content is not None and not isinstance(content, (str, list)):
                problems.append(f"{w}: assistant content must be a string, parts or null")
            if calls is not None and (not isinstance(calls, list) or not calls):
                problems.append(f"{w}: tool_calls must be a non-empty list when present")
                calls = None
            if not has_content and not calls:
                problems.append(f"{w}: assistant message has neither content nor tool_calls")
            if calls:
                expecting, answered = [], set()
                for j, c in enumerate(calls):
                    cw = f"{w}.tool_calls[{j}]"
                    if not isinstance(c, Mapping):
                        problems.append(f"{cw}: not an object")
                        continue
                    cid = c.get("id")
                    if not isinstance(cid, str) or not cid:
                        problems.append(f"{cw}: id missing")
                        continue
                    if len(cid) > 40:
                        problems.append(f"{cw}: id longer than 40 characters")
                    if cid in seen_ids:
                        problems.append(f"{cw}: duplicate tool call id {cid}")
                    seen_ids.add(cid)
                    expecting.append(cid)
                    if c.get("type") != "function":
                        problems.append(f"{cw}: type must be 'function'")
                    fn = c.get("function")
                    if not isinstance(fn, Mapping) or not _nonblank(fn.get("name")):
                        problems.append(f"{cw}: function name missing")
                    elif not _is_json_object_text(fn.get("arguments")):
                        problems.append(f"{cw}: arguments must be a JSON object encoded as a string")
        elif role == "tool":
            tid = m.get("tool_call_id")
            if not isinstance(content, str) and not (isinstance(content, list) and content):
                problems.append(f"{w}: tool content must be a string or text parts")
            if expecting is None:
                problems.append(f"{w}: tool message {tid} does not directly follow an assistant message with tool_calls")
            elif tid not in expecting:
                problems.append(f"{w}: tool message {tid} answers no call of the preceding assistant message")
            elif tid in answered:
                problems.append(f"{w}: second tool message for call {tid}")
            else:
                answered.add(tid)
        else:
            problems.append(f"{w}: unknown role {role!r}")
    close(f"messages[{len(msgs)}] (end)")
    _unicode_problems(msgs, "messages", problems)
    return problems


def validate_openai_responses(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the OpenAI Responses ``input`` a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``input`` (and
            optional ``instructions``), or the item list itself.
        allow_empty: when False an empty list is a violation.

    Returns:
        One line per violation (``input[i]...: problem``). Checked: message
        items (role, non-empty content; user parts ``input_text`` /
        ``input_image``; assistant a string or ``output_text`` parts);
        ``function_call`` (call_id ``[A-Za-z0-9_-]``, ≤ 64 chars, unique;
        name; arguments a JSON object text); ``function_call_output``
        answers an earlier call exactly once, with only function call items
        between the call and its output; every call answered; no string
        (``instructions`` and ``arguments`` JSON text included) holds a
        lone UTF-16 surrogate.
    """
    items = _payload_list(payload, "input")
    problems: list[str] = []
    if isinstance(payload, Mapping) and "instructions" in payload and not isinstance(payload["instructions"], str):
        problems.append("instructions: not a string")
    if not isinstance(items, list):
        return problems + ["input: not a list"]
    if not items and not allow_empty:
        problems.append("input: empty")
    calls: dict[str, int] = {}
    answered: set[str] = set()
    open_calls: set[str] = set()  # calls since the last message item

    def close(at: str) -> None:
        missing = sorted(c for c in open_calls if c not in answered)
        if missing:
            problems.append(f"{at}: function calls without an output before this item: {missing}")
        open_calls.clear()

    for i, it in enumerate(items):
        w = f"input[{i}]"
        if not isinstance(it, Mapping):
            problems.append(f"{w}: not an object")
            continue
        itype = it.get("type", "message")
        if itype == "message":
            close(w)
            role = it.get("role")
            content = it.get("content")
            if role not in ("user", "assistant", "system", "developer"):
                problems.append(f"{w}: unknown role {role!r}")
            if isinstance(content, str):
                if not content:
                    problems.append(f"{w}: content empty")
            elif isinstance(content, list) and content:
                allowed = ("output_text", "refusal") if role == "assistant" else ("input_text", "input_image")
                for j, part in enumerate(content):
                    pw = f"{w}.content[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype not in allowed:
                        problems.append(f"{pw}: part type {ptype!r} not allowed for role {role}")
                    elif ptype == "input_image":
                        _check_data_url(part.get("image_url"), pw, problems)
                    elif ptype in ("input_text", "output_text") and not isinstance(part.get("text"), str):
                        problems.append(f"{pw}: text missing")
            else:
                problems.append(f"{w}: content must be a non-empty string or part list")
        elif itype == "function_call":
            cid = it.get("call_id")
            if not isinstance(cid, str) or not _SAFE_ID.match(cid) or len(cid) > 64:
                problems.append(f"{w}: call_id must match [A-Za-z0-9_-]{{1,64}}")
            elif cid in calls:
                problems.append(f"{w}: duplicate call_id {cid}")
            else:
                calls[cid] = i
                open_calls.add(cid)
            if not _nonblank(it.get("name")):
                problems.append(f"{w}: name missing")
            if not _is_json_object_text(it.get("arguments")):
                problems.append(f"{w}: arguments must be a JSON object encoded as a string")
        elif itype == "function_call_output":
            cid = it.get("call_id")
            output = it.get("output")
            if cid not in calls:
                problems.append(f"{w}: output for call {cid} that no earlier function_call made")
            elif cid in answered:
                problems.append(f"{w}: second output for call {cid}")
            elif cid not in open_calls:
                problems.append(f"{w}: output for call {cid} separated from its call by a message")
            else:
                answered.add(cid)
            if isinstance(output, list):
                for j, part in enumerate(output):
                    pw = f"{w}.output[{j}]"
                    ptype = part.get("type") if isinstance(part, Mapping) else None
                    if ptype == "input_image":
                        _check_data_url(part.get("image_url"), pw, problems)
                    elif ptype != "input_text" or not isinstance(part.get("text"), str):
                        problems.append(f"{pw}: output part must be input_text or input_image")
                if not output:
                    problems.append(f"{w}: output list empty")
            elif not isinstance(output, str):
                problems.append(f"{w}: output must be a string or part list")
        else:
            problems.append(f"{w}: unknown item type {itype!r}")
    close(f"input[{len(items)}] (end)")
    instructions = payload.system if isinstance(payload, AdapterResult) else (
        payload.get("instructions") if isinstance(payload, Mapping) else None
    )
    if instructions is not None:
        _unicode_problems(instructions, "instructions", problems)
    _unicode_problems(items, "input", problems)
    return problems


def validate_anthropic_messages(payload: Any, *, allow_empty: bool = True) -> list[str]:
    """Rules of the Anthropic Messages ``messages`` (and ``system``) a payload breaks.

    Args:
        payload: an :class:`AdapterResult`, a dict with ``messages`` (and
            optional ``system``), or the messages list itself.
        allow_empty: when False an empty list is a violation (the API needs
            at least one message; an adapter returns [] for an empty context).

    Returns:
        One line per violation (``messages[i]...: problem``). Checked: first
        message is user, roles alternate; content a non-blank string or a
        non-empty block list; text blocks non-blank; images base64 with a
        supported media type; no thinking blocks; ``tool_use`` (id
        ``[A-Za-z0-9_-]`` ≤ 64, unique; name; input an object) only in
        assistant messages, each answered by exactly one ``tool_result`` in
        the very next (user) message; ``tool_result`` blocks only answer the
        previous assistant's calls and come before other blocks; a final
        assistant message does not end with whitespace; no string (``system``
        included) holds a lone UTF-16 surrogate.
    """
    msgs = _payload_list(payload, "messages")
    problems: list[str] = []
    system = payload.system if isinstance(payload, AdapterResult) else (
        payload.get("system") if isinstance(payload, Mapping) else None
    )
    if system is not None and not isinstance(system, (str, list)):
        problems.append("system: must be a string or text blocks")
    if not isinstance(msgs, list):
        return problems + ["messages: not a list"]
    if not msgs and not allow_empty:
        problems.append("messages: empty")
    seen_ids: set[str] = set()
    prev_calls: list[str] = []
    prev_role: str | None = None
    for i, m in enumerate(msgs):
        w = f"messages[{i}]"
        if not isinstance(m, Mapping):
            problems.append(f"{w}: not an object")
            prev_calls, prev_role = [], None
            continue
        role = m.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{w}: role must be user or assistant, not {role!r}")
        if i == 0 and role != "user":
            problems.append(f"{w}: the first message must be from the user")
        if prev_role is not None and role == prev_role:
            problems.append(f"{w}: two {role} messages in a row")
        content = m.get("content")
        blocks: list[Any]
        if isinstance(content, str):
            if not content.strip():
                problems.append(f"{w}: content is blank")
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            if not content:
                problems.append(f"{w}: content is empty")
            blocks = content
        else:
            problems.append(f"{w}: content must be a string or a block list")
            blocks = []
        results: list[str] = []
        calls: list[str] = []
        seen_other = False
        for j, b in enumerate(blocks):
            bw = f"{w}.content[{j}]"
            btype = b.get("type") if isinstance(b, Mapping) else None
            if btype == "text":
                if not _nonblank(b.get("text")):
                    problems.append(f"{bw}: text block is blank")
                seen_other = True
            elif btype == "image":
                _check_anthropic_image(b, bw, problems)
                if role != "user":
                    problems.append(f"{bw}: image in a {role} message")
                seen_other = True
            elif btype == "tool_use":
                if role != "assistant":
                    problems.append(f"{bw}: tool_use in a {role} message")
                tid = b.get("id")
                if not isinstance(tid, str) or not _SAFE_ID.match(tid) or len(tid) > 64:
                    problems.append(f"{bw}: tool_use id must match [A-Za-z0-9_-]{{1,64}}")
                elif tid in seen_ids:
                    problems.append(f"{bw}: duplicate tool_use id {tid}")
                else:
                    seen_ids.add(tid)
                    calls.append(tid)
                if not _nonblank(b.get("name")):
                    problems.append(f"{bw}: tool_use name missing")
                if not isinstance(b.get("input"), Mapping):
                    problems.append(f"{bw}: tool_use input must be an object")
            elif btype == "tool_result":
                if role != "user":
                    problems.append(f"{bw}: tool_result in a {role} message")
                if seen_other:
                    problems.append(f"{bw}: tool_result after other content (tool results must come first)")
                tid = b.get("tool_use_id")
                if tid not in prev_calls:
                    problems.append(f"{bw}: tool_result {tid} answers no tool_use of the previous assistant message")
                elif tid in results:
                    problems.append(f"{bw}: second tool_result for {tid}")
                else:
                    results.append(tid)
                rc = b.get("content")
                if isinstance(rc, list):
                    for k, rb in enumerate(rc):
                        rbt = rb.get("type") if isinstance(rb, Mapping) else None
                        if rbt == "text":
                            if not _nonblank(rb.get("text")):
                                problems.append(f"{bw}.content[{k}]: text block is blank")
                        elif rbt == "image":
                            _check_anthropic_image(rb, f"{bw}.content[{k}]", problems)
                        else:
                            problems.append(f"{bw}.content[{k}]: tool_result content must be text or image")
                elif rc is not None and not isinstance(rc, str):
                    problems.append(f"{bw}: tool_result content must be a string or blocks")
                if "is_error" in b and not isinstance(b["is_error"], bool):
                    problems.append(f"{bw}: is_error must be a boolean")
            elif btype in ("thinking", "redacted_thinking"):
                if not b.get("signature") and btype == "thinking":
                    problems.append(f"{bw}: thinking block without a signature")
                seen_other = True
            else:
                problems.append(f"{bw}: unknown block type {btype!r}")
                seen_other = True
        missing = [c for c in prev_calls if c not in results]
        if missing:
            problems.append(f"{w}: tool_use ids without a tool_result in this message: {missing}")
        prev_calls, prev_role = calls, role
    if prev_calls:
        problems.append(f"messages[{len(msgs)}] (end): tool_use ids never answered: {prev_calls}")
    if msgs and isinstance(msgs[-1], Mapping) and msgs[-1].get("role") == "assistant":
        content = msgs[-1].get("content")
        last = content if isinstance(content, str) else (
            content[-1].get("text") if isinstance(content, list) and content and isinstance(content[-1], Mapping)
            and content[-1].get("type") == "text" else None
        )
        if isinstance(last, str) and last != last.rstrip():
            problems.append(f"messages[{len(msgs) - 1}]: final assistant content ends with whitespace")
    if system is not None:
        _unicode_problems(system, "system", problems)
    _unicode_problems(msgs, "messages", problems)
    return problems


def _check_anthropic_image(b: Mapping[str, Any], where: str, problems: list[str]) -> None:
    src = b.get("source")
    if not isinstance(src, Mapping):
        problems.append(f"{where}: image source missing")
        return
    if src.get("type") == "base64":
        if src.get("media_type") not in SUPPORTED_IMAGE_TYPES:
            problems.append(f"{where}: unsupported image media_type {src.get('media_type')!r}")
        if not isinstance(src.get("data"), str) or not src.get("data"):
            problems.append(f"{where}: image data missing")
    elif src.get("type") != "url":
        problems.append(f"{where}: image source type must be base64 or url")
