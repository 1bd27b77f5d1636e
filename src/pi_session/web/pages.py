"""The web app's pages, rendered on the server as HTML strings: sessions,
search, a session (tree, path, actions), the context at an entry, costs.

Every value from a session or the store goes through the viewer's
:func:`pi_session.viewer.markup.esc` (entries through the viewer's own
rendering), and the pages hold no inline script or style: the one script
and the stylesheets are files of the server (``/static/…``), which the
Content-Security-Policy (:data:`pi_session.web.security.CSP`) allows alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from ..entries.content import content_text
from ..core.text import plural
from ..viewer.markup import esc
from ..viewer.model import title_of
from .data import PAGE_ROWS, SESSIONS_PAGE, SessionView

__all__ = ["context_page", "costs_page", "error_page", "search_page", "session_page", "session_row_html", "sessions_page"]

PATH_SHOWN = 200
"""At most this many entries (the last ones) of the selected path are
rendered on a session page; earlier ones are a link away."""


def _layout(title: str, body: str, *, csrf: str, read_only: bool, query: str = "", page: str = "") -> str:
    nav = (
        f'<a href="/"{" aria-current=page" if page == "sessions" else ""}>Sessions</a>'
        f'<a href="/costs"{" aria-current=page" if page == "costs" else ""}>Costs</a>'
        f'<form class="qs" method="get" action="/search" role="search"><input id="q" name="q" type="search" '
        f'placeholder="Search (/)" value="{esc(query)}" autocomplete="off" aria-label="search sessions"></form>'
        '<button type="button" id="keyshelp" title="keyboard shortcuts (?)">?</button>'
    )
    keys = (
        '<dialog id="keys"><h2>Keys</h2><dl>'
        "<dt>j / k</dt><dd>next / previous item</dd><dt>Enter</dt><dd>open the selected item</dd>"
        "<dt>/</dt><dd>search</dd><dt>?</dt><dd>this help</dd><dt>Esc</dt><dd>close</dd></dl>"
        '<form method="dialog"><button>Close</button></form></dialog>'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">'
        f'<meta name="csrf-token" content="{esc(csrf)}">'
        f'<meta name="read-only" content="{"1" if read_only else "0"}">'
        f"<title>{esc(title)} · pi-session</title>"
        '<link rel="stylesheet" href="/static/viewer.css"><link rel="stylesheet" href="/static/web.css">'
        '<script src="/static/web.js" defer></script></head>'
        f'<body data-page="{esc(page)}"><header class="bar"><strong class="brand">pi-session</strong>{nav}</header>'
        f"{body}{keys}</body></html>\n"
    )


def error_page(status: int, message: str, *, csrf: str, read_only: bool) -> str:
    """A page for a refused request: the status and the one-line message."""
    return _layout(f"Error {status}", f'<main class="page"><h1>Error {status}</h1><p class="error">{esc(message)}</p></main>', csrf=csrf, read_only=read_only)


def _session_href(session_id: Any, at: Any = None, **more: Any) -> str:
    params = {"at": at} if at is not None else {}
    params.update({k: v for k, v in more.items() if v is not None})
    return f"/s/{quote(str(session_id), safe='')}" + ("?" + urlencode(params) if params else "")


def _sessions_href(query: str, project: str | None, offset: int) -> str:
    params: dict[str, Any] = {"filter": query, "project": project or "", "offset": offset or ""}
    given = {k: v for k, v in params.items() if v != ""}
    return "/?" + urlencode(given) if given else "/"


def session_row_html(s: Mapping[str, Any]) -> str:
    """One ``<tr>`` of the sessions table (title: name, else first
    message; id; project; messages; modified), every value escaped.
    ``s``: a :func:`pi_session.web.data.session_item`."""
    title = s.get("name") or s.get("firstMessage") or "(no messages)"
    href = esc(_session_href(s.get("id")))
    return (
        f'<tr class="item" data-id="{esc(s.get("id"))}" data-href="{href}">'
        f'<td class="title"><a href="{href}">{esc(str(title)[:200])}</a>'
        f'<div class="sub">{esc(s.get("id"))}</div></td>'
        f'<td class="cwd">{esc(s.get("cwd"))}</td><td class="num">{esc(s.get("messageCount"))}</td>'
        f'<td class="when"><time datetime="{esc(s.get("modified"))}">{esc(str(s.get("modified") or "")[:16].replace("T", " "))}</time></td></tr>'
    )


def sessions_page(
    page: Mapping[str, Any],
    projects: Sequence[Mapping[str, Any]],
    *,
    query: str = "",
    project: str | None = None,
    csrf: str,
    read_only: bool,
) -> str:
    """One page of the sessions, newest first
    (:func:`pi_session.web.data.sessions_json`: ``sessions``, ``total``,
    ``offset``, ``count``), with the filter box, the projects (``[{"cwd",
    "sessions"}]``, a menu) and links to the previous and next pages. The
    script filters as you type and loads further pages through the API as
    the list scrolls; without script the form submits ``?filter=`` and
    ``?project=`` and the links page with ``?offset=``."""
    sessions = page.get("sessions", [])
    total, offset = int(page.get("total") or 0), int(page.get("offset") or 0)
    rows = "".join(session_row_html(s) for s in sessions)
    options = [f'<option value="">All projects ({int(page.get("count") or 0):,})</option>']
    for p in sorted((p for p in projects if p.get("cwd")), key=lambda p: str(p.get("cwd"))):
        chosen = " selected" if p.get("cwd") == project else ""
        options.append(f'<option value="{esc(p.get("cwd"))}"{chosen}>{esc(p.get("cwd"))} ({int(p.get("sessions") or 0):,})</option>')
    stop = offset + len(sessions)
    pager = []
    if offset > 0:
        before = max(0, offset - SESSIONS_PAGE)
        pager.append(f'<a id="prevsessions" href="{esc(_sessions_href(query, project, before))}">← sessions {before + 1:,}–{offset:,}</a>')
    if stop < total:
        pager.append(
            f'<a id="moresessions" href="{esc(_sessions_href(query, project, stop))}">sessions {stop + 1:,}–{min(total, stop + SESSIONS_PAGE):,} of {total:,} →</a>'
        )
    body = (
        '<main class="page"><h1>Sessions</h1>'
        f'<form method="get" action="/" class="filter"><input id="filter" name="filter" type="search" placeholder="Filter sessions" '
        f'value="{esc(query)}" aria-label="filter sessions" autocomplete="off"> '
        f'<select id="project" name="project" aria-label="project">{"".join(options)}</select> '
        f'<button type="submit" id="filterbutton">Filter</button> <span id="count">{plural(total, "session")}</span></form>'
        f'<table id="sessions" class="list" data-total="{total}" data-offset="{offset}" data-next="{stop}" data-size="{SESSIONS_PAGE}">'
        '<thead><tr><th>Session</th><th>Project</th><th>Messages</th><th>Modified</th></tr></thead>'
        f'<tbody>{rows}</tbody></table><p class="pager" id="sessionpager">{" ".join(pager)}</p></main>'
    )
    return _layout("Sessions", body, csrf=csrf, read_only=read_only, page="sessions")


def _snippet_html(text: str, marks: Sequence[Sequence[int]]) -> str:
    out, last = [], 0
    for start, end in marks:
        out += [esc(text[last:start]), "<mark>", esc(text[start:end]), "</mark>"]
        last = end
    out.append(esc(text[last:]))
    return "".join(out)


def search_page(query: str, result: Mapping[str, Any] | None, error: str | None, *, csrf: str, read_only: bool) -> str:
    """The hits of a query, each opening its session at its entry, the
    matched words highlighted."""
    parts = [f'<main class="page"><h1>Search</h1>']
    if error is not None:
        parts.append(f'<p class="error" id="searcherror">{esc(error)}</p>')
    elif result is not None:
        hits = result.get("hits", [])
        parts.append(f'<p class="muted">{plural(len(hits), "hit")} for <code>{esc(query)}</code></p><ol class="hits" id="hits">')
        for hit in hits:
            href = _session_href(hit.get("sessionId"), hit.get("entryId"))
            where = hit.get("sessionName") or hit.get("project") or hit.get("sessionId")
            parts.append(
                f'<li class="item hit" data-href="{esc(href)}"><a href="{esc(href)}">{esc(where)}</a> '
                f'<span class="muted">{esc(hit.get("role"))} · {esc(str(hit.get("timestamp") or "")[:16].replace("T", " "))}</span>'
                f'<p class="snippet">{_snippet_html(str(hit.get("snippet") or ""), hit.get("marks") or [])}</p></li>'
            )
        parts.append("</ol>")
    else:
        parts.append('<p class="muted">Words must all match; "a phrase", prefix*, -word, role:, tool:, project:, after:, before:, re:.</p>')
    parts.append("</main>")
    return _layout(f"Search {query}" if query else "Search", "".join(parts), csrf=csrf, read_only=read_only, query=query, page="search")


def _row_html(view: SessionView, i: int, on: set[int], selected: int, sid: str) -> str:
    from .data import row_json

    r = row_json(view, view.rows[i])
    cls = f"row item {r['css']}"
    if i in on:
        cls += " on"
    if i == selected:
        cls += " sel"
    if r["hidden"]:
        cls += " aux"
    marks = f'<span class="lbl">{esc(r["label"])}</span>' if r["label"] else ""
    if r["leaf"]:
        marks += '<span class="leafmark">leaf</span>'
    href = _session_href(sid, r["id"])
    row = view.rows[i]
    if row.shown_prefix is None or row.shown_prefix == row.prefix:
        guides = f'<span class="g">{esc(row.prefix)}</span>'
    else:  # the conversation view's guides, and the whole tree's (shown with every entry)
        guides = f'<span class="g gd">{esc(row.shown_prefix)}</span><span class="g ga">{esc(row.prefix)}</span>'
    return (
        f'<a class="{cls}" href="{esc(href)}" data-href="{esc(href)}" data-i="{i}" data-p="{r["p"]}" data-id="{esc(r["id"])}">'
        f'{guides}{marks}<span class="k">{esc(r["kind"])}</span><span class="p">{esc(r["preview"])}</span></a>'
    )


def _actions_html(view: SessionView, selected_id: str | None) -> str:
    eid = esc(selected_id or "")
    return (
        '<details class="actions" id="actions"><summary>Actions</summary>'
        f'<form class="act" data-action="label" data-confirm="Set the label of entry {eid}?"><input type="hidden" name="entryId" value="{eid}">'
        '<input name="label" placeholder="label (empty: clear)" aria-label="label"><button>Label entry</button></form>'
        f'<form class="act" data-action="name" data-confirm="Rename the session?"><input name="name" placeholder="session name" '
        f'value="{esc(view.name() or "")}" aria-label="session name"><button>Rename session</button></form>'
        f'<form class="act" data-action="navigate" data-confirm="Move the leaf to entry {eid}?"><input type="hidden" name="entryId" value="{eid}">'
        '<label><input type="checkbox" name="summarize"> with a branch summary</label><button>Move leaf here</button></form>'
        '<form class="act" data-action="compact" data-confirm="Compact the session now (a compaction entry is appended)?"><button>Compact</button></form>'
        '<form class="act" data-action="scrub" data-confirm="Hide every secret in the model context from the model? Context edits are '
        'appended (nothing is rewritten): each message gets its secrets masked, a bash execution holding one is left out whole. '
        'The session keeps the secrets.">'
        '<input type="hidden" name="mode" value="edit"><button>Hide secrets from the model</button></form>'
        f'<form class="act" data-action="scrub" data-confirm="{esc(_rewrite_question(view))}">'
        '<input type="hidden" name="mode" value="rewrite"><button>Remove secrets from the session</button></form>'
        f'<p><a href="/api/v1/sessions/{esc(view.manager.get_session_id())}/export?format=html">Export HTML</a> · '
        f'<a href="/api/v1/sessions/{esc(view.manager.get_session_id())}/export?format=jsonl">Export JSONL</a></p>'
        '<p id="actresult" class="muted" role="status"></p></details>'
    )


def _rewrite_question(view: SessionView) -> str:
    """What the rewrite scrub's button asks, true for the session's store."""
    question = "Rewrite the session with every secret replaced by [REDACTED:<kind>]? "
    if view.manager.get_session_file() is not None:
        return question + ("The old content is kept as a backup beside the session file (<file>.secrets.bak, mode 0600); "
                           "it still holds the secrets: delete it once you no longer need it.")
    return question + "The database rows are rewritten in one transaction; no backup is kept."


def _hidden_note(view: SessionView, selected: int) -> str:
    """What the conversation view hides, with the viewer's "show all
    entries" box (its stylesheet shows the hidden rows while it is
    checked; checked when the selected entry is one of them)."""
    if not view.hidden_note:
        return ""
    checked = " checked" if selected >= 0 and view.rows.hidden(selected) else ""
    return (f'<p class="hidnote">… {esc(view.hidden_note)} <label><input type="checkbox" id="showall"{checked}> '
            "show all entries</label></p>")


def session_page(view: SessionView, *, selected: int, offset: int, csrf: str, read_only: bool) -> str:
    """A session: one page of the tree (:data:`PAGE_ROWS` rows from
    ``offset``), the path root → the selected row (its last
    :data:`PATH_SHOWN` entries), a link to the context there, and the
    actions (without ``read_only``)."""
    manager = view.manager
    sid = manager.get_session_id()
    path = view.path_to(selected) if selected >= 0 else []
    on = set(path)
    total = len(view.rows)
    start = max(0, min(offset, max(0, total - 1)))
    stop = min(total, start + PAGE_ROWS)
    shown = path[-PATH_SHOWN:]
    view.rows.decode([*range(start, stop), *shown, *path[:50]])  # what the page shows, in one read
    rows = "".join(_row_html(view, i, on, selected, sid) for i in range(start, stop))
    pager = []
    if start > 0:
        pager.append(f'<a href="{esc(_session_href(sid, None, offset=max(0, start - PAGE_ROWS)))}" id="prevrows">← rows {max(0, start - PAGE_ROWS) + 1:,}–{start:,}</a>')
    if stop < total:
        pager.append(f'<a href="{esc(_session_href(sid, None, offset=stop))}" id="nextrows">rows {stop + 1:,}–{min(total, stop + PAGE_ROWS):,} →</a>')
    selected_id = view.rows[selected].entry.get("id") if selected >= 0 else None
    more = ""
    if len(shown) < len(path):
        first = view.rows[path[len(path) - len(shown) - 1]].entry.get("id")
        more = f'<p class="muted"><a href="{esc(_session_href(sid, first))}">{len(path) - len(shown):,} earlier entries of this path</a></p>'
    articles = "".join(view.article(i) for i in shown)
    header = view.header()
    opening = [view.shown(i) for i in path[:50]]
    edits = {str(r.entry.get("id")): e for r in opening if (e := view.edit_of(r)) is not None}
    title = title_of(header, [r.entry for r in opening], view.name(), edits)
    context_link = (
        f'<a id="contextlink" href="/s/{esc(quote(sid, safe=""))}/context?{esc(urlencode({"leaf": selected_id}))}">What the model sees from here</a>'
        if selected_id is not None else ""
    )
    body = (
        f'<header class="top"><h1 id="title">{esc(title)}</h1><dl class="facts"><div><dt>id</dt><dd>{esc(sid)}</dd></div>'
        f'<div><dt>cwd</dt><dd>{esc(header.get("cwd"))}</dd></div><div><dt>entries</dt><dd id="entrycount">{manager.get_entry_count():,}</dd></div>'
        f'<div><dt>leaf</dt><dd>{esc(manager.get_leaf_id())}</dd></div></dl></header>'
        f'<div class="layout" id="session" data-session="{esc(sid)}" data-selected="{esc(selected_id or "")}" data-leaf="{esc(manager.get_leaf_id() or "")}" data-offset="{start}">'
        f'<nav id="tree" aria-label="session tree"><div class="treehead">{plural(total, "entry", "entries")}{" · " + " ".join(pager) if pager else ""}</div>'
        f'{_hidden_note(view, selected)}<div class="rows" id="rows">{rows}</div></nav>'
        f'<main><div class="pathbar"><p class="pathinfo" id="pathinfo">{plural(len(path), "entry", "entries")} from the root to the selected one</p>'
        f'{context_link} <span id="live" class="muted" aria-live="polite"></span></div>'
        f'{"" if read_only else _actions_html(view, selected_id)}'
        f'{more}<div id="path">{articles}</div></main></div>'
    )
    return _layout(str(title), body, csrf=csrf, read_only=read_only)


def _content_text(content: Any) -> str:
    return content_text(content, _context_block, "\n")


def _context_block(kind: str, block: Mapping[str, Any]) -> str | None:
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "thinking":
        return "[thinking] " + str(block.get("thinking") or "")
    if kind == "toolCall":
        from ..core.jsonio import dumps_readable

        return f"[tool call {block.get('name')}] {dumps_readable(block.get('arguments'))}"
    if kind == "image":
        return f"[image {block.get('mimeType')}]"
    return None


def context_page(sid: str, ctx: Mapping[str, Any], *, csrf: str, read_only: bool) -> str:
    """What the model sees at an entry: model, thinking level and every
    message of the context (pi 1.6's ``buildSessionContext``), as text."""
    model = ctx.get("model") or {}
    items = []
    for n, message in enumerate(ctx.get("messages", []), 1):
        role = message.get("role") if isinstance(message, dict) else "?"
        text = _content_text(message.get("content")) if isinstance(message, dict) else ""
        if not text and isinstance(message, dict):
            text = str(message.get("summary") or message.get("command") or message.get("output") or "")
        items.append(f'<article class="entry item ctx r-{esc(role)}"><div class="eh"><span class="kind">{n}. {esc(role)}</span></div>'
                     f'<pre class="out">{esc(text)}</pre></article>')
    leaf = ctx.get("leafId")
    body = (
        f'<main class="page"><h1>What the model sees</h1><p class="muted">session <a href="{esc(_session_href(sid, leaf))}">{esc(sid)}</a> '
        f'at entry {esc(leaf)} · model {esc(model.get("provider"))}/{esc(model.get("modelId"))} · thinking {esc(ctx.get("thinkingLevel"))} · '
        f'{plural(len(items), "message")}</p><div id="context">{"".join(items)}</div></main>'
    )
    return _layout("Context", body, csrf=csrf, read_only=read_only)


def _sums_table(table_id: str, title: str, key: str, rows: Sequence[Mapping[str, Any]]) -> str:
    top = max((float(r.get("totalCost") or 0) for r in rows), default=0.0) or 1.0
    body = "".join(
        f'<tr class="item"><td>{esc(r.get(key))}</td><td class="num">{int(r.get("totalTokens") or 0):,}</td>'
        f'<td class="num">${float(r.get("totalCost") or 0):,.4f}</td>'
        f'<td class="bar"><meter min="0" max="{top:.6f}" value="{float(r.get("totalCost") or 0):.6f}"></meter></td></tr>'
        for r in rows
    )
    return (f'<h2>{esc(title)}</h2><table class="list" id="{table_id}"><thead><tr><th>{esc(key.capitalize())}</th><th>Tokens</th>'
            f"<th>Cost</th><th></th></tr></thead><tbody>{body}</tbody></table>")


def costs_page(breakdown: Mapping[str, Any], *, csrf: str, read_only: bool) -> str:
    """The usage reports: a table with a bar per day (``<meter>``), the
    totals, and the sums by model and by project
    (:func:`pi_session.web.data.usage_breakdown_json`)."""
    report = breakdown.get("daily", {})
    days = report.get("daily", [])
    top = max((float(d.get("totalCost") or 0) for d in days), default=0.0) or 1.0
    rows = []
    for d in days:
        cost = float(d.get("totalCost") or 0)
        models = ", ".join(str(m) for m in d.get("modelsUsed", []))
        rows.append(
            f'<tr class="item"><td>{esc(d.get("date"))}</td><td class="num">{int(d.get("totalTokens") or 0):,}</td>'
            f'<td class="num">${cost:,.4f}</td><td class="bar"><meter min="0" max="{top:.6f}" value="{cost:.6f}"></meter></td>'
            f"<td>{esc(models)}</td></tr>"
        )
    totals = report.get("totals", {})
    missing = report.get("missingPricing")
    note = f'<p class="muted">Not priced: {esc(", ".join(missing))}</p>' if missing else ""
    body = (
        '<main class="page"><h1>Costs</h1>'
        f'<p>Total <strong id="totalcost">${float(totals.get("totalCost") or 0):,.4f}</strong> · {int(totals.get("totalTokens") or 0):,} tokens</p>{note}'
        '<table class="list" id="daily"><thead><tr><th>Day</th><th>Tokens</th><th>Cost</th><th></th><th>Models</th></tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table>'
        f'{_sums_table("bymodel", "By model", "model", breakdown.get("byModel", []))}'
        f'{_sums_table("byproject", "By project", "project", breakdown.get("byProject", []))}</main>'
    )
    return _layout("Costs", body, csrf=csrf, read_only=read_only, page="costs")
