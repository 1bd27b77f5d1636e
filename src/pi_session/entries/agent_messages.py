"""Agent messages from entries, and LLM messages from agent messages.

The messages an entry contributes (pi's ``getMessageFromEntry``:
:func:`message_from_entry`, and the ``create_*_message`` builders the entry
descriptors of :mod:`pi_session.entries` use for pi 1.6's
``sessionEntryToContextMessages``), and pi's ``convertToLlm``
(:func:`convert_to_llm`), which turns agent messages into the roles a model
API knows (user, assistant, toolResult, system). Pure functions; inputs are
never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.jsonio import js_stringify
from .records import UNDEFINED
from ..core.timestamps import iso_to_ms

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "bash_execution_to_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
    "message_from_entry",
    "normalized_message",
    "text_content",
]

# Our own wording around the <summary> tags (the tags are the wire format).
COMPACTION_SUMMARY_PREFIX = (
    "Earlier parts of this conversation were condensed to save context. "
    "What happened before this point is summarized here:\n\n<summary>\n"
)


COMPACTION_SUMMARY_SUFFIX = "\n</summary>"


BRANCH_SUMMARY_PREFIX = (
    "The conversation returned here from another branch that was explored and left. "
    "What happened on that branch is summarized here:\n\n<summary>\n"
)


BRANCH_SUMMARY_SUFFIX = "</summary>"


def create_custom_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``custom`` agent message for a ``custom_message`` entry.

    Keys follow pi's order (role, customType, content, display, details,
    timestamp); a null or missing ``content`` is ``[]`` (pi 1.6), other keys
    absent from the entry are absent from the message, as
    ``JSON.stringify`` drops undefined values. ``timestamp`` is Unix ms
    (None where JavaScript's ``new Date(timestamp)`` is invalid, see
    :func:`pi_session.core.timestamps.iso_to_ms`).
    """
    msg: dict[str, Any] = {"role": "custom"}
    if "customType" in entry:
        msg["customType"] = entry["customType"]
    content = entry.get("content")
    msg["content"] = [] if content is None else content
    for key in ("display", "details"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", UNDEFINED))
    return msg


def _summary_message(role: str, entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``{role, <keys present in entry>, timestamp (Unix ms)}``: keys that
    the entry lacks stay absent, as pi's object spread leaves them."""
    msg: dict[str, Any] = {"role": role}
    for key in keys:
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", UNDEFINED))
    return msg


def create_branch_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` agent message for a ``branch_summary`` entry:
    ``{role, summary, fromId, timestamp (Unix ms)}``."""
    return _summary_message("branchSummary", entry, ("summary", "fromId"))


def create_compaction_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``compactionSummary`` agent message for a ``compaction`` entry:
    ``{role, summary, tokensBefore, timestamp (Unix ms)}``."""
    return _summary_message("compactionSummary", entry, ("summary", "tokensBefore"))


def message_from_entry(entry: Mapping[str, Any], *, include_compaction: bool = True) -> dict[str, Any] | None:
    """The agent message an entry contributes, or None.

    ``message`` entries give their message; ``custom_message``,
    ``branch_summary`` and (unless ``include_compaction`` is false)
    ``compaction`` entries give a constructed message. This is pi's
    ``getMessageFromEntry`` used by compaction and branch summaries; note
    that context building skips empty branch summaries, this does not.
    """
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg if isinstance(msg, dict) else None
    if etype == "custom_message":
        return create_custom_message(entry)
    if etype == "branch_summary":
        return create_branch_summary_message(entry)
    if etype == "compaction" and include_compaction:
        return create_compaction_summary_message(entry)
    return None


def text_content(content: Any, separator: str = "") -> str:
    """The text of a message content: a string as it is, or the ``text`` of
    its text blocks joined by ``separator`` (other blocks, and text that is
    not a string, are skipped); anything else gives ``""``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        text
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text"
        for text in (block.get("text"),)
        if isinstance(text, str)
    )


_EMPTY_CONTENT_ROLES = frozenset(("user", "assistant", "toolResult"))


def normalized_message(msg: dict[str, Any]) -> dict[str, Any]:
    """``msg`` itself, or a copy whose null or missing ``content`` is ``[]``
    (``""`` for a system message), as pi 1.6's
    ``sessionEntryToContextMessages`` passes it on."""
    if msg.get("content") is not None:
        return msg
    role = msg.get("role")
    if role.__class__ is not str:  # a malformed role (a list, an object) is no known role
        return msg
    if role in _EMPTY_CONTENT_ROLES:
        return {**msg, "content": []}
    if role == "system":
        return {**msg, "content": ""}
    return msg


def bash_execution_to_text(msg: Mapping[str, Any]) -> str:
    """The user-message text a ``bashExecution`` message becomes for the model:
    the command, its output in a code fence (or a note that there was none),
    and notes for cancellation, a non-zero exit code and truncated output."""
    text = f"The user ran the shell command `{_as_text(msg.get('command', ''))}`\n"
    output = msg.get("output")
    if output:
        text += f"```\n{_as_text(output)}\n```"
    else:
        text += "(it printed nothing)"
    exit_code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(the command was cancelled before it finished)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nExit code: {_as_text(exit_code)}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[The output above is cut short; all of it is in {_as_text(msg['fullOutputPath'])}]"
    return text


def _as_text(value: Any) -> str:
    """A field as text in a message we build: strings as they are; other
    values (malformed fields) as their JSON, ``undefined`` for a missing
    one, as JavaScript string concatenation would show numbers, booleans
    and null."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    try:
        return js_stringify(value)
    except (TypeError, ValueError):
        return str(value)


def convert_to_llm(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn agent messages into LLM messages (pi's ``convertToLlm``).

    ``user``, ``assistant``, ``toolResult`` and (pi 1.6) ``system`` pass
    through unchanged;
    ``bashExecution`` becomes a user text (dropped when
    ``excludeFromContext``); ``custom`` becomes a user message with its
    content (a string becomes one text block); ``branchSummary`` and
    ``compactionSummary`` become user texts wrapping the summary in
    ``<summary>`` tags. Unknown roles are dropped.

    Malformed input never raises: items that are not objects and messages
    without a known ``role`` are dropped; a custom message's ``content``
    that is neither a string nor a list becomes ``[]``; summary and bash
    fields that are not strings are written as JSON (``undefined`` when
    missing), where JavaScript concatenation would stringify them.

    Returns:
        A new list; passed-through messages are the same dict objects.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role in ("user", "assistant", "toolResult", "system"):
            out.append(m)  # type: ignore[arg-type]
        elif role == "bashExecution":
            if m.get("excludeFromContext"):
                continue
            out.append(_user_text(bash_execution_to_text(m), m))
        elif role == "custom":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            elif not isinstance(content, list):
                content = []
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "branchSummary":
            out.append(_user_text(BRANCH_SUMMARY_PREFIX + _as_text(m.get("summary", UNDEFINED)) + BRANCH_SUMMARY_SUFFIX, m))
        elif role == "compactionSummary":
            out.append(
                _user_text(COMPACTION_SUMMARY_PREFIX + _as_text(m.get("summary", UNDEFINED)) + COMPACTION_SUMMARY_SUFFIX, m)
            )
    return out


def _user_text(text: str, source: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": source.get("timestamp")}
