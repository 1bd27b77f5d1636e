"""The HTML session viewer (``pi-session export --format html``; beyond pi).

One self-contained, offline page showing the whole session tree: a sidebar
with every branch (``pi-session tree`` layout, labels, the current leaf), the
conversation from the root to any clicked entry, Markdown and highlighted
code, tool calls with their results, collapsed long blocks, images, context
edits marked, and a header of session facts (cwd, models, tokens, cost,
duration, counts). Safe with hostile sessions: every session string is
escaped or rendered with raw HTML off, and a strict Content-Security-Policy
lets only our own stylesheet and script (by hash) and ``data:`` images in.

Modules: :mod:`.model` (what to show: tree rows, hiding edits, facts),
:mod:`.markup` (escaping, Markdown, code), :mod:`.entries` (one entry as
HTML), :mod:`.page` (assembly, policy, script); assets in ``assets/``.
"""

from __future__ import annotations

from .page import iter_page, render_page

__all__ = ["render_page", "iter_page"]
