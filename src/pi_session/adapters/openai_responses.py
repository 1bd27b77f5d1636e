"""OpenAI Responses: :func:`to_openai_responses` renders canonical turns as ``input`` items.

Beyond pi (pi sends what the session holds): stateless items (no item ids,
no reasoning items); starts from :func:`pi_session.adapters.canonical.prepare`,
each ``function_call_output`` from :func:`pi_session.adapters.pairing.result_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.jsonio import js_stringify
from ..core.text import well_formed_deep
from .canonical import (
    EMPTY_RESULT_TEXT,
    AdapterResult,
    ThinkingMode,
    data_url,
    joined_text,
    prepare,
)
from .pairing import result_of


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
    rendering = prepare(messages, system_prompt, thinking, 64)
    turns, repairs, system_prompt, ids = rendering.turns, rendering.repairs, rendering.system, rendering.ids
    items: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "user":
            items.append({"role": "user", "content": [_responses_part(b) for b in turn.blocks]})
            continue
        text = joined_text(turn.blocks, "\n\n")
        if text:
            items.append({"role": "assistant", "content": text})
        for c in turn.calls:
            items.append(
                {"type": "function_call", "call_id": ids(c.uid), "name": c.name, "arguments": js_stringify(c.arguments)}
            )
        for c in turn.calls:
            res = result_of(c)
            output: Any
            if any(b["type"] == "image" for b in res.blocks):
                output = [_responses_part(b) for b in res.blocks]
            else:
                output = joined_text(res.blocks, "\n") or EMPTY_RESULT_TEXT
            items.append({"type": "function_call_output", "call_id": ids(c.uid), "output": output})
    return AdapterResult("openai-responses", input=well_formed_deep(items), system=system_prompt, repairs=repairs)


def _responses_part(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "input_text", "text": block["text"]}
    return {"type": "input_image", "detail": "auto", "image_url": data_url(block)}

