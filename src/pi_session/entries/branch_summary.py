"""The ``branch_summary`` entry: a summary of the branch left at ``fromId``
when the session moved elsewhere. Its TypedDict, text fields and context
contribution (a ``branchSummary`` message when the summary is not empty)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from .agent_messages import create_branch_summary_message
from .base import JSON, PLAIN, TEXT, EntryDescriptor, entry_fields
from .content import Usage

__all__ = ["DESCRIPTOR", "TYPE", "BranchSummaryEntry"]

TYPE: Literal["branch_summary"] = "branch_summary"


class BranchSummaryEntry(TypedDict):
    type: Literal["branch_summary"]
    id: str
    parentId: str | None
    timestamp: str  # ISO 8601
    fromId: str
    summary: str
    details: NotRequired[Any]
    usage: NotRequired[Usage]  # pi 1.6
    fromHook: NotRequired[bool]


def context_messages(entry: Mapping[str, Any], leading: bool) -> list[dict[str, Any]]:
    """One ``branchSummary`` message when ``summary`` is not empty."""
    return [create_branch_summary_message(entry)] if entry.get("summary") else []


DESCRIPTOR = EntryDescriptor(
    TYPE,
    BranchSummaryEntry,
    entry_fields("branch summary", fromId=PLAIN, summary=TEXT, details=JSON, usage=JSON, fromHook=PLAIN),
    "a summary of the branch left at fromId",
    context_messages,
    cut_point=True,
)
