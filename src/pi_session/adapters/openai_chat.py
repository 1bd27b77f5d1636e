"""OpenAI Chat Completions: :func:`to_openai_chat` renders canonical turns as ``messages``.

Beyond pi (pi sends what the session holds): starts from
:func:`pi_session.adapters.canonical.prepare`; a call's ``tool`` message
comes from :func:`pi_session.adapters.pairing.result_of`; tool-result images,
which ``tool`` messages cannot carry, follow as one user message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.jsonio import js_stringify
from ..core.text import well_formed_deep
from .canonical import (
    EMPTY_RESULT_TEXT,
    TOOL_IMAGES_TEXT,
    AdapterResult,
    ThinkingMode,
    data_url,
    joined_text,
    prepare,
)
from .pairing import result_of


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
    rendering = prepare(messages, system_prompt, thinking, 40)
    turns, repairs, system_prompt, ids = rendering.turns, rendering.repairs, rendering.system, rendering.ids
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    for turn in turns:
        if turn.role == "user":
            if turn.from_string and all(b["type"] == "text" for b in turn.blocks):
                out.append({"role": "user", "content": joined_text(turn.blocks, "\n")})
            else:
                out.append({"role": "user", "content": [_chat_part(b) for b in turn.blocks]})
            continue
        msg: dict[str, Any] = {"role": "assistant", "content": joined_text(turn.blocks, "\n\n") or None}
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
            res = result_of(c)
            text = joined_text(res.blocks, "\n")
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
    return {"type": "image_url", "image_url": {"url": data_url(block)}}

