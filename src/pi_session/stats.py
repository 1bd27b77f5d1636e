"""Statistics of a session: what ``pi-session info`` shows, for library users
(:meth:`pi_session.SessionManager.stats`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SessionStats", "count_entry_types"]


def count_entry_types(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Count entries by type, messages by role.

    Args:
        entries: session entries (header excluded).

    Returns:
        ``{key: count}`` in first-seen order, where key is the entry's
        ``type`` (``"?"`` when missing), or ``"message:<role>"`` for a message
        entry whose ``message`` is an object (``"message:None"`` without a
        role).
    """
    counts: dict[str, int] = {}
    for entry in entries:
        key = entry.get("type", "?")
        message = entry.get("message")
        if key == "message" and isinstance(message, dict):
            key = f"message:{message.get('role')}"
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(frozen=True)
class SessionStats:
    """A session's header facts, size and shape.

    Attributes:
        path: the session file (None: in memory).
        id: the session id.
        version: the file's own format version (an older file is read as the
            current version, migrated in memory).
        cwd, created, parent_session: from the header (``cwd``,
            ``timestamp``, ``parentSession``), None when absent.
        name: from the latest ``session_info`` entry, or None.
        size_bytes: the file's size in bytes (0 in memory or when missing).
        entries: number of entries, header excluded.
        counts: see :func:`count_entry_types`.
        leaf_id: the current leaf, or None.
        branch_length: entries on the root→leaf path.
        labels: ``{entry id: label}`` in effect.
        problems: damaged or repaired lines, each
            ``{"line": int | None, "kind", "message", "recovered"}``.
    """

    path: str | None
    id: str
    version: Any
    cwd: Any
    created: Any
    parent_session: Any
    name: str | None
    size_bytes: int
    entries: int
    counts: dict[str, int] = field(default_factory=dict)
    leaf_id: str | None = None
    branch_length: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``pi-session info --json``: ``path`` (the string
        ``"None"`` in memory, as the CLI has always printed it), ``id``,
        ``version``, ``cwd``, ``created``, ``parentSession``, ``name``,
        ``sizeBytes``, ``entries``, ``counts``, ``leafId``, ``branchLength``,
        ``labels``, ``problems``, in that order."""
        return {
            "path": str(self.path),
            "id": self.id,
            "version": self.version,
            "cwd": self.cwd,
            "created": self.created,
            "parentSession": self.parent_session,
            "name": self.name,
            "sizeBytes": self.size_bytes,
            "entries": self.entries,
            "counts": dict(self.counts),
            "leafId": self.leaf_id,
            "branchLength": self.branch_length,
            "labels": dict(self.labels),
            "problems": [dict(p) for p in self.problems],
        }
