"""The entry model: one descriptor per record type pi writes, the one place
that knows what each type holds (see ``docs/entries.md``).

For each type a module of this package gives its TypedDict, the messages
it contributes to the model context, whether compaction may cut there, and
which of its fields hold text; :mod:`.registry` collects them
(:data:`DESCRIPTORS`, :func:`descriptor_for`, :func:`entry_type`) and
:mod:`.text` walks the text-field declarations (:func:`text_fields`,
:func:`replace_strings`) for every feature that reads or rewrites text
(secrets, search, export, the viewer).

Records stay plain dicts, exactly as decoded from the file, so that a round
trip never drops a key; the TypedDicts document their shape for type
checkers and readers (optional keys are ``NotRequired``).
"""

from __future__ import annotations

from .base import EntryDescriptor
from .branch_summary import BranchSummaryEntry
from .compaction import CompactionEntry
from .content import ImageContent, TextContent, ThinkingContent, ToolCall, Usage
from .context_edit import ContentReplacement, ContextEditEntry
from .custom import CustomEntry
from .custom_message import CustomMessageEntry
from .header import SessionHeader
from .label import LabelEntry
from .message import (
    CUT_POINT_ROLES, MESSAGE_ROLES, TURN_START_ROLES, AgentMessage, AssistantMessage, BashExecutionMessage,
    BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, LlmMessage, MessageEntry, NestedCall, NestedCalls,
    SystemMessage, ToolDeclaration, ToolResultMessage, UserMessage,
)
from .model_change import ModelChangeEntry
from .projection import ModelRef, ProjectionEntry, SessionContext, SessionProjection
from .registry import (
    DESCRIPTORS, EAGER_ENTRY_TYPES, ENTRY_TYPES, UNKNOWN, EntryType, FileRecord, KnownType, SessionEntry, descriptor_for, entry_messages,
    entry_type,
)
from .session_info import SessionInfoEntry
from .text import FIELD_KINDS, TextField, render_path, replace_strings, scanned_strings, text_fields
from .thinking_level_change import ThinkingLevelChangeEntry
from .usage import UsageEntry

__all__ = [
    "CUT_POINT_ROLES", "DESCRIPTORS", "EAGER_ENTRY_TYPES", "ENTRY_TYPES", "FIELD_KINDS", "MESSAGE_ROLES", "TURN_START_ROLES", "UNKNOWN",
    "AgentMessage", "AssistantMessage", "BashExecutionMessage", "BranchSummaryEntry", "BranchSummaryMessage",
    "CompactionEntry", "CompactionSummaryMessage", "ContentReplacement", "ContextEditEntry", "CustomEntry",
    "CustomMessage", "CustomMessageEntry", "EntryDescriptor", "EntryType", "FileRecord", "ImageContent", "KnownType",
    "LabelEntry", "LlmMessage", "MessageEntry", "ModelChangeEntry", "ModelRef", "NestedCall", "NestedCalls",
    "ProjectionEntry", "SessionContext", "SessionEntry", "SessionHeader", "SessionInfoEntry", "SessionProjection",
    "SystemMessage", "TextContent", "TextField", "ThinkingContent", "ThinkingLevelChangeEntry", "ToolCall",
    "ToolDeclaration", "ToolResultMessage", "Usage", "UsageEntry", "UserMessage", "descriptor_for", "entry_messages", "entry_type",
    "render_path", "replace_strings", "scanned_strings", "text_fields",
]
