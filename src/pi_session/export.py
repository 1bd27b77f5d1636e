"""Exporting a conversation as Markdown or self-contained HTML (beyond pi).

The export is the path from the root to the leaf (every entry, also those a
compaction summarised away), rendered in order: messages by role, compaction
and branch summaries, model and thinking-level changes, system messages and
context edits. Content a context edit replaced is shown as the model sees
it, and an entry a context edit omits is marked with its content left out
(an edit is how a user hides a secret or a huge output; an export must not
bring it back). Pure functions: they take entries and return text.

HTML is the viewer of :mod:`pi_session.viewer` (the whole tree; see there
for how it handles untrusted text and context edits). This module depends
on the viewer, never the other way round (the title both show is
:func:`pi_session.viewer.model.title_of`, re-exported here).

Safety: all session text is untrusted. In Markdown every piece of session text sits in a
fenced code block whose fence is longer than any backtick run in the text,
so it cannot close the fence or inject HTML or links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .context import applied_context_edits, edited_entry, system_message_text, text_content
from .jsonio import js_stringify
from .records import UNDEFINED
from .tree import SessionTree, TreeNode
from .viewer import iter_page
from .viewer.model import hiding_edits, title_of

if TYPE_CHECKING:
    from .manager import SessionManager

__all__ = ["export_markdown", "export_html", "iter_export_html", "export_session", "title_of"]



# A block is (heading, [(kind, payload)]) where kind is "text" (plain text),
# "code" (monospace text), or "image" ((mime, base64 data)).
_Block = tuple[str, list[tuple[str, Any]]]


def _blocks(entries: Sequence[Mapping[str, Any]], labels: Mapping[str, str], edits: Mapping[str, tuple[str, Any]]) -> list[_Block]:
    blocks: list[_Block] = []
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
    edits: Mapping[str, tuple[str, Any]] | None = None,
) -> str:
    """Render a root→leaf path as Markdown.

    Args:
        header: the session header (id, cwd, timestamp are shown).
        entries: the path, root first (``SessionManager.get_branch()``).
        labels: entry id → label, shown after the heading.
        name: the session name (the title; default from the first message).
        edits: target id → (edit id, replacement or None for omitted): the
            context edits to show applied; default: those that apply on
            the path (:func:`pi_session.context.applied_context_edits`).
            :func:`export_session` passes every edit of the file, as the
            HTML viewer shows them.

    Returns:
        The document (str). All session text is inside fenced code blocks or
        backslash-escaped, so it renders as text.
    """
    if edits is None:
        edits = applied_context_edits(entries)
    out = [f"# {_md_inline(title_of(header, entries, name, edits))}", ""]
    if header:
        for key in ("id", "cwd", "timestamp"):
            if header.get(key) is not None:
                out.append(f"- {key}: {_md_inline(str(header[key]))}")
        out.append("")
    for heading, parts in _blocks(entries, labels or {}, edits):
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


def export_html(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
    roots: Sequence[TreeNode] | None = None,
    leaf_id: Any = UNDEFINED,
    selected_id: Any = UNDEFINED,
) -> str:
    """:func:`iter_export_html` joined into one string."""
    return "".join(iter_export_html(header, entries, labels=labels, name=name, roots=roots, leaf_id=leaf_id, selected_id=selected_id))


def iter_export_html(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
    roots: Sequence[TreeNode] | None = None,
    leaf_id: Any = UNDEFINED,
    selected_id: Any = UNDEFINED,
) -> Iterator[str]:
    """Render a session as the HTML viewer (:mod:`pi_session.viewer`): one
    self-contained page with the whole tree, the path to the selected entry
    shown, every other entry one click away.

    Args:
        header: the session header.
        entries: every entry in file order (a root→leaf path works too: it
            is then the whole tree).
        labels: entry id → label, used when ``roots`` is not given
            (default: the label entries among ``entries``).
        name: the session name (the title; default from the first message).
        roots: the tree (``SessionManager.get_tree()``); default: built
            from ``entries``.
        leaf_id: the current leaf (marked); default: the last entry's id.
        selected_id: the entry whose path shows when the page opens (None:
            none); default: ``leaf_id``.

    Yields:
        The page in pieces (str, up to about 1 MB each). Every piece of
        session text is escaped or rendered as Markdown with raw HTML off; a
        Content-Security-Policy lets only the page's own style and script
        (by hash) and ``data:`` images in.
    """
    if roots is None:
        usable = [e for e in entries if isinstance(e.get("id"), str)]
        tree = SessionTree(usable)
        roots = tree.roots()
        if labels is not None:
            for node, _depth in tree.walk(roots):
                node.label = labels.get(node.id)
    if leaf_id is UNDEFINED:
        leaf_id = entries[-1].get("id") if entries else None
    if selected_id is UNDEFINED:
        selected_id = leaf_id
    return iter_page(header, entries, roots, leaf_id=leaf_id, selected_id=selected_id, name=name)


def export_session(manager: SessionManager, kind: str, path: Sequence[Mapping[str, Any]]) -> tuple[Iterator[str], int]:
    """What ``pi-session export`` (and ``browse``'s export) writes for a
    session: ``kind`` ``"html"``, the viewer (the whole tree, ``path``'s
    last entry selected), or ``"md"``, the Markdown of ``path``. Both show
    text as every context edit of the file leaves it, on every branch
    (:func:`pi_session.viewer.model.hiding_edits`): an export is made to be
    shared, and an edit is how a user removes a secret.

    Args:
        manager: the session.
        kind: ``"html"`` or ``"md"``.
        path: the entries root→selected entry (``manager.get_branch(id)``;
            empty for none).

    Returns:
        ``(chunks, count)``: the document in str pieces, and how many
        entries it holds (all for HTML, the path's for Markdown).

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "html":
        entries = manager.get_entries()
        return (
            iter_export_html(
                manager.get_header(),
                entries,
                name=manager.get_session_name(),
                roots=manager.get_tree(),
                leaf_id=manager.get_leaf_id(),
                selected_id=path[-1].get("id") if path else None,
            ),
            len(entries),
        )
    if kind == "md":
        text = export_markdown(
            manager.get_header(),
            path,
            labels=dict(manager.tree.labels),
            name=manager.get_session_name(),
            edits=hiding_edits(manager.get_entries(), path),
        )
        return iter([text]), len(path)
    raise ValueError(f"unknown export kind {kind!r} (html, md)")
