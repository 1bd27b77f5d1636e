"""Exporting a conversation as Markdown or self-contained HTML (beyond pi).

The export is the path from the root to the leaf (every entry, also those a
compaction summarised away), rendered in order: messages by role, compaction
and branch summaries, model and thinking-level changes, system messages and
context edits. Content a context edit replaced is shown as the model sees
it, and an entry a context edit omits is marked with its content left out
(an edit is how a user hides a secret or a huge output; an export must not
bring it back). Pure functions: they take entries and return text.

Safety: all session text is untrusted. In HTML every piece of it goes through
``html.escape`` (quotes included) and sits inside ``<pre>``; the page carries
a Content-Security-Policy that allows no script, no external resource and no
form, and images are embedded only as ``data:`` URLs of a known image type
with base64-only data. In Markdown every piece of session text sits in a
fenced code block whose fence is longer than any backtick run in the text,
so it cannot close the fence or inject HTML or links.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .context import applied_context_edits, edited_entry, system_message_text, text_content
from .jsonio import js_stringify

__all__ = ["export_markdown", "export_html", "title_of"]

_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def title_of(header: Mapping[str, Any] | None, entries: Sequence[Mapping[str, Any]], name: str | None = None) -> str:
    """The session name, else the first user message's first line (≤ 80
    characters) as the model sees it after context edits, else the session
    id."""
    if name:
        return name
    edits = applied_context_edits(entries)
    for entry in entries:
        entry_id = entry.get("id")
        edit = edits.get(entry_id) if isinstance(entry_id, str) else None
        if edit is not None:
            if edit[1] is None:
                continue
            entry = edited_entry(entry, edit[1])
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            first = text_content(message.get("content"), "\n").strip().split("\n", 1)[0]
            if first:
                return first[:80]
    return f"Session {header.get('id') if header else ''}".strip()


# A block is (heading, [(kind, payload)]) where kind is "text" (plain text),
# "code" (monospace text), or "image" ((mime, base64 data)).
_Block = tuple[str, list[tuple[str, Any]]]


def _blocks(entries: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> list[_Block]:
    blocks: list[_Block] = []
    edits = applied_context_edits(entries)
    for entry in entries:
        etype = entry.get("type")
        parts: list[tuple[str, Any]] = []
        label = labels.get(str(entry.get("id")))
        suffix = f" [{label}]" if label else ""
        entry_id = entry.get("id")
        edit = edits.get(entry_id) if isinstance(entry_id, str) else None
        if edit is not None:
            edit_id, replacement = edit
            if replacement is None:
                what = entry.get("message", {}).get("role") if etype == "message" and isinstance(entry.get("message"), dict) else etype
                blocks.append((f"{what}{suffix} (omitted from the model context by context edit {edit_id})", []))
                continue
            entry = edited_entry(entry, replacement)
            suffix += f" (edited by context edit {edit_id})"
        if etype == "message" and isinstance(entry.get("message"), dict):
            message = entry["message"]
            role = str(message.get("role"))
            heading = role
            content = message.get("content")
            if role == "bashExecution":
                parts.append(("code", f"$ {message.get('command', '')}\n{message.get('output', '')}"))
                if message.get("exitCode") not in (0, None):
                    parts.append(("text", f"exit code {message.get('exitCode')}"))
            elif role in ("branchSummary", "compactionSummary"):
                parts.append(("text", str(message.get("summary", ""))))
            elif role == "system":
                heading = "system prompt"
                parts.append(("code", system_message_text(message)))
            else:
                if role == "toolResult":
                    heading = f"tool result: {message.get('toolName', '')}" + (" (error)" if message.get("isError") else "")
                if isinstance(content, str):
                    parts.append(("text", content))
                elif isinstance(content, list):
                    for block in content:
                        if not isinstance(block, dict):
                            continue
                        btype = block.get("type")
                        if btype == "text":
                            parts.append(("code" if role == "toolResult" else "text", str(block.get("text", ""))))
                        elif btype == "thinking":
                            parts.append(("text", "(thinking) " + str(block.get("thinking", ""))))
                        elif btype == "toolCall":
                            parts.append(("code", f"→ {block.get('name', '')}({js_stringify(block.get('arguments'))})"))
                        elif btype == "image":
                            parts.append(("image", (block.get("mimeType"), block.get("data"))))
                if message.get("errorMessage"):
                    parts.append(("text", f"(error: {message['errorMessage']})"))
            blocks.append((heading + suffix, parts))
        elif etype == "compaction":
            blocks.append((f"compaction (tokens before: {entry.get('tokensBefore')}){suffix}", [("text", str(entry.get("summary", "")))]))
        elif etype == "branch_summary":
            blocks.append((f"branch summary (from {entry.get('fromId')}){suffix}", [("text", str(entry.get("summary", "")))]))
        elif etype == "custom_message":
            blocks.append((f"custom: {entry.get('customType', '')}{suffix}", [("text", text_content(entry.get("content"), "\n"))]))
        elif etype == "model_change":
            blocks.append((f"model: {entry.get('provider')}/{entry.get('modelId')}{suffix}", []))
        elif etype == "thinking_level_change":
            blocks.append((f"thinking level: {entry.get('thinkingLevel')}{suffix}", []))
        elif etype == "context_edit":
            what = "omit" if entry.get("replacement") is None else "replace content of"
            blocks.append((f"context edit: {what} {entry.get('targetId')}{suffix}", []))
        elif etype == "usage":
            raw_usage = entry.get("usage")
            usage = raw_usage if isinstance(raw_usage, dict) else {}
            blocks.append((f"usage: {entry.get('kind')} {entry.get('provider')}/{entry.get('model')}, {usage.get('totalTokens', '?')} tokens{suffix}", []))
    return blocks


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _md_inline(text: str) -> str:
    """One line of untrusted text made inert for a Markdown heading."""
    text = " ".join(text.split())
    text = re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def export_markdown(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
) -> str:
    """Render a root→leaf path as Markdown.

    Args:
        header: the session header (id, cwd, timestamp are shown).
        entries: the path, root first (``SessionManager.get_branch()``).
        labels: entry id → label, shown after the heading.
        name: the session name (the title; default from the first message).

    Returns:
        The document (str). All session text is inside fenced code blocks or
        backslash-escaped, so it renders as text.
    """
    out = [f"# {_md_inline(title_of(header, entries, name))}", ""]
    if header:
        for key in ("id", "cwd", "timestamp"):
            if header.get(key) is not None:
                out.append(f"- {key}: {_md_inline(str(header[key]))}")
        out.append("")
    for heading, parts in _blocks(entries, labels or {}):
        out.append(f"## {_md_inline(heading)}")
        out.append("")
        for kind, payload in parts:
            if kind == "image":
                mime, data = payload
                size = len(data) * 3 // 4 if isinstance(data, str) else 0
                out.append(f"*(image, {_md_inline(str(mime))}, about {size} bytes)*")
            else:
                out.append(_fence(str(payload)))
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222;background:#fff}
h1{font-size:1.4rem}h2{font-size:1rem;margin:1.5rem 0 .3rem;color:#555;text-transform:none}
pre{white-space:pre-wrap;word-wrap:break-word;background:#f6f6f6;padding:.6rem;border-radius:4px;margin:.3rem 0}
pre.text{background:#fff;border-left:3px solid #ddd;font-family:inherit}
.user h2{color:#1a5fb4}.assistant h2{color:#26a269}.meta{color:#777;font-size:.9rem}
img{max-width:100%}
"""


def _safe_image(mime: Any, data: Any) -> str | None:
    if mime not in _IMAGE_TYPES or not isinstance(data, str) or not _BASE64.fullmatch(data):
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return f'<img alt="image" src="data:{mime};base64,{data}">'


def export_html(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
) -> str:
    """Render a root→leaf path as one self-contained HTML page (inline CSS,
    no script, no external resource).

    Args: as :func:`export_markdown`.

    Returns:
        The page (str). Every piece of session text is ``html.escape``-d.
    """
    esc = html.escape
    title = esc(title_of(header, entries, name))
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title><style>{_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
    ]
    if header:
        meta = " · ".join(f"{key}: {esc(str(header[key]))}" for key in ("id", "cwd", "timestamp") if header.get(key) is not None)
        out.append(f'<p class="meta">{meta}</p>')
    for heading, parts in _blocks(entries, labels or {}):
        role = heading.split(" ", 1)[0].strip(":")
        css = role if role in ("user", "assistant") else "other"
        out.append(f'<section class="{css}"><h2>{esc(heading)}</h2>')
        for kind, payload in parts:
            if kind == "image":
                img = _safe_image(*payload)
                out.append(img if img else '<p class="meta">(image omitted: unknown type or invalid data)</p>')
            else:
                out.append(f'<pre class="{"text" if kind == "text" else "code"}">{esc(str(payload))}</pre>')
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
