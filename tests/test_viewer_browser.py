"""The HTML viewer in a real headless Chromium (Debian's ``chromium``,
installed by ``.ci/run``; driven by playwright, never its own browsers).

One browser for the module. Every page is watched for dialogs, page errors
and console messages: none may appear (a CSP violation is a console error,
so our own style and script must pass the policy, and nothing from the
session may try to run).
"""

from __future__ import annotations

import os
import random
import shutil
from typing import Any

import pytest

from conftest import FIXTURES, ROOT
from shared_paths import shared_missing
from sessiongen import generate_session, write_session
from viewer_pages import CHROMIUM, export_page, hostile_session, launch_browser, long_session, showcase_session, write_readme_screenshot

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra (make install-test)")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} missing (.ci/run installs Debian's chromium package)", allow_module_level=True)


@pytest.fixture(autouse=True)
def _agent_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


class Watched:
    """A page with every dialog, page error and console message recorded."""

    def __init__(self, browser: Any, url: str, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.events: list[str] = []
        self.page.on("dialog", lambda d: (self.events.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.on("pageerror", lambda e: self.events.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.events.append(f"console {m.type}: {m.text}"))
        self.page.goto(url)

    def close(self) -> None:
        self.context.close()


def _rows(page: Any) -> list[tuple[int, int]]:
    return page.eval_on_selector_all("#tree a.row", "rs => rs.map(r => [+r.dataset.i, +r.dataset.p])")


def _shown(page: Any) -> list[int]:
    return page.eval_on_selector_all("#path > article", "as => as.map(a => +a.dataset.i)")


def _expected_path(rows: list[tuple[int, int]], i: int) -> list[int]:
    parent = dict(rows)
    out = []
    while i >= 0:
        out.append(i)
        i = parent[i]
    return out[::-1]


def _click_row(page: Any, i: int) -> None:
    row = page.locator(f'#tree a.row[data-i="{i}"]')
    row.scroll_into_view_if_needed()
    row.click()


def _show_all(page: Any) -> None:
    while page.locator("#path > button.more").count():
        page.locator("#path > button.more").first.click()


def _in_view(page: Any, selector: str) -> bool:
    """Whether the element's top is inside the window (below the sticky path bar)."""
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }")


def _row_in_sidebar(page: Any, i: int) -> bool:
    return page.eval_on_selector(
        f'#tree a.row[data-i="{i}"]',
        "r => { const n = document.getElementById('tree').getBoundingClientRect(), b = r.getBoundingClientRect();"
        " return b.top >= n.top && b.bottom <= n.bottom; }",
    )


def test_every_branch_is_reachable_by_clicking(browser, tmp_path):
    sessions = [write_session(tmp_path / f"g{seed}.jsonl", *generate_session(seed, turns=25, pi16=True)) for seed in (1, 7)]
    for k, session in enumerate(sessions):
        w = Watched(browser, export_page(session, tmp_path / f"g{k}.html").as_uri(), viewport={"width": 1280, "height": 900})
        page = w.page
        rows = _rows(page)
        parents = {p for _, p in rows}
        leaves = [i for i, _ in rows if i not in parents]
        assert len(leaves) >= 2, "the generated session should branch"
        for leaf in leaves:
            _click_row(page, leaf)
            _show_all(page)
            assert _shown(page) == _expected_path(rows, leaf)
            assert page.locator(f'#tree a.row[data-i="{leaf}"]').get_attribute("class").endswith(" sel")
            assert page.locator("#tree a.row.on").count() == len(_expected_path(rows, leaf))
        # a click in the middle of a branch shows the path up to it
        middle = random.Random(k).choice([i for i, _ in rows])
        _click_row(page, middle)
        assert _shown(page) == _expected_path(rows, middle)[-200:]
        assert w.events == []
        w.close()


def test_real_fixture_long_path_windowing_and_no_script(browser, tmp_path):
    source = FIXTURES / "large-session.jsonl"
    if not source.exists():
        pytest.skip(shared_missing(source) or "")
    session = tmp_path / "large.jsonl"
    shutil.copy(source, session)
    w = Watched(browser, export_page(session, tmp_path / "large.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    rows = _rows(page)
    assert len(rows) == 1018
    leaf = page.eval_on_selector("#tree a.row.sel", "r => +r.dataset.i")
    assert _shown(page) == _expected_path(rows, leaf)[:200]  # the first 200 of 1018, the rest on request
    assert page.locator("#path > button.more").inner_text().startswith("Show 200 later entries (818 hidden)")
    _show_all(page)
    assert _shown(page) == _expected_path(rows, leaf)
    # collapsed by default, opens on click
    fold = page.locator("#path details.fold").first
    assert fold.get_attribute("open") is None
    fold.locator("summary").click()
    assert fold.get_attribute("open") == ""
    assert w.events == []
    w.close()


def test_real_fixture_with_compactions(browser, tmp_path):
    source = FIXTURES / "before-compaction.jsonl"
    if not source.exists():
        pytest.skip(shared_missing(source) or "")
    session = tmp_path / "bc.jsonl"
    shutil.copy(source, session)
    w = Watched(browser, export_page(session, tmp_path / "bc.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    rows = _rows(page)
    compactions = page.eval_on_selector_all("#tree a.row.t-compaction", "rs => rs.map(r => +r.dataset.i)")
    assert len(compactions) == 2
    for i in compactions:
        _click_row(page, i)
        last = page.locator("#path > article").last
        assert _shown(page) == _expected_path(rows, i)[-200:]
        assert last.locator(".kind").inner_text() == "compaction"
        summary = last.locator("details.summary")
        assert summary.get_attribute("open") is None and "compaction summary (" in summary.locator("summary").inner_text()
    leaf = max(i for i, _ in rows if i not in {p for _, p in rows})
    _click_row(page, leaf)
    assert page.locator("#path article.r-bashExecution").count() > 0 and page.locator("#path details.thinking").count() > 0
    assert w.events == []
    w.close()


def test_markdown_and_collapsed_blocks_render(browser, tmp_path):
    w = Watched(browser, export_page(showcase_session(tmp_path / "s.jsonl"), tmp_path / "s.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    path = page.locator("#path")
    assert path.locator(".md table th").all_inner_texts() == ["step", "before", "after"]
    assert path.locator(".md td.al-right").first.evaluate("e => getComputedStyle(e).textAlign") == "right"
    assert path.locator(".md strong").first.inner_text() == "each step rounds"
    keyword = path.locator("pre.hl span.k").first
    assert keyword.inner_text() == "def"
    assert keyword.evaluate("e => getComputedStyle(e).color") != path.locator("pre.hl").first.evaluate("e => getComputedStyle(e).color")
    assert path.locator("a[href^='https://docs.python.org']").count() == 1
    thinking = path.locator("details.thinking")
    assert thinking.count() == 1 and thinking.get_attribute("open") is None
    assert not thinking.locator(".md").is_visible()
    assert "thinking (9 lines, 392 B)" in thinking.locator("summary").inner_text()
    assert path.locator("details.summary").count() == 2  # branch summary, compaction
    img = path.locator("img.img")
    assert img.evaluate("i => i.complete && i.naturalWidth") == 160
    assert "[key removed]" in path.inner_text() and "edited by context edit ce1" in path.inner_text()
    # the other branch: the failed bash result, paired with its call
    _click_row(page, 7)
    result = page.locator("#path > article").last
    assert "bash" in result.locator(".eh").inner_text() and "pytest -q tests/test_billing.py" in result.inner_text()
    assert result.locator(".err").inner_text() == "error"
    assert w.events == []
    w.close()


def test_a_long_path_opens_at_its_start_with_start_and_end_controls(browser, tmp_path):
    """A 1,002-entry page opened at entry 803 (the first
    of the last 200). It opens at the start of the path, as pi's export
    does; "End" shows the selected entry (the leaf), "Start" the first."""
    session = long_session(tmp_path / "long.jsonl", 1002)
    w = Watched(browser, export_page(session, tmp_path / "long.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    assert _shown(page) == list(range(200))
    assert _in_view(page, "#e0") and page.evaluate("scrollY") == 0
    assert page.locator("#path > button.later").inner_text() == "Show 200 later entries (802 hidden)"
    assert _row_in_sidebar(page, 1001)  # the selected row (the leaf) is in the sidebar's view
    page.locator("#toend").click()
    assert _shown(page) == list(range(802, 1002)) and _in_view(page, "#e1001")
    assert page.locator("#e1001 .leafmark").count() == 1
    page.locator("#tostart").click()
    assert _shown(page) == list(range(200)) and _in_view(page, "#e0")
    page.locator("#path > button.later").click()
    assert _shown(page) == list(range(400))
    assert w.events == []
    w.close()


def test_a_deep_link_shows_its_entry_and_scrolls_the_sidebar_to_its_row(browser, tmp_path):
    """#eNNN selects entry NNN, scrolls the page to it and
    the sidebar to its row (on load and when the address changes)."""
    url = export_page(long_session(tmp_path / "long.jsonl", 1002), tmp_path / "long.html").as_uri()
    w = Watched(browser, url + "#e500", viewport={"width": 1280, "height": 900})
    page = w.page
    assert _shown(page) == list(range(301, 501)) and _in_view(page, "#e500")
    assert page.locator('#tree a.row[data-i="500"]').get_attribute("class").endswith(" sel")
    assert _row_in_sidebar(page, 500) and not _row_in_sidebar(page, 1001)
    page.evaluate("location.hash = '#e40'")
    page.wait_for_function("document.querySelector('#tree a.row.sel').dataset.i === '40'")
    assert _shown(page) == list(range(41)) and _in_view(page, "#e40") and _row_in_sidebar(page, 40)
    assert w.events == []
    w.close()


def test_tool_calls_show_each_argument_once_and_edits_as_a_diff(browser, tmp_path):
    """The read path and the bash command appeared twice
    in their call (heading and arguments); an edit showed oldText/newText."""
    w = Watched(browser, export_page(showcase_session(tmp_path / "s.jsonl"), tmp_path / "s.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    read = page.locator("#path .call", has=page.locator(".tool", has_text="read"))
    assert read.inner_text().count("src/billing.py") == 1 and read.locator("dl.args").count() == 0
    edit = page.locator("#path .call", has=page.locator(".tool", has_text="edit"))
    assert edit.locator(".callhead").inner_text() == "edit src/billing.py"
    diff = edit.locator("pre.hl")
    assert diff.inner_text().splitlines() == ["@@ -1 +1 @@", "-round(x * RATE, 2)", "+x * RATE"]
    assert diff.locator(".gd").inner_text() == "-round(x * RATE, 2)" and diff.locator(".gi").inner_text() == "+x * RATE"
    assert "oldText" not in edit.inner_text() and "newText" not in edit.inner_text()
    _click_row(page, 7)  # the other branch: the bash call
    bash = page.locator("#path .call", has=page.locator(".tool", has_text="bash"))
    assert bash.inner_text().count("pytest -q tests/test_billing.py") == 1 and bash.locator("pre.hl").count() == 1
    assert w.events == []
    w.close()


def test_hostile_session_runs_nothing(browser, tmp_path):
    w = Watched(browser, export_page(hostile_session(tmp_path / "e.jsonl"), tmp_path / "e.html").as_uri(), viewport={"width": 1280, "height": 900})
    page = w.page
    for i, _ in _rows(page):
        _click_row(page, i)
        for summary in page.locator("#path details > summary").all():
            summary.click()
        for link in page.locator("#path a").all():  # only safe links exist; none may run anything
            assert (link.get_attribute("href") or "").startswith(("https:", "http:", "mailto:"))
        page.locator("#path").hover()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#path script, #path iframe, #path svg, #path [onerror], #path [onload]").count() == 0
    assert "<script>window.__pwned=1" in page.locator("body").inner_text()  # shown as text
    assert w.events == []
    w.close()


def test_screenshots_light_dark_wide_and_phone(browser, tmp_path):
    url = export_page(showcase_session(tmp_path / "s.jsonl"), tmp_path / "s.html").as_uri()
    backgrounds = {}
    for scheme in ("light", "dark"):
        for width in (1280, 390):
            w = Watched(browser, url, viewport={"width": width, "height": 844}, color_scheme=scheme)
            page = w.page
            shot = tmp_path / f"{scheme}-{width}.png"
            page.screenshot(path=str(shot), full_page=False)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing overflows sideways
            tree_open = page.eval_on_selector("#treebox", "d => d.open")
            if width == 390:
                # phone: the tree is a folded panel above the conversation
                assert tree_open is False
                page.locator("#treebox > summary").click()
                _click_row(page, 5)
                assert page.eval_on_selector("#treebox", "d => d.open") is False and _shown(page)[-1] == 5
            else:
                assert tree_open is True
                box = page.locator("nav#tree").bounding_box()
                main = page.locator("main").bounding_box()
                assert box["x"] + box["width"] <= main["x"]  # sidebar beside the conversation
            assert w.events == []
            w.close()
    assert backgrounds == {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}


def test_without_script_the_leaf_path_is_readable(browser, tmp_path):
    session = showcase_session(tmp_path / "s.jsonl")
    w = Watched(browser, export_page(session, tmp_path / "s.html").as_uri(), java_script_enabled=False)
    page = w.page
    assert page.locator("#path article").count() == 16  # root to the leaf, all of it
    assert page.locator("#path article").last.locator(".leafmark").count() == 1
    assert page.locator("article").count() == 16  # the other branch stays stored, inert
    w.close()


def test_readme_screenshot(browser, tmp_path):
    """Docs/images/viewer.png comes from here: set PI_SESSION_UPDATE_SCREENSHOTS=1
    to rewrite it."""
    target = ROOT / "docs" / "images" / "viewer.png"
    out = target if os.environ.get("PI_SESSION_UPDATE_SCREENSHOTS") == "1" else tmp_path / "viewer.png"
    write_readme_screenshot(out, tmp_path, browser)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.exists(), "docs/images/viewer.png is missing: run with PI_SESSION_UPDATE_SCREENSHOTS=1"
