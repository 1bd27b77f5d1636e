"""Entries a store's session gained after an import wrote it (**beyond
pi**): labels, session names (``session_info``), context edits (``edit``,
masking, ``scrub --mode edit``), compactions, branch summaries, model and
thinking-level changes, custom entries, anything pi or pi-session appends
that is not a conversation message. Importing the source again
(:func:`pi_session.stores.transfer.store_lines`) must pass over them as
expected additions, never call them a conflict, and go on appending what
the source gained.

What is an addition, exactly: a stored record line whose entry id is none
of the ids of the source's lines, whose ``type`` is not ``message`` (a
message the source does not hold is a rewrite of the source, or a
conversation continued in the store: a conflict, as before) and which keeps
no source record (no ``imported`` key: the importers of other agents'
sessions put it on entries made from source records).

Where the source's next lines go: pi appends every entry at the leaf,
labels and names included, and continues the conversation from it. So a
source line whose parent is an entry the store's additions were appended
after (directly, or after other additions chained on it) is re-parented
onto the last of those additions (:func:`continue_after_additions`): a
compaction, a context edit, a label or a name stays on the path to the new
leaf, and pi builds the context at that leaf from the compaction's summary
and the edits, then the new messages. Additions made on another branch
(after the leaf was moved back) are not on the source's path and change
nothing. A re-parented line is recognised as the source line the next time
(:func:`pi_session.stores.scrubbed.same_entry`, given the additions passed
over).

Pure functions of lines (bytes with their newline).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ..core.jsonio import dumps_line, loads
from ..entries.questions import MESSAGE
from ..entries.records import HEADER_TYPE

__all__ = ["IMPORTED_KEY", "entry_ids", "store_addition", "continue_after_additions"]

IMPORTED_KEY = "imported"
"""The entry key (layout 2) holding what the entry's source records hold
beyond the entry: ``{"agent": "claude-code"|"codex", "records": [whole
source records], "fields": [the other fields of the records the entry was
made from]}`` (each list present when not empty; ``agent`` names the
source, so usage reports and listings tell an imported session from pi's
own). pi keeps keys it does not know and ignores them."""


_MESSAGE_START = b'{"type":"message",'
"""How every line pi and pi-session write for a message entry starts."""


def _parse(line: bytes) -> Any:
    try:
        return loads(line)
    except (ValueError, RecursionError):
        return None


def entry_ids(lines: Sequence[bytes]) -> set[str]:
    """The entry ids of ``lines`` (record lines with a string ``id``; the
    header's id too, harmlessly)."""
    ids: set[str] = set()
    for line in lines:
        if b'"id"' not in line:
            continue
        rec = _parse(line)
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            ids.add(rec["id"])
    return ids


def store_addition(line: bytes, source_ids: Collection[str]) -> tuple[str, str | None] | None:
    """``(id, parentId)`` when the stored ``line`` is an entry added in the
    store after an import (see the module docstring) given the ids of the
    source's lines ``source_ids``; else None. A line that starts as pi
    writes a message entry is not parsed."""
    if line.startswith(_MESSAGE_START):
        return None
    rec = _parse(line)
    if not isinstance(rec, dict):
        return None
    entry_id, entry_type = rec.get("id"), rec.get("type")
    if not isinstance(entry_id, str) or not isinstance(entry_type, str) or entry_type in (MESSAGE, HEADER_TYPE):
        return None
    if entry_id in source_ids or IMPORTED_KEY in rec:
        return None
    parent = rec.get("parentId")
    return entry_id, parent if isinstance(parent, str) else None


def continue_after_additions(stored: Sequence[bytes], new_lines: Sequence[bytes], source_ids: Callable[[], Collection[str]]) -> list[bytes]:
    """``new_lines`` (source lines to append to ``stored``), each line whose
    ``parentId`` is an entry that additions were appended after
    re-parented onto the last of those additions in file order (see the
    module docstring); the others as they are.

    Args:
        stored: the stored session's lines.
        new_lines: the source lines the store lacks.
        source_ids: gives the ids of all the source's lines
            (:func:`entry_ids`); called only when a stored line may be an
            addition (none of pi's message lines).
    """
    parents: dict[str, str | None] = {}
    tip: dict[str, str] = {}
    ids: Collection[str] | None = None
    for line in stored:
        if line.startswith(_MESSAGE_START) or not line.strip():
            continue
        if ids is None:
            ids = source_ids()
        added = store_addition(line, ids)
        if added is None:
            continue
        added_id, parent = added
        parents[added_id] = parent
        base = parent
        seen: set[str] = set()
        while isinstance(base, str) and base in parents and base not in seen:
            seen.add(base)
            base = parents[base]
        if isinstance(base, str):
            tip[base] = added_id
    if not tip:
        return list(new_lines)
    out: list[bytes] = []
    for line in new_lines:
        rec = _parse(line) if line.endswith(b"\n") else None
        if isinstance(rec, dict) and isinstance(rec.get("parentId"), str) and rec["parentId"] in tip:
            rec["parentId"] = tip[rec["parentId"]]
            line = dumps_line(rec)
        out.append(line)
    return out
