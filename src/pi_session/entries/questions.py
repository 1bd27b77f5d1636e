"""The questions features ask of an entry or a message, answered in one
place: what it is (a message, a summary, a context edit, a setting change),
which role a message has, and the wire names to dispatch on.

Every predicate takes a decoded record as it comes (any value: a record
that is not an object answers False), never raises, and compares the
record's ``type`` or ``role`` with the names the descriptors declare, so
that no module outside :mod:`pi_session.entries` spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import branch_summary, compaction, context_edit, custom, custom_message, label, message, model_change
from . import session_info, thinking_level_change, usage
from .base import no_messages
from .registry import DESCRIPTORS

__all__ = [
    "ASSISTANT", "BASH_EXECUTION", "BRANCH_SUMMARY", "BRANCH_SUMMARY_ROLE", "COMPACTION", "COMPACTION_SUMMARY_ROLE",
    "CONTEXT_EDIT", "CONTEXT_TYPES", "CUSTOM", "CUSTOM_MESSAGE", "CUSTOM_ROLE", "HOOK_MESSAGE", "LABEL", "MESSAGE", "MODEL_CHANGE", "SESSION_INFO",
    "SETTING_TYPES", "SUMMARY_ROLES", "SUMMARY_TYPES", "SYSTEM", "THINKING_LEVEL_CHANGE", "TOOL_RESULT", "USAGE", "USER",
    "is_assistant", "is_bash_execution", "is_branch_summary", "is_compaction", "is_context_edit", "is_custom_message",
    "is_label", "is_message", "is_summary", "is_summary_message", "is_system", "is_tool_result", "is_user",
    "may_contribute", "message_of", "role_of",
]

# Entry types (the ``type`` of a record).
MESSAGE = message.TYPE
THINKING_LEVEL_CHANGE = thinking_level_change.TYPE
MODEL_CHANGE = model_change.TYPE
COMPACTION = compaction.TYPE
BRANCH_SUMMARY = branch_summary.TYPE
CUSTOM = custom.TYPE
CUSTOM_MESSAGE = custom_message.TYPE
LABEL = label.TYPE
SESSION_INFO = session_info.TYPE
CONTEXT_EDIT = context_edit.TYPE
USAGE = usage.TYPE

# Message roles (the ``role`` of a message).
USER = "user"
ASSISTANT = "assistant"
TOOL_RESULT = "toolResult"
BASH_EXECUTION = "bashExecution"
CUSTOM_ROLE = "custom"
BRANCH_SUMMARY_ROLE = "branchSummary"
COMPACTION_SUMMARY_ROLE = "compactionSummary"
SYSTEM = "system"
HOOK_MESSAGE = "hookMessage"
"""Older pi's name of the ``custom`` role."""

SUMMARY_TYPES: frozenset[str] = frozenset({COMPACTION, BRANCH_SUMMARY})
"""The entry types that summarize other entries (a compaction, a branch summary)."""

SUMMARY_ROLES: frozenset[str] = frozenset({BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE})
"""The roles of the messages a summary entry contributes."""

CONTEXT_TYPES: frozenset[str] = frozenset(t for t, d in DESCRIPTORS.items() if d.context_messages is not no_messages)
"""The entry types that may contribute messages to the model context (those
whose descriptor declares a ``context_messages``): a message, a custom
message, a branch summary, a compaction."""

SETTING_TYPES: frozenset[str] = frozenset({MODEL_CHANGE, THINKING_LEVEL_CHANGE})
"""The entry types that change the model or the thinking level."""



def _type(record: Any) -> Any:
    return record.get("type") if isinstance(record, Mapping) else None


def _among(value: Any, names: frozenset[str]) -> bool:
    return isinstance(value, str) and value in names


def role_of(msg: Any) -> Any:
    """A message's ``role`` (any JSON value), None for a message that is not an object or has none."""
    return msg.get("role") if isinstance(msg, Mapping) else None


def is_message(entry: Any) -> bool:
    """The record is a ``message`` entry."""
    return _type(entry) == MESSAGE


def message_of(entry: Any) -> dict[str, Any] | None:
    """The message of a ``message`` entry when it is an object, else None."""
    if _type(entry) == MESSAGE:
        msg = entry.get("message")
        if isinstance(msg, dict):
            return msg
    return None


def is_compaction(entry: Any) -> bool:
    """The record is a ``compaction`` entry."""
    return _type(entry) == COMPACTION


def is_branch_summary(entry: Any) -> bool:
    """The record is a ``branch_summary`` entry."""
    return _type(entry) == BRANCH_SUMMARY


def is_summary(entry: Any) -> bool:
    """The record summarizes other entries: a compaction or a branch summary."""
    return _among(_type(entry), SUMMARY_TYPES)


def may_contribute(entry: Any) -> bool:
    """The record's type is one that may contribute messages to the model
    context (:data:`CONTEXT_TYPES`; whether this one does depends on its
    fields and position, see :func:`pi_session.entries.entry_messages`)."""
    return _among(_type(entry), CONTEXT_TYPES)


def is_context_edit(entry: Any) -> bool:
    """The record is a ``context_edit`` entry."""
    return _type(entry) == CONTEXT_EDIT


def is_custom_message(entry: Any) -> bool:
    """The record is a ``custom_message`` entry."""
    return _type(entry) == CUSTOM_MESSAGE


def is_label(entry: Any) -> bool:
    """The record is a ``label`` entry."""
    return _type(entry) == LABEL


def is_user(msg: Any) -> bool:
    """The message's role is ``user``."""
    return role_of(msg) == USER


def is_assistant(msg: Any) -> bool:
    """The message's role is ``assistant``."""
    return role_of(msg) == ASSISTANT


def is_tool_result(msg: Any) -> bool:
    """The message is a tool result (role ``toolResult``)."""
    return role_of(msg) == TOOL_RESULT


def is_bash_execution(msg: Any) -> bool:
    """The message records a user's shell command (role ``bashExecution``)."""
    return role_of(msg) == BASH_EXECUTION


def is_system(msg: Any) -> bool:
    """The message's role is ``system``."""
    return role_of(msg) == SYSTEM


def is_summary_message(msg: Any) -> bool:
    """The message is a summary's (role ``branchSummary`` or ``compactionSummary``)."""
    return _among(role_of(msg), SUMMARY_ROLES)
