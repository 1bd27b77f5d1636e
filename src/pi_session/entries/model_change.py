"""The ``model_change`` entry: the model chosen from here on. Its TypedDict and
text fields."""

from __future__ import annotations

from typing import Literal, TypedDict

from .base import PLAIN, EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR", "TYPE", "ModelChangeEntry"]

TYPE: Literal["model_change"] = "model_change"


class ModelChangeEntry(TypedDict):
    type: Literal["model_change"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    provider: str
    modelId: str


DESCRIPTOR = EntryDescriptor(
    TYPE,
    ModelChangeEntry,
    entry_fields(None, provider=PLAIN, modelId=PLAIN),
    "the model chosen from here on",
)
