"""Session lookup by path or id prefix, as a library call every front end
shares (:func:`pi_session.manager.locating.resolve_session_file`), on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_session.errors import PiSessionError
from pi_session.core.jsonio import dumps_line
from pi_session.manager.locating import AmbiguousSessionFileError, SessionCandidate, resolve_session_file
from pi_session.stores import FileStore, SessionNotFoundError


def _write(path: Path, session_id: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    path.write_bytes(dumps_line(header))
    return path


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    sessions = root / "sessions" / "--p--"
    _write(sessions / "2025-01-01T00-00-00-000Z_abc111.jsonl", "abc111")
    _write(sessions / "2025-01-01T00-00-01-000Z_abc222.jsonl", "abc222")
    # named after one id, holding another: found by both
    _write(sessions / "2025-01-01T00-00-02-000Z_copy.jsonl", "def333")
    return root


def test_a_unique_prefix_finds_the_file(agent: Path) -> None:
    found = resolve_session_file("abc1", agent_dir=agent)
    assert found.name == "2025-01-01T00-00-00-000Z_abc111.jsonl" and found.is_absolute()


def test_a_file_named_otherwise_is_found_by_its_header_id(agent: Path) -> None:
    assert resolve_session_file("def", agent_dir=agent).name == "2025-01-01T00-00-02-000Z_copy.jsonl"
    assert resolve_session_file("copy", agent_dir=agent).name == "2025-01-01T00-00-02-000Z_copy.jsonl"


def test_an_ambiguous_prefix_carries_the_candidates(agent: Path) -> None:
    with pytest.raises(AmbiguousSessionFileError) as caught:
        resolve_session_file("abc", agent_dir=agent)
    error = caught.value
    assert isinstance(error, PiSessionError) and isinstance(error, SessionNotFoundError)
    assert [c.ids for c in error.candidates] == [("abc111",), ("abc222",)]
    assert all(isinstance(c, SessionCandidate) and c.path.is_file() for c in error.candidates)
    assert error.matches == ["abc111", "abc222"]
    assert "ambiguous session id prefix: 2 session files match" in str(error)


def test_an_upper_case_prefix_finds_a_lower_case_id(agent: Path) -> None:
    assert resolve_session_file("ABC2", agent_dir=agent).name.endswith("_abc222.jsonl")


def test_a_path_is_made_absolute_without_resolving_links(agent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _write(tmp_path / "elsewhere" / "s.jsonl", "x1")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    monkeypatch.chdir(tmp_path)
    assert resolve_session_file("link.jsonl", agent_dir=agent) == Path(os.path.abspath(link))


def test_unknown_ids_and_non_files_are_not_found(agent: Path, tmp_path: Path) -> None:
    with pytest.raises(SessionNotFoundError, match="no session id starts with it"):
        resolve_session_file("zzz", agent_dir=agent)
    with pytest.raises(SessionNotFoundError, match="no such session file"):
        resolve_session_file("no/such/file.jsonl", agent_dir=agent)
    with pytest.raises(SessionNotFoundError, match="no session given"):
        resolve_session_file("  ", agent_dir=agent)
    with pytest.raises(SessionNotFoundError):
        resolve_session_file(str(tmp_path), agent_dir=agent)  # a directory


def test_a_store_of_files_resolves_through_the_store(agent: Path) -> None:
    store = FileStore(agent / "sessions")
    assert resolve_session_file("abc2", store=store).name.endswith("_abc222.jsonl")
    with pytest.raises(SessionNotFoundError):
        resolve_session_file("abc", store=store)
