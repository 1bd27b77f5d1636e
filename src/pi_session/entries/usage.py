"""The ``usage`` (pi 1.6) entry: usage of a request outside the conversation
(e.g. a cache warm-up); never model-visible, it only feeds cost totals. Its
TypedDict and text fields."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from .base import JSON, PLAIN, TEXT, EntryDescriptor, entry_fields
from .content import Usage

__all__ = ["DESCRIPTOR", "TYPE", "UsageEntry"]

TYPE: Literal["usage"] = "usage"


class UsageEntry(TypedDict):
    type: Literal["usage"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    kind: str
    provider: str
    model: str
    usage: Usage
    note: NotRequired[str]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    UsageEntry,
    entry_fields(None, kind=PLAIN, provider=PLAIN, model=PLAIN, usage=JSON, note=TEXT),
    "usage of a request outside the conversation (e.g. a cache warm-up); never model-visible, it only feeds cost totals",
)
