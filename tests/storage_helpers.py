"""Helpers for the storage / repair / crash tests: small valid sessions."""

from __future__ import annotations

from pathlib import Path

from pi_session.manager.session_manager import SessionManager


def assistant(text: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop",
        "timestamp": 1,
    }


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def make_session(directory: Path, n: int = 6, cwd: str = "/proj") -> Path:
    """A persisted v3 session with ``n`` alternating user/assistant messages
    (plus a label and a compaction-free tree); returns its file."""
    m = SessionManager.create(cwd, session_dir=directory)
    ids = []
    for i in range(n):
        ids.append(m.append_message(user(f"question {i} ünïcode ✓") if i % 2 == 0 else assistant(f"answer {i}")))
    m.append_label_change(ids[0], "start")
    path = m.get_session_file()
    assert path is not None and path.exists()
    return path


def stored_session_lines(session_id: str, text: str = "hello") -> list[bytes]:
    """The lines of a two-record session (header + one user message) for
    putting straight into a store."""
    from pi_session.core import jsonio

    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-02T03:04:05.000Z", "cwd": "/work/p"}
    user = {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": "2025-01-02T03:04:06.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1735787046000},
    }
    return [jsonio.dumps_line(header), jsonio.dumps_line(user)]


def user_message_lines(session_id: str, *texts: str, cwd: str = "/work/p") -> list[bytes]:
    """The lines of a session (header, then one user message per text, each
    the child of the one before) for putting straight into a store; entry
    ids are the session id's first four characters and a counter."""
    import orjson

    records: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}
    ]
    parent = None
    for n, text in enumerate(texts):
        entry_id = f"{session_id[:4]}{n:04d}"
        records.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                        "message": {"role": "user", "content": text, "timestamp": 1767225601000 + n}})
        parent = entry_id
    return [orjson.dumps(r) + b"\n" for r in records]
