"""Session records as pi 1.6 writes them: the header, the entry types and agent messages.

Records stay plain dicts, exactly as decoded from the file, so that a round
trip never drops a key; these TypedDicts document their shape for type
checkers and readers. Optional keys are marked ``NotRequired``.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Final, Literal, NotRequired, TypeAlias, TypedDict, TypeGuard, Union

CURRENT_SESSION_VERSION = 3
"""The session file format version pi writes (``CURRENT_SESSION_VERSION``), the
one place it is named. pi 1.6 still writes 3:
its new entry types and fields need no migration."""

StrPath: TypeAlias = "str | os.PathLike[str]"
"""A file-system path argument: a string or any path-like object."""


class Undefined:
    """The type of :data:`UNDEFINED`, JavaScript's ``undefined``: a key that
    is absent, or an argument that was not given (as opposed to an explicit
    ``null``/None). It has one instance; test with ``value is UNDEFINED``.
    Copying or pickling gives the same object."""

    __slots__ = ()
    _instance: ClassVar[Undefined | None] = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Final[Undefined] = Undefined()
"""The one "undefined/omitted" object of the package (see :class:`Undefined`):
``pi_session.UNSET``, ``SessionManager``'s ``OMITTED`` and
``timestamps.MISSING`` are this object."""


HEADER_TYPE = "session"
"""The ``type`` of a session header record (every other record is an entry)."""


def is_session_header(record: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a decoded record is a usable session header: an object with
    ``type`` ``"session"`` and a string ``id`` (pi 1.6 ``loadEntriesFromFile``
    and ``readSessionHeader`` refuse a file whose first record is not one).
    A record of type ``"session"`` later in a file is an *extra* header,
    tested with ``record.get("type") == HEADER_TYPE``."""
    return isinstance(record, dict) and record.get("type") == HEADER_TYPE and isinstance(record.get("id"), str)


def header_version(header: Any) -> int:
    """The format version a session header declares: its ``version`` when
    that is an integer, else 1 (version-1 files have none)."""
    version = header.get("version") if isinstance(header, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def make_header(session_id: str, cwd: str, timestamp: str, parent_session: str | None = None) -> dict[str, Any]:
    """A version-3 session header as pi writes it (keys in pi's order:
    type, version, id, timestamp, cwd, parentSession when given)."""
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


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
    "context_edit",
    "usage",
)
"""Every entry ``type`` pi writes (the header's type is ``"session"``);
``context_edit`` and ``usage`` are new in pi 1.6."""

EAGER_ENTRY_TYPES = frozenset({"label", "session_info", "compaction", "model_change", "thinking_level_change"})
"""The entry types a lazy read decodes in full while indexing
(:mod:`pi_session.storage.lazy`; the other types of :data:`ENTRY_TYPES` are
decoded when accessed): small and rare, and read whenever a session is
opened, by the tree (labels, the session name) or the context (the last
compaction, model and thinking level). The one declaration of them; it
belongs with the entry model's per-type descriptors once they exist."""


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
    cost: NotRequired[dict[str, float]]  # input, output, cacheRead, cacheWrite, total (+ totalFromProvider in 1.6)
    cacheWrite1h: NotRequired[int]  # pi 1.6
    reasoning: NotRequired[int]  # pi 1.6


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
    """Key order as pi writes it: type, id, parentId, timestamp, summary,
    firstKeptEntryId, tokensBefore, details, usage, fromHook, systemMessage."""

    type: Literal["compaction"]
    summary: str
    firstKeptEntryId: str  # pi 1.6: may be the entry's own id ("keep nothing")
    tokensBefore: int
    details: NotRequired[Any]  # pi's own: {"readFiles": [...], "modifiedFiles": [...]}
    usage: NotRequired[Usage]  # pi 1.6: usage of the summary request(s)
    fromHook: NotRequired[bool]
    systemMessage: NotRequired[SystemMessage]  # pi 1.6: replayed prompt state, sent before the summary


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"]
    fromId: str
    summary: str
    details: NotRequired[Any]
    usage: NotRequired[Usage]  # pi 1.6
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


class ContentReplacement(TypedDict):
    content: str | list[Any]


class ContextEditEntry(_EntryBase):
    """pi 1.6: replaces (``{"content": ...}``) or omits (None) what the
    target entry contributes to the model context. The target stays in the
    file unchanged; the edit itself contributes no message."""

    type: Literal["context_edit"]
    targetId: str
    replacement: ContentReplacement | None


class UsageEntry(_EntryBase):
    """pi 1.6: usage of a request outside the conversation (``kind``, e.g.
    ``"cache_warm"``); never model-visible, only feeds cost totals."""

    type: Literal["usage"]
    kind: str
    provider: str
    model: str
    usage: Usage
    note: NotRequired[str]


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
    ContextEditEntry,
    UsageEntry,
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


class ProjectionEntry(TypedDict):
    """One context entry of a projection and the messages it contributes
    after context edits (``[]`` for state-only entries and omissions)."""

    sourceEntry: SessionEntry
    messages: list[AgentMessage]


class SessionProjection(TypedDict):
    """What :func:`pi_session.build_session_projection` returns (pi 1.6's
    ``buildSessionProjection``); ``messages`` is the concatenation of the
    entries' messages."""

    entries: list[ProjectionEntry]
    messages: list[AgentMessage]
    thinkingLevel: str
    model: ModelRef | None
