"""pi 0.58.3's ``packages/coding-agent/test/frontmatter.test.ts`` against
:func:`pi_session.prompt.parse_frontmatter`.

pi has a second function, ``stripFrontmatter`` (the body without the
block, trimmed); pi-session has none: the body that ``parse_frontmatter``
returns is that same text (trimmed after a block, untouched without one),
so the two ``stripFrontmatter`` cases check it."""

from __future__ import annotations

import pytest

from pi_session.prompt import parse_frontmatter
from pi_session.prompt.frontmatter import FrontmatterError


def test_parse_frontmatter_reads_keys_unquotes_values_and_returns_body() -> None:
    text = "---\nname: \"skill-name\"\ndescription: 'A desc'\nfoo-bar: value\n---\n\nBody text"
    meta, body = parse_frontmatter(text)
    assert meta["name"] == "skill-name"
    assert meta["description"] == "A desc"
    assert meta["foo-bar"] == "value"
    assert body == "Body text"


def test_parse_frontmatter_turns_crlf_into_lf() -> None:
    _, body = parse_frontmatter("---\r\nname: test\r\n---\r\nLine one\r\nLine two")
    assert body == "Line one\nLine two"


def test_parse_frontmatter_rejects_invalid_yaml_naming_where() -> None:
    # pi's YAML reader places the unclosed '[' error at the block's end:
    # line 1, column 10 (pi's wording differs; the position is the fact)
    with pytest.raises(FrontmatterError, match=r"line 1, column 10\b"):
        parse_frontmatter("---\nfoo: [bar\n---\nBody")


def test_parse_frontmatter_keeps_literal_block_scalar_lines() -> None:
    meta, body = parse_frontmatter("---\ndescription: |\n  Line one\n  Line two\n---\n\nBody")
    assert meta["description"] == "Line one\nLine two\n"
    assert body == "Body"


def test_parse_frontmatter_without_or_with_unclosed_block_returns_text() -> None:
    assert parse_frontmatter("Just text\nsecond line")[1] == "Just text\nsecond line"
    unclosed = "---\nname: test\nBody without terminator"
    assert parse_frontmatter(unclosed)[1] == unclosed


def test_parse_frontmatter_of_comment_only_block_is_empty_mapping() -> None:
    meta, _ = parse_frontmatter("---\n# just a comment\n---\nBody")
    assert meta == {}


def test_strip_frontmatter_drops_block_and_trims_body() -> None:
    assert parse_frontmatter("---\nkey: value\n---\n\nBody\n")[1] == "Body"


def test_strip_frontmatter_without_block_keeps_text_as_is() -> None:
    text = "\n  No frontmatter body  \n"
    assert parse_frontmatter(text)[1] == text
