"""The detail pane of ``pi-session browse``: one entry's full content.

Pure: an entry in, text out. Every piece of session text goes through
:func:`pi_session.render.terminal.sanitize` (no terminal escapes reach the
screen). :func:`entry_sections` gives the content as ``(heading, text)``
pairs, which both the pane (:func:`detail_text`) and the search use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from rich.text import Text

from ..render.terminal import ROLE_STYLES, sanitize, system_changes
from ..core.text import plural, field_text
from ..session.context import system_message_text, text_content
from ..entries import entry_type
from ..core.jsonio import dumps_readable
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE, MESSAGE, SYSTEM, TOOL_RESULT,
)

__all__ = ["DETAIL_LIMIT", "entry_sections", "entry_search_text", "detail_text", "entry_json"]

DETAIL_LIMIT = 200_000
"""Characters of one section the pane shows (the rest is cut, with a note:
the raw view or ``pi-session context --json`` has everything)."""


def _json(value: Any) -> str:
    try:
        return dumps_readable(value)
    except (TypeError, ValueError):  # not JSON data (an entry built in memory)
        return repr(value)


def _content_parts(content: Any) -> list[tuple[str, str]]:
    """Text blocks as text, images as a one-line note."""
    if isinstance(content, str):
        return [("", content)]
    parts: list[tuple[str, str]] = []
    if not isinstance(content, list):
        return parts
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(("", field_text(block.get("text", ""))))
        elif kind == "image":
            data = block.get("data")
            size = f", {len(data):,} base64 characters" if isinstance(data, str) else ""
            parts.append(("image", f"[image {block.get('mimeType', '')}{size}]"))
    return parts


def _message_sections(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    role = message.get("role")
    out: list[tuple[str, str]] = []
    if role == ASSISTANT:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text":
                out.append(("", field_text(block.get("text", ""))))
            elif kind == "thinking":
                thought = field_text(block.get("thinking", ""))
                # signed thinking with no text (a provider that hides it): a heading of its own, no empty section
                out.append(("thinking", thought) if thought.strip() else ("redacted thinking", "(the provider sent no text)"))
            elif kind == "toolCall":
                out.append((f"tool call {block.get('name')} ({block.get('id')})", _json(block.get("arguments"))))
        if message.get("errorMessage"):
            out.append(("error", field_text(message.get("errorMessage"))))
        facts = [f"{k}: {message.get(k)}" for k in ("provider", "model", "stopReason") if message.get(k) is not None]
        usage = message.get("usage")
        if isinstance(usage, Mapping):
            facts.append("usage: " + ", ".join(f"{k} {v}" for k, v in usage.items() if not isinstance(v, Mapping)))
        if facts:
            out.append(("model", "\n".join(facts)))
        return out
    if role == TOOL_RESULT:
        failed = " (failed)" if message.get("isError") is True else ""
        out.append((f"result of {message.get('toolName')} ({message.get('toolCallId')}){failed}", ""))
        out.extend(_content_parts(message.get("content")))
        return out
    if role == BASH_EXECUTION:
        out.append(("command", field_text(message.get("command", ""))))
        out.append(("output", field_text(message.get("output", ""))))
        return out
    if role in (BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE):
        return [("summary", field_text(message.get("summary", "")))]
    if role == SYSTEM:
        changes = system_changes(message)
        if changes:
            out.append(("changes", changes))
        out.append(("system prompt", system_message_text(message)))
        return out
    return _content_parts(message.get("content"))


def entry_sections(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The full content of an entry as ``(heading, text)`` pairs (heading
    ``""`` for plain message text), unsanitized: messages by role (text,
    thinking, tool calls with their arguments, tool results, summaries),
    compactions and branch summaries with their summary and details; any
    other entry as its JSON fields."""
    etype = entry.get("type")
    kind = entry_type(entry)
    match kind:
        case "message":
            message = entry.get("message")
            if not isinstance(message, Mapping):
                return [("message", "(its message is not an object)")]
            return _message_sections(message)
        case "compaction":
            sections = [("summary", field_text(entry.get("summary", "")))]
            sections.append(("kept", f"first kept entry {entry.get('firstKeptEntryId')}; {entry.get('tokensBefore')} tokens before"))
            if entry.get("details") is not None:
                sections.append(("details", _json(entry.get("details"))))
            return sections
        case "branch_summary":
            sections = [("summary", field_text(entry.get("summary", "")) or "(empty: a move of the leaf, left out of the context)")]
            sections.append(("from", field_text(entry.get("fromId"))))
            if entry.get("details") is not None:
                sections.append(("details", _json(entry.get("details"))))
            return sections
        case "custom_message":
            return [(f"custom message {entry.get('customType')}", ""), *_content_parts(entry.get("content"))]
        case "context_edit":
            replacement = entry.get("replacement")
            what = "omitted from the context" if replacement is None else "replaced by"
            sections = [(f"context edit of {entry.get('targetId')}", what)]
            if isinstance(replacement, Mapping):
                sections.append(("replacement", text_content(replacement.get("content"), "\n")))
            return sections
        case "thinking_level_change" | "model_change" | "custom" | "label" | "session_info" | "usage" | "session" | "unknown":
            pass  # its JSON fields, below
        case _:
            assert_never(kind)
    skip = {"type", "id", "parentId", "timestamp"}
    fields = {k: v for k, v in entry.items() if k not in skip}
    return [(str(etype), _json(fields) if fields else "")]


def entry_search_text(entry: Mapping[str, Any], label: str | None = None) -> str:
    """What the tree search looks in: the entry's id, type, role, label and
    full content (see :func:`entry_sections`), one string."""
    message = entry.get("message")
    role = message.get("role") if isinstance(message, Mapping) else ""
    head = f"{entry.get('id')} {entry.get('type')} {role} {label or ''}"
    return "\n".join([head, *(f"{h}\n{t}" for h, t in entry_sections(entry))])


def _cut(text: str) -> str:
    if len(text) <= DETAIL_LIMIT:
        return text
    return text[:DETAIL_LIMIT] + f"\n… ({len(text) - DETAIL_LIMIT:,} more characters; press j for the raw entry)"


def detail_text(
    entry: Mapping[str, Any],
    *,
    label: str | None = None,
    is_leaf: bool = False,
    on_path: bool = False,
    children: int = 0,
) -> Text:
    """The pane's text for one entry: a heading line (type or role, id,
    label, leaf and path markers, time), then every section of
    :func:`entry_sections`, sanitized."""
    message = entry.get("message")
    role = message.get("role") if entry.get("type") == MESSAGE and isinstance(message, Mapping) else None
    kind = sanitize(str(role if role is not None else entry.get("type")))
    text = Text()
    text.append(kind, style=ROLE_STYLES.get(kind, "bold"))
    text.append(f"  {sanitize(field_text(entry.get('id')))}", style="dim")
    if label:
        text.append(f"  [{sanitize(label)}]", style="bold magenta")
    if is_leaf:
        text.append("  ← leaf", style="bold green")
    elif on_path:
        text.append("  • on the current branch", style="green")
    text.append(f"\n{sanitize(field_text(entry.get('timestamp', '')))}", style="dim")
    if children > 1:
        text.append(f"  {plural(children, 'branch', 'branches')} start here", style="dim")
    for heading, body in entry_sections(entry):
        style = "italic dim" if heading == "thinking" else ""
        if heading:
            text.append(f"\n\n── {sanitize(heading)}", style="bold")
            if body:
                text.append("\n" + sanitize(_cut(body)), style=style)
        else:
            text.append("\n\n" + sanitize(_cut(body)), style=style)
    return text


def entry_json(entry: Mapping[str, Any]) -> Text:
    """The entry as indented JSON (the raw view), sanitized."""
    return Text(sanitize(_cut(_json(entry))))
