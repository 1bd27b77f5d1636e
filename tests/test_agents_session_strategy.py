"""PiSession(compaction_strategy=...): the automatic trigger and compact()
mask old tool outputs through context edits (mask), or mask then summarize
(both); pi 1.6 reads the masked context as the session does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("agents")

from pi_session import SessionManager  # noqa: E402
from pi_session.integrations.openai_agents import CompactionEvent, PiSession  # noqa: E402

BIG = "\n".join(f"row {n}: " + "y" * 70 for n in range(120))  # ~9,500 characters


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def turn(n: int) -> list[dict[str, Any]]:
    call_id = f"call_{n}"
    return [
        {"role": "user", "content": f"Read report {n}"},
        {"type": "function_call", "call_id": call_id, "name": "read_report", "arguments": json.dumps({"n": n}), "id": f"fc_{n}"},
        {"type": "function_call_output", "call_id": call_id, "output": BIG},
        {"role": "assistant", "content": f"Report {n} read."},
    ]


def session(tmp_path, name, strategy, **kw):
    return PiSession(
        name,
        cwd=str(tmp_path),
        session_dir=tmp_path / "sessions",
        settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 3000}},
        compaction_strategy=strategy,
        **kw,
    )


def test_mask_strategy_trigger_masks_and_keeps_every_message(tmp_path, oracle):
    events: list[CompactionEvent] = []
    s = session(tmp_path, "masking", "mask", context_window=9000, on_compaction=events.append)
    for n in range(4):
        run(s.add_items(turn(n)))
    assert events and events[0].reason == "threshold" and events[0].summarizer == "mask" and events[0].summary == ""
    assert events[0].tokens_after < events[0].tokens_before
    path = s.session_file
    entries = SessionManager.open(path).get_entries()
    assert not [e for e in entries if e["type"] == "compaction"]
    edits = [e for e in entries if e["type"] == "context_edit"]
    assert edits and edits[-1]["id"] == events[-1].entry_id
    assert all("masked to save context" in json.dumps(e["replacement"]) for e in edits)
    # every message is still in the context; the old outputs are one-line notes
    items = run(s.get_items())
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert len(outputs) == 4 and outputs[-1] == BIG and "masked to save context" in outputs[0]
    ours = SessionManager.open(path, read_only=True).build_session_context()["messages"]
    assert json.loads(oracle("context", str(path)))["messages"] == json.loads(json.dumps(ours))


def test_both_strategy_masks_then_summarizes(tmp_path):
    s = session(tmp_path, "both", "both")
    for n in range(40):  # the masked notes alone still outweigh keepRecentTokens
        run(s.add_items(turn(n)))
    event = run(s.compact())
    assert event is not None and event.summarizer == "extractive" and event.summary
    types = [e["type"] for e in SessionManager.open(s.session_file).get_entries()]
    assert types[-1] == "compaction" and "context_edit" in types
    assert types.index("context_edit") < types.index("compaction")


def test_unknown_strategy_is_refused(tmp_path):
    with pytest.raises(ValueError, match="compaction_strategy must be one of summary, mask, both"):
        session(tmp_path, "bad", "trim")


def test_both_strategy_stops_after_masking_when_that_is_enough(tmp_path):
    s = session(tmp_path, "both-enough", "both", context_window=20000)
    for n in range(3):
        run(s.add_items(turn(n)))
    event = run(s.compact())
    assert event is not None and event.summarizer == "mask"  # under pi's trigger once masked: no summary
    types = [e["type"] for e in SessionManager.open(s.session_file).get_entries()]
    assert "context_edit" in types and "compaction" not in types
