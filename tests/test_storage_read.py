"""The reader's memory savings keep values intact, and importing the package
stays light (both feed the benchmarks of issue 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from pi_session.storage import read_session_file

CALL_ID = "toolu_01ABCDEFGHIJKLMNOPQRSTUV"


def _lines(tmp_path: Path) -> Path:
    records = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "a0000001",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": CALL_ID, "name": "bash", "arguments": {"command": "ls"}},
                    {"type": "toolCall", "id": CALL_ID + "2", "name": "read", "arguments": {"path": "a"}},
                ],
                "model": "m",
                "stopReason": "toolUse",
                "timestamp": 1,
            },
        },
        {
            "type": "message",
            "id": "a0000002",
            "parentId": "a0000001",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {"role": "toolResult", "toolCallId": CALL_ID, "toolName": "bash", "content": [], "isError": False, "timestamp": 2},
        },
        {
            "type": "message",
            "id": "a0000003",
            "parentId": "a0000002",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "message": {"role": "toolResult", "toolCallId": CALL_ID + "2", "toolName": "read", "content": [], "isError": False, "timestamp": 3},
        },
        {
            "type": "message",
            "id": "a0000004",
            "parentId": "a0000003",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "message": {"role": "toolResult", "toolCallId": "toolu_unknown", "toolName": "read", "content": [], "isError": True, "timestamp": 4},
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_repeated_strings_are_shared_and_values_unchanged(tmp_path: Path) -> None:
    path = _lines(tmp_path)
    sf = read_session_file(path)
    expected = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert sf.records == expected  # nothing but object identity changes
    call, second_call = sf.entries[0]["message"]["content"]
    first_result, second_result, unknown = (e["message"] for e in sf.entries[1:])
    assert first_result["toolCallId"] is call["id"]
    assert second_result["toolCallId"] is second_call["id"]
    assert unknown["toolCallId"] == "toolu_unknown"
    assert sf.entries[1]["parentId"] is sf.entries[0]["id"]
    assert first_result["role"] is second_result["role"]


def test_import_does_not_load_network_or_yaml_modules() -> None:
    """asyncio, PyYAML and uuid6 (with importlib.metadata) cost ~30 ms and
    ~6 MB at import; they load when first needed."""
    code = (
        "import sys, pi_session, pi_session.cli.app\n"
        "heavy = [m for m in ('asyncio', 'yaml', 'uuid6', 'importlib.metadata', 'ssl') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
