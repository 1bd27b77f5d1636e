"""Building the LLM context from the session tree (SPEC 5).

Pure functions: :func:`build_session_context` walks from a leaf to the root
and resolves compactions, branch summaries and custom messages into the list
of agent messages pi would send; :func:`convert_to_llm` turns agent messages
into the three roles a model API knows (user, assistant, toolResult).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .records import AgentMessage, SessionContext
from .timestamps import iso_to_ms
from .tree import path_to_root

__all__ = [
    "UNSET",
    "build_session_context",
    "convert_to_llm",
    "bash_execution_to_text",
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
    (None where the entry's ISO timestamp does not parse).
    """
    msg: dict[str, Any] = {"role": "custom"}
    for key in ("customType", "content", "display", "details"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return msg


def create_branch_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` agent message for a ``branch_summary`` entry:
    ``{role, summary, fromId, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "branchSummary"}
    for key in ("summary", "fromId"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp"))
    return msg


def create_compaction_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``compactionSummary`` agent message for a ``compaction`` entry:
    ``{role, summary, tokensBefore, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "compactionSummary"}
    for key in ("summary", "tokensBefore"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp"))
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
    """
    if leaf_id is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    if by_id is None:
        by_id = {e.get("id"): e for e in entries}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}

    path = path_to_root(leaf, by_id)

    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    compaction_index = -1
    for i, entry in enumerate(path):
        etype = entry.get("type")
        if etype == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel", UNSET)
        elif etype == "model_change":
            model = _model_ref(entry.get("provider", UNSET), entry.get("modelId", UNSET))
        elif etype == "message":
            msg = entry.get("message")
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                model = _model_ref(msg.get("provider", UNSET), msg.get("model", UNSET))
        elif etype == "compaction":
            compaction_index = i

    messages: list[Any] = []
    if compaction_index >= 0:
        compaction = path[compaction_index]
        messages.append(create_compaction_summary_message(compaction))
        first_kept = compaction.get("firstKeptEntryId")
        found = False
        for entry in path[:compaction_index]:
            if not found and entry.get("id") == first_kept:
                found = True
            if found:
                msg = _context_message(entry)
                if msg is not None:
                    messages.append(msg)
        rest: Iterable[Mapping[str, Any]] = path[compaction_index + 1 :]
    else:
        rest = path
    for entry in rest:
        msg = _context_message(entry)
        if msg is not None:
            messages.append(msg)

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
    text = f"The user ran the shell command `{msg.get('command', '')}`\n"
    output = msg.get("output")
    if output:
        text += f"```\n{output}\n```"
    else:
        text += "(it printed nothing)"
    exit_code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(the command was cancelled before it finished)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nExit code: {exit_code}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[The output above is cut short; all of it is in {msg['fullOutputPath']}]"
    return text


def convert_to_llm(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn agent messages into LLM messages (pi's ``convertToLlm``).

    ``user``, ``assistant`` and ``toolResult`` pass through unchanged;
    ``bashExecution`` becomes a user text (dropped when
    ``excludeFromContext``); ``custom`` becomes a user message with its
    content (a string becomes one text block); ``branchSummary`` and
    ``compactionSummary`` become user texts wrapping the summary in
    ``<summary>`` tags. Unknown roles are dropped.

    Returns:
        A new list; passed-through messages are the same dict objects.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
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
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "branchSummary":
            out.append(_user_text(BRANCH_SUMMARY_PREFIX + str(m.get("summary")) + BRANCH_SUMMARY_SUFFIX, m))
        elif role == "compactionSummary":
            out.append(
                _user_text(COMPACTION_SUMMARY_PREFIX + str(m.get("summary")) + COMPACTION_SUMMARY_SUFFIX, m)
            )
    return out


def _user_text(text: str, source: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": source.get("timestamp")}
