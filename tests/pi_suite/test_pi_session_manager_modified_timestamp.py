"""pi 0.58.3 test/session-info-modified-timestamp.test.ts, translated: a
listed session's ``modified`` is its last user/assistant message's
timestamp, not the file's mtime. pi waits 10 ms so that the two differ;
here the messages carry timestamps a minute or two in the past instead."""

from __future__ import annotations

import json

from pi_sm_helpers import assistant_msg, now_ms

from pi_session import SessionManager
from pi_session.core.timestamps import iso_to_ms


def test_modified_timestamp_is_last_message_time_not_mtime(tmp_path):
    path = tmp_path / "pi-session-modified.jsonl"
    header = {"type": "session", "id": "test-session", "version": 3, "timestamp": "1970-01-01T00:00:00.000Z", "cwd": "/tmp"}
    path.write_text(json.dumps(header) + "\n")
    first_time = now_ms() - 120_000
    SessionManager.open(path).append_message(assistant_msg("hi", first_time, provider="openai", api="openai-completions"))
    mtime_before_ms = path.stat().st_mtime_ns // 1_000_000

    msg_time = first_time + 60_000
    SessionManager.open(path).append_message(assistant_msg("later", msg_time, provider="openai", api="openai-completions"))

    infos = [info for info in SessionManager.list("/tmp", tmp_path) if info["path"] == str(path)]
    assert len(infos) == 1
    modified = iso_to_ms(infos[0]["modified"])
    assert modified == msg_time
    assert modified != mtime_before_ms
