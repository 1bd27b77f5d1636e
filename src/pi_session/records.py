"""Session records (SPEC 2): the header, the entry types and agent messages.

Records stay plain dicts, exactly as decoded from the file, so that a round
trip never drops a key; these TypedDicts document their shape for type
checkers and readers. Optional keys are marked ``NotRequired``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, Union

CURRENT_SESSION_VERSION = 3
"""The session file format version pi 0.73 writes (SPEC 3)."""

ENTRY_TYPES = (
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
)
"""Every entry ``type`` pi writes (the header's type is ``"session"``)."""


# --- content blocks --------------------------------------------------------


class TextContent(TypedDict):
    type: Literal["text"]
    text: str


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: NotRequired[int]
    cost: NotRequired[dict[str, float]]


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
    stopReason: str  # "stop" | "length" | "toolUse" | "error" | "aborted"
    timestamp: int
    errorMessage: NotRequired[str]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    isError: bool
    timestamp: int
    details: NotRequired[Any]


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
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
]
LlmMessage = Union[UserMessage, AssistantMessage, ToolResultMessage]


# --- records ---------------------------------------------------------------


class SessionHeader(TypedDict):
    type: Literal["session"]
    id: str
    timestamp: str
    cwd: str
    version: NotRequired[int]  # absent in v1 files
    parentSession: NotRequired[str]


class _EntryBase(TypedDict):
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601


class MessageEntry(_EntryBase):
    type: Literal["message"]
    message: AgentMessage


class ThinkingLevelChangeEntry(_EntryBase):
    type: Literal["thinking_level_change"]
    thinkingLevel: str


class ModelChangeEntry(_EntryBase):
    type: Literal["model_change"]
    provider: str
    modelId: str


class CompactionEntry(_EntryBase):
    type: Literal["compaction"]
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: NotRequired[Any]  # pi's own: {"readFiles": [...], "modifiedFiles": [...]}
    fromHook: NotRequired[bool]


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"]
    fromId: str
    summary: str
    details: NotRequired[Any]
    fromHook: NotRequired[bool]


class CustomEntry(_EntryBase):
    type: Literal["custom"]
    customType: str
    data: NotRequired[Any]


class CustomMessageEntry(_EntryBase):
    type: Literal["custom_message"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]


class LabelEntry(_EntryBase):
    type: Literal["label"]
    targetId: str
    label: NotRequired[str]


class SessionInfoEntry(_EntryBase):
    type: Literal["session_info"]
    name: str


SessionEntry = Union[
    MessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
]
FileRecord = Union[SessionHeader, SessionEntry]


class ModelRef(TypedDict):
    provider: str
    modelId: str


class SessionContext(TypedDict):
    """What :func:`pi_session.build_session_context` returns."""

    messages: list[AgentMessage]
    thinkingLevel: str
    model: ModelRef | None
