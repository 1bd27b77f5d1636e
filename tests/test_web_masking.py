"""Secrets masked on ``pi-session serve``'s session pages and API: in
everything a page shows (entries, labels, the session name, context-edit
replacements, tool-call arguments), and by scanning only what is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secrets_corpus import SECRETS
from web_helpers import Server

httpx = pytest.importorskip("httpx")

SID = "0196c000-0000-7000-8000-00000000a5ec"
TOKEN = SECRETS[9][2]


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


def _secret_session(root: Path) -> Path:
    """A session whose secret sits in its name, a label, a tool call's
    arguments, a tool result and a context edit's replacement."""
    d = root / "--m--"
    d.mkdir(parents=True)
    stamp = "2026-11-30T10:00:00.000Z"
    records = [
        {"type": "session", "version": 3, "id": SID, "timestamp": stamp, "cwd": "/m"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
         "message": {"role": "user", "content": "deploy it", "timestamp": 1764496800000}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp,
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": f"gh auth login {TOKEN}"}}],
                     "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1764496800001}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": stamp,
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "logged in"}],
                     "isError": False, "timestamp": 1764496800002}},
        {"type": "context_edit", "id": "e1", "parentId": "r1", "timestamp": stamp, "targetId": "u1",
         "replacement": {"content": f"deploy with {TOKEN}"}},
        {"type": "label", "id": "l1", "parentId": "e1", "timestamp": stamp, "targetId": "a1", "label": f"key {TOKEN}"},
        {"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": stamp, "name": f"release {TOKEN}"},
    ]
    (d / f"2026-11-30T10-00-00-000Z_{SID}.jsonl").write_text("".join(_line(r) for r in records))
    return root


def test_every_shown_secret_is_masked(tmp_path):
    root = _secret_session(tmp_path / "sessions")
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        for url in (f"/s/{SID}", f"/s/{SID}?at=u1", f"/s/{SID}?at=r1", f"/s/{SID}?at=a1", f"/api/v1/sessions/{SID}",
                    f"/api/v1/sessions/{SID}/entries/a1", f"/api/v1/sessions/{SID}/entries/r1", f"/api/v1/sessions/{SID}/entries/u1",
                    f"/api/v1/sessions/{SID}/entries/l1", f"/api/v1/sessions/{SID}/entries/n1"):
            masked = client.get(url)
            assert masked.status_code == 200, url
            assert TOKEN not in masked.text and "REDACTED" in masked.text, url
        for url in (f"/s/{SID}", f"/api/v1/sessions/{SID}", f"/api/v1/sessions/{SID}/entries/a1", f"/api/v1/sessions/{SID}/entries/u1"):
            assert TOKEN in client.get(url, params={"secrets": "show"}).text, url


def test_a_masked_page_scans_only_what_it_shows(tmp_path, monkeypatch):
    """The first screen of a long session, secrets masked, scans about a
    page of rows, not every entry (the real scanner, its calls counted)."""
    from pi_session.secrets.scanner import Scanner
    from pi_session.stores import open_store
    from pi_session.web import pages
    from pi_session.web.data import PAGE_ROWS, StoreAccess

    d = tmp_path / "sessions" / "--big--"
    d.mkdir(parents=True)
    sid = "0196c000-0000-7000-8000-0000000b1600"
    stamp = "2026-11-30T00:00:00.000Z"
    lines = [_line({"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": "/big"})]
    parent = None
    for k in range(5000):
        eid = f"{k:08x}"
        lines.append(_line({"type": "message", "id": eid, "parentId": parent, "timestamp": stamp,
                            "message": {"role": "user", "content": f"step {k}: run the tests again, then report what failed", "timestamp": 1764460800000 + k}}))
        parent = eid
    lines.append(_line({"type": "message", "id": "last", "parentId": parent, "timestamp": stamp,
                        "message": {"role": "user", "content": f"use {TOKEN}", "timestamp": 1764460900000}}))
    (d / f"2026-11-30T00-00-00-000Z_{sid}.jsonl").write_text("".join(lines))

    scanned: list[str] = []
    real_scan = Scanner.scan

    def counting_scan(self: Scanner, text: str) -> list:
        scanned.append(text)
        return real_scan(self, text)

    monkeypatch.setattr(Scanner, "scan", counting_scan)
    access = StoreAccess(open_store(tmp_path / "sessions"))
    view = access.view(sid, redact=True)
    html = pages.session_page(view, selected=view.leaf_index, offset=(view.leaf_index // PAGE_ROWS) * PAGE_ROWS, csrf="x", read_only=True)
    assert TOKEN not in html and "[REDACTED:github-token]" in html
    assert 0 < len(scanned) < 3 * PAGE_ROWS, len(scanned)
