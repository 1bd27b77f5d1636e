"""Session text made into safe HTML: escaping, Markdown, code highlighting.

All session text is untrusted. Three ways it reaches the page, all here:

- :func:`esc`: plain text, HTML-escaped (quotes included) after control
  characters, bidirectional overrides and lone surrogates are made visible
  escapes (``\\x1b``, ``\\u202e``), so nothing invisible or unencodable
  reaches the file;
- :func:`markdown`: Markdown through markdown-it-py (CommonMark plus tables
  and strikethrough) with raw HTML disabled, images not parsed (an image
  would be an external request), and links kept only for ``http:``,
  ``https:`` and ``mailto:`` (any other link stays literal text); table
  alignment becomes a class (no ``style`` attribute, which the page's
  Content-Security-Policy would refuse);
- :func:`code`: a code block highlighted by Pygments with CSS classes (one
  stylesheet, :func:`pygments_css`, for light and dark).

Pure functions; markdown-it-py and Pygments do the parsing.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ..core.text import field_text, show_controls

__all__ = ["clean", "esc", "markdown", "code", "pygments_css", "human_size", "safe_href", "HIGHLIGHT_LIMIT", "MARKDOWN_LIMIT"]


HIGHLIGHT_LIMIT = 100_000
"""Code blocks longer than this (characters) are shown without highlighting
(Pygments takes about a second per megabyte)."""

MARKDOWN_LIMIT = 500_000
"""Text longer than this (characters) is shown as plain text, not parsed as
Markdown."""


def clean(text: str) -> str:
    """``text`` with every control character but newline and tab, every
    bidirectional mark/override/isolate and every lone surrogate replaced by
    a visible escape (``\\x1b``, ``\\u202e``, ``\\ud800``). Carriage returns
    of CRLF line ends are dropped first."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return show_controls(text)


def esc(value: Any) -> str:
    """Any value as escaped HTML text (a non-string as
    :func:`~pi_session.core.text.field_text` shows it: JSON, never Python's
    repr; None as nothing), made clean by :func:`clean`; safe in element
    content and in quoted attributes."""
    return html.escape(clean(value if value.__class__ is str else field_text(value)), quote=True)


def human_size(chars: int) -> str:
    """``"850 B"``, ``"12.3 KB"``, ``"4.1 MB"`` for a length in characters
    (shown as the size of a collapsed block; 1 KB = 1000)."""
    if chars < 1000:
        return f"{chars} B"
    if chars < 1_000_000:
        return f"{chars / 1000:.1f} KB"
    return f"{chars / 1_000_000:.1f} MB"


_SAFE_SCHEMES = ("http:", "https:", "mailto:")


def safe_href(url: str) -> bool:
    """Whether a link target may become an ``href``: only an absolute
    ``http:``, ``https:`` or ``mailto:`` URL (after trimming and ignoring
    case) with no control character or whitespace in it."""
    value = url.strip().lower()
    return value.startswith(_SAFE_SCHEMES) and not any(c <= " " or c == "\x7f" for c in value)


class _SafeMarkdownIt(MarkdownIt):
    """markdown-it-py whose link validator keeps only :func:`safe_href`
    targets (markdown-it leaves a link it rejects as literal text)."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return safe_href(url)


_FORMATTER = HtmlFormatter(nowrap=True)


@lru_cache(maxsize=256)
def _lexer(lang: str) -> Lexer | None:
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except (ClassNotFound, ValueError):
        return None


def code(text: str, lang: str = "") -> str:
    """A ``<pre>`` code block: highlighted by Pygments (CSS classes under
    ``.hl``) when ``lang`` names a lexer Pygments knows and the text is at
    most :data:`HIGHLIGHT_LIMIT` characters, else escaped plain text."""
    text = clean(text)
    return _highlight(text, lang, "")


def _highlight(content: str, lang: str, _attrs: str) -> str:
    # markdown-it uses a result starting with "<pre" as the whole block;
    # content is already clean (markdown() and code() clean their input).
    lexer = _lexer(lang.strip().lower()) if lang and len(content) <= HIGHLIGHT_LIMIT else None
    if lexer is not None:
        return f'<pre class="code hl"><code>{highlight(content, lexer, _FORMATTER)}</code></pre>'
    return f'<pre class="code"><code>{html.escape(content)}</code></pre>'


def _cell_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    style = token.attrGet("style")
    if style is not None:
        token.attrs.pop("style", None)
        align = str(style).rsplit(":", 1)[-1]
        if align in ("left", "center", "right"):
            token.attrJoin("class", f"al-{align}")
    return str(self.renderToken(tokens, idx, options, env))


def _link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer nofollow")
    token.attrSet("target", "_blank")
    return str(self.renderToken(tokens, idx, options, env))


def _make_parser() -> MarkdownIt:
    md = _SafeMarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    for rule in ("th_open", "td_open"):
        md.add_render_rule(rule, _cell_open)
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _make_parser()


def markdown(text: str) -> str:
    """Markdown text as an HTML fragment (see the module doc for what is
    kept); text over :data:`MARKDOWN_LIMIT` characters becomes one plain
    ``<pre>`` block."""
    text = clean(text)
    if len(text) > MARKDOWN_LIMIT:
        return f'<pre class="plain">{html.escape(text)}</pre>'
    return _MD.render(text)


@lru_cache(maxsize=1)
def pygments_css() -> str:
    """The stylesheet of highlighted code: Pygments' ``default`` style for
    light pages and ``monokai`` inside ``prefers-color-scheme: dark``."""
    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
