"""One entry as HTML: its article in the conversation and its sidebar line.

Every piece of session text goes through :mod:`.markup` (escaped, or
Markdown with raw HTML off and links filtered); images are embedded only as
``data:`` URLs of a PNG, JPEG, GIF or WebP whose base64 data decodes.
Long tool output, long tool arguments, thinking, system prompts and
compaction/branch summaries are collapsed in ``<details>`` whose summary
gives their size. A tool call shows each argument once: what it works on
(path, pattern, url) in its heading line, a ``command`` as a shell code
block, an edit's ``oldText``/``newText`` as a unified diff
(:func:`edit_diff`), the rest as a list. Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import html
import re
from collections.abc import Mapping
from typing import Any, assert_never

from ..session.context import edited_entry, system_message_text, text_content
from ..entries import entry_type
from ..entries.questions import (
    ASSISTANT, CUSTOM_ROLE, MESSAGE, TOOL_RESULT, is_assistant, is_bash_execution, is_custom_message, is_summary,
    is_summary_message, is_system, is_tool_result, message_of,
)
from ..entries.content import content_text
from ..core.jsonio import dumps_readable, js_stringify
from .markup import clean, code, esc, human_size, markdown
from ..core.text import field_text

__all__ = ["article", "row_preview", "replacement_text", "collapsible", "image", "args_summary", "call_arguments", "edit_diff", "COLLAPSE_LINES", "COLLAPSE_CHARS", "ToolCalls"]

COLLAPSE_LINES = 12
"""Tool output, bash output and tool arguments longer than this many lines
are collapsed."""
COLLAPSE_CHARS = 1200
"""... or longer than this many characters."""

_IMAGE_TYPES = frozenset(("image/png", "image/jpeg", "image/gif", "image/webp"))
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")

ToolCalls = dict[str, tuple[str, Any]]
"""toolCallId → (tool name, arguments), from the assistant messages."""


def _size(text: str) -> str:
    lines = text.count("\n") + 1 if text else 0
    return f"{lines:,} line{'s' if lines != 1 else ''}, {human_size(len(text.encode('utf-8', 'surrogatepass')))}"


def collapsible(title: str, body_html: str, text: str, *, force: bool = False, cls: str = "") -> str:
    """``body_html`` inside a closed ``<details>`` titled ``title`` (already
    escaped HTML) with the size of ``text`` (lines, bytes), when ``force``
    or ``text`` is longer than :data:`COLLAPSE_LINES` lines or
    :data:`COLLAPSE_CHARS` characters; else ``body_html`` as it is."""
    if not force and len(text) <= COLLAPSE_CHARS and text.count("\n") < COLLAPSE_LINES:
        return body_html
    extra = f" {cls}" if cls else ""
    return f'<details class="fold{extra}"><summary>{title} <span class="size">({_size(text)})</span></summary>{body_html}</details>'


def image(mime: Any, data: Any) -> str:
    """An ``<img>`` with a ``data:`` URL, or a note when the type is not
    PNG/JPEG/GIF/WebP or the data is not valid base64."""
    if mime in _IMAGE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            pass
        else:
            return f'<img class="img" alt="image ({mime})" src="data:{mime};base64,{data}">'
    return f'<p class="note">(image not shown: type {esc(mime)} is not an image type shown here, or its data is not base64)</p>'


def _pre(text: str, cls: str = "out") -> str:
    return f'<pre class="{cls}">{esc(text)}</pre>'


def _label_line(entry: Mapping[str, Any]) -> str:
    label = entry.get("label")
    target = field_text(entry.get("targetId"))
    return f"{target} = {field_text(label)}" if label else f"{target} cleared"


_ONE_LINE: dict[str, Any] = {
    "model_change": lambda e: f"{field_text(e.get('provider'))}/{field_text(e.get('modelId'))}",
    "thinking_level_change": lambda e: field_text(e.get("thinkingLevel")),
    "label": _label_line,
    "session_info": lambda e: f"name = {field_text(e.get('name'))}",
    "custom": lambda e: field_text(e.get("customType")),
}
"""Entry types shown as one line of text (escaped as a whole) and no body."""


def _blocks_html(content: Any, role: str, tool_calls_shown: bool = True) -> str:
    """Message content (string or blocks) as HTML: text as Markdown
    (assistant, custom) or plain (user, toolResult), thinking collapsed,
    tool calls with their arguments, images inline."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return ""
    out = []
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            text = text if isinstance(text, str) else ""
            if role == ASSISTANT or role == CUSTOM_ROLE:
                out.append(f'<div class="md">{markdown(text)}</div>')
            elif role == TOOL_RESULT:
                out.append(collapsible("output", _pre(text), text))
            else:
                out.append(_pre(text, "text"))
        elif btype == "thinking":
            text = block.get("thinking")
            text = text if isinstance(text, str) else ""
            if not text.strip():
                # signed or redacted thinking whose text the provider keeps: nothing to fold
                if block.get("redacted") or block.get("thinkingSignature"):
                    out.append('<p class="note thinking">(redacted thinking)</p>')
                continue
            redacted = " (redacted)" if block.get("redacted") else ""
            out.append(collapsible(f"thinking{redacted}", f'<div class="md">{markdown(text)}</div>', text, force=True, cls="thinking"))
        elif btype == "toolCall" and tool_calls_shown:
            out.append(_tool_call(block))
        elif btype == "image":
            out.append(image(block.get("mimeType"), block.get("data")))
    return "".join(out)


def replacement_text(content: Any) -> str:
    """The text a context edit's new ``content`` holds, for its size: its
    text and thinking blocks, and each tool call as its name and its
    arguments as JSON, one per line."""
    return content_text(content, _replacement_block, "\n")


def _replacement_block(btype: str, block: Mapping[str, Any]) -> str | None:
    if btype == "text":
        return field_text(block.get("text", ""))
    if btype == "thinking":
        return field_text(block.get("thinking", ""))
    if btype == "toolCall":
        return f"{field_text(block.get('name'))} {js_stringify(block.get('arguments'))}"
    return None


def _arg_text(value: Any) -> str:
    return value if isinstance(value, str) else dumps_readable(value)


_SUMMARY_KEYS = ("path", "file_path", "command", "pattern", "url", "query")


def _summary_key(args: Any) -> str | None:
    """The argument that names what a tool call works on, if any."""
    if isinstance(args, dict):
        for key in _SUMMARY_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                return key
    return None


def args_summary(args: Any, width: int = 80) -> str:
    """One line naming what a tool call works on: its ``path``, ``command``,
    ``pattern`` or ``url`` argument, else its arguments as JSON; cut to
    ``width`` characters (not escaped)."""
    key = _summary_key(args)
    if key is not None:
        text = args[key]
    elif isinstance(args, dict):
        text = js_stringify(args) if args else ""
    else:
        text = js_stringify(args) if args is not None else ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


_EDIT_PAIRS = (("oldText", "newText"), ("old_string", "new_string"))


def _edit_pairs(args: Any) -> tuple[list[tuple[str, str]], tuple[str, ...]] | None:
    """The (old, new) text pairs of an edit call and the argument names
    they came from: ``oldText``/``newText`` (pi's edit tool; also
    ``old_string``/``new_string``), or an ``edits`` list of such objects."""
    if not isinstance(args, dict):
        return None
    for old_key, new_key in _EDIT_PAIRS:
        if isinstance(args.get(old_key), str) and isinstance(args.get(new_key), str):
            return [(args[old_key], args[new_key])], (old_key, new_key)
    edits = args.get("edits")
    if isinstance(edits, list) and edits:
        pairs = []
        for item in edits:
            found = None
            if isinstance(item, dict):
                for old_key, new_key in _EDIT_PAIRS:
                    if isinstance(item.get(old_key), str) and isinstance(item.get(new_key), str):
                        found = (item[old_key], item[new_key])
                        break
            if found is None:
                return None
            pairs.append(found)
        return pairs, ("edits",)
    return None


def edit_diff(args: Any) -> str | None:
    """The unified diff (``difflib``, 3 lines of context, hunk lines
    numbered within the replaced text, no file header lines) of an edit
    call's old and new text (:func:`_edit_pairs`), one block per edit; None
    when ``args`` is not an edit. An edit that changes nothing gives
    ``"(no change)"``."""
    found = _edit_pairs(args)
    if found is None:
        return None
    pieces = []
    for old, new in found[0]:
        lines = list(difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3))
        pieces.append("\n".join(lines[2:]) if lines else "(no change)")
    return "\n".join(pieces)


def call_arguments(args: Any) -> tuple[str, str | None, str | None, Any]:
    """How a tool call's arguments are shown, each once: ``(summary,
    command, diff, rest)``. ``summary`` is the heading line
    (:func:`args_summary`; empty for a ``command``, shown whole instead);
    ``command`` the ``command`` argument (shell code) or None; ``diff`` an
    edit's :func:`edit_diff` or None; ``rest`` the arguments left to list
    (a dict without those shown, possibly empty; or the arguments as they
    are when not an object, None when they are the summary)."""
    summary = args_summary(args)
    if not isinstance(args, dict):
        text = _arg_text(args) if args is not None else ""
        return summary, None, None, (args if text and text != summary else None)
    rest = dict(args)
    command = None
    key = _summary_key(args)
    if key == "command":
        command = rest.pop("command")
        summary = ""
    elif key is not None and summary == args[key]:
        rest.pop(key)  # shown whole in the heading
    found = _edit_pairs(args)
    diff = edit_diff(args)
    if found is not None:
        for used in found[1]:
            rest.pop(used, None)
    return summary, command, diff, rest


def _tool_call(block: Mapping[str, Any]) -> str:
    name = block.get("name")
    summary, command, diff, rest = call_arguments(block.get("arguments"))
    parts: list[str] = []
    if command is not None:
        parts.append(collapsible("command", code(command, "bash"), command))
    if diff is not None:
        # a last line without a newline lexes as an error
        parts.append(collapsible("diff", code(diff + "\n", "diff"), diff))
    if isinstance(rest, dict):
        rows = []
        full = []
        for k, value in rest.items():
            text = _arg_text(value)
            full.append(text)
            rows.append(f"<dt>{esc(k)}</dt><dd>{_pre(text, 'arg')}</dd>")
        if rows:
            parts.append(collapsible("arguments", f'<dl class="args">{"".join(rows)}</dl>', "\n".join(full)))
    elif rest is not None:
        text = _arg_text(rest)
        parts.append(collapsible("arguments", _pre(text, "arg"), text))
    head = f' <span class="summary">{esc(summary)}</span>' if summary else ""
    return f'<div class="call"><div class="callhead"><span class="tool">{esc(name)}</span>{head}</div>{"".join(parts)}</div>'


def _time(entry: Mapping[str, Any]) -> str:
    ts = entry.get("timestamp")
    if not isinstance(ts, str):
        return ""
    short = ts.replace("T", " ")[:19]
    return f'<time title="{esc(ts)}">{esc(short)}</time>'


def _kind(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(css kind, visible kind name) of an entry."""
    etype = entry.get("type")
    if etype == MESSAGE:
        message = entry.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        role = role if isinstance(role, str) else "message"
        return ("r-" + re.sub(r"[^A-Za-z]", "", role)[:20], role)
    name = etype if isinstance(etype, str) else "?"
    return ("t-" + re.sub(r"[^A-Za-z_]", "", name)[:30], name)


def _message_body(message: Mapping[str, Any], calls: ToolCalls) -> tuple[str, str]:
    """(extra heading text, body HTML) of a message."""
    role = message.get("role")
    if is_tool_result(message):
        call_id = message.get("toolCallId")
        call = calls.get(call_id) if isinstance(call_id, str) else None
        name = message.get("toolName")
        heading = f'<span class="tool">{esc(name)}</span>'
        if call is not None:
            heading += f' <span class="summary">{esc(args_summary(call[1]))}</span>'
        if message.get("isError") is True:
            heading += ' <span class="err">error</span>'
        body = _blocks_html(message.get("content"), TOOL_RESULT)
        nested = message.get("nestedCalls")
        if isinstance(nested, dict) and isinstance(nested.get("calls"), list):
            items = [
                f'<li><span class="tool">{esc(c.get("name"))}</span> {esc(args_summary(c.get("arguments")))} <span class="st">{esc(c.get("status"))}</span></li>'
                for c in nested["calls"]
                if isinstance(c, dict)
            ]
            body += collapsible(f"nested calls: {len(items)}", f"<ul>{''.join(items)}</ul>", "", force=True)
        return heading, body or '<p class="note">(no output)</p>'
    if is_bash_execution(message):
        command = field_text(message.get("command", ""))
        output = field_text(message.get("output", "") or "")
        body = code(command, "bash")
        if output:
            body += collapsible("output", _pre(output), output)
        notes = []
        if message.get("exitCode") not in (0, None):
            notes.append(f"exit code {esc(message.get('exitCode'))}")
        if message.get("cancelled") is True:
            notes.append("cancelled")
        if message.get("truncated") is True:
            notes.append("output truncated")
        if message.get("excludeFromContext") is True:
            notes.append("not sent to the model")
        if notes:
            body += f'<p class="note">{"; ".join(notes)}</p>'
        return "", body
    if is_summary_message(message):
        summary = field_text(message.get("summary", ""))
        return "", collapsible("summary", f'<div class="md">{markdown(summary)}</div>', summary, force=True, cls="summary")
    if is_system(message):
        text = system_message_text(message)
        changes: list[str] = []
        for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
            tools = message.get(key)
            if isinstance(tools, list):
                changes.extend(sign + str(t.get("name")) for t in tools if isinstance(t, dict))
        sections = message.get("sections")
        if isinstance(sections, dict):
            changes.extend(f"section {k}" + (" removed" if v is None else "") for k, v in sections.items())
        head = f'<p class="note">{esc(", ".join(changes))}</p>' if changes else ""
        return "", head + collapsible("system prompt", _pre(text), text, force=True, cls="system")
    body = _blocks_html(message.get("content"), role if isinstance(role, str) else "")
    if is_assistant(message):
        stop = message.get("stopReason")
        if stop in ("aborted", "error", "length"):
            body += f'<p class="note err">stopped: {esc(stop)}</p>'
        if message.get("errorMessage"):
            body += f'<p class="note err">{esc(message.get("errorMessage"))}</p>'
        model = message.get("model")
        heading = f'<span class="model">{esc(message.get("provider"))}/{esc(model)}</span>' if model else ""
        return heading, body
    return "", body


def _entry_body(entry: Mapping[str, Any], calls: ToolCalls) -> tuple[str, str]:
    """(heading text, body HTML) of an entry's card, by its type."""
    kind = entry_type(entry)
    match kind:
        case "message":
            message = entry.get("message")
            if not isinstance(message, dict):
                return "", '<p class="note">(its message is not an object)</p>'
            return _message_body(message, calls)
        case "compaction":
            summary = field_text(entry.get("summary", ""))
            keeps = "; keeps nothing" if entry.get("firstKeptEntryId") == entry.get("id") else ""
            head = f'<span class="summary">{esc(entry.get("tokensBefore"))} tokens before{keeps}</span>'
            return head, collapsible("compaction summary", f'<div class="md">{markdown(summary)}</div>', summary, force=True, cls="summary")
        case "branch_summary":
            summary = field_text(entry.get("summary", ""))
            head = f'<span class="summary">from {esc(entry.get("fromId"))}</span>'
            return head, collapsible("branch summary", f'<div class="md">{markdown(summary)}</div>', summary, force=True, cls="summary")
        case "custom_message":
            head = f'<span class="summary">{esc(entry.get("customType"))}</span>'
            return head, _blocks_html(entry.get("content"), "custom")
        case "model_change" | "thinking_level_change" | "label" | "session_info" | "custom":
            return f'<span class="summary">{esc(_ONE_LINE[kind](entry))}</span>', ""
        case "context_edit":
            replacement = entry.get("replacement")
            what = "omits" if replacement is None else "replaces the content of"
            head = f'<span class="summary">{what} {esc(entry.get("targetId"))}</span>'
            body = ""
            if isinstance(replacement, dict) and "content" in replacement:
                content = replacement["content"]
                body = collapsible("new content", _blocks_html(content, "user") or '<p class="note">(empty)</p>', replacement_text(content), force=True)
            return head, body
        case "usage":
            raw = entry.get("usage")
            usage = raw if isinstance(raw, dict) else {}
            note = f" ({field_text(entry.get('note'))})" if entry.get("note") else ""
            text = f"{field_text(entry.get('kind'))} {field_text(entry.get('provider'))}/{field_text(entry.get('model'))}, {field_text(usage.get('totalTokens', '?'))} tokens{note}"
            return f'<span class="summary">{esc(text)}</span>', ""
        case "session" | "unknown":
            return "", ""
        case _:
            assert_never(kind)


def article(
    index: int,
    entry: Mapping[str, Any],
    *,
    label: str | None,
    is_leaf: bool,
    edit: tuple[str, Any] | None,
    calls: ToolCalls,
    hidden: bool = False,
) -> str:
    """The ``<article id="e<index>">`` of one entry: a heading line (kind,
    label, leaf mark, time, id) and its body. ``edit`` is the context edit
    hiding or replacing its content (see :mod:`.model`): an omitted entry
    keeps only its heading and a note; an edited one shows the replacement
    and a note. The original content of either is not written. ``hidden``:
    the entry is left out of the conversation view (class ``aux``)."""
    css, kind = _kind(entry)
    if hidden:
        css += " aux"
    note = ""
    if edit is not None:
        edit_id, replacement = edit
        if replacement is None:
            extra, body = "", ""
            note = f'<p class="edit">omitted from the model context by context edit {esc(edit_id)} (its content is not included in this page)</p>'
            css += " omitted"
        else:
            changed = edited_entry(entry, replacement)
            if changed is not entry:
                note = f'<p class="edit">edited by context edit {esc(edit_id)} (shown as the model sees it; the original content is not included in this page)</p>'
                css += " edited"
                entry = changed
            extra, body = _entry_body(entry, calls)
    else:
        extra, body = _entry_body(entry, calls)
    parts = [f'<article class="entry {css}" id="e{index}" data-i="{index}"><div class="eh"><span class="kind">{esc(kind)}</span>']
    if extra:
        parts.append(" " + extra)
    if label:
        parts.append(f' <span class="lbl">{esc(label)}</span>')
    if is_leaf:
        parts.append(' <span class="leafmark">current leaf</span>')
    parts.append(f'<span class="when">{_time(entry)} <span class="eid">{esc(entry.get("id"))}</span></span></div>')
    parts.append(note)
    if body:
        parts.append(f'<div class="eb">{body}</div>')
    parts.append("</article>")
    return "".join(parts)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def row_preview(entry: Mapping[str, Any], edit: tuple[str, Any] | None, width: int = 90) -> tuple[str, str, str]:
    """(css kind, kind name, one-line preview, not escaped) of an entry for
    the sidebar, after the context edit that hides or replaces it."""
    css, kind = _kind(entry)
    if edit is not None:
        if edit[1] is None:
            return css, kind, f"(omitted by context edit {edit[0]})"
        entry = edited_entry(entry, edit[1])
    message = message_of(entry)
    if message is not None:
        content = message.get("content")
        if is_assistant(message):
            blocks = content if isinstance(content, list) else []
            text = " ".join(field_text(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            names = [field_text(b.get("name")) for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]
            preview = _one_line(text, width) if text.strip() else ""
            if names:
                preview = (preview + " " if preview else "") + f"[{', '.join(names)}]"
            return css, kind, _one_line(preview, width) or "(empty)"
        if is_tool_result(message):
            failed = "✗ " if message.get("isError") is True else ""
            return css, kind, _one_line(f"{field_text(message.get('toolName'))}: {failed}{text_content(content, ' ')}", width)
        if is_bash_execution(message):
            return css, kind, _one_line(f"$ {field_text(message.get('command', ''))}", width)
        if is_summary_message(message):
            return css, kind, _one_line(field_text(message.get("summary", "")), width)
        if is_system(message):
            return css, kind, _one_line(system_message_text(message), width)
        return css, kind, _one_line(text_content(content, " "), width)
    if is_summary(entry):
        return css, kind, _one_line(field_text(entry.get("summary", "")), width)
    if is_custom_message(entry):
        return css, kind, _one_line(f"{field_text(entry.get('customType'))}: {text_content(entry.get('content'), ' ')}", width)
    extra, _body = _entry_body(entry, {})
    return css, kind, _one_line(html.unescape(re.sub(r"<[^>]*>", "", extra)), width)
