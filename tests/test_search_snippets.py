"""Snippet marks (pure): :func:`term_spans`'s one regular-expression scan
finds exactly what tokenizing the whole text as the index does finds
(:func:`term_spans_by_tokens`), on random text mixing the query's words,
separators, case, digits, underscores and non-ASCII letters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.search.query import Term, parse_query, tokens
from pi_session.search.snippets import make_snippet, term_spans, term_spans_by_tokens

WORDS = ["i", "x", "line", "Line", "LINES", "numbers", "num", "a", "ß", "straße", "İx", "ǅa", "x9", "9", "ΣΑΣ", "σας", "k", "\u212a"]
SEPARATORS = [" ", "  ", "\n", "_", "-", ", ", "\t", "\u00a0", "\u0307", "/", ""]


texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=30).map(
    lambda parts: "".join(w + sep for w, sep in parts)
)
terms = st.builds(
    lambda words, prefix: Term(" ".join(words), [t for w in words for t in tokens(w)] or ["line"], prefix),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(texts, terms)
def test_the_scan_finds_what_tokenizing_finds(text: str, term: Term) -> None:
    assert term_spans(text, term) == term_spans_by_tokens(text, term)


def test_marks_of_phrases_prefixes_and_overlaps() -> None:
    snippet = make_snippet("See LINE  numbers, line-numbers; linenumbers", parse_query('"line numbers"'))
    assert snippet.marked() == "See [LINE numbers], [line-numbers]; linenumbers"
    assert make_snippet("a a a b", parse_query('"a a"')).marked() == "[a a a] b"  # overlapping runs merged
    assert make_snippet("Lines liner x_line", parse_query("line*")).marked() == "[Lines] [liner] x_[line]"


def test_a_query_token_that_lower_casing_made_no_token_matches_nothing() -> None:
    # "İ".lower() is "i" and a combining dot, which separates tokens in
    # the text: no text token can equal the query's
    term = Term("İx", tokens("İx"))
    assert term.tokens == ["i\u0307x"]
    assert term_spans("say i\u0307x now", term) == term_spans_by_tokens("say i\u0307x now", term) == []
    assert term_spans("İx", term) == term_spans_by_tokens("İx", term) == [(0, 2)]


def test_pieces_are_plain_text_and_match_flags() -> None:
    snippet = make_snippet("See LINE  numbers, line-numbers; linenumbers", parse_query('"line numbers"'))
    pieces = snippet.pieces()
    assert pieces == [("See ", False), ("LINE numbers", True), (", ", False), ("line-numbers", True), ("; linenumbers", False)]
    assert "".join(piece for piece, _ in pieces) == snippet.text
    assert make_snippet("line", parse_query("line")).pieces() == [("line", True)]


def test_search_never_loads_a_terminal_library() -> None:
    """Snippets are data: rendering them (rich) is the CLI's."""
    import subprocess
    import sys

    code = "import sys, pi_session.search, pi_session.search.snippets; sys.exit('rich' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
