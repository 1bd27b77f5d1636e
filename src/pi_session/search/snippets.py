"""Snippets (pure): the part of a document's text around the first match
of a query's words, with the matches marked (:func:`make_snippet`), as
plain data: text and the character ranges that matched
(:meth:`Snippet.pieces`), for a front end to render (the CLI's terminal
text, a web page's marks)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .query import Query, Term
from .regex_run import RegexRun

__all__ = ["Snippet", "make_snippet", "term_spans", "term_spans_by_tokens", "SNIPPET_CHARS"]

_TOKEN = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")

SNIPPET_CHARS = 160
"""About how many characters of text a snippet shows."""


@dataclass
class Snippet:
    """A piece of a document's text: ``text`` (white space runs made one
    space; ``…`` where it was cut) and ``marks``: ``(start, end)`` character
    ranges of ``text`` that matched."""

    text: str
    marks: list[tuple[int, int]]

    def pieces(self) -> list[tuple[str, bool]]:
        """The text cut at the marks: ``(text, matched)`` pieces in order,
        their texts joined being :attr:`text` (empty pieces left out)."""
        out: list[tuple[str, bool]] = []
        last = 0
        for start, end in self.marks:
            out += [(self.text[last:start], False), (self.text[start:end], True)]
            last = end
        out.append((self.text[last:], False))
        return [(piece, matched) for piece, matched in out if piece]

    def marked(self, open_: str = "[", close: str = "]") -> str:
        """The text with each match between ``open_`` and ``close``."""
        return "".join(f"{open_}{piece}{close}" if matched else piece for piece, matched in self.pieces())


def term_spans_by_tokens(text: str, term: Term) -> list[tuple[int, int]]:
    """Character ranges of ``text`` where ``term`` matches, found by
    tokenizing the whole text as the index does (the reference of
    :func:`term_spans`): each run of its token sequence (the last token as
    a prefix for ``word*``), overlapping runs included."""
    found = [(m.start(), m.end(), m[0].lower()) for m in _TOKEN.finditer(text)]
    words = [w for _, _, w in found]
    spans: list[tuple[int, int]] = []
    k = len(term.tokens)
    for i in range(len(words) - k + 1):
        if words[i : i + k - 1] != term.tokens[: k - 1]:
            continue
        last = words[i + k - 1]
        if last == term.tokens[-1] or (term.prefix and last.startswith(term.tokens[-1])):
            spans.append((found[i][0], found[i + k - 1][1]))
    return spans


def term_spans(text: str, term: Term, lowered: str | None = None) -> list[tuple[int, int]]:
    """As :func:`term_spans_by_tokens`, by one regular-expression scan of
    the lower-cased text (a long tool result is not split into a list of
    tokens). Used when lower-casing keeps every character's place and the
    term's tokens are whole tokens; else the reference does it.

    Args:
        lowered: ``text.lower()``, when the caller has it.
    """
    lowered = text.lower() if lowered is None else lowered
    if len(lowered) != len(text) or not all(_TOKEN.fullmatch(t) for t in term.tokens):
        return term_spans_by_tokens(text, term)
    body = r"[\W_]+".join(re.escape(t) for t in term.tokens) + (r"[^\W_]*" if term.prefix else "")
    pattern = re.compile(r"(?<![^\W_])(?=(" + body + r"(?![^\W_])))")
    return [m.span(1) for m in pattern.finditer(lowered)]


def _match_spans(text: str, query: Query, regexes: RegexRun | None) -> list[tuple[int, int]]:
    """Character ranges of ``text`` where a positive term or a ``re:``
    pattern matches (a query without words: where a ``file:`` filter's
    path or base name is named, :attr:`Query.mention_tiers`), overlapping
    ones merged."""
    lowered = text.lower()
    spans: list[tuple[int, int]] = []
    for term in query.positive or [t for tier in query.mention_tiers for t in tier]:
        spans += term_spans(text, term, lowered)
    if regexes is not None:
        spans += regexes.spans(text)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def make_snippet(text: str, query: Query, *, width: int = SNIPPET_CHARS, regexes: RegexRun | None = None) -> Snippet:
    """The snippet of ``text`` for ``query``: about ``width`` characters
    around the first match (the start of the text when nothing matches, as
    for most filter-only queries), white space collapsed. A huge text costs a
    scan, never a huge snippet. ``regexes``: the search's ``re:`` matching
    (its worker and time budget); None: a new one, for this text.

    Raises:
        QueryError: the ``re:`` matching failed: out of time or memory
            (:class:`pi_session.search.regex_run.RegexRun`).
    """
    if regexes is None:
        with RegexRun(query) as own:
            spans = _match_spans(text, query, own)
    else:
        spans = _match_spans(text, query, regexes)
    first = spans[0][0] if spans else 0
    start = max(0, first - width // 3)
    end = min(len(text), start + width)
    if start > 0:
        # start at a word boundary
        space = text.rfind(" ", max(0, start - 20), start)
        start = space + 1 if space >= 0 else start
    piece = text[start:end]
    # collapse white space, keeping the marks' positions
    out: list[str] = []
    index_map: list[int] = []
    last_space = False
    for j, ch in enumerate(piece):
        if ch.isspace():
            if last_space:
                continue
            ch = " "
            last_space = True
        else:
            last_space = False
        index_map.append(j)
        out.append(ch)
    flat = "".join(out)
    lead = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    marks: list[tuple[int, int]] = []
    import bisect

    for s, e in spans:
        if e <= start or s >= end:
            continue
        ls = bisect.bisect_left(index_map, max(s, start) - start)
        le = bisect.bisect_left(index_map, min(e, end) - start)
        if le > ls:
            marks.append((ls + len(lead), le + len(lead)))
    return Snippet(lead + flat + tail, marks)
