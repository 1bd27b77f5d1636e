"""Records of a type this package does not know (a newer pi's, another
tool's): kept and written back as they are, contributing nothing to the
context; every field but the common entry fields is walked as JSON text."""

from __future__ import annotations

from typing import Any

from .base import EntryDescriptor, entry_fields

__all__ = ["DESCRIPTOR"]

DESCRIPTOR = EntryDescriptor(
    None,
    dict[str, Any],
    entry_fields("other"),
    "an entry of a type this package does not know",
)
