"""The ``custom`` entry: an extension's own state, never sent to the model. Its
TypedDict and text fields."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from .base import JSON, PLAIN, EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR", "TYPE", "CustomEntry"]

TYPE: Literal["custom"] = "custom"


class CustomEntry(TypedDict):
    type: Literal["custom"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    customType: str
    data: NotRequired[Any]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    CustomEntry,
    entry_fields("custom data", customType=PLAIN, data=JSON),
    "an extension's own state, never sent to the model",
)
