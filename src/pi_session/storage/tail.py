"""The eager tail of a lazy read: where the last compaction of
a session file lies (:func:`last_compaction_at`), and the lines after it,
which a linear session's context holds, decoded in full while indexing
(:func:`tail_record`, up to :data:`EAGER_TAIL_RECORDS` of them) instead of
indexed and decoded again afterwards. :mod:`.reader` uses both; every way
of reading gives the same values."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import orjson

from .blocks import BLOCK_SIZE
from .lazy import EAGER_TYPES, PLAIN_RECORDS

__all__ = ["LAZY_MIN_START", "EAGER_TAIL_RECORDS", "TAIL_BRANCH_POINTS", "last_compaction_at", "tail_record"]

LAZY_MIN_START = 0.4
""":func:`last_compaction_at`: the lazy index pays off when the file's last
compaction starts at or after this share of its bytes (the index pass
costs about a third of a full read, so it pays off only when the context
decodes far less than the whole file; a never-compacted session has
every entry of its leaf path in the context, the worst case of a lazy read)."""

EAGER_TAIL_RECORDS = PLAIN_RECORDS
"""A lazy read from :func:`last_compaction_at`: up to this many entry lines
after the last compaction's mark are decoded in full while indexing (as
:meth:`~.lazy.EntryStore.load` would decode them for the context, in one pass
instead of two); the rest are indexed."""

TAIL_BRANCH_POINTS = 4
"""A lazy read from :func:`last_compaction_at` stops decoding the lines
after the last compaction in full (:data:`EAGER_TAIL_RECORDS`) at the
this-many-th entry there whose parent is not the entry before it: a tail
that branches that often holds many entries off the leaf's path, which
the context never reads (they are indexed instead, and the context's
entries decoded on demand)."""

_COMPACTION_MARK = b'"compaction"'
_TYPE_KEY = re.compile(rb'"type"[ \t\r\n]{0,16}:[ \t\r\n]{0,16}\Z')
"""What must stand right before :data:`_COMPACTION_MARK` for it to be an
entry's type: the key ``"type"``, a colon, and the whitespace JSON allows
(at most 16 characters each side, as any JSON writer spaces it)."""
_TYPE_KEY_SPAN = 6 + 16 + 1 + 16


def last_compaction_at(path: Path, size: int, *, min_start: float = LAZY_MIN_START) -> int | None:
    """The byte offset of the last compaction entry's type in ``path``, if
    it lies at or after ``min_start * size``: where a lazy read starts
    decoding lines in full (:data:`EAGER_TAIL_RECORDS`), since in a linear
    session everything after the last compaction is in the context.

    The guess looks for the JSON member ``"type": "compaction"``, however
    it is spaced (pi and pi-session write ``"type":"compaction"``,
    Python's ``json.dumps`` a space after the colon; inside a JSON string
    the quotes would be escaped), from the end of the file back to
    ``min_start`` of its size, in :data:`~.blocks.BLOCK_SIZE` ``pread`` chunks (about 40 ms per 100 MB when
    there is none, nearly nothing otherwise). It decides only the way of
    reading: every way gives the same values.

    Args:
        path: the session file.
        size: its size in bytes (from ``stat``).
        min_start: the share of the file (0..1) before which a last
            compaction is not looked for.

    Returns:
        The offset (bytes) of the mark; None when there is none after
        ``min_start * size`` or the file cannot be opened (the reader then
        reports it).
    """
    mark = _COMPACTION_MARK
    stop = int(size * min_start)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        end = size
        chunk = BLOCK_SIZE
        while end > stop:
            start = max(stop, end - chunk)
            # overlap the next chunk by the mark's length, so that a mark
            # across a chunk boundary is found; read the key before it too
            lead = min(start, _TYPE_KEY_SPAN)
            data = os.pread(fd, min(size, end + len(mark) - 1) - start + lead, start - lead)
            if not data:
                return None
            at = len(data)
            while (at := data.rfind(mark, lead, at + len(mark) - 1)) >= 0:
                if _TYPE_KEY.search(data, max(0, at - _TYPE_KEY_SPAN), at):
                    key = data.rfind(b'"type"', 0, at)
                    return start - lead + key
                if at == lead:
                    break
            end = start
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def tail_record(raw: bytes) -> tuple[dict[str, Any], str, str, str | None] | None:
    """A line after the last compaction decoded in full while indexing
    (:data:`EAGER_TAIL_RECORDS`): ``(record, type, id, parentId)`` for a
    line the head decoder would index (its type interned, as the head
    decoder's are), None for any other line (it is then
    read as without this shortcut: by the head decoder, else in full).
    The record is what :meth:`~.lazy.EntryStore.load` would cache."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if record.__class__ is not dict:
        return None
    etype = record.get("type")
    hid = record.get("id")
    parent = record.get("parentId")
    if etype.__class__ is str and hid.__class__ is str and (parent is None or parent.__class__ is str) and etype not in EAGER_TYPES:
        return record, sys.intern(etype), hid, parent
    return None
