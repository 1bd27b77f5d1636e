"""A compaction whose leaf is moved by another real process while the
summary is being written (pi-session's rule, beyond pi, which chains a
stale plan onto whatever branch is last).

The summary comes from the fake OpenAI server of tests/fake_providers.py,
in this process on 127.0.0.1; the server holds its reply until a second
process (a plain ``python -c`` using the library) has appended to the
session: on another branch (then nothing may be written: the compaction
was planned on the old branch) or continuing the path (then the
compaction is written, chained after the other writer's entry). No sleeps:
the other process has finished before the reply is sent.

Checked for the real ``pi-session compact`` console script and for
``PiSession.compact``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fake_providers import FakeProviderServer, RecordedRequest, fake_provider  # noqa: F401  (fixture)
from pi_session import SessionManager
from pi_session.core import jsonio
from pi_session.llm.openai import OpenAISummarizer
from pi_session.operations import LeafMovedError
from pi_session.session.settings import CompactionSettings

EXE = Path(sys.executable).parent / "pi-session"

OTHER_WRITER = r"""
import sys, time
from pi_session import SessionManager
path, mode, branch_from = sys.argv[1:4]
manager = SessionManager.open(path)
if mode == "branch":
    manager.branch(branch_from)
manager.append_message({"role": "user", "content": [{"type": "text", "text": "from the other writer"}],
                        "timestamp": int(time.time() * 1000)})
manager.save()
print(manager.get_leaf_id())
"""


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": int(time.time() * 1000)}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": "fake",
        "model": "test-model",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop",
        "timestamp": int(time.time() * 1000),
    }


def make_session(tmp_path: Path, session_id: str) -> tuple[Path, list[str]]:
    """A six-turn session (long enough to compact with 10 kept tokens);
    returns its file and the entry ids in order."""
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    manager = SessionManager.create(str(cwd), tmp_path / "sessions", id=session_id)
    ids = []
    for turn in range(6):
        ids.append(manager.append_message(_user(f"Question {turn}: " + "please explain the parser in detail. " * 20)))
        ids.append(manager.append_message(_assistant(f"Answer {turn}: " + "the parser reads tokens one by one. " * 20)))
    manager.save()
    path = manager.get_session_file()
    assert path is not None
    return path, ids


def records(path: Path) -> list[dict[str, Any]]:
    return [jsonio.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def compactions(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r.get("type") == "compaction"]


def path_to(path: Path, entry_id: str) -> list[str]:
    """The ids root→``entry_id`` in the file."""
    by_id = {r.get("id"): r for r in records(path) if r.get("type") != "session"}
    out: list[str] = []
    node = by_id.get(entry_id)
    while node is not None:
        out.append(node["id"])
        node = by_id.get(node.get("parentId"))
    return out[::-1]


def assert_kept_on_path(path: Path) -> None:
    """Every compaction's first kept entry lies on the path to it."""
    for entry in compactions(path):
        assert entry["firstKeptEntryId"] in path_to(path, entry["id"]), entry


def hold_reply_until_other_writer(server: FakeProviderServer, path: Path, mode: str, branch_from: str) -> list[str]:
    """Make the server run the other writer (a real process) before it
    answers the first summary request; returns a list that then holds the
    other writer's new entry id."""
    written: list[str] = []

    def on_post(request: RecordedRequest) -> None:
        if written:
            return
        out = subprocess.run(
            [sys.executable, "-c", OTHER_WRITER, str(path), mode, branch_from],
            capture_output=True, text=True, check=True, timeout=120, env=dict(os.environ),
        )
        written.append(out.stdout.strip())

    server.on_post = on_post
    return written


def run_compact(tmp_path: Path, server: FakeProviderServer, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200", "OPENAI_API_KEY": "sk-test"}
    for var in ("ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(var, None)
    return subprocess.run(
        [str(EXE), "compact", str(path), "--provider", "openai", "--base-url", server.openai_base_url,
         "--model", "test-model", "--keep-recent-tokens", "10", "--max-retries", "0"],
        capture_output=True, text=True, env=env, timeout=300,
    )


# ---------------------------------------------------------------------------
# the CLI


def test_cli_compact_refuses_when_another_process_branched(tmp_path: Path, fake_provider: FakeProviderServer) -> None:
    path, ids = make_session(tmp_path, "leaf-moved-cli")
    before = path.read_bytes()
    written = hold_reply_until_other_writer(fake_provider, path, "branch", ids[5])
    res = run_compact(tmp_path, fake_provider, path)
    assert written, "the summary request reached the server"
    assert res.returncode == 1, res.stdout + res.stderr
    assert "the leaf moved" in res.stderr and "nothing was written" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    # only the other writer's entry was added; no compaction anywhere
    assert path.read_bytes().startswith(before)
    assert compactions(path) == []
    assert records(path)[-1]["id"] == written[0]


def test_cli_compact_follows_another_process_that_continued_the_path(tmp_path: Path, fake_provider: FakeProviderServer) -> None:
    path, ids = make_session(tmp_path, "leaf-continued-cli")
    written = hold_reply_until_other_writer(fake_provider, path, "continue", "")
    res = run_compact(tmp_path, fake_provider, path)
    assert res.returncode == 0, res.stdout + res.stderr
    (entry,) = compactions(path)
    assert entry["parentId"] == written[0]  # chained after the other writer's entry
    assert path_to(path, entry["id"])[: len(ids)] == ids
    assert_kept_on_path(path)


# ---------------------------------------------------------------------------
# PiSession


def _pi_session(tmp_path: Path, server: FakeProviderServer, session_id: str) -> Any:
    from pi_session.integrations.openai_agents import PiSession

    return PiSession(
        session_id,
        cwd=str(tmp_path / "project"),
        session_dir=tmp_path / "sessions",
        summarizer=OpenAISummarizer("test-model", base_url=server.openai_base_url, api_key="sk-test", max_retries=0),
        settings=CompactionSettings(True, 16384, 10),
    )


def test_pi_session_compact_refuses_when_another_process_branched(tmp_path: Path, fake_provider: FakeProviderServer) -> None:
    path, ids = make_session(tmp_path, "leaf-moved-agents")
    session = _pi_session(tmp_path, fake_provider, "leaf-moved-agents")
    written = hold_reply_until_other_writer(fake_provider, path, "branch", ids[5])

    async def body() -> None:
        assert await session.compact() is None
        assert isinstance(session.last_compaction_error, LeafMovedError)
        assert compactions(path) == []
        # the session was opened again: it sees the other writer's branch,
        # and a new compaction is planned there
        assert await session.get_items()  # still usable
        fake_provider.on_post = None
        event = await session.compact()
        assert event is not None
        assert path_to(path, event.entry_id)[-2] == written[0]

    asyncio.run(body())
    assert written
    assert_kept_on_path(path)


def test_pi_session_compact_follows_another_process_that_continued_the_path(tmp_path: Path, fake_provider: FakeProviderServer) -> None:
    path, ids = make_session(tmp_path, "leaf-continued-agents")
    session = _pi_session(tmp_path, fake_provider, "leaf-continued-agents")
    written = hold_reply_until_other_writer(fake_provider, path, "continue", "")

    async def body() -> None:
        event = await session.compact()
        assert event is not None
        (entry,) = compactions(path)
        assert entry["id"] == event.entry_id
        assert entry["parentId"] == written[0]

    asyncio.run(body())
    assert_kept_on_path(path)


@pytest.mark.parametrize("mode", ["branch", "continue"])
def test_never_a_compaction_off_the_new_path(tmp_path: Path, fake_provider: FakeProviderServer, mode: str) -> None:
    """Whatever the other writer did, the file never holds a compaction
    whose first kept entry is off the path to it."""
    path, ids = make_session(tmp_path, f"leaf-{mode}-any")
    hold_reply_until_other_writer(fake_provider, path, mode, ids[3])
    run_compact(tmp_path, fake_provider, path)
    assert_kept_on_path(path)


# ---------------------------------------------------------------------------
# the library: SessionManager.append_compaction


def test_append_compaction_refuses_a_plan_another_process_left_off_its_path(tmp_path: Path) -> None:
    """A manager opened before another process branched and appended: its
    plain ``append_compaction`` (no planned leaf given) of the plan made at
    its leaf would be chained onto the other branch, keeping an entry off
    that path (the context there would be the summary alone). Refused,
    nothing written."""
    from pi_session.manager.stale_leaf import FirstKeptOffPathError
    from pi_session.storage import LeafMovedError

    path, ids = make_session(tmp_path, "library-stale-plan")
    manager = SessionManager.open(path)
    prep = manager.prepare_compaction({"keepRecentTokens": 10})
    assert prep is not None and prep.first_kept_entry_id in ids[4:]
    subprocess.run([sys.executable, "-c", OTHER_WRITER, str(path), "branch", ids[1]],
                   capture_output=True, text=True, check=True, timeout=120, env=dict(os.environ))  # fmt: skip
    before = path.read_bytes()
    with pytest.raises(FirstKeptOffPathError) as info:
        manager.append_compaction("summary", prep.first_kept_entry_id, prep.tokens_before)
    assert isinstance(info.value, LeafMovedError) and info.value.count == 1
    assert f"keeps entry {prep.first_kept_entry_id}, which is not on the path" in str(info.value)
    assert "nothing was written" in str(info.value) and "\n" not in str(info.value)
    assert path.read_bytes() == before and compactions(path) == []


def test_append_compaction_follows_another_process_that_continued_the_path(tmp_path: Path) -> None:
    path, ids = make_session(tmp_path, "library-continued")
    manager = SessionManager.open(path)
    prep = manager.prepare_compaction({"keepRecentTokens": 10})
    assert prep is not None
    out = subprocess.run([sys.executable, "-c", OTHER_WRITER, str(path), "continue", ""],
                         capture_output=True, text=True, check=True, timeout=120, env=dict(os.environ))  # fmt: skip
    entry_id = manager.append_compaction("summary", prep.first_kept_entry_id, prep.tokens_before)
    (entry,) = compactions(path)
    assert entry["id"] == entry_id and entry["parentId"] == out.stdout.strip()
    assert_kept_on_path(path)


def test_append_compaction_refuses_a_first_kept_entry_off_the_leafs_path(tmp_path: Path) -> None:
    """In one process: the leaf moved to another branch after planning."""
    from pi_session.manager.stale_leaf import FirstKeptOffPathError

    path, ids = make_session(tmp_path, "library-moved-here")
    manager = SessionManager.open(path)
    prep = manager.prepare_compaction({"keepRecentTokens": 10})
    assert prep is not None
    manager.branch(ids[1])
    with pytest.raises(FirstKeptOffPathError):
        manager.append_compaction("summary", prep.first_kept_entry_id, prep.tokens_before)
    with pytest.raises(FirstKeptOffPathError):
        manager.append_compaction("summary", "no-such-entry", 10)
    assert compactions(path) == [] and manager.get_leaf_id() == ids[1]
    manager.append_compaction("summary", ids[0], 10)  # on the path: written
    manager.append_compaction("nothing kept", None, 10)  # keeps nothing: written
    assert len(compactions(path)) == 2
    assert_kept_on_path(path)
