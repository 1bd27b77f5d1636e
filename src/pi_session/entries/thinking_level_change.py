"""The ``thinking_level_change`` entry: the thinking level chosen from here on.
Its TypedDict and text fields."""

from __future__ import annotations

from typing import Literal, TypedDict

from .base import PLAIN, EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR", "TYPE", "ThinkingLevelChangeEntry"]

TYPE: Literal["thinking_level_change"] = "thinking_level_change"


class ThinkingLevelChangeEntry(TypedDict):
    type: Literal["thinking_level_change"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    thinkingLevel: str


DESCRIPTOR = EntryDescriptor(
    TYPE,
    ThinkingLevelChangeEntry,
    entry_fields(None, thinkingLevel=PLAIN),
    "the thinking level chosen from here on",
)
