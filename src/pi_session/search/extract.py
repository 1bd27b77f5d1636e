"""What a search indexes of one record: :func:`record_docs` turns a parsed
session record into its searchable *documents* (pure). Shared by every
index (the files' cache, the SQLite store's FTS5 table, PostgreSQL's
``tsvector`` column), so the same session gives the same documents
everywhere.

One entry gives at most one document: user and assistant text (an
assistant's tool calls as ``name`` + their arguments, see
:func:`args_text`; thinking kept apart, searched only on request), tool results, bash executions, custom messages,
compaction and branch summaries, session names (``session_info``), labels,
model changes, and the header's cwd. A ``context_edit`` gives no document
of its own: it marks its target as *edited* (:attr:`Doc.edits`), whose text
a search then leaves out unless asked (the replacement is not text anyone
wrote).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from datetime import datetime, timezone

from ..session.context_edits import counted_edits
from ..entries import entry_type
from ..core.text import strip_ansi
from ..core.timestamps import iso_to_ms
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE, CUSTOM_ROLE, MESSAGE, SYSTEM,
    TOOL_RESULT, USER,
)

__all__ = ["Doc", "record_docs", "args_text", "FILE_ARGUMENTS"]

FILE_ARGUMENTS = ("path", "file_path", "filePath")
"""Tool-call arguments that name a file (pi's read, edit, write, ls, grep
and find tools use ``path``)."""


@dataclass
class Doc:
    """One searchable document.

    Attributes:
        entry_id: the entry's id (None: the header).
        ts_ms: the entry's time in ms since the epoch (message ``timestamp``
            when a number, else the entry's ISO ``timestamp``), or None.
        role: ``user``, ``assistant``, ``tool`` (tool results and bash
            executions), ``custom``, ``system`` or ``session`` (names,
            labels, summaries, model changes, the header).
        kind: the entry type, or for messages the message role
            (``toolResult``, ``bashExecution``, ...).
        tool: tool names, space-separated, lower case (calls of an
            assistant message; a result's tool; ``bash`` for a bash
            execution), or None.
        model: the model (assistant messages and model changes), or None.
        body: the searchable text.
        thinking: an assistant's thinking text ("" when none).
        files: file paths the entry's tool calls name.
        edits: target ids of context edits (a ``context_edit`` record; no
            text of its own).
    """

    entry_id: str | None
    ts_ms: int | None
    role: str
    kind: str
    tool: str | None
    model: str | None
    body: str
    thinking: str = ""
    files: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)


def _iso_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    if len(value) == 24 and value[-1] == "Z" and value[10] == "T":  # pi's own form: the fast path
        try:
            return int(datetime.fromisoformat(value[:-1]).replace(tzinfo=timezone.utc).timestamp() * 1000)
        except ValueError:
            pass
    ms = iso_to_ms(value)
    return int(ms) if ms is not None else None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(parts)


def _scalar_text(value: Any) -> str:
    if value.__class__ is str:
        return value
    if value is None or value.__class__ is bool:
        return "null" if value is None else "true" if value else "false"
    return str(value)


def args_text(arguments: Any) -> str:
    """A tool call's arguments as a search indexes and shows them: a string
    as it is; in an object or array every leaf on its own line, as
    ``key: value`` (its nearest key) with string values as they are, not
    JSON-escaped (JSON text would glue the ``n`` of an escaped newline to
    the next word: ``"cd a\\nmake"`` would index ``nmake``, not ``make``).
    Walked without recursion (arguments may nest thousands deep)."""
    if arguments.__class__ is str:
        return arguments
    out: list[str] = []
    stack: list[tuple[Any, Any]] = [(None, arguments)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((key, v) for v in reversed(value))
        else:
            text = _scalar_text(value)
            out.append(text if key is None else f"{key}: {text}")
    return "\n".join(out)


def _message_doc(entry_id: str | None, ts: int | None, message: Mapping[str, Any]) -> Doc | None:
    role = message.get("role")
    mts = message.get("timestamp")
    if isinstance(mts, (int, float)) and not isinstance(mts, bool) and mts == mts and abs(mts) < 1e16:
        ts = int(mts)
    content = message.get("content")
    if role == USER:
        return Doc(entry_id, ts, "user", "user", None, None, _text_of(content))
    if role == ASSISTANT:
        texts: list[str] = []
        thinking: list[str] = []
        tools: list[str] = []
        files: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                thinking.append(block["thinking"])
            elif kind == "toolCall":
                name = block.get("name") if isinstance(block.get("name"), str) else ""
                args = block.get("arguments")
                texts.append(f"{name} {args_text(args)}".strip())
                if name:
                    tools.append(name.lower())
                if isinstance(args, dict):
                    files.extend(args[k] for k in FILE_ARGUMENTS if isinstance(args.get(k), str) and args[k])
        if isinstance(content, str):
            texts.append(content)
        model = message.get("model") if isinstance(message.get("model"), str) else None
        return Doc(entry_id, ts, "assistant", "assistant", " ".join(tools) or None, model, "\n".join(texts), "\n".join(thinking), files)
    if role == TOOL_RESULT:
        name = message.get("toolName") if isinstance(message.get("toolName"), str) else None
        return Doc(entry_id, ts, "tool", "toolResult", name.lower() if name else None, None, _text_of(content))
    if role == BASH_EXECUTION:
        command = message.get("command") if isinstance(message.get("command"), str) else ""
        output = message.get("output") if isinstance(message.get("output"), str) else ""
        return Doc(entry_id, ts, "tool", "bashExecution", "bash", None, f"{command}\n{output}".strip("\n"))
    if role in (CUSTOM_ROLE, SYSTEM):
        return Doc(entry_id, ts, str(role), str(role), None, None, _text_of(content))
    if role in (BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE):
        summary = message.get("summary")
        return Doc(entry_id, ts, "session", str(role), None, None, summary if isinstance(summary, str) else "")
    return None


def _details_files(details: Any) -> list[str]:
    if not isinstance(details, dict):
        return []
    out: list[str] = []
    for key in ("readFiles", "modifiedFiles"):
        value = details.get(key)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str) and v)
    return out


def record_docs(record: Any) -> Doc | None:
    """The document of one parsed record (see the module docstring), or
    None for a record without searchable text (a thinking-level change, a
    ``custom`` entry's data, a damaged line). Terminal escape sequences
    are left out of the text (:func:`pi_session.core.text.strip_ansi`: a word
    a tool printed in colour is found as itself). Never raises on
    malformed records: fields of the wrong type give no text."""
    doc = _record_doc(record)
    if doc is not None:
        doc.body = strip_ansi(doc.body)
        doc.thinking = strip_ansi(doc.thinking)
    return doc


def _record_doc(record: Any) -> Doc | None:
    if not isinstance(record, dict):
        return None
    kind = entry_type(record)
    entry_id = record.get("id") if isinstance(record.get("id"), str) else None
    if kind == MESSAGE:
        message = record.get("message")
        if not isinstance(message, dict):
            return None
        mts = message.get("timestamp")
        numeric = isinstance(mts, (int, float)) and not isinstance(mts, bool)
        return _message_doc(entry_id, None if numeric else _iso_ms(record.get("timestamp")), message)
    ts = _iso_ms(record.get("timestamp"))
    match kind:
        case "session":
            cwd = record.get("cwd")
            return Doc(None, ts, "session", "session", None, None, cwd if isinstance(cwd, str) else "")
        case "compaction" | "branch_summary":
            summary = record.get("summary")
            text = summary if isinstance(summary, str) else ""
            return Doc(entry_id, ts, "session", kind, None, None, text, files=_details_files(record.get("details")))
        case "custom_message":
            return Doc(entry_id, ts, "custom", kind, None, None, _text_of(record.get("content")))
        case "session_info":
            name = record.get("name")
            return Doc(entry_id, ts, "session", "name", None, None, name.strip()) if isinstance(name, str) and name.strip() else None
        case "label":
            label = record.get("label")
            return Doc(entry_id, ts, "session", kind, None, None, label) if isinstance(label, str) and label else None
        case "model_change":
            model = record.get("modelId") if isinstance(record.get("modelId"), str) else None
            provider = record.get("provider") if isinstance(record.get("provider"), str) else ""
            return Doc(entry_id, ts, "session", kind, None, model, f"{provider} {model or ''}".strip(), files=[])
        case "context_edit":
            targets = [str(e["targetId"]) for e in counted_edits([record]) if isinstance(e.get("targetId"), str)]
            return Doc(entry_id, ts, "session", kind, None, None, "", edits=targets) if targets else None
        case "message" | "thinking_level_change" | "custom" | "usage" | "unknown":
            return None  # no searchable text (a custom entry's data is an extension's state)
        case _:
            assert_never(kind)
