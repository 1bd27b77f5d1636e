"""The ``compaction`` entry: a summary standing for the entries before
``firstKeptEntryId`` on its branch. Its TypedDict, text fields and context
contribution (only as the first context entry: its replayed system message,
then the summary)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from .agent_messages import create_compaction_summary_message
from .base import JSON, PLAIN, TEXT, EntryDescriptor, entry_fields
from .content import Usage
from .message import MESSAGE, SystemMessage

__all__ = ["DESCRIPTOR", "TYPE", "CompactionEntry"]

TYPE: Literal["compaction"] = "compaction"


class CompactionEntry(TypedDict):
    """Key order as pi writes it: type, id, parentId, timestamp, summary,
    firstKeptEntryId, tokensBefore, details, usage, fromHook, systemMessage."""

    type: Literal["compaction"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    summary: str
    firstKeptEntryId: str  # pi 1.6: may be the entry's own id ("keep nothing")
    tokensBefore: int
    details: NotRequired[Any]  # pi's own: {"readFiles": [...], "modifiedFiles": [...]}
    usage: NotRequired[Usage]  # pi 1.6: usage of the summary request(s)
    fromHook: NotRequired[bool]
    systemMessage: NotRequired[SystemMessage]  # pi 1.6: replayed prompt state, sent before the summary


def context_messages(entry: Mapping[str, Any], leading: bool) -> list[dict[str, Any]]:
    """At position 0 of the context entries (``leading``): the entry's
    ``systemMessage`` when it is an object, then its ``compactionSummary``
    message; elsewhere nothing."""
    if not leading:
        return []
    system = entry.get("systemMessage")
    summary = create_compaction_summary_message(entry)
    return [system, summary] if isinstance(system, dict) else [summary]


DESCRIPTOR = EntryDescriptor(
    TYPE,
    CompactionEntry,
    entry_fields(
        "compaction summary", summary=TEXT, firstKeptEntryId=PLAIN, tokensBefore=PLAIN, details=JSON, usage=JSON,
        fromHook=PLAIN, systemMessage=MESSAGE, firstKeptEntryIndex=PLAIN,  # the index: version-1 files
    ),
    "a summary standing for the entries before firstKeptEntryId",
    context_messages,
)
