"""Anthropic Messages: :func:`to_anthropic_messages` renders canonical turns as ``messages``.

Beyond pi (pi sends what the session holds): roles alternate, starting with
the user; starts from :func:`pi_session.adapters.canonical.prepare`, each
``tool_result`` block from :func:`pi_session.adapters.pairing.result_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.text import well_formed_deep
from .canonical import (
    EMPTY_RESULT_TEXT,
    PLACEHOLDER_USER_TEXT,
    AdapterResult,
    Repair,
    ThinkingMode,
    prepare,
)
from .pairing import result_of


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
    rendering = prepare(messages, system_prompt, thinking, 64)
    turns, repairs, system_prompt, ids = rendering.turns, rendering.repairs, rendering.system, rendering.ids
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
                res = result_of(c)
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

