"""PiConversationStore with real concurrent processes, on every store kind:
two writers saving the same conversation (one wins, the other gets
ConversationConflict, nothing of it stored), two creating one new
conversation, and a writer killed in the middle of a save (the
conversation still loads, as it was, and takes the next save)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.conversation import Conversation  # noqa: E402

from pi_session.integrations.pydantic_ai import PiConversationStore  # noqa: E402
from pi_session.stores import open_store  # noqa: E402
from process_barrier import release_together  # noqa: E402
from pydantic_ai_helpers import turn  # noqa: E402

CHILD = Path(__file__).resolve().parent / "pydantic_ai_child.py"


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


def _start(url: str, conversation_id: str) -> list:
    async def go() -> list:
        store = PiConversationStore(url, cwd="/work/proj")
        conversation = Conversation(conversation_id=conversation_id, messages=turn("base", 1))
        await store.save(conversation)
        loaded = await store.load(conversation_id)
        store.close()
        assert loaded is not None
        return loaded.messages

    return asyncio.run(go())


def _load(url: str, conversation_id: str) -> Conversation | None:
    async def go() -> Conversation | None:
        store = PiConversationStore(url, cwd="/work/proj")
        try:
            return await store.load(conversation_id)
        finally:
            store.close()

    return asyncio.run(go())


def _session_bytes(url: str, conversation_id: str) -> bytes:
    store = open_store(url)
    try:
        return b"".join(store.read_lines(conversation_id))
    finally:
        store.close()


@pytest.mark.parametrize("writers", [2, 4])
def test_writers_saving_one_conversation_at_once_one_wins_the_others_conflict_and_store_nothing(store_url: str, writers: int) -> None:
    base = _start(store_url, "race")
    procs = [_child("save", store_url, "race", f"writer-{k}") for k in range(writers)]
    release_together(procs)
    outcomes = {}
    for k, p in enumerate(procs):
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outcomes[k] = out.split()[-1]
    assert sorted(outcomes.values()) == ["conflict"] * (writers - 1) + ["saved"], outcomes
    winner = next(k for k, outcome in outcomes.items() if outcome == "saved")
    loaded = _load(store_url, "race")
    assert loaded is not None
    assert loaded.messages == base + turn(f"writer-{winner}", 1000, tool=True)
    stored = _session_bytes(store_url, "race")
    for k in outcomes:
        assert (f"writer-{k}".encode() in stored) == (k == winner)


def test_processes_creating_one_new_conversation_at_once_make_one(store_url: str) -> None:
    procs = [_child("save", store_url, "fresh", f"creator-{k}") for k in range(3)]
    release_together(procs)
    outcomes = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outcomes.append(out.split()[-1])
    assert sorted(outcomes) == ["conflict", "conflict", "saved"], outcomes
    winner = outcomes.index("saved")
    loaded = _load(store_url, "fresh")
    assert loaded is not None and loaded.messages == turn(f"creator-{winner}", 1000, tool=True)


def test_a_writer_killed_in_the_middle_of_a_save_leaves_the_conversation_as_it_was(store_url: str) -> None:
    base = _start(store_url, "killed")
    before = _load(store_url, "killed")
    child = _child("stall", store_url, "killed", "half written")
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "stalled", child.stderr.read() if child.stderr else line
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    after = _load(store_url, "killed")
    assert after is not None and before is not None
    assert after.messages == base and after.revision == before.revision

    async def continue_it() -> Conversation | None:
        store = PiConversationStore(store_url, cwd="/work/proj")
        after.messages.extend(turn("next", 2000))
        await store.save(after)
        loaded = await store.load("killed")
        store.close()
        return loaded

    loaded = asyncio.run(continue_it())
    assert loaded is not None and loaded.messages == base + turn("next", 2000)
