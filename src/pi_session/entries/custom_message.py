"""The ``custom_message`` entry: a message an extension adds to the model
context. Its TypedDict, text fields and context contribution (one
``custom`` message)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from .agent_messages import create_custom_message
from .base import JSON, PLAIN, EntryDescriptor, entry_fields
from .content import CONTENT, ImageContent, TextContent

__all__ = ["DESCRIPTOR", "TYPE", "CustomMessageEntry"]

TYPE: Literal["custom_message"] = "custom_message"


class CustomMessageEntry(TypedDict):
    type: Literal["custom_message"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]


def context_messages(entry: Mapping[str, Any], leading: bool) -> list[dict[str, Any]]:
    """One ``custom`` message (:func:`pi_session.entries.agent_messages.create_custom_message`)."""
    return [create_custom_message(entry)]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    CustomMessageEntry,
    entry_fields("custom message", customType=PLAIN, content=CONTENT, display=PLAIN, details=JSON),
    "a message an extension adds to the model context",
    context_messages,
    cut_point=True,
)
