"""The ``label`` entry: a bookmark on another entry (no label: the bookmark is
cleared). Its TypedDict and text fields."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from .base import PLAIN, TEXT, EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR", "TYPE", "LabelEntry"]

TYPE: Literal["label"] = "label"


class LabelEntry(TypedDict):
    type: Literal["label"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    targetId: str
    label: NotRequired[str]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    LabelEntry,
    entry_fields("label", targetId=PLAIN, label=TEXT),
    "a bookmark on another entry (no label: the bookmark is cleared)",
)
