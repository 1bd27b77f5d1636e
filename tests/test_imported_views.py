"""Imported Claude Code and Codex sessions read as the conversation in
``pi-session tree`` and ``browse``: by default at least 90% of the rows are
messages, summaries and model changes; the custom entries the importers
keep (nothing of the source is dropped) are left out, counted by kind in one
line, and shown by ``tree --all-entries`` and browse's "all entries" filter.
Real transcripts from ../shared/fixtures/other-agents, imported and shown by
the real console script."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from browse_helpers import run, until
from shared_paths import SHARED

AGENTS = SHARED / "fixtures" / "other-agents"
SOURCES = {"claude-code": AGENTS / "claude-code" / "projects", "codex": AGENTS / "codex" / "sessions"}
CONVERSATION = {"message", "compaction", "branch_summary", "model_change"}
ROW_ID = re.compile(r"^[ │├└─•]*([0-9a-f]{8}) ")


def _imported(cli: Any, tmp_path: Path, fmt: str) -> list[Path]:
    if not SOURCES[fmt].exists():
        pytest.skip(f"needs {SOURCES[fmt]} (the ../shared checkout beside this repository)")
    done = cli("import", "--from", fmt, str(SOURCES[fmt]))
    assert done.returncode == 0, done.stderr
    files = sorted((tmp_path / "agent" / "sessions").glob("*/*.jsonl"))
    assert files
    return files


def _types(cli: Any, path: Path) -> dict[str, str]:
    data = json.loads(cli("tree", str(path), "--json").stdout)
    return {e["id"]: e["type"] for e in data["entries"]}


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_tree_of_an_imported_session_is_the_conversation(cli, tmp_path, fmt):
    files = _imported(cli, tmp_path, fmt)
    total_rows = total_talk = 0
    hid_some = False
    for path in files:
        types = _types(cli, path)
        out = cli("tree", str(path))
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        ids = [m.group(1) for line in lines if (m := ROW_ID.match(line))]
        talk = sum(1 for i in ids if types[i] in CONVERSATION)
        assert talk >= 0.9 * len(ids), (path.name, talk, len(ids), [types[i] for i in ids if types[i] not in CONVERSATION])
        total_rows += len(ids)
        total_talk += talk
        hidden = len(types) - len(ids)
        if hidden:
            hid_some = True
            # nothing silently invisible: one last line counts what is left out, by kind
            assert lines[-1].startswith(f"… {hidden:,} entr"), lines[-1]
            assert lines[-1].endswith("(--all-entries shows them)"), lines[-1]
            if any(types[i] == "custom" for i in set(types) - set(ids)):
                assert re.search(rf"\d+ {fmt}/", lines[-1]), lines[-1]
            assert all(types[i] in ("custom", "session_info") for i in set(types) - set(ids))
        every = cli("tree", str(path), "--all-entries").stdout.splitlines()
        assert [m.group(1) for line in every if (m := ROW_ID.match(line))] == [e for e in types], path.name
        assert not any(line.startswith("…") for line in every)
    # the importer writes few custom entries (a run of notes after a pause; the last one is the leaf, shown)
    assert (hid_some or fmt == "codex") and total_talk >= 0.9 * total_rows


def test_the_leaf_and_labelled_custom_entries_stay_shown(cli, tmp_path):
    import orjson

    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0789", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    entries = [
        {"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": "hi", "timestamp": 0}},
        {"type": "custom", "id": "aaaa0002", "parentId": "aaaa0001", "timestamp": "2026-01-01T00:00:02.000Z", "customType": "ext/state", "data": {}},
        {"type": "custom", "id": "aaaa0003", "parentId": "aaaa0002", "timestamp": "2026-01-01T00:00:03.000Z", "customType": "ext/state", "data": {}},
        {"type": "custom", "id": "aaaa0004", "parentId": "aaaa0003", "timestamp": "2026-01-01T00:00:04.000Z", "customType": "ext/other", "data": {}},
        {"type": "label", "id": "aaaa0005", "parentId": "aaaa0004", "timestamp": "2026-01-01T00:00:05.000Z", "targetId": "aaaa0003", "label": "keep"},
        {"type": "custom", "id": "aaaa0006", "parentId": "aaaa0005", "timestamp": "2026-01-01T00:00:06.000Z", "customType": "ext/state", "data": {}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *entries]))
    lines = cli("tree", str(path)).stdout.splitlines()
    ids = [m.group(1) for line in lines if (m := ROW_ID.match(line))]
    assert ids == ["aaaa0001", "aaaa0003", "aaaa0005", "aaaa0006"]  # labelled, label, leaf
    assert lines[-1] == "… 2 entries hidden: 1 ext/other, 1 ext/state (--all-entries shows them)"


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_browse_opens_an_imported_session_on_the_conversation(cli, tmp_path, monkeypatch, fmt):
    from pi_session.browse.app import BrowseApp
    from pi_session.browse.session import SessionScreen

    files = _imported(cli, tmp_path, fmt)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    path = max(files, key=lambda p: (p.read_bytes().count(b'"type":"custom"'), p.stat().st_size))
    types = _types(cli, path)
    app = BrowseApp(path)

    async def body(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        s = app.screen
        assert s.filter == "conversation"
        shown = [types[row.id] for row in s.rows]
        assert sum(1 for t in shown if t in CONVERSATION) >= 0.9 * len(shown)
        hidden = len(types) - len(shown)
        assert hidden > 0 or fmt == "codex"  # the Codex imports' only custom entries are their leaves
        title = str(s.query_one("#title").render())
        assert (f"{hidden:,} entries hidden" in title and f"{fmt}/" in title) if hidden else "hidden" not in title
        await pilot.press("1")  # all entries
        assert len(s.rows) == len(types)
        await pilot.press("0")
        assert len(s.rows) == len(shown)

    run(app, body, size=(160, 30))


def test_the_hidden_line_names_the_most_frequent_kinds_and_counts_the_rest():
    from pi_session.session.tree import TreeNode
    from pi_session.session.conversation import hidden_summary

    kinds = ["a/x"] * 5 + ["a/y"] * 4 + ["a/z"] * 3 + ["b/1"] * 2 + ["b/2", "b/3"]
    nodes = [TreeNode({"type": "custom", "id": f"{i:08x}", "customType": k}, []) for i, k in enumerate(kinds)]
    nodes.append(TreeNode({"type": "session_info", "id": "ffffffff", "name": "n"}, []))
    assert hidden_summary(nodes) == "17 entries hidden: 5 a/x, 4 a/y, 3 a/z, 2 b/1, 3 in 3 other kinds"
    assert hidden_summary(nodes[:1]) == "1 entry hidden: 1 a/x"
    assert hidden_summary([]) == ""
