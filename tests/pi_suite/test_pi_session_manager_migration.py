"""pi 0.58.3 test/session-manager/migration.test.ts, translated:
``migrate_session_entries`` on v1 and already-migrated records."""

from __future__ import annotations

from typing import Any

from pi_session import CURRENT_SESSION_VERSION, migrate_session_entries


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "test",
        "provider": "test",
        "model": "test",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": "stop",
        "timestamp": 2,
    }


def test_migration_v1_records_get_ids_and_parent_chain():
    records: list[dict[str, Any]] = [
        {"type": "session", "id": "sess-1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/tmp"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "timestamp": "2025-01-01T00:00:02Z", "message": _assistant("hello")},
    ]
    migrate_session_entries(records)
    assert records[0]["version"] == 3 == CURRENT_SESSION_VERSION
    first, second = records[1], records[2]
    assert isinstance(first["id"], str) and len(first["id"]) == 8
    assert first["parentId"] is None
    assert isinstance(second["id"], str) and len(second["id"]) == 8
    assert second["parentId"] == first["id"]


def test_migration_leaves_migrated_ids_alone():
    records: list[dict[str, Any]] = [
        {"type": "session", "id": "sess-1", "version": 2, "timestamp": "2025-01-01T00:00:00Z", "cwd": "/tmp"},
        {
            "type": "message", "id": "abc12345", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message", "id": "def67890", "parentId": "abc12345", "timestamp": "2025-01-01T00:00:02Z",
            "message": _assistant("hello"),
        },
    ]
    migrate_session_entries(records)
    assert records[1]["id"] == "abc12345"
    assert records[2]["id"] == "def67890"
    assert records[2]["parentId"] == "abc12345"
