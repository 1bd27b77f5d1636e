"""The registry of entry types: :data:`DESCRIPTORS` (wire type →
:class:`~.base.EntryDescriptor`), :func:`descriptor_for`,
:func:`entry_type` and the unions of record shapes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Union, cast, get_args

from . import (
    branch_summary, compaction, context_edit, custom, custom_message, header, label, message, model_change,
    session_info, thinking_level_change, unknown, usage,
)
from .base import EntryDescriptor, Variant

__all__ = [
    "DESCRIPTORS", "EAGER_ENTRY_TYPES", "ENTRY_TYPES", "RECORD", "EntryType", "FileRecord", "KnownType", "SessionEntry",
    "descriptor_for", "entry_messages", "entry_type",
]

EntryType = Literal[
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "usage",
]
"""Every entry ``type`` pi 1.6 writes (the header's type is ``"session"``)."""

KnownType = Literal[EntryType, "session", "unknown"]
"""What :func:`entry_type` answers: an entry type, ``"session"`` for a
header, ``"unknown"`` for anything else. A ``match`` on it ending in
``case _: assert_never(kind)`` makes mypy list the switch when a type is added."""

ENTRY_TYPES: tuple[EntryType, ...] = get_args(EntryType)
""":data:`EntryType` as a tuple, in pi's order (``context_edit`` and
``usage`` are new in pi 1.6)."""

EAGER_ENTRY_TYPES: frozenset[str] = frozenset({"label", "session_info", "compaction", "model_change", "thinking_level_change"})
"""The entry types a lazy read decodes in full while indexing
(:mod:`pi_session.storage.lazy`; the other types of :data:`ENTRY_TYPES` are
decoded when accessed): small and rare, and read whenever a session is
opened, by the tree (labels, the session name) or the context (the last
compaction, model and thinking level)."""

DESCRIPTORS: Mapping[str, EntryDescriptor] = {
    d.DESCRIPTOR.TYPE: d.DESCRIPTOR
    for d in (
        header, message, thinking_level_change, model_change, compaction, branch_summary, custom, custom_message,
        label, session_info, context_edit, usage,
    )
    if d.DESCRIPTOR.TYPE is not None
}
"""Wire type → descriptor, for the header and every entry type pi writes."""

UNKNOWN: EntryDescriptor = unknown.DESCRIPTOR
"""The descriptor of a record whose type is not in :data:`DESCRIPTORS`."""

RECORD = Variant("type", {t: d.fields for t, d in DESCRIPTORS.items()}, UNKNOWN.fields)
"""The text fields of any record, by its ``type``."""

SessionEntry = Union[
    message.MessageEntry,
    thinking_level_change.ThinkingLevelChangeEntry,
    model_change.ModelChangeEntry,
    compaction.CompactionEntry,
    branch_summary.BranchSummaryEntry,
    custom.CustomEntry,
    custom_message.CustomMessageEntry,
    label.LabelEntry,
    session_info.SessionInfoEntry,
    context_edit.ContextEditEntry,
    usage.UsageEntry,
]
FileRecord = Union[header.SessionHeader, SessionEntry]


def entry_type(record: Any) -> KnownType:
    """The type of a decoded record as a :data:`KnownType`: its ``type``
    when pi writes it, ``"unknown"`` otherwise (a record that is not an
    object, a type that is not a string or not known)."""
    etype = record.get("type") if isinstance(record, Mapping) else None
    if etype.__class__ is str and etype in DESCRIPTORS:
        return cast(KnownType, etype)
    return "unknown"


def descriptor_for(record_or_type: Any) -> EntryDescriptor:
    """The descriptor of a record (a mapping) or of a wire type (a string);
    :data:`UNKNOWN` for anything pi does not write."""
    etype = record_or_type if isinstance(record_or_type, str) else entry_type(record_or_type)
    return DESCRIPTORS.get(etype, UNKNOWN)


def entry_messages(entry: Mapping[str, Any], *, leading: bool = False) -> list[dict[str, Any]]:
    """The messages one context entry contributes before context edits (pi
    1.6's ``sessionEntryToContextMessages``), by its descriptor's
    ``context_messages``:

    - ``message``: the message; a user/assistant/toolResult message whose
      ``content`` is null or missing gets ``content: []`` (a copy; a
      ``system`` one gets ``""``). A ``message`` that is not an object
      contributes nothing (beyond pi, which would pass it on).
    - ``custom_message``: one ``custom`` message (null content → ``[]``).
    - ``branch_summary`` with a non-empty summary: one ``branchSummary``.
    - ``compaction``, only when ``leading`` (position 0 of the context
      entries): its ``systemMessage`` (when it is an object) then its
      ``compactionSummary``; elsewhere ``[]``.
    - anything else (``context_edit``, ``usage``, labels, ...): ``[]``.
    """
    return descriptor_for(entry).context_messages(entry, leading)
