"""The reader's memory savings keep values intact, and importing the package
stays light (both feed the benchmarks)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

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


def test_repeated_strings_are_shared_and_values_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory-saving form of a long file's records (after the first
    ``PLAIN_RECORDS``, set to 0 here): shared strings, the same values."""
    from pi_session.storage import read_loop

    monkeypatch.setattr(read_loop, "PLAIN_RECORDS", 0)
    path = _lines(tmp_path)
    sf = read_session_file(path)
    expected = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert sf.records == expected  # nothing but object identity changes
    call, second_call = sf.entries[0]["message"]["content"]
    first_result, second_result, unknown = (e["message"] for e in sf.entries[1:])
    assert first_result["toolCallId"] is call["id"]
    assert second_result["toolCallId"] is second_call["id"]
    assert unknown["toolCallId"] == "toolu_unknown"
    assert sf.entries[0]["message"]["content"][0]["type"] is sf.entries[0]["message"]["content"][1]["type"]
    assert sf.entries[1]["parentId"] is sf.entries[0]["id"]
    assert first_result["role"] is second_result["role"]


def test_import_does_not_load_network_or_yaml_modules() -> None:
    """Asyncio, PyYAML and uuid6 (with importlib.metadata) cost ~30 ms and
    ~6 MB at import; they load when first needed."""
    code = (
        "import sys, pi_session, pi_session.cli.app\n"
        "heavy = [m for m in ('asyncio', 'yaml', 'uuid6', 'importlib.metadata', 'ssl') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_entries_are_plain_dicts_with_the_files_key_order(tmp_path: Path) -> None:
    """Decoded entries, messages, blocks, usage and arguments are ordinary
    dicts, equal to what orjson decodes, keys in the file's order, and
    they behave as any dict when changed."""
    from pi_session.core import jsonio

    path = _lines(tmp_path)
    raw_lines = path.read_bytes().splitlines()
    sf = read_session_file(path)
    for entry, raw in zip(sf.entries, raw_lines[1:]):
        fresh = orjson.loads(raw)
        assert type(entry) is dict and type(entry["message"]) is dict
        assert entry == fresh and list(entry) == list(fresh)
        assert list(entry["message"]) == list(fresh["message"])
        assert jsonio.dumps_line(entry) == raw + b"\n"  # rewrites stay byte-identical
    call = sf.entries[0]["message"]["content"][0]
    assert type(call) is dict and type(call["arguments"]) is dict
    entry = sf.entries[1]
    entry["extra"] = [1]
    del entry["parentId"]
    assert list(entry) == ["type", "id", "timestamp", "message", "extra"]
    assert orjson.loads(orjson.dumps(entry))["extra"] == [1]


@pytest.mark.skipif(platform.python_implementation() != "CPython", reason="key-sharing dicts are CPython's")
def test_decoded_session_takes_less_memory_than_plain_decoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared strings and key-sharing entries and messages: the reader's
    objects for a 2,000-entry benchmark session take at most 85% of what
    decoding each line with orjson allocates (measured: about 80%; the
    deeper form, for bulk decodes of a lazily read file, about 70%). The
    reader keeps the first ``PLAIN_RECORDS`` (16,384) records of a file as
    orjson gives them (faster; a small file's memory is small anyway): set
    to 0 here, so that this small file shows the form of a long one's
    later records."""
    import tracemalloc

    from pi_session.storage import read_loop

    monkeypatch.setattr(read_loop, "PLAIN_RECORDS", 0)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        import gen  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    demo = tmp_path / "s.jsonl"
    gen.generate_session_file(demo, 2000, mb=2)
    lines = demo.read_bytes().splitlines()
    tracemalloc.start()
    try:
        plain = [orjson.loads(line) for line in lines]
        plain_bytes, _ = tracemalloc.get_traced_memory()
        del plain
        tracemalloc.stop()
        tracemalloc.start()
        sf = read_session_file(demo)
        ours, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(sf.entries) == len(lines) - 1
    assert ours < 0.85 * plain_bytes, (ours, plain_bytes)


def test_entry_columns_gathered_while_reading(tmp_path: Path) -> None:
    """The reader's ``entry_columns`` (ids, parentIds, label entries) are
    exactly what the entries hold, a damaged line and a label included, and
    the tree built from them is the tree built from the entries alone; a
    file that is migrated after reading gathers none."""
    from pi_session.session.tree import SessionTree

    path = _lines(tmp_path)
    label = {"type": "label", "id": "l1", "parentId": "a0000004", "timestamp": "2025-01-01T00:00:05.000Z", "targetId": "a0000001", "label": "x"}
    with open(path, "ab") as f:
        f.write(b"{not json\n" + orjson.dumps(label) + b"\n" + b'{"type":"custom","id":"c1"}\n')
    sf = read_session_file(path)
    assert sf.entry_columns is not None
    ids, parents, labels = sf.entry_columns
    assert ids == [e["id"] for e in sf.entries] and len(ids) == 6
    assert parents == [e.get("parentId") for e in sf.entries]
    assert labels == [label] and labels[0] is sf.entries[4]
    plain, fed = SessionTree(sf.entries), SessionTree(sf.entries, sf.entry_columns)
    for attr in ("by_id", "_position", "_parent_index", "_run_start", "_unresolved", "labels", "label_timestamps"):
        assert getattr(plain, attr) == getattr(fed, attr), attr
    assert fed.branch("l1") == plain.branch("l1")

    v2 = tmp_path / "v2.jsonl"
    v2.write_bytes(path.read_bytes().replace(b'"version":3', b'"version":2', 1))
    assert read_session_file(v2).entry_columns is None
    assert [e["id"] for e in read_session_file(v2).entries] == ids
