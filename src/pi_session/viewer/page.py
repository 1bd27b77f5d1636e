"""The viewer page: header of facts, the tree sidebar, the conversation, the
Content-Security-Policy and our one script.

Layout of the HTML (one file, no external resource):

- ``<header>``: title (session name, else the first user message), facts;
- ``<nav id="tree">``: one ``<a class="row" data-i data-p>`` per entry in
  ``pi-session tree`` order (``data-p``: the parent's row number);
- ``<main>``: the entries on the path root → selected entry (the current
  leaf by default; its last :data:`PATH_INLINE`) as ``<article id="e<i>">``
  elements, so the page reads without script;
- every other entry's article inside an HTML comment
  (``<!--<i> <article ...>-->``) in ``<div id="store" hidden>``: inert, and
  parsed by the browser as one node each (as ``<template>`` elements, the
  100,000 entries of a 100 MB session took 10 s to open instead of 2.4 s);
  the article HTML never holds ``--``, so nothing in it can end the comment;
- the script (:file:`assets/viewer.js`): the page opens at the start of
  the path to the selected entry (its first 200 entries, later ones on
  request), as pi's export opens at the top; the bar above the path has
  "Start" and "End" (the selected entry, the leaf when the page opens). A
  deep link ``#e<i>`` (on load or a change of the address) shows the path
  to entry ``i``, scrolled to it, and scrolls the sidebar to its row. A
  click on a row shows the path to that entry (the last 200 entries,
  earlier ones on request) by moving the
  articles already in the page and by parsing stored ones into an inert
  ``<template>``. It never builds HTML from session text: what it parses
  is what the exporter rendered (every session string escaped), and the
  page's policy would stop a script or handler in it anyway.

Sidebar rows and the initial path are grouped in chunks (``content-visibility:
auto``), so the browser styles and lays out only what is on screen.

The policy allows nothing but ``data:`` images, our stylesheet and our
script, each by its SHA-256 hash computed here.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from ..session.context import edited_entry
from ..core.text import field_text, plural
from ..session.tree import TreeNode
from ..session.conversation import ConversationView, hidden_summary
from ..entries.questions import ASSISTANT, MESSAGE
from .entries import ToolCalls, article, row_preview
from .markup import esc, pygments_css
from .model import Facts, Row, hiding_edits, session_facts, title_of, tree_rows

__all__ = ["render_page", "iter_page", "page_assets", "csp_for", "ROW_CHUNK", "PATH_CHUNK", "PATH_INLINE"]


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
        items.append(("tokens", u.describe()))
        cost = u.describe_cost(4)
        if cost is not None:
            items.append(("cost", esc(cost)))
    items.append(("entries", f"{facts.entries:,}"))
    items.append(("branches", f"{facts.branches:,}"))
    counts = {str(k): v for k, v in facts.counts.items()}  # a type may be any JSON value
    messages = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("message:")}
    if messages:
        items.append(("messages", ", ".join(f"{esc(role)} {n:,}" for role, n in messages.items())))
    others = {k: v for k, v in counts.items() if not k.startswith("message:") and k != MESSAGE}
    if others:
        items.append(("other entries", ", ".join(f"{esc(kind)} {n:,}" for kind, n in others.items())))
    if facts.session_id is not None:
        items.append(("id", esc(facts.session_id)))
    return '<dl class="facts">' + "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items) + "</dl>"


def _guides(row: Row) -> str:
    """The guide spans of a sidebar row: the conversation view's (``gd``)
    and, when they differ, those of the whole tree (``ga``, shown with
    every entry)."""
    if row.shown_prefix is None or row.shown_prefix == row.prefix:
        return f'<span class="g">{esc(row.prefix)}</span>'
    return f'<span class="g gd">{esc(row.shown_prefix)}</span><span class="g ga">{esc(row.prefix)}</span>'


def _hidden_note(hidden: Sequence[TreeNode], checked: bool) -> str:
    """The line under the sidebar's title saying what the conversation view
    hides (:func:`pi_session.session.conversation.hidden_summary`), with the "show all
    entries" box (``#showall``: the stylesheet shows ``.aux`` rows and
    articles while it is checked; checked from the start when the selected
    entry is one of them). Empty when nothing is hidden."""
    if not hidden:
        return ""
    box = f'<input type="checkbox" id="showall"{" checked" if checked else ""}>'
    return f'<p class="hidnote">… {esc(hidden_summary(hidden))} <label>{box} show all entries</label></p>'


_JUMP = (
    '<span class="jump" id="jump" hidden>'
    '<button type="button" id="tostart" title="the first entry of the path (where the page opens)">Start</button>'
    '<button type="button" id="toend" title="the selected entry, last on the path (the leaf when the page opens)">End</button></span>'
)
"""The two controls of the path bar (shown by the script): the start of the
path and its end (the selected entry)."""

ROW_CHUNK = 256
"""Sidebar rows per ``<div class="chunk">``: the browser lays out and styles
only the chunks in view (``content-visibility: auto``), which is what makes
a 100,000-entry sidebar open in a second or two instead of half a minute."""
PATH_CHUNK = 50
"""Entries per chunk of the path shown when the page opens (same reason)."""
PATH_INLINE = 1000
"""At most this many entries (the last ones) of the path shown when the page
opens are written as elements, readable without script; earlier ones are
stored like the other entries (a page opens in seconds whatever the depth of
its leaf, and the script shows them on request)."""


def render_page(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    roots: Sequence[TreeNode],
    *,
    leaf_id: str | None,
    selected_id: str | None,
    name: str | None = None,
) -> str:
    """The whole viewer page as one string: ``"".join(iter_page(...))``
    (see :func:`iter_page`)."""
    return "".join(iter_page(header, entries, roots, leaf_id=leaf_id, selected_id=selected_id, name=name))


def iter_page(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    roots: Sequence[TreeNode],
    *,
    leaf_id: str | None,
    selected_id: str | None,
    name: str | None = None,
) -> Iterator[str]:
    """The whole viewer page, in pieces (str chunks of up to about 1 MB,
    to write them as they come).

    Args:
        header: the session header (cwd, id, timestamp shown).
        entries: every entry in file order (for facts and context edits).
        roots: the tree (``SessionManager.get_tree()``; labels from it).
        leaf_id: the session's current leaf (marked), or None.
        selected_id: the entry whose path is shown when the page opens
            (usually ``leaf_id``; None: none shown).
        name: the session name (the title; default: the first user message).

    Yields:
        The pieces of one self-contained HTML document; every session
        string in it is escaped or rendered by :mod:`.markup`.
    """
    view = ConversationView(roots, leaf_id)
    rows = tree_rows(roots, view)
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
        message = entry.get("message") if entry.get("type") == MESSAGE else None
        if not isinstance(message, dict) or message.get("role") != ASSISTANT:
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
                    calls[block["id"]] = (field_text(block.get("name")), block.get("arguments"))

    facts = session_facts(header, entries, rows)
    css, js = page_assets()
    session_name = f'<span class="sname">{esc(name)}</span> · ' if name else ""
    title = esc(title_of(header, [rows[i].entry for i in shown] or leaf_path, name, hidden))
    out: list[str] = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp_for(css, js)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{title}</title><style>{css}</style></head>",
        f'<body data-start="{start}">',
        f'<header class="top"><h1>{title}</h1>{_facts_html(facts)}</header>',
        '<div class="layout"><nav id="tree" aria-label="session tree">',
        f'<details id="treebox" open><summary>{session_name}Tree: {plural(len(rows), "entry", "entries")}, {plural(facts.branches, "branch", "branches")}</summary>',
        _hidden_note(view.hidden, start >= 0 and rows[start].hidden),
        '<div class="rows">',
    ]
    on_shown = set(shown)
    size = 0
    for row in rows:
        if row.index % ROW_CHUNK == 0:
            out.append('</div><div class="chunk">' if row.index else '<div class="chunk">')
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
        if row.hidden:
            cls += " aux"
        marks = ""
        if row.label:
            marks += f'<span class="lbl">{esc(row.label)}</span>'
        if row.index == leaf_index:
            marks += '<span class="leafmark">leaf</span>'
        out.append(
            f'<a class="{cls}" href="#e{row.index}" data-i="{row.index}" data-p="{row.parent}">'
            f'{_guides(row)}{marks}<span class="k">{esc(kind)}</span><span class="p">{esc(preview)}</span></a>'
        )
    out.append("</div></div></details></nav><main>" if rows else "</div></details></nav><main>")
    inline = shown[-PATH_INLINE:]
    in_page = set(inline)
    if shown:
        more = f" (the first {len(shown) - len(inline):,} are shown with script on)" if len(inline) < len(shown) else ""
        out.append(
            f'<div class="pathbar"><p class="pathinfo" id="pathinfo">{plural(len(shown), "entry", "entries")} from the root to the selected one{more}</p>'
            f"{_JUMP}</div><div id=\"path\">"
        )
    else:
        out.append(f'<div class="pathbar"><p class="pathinfo" id="pathinfo">No entry selected: click one in the tree.</p>{_JUMP}</div><div id="path">')
    yield "".join(out)
    out.clear()

    def render(i: int) -> str:
        row = rows[i]
        eid = row.entry.get("id")
        edit = hidden.get(eid) if eid.__class__ is str else None
        return article(i, row.entry, label=row.label, is_leaf=i == leaf_index, edit=edit, calls=calls, hidden=row.hidden)

    for k, i in enumerate(inline):
        if k % PATH_CHUNK == 0:
            out.append('</div><div class="chunk">' if k else '<div class="chunk">')
        piece = render(i)
        out.append(piece)
        size += len(piece)
        if size > 1 << 20:
            yield "".join(out)
            out.clear()
            size = 0
    out.append("</div></div></main></div>" if shown else "</div></main></div>")
    out.append('<div id="store" hidden>')
    for row in rows:
        if row.index not in in_page:
            # "--" never occurs in the comment, so nothing in it can close it
            # ("-&#45;" reads the same in text and attribute values)
            piece = f"<!--{row.index} {render(row.index).replace('--', '-&#45;')}-->"
            out.append(piece)
            size += len(piece)
            if size > 1 << 20:
                yield "".join(out)
                out.clear()
                size = 0
    out.append(f"</div><script>{js}</script></body></html>\n")
    yield "".join(out)
