"""The viewer page: header of facts, the tree sidebar, the conversation, the
Content-Security-Policy and our one script.

Layout of the HTML (one file, no external resource):

- ``<header>``: title (session name, else the first user message), facts;
- ``<nav id="tree">``: one ``<a class="row" data-i data-p>`` per entry in
  ``pi-session tree`` order (``data-p``: the parent's row number);
- ``<main>``: the entries on the path root → selected entry (the current
  leaf by default) as ``<article id="e<i>">`` elements, so the page reads
  without script;
- one ``<template id="t<i>">`` per other entry (inert: nothing in it loads
  or runs until our script clones it);
- the script (:file:`assets/viewer.js`): a click on a row shows the path to
  that entry (the last 200 entries, earlier ones on request) by moving and
  cloning those elements. It never parses or inserts session text.

The policy allows nothing but ``data:`` images, our stylesheet and our
script, each by its SHA-256 hash computed here.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from ..context import edited_entry, text_content
from ..tree import TreeNode
from .entries import ToolCalls, article, row_preview
from .markup import esc, pygments_css
from .model import Facts, hiding_edits, session_facts, tree_rows

__all__ = ["render_page", "page_assets", "csp_for"]


@lru_cache(maxsize=1)
def page_assets() -> tuple[str, str]:
    """(stylesheet, script) of the page: :file:`assets/viewer.css` plus the
    Pygments styles, and :file:`assets/viewer.js`."""
    base = resources.files(__package__) / "assets"
    css = (base / "viewer.css").read_text(encoding="utf-8") + pygments_css()
    js = (base / "viewer.js").read_text(encoding="utf-8")
    return css, js


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def csp_for(css: str, js: str) -> str:
    """The Content-Security-Policy of a page whose only inline style is
    ``css`` and only inline script is ``js``: nothing else loads or runs
    (``default-src 'none'``), images only as ``data:`` URLs, no base URL,
    no form target."""
    return (
        f"default-src 'none'; img-src data:; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; "
        "base-uri 'none'; form-action 'none'"
    )


def _title(header: Mapping[str, Any] | None, path: Sequence[Mapping[str, Any]], name: str | None, hidden: Mapping[str, tuple[str, Any]]) -> str:
    if name:
        return name
    for entry in path:
        edit = hidden.get(entry.get("id"))  # type: ignore[arg-type]
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


def _duration(ms: int | None) -> str:
    if ms is None:
        return "?"
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes}m"
    return f"{hours // 24}d {hours % 24}h"


def _facts_html(facts: Facts) -> str:
    items: list[tuple[str, str]] = []
    if facts.cwd is not None:
        items.append(("cwd", esc(facts.cwd)))
    if facts.created is not None:
        items.append(("started", esc(facts.created)))
    items.append(("duration", _duration(facts.duration_ms)))
    if facts.models:
        models = sorted(facts.models.items(), key=lambda kv: -kv[1])
        items.append(("models", ", ".join(f"{esc(k)} ({v:,})" for k, v in models)))
    u = facts.usage
    if u.requests:
        items.append(("tokens", f"{u.total:,} (input {u.input:,}, output {u.output:,}, cache read {u.cache_read:,}, cache write {u.cache_write:,})"))
        items.append(("cost", f"${u.cost:,.4f}"))
    items.append(("entries", f"{facts.entries:,}"))
    items.append(("branches", f"{facts.branches:,}"))
    messages = {k.split(":", 1)[1]: v for k, v in facts.counts.items() if k.startswith("message:")}
    if messages:
        items.append(("messages", ", ".join(f"{esc(role)} {n:,}" for role, n in messages.items())))
    others = {k: v for k, v in facts.counts.items() if not k.startswith("message:") and k != "message"}
    if others:
        items.append(("other entries", ", ".join(f"{esc(kind)} {n:,}" for kind, n in others.items())))
    if facts.session_id is not None:
        items.append(("id", esc(facts.session_id)))
    return '<dl class="facts">' + "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items) + "</dl>"


def render_page(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    roots: Sequence[TreeNode],
    *,
    leaf_id: str | None,
    selected_id: str | None,
    name: str | None = None,
) -> str:
    """The whole viewer page (str).

    Args:
        header: the session header (cwd, id, timestamp shown).
        entries: every entry in file order (for facts and context edits).
        roots: the tree (``SessionManager.get_tree()``; labels from it).
        leaf_id: the session's current leaf (marked), or None.
        selected_id: the entry whose path is shown when the page opens
            (usually ``leaf_id``; None: none shown).
        name: the session name (the title; default: the first user message).

    Returns:
        One self-contained HTML document; every session string in it is
        escaped or rendered by :mod:`.markup`.
    """
    rows = tree_rows(roots)
    index_of: dict[Any, int] = {}
    for row in rows:
        index_of.setdefault(row.entry.get("id"), row.index)
    leaf_index = index_of.get(leaf_id, -1) if leaf_id is not None else -1
    start = index_of.get(selected_id, -1) if selected_id is not None else -1
    shown: list[int] = []
    j = start
    while j >= 0 and len(shown) <= len(rows):
        shown.append(j)
        j = rows[j].parent
    shown.reverse()
    leaf_path: list[Mapping[str, Any]] = []
    j = leaf_index
    while j >= 0 and len(leaf_path) <= len(rows):
        leaf_path.append(rows[j].entry)
        j = rows[j].parent
    leaf_path.reverse()
    hidden = hiding_edits(entries, leaf_path)

    calls: ToolCalls = {}
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        edit = hidden.get(entry.get("id"))  # type: ignore[arg-type]
        if edit is not None:
            if edit[1] is None:
                continue
            message = edited_entry(entry, edit[1]).get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                    calls[block["id"]] = (str(block.get("name")), block.get("arguments"))

    facts = session_facts(header, entries, rows)
    css, js = page_assets()
    title = esc(_title(header, [rows[i].entry for i in shown] or leaf_path, name, hidden))
    out: list[str] = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp_for(css, js)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{title}</title><style>{css}</style></head>",
        f'<body data-start="{start}">',
        f'<header class="top"><h1>{title}</h1>{_facts_html(facts)}</header>',
        '<div class="layout"><nav id="tree" aria-label="session tree">',
        f'<details id="treebox" open><summary>Tree: {len(rows):,} entries, {facts.branches:,} branches</summary><div class="rows">',
    ]
    on_shown = set(shown)
    for row in rows:
        eid = row.entry.get("id")
        edit = hidden.get(eid) if eid.__class__ is str else None
        css_kind, kind, preview = row_preview(row.entry, edit)
        cls = f"row {css_kind}"
        if edit is not None:
            cls += " omitted" if edit[1] is None else " edited"
        if row.index in on_shown:
            cls += " on"
        if row.index == start:
            cls += " sel"
        marks = ""
        if row.label:
            marks += f'<span class="lbl">{esc(row.label)}</span>'
        if row.index == leaf_index:
            marks += '<span class="leafmark">leaf</span>'
        out.append(
            f'<a class="{cls}" href="#e{row.index}" data-i="{row.index}" data-p="{row.parent}">'
            f'<span class="g">{esc(row.prefix)}</span>{marks}<span class="k">{esc(kind)}</span><span class="p">{esc(preview)}</span></a>'
        )
    out.append("</div></details></nav><main>")
    if shown:
        out.append(f'<p class="pathinfo" id="pathinfo">{len(shown):,} entries from the root to the selected one</p><div id="path">')
    else:
        out.append('<p class="pathinfo" id="pathinfo">No entry selected: click one in the tree.</p><div id="path">')

    def render(i: int) -> str:
        row = rows[i]
        eid = row.entry.get("id")
        edit = hidden.get(eid) if eid.__class__ is str else None
        return article(i, row.entry, label=row.label, is_leaf=i == leaf_index, edit=edit, calls=calls)

    for i in shown:
        out.append(render(i))
    out.append("</div></main></div>")
    for row in rows:
        if row.index not in on_shown:
            out.append(f'<template id="t{row.index}">{render(row.index)}</template>')
    out.append(f"<script>{js}</script></body></html>\n")
    return "".join(out)
