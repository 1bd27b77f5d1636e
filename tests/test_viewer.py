"""The HTML viewer's rendering, without a browser: escaping, links,
Markdown elements, collapse thresholds, images, context edits, the page's
policy and structure, the facts header and the tree layout."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pi_session import SessionManager
from pi_session.cli.render import tree_lines
from pi_session.render.export import export_html
from pi_session.viewer.entries import COLLAPSE_CHARS, COLLAPSE_LINES, article, collapsible, image
from pi_session.viewer.markup import code, esc, markdown, safe_href
from pi_session.viewer.model import tree_rows
from pi_session.viewer.page import page_assets
from sessiongen import generate_session, write_session
from viewer_pages import EVIL, PNG_1PX, export_page, hostile_session, showcase_session


@pytest.fixture(autouse=True)
def _agent_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


# --- escaping and links -------------------------------------------------------


def test_esc_escapes_markup_quotes_and_makes_controls_visible():
    assert esc('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
    assert esc("\x1b[31m\x00\u202e\x07") == "\\x1b[31m\\x00\\u202e\\x07"
    assert esc("a\ud83db") == "a\\ud83db"  # a lone surrogate cannot be written as UTF-8
    assert esc("tab\tand\nline") == "tab\tand\nline"
    assert esc(None) == ""  # a missing text shows as nothing, not "None"
    assert esc({"a": [1, "<b>"]}) == "{&quot;a&quot;:[1,&quot;&lt;b&gt;&quot;]}"  # a damaged value as JSON, not a repr


@pytest.mark.parametrize("url", ["http://a.b/c", "https://a.b", "HTTPS://A.B", "mailto:x@y.z", "  https://a.b  "])
def test_safe_links_are_kept(url):
    assert safe_href(url)
    html = markdown(f"[t]({url.strip()})")
    assert '<a href="' in html and 'rel="noopener noreferrer nofollow"' in html


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd", "/relative", "#frag", "ftp://x", "java\tscript:x"],
)
def test_other_links_stay_text(url):
    assert not safe_href(url)
    html = markdown(f"[t]({url}) <{url}>")
    assert "<a " not in html and "href" not in html


def test_markdown_elements_and_no_raw_html():
    html = markdown(
        "# H\n\n**b** *i* ~~s~~ `c`\n\n- one\n- two\n\n1. first\n\n> quote\n\n"
        "| a | b |\n|:--|--:|\n| 1 | 2 |\n\n```python\ndef f(): pass\n```\n\n<div onclick=x>raw</div> <b>inline</b>\n\n![img](https://e/x.png)"
    )
    for tag in ("<h1>", "<strong>b</strong>", "<em>i</em>", "<s>s</s>", "<code>c</code>", "<ul>", "<ol>", "<blockquote>", "<table>", "<th", "<td"):
        assert tag in html, tag
    assert 'class="al-left"' in html and 'class="al-right"' in html and "style=" not in html
    assert '<pre class="code hl"><code><span class="k">def</span>' in html
    assert "&lt;div onclick=x&gt;raw&lt;/div&gt;" in html and "&lt;b&gt;inline&lt;/b&gt;" in html
    assert "<img" not in html  # a Markdown image would be an outside request: shown as a link
    assert '<a href="https://e/x.png"' in html


def test_code_highlights_known_languages_only():
    assert '<span class="k">' in code("def f(): pass", "python")
    plain = code("<x> & y", "no-such-language")
    assert plain == '<pre class="code"><code>&lt;x&gt; &amp; y</code></pre>'
    assert '<span class="k">' not in code("def f(): pass" * 20_000, "python")  # over the limit: plain


# --- collapsing and images ----------------------------------------------------


def _tool_result(text: str) -> str:
    entry = {"type": "message", "id": "r", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
             "message": {"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": [{"type": "text", "text": text}], "isError": False}}
    return article(0, entry, label=None, is_leaf=False, edit=None, calls={"c": ("read", {"path": "src/a.py"})})


def test_collapse_thresholds():
    short_lines = "\n".join(["x"] * COLLAPSE_LINES)
    assert "<details" not in _tool_result(short_lines)
    assert "<details" in _tool_result(short_lines + "\nx")
    assert "<details" not in _tool_result("y" * COLLAPSE_CHARS)
    long = _tool_result("y" * (COLLAPSE_CHARS + 1))
    assert '<details class="fold"><summary>output <span class="size">(1 line, 1.2 KB)</span></summary>' in long
    assert "<details open" not in long
    # the result carries its call's name and what it worked on
    assert '<span class="tool">read</span> <span class="summary">src/a.py</span>' in long
    assert "(5 lines, 9 B)" in collapsible("x", "", "a\nb\nc\nd\ne", force=True)


def test_thinking_and_summaries_always_collapse():
    entry = {"type": "message", "id": "a", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}}
    assert '<details class="fold thinking"><summary>thinking <span class="size">(1 line, 2 B)</span>' in article(0, entry, label=None, is_leaf=False, edit=None, calls={})
    for entry in ({"type": "compaction", "id": "c", "summary": "s", "tokensBefore": 5}, {"type": "branch_summary", "id": "b", "fromId": "x", "summary": "s"}):
        assert '<details class="fold summary">' in article(0, entry, label=None, is_leaf=False, edit=None, calls={})


def test_images_only_known_types_with_valid_data():
    assert image("image/png", PNG_1PX).startswith(f'<img class="img" alt="image (image/png)" src="data:image/png;base64,{PNG_1PX}">')
    for mime in ("image/jpeg", "image/gif", "image/webp"):
        assert "<img" in image(mime, PNG_1PX)
    for mime, data in (("image/svg+xml", PNG_1PX), ("text/html", PNG_1PX), ("image/png", "<b>x</b>"), ("image/png", "abc"), ('image/png" onerror="x', PNG_1PX), ("image/png", None)):
        html = image(mime, data)
        assert "<img" not in html and "onerror=\"" not in html


# --- pages --------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every start tag with its attributes (template contents included)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.stored: list[int] = []
        self._in_script = False

    def handle_comment(self, data):
        # stored entries: "<index> <article ...>", parsed as the page's script does
        index, _, fragment = data.partition(" ")
        assert index.isdigit() and "--" not in data, data[:200]
        inner = _Tags()
        inner.feed(fragment)
        inner.close()
        assert not inner.scripts
        self.tags.extend(inner.tags)
        self.stored.append(int(index))

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
            self._in_script = False


def _check_safe_page(page: str) -> _Tags:
    css, js = page_assets()
    parser = _Tags()
    parser.feed(page)
    allowed = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "h5", "h6", "dl", "dt", "dd", "div", "nav",
               "details", "summary", "a", "span", "main", "p", "article", "time", "pre", "code", "template", "script", "ul", "ol", "li", "img",
               "table", "thead", "tbody", "tr", "th", "td", "strong", "em", "s", "blockquote", "hr", "br"}
    buttons = [attrs.get("id") for tag, attrs in parser.tags if tag == "button"]
    assert buttons in ([], ["tostart", "toend"]), buttons  # the path bar's own two, type=button
    # the "show all entries" box, when the conversation view hides entries
    inputs = [attrs for tag, attrs in parser.tags if tag == "input"]
    assert inputs in ([], [{"type": "checkbox", "id": "showall"}], [{"type": "checkbox", "id": "showall", "checked": None}]), inputs
    assert [t for t, _ in parser.tags].count("label") == len(inputs)
    for tag, attrs in parser.tags:
        assert tag in allowed or (tag == "button" and attrs.get("type") == "button") or tag in ("input", "label"), (tag, attrs)
        for name, value in attrs.items():
            assert not name.startswith("on") and name not in ("style", "srcdoc", "formaction"), (tag, name, value)
            if name == "href":
                assert re.fullmatch(r"#e\d+", value or "") or safe_href(value or ""), value
            if name == "src":
                assert tag == "img" and re.fullmatch(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}", value or ""), value
    assert [t for t, _ in parser.tags].count("script") == 1 and parser.scripts == [js]
    assert [t for t, _ in parser.tags].count("style") == 1 and f"<style>{css}</style>" in page
    policy = next(a["content"] for t, a in parser.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    digest = lambda text: base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()  # noqa: E731
    assert policy == (
        f"default-src 'none'; img-src data:; style-src 'sha256-{digest(css)}'; script-src 'sha256-{digest(js)}'; base-uri 'none'; form-action 'none'"
    )
    return parser


def test_hostile_session_page_is_inert(tmp_path):
    page = export_page(hostile_session(tmp_path / "evil.jsonl"), tmp_path / "evil.html").read_text()
    parser = _check_safe_page(page)
    assert parser.stored  # the other branch's entries, checked too
    assert "&lt;script&gt;window.__pwned=1" in page
    assert "\x1b" not in page and "\x00" not in page and "\u202e" not in page and "\\x1b[31m" in page
    assert not any(a.get("href", "").startswith("javascript") for _, a in parser.tags if a.get("href"))
    assert len(EVIL) == 8


def test_real_and_generated_pages_are_safe_and_complete(tmp_path):
    from conftest import FIXTURES

    sources = [FIXTURES / "before-compaction.jsonl"] if FIXTURES.exists() else []
    sources.append(write_session(tmp_path / "gen.jsonl", *generate_session(3, turns=30, pi16=True)))
    for i, source in enumerate(sources):
        page = export_page(source, tmp_path / f"p{i}.html").read_text()
        parser = _check_safe_page(page)
        manager = SessionManager.open(str(source), session_dir=str(tmp_path), read_only=True)
        n = len(manager.get_entries())
        rows = re.findall(r'<a class="row[^"]*" href="#e(\d+)" data-i="(\d+)" data-p="(-?\d+)"', page)
        assert [int(r[0]) for r in rows] == list(range(n)) and all(a == b for a, b, _ in rows)
        shown = re.findall(r'<article class="entry [^"]*" id="e(\d+)"', page.split('<div id="path">', 1)[1].split("</main>", 1)[0])
        assert len(shown) == min(1000, len(manager.get_branch()))  # PATH_INLINE
        assert sorted([*map(int, shown), *parser.stored]) == list(range(n))  # each entry once
        assert page.count('<span class="leafmark">current leaf</span>') == 1


def test_a_deep_path_opens_with_its_last_entries_in_the_page(tmp_path, monkeypatch):
    from pi_session.viewer import page as page_module

    monkeypatch.setattr(page_module, "PATH_INLINE", 10)
    header, entries = generate_session(2, turns=20, branches=False, compactions=False)
    html = export_html(header, entries)
    shown = re.findall(r'<article class="entry [^"]*" id="e(\d+)"', html.split('<div id="path">', 1)[1].split("</main>", 1)[0])
    assert shown == [str(i) for i in range(len(entries) - 10, len(entries))]
    assert f"{len(entries):,} entries from the root to the selected one (the first {len(entries) - 10:,} are shown with script on)" in html


def test_tree_layout_matches_the_tree_command():
    from pi_session.session.tree import SessionTree

    _header, entries = generate_session(11, turns=40)
    roots = SessionTree(entries).roots()
    rows = tree_rows(roots)
    lines = tree_lines(roots, None, set())
    assert len(rows) == len(lines) and any(row.prefix for row in rows)
    for row, line in zip(rows, lines):
        assert line.plain.startswith(row.prefix + "  " + row.entry["id"]), (row.prefix, line.plain)


def test_context_edits_hide_text_everywhere(tmp_path):
    page = export_page(showcase_session(tmp_path / "s.jsonl"), tmp_path / "s.html").read_text()
    assert "sk-SECRET-123" not in page and "[key removed]" in page
    assert "edited by context edit ce1" in page
    # an edit on another branch still hides the text from the page
    m = SessionManager.create("/p", session_dir=tmp_path / "b")
    u1 = m.append_message({"role": "user", "content": "first", "timestamp": 1})
    m.append_message({"role": "assistant", "content": [{"type": "text", "text": "TOPSECRET"}], "stopReason": "stop", "timestamp": 2})
    a1 = m.get_leaf_id()
    m.append_context_edit(a1, None)
    m.branch(u1)
    m.append_message({"role": "assistant", "content": [{"type": "text", "text": "other"}], "stopReason": "stop", "timestamp": 3})
    page = export_page(m.get_session_file(), tmp_path / "b.html").read_text()
    assert "TOPSECRET" not in page
    assert "omitted from the model context by context edit" in page


def test_facts_header(tmp_path):
    page = export_page(showcase_session(tmp_path / "s.jsonl"), tmp_path / "s.html").read_text()
    facts = page.split('<dl class="facts">', 1)[1].split("</dl>", 1)[0]
    assert "<dt>cwd</dt><dd>/home/dev/projects/inventory</dd>" in facts
    assert "anthropic/claude-sonnet-4-5 (5)" in facts
    # 5 assistant messages and one usage entry
    tokens = 2520 + 5510 + 5660 + 6190 + 3050 + 901
    assert f"<dt>tokens</dt><dd>input 23,100, cache read 0, cache write 0, output {tokens - 23100:,}, total {tokens:,}</dd>" in facts
    assert "<dt>cost</dt><dd>$0.0781</dd>" in facts
    # from the model change to the last reply: the usage entry and the name after it are not conversation
    assert "<dt>duration</dt><dd>1m 52s</dd>" in facts and "<dt>entries</dt><dd>19</dd>" in facts and "<dt>branches</dt><dd>2</dd>" in facts
    assert "<title>Cent rounding fix</title>" in page and '<summary><span class="sname">Cent rounding fix</span> · Tree: 19 entries, 2 branches</summary>' in page


def test_leaf_option_selects_the_path(tmp_path):
    session = showcase_session(tmp_path / "s.jsonl")
    page = export_page(session, tmp_path / "s.html", leaf="r2").read_text()
    path = page.split('<div id="path">', 1)[1].split("</main>", 1)[0]
    ids = re.findall(r'<span class="eid">([^<]*)</span>', path)
    assert ids == ["m0", "u1", "a1", "r1", "a2", "u2", "a3", "r2"]
    assert '<span class="leafmark">current leaf</span>' not in path  # the session leaf is elsewhere


def test_export_html_of_a_path_still_works():
    header, entries = generate_session(5, turns=5, branches=False)
    page = export_html(header, entries, name="<n>")
    assert "<title>&lt;n&gt;</title>" in page and page.count("<article class=") == len(entries)


def test_large_output_is_not_highlighted_or_parsed(tmp_path: Path):
    big = "| a |\n|---|\n" + "| x |\n" * 200_000
    html = markdown(big)
    assert html.startswith('<pre class="plain">')


def test_html_bench_runs(tmp_path: Path):
    """bench/html_export.py --quick --no-browser runs and reports (the
    benchmark itself is run by hand)."""
    import subprocess
    import sys

    from conftest import ROOT

    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "html_export.py"), "--quick", "--no-browser", "--markdown", "--data", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "linear-2k: exported in" in proc.stdout and "branchy-2k: exported in" in proc.stdout
    assert "| linear-2k | 2 MB |" in proc.stdout


def test_malformed_entries_render_without_error():
    weird = [
        {"type": "message", "id": "a", "parentId": None, "timestamp": 5, "message": {"role": "assistant", "content": [
            {"type": "toolCall", "id": 3, "name": None, "arguments": [1, 2]}, {"type": "text", "text": None}, 7, None], "usage": "x"}},
        {"type": "message", "id": "b", "parentId": "a", "message": {"role": "toolResult", "toolCallId": None, "content": {"x": 1}}},
        {"type": "message", "id": "c", "parentId": "b", "message": "not an object"},
        {"type": "message", "id": "d", "parentId": "c", "message": {"role": None, "content": None}},
        {"type": "compaction", "id": "e", "parentId": "d", "summary": None, "tokensBefore": None},
        {"type": "context_edit", "id": "f", "parentId": "e", "targetId": "a", "replacement": {"content": 5}},
        {"type": "context_edit", "id": "g", "parentId": "f", "targetId": ["x"], "replacement": None},
        {"type": "usage", "id": "h", "parentId": "g", "usage": {"input": "x", "cost": {"total": float("nan")}}},
        {"type": "message", "id": "i", "parentId": "h", "message": {"role": "system", "content": [1], "sections": {"a": None, "b": 3}, "toolsAdded": "x"}},
        {"type": "message", "id": "j", "parentId": "i", "message": {"role": "toolResult", "toolCallId": "x", "nestedCalls": {"calls": [None, {"name": 1}]},
                                                                   "content": [{"type": "image", "mimeType": "image/png", "data": "@@@"}]}},
        {"type": None, "id": "k", "parentId": "j"},
        {"type": ["x"], "id": "l", "parentId": "k"},
    ]
    page = export_html({"id": None}, weird)
    _check_safe_page(page)
    assert page.count('<a class="row') == len(weird)
    assert "edited by context edit f" in page  # a replacement that is not text still hides the original


def test_deeply_nested_arguments_do_not_blow_up_the_page():
    """Pretty-printed JSON grows with the square of its depth: a tool call
    whose arguments nest 3,000 levels (18 KB in the file) would become
    about 9 MB of indentation; the viewer shows such arguments compact."""
    deep: object = "bottom"
    for _ in range(3000):
        deep = [deep]
    entries = [
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "x", "arguments": {"deep": deep, "flat": [1, 2]}}]}},
    ]
    page = export_html({"id": "s", "cwd": "/w"}, entries)
    _check_safe_page(page)
    assert len(page) < 200_000
    assert "[" * 3000 + "&quot;bottom&quot;" in page  # the arguments are all there, compact
    assert "[\n 1,\n 2\n]" in page  # small arguments stay pretty-printed
