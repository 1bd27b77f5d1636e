"""Session format migration v1 → v2 → v3 (pi's ``migrateSessionEntries``).

v1 files have no ids (a linear list; compactions point at the first kept
entry by index); v2 adds ``id``/``parentId``; v3 renames the message role
``hookMessage`` to ``custom``. :func:`migrate_session_entries` works on
records in memory (pure: the storage reader applies it);
:func:`pi_session.storage.migrate_file` rewrites a file.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import new_entry_id
from ..entries.records import CURRENT_SESSION_VERSION, HEADER_TYPE, header_version
from ..entries.questions import COMPACTION, HOOK_MESSAGE, MESSAGE

__all__ = ["migrate_session_entries", "v1_entry_ids"]


def _header_version(records: list[dict[str, Any]]) -> int:
    """The version of the first session header among ``records`` (1 if none)."""
    header = next((r for r in records if r.get("type") == HEADER_TYPE), None)
    return header_version(header) if header is not None else 1


def _stable_id(seed: str, index: int, taken: set[str]) -> str:
    """An 8-hex-char id derived from the session id and the record's
    position, so that every reading of the same v1 file gives the same ids
    (pi draws random ones: ids shown by a read-only command would then be
    useless for the next command)."""
    import hashlib  # here: only v1 files need it

    for salt in range(100):
        candidate = hashlib.sha1(f"{seed}\0{index}\0{salt}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if candidate not in taken:
            return candidate
    return new_entry_id(taken)


def v1_entry_ids(seed: str, types: list[Any]) -> list[str | None]:
    """The ids the v1→v2 migration gives the records of a v1 file
    (:func:`migrate_session_entries`; stable, see there), without
    migrating them: ``seed`` is the header's id, ``types`` the records'
    ``type`` values in file order (the header's included); None for a
    header record. Pure. Used by the search index, so that a hit in a v1
    file names the entry that reading the file shows."""
    taken: set[str] = set()
    out: list[str | None] = []
    for index, rtype in enumerate(types):
        if rtype == HEADER_TYPE:
            out.append(None)
            continue
        entry_id = _stable_id(seed, index, taken)
        taken.add(entry_id)
        out.append(entry_id)
    return out


def _v1_to_v2(records: list[dict[str, Any]]) -> None:
    prev_id: str | None = None
    header = next((r for r in records if r.get("type") == HEADER_TYPE), {})
    ids = v1_entry_ids(str(header.get("id", "")), [r.get("type") for r in records])
    for index, record in enumerate(records):
        if record.get("type") == HEADER_TYPE:
            record["version"] = 2
            continue
        record["id"] = ids[index]
        record["parentId"] = prev_id
        prev_id = record["id"]
        if record.get("type") == COMPACTION and "firstKeptEntryIndex" in record:
            index = record["firstKeptEntryIndex"]
            if isinstance(index, int) and not isinstance(index, bool):
                target = records[index] if 0 <= index < len(records) else None
                if target is not None and target.get("type") != HEADER_TYPE:
                    # the target precedes the compaction, so it has its id already
                    record["firstKeptEntryId"] = target.get("id")
                del record["firstKeptEntryIndex"]


def _v2_to_v3(records: list[dict[str, Any]]) -> None:
    for record in records:
        if record.get("type") == HEADER_TYPE:
            record["version"] = 3
        elif record.get("type") == MESSAGE:
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == HOOK_MESSAGE:
                message["role"] = "custom"


def migrate_session_entries(records: list[dict[str, Any]]) -> bool:
    """Bring parsed records (header included, file order) to the current
    version, in place (pi's ``migrateSessionEntries``).

    v1→v2: every non-header record gets an 8-hex-char id (unique in the
    file; derived from the session id and the record's position, so the
    same file always gets the same ids, where pi draws random ones) and the
    previous record as parent; a compaction's
    ``firstKeptEntryIndex`` (an index into ``records``) becomes
    ``firstKeptEntryId``. v2→v3: role ``hookMessage`` becomes ``custom``; the
    header's ``version`` is updated at each step.

    Returns:
        True if anything was migrated.
    """
    version = _header_version(records)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(records)
    if version < 3:
        _v2_to_v3(records)
    return True
