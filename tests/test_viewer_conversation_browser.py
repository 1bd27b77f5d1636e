"""The HTML viewer in a real headless Chromium (as tests/test_viewer_browser.py):
an imported session reads as the conversation (custom entries hidden and
counted, one box shows them), and context edits and empty signed thinking
show what they hold."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
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
    # a Claude Code import still hides its few notes; a Codex import keeps
    # its records on pi's entries, so its largest sessions may hide nothing
    assert checked or fmt == "codex"


def test_context_edits_and_empty_signed_thinking_show_what_they_hold(browser, cli, tmp_path):
    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0456", "timestamp": "2026-01-01T09:00:00.000Z", "cwd": "/w"}
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "curl -H 'Authorization: Bearer SECRET-TOKEN' x"}}
    redacted_call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "curl -H 'Authorization: [REDACTED]' x"}}

    def assistant(content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "toolUse", "timestamp": 0}

    entries = [
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T09:00:01.000Z", "message": {"role": "user", "content": "fetch it", "timestamp": 0}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T09:00:02.000Z",
         "message": assistant([{"type": "thinking", "thinking": "", "thinkingSignature": "c2lnbmF0dXJl"}, {"type": "text", "text": "Fetching."}, call])},
        {"type": "message", "id": "t1", "parentId": "a1", "timestamp": "2026-01-01T09:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash", "content": [{"type": "text", "text": "ok"}], "isError": False, "timestamp": 0}},
        {"type": "message", "id": "a2", "parentId": "t1", "timestamp": "2026-01-01T09:00:04.000Z",
         "message": assistant([{"type": "thinking", "thinking": "", "thinkingSignature": "c2ln"}, {"type": "text", "text": "Done."}])},
        {"type": "context_edit", "id": "c1", "parentId": "a2", "timestamp": "2026-01-01T09:00:05.000Z", "targetId": "a1",
         "replacement": {"content": [{"type": "text", "text": "Fetching (token removed)."}, redacted_call]}},
        {"type": "context_edit", "id": "c2", "parentId": "c1", "timestamp": "2026-01-01T09:00:06.000Z", "targetId": "u1",
         "replacement": {"content": "fetch it\nplease\nnow"}},
    ]
    path = tmp_path / "edits.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *entries]))
    out = tmp_path / "edits.html"
    result = cli("export", str(path), "-o", str(out), "--allow-secrets")
    assert result.returncode == 0, result.stderr
    assert "SECRET-TOKEN" not in out.read_text()
    context, page, errors = _open(browser, out)
    try:
        edit = page.locator("article.t-context_edit").nth(0)
        fold = edit.locator("details.fold > summary").inner_text()
        assert "(0 lines" not in fold and re.search(r"new content \(2 lines, \d+ B\)", fold), fold
        edit.locator("details.fold > summary").click()
        body = edit.locator("details.fold").inner_text()
        assert "Fetching (token removed)." in body and "bash" in body and "Authorization: [REDACTED]" in body
        user_edit = page.locator("article.t-context_edit").nth(1).locator("details.fold > summary").inner_text()
        assert re.search(r"new content \(3 lines, 19 B\)", user_edit), user_edit
        done = page.locator("article.r-assistant").nth(1)
        assert "Done." in done.inner_text()
        assert done.locator("details.thinking").count() == 0
        assert "(redacted thinking)" in done.inner_text()
        assert "thinking (0 lines" not in page.content()
        assert not errors, errors
    finally:
        context.close()
