"""The ``session_info`` entry: the session's display name. Its TypedDict and
text fields."""

from __future__ import annotations

from typing import Literal, TypedDict

from .base import TEXT, EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR", "TYPE", "SessionInfoEntry"]

TYPE: Literal["session_info"] = "session_info"


class SessionInfoEntry(TypedDict):
    type: Literal["session_info"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    name: str


DESCRIPTOR = EntryDescriptor(
    TYPE,
    SessionInfoEntry,
    entry_fields("name", name=TEXT),
    "the session's display name",
)
