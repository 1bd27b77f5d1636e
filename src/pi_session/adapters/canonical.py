"""The canonical form every provider renderer starts from (**beyond pi**).

Owns: the public result types (:class:`Repair`, :class:`AdapterResult`),
the shared constants, the turn/call/result model (``Turn``, ``Call``,
``CallResult``), :func:`canonicalize` (agent messages → user and assistant
turns whose calls carry at most one result, with every repair reported),
the lone-surrogate handling of messages and of the system prompt, the
replay of pi 1.6 ``system`` messages into the system prompt, and the small
rendering helpers all providers share (provider-safe call ids, joined text,
data URLs). The pairing rules themselves are described in
:mod:`pi_session.adapters`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..session.context import convert_to_llm, get_current_system_message, system_message_text
from ..core.text import find_lone_surrogates, is_well_formed, lone_surrogates, well_formed, well_formed_deep
from ..entries.questions import ASSISTANT, SYSTEM, TOOL_RESULT, USER

SUPPORTED_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image MIME types all three APIs accept as inline base64 data."""

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
class CallResult:
    """The one result a canonical call is rendered with: normalized ``text``/``image``
    blocks, pi's ``isError``, and the index of the toolResult message it came
    from (None for an inserted one)."""

    blocks: list[dict[str, Any]]  # normalized text/image blocks
    is_error: bool
    src: int | None


@dataclass
class Call:
    """A tool call of an assistant turn: its original id (None when it had none),
    a context-unique ``uid``, name, arguments (always an object), the index of
    its assistant message, and its result once paired."""

    orig_id: str | None
    uid: str  # unique across the context
    name: str
    arguments: dict[str, Any]
    src: int
    result: CallResult | None = None
    moved_from: int | None = None  # src of a result that arrived out of position


@dataclass
class Turn:
    """A user or assistant turn of the canonical form: ``blocks`` (user: text and
    images; assistant: text), the index of its message, the assistant's calls."""

    role: str  # "user" | "assistant"
    blocks: list[dict[str, Any]]  # user: text/image; assistant: text
    src: int
    calls: list[Call] = field(default_factory=list)
    from_string: bool = False  # user content was a plain string


def content_blocks(content: Any) -> list[Any]:
    """The blocks of a message ``content``: a string is one ``text`` block, a list is
    itself, anything else has none."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return []


def _typed_blocks(content: Any) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """``(type, block)`` for each object block of a message content (a string is one text block)."""
    for block in content_blocks(content):
        if isinstance(block, Mapping):
            yield block.get("type"), block


def _text_block(text: Any) -> dict[str, Any] | None:
    """A ``text`` block for a non-blank string, else None (empty and whitespace-only text is dropped)."""
    if isinstance(text, str) and text.strip():
        return {"type": "text", "text": text}
    return None


def _norm_user_blocks(content: Any, src: int, repairs: list[Repair], what: str) -> list[dict[str, Any]]:
    """Text and image blocks of a user/tool-result content, empties removed."""
    out: list[dict[str, Any]] = []
    for btype, block in _typed_blocks(content):
        if btype == "text":
            text = _text_block(block.get("text"))
            if text is not None:
                out.append(text)
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


def llm_messages_with_index(messages: Sequence[Any]) -> list[tuple[int, dict[str, Any]]]:
    """``(index into messages, LLM message)`` after pi's ``convertToLlm``
    (:func:`pi_session.session.context.convert_to_llm`); non-object messages are skipped."""
    out: list[tuple[int, dict[str, Any]]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            continue
        for converted in convert_to_llm([m]):
            out.append((i, converted))
    return out


def _well_formed_message(m: dict[str, Any], src: int, repairs: list[Repair]) -> dict[str, Any]:
    """``m`` with lone UTF-16 surrogates replaced by U+FFFD in every string
    (:func:`pi_session.core.text.well_formed_deep`), reported as
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


def well_formed_system_prompt(system_prompt: str | None, repairs: list[Repair]) -> str | None:
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


def system_prompt_for(messages: Sequence[Any], system_prompt: str | None) -> str | None:
    """The system prompt to send: ``system_prompt`` when given, else the
    prompt the context's pi 1.6 system messages replay to
    (:func:`pi_session.session.context.get_current_system_message`), as pi sends it
    to providers that take no system message mid-conversation; None when
    there is neither."""
    if system_prompt is not None:
        return system_prompt
    replayed = get_current_system_message(m for m in messages if isinstance(m, Mapping))
    return system_message_text(replayed) or None if replayed is not None else None


def canonicalize(messages: Sequence[Any], thinking: ThinkingMode) -> tuple[list[Turn], list[Repair]]:
    """Agent messages → canonical turns whose calls carry at most one result each.

    Applies the pairing rules of :mod:`pi_session.adapters` and reports every
    repair (sorted by ``message_index``); a call left without a result keeps
    ``result`` None (:func:`pi_session.adapters.pairing.result_of` answers it).

    Raises:
        ValueError: ``thinking`` is not "drop" or "text".
    """
    if thinking not in ("drop", "text"):
        raise ValueError(f"thinking must be 'drop' or 'text', not {thinking!r}")
    repairs: list[Repair] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            repairs.append(Repair("invalid_message_dropped", None, i, "a message that is not an object was dropped"))
    llm = llm_messages_with_index(messages)
    llm = [(src, _well_formed_message(m, src, repairs)) for src, m in llm]

    # Every call id made anywhere, to tell "result before its call" from "unknown call".
    all_call_ids: set[str] = set()
    for _, m in llm:
        if m.get("role") == ASSISTANT:
            for b in content_blocks(m.get("content")):
                if isinstance(b, Mapping) and b.get("type") == "toolCall" and isinstance(b.get("id"), str):
                    all_call_ids.add(b["id"])

    turns: list[Turn] = []
    used_uids: set[str] = set()
    calls_by_id: dict[str, list[Call]] = {}
    open_calls: list[Call] = []  # calls of the latest assistant turn, until another turn starts
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
        if role == SYSTEM:
            continue  # pi 1.6 system messages: replayed into the system prompt (see system_prompt_for)
        if role == USER:
            open_calls = []
            blocks = _norm_user_blocks(m.get("content"), src, repairs, "a user message")
            if not blocks:
                repairs.append(Repair("empty_user_dropped", None, src, "a user message with no content was dropped"))
                continue
            turns.append(Turn("user", blocks, src, from_string=isinstance(m.get("content"), str)))
        elif role == ASSISTANT:
            open_calls = []
            blocks = []  # list[dict[str, Any]], as declared in the user branch above
            calls: list[Call] = []
            for btype, b in _typed_blocks(m.get("content")):
                if btype == "text" or (btype == "thinking" and thinking == "text"):
                    text = _text_block(b.get("text" if btype == "text" else "thinking"))
                    if text is not None:
                        blocks.append(text)
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
                    call = Call(orig, uid, name, args, src)
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
            turns.append(Turn("assistant", blocks, src, calls=calls))
            open_calls = calls
        elif role == TOOL_RESULT:
            tid = m.get("toolCallId")
            tid = tid if isinstance(tid, str) else None
            result = CallResult(
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



# --------------------------------------------------------------------------
# Rendering helpers shared by the providers
# --------------------------------------------------------------------------


_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


class IdMap:
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


def joined_text(blocks: Iterable[Mapping[str, Any]], sep: str) -> str:
    """The texts of the ``text`` blocks joined with ``sep`` (images are skipped)."""
    return sep.join(b["text"] for b in blocks if b.get("type") == "text")


def data_url(block: Mapping[str, Any]) -> str:
    """``data:<mimeType>;base64,<data>`` of a normalized image block."""
    return f"data:{block['mimeType']};base64,{block['data']}"



@dataclass
class Rendering:
    """What every provider renderer starts from (see :func:`prepare`)."""

    turns: list[Turn]
    repairs: list[Repair]
    system: str | None
    ids: IdMap


def prepare(
    messages: Sequence[Any], system_prompt: str | None, thinking: ThinkingMode, max_id_len: int
) -> Rendering:
    """Canonicalize ``messages``, pick the system prompt and make it well formed.

    Args:
        messages: agent messages as given to an adapter.
        system_prompt: the caller's prompt, or None to replay the context's
            pi 1.6 ``system`` messages (:func:`system_prompt_for`).
        thinking: ``"drop"`` or ``"text"``.
        max_id_len: the provider's longest tool-call id (40 for Chat, else 64).

    Returns:
        A :class:`Rendering`: the turns, the repairs (a lone-surrogate repair
        of the system prompt first), the system prompt, a fresh :class:`IdMap`.

    Raises:
        ValueError: ``thinking`` is not "drop" or "text".
    """
    turns, repairs = canonicalize(messages, thinking)
    system = well_formed_system_prompt(system_prompt_for(messages, system_prompt), repairs)
    return Rendering(turns, repairs, system, IdMap(max_id_len))
