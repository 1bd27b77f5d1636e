"""The session header: the first record of a session file (``type``
``"session"``), not an entry of the tree. Its TypedDict and text fields."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from .base import PLAIN, TEXT, EntryDescriptor, Shape

__all__ = ["DESCRIPTOR", "TYPE", "SessionHeader"]

TYPE: Literal["session"] = "session"
"""The header's ``type`` (:data:`pi_session.entries.records.HEADER_TYPE`)."""


class SessionHeader(TypedDict):
    type: Literal["session"]
    id: str
    timestamp: str
    cwd: str
    version: NotRequired[int]  # absent in v1 files
    parentSession: NotRequired[str]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    SessionHeader,
    Shape(
        {
            "type": PLAIN, "id": PLAIN, "timestamp": PLAIN, "version": PLAIN, "cwd": TEXT, "parentSession": TEXT,
            # version-1 headers of older pi
            "provider": PLAIN, "modelId": PLAIN, "thinkingLevel": PLAIN, "branchedFrom": TEXT,
        },
        "header",
    ),
    "the session's id, start time, working directory and the session it was forked from",
)
