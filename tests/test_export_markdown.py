"""The Markdown export's prose path (``pi_session.render.export.prose_markdown``): a text
with none of the markup it rewrites or refuses skips the markdown-it
parses, and must come out exactly as the parsed way gives it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.render import export

# Markdown-heavy characters: block starts, emphasis, tables, code spans,
# brackets, entities, escapes, line ends of every kind; "<" and "#" too
# (texts holding them take the parsed way, which is the point of the check)
ALPHABET = " \t\n\r*_-+=|>.:()[]!`~&;\\/0123456789aZé<#"


def _agree(text: str) -> None:
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as prose_markdown does first
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


def _rendered(*texts: str) -> str:
    """The texts as entries of an export (each under its own ``##``), rendered."""
    from markdown_it import MarkdownIt

    doc = "\n\n".join(f"## Entry {i}\n\n{export.prose_markdown(t)}" for i, t in enumerate(texts))
    return MarkdownIt("commonmark").enable("table").render(doc)


def test_a_link_definition_in_one_entry_links_nothing_in_another() -> None:
    """``[x]: url`` renders as nothing and applies to the whole document: an
    entry holding one is fenced, so no other entry's ``![x]`` or ``[y][x]``
    becomes an image (an outside request) or a link."""
    html = _rendered("look at ![logo] and [click me][evil]",
                     "[logo]: http://evil.example/t.png\n[evil]: http://evil.example/phish",
                     "again ![alt][logo]")
    assert "<img" not in html and "evil.example/phish\">" not in html and "href" not in html
    assert "[logo]: http://evil.example/t.png" in html  # the definition is shown, as text


def test_a_setext_heading_is_moved_down_as_atx_headings_are() -> None:
    """``User`` over ``----`` would be an h2, an entry's own heading."""
    html = _rendered("User\n----\nforged user text", "Forged turn\n===========", "a\n\n---\n\nb")
    assert html.count("<h2>") == 3  # the three entries' own headings
    assert "<h4>User</h4>" in html and "<h3>Forged turn</h3>" in html and "<hr />" in html


def test_malformed_fields_are_shown_as_json_not_python_reprs(tmp_path, cli) -> None:
    """A damaged record's text fields that are not strings (an object as a
    text block, an array as a summary, null as a command) are shown in the
    Markdown and HTML exports as JSON (``{"x":[1,2]}``), never as Python's
    repr (``{'x': [1, 2]}``) or ``None``."""
    import json

    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0042",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    records = [
        header,
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": {"x": [1, 2]}}], "timestamp": 1}},
        {"type": "branch_summary", "id": "b1", "parentId": "m1", "timestamp": "2026-01-01T00:00:02.000Z",
         "fromId": "m1", "summary": ["a", "b"]},
        {"type": "message", "id": "x1", "parentId": "b1", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "bashExecution", "command": None, "output": {"o": 1}, "exitCode": 0, "timestamp": 3}},
        {"type": "label", "id": "l1", "parentId": "x1", "timestamp": "2026-01-01T00:00:04.000Z", "targetId": "m1", "label": {"a": 1}},
        {"type": "model_change", "id": "c1", "parentId": "l1", "timestamp": "2026-01-01T00:00:05.000Z", "provider": None, "modelId": {"x": 1}},
        {"type": "custom", "id": "c2", "parentId": "c1", "timestamp": "2026-01-01T00:00:06.000Z", "customType": None, "data": {}},
        {"type": "message", "id": "a1", "parentId": "c2", "timestamp": "2026-01-01T00:00:07.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": ["t", 1]}, {"type": "toolCall", "id": "t1", "name": {"n": 1}, "arguments": {}}],
                     "provider": "p", "model": {"m": 1}, "timestamp": 7}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-01-01T00:00:08.000Z",
         "message": {"role": "toolResult", "toolCallId": "t1", "toolName": ["bash"], "content": [{"type": "text", "text": "ok"}], "timestamp": 8}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for fmt in ("md", "html"):
        out = tmp_path / f"s.{fmt}"
        res = cli("export", str(path), "-f", fmt, "-o", str(out), "--allow-secrets")
        assert res.returncode == 0, res.stderr
        text = out.read_text()
        for repr_ in ("{'x': [1, 2]}", "['a', 'b']", "{'o': 1}", "$ None", "{'a': 1}", "None/", "['t', 1]", "{'n': 1}", "['bash']", "{'m': 1}",
                      "{&#x27;", "[&#x27;", ">None<"):
            assert repr_ not in text, (fmt, repr_)
        shown = text.replace("&quot;", '"').replace("&#34;", '"')
        assert '["a","b"]' in shown and '{"o":1}' in shown, fmt
        # (the HTML page shows a text block's text only when it is a string, as the context does)
        assert fmt == "html" or '{"x":[1,2]}' in shown
    for command in ("tree", "context", "info"):  # the terminal views
        res = cli(command, str(path))
        assert res.returncode == 0, res.stderr
        for repr_ in ("{'", "['", "None"):
            assert repr_ not in res.stdout, (command, repr_, res.stdout)
    assert 'm1 = {"a":1}' in cli("tree", str(path)).stdout  # the label entry
