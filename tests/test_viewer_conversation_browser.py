"""The HTML viewer in a real headless Chromium (as tests/test_viewer_browser.py):
an imported session reads as the conversation (custom entries hidden and
counted, one box shows them)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from shared_paths import SHARED
from viewer_pages import CHROMIUM, launch_browser

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra (make install-test)")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} missing (.ci/run installs Debian's chromium package)", allow_module_level=True)

AGENTS = SHARED / "fixtures" / "other-agents"
SOURCES = {"claude-code": AGENTS / "claude-code" / "projects", "codex": AGENTS / "codex" / "sessions"}
CONVERSATION = re.compile(r"\b(r-[A-Za-z]+|t-compaction|t-branch_summary|t-model_change)\b")
"""The classes of rows and articles of messages, summaries and model changes."""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


def _open(browser: Any, page_file: Path) -> tuple[Any, Any, list[str]]:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(page_file.as_uri())
    return context, page, errors


_VISIBLE_ROWS = "rs => rs.filter(r => getComputedStyle(r).display !== 'none').map(r => r.className)"


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_an_imported_session_reads_as_the_conversation(browser, cli, tmp_path, fmt):
    if not SOURCES[fmt].exists():
        pytest.skip(f"needs {SOURCES[fmt]}")
    done = cli("import", "--from", fmt, str(SOURCES[fmt]))
    assert done.returncode == 0, done.stderr
    files = sorted((tmp_path / "agent" / "sessions").glob("*/*.jsonl"), key=lambda p: -p.stat().st_size)
    assert files
    checked = 0
    for session in files[:3]:  # the largest ones
        out = tmp_path / f"{session.stem}.html"
        result = cli("export", str(session), "-o", str(out), "--allow-secrets")
        assert result.returncode == 0, result.stderr
        context, page, errors = _open(browser, out)
        try:
            every = page.eval_on_selector_all("#tree a.row", "rs => rs.length")
            shown = page.eval_on_selector_all("#tree a.row", _VISIBLE_ROWS)
            talk = [c for c in shown if CONVERSATION.search(c)]
            assert len(talk) >= 0.9 * len(shown), (session.name, len(talk), len(shown))
            articles = page.eval_on_selector_all("#path article", _VISIBLE_ROWS)
            assert sum(1 for c in articles if CONVERSATION.search(c)) >= 0.9 * len(articles)
            if len(shown) < every:
                note = page.locator(".hidnote").inner_text()
                assert f"{every - len(shown):,} entries hidden" in note or f"{every - len(shown)} entry hidden" in note, note
                assert re.search(rf"\d+ {fmt}/", note), note
                page.locator("#showall").check()
                assert len(page.eval_on_selector_all("#tree a.row", _VISIBLE_ROWS)) == every
                checked += 1
            assert not errors, errors
        finally:
            context.close()
    assert checked  # real imported sessions do hide something

