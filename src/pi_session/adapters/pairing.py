"""Tool-call pairing: which calls go unanswered, which results are orphans,
and the result a call is rendered with (**beyond pi**).

Owns: :func:`unanswered_tool_calls` and :func:`orphan_tool_results` (checks
on agent messages, used by the session manager and the CLI), and
:func:`result_of` with :data:`MISSING_RESULT_TEXT` (a call whose result was
never recorded is answered with an error result). The repairs themselves are
made while canonicalizing (:mod:`pi_session.adapters.canonical`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .canonical import Call, CallResult, content_blocks, llm_messages_with_index
from ..entries.questions import ASSISTANT, TOOL_RESULT

MISSING_RESULT_TEXT = (
    "Error: this tool call has no recorded result (the run was interrupted or the "
    "result was lost), so its outcome is unknown."
)
"""Text of the error result inserted for a call that never got one."""


def result_of(call: Call) -> CallResult:
    """The result ``call`` is rendered with: its paired one, else an error result
    with :data:`MISSING_RESULT_TEXT` (pi records none for an aborted run)."""
    if call.result is not None:
        return call.result
    return CallResult([{"type": "text", "text": MISSING_RESULT_TEXT}], True, None)


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

    for i, m in llm_messages_with_index(messages):
        role = m.get("role")
        if role == TOOL_RESULT:
            answered.add(m.get("toolCallId"))
            continue
        flush()
        pending, answered = [], set()
        if role == ASSISTANT:
            for b in content_blocks(m.get("content")):
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
    for i, m in llm_messages_with_index(messages):
        role = m.get("role")
        if role == ASSISTANT:
            for b in content_blocks(m.get("content")):
                if isinstance(b, Mapping) and b.get("type") == "toolCall":
                    seen.add(b.get("id"))
        elif role == TOOL_RESULT and m.get("toolCallId") not in seen:
            out.append({"index": i, "toolCallId": m.get("toolCallId")})
    return out

