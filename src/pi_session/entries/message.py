"""The ``message`` entry: one agent message (user, assistant, tool result,
bash execution, custom, branch/compaction summary, system prompt). Its
TypedDicts, the text fields of each message role (:data:`MESSAGE`) and the
roles that make a message a cut point or the start of a turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, Union

from .agent_messages import normalized_message
from .base import JSON, PLAIN, TEXT, EntryDescriptor, Shape, Variant, entry_fields
from .content import ASSISTANT_CONTENT, CONTENT, ImageContent, TextContent, ThinkingContent, ToolCall, Usage

__all__ = [
    "CUT_POINT_ROLES", "DESCRIPTOR", "MESSAGE", "MESSAGE_ROLES", "TURN_START_ROLES", "TYPE", "AgentMessage",
    "AssistantMessage", "BashExecutionMessage", "BranchSummaryMessage", "CompactionSummaryMessage",
    "CustomMessage", "LlmMessage", "MessageEntry", "NestedCall", "NestedCalls", "SystemMessage",
    "ToolDeclaration", "ToolResultMessage", "UserMessage",
]

TYPE: Literal["message"] = "message"


# --- agent messages (all carry ``timestamp`` in Unix ms) -------------------


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: str  # "stop" | "length" | "toolUse" | "error" | "aborted" (+ "pending", "deferred" in 1.6)
    timestamp: int
    errorMessage: NotRequired[str]
    # pi 1.6 runtime metadata, kept as written: responseModel, responseId,
    # providerThinkingLevel, thinkingLevel, diagnostics, deferred,
    # rawStopReason, endTurn, durationMs.


class NestedCall(TypedDict):
    """One tool call a tool made (pi 1.6, e.g. a code-mode script)."""

    id: str
    name: str
    status: Literal["ok", "error", "unfinished"]
    arguments: NotRequired[dict[str, Any]]
    argumentsBytes: NotRequired[int]  # instead of ``arguments`` when they were too large
    durationMs: NotRequired[int]
    error: NotRequired[str]


class NestedCalls(TypedDict):
    calls: list[NestedCall]
    complete: bool


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    isError: bool
    timestamp: int
    details: NotRequired[Any]
    nestedCalls: NotRequired[NestedCalls]  # pi 1.6: calls the tool itself made
    usage: NotRequired[Usage]  # pi 1.6
    durationMs: NotRequired[int]  # pi 1.6


class ToolDeclaration(TypedDict):
    """A tool as a system message declares it (pi 1.6)."""

    name: str
    description: str
    parameters: dict[str, Any]
    constrainedSampling: NotRequired[Any]


class SystemMessage(TypedDict):
    """A point in the transcript where the prompt or tool set changes (pi 1.6).

    ``content`` is the base prompt on the first one and extra instructions
    on later ones; ``sections`` maps a section name to its text (None removes
    it); the first system message declares every section and tool, later ones
    patch by name."""

    role: Literal["system"]
    content: str | list[TextContent]
    timestamp: int
    sections: NotRequired[dict[str, str | None]]
    toolsAdded: NotRequired[list[ToolDeclaration]]
    toolsRemoved: NotRequired[list[dict[str, str]]]


class BashExecutionMessage(TypedDict):
    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    timestamp: int
    fullOutputPath: NotRequired[str]
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    role: Literal["custom"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    timestamp: int
    details: NotRequired[Any]


class BranchSummaryMessage(TypedDict):
    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


class CompactionSummaryMessage(TypedDict):
    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


AgentMessage = Union[
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
]
LlmMessage = Union[UserMessage, AssistantMessage, ToolResultMessage]


class MessageEntry(TypedDict):
    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    message: AgentMessage


# --- text fields of each role ----------------------------------------------

_TIME = {"role": PLAIN, "timestamp": PLAIN}

MESSAGE = Variant(
    "role",
    {
        "user": Shape({**_TIME, "content": CONTENT}, "user text"),
        "assistant": Shape(
            {
                **_TIME, "content": ASSISTANT_CONTENT, "api": PLAIN, "provider": PLAIN, "model": PLAIN,
                "stopReason": PLAIN, "errorMessage": TEXT, "usage": JSON, "responseModel": PLAIN,
                "responseId": PLAIN, "providerThinkingLevel": PLAIN, "thinkingLevel": PLAIN, "rawStopReason": PLAIN,
                "diagnostics": JSON, "deferred": PLAIN, "endTurn": PLAIN, "durationMs": PLAIN,
            },
            "assistant text",
        ),
        "toolResult": Shape(
            {
                **_TIME, "toolCallId": PLAIN, "toolName": PLAIN, "content": CONTENT, "isError": PLAIN, "details": JSON,
                "nestedCalls": JSON, "usage": JSON, "durationMs": PLAIN,
            },
            "tool result",
        ),
        "bashExecution": Shape(
            {
                **_TIME, "command": TEXT, "output": TEXT, "exitCode": PLAIN, "cancelled": PLAIN, "truncated": PLAIN,
                "fullOutputPath": TEXT, "excludeFromContext": PLAIN,
            },
            "bash output",
        ),
        "custom": Shape({**_TIME, "customType": PLAIN, "content": CONTENT, "display": PLAIN, "details": JSON}, "custom message"),
        "branchSummary": Shape({**_TIME, "summary": TEXT, "fromId": PLAIN}, "branch summary"),
        "compactionSummary": Shape({**_TIME, "summary": TEXT}, "compaction summary"),
        "hookMessage": Shape({**_TIME, "customType": PLAIN, "content": CONTENT, "display": PLAIN, "details": JSON}, "other"),
        "system": Shape({**_TIME, "content": CONTENT, "sections": JSON, "toolsAdded": JSON, "toolsRemoved": JSON}, "system prompt"),
    },
    Shape(_TIME, "other"),
)
"""The text fields of an agent message, by ``role`` (an unknown role: every
field but ``role`` and ``timestamp`` is walked as JSON, kind ``other``)."""

MESSAGE_ROLES = frozenset(MESSAGE.shapes)
"""The message roles pi writes (``hookMessage``: older pi's name of ``custom``)."""

CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
"""The roles of the messages compaction may keep from (pi's valid cut points:
never a tool result, which must follow its call)."""

TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
"""The roles of the messages that start a turn."""


def context_messages(entry: Mapping[str, Any], leading: bool) -> list[dict[str, Any]]:
    """The message of a ``message`` entry (:func:`pi_session.entries.agent_messages.normalized_message`:
    null content becomes ``[]``); none when ``message`` is not an object."""
    msg = entry.get("message")
    return [normalized_message(msg)] if isinstance(msg, dict) else []


DESCRIPTOR = EntryDescriptor(
    TYPE,
    MessageEntry,
    entry_fields(None, message=MESSAGE),
    "one agent message: what the user, the model or a tool said",
    context_messages,
    cut_point=True,
)
