"""The workflow layer (pi_session.operations), through its public functions:
opening policy, compaction committed only on the planned path, navigation
with a summary, the export target rule, import."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from pi_session import SessionManager, operations
from pi_session.core import jsonio
from pi_session.llm import ExtractiveSummarizer
from pi_session.operations import LeafMovedError, OperationError, OutputExists
from pi_session.session.settings import CompactionSettings

SETTINGS = CompactionSettings(True, 16384, 10)


def _msg(role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": int(time.time() * 1000)}
    if role == "assistant":
        message.update(api="openai-completions", provider="fake", model="m", stopReason="stop",
                       usage={"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    return message


def make_session(tmp_path: Path, turns: int = 5) -> tuple[Path, list[str]]:
    (tmp_path / "cwd").mkdir(exist_ok=True)
    manager = SessionManager.create(str(tmp_path / "cwd"), tmp_path / "sessions")
    ids = []
    for turn in range(turns):
        ids.append(manager.append_message(_msg("user", f"question {turn} " + "about the parser " * 30)))
        ids.append(manager.append_message(_msg("assistant", f"answer {turn} " + "the parser works " * 30)))
    manager.save()
    path = manager.get_session_file()
    assert path is not None
    return path, ids


def compactions(path: Path) -> list[dict[str, Any]]:
    return [r for r in map(jsonio.loads, path.read_bytes().splitlines()) if r.get("type") == "compaction"]


# -- opening


def test_open_for_reading_refuses_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(OperationError, match="empty file"):
        operations.open_for_reading(empty)
    assert empty.read_bytes() == b""


def test_open_for_reading_names_a_missing_file_as_shown(tmp_path: Path) -> None:
    with pytest.raises(OperationError, match="^typed: "):
        operations.open_for_reading(tmp_path / "missing" / "x.jsonl", shown_as="typed")


def test_open_for_reading_never_writes(tmp_path: Path) -> None:
    path, _ = make_session(tmp_path)
    manager = operations.open_for_reading(path)
    with pytest.raises(PermissionError):
        manager.append_message(_msg("user", "no"))


# -- compaction


def test_plan_says_why_there_is_nothing_to_compact(tmp_path: Path) -> None:
    path, _ = make_session(tmp_path, turns=1)
    plan = operations.plan_compaction(operations.open_for_reading(path), CompactionSettings(True, 16384, 100000))
    assert plan.preparation is None
    assert plan.reason.startswith("Nothing to compact")
    assert asyncio.run(operations.compact_session(operations.open_for_reading(path), ExtractiveSummarizer(), plan=plan)) is None


def test_compact_session_writes_at_the_planned_leaf(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path)
    done = asyncio.run(
        operations.compact_session(
            operations.open_for_reading(path), ExtractiveSummarizer(), settings=SETTINGS,
            open_writer=lambda: operations.open_for_writing(path),
        )
    )
    assert done is not None
    (entry,) = compactions(path)
    assert entry["id"] == done.entry_id and entry["parentId"] == ids[-1]


def test_commit_refuses_when_the_leaf_moved_to_another_branch(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path)
    manager = operations.open_for_writing(path)
    plan = operations.plan_compaction(manager, SETTINGS)
    result = asyncio.run(operations.summarize_compaction(plan, ExtractiveSummarizer()))
    manager.branch(ids[3])  # this process moves the leaf off the planned path
    manager.append_message(_msg("user", "another direction"))
    size = path.stat().st_size
    with pytest.raises(LeafMovedError) as caught:
        operations.commit_compaction(plan, result, manager)
    assert not caught.value.by_other_writer
    assert path.stat().st_size == size and compactions(path) == []


def test_commit_follows_entries_that_continue_the_path(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path)
    plan = operations.plan_compaction(operations.open_for_reading(path), SETTINGS)
    result = asyncio.run(operations.summarize_compaction(plan, ExtractiveSummarizer()))
    other = operations.open_for_writing(path)
    later = other.append_message(_msg("user", "one more question"))
    done = operations.commit_compaction(plan, result, operations.open_for_writing(path))
    (entry,) = compactions(path)
    assert entry["parentId"] == later and done.entry_id == entry["id"]


def test_commit_refuses_after_another_compaction(tmp_path: Path) -> None:
    path, _ = make_session(tmp_path)
    plan = operations.plan_compaction(operations.open_for_reading(path), SETTINGS)
    result = asyncio.run(operations.summarize_compaction(plan, ExtractiveSummarizer()))
    first = operations.commit_compaction(plan, result, operations.open_for_writing(path))
    assert first.entry_id
    with pytest.raises(LeafMovedError):
        operations.commit_compaction(plan, result, operations.open_for_writing(path))
    assert len(compactions(path)) == 1


# -- navigation


def test_navigate_with_a_summary_refuses_when_the_leaf_moved(tmp_path: Path) -> None:
    from pi_session.compaction import BranchSummaryResult

    path, ids = make_session(tmp_path)
    plan = operations.open_for_reading(path).plan_navigation(ids[3])
    operations.open_for_writing(path).append_message(_msg("user", "meanwhile"))
    summary = BranchSummaryResult(summary="the branch left")
    with pytest.raises(LeafMovedError):
        operations.navigate_session(operations.open_for_writing(path), plan, summary)
    moved = operations.navigate_session(operations.open_for_writing(path), plan)  # a plain move is fine
    assert moved.summary_entry_id is not None


def test_plan_navigation_unknown_entry(tmp_path: Path) -> None:
    from pi_session.errors import PiSessionError
    from pi_session.compaction.navigation import EntryNotFoundError

    path, _ = make_session(tmp_path)
    with pytest.raises(EntryNotFoundError) as caught:
        operations.open_for_reading(path).plan_navigation("nope")
    assert isinstance(caught.value, PiSessionError) and isinstance(caught.value, KeyError)
    assert str(caught.value) == f"{path}: no entry with id nope"  # one line, not a KeyError's quoted repr


# -- export


def test_export_target_rules(tmp_path: Path) -> None:
    path, _ = make_session(tmp_path)
    with pytest.raises(OperationError, match="session being exported"):
        operations.check_export_target(path, path, overwrite=True)
    with pytest.raises(OperationError, match="does not exist"):
        operations.check_export_target(tmp_path / "no" / "x.html", path)
    with pytest.raises(OperationError, match="is a directory"):
        operations.check_export_target(tmp_path, path, overwrite=True)
    existing = tmp_path / "out.html"
    existing.write_text("mine")
    with pytest.raises(OutputExists):
        operations.check_export_target(existing, path)
    assert operations.check_export_target(existing, path, overwrite=True) == existing


def test_export_chunks_markdown_shows_escapes(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    manager = SessionManager.create(str(tmp_path / "cwd"), tmp_path / "sessions")
    manager.append_message(_msg("user", "bell \x07 here"))
    chunks, count = operations.export_chunks(manager, "md")
    text = b"".join(chunks).decode()
    assert count == 1 and "\\x07" in text and "\x07" not in text
    chunks, count = operations.export_chunks(manager, "md", "null")
    assert count == 0


# -- import


def test_import_sessions_reports_unreadable_sources(tmp_path: Path) -> None:
    from pi_session.stores import open_store

    path, _ = make_session(tmp_path)
    sqlite_file = tmp_path / "db.sqlite"
    target = open_store(f"sqlite:///{sqlite_file}")
    results = list(operations.import_sessions([str(tmp_path / "missing"), str(path)], target))
    assert [r.status for r in results] == ["failed", "imported"]
    again = list(operations.import_sessions([str(path), str(sqlite_file)], target))
    assert [r.status for r in again] == ["unchanged", "failed"]
    assert "a SQLite database" in (again[1].message or "")

    # the shape `import --json` prints, as the result's own JSON
    assert results[1].to_json() == {"source": str(path), "status": "imported", "id": results[1].session_id,
                                    "migratedFrom": None, "problems": []}
    failed = again[1].to_json()
    assert failed["status"] == "failed" and failed["message"] == again[1].message and "appended" not in failed


def test_clone_session_writes_the_path_and_leaves_the_source(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path, turns=3)
    before = path.read_bytes()
    done = operations.clone_session(operations.open_for_reading(path), ids[1])
    assert isinstance(done.location, Path) and done.location.parent == path.parent and done.location != path
    assert done.parent_session == str(path) and done.entries == 2 and done.warning is None
    clone = SessionManager.open(done.location)
    assert [e["id"] for e in clone.get_entries()] == ids[:2]
    assert clone.get_header()["parentSession"] == str(path)
    assert path.read_bytes() == before
    assert done.to_json() == {"path": str(done.location), "id": done.session_id, "parentSession": str(path), "entries": 2}


def test_clone_session_refuses_an_unknown_entry_and_writes_nothing(tmp_path: Path) -> None:
    path, _ = make_session(tmp_path, turns=1)
    with pytest.raises(OperationError, match=f"{path}: no entry with id nope"):
        operations.clone_session(operations.open_for_reading(path), "nope")
    assert sorted(path.parent.iterdir()) == [path]
