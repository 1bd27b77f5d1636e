"""The ``context_edit`` entry (pi 1.6): replaces (``{"content": ...}``) or
omits (None) what its target entry contributes to the model context. The
target stays in the file unchanged; the edit itself contributes no message
(its effect is applied by :mod:`pi_session.session.context_edits`)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from .base import PLAIN, EntryDescriptor, Shape, entry_fields
from .content import CONTENT

__all__ = ["DESCRIPTOR", "TYPE", "ContentReplacement", "ContextEditEntry"]

TYPE: Literal["context_edit"] = "context_edit"


class ContentReplacement(TypedDict):
    content: str | list[Any]


class ContextEditEntry(TypedDict):
    type: Literal["context_edit"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    targetId: str
    replacement: ContentReplacement | None


DESCRIPTOR = EntryDescriptor(
    TYPE,
    ContextEditEntry,
    entry_fields("context edit", targetId=PLAIN, replacement=Shape({"content": CONTENT})),
    "replaces or omits what another entry contributes to the model context",
)
