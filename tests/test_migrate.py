"""Migration v1 → v2 → v3 (SPEC 3) in memory and on disk."""

from __future__ import annotations

import json
import os
import stat


from conftest import GOLDENS
from pi_session import SessionManager, migrate_file, migrate_session_entries, read_session_file
from pi_session.core.jsonio import dumps_line

V1 = [
    {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "user", "content": "a", "timestamp": 1}},
    {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": {"role": "hookMessage", "customType": "x", "content": "h", "display": True, "timestamp": 2}},
    {"type": "compaction", "timestamp": "2025-01-01T00:00:03.000Z", "summary": "s", "firstKeptEntryIndex": 2, "tokensBefore": 5},
    {"type": "message", "timestamp": "2025-01-01T00:00:04.000Z", "message": {"role": "user", "content": "b", "timestamp": 4}},
]


def test_v1_gets_ids_parents_and_first_kept_id():
    records = json.loads(json.dumps(V1))
    assert migrate_session_entries(records) is True
    header, *entries = records
    assert header["version"] == 3
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == 4 and all(len(i) == 8 for i in ids)
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    assert entries[1]["message"]["role"] == "custom"
    assert entries[2]["firstKeptEntryId"] == ids[1]
    assert "firstKeptEntryIndex" not in entries[2]


def test_v2_only_renames_roles():
    records = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "t", "message": {"role": "hookMessage"}},
    ]
    assert migrate_session_entries(records)
    assert records[1]["id"] == "aaaaaaaa" and records[1]["message"]["role"] == "custom" and records[0]["version"] == 3


def test_v3_is_untouched():
    records = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}]
    assert migrate_session_entries(records) is False


def test_same_structure_as_pi_migration_of_fixtures(oracle, fixture_copy):
    """Compared with pi's migrate-text: same records, ids aside."""
    path = fixture_copy("before-compaction.jsonl")
    theirs = json.loads(oracle("migrate-text", str(path)))
    ours = read_session_file(path).records

    def strip(records):
        index = {r.get("id"): i for i, r in enumerate(records)}
        out = []
        for r in records:
            r = dict(r)
            r["id"] = index.get(r.get("id"))
            r["parentId"] = index.get(r.get("parentId"))
            if "firstKeptEntryId" in r:
                r["firstKeptEntryId"] = index.get(r["firstKeptEntryId"])
            out.append(r)
        return out

    assert strip(ours) == strip(theirs)


def test_migrate_file_is_atomic_keeps_backup_and_damaged_lines(tmp_path):
    path = tmp_path / "old.jsonl"
    lines = [dumps_line(r) for r in V1]
    lines.insert(2, b"{this is not json\n")
    lines.insert(4, b"\n")
    original = b"".join(lines)
    path.write_bytes(original)
    os.chmod(path, 0o640)
    result = migrate_file(path)
    assert result["from_version"] == 1 and result["to_version"] == 3
    backup = tmp_path / "old.jsonl.v1.bak"
    assert result["backup"] == str(backup)
    assert backup.read_bytes() == original
    new_lines = path.read_bytes().split(b"\n")
    assert new_lines[2] == b"{this is not json"  # kept at its place
    assert new_lines[4] == b""
    sf = read_session_file(path)
    assert sf.version == 3 and sf.migrated_from is None and len(sf.entries) == 4
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    # a second run has nothing to do
    again = migrate_file(path)
    assert again["backup"] is None
    assert not list(tmp_path.glob("*.tmp"))


def test_open_migrates_on_disk_unless_read_only(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(dumps_line(r) for r in V1))
    before = path.read_bytes()
    sm = SessionManager.open(path, read_only=True)
    assert path.read_bytes() == before and sm.get_header()["version"] == 3
    sm = SessionManager.open(path)
    assert read_session_file(path).version == 3
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == before
    ids = [e["id"] for e in sm.get_entries()]
    assert ids == [e["id"] for e in SessionManager.open(path).get_entries()]


def test_migrated_fixture_context_equals_pi_golden(fixture_copy):
    path = fixture_copy("large-session.jsonl")
    SessionManager.open(path)  # migrates on disk
    sm = SessionManager.open(path, read_only=True)
    assert sm.notes == []
    expected = json.loads((GOLDENS / "sessions" / "fixture-large-session.context.json").read_text())["<leaf>"]
    assert sm.build_session_context()["messages"] == expected["messages"]
