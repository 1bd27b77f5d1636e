"""The session page and its API made a page at a time: a long session is
read lazily and only the rows and entries a page shows are decoded; every
page of ``GET /api/v1/sessions/{id}`` is the same rows as one request for
all of them, laid out as the whole tree is; a tool result still names its
call's arguments."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from pi_session import SessionManager
from pi_session.session.conversation import ConversationView
from pi_session.storage import LazyRecords
from pi_session.stores import open_store
from pi_session.viewer.model import tree_rows
from pi_session.web.data import PAGE_ROWS, StoreAccess, entry_json, session_json
from pi_session.web.pages import session_page
from web_helpers import Server

SID = "0196a000-0000-7000-8000-0000000be11e"


def _write(root: Path, records: list[dict]) -> Path:
    project = root / "--p--"
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"2026-01-01T00-00-00-000Z_{SID}.jsonl"
    header = {"type": "session", "version": 3, "id": SID, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return path


def _message(i: int, parent: str | None, stamp: int = 0, **extra) -> dict:
    return {"type": "message", "id": f"{i:08x}", "parentId": parent, "timestamp": f"2026-01-01T00:{stamp // 60:02d}:{stamp % 60:02d}.000Z",
            "message": {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}", **extra}}


def _chain(n: int) -> list[dict]:
    records, parent = [], None
    for i in range(n):
        records.append(_message(i, parent))
        parent = f"{i:08x}"
    return records


def _branchy(n: int) -> list[dict]:
    """A session with forks every few entries, hidden custom entries, a
    repeated session name and labels."""
    records, parent = [], None
    for i in range(n):
        eid = f"{i:08x}"
        if i % 97 == 5:
            records.append({"type": "custom", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", "customType": "ext/state", "data": {}})
        elif i % 131 == 7:
            records.append({"type": "session_info", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", "name": "same"})
        elif i % 173 == 9:
            records.append({"type": "label", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", "targetId": f"{i - 3:08x}", "label": "here"})
        else:
            records.append(_message(i, parent, stamp=i % 3600))
        # every 11th entry goes back a few to fork; every 401st starts a new root
        parent = None if i % 401 == 400 else f"{max(0, i - 4):08x}" if i % 11 == 10 else eid
    return records


def test_the_first_screen_of_a_long_session_decodes_only_what_it_shows(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    n = 20_000
    path = _write(root, _chain(n))
    access = StoreAccess(open_store(str(root)))
    view = access.view(SID, redact=True)
    entries = view.manager.tree.entries
    assert isinstance(entries, LazyRecords)  # read lazily, not decoded in full
    selected = view.leaf_index
    assert selected == n - 1
    offset = (selected // PAGE_ROWS) * PAGE_ROWS  # the page the app opens: the one holding the leaf
    page = session_page(view, selected=selected, offset=offset, csrf="t", read_only=True)
    assert page.count('class="row item') == n - offset
    decoded = sum(entries.is_decoded(i) for i in range(len(entries)))
    assert decoded < PAGE_ROWS + 300, decoded  # its rows, the path's last entries and the opening ones
    # the same rows as the whole layout of the session read in full
    eager = SessionManager.open(path, read_only=True)
    roots = eager.get_tree()
    whole = tree_rows(roots, ConversationView(roots, eager.get_leaf_id()))
    api = session_json(view, offset=offset)
    assert [(r["i"], r["p"], r["id"], r["prefix"]) for r in api["rows"]] == [
        (r.index, r.parent, r.entry["id"], r.prefix) for r in whole[offset:]
    ]
    assert entry_json(view, f"{n - 1:08x}")["path"] == [r.entry["id"] for r in whole]


def test_every_api_page_is_the_same_rows_as_all_of_them(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = _write(root, _branchy(2_500))
    eager = SessionManager.open(path, read_only=True)
    roots = eager.get_tree()
    whole = tree_rows(roots, ConversationView(roots, eager.get_leaf_id()))
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        pages = [client.get(f"/api/v1/sessions/{SID}", params={"offset": start, "limit": 333}).json() for start in range(2_331, -1, -333)]
        pages.append(client.get(f"/api/v1/sessions/{SID}", params={"offset": 2_664, "limit": 333}).json())
        everything = client.get(f"/api/v1/sessions/{SID}", params={"offset": 0, "limit": 100_000}).json()
    assert everything["rowCount"] == len(whole) == len(everything["rows"])
    paged = sorted((row for page in pages for row in page["rows"]), key=lambda r: r["i"])
    assert paged == everything["rows"]
    assert [(r["i"], r["p"], r["id"], r["hidden"], r["label"]) for r in paged] == [
        (r.index, r.parent, r.entry["id"], r.hidden, r.label) for r in whole
    ]
    assert [r["prefix"] for r in paged] == [r.shown_prefix if r.shown_prefix is not None else r.prefix for r in whole]
    assert any(r.hidden for r in whole) and any(r.label for r in whole) and any("├─" in r.prefix for r in whole)


def test_a_tool_result_names_its_call_near_or_far(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    call = {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {"command": "echo far-away-argument"}}
    records = [
        {"type": "message", "id": "a0", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "assistant", "content": [call], "provider": "p", "model": "m"}},
    ]
    parent = "a0"
    for i in range(3_000):  # far more entries than are looked at above a result
        records.append(_message(i, parent))
        parent = f"{i:08x}"
    result = {"role": "toolResult", "toolCallId": "call-1", "toolName": "bash", "content": [{"type": "text", "text": "ok"}]}
    records.append({"type": "message", "id": "r-far", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": result})
    records.append({"type": "message", "id": "a-near", "parentId": "r-far", "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {"role": "assistant", "content": [{**call, "id": "call-2", "arguments": {"command": "echo near-argument"}}]}})
    records.append({"type": "message", "id": "r-near", "parentId": "a-near", "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {**result, "toolCallId": "call-2"}})
    _write(root, records)
    view = StoreAccess(open_store(str(root))).view(SID, redact=False)
    assert "echo near-argument" in entry_json(view, "r-near")["html"]
    assert "echo far-away-argument" in entry_json(view, "r-far")["html"]
