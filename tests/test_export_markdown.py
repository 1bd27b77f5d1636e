"""The Markdown export's prose path (``pi_session.export.prose_markdown``): a text
with none of the markup it rewrites or refuses skips the markdown-it
parses, and must come out exactly as the parsed way gives it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session import export

# Markdown-heavy characters: block starts, emphasis, tables, code spans,
# brackets, entities, escapes, line ends of every kind; "<" and "#" too
# (texts holding them take the parsed way, which is the point of the check)
ALPHABET = " \t\n\r*_-+=|>.:()[]!`~&;\\/0123456789aZé<#"


def _agree(text: str) -> None:
    text = text.replace("\r\n", "\n")
    if not text.strip() or len(text) > export.MARKDOWN_LIMIT:
        return
    if export.is_plain_prose(text):
        assert export.prose_markdown(text) == export.parsed_prose_markdown(text) == text.rstrip("\n")


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=120))
def test_the_unparsed_way_gives_what_parsing_gives(text: str) -> None:
    _agree(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["- a", "> b", "    code", "1. x", "[a] b", "a `code` b", "~~s~~", "a\\", "***", "---", "===",
                                 "| a | b |", "|---|---|", "&amp; &lt;", "![x]", "[x][y]", "``", "~", "\t\tx", "* * *", "+ c",
                                 "1) d", "", " ", "text", "<", "#", "](", "]:"]), max_size=8))
def test_block_structures_agree(lines: list[str]) -> None:
    _agree("\n".join(lines))


@pytest.mark.parametrize("text", ["see [the docs](http://x)", "[a]: http://x", "# title", "a <b> c", "```\ncode", "~~~\nx"])
def test_markup_takes_the_parsed_way(text: str) -> None:
    assert not export.is_plain_prose(text)
