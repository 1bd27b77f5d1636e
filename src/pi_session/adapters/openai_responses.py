"""Renderer for the OpenAI Responses ``input`` items (SPEC 5, **beyond pi**).

Owns: :func:`to_openai_responses` and the part/block rendering for this API. Input is the
canonical form (:func:`pi_session.adapters.canonical._canonicalize`); tool
results come from :func:`pi_session.adapters.pairing._result_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..jsonio import js_stringify
from ..text import well_formed_deep
from .canonical import (
    EMPTY_RESULT_TEXT,
    AdapterResult,
    ThinkingMode,
    _canonicalize,
    _data_url,
    _IdMap,
    _joined_text,
    _system_prompt_for,
    _system_text,
)
from .pairing import _result_of


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

