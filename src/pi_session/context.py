"""Building the LLM context from the session tree (SPEC 5).

Pure functions: :func:`build_session_context` walks from a leaf to the root
and resolves compactions, branch summaries and custom messages into the list
of agent messages pi would send; :func:`convert_to_llm` turns agent messages
into the three roles a model API knows (user, assistant, toolResult).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, islice
from typing import Any

from .jsonio import js_stringify
from .records import SessionContext
from .timestamps import MISSING, iso_to_ms
from .tree import path_to_root

__all__ = [
    "UNSET",
    "build_session_context",
    "context_from_path",
    "convert_to_llm",
    "bash_execution_to_text",
    "text_content",
    "message_from_entry",
    "create_custom_message",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Leaf argument meaning "not given": use the last entry (pi's ``undefined``)."""

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
    timestamp); keys absent from the entry are absent from the message, as
    ``JSON.stringify`` drops undefined values. ``timestamp`` is Unix ms
    (None where JavaScript's ``new Date(timestamp)`` is invalid, see
    :func:`pi_session.timestamps.iso_to_ms`).
    """
    msg: dict[str, Any] = {"role": "custom"}
    for key in ("customType", "content", "display", "details"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


def create_branch_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` agent message for a ``branch_summary`` entry:
    ``{role, summary, fromId, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "branchSummary"}
    for key in ("summary", "fromId"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


def create_compaction_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``compactionSummary`` agent message for a ``compaction`` entry:
    ``{role, summary, tokensBefore, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "compactionSummary"}
    for key in ("summary", "tokensBefore"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


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


def _context_message(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg if isinstance(msg, dict) else None
    if etype == "custom_message":
        return create_custom_message(entry)
    if etype == "branch_summary" and entry.get("summary"):
        return create_branch_summary_message(entry)
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


def build_session_context(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None = UNSET,
    by_id: Mapping[str, Mapping[str, Any]] | None = None,
) -> SessionContext:
    """Resolve the messages, thinking level and model at a leaf (pi's
    ``buildSessionContext``).

    Args:
        entries: the session entries in file order (header excluded).
        leaf_id: the leaf entry id; None means "before the first entry" (no
            messages); :data:`UNSET` (the default) or an unknown id means the
            last entry.
        by_id: optional prebuilt index id → entry.

    Returns:
        ``{"messages": [...], "thinkingLevel": str, "model": {provider,
        modelId} | None}``. Along the root→leaf path the last
        ``thinking_level_change`` gives thinkingLevel (default ``"off"``), the
        last ``model_change`` or assistant message gives model, and the last
        ``compaction`` replaces everything before its ``firstKeptEntryId``
        with a ``compactionSummary`` message. A parentId cycle is cut at the
        first repeated entry (pi would loop forever).

    Malformed entries never make it raise: ids and parentIds that are not
    strings only match equal values (arrays/objects match nothing), a
    ``message`` that is not an object contributes no message, and other
    fields are passed on as they are (as pi does).
    """
    if leaf_id is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    if by_id is None:
        chain = _whole_chain(entries, leaf_id)
        if chain is not None:
            return context_from_path(chain)
        by_id = {}
        for e in entries:
            eid = e.get("id")
            if eid.__hash__ is not None:  # an id that is an array/object can never be looked up
                by_id[eid] = e
    leaf = _lookup(by_id, leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    try:
        path = path_to_root(leaf, by_id)
    except TypeError:  # an id or parentId that is an array or object
        path = _walk_to_root(leaf, by_id)
    return context_from_path(path)


def _lookup(by_id: Mapping[Any, Mapping[str, Any]], key: Any) -> Mapping[str, Any] | None:
    """``by_id.get(key)``, None for keys that cannot be dict keys."""
    try:
        return by_id.get(key)
    except TypeError:
        return None


def _walk_to_root(leaf: Mapping[str, Any], by_id: Mapping[Any, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Root→leaf path for entries whose ids or parentIds are not strings
    (unhashable ones never match, as a JavaScript Map never matches two
    separately parsed objects); stops at the first repeated entry."""
    path: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    current: Mapping[str, Any] | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent = current.get("parentId")
        current = _lookup(by_id, parent) if parent else None
    path.reverse()
    return path


def _whole_chain(entries: Sequence[Mapping[str, Any]], leaf_id: Any) -> list[Mapping[str, Any]] | None:
    """``entries`` as a list when they are already the root→leaf path that
    walking from ``leaf_id`` would give (the usual input: a branch), else
    None. Checked with whole-list operations, no walk: unique truthy ids,
    each entry the child of the one before, the first one's parent not
    among them, and ``leaf_id`` naming the last entry (or nothing known)."""
    if not entries:
        return None
    ids = [e.get("id") for e in entries]
    if not all(ids) or not all(isinstance(i, str) for i in ids):
        return None
    known = set(ids)
    if len(known) != len(ids):
        return None
    if isinstance(leaf_id, str) and leaf_id != ids[-1] and leaf_id in known:
        return None
    parents = [e.get("parentId") for e in entries]
    if parents[1:] != ids[:-1]:
        return None
    first_parent = parents[0]
    if first_parent and isinstance(first_parent, str) and first_parent in known:
        return None
    return list(entries)


def context_from_path(path: Sequence[Mapping[str, Any]]) -> SessionContext:
    """The context for a root→leaf path of entries, as
    :func:`build_session_context` computes it once it has walked to the root.

    Args:
        path: the entries from the root to the leaf (e.g. from
            :meth:`pi_session.SessionManager.get_branch`).

    Returns:
        ``{"messages", "model", "thinkingLevel"}`` (see
        :func:`build_session_context`). One pass over the path plus one over
        the messages that are sent.
    """
    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    compaction_index = -1
    # Only the last thinking level, model and compaction count: find each
    # walking backwards instead of resolving every one on the way.
    model_found = False
    thinking_found = False
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        etype = entry.get("type")
        if etype == "message":
            if model_found:
                continue
            msg = entry.get("message")
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                model = _model_ref(msg.get("provider", UNSET), msg.get("model", UNSET))
                model_found = True
            else:
                continue
        elif etype == "model_change":
            if model_found:
                continue
            model = _model_ref(entry.get("provider", UNSET), entry.get("modelId", UNSET))
            model_found = True
        elif etype == "thinking_level_change":
            if thinking_found:
                continue
            thinking_level = entry.get("thinkingLevel", UNSET)
            thinking_found = True
        elif etype == "compaction":
            if compaction_index >= 0:
                continue
            compaction_index = i
        else:
            continue
        if model_found and thinking_found and compaction_index >= 0:
            break

    messages: list[Any] = []
    if compaction_index >= 0:
        compaction = path[compaction_index]
        messages.append(create_compaction_summary_message(compaction))
        first_kept = compaction.get("firstKeptEntryId")
        start = compaction_index
        for i in range(compaction_index):
            if path[i].get("id") == first_kept:
                start = i
                break
        rest: Iterable[Mapping[str, Any]] = chain(
            islice(path, start, compaction_index), islice(path, compaction_index + 1, None)
        )
    else:
        rest = path
    append = messages.append
    for entry in rest:
        etype = entry.get("type")
        if etype == "message":
            msg = entry.get("message")
            if isinstance(msg, dict):
                append(msg)
        elif etype == "custom_message":
            append(create_custom_message(entry))
        elif etype == "branch_summary" and entry.get("summary"):
            append(create_branch_summary_message(entry))

    context: dict[str, Any] = {"messages": messages, "model": model}
    if thinking_level is not UNSET:
        context["thinkingLevel"] = thinking_level
    return context  # type: ignore[return-value]


def _model_ref(provider: Any, model_id: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {}
    if provider is not UNSET:
        ref["provider"] = provider
    if model_id is not UNSET:
        ref["modelId"] = model_id
    return ref


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
    if value is _MISSING:
        return "undefined"
    try:
        return js_stringify(value)
    except (TypeError, ValueError):
        return str(value)


_MISSING: Any = object()


def convert_to_llm(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn agent messages into LLM messages (pi's ``convertToLlm``).

    ``user``, ``assistant`` and ``toolResult`` pass through unchanged;
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
        if role in ("user", "assistant", "toolResult"):
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
            out.append(_user_text(BRANCH_SUMMARY_PREFIX + _as_text(m.get("summary", _MISSING)) + BRANCH_SUMMARY_SUFFIX, m))
        elif role == "compactionSummary":
            out.append(
                _user_text(COMPACTION_SUMMARY_PREFIX + _as_text(m.get("summary", _MISSING)) + COMPACTION_SUMMARY_SUFFIX, m)
            )
    return out


def _user_text(text: str, source: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": source.get("timestamp")}
