"""What one session file gives the files' search index
(:mod:`pi_session.search.files`): :func:`read_from` reads its complete
lines from an offset and extracts their documents (:class:`FileRead`);
:func:`open_as_indexed` reopens a file only while it still holds the bytes
it was indexed from (:func:`prefix_hashes`). Pure but for the reads."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..stores.listing import open_regular
from ..storage.versions import v1_entry_ids
from ..entries.records import header_version, is_session_header
from ..storage import NOT_JSON, line_record
from .extract import Doc, record_docs

__all__ = ["FileRead", "V1Ids", "open_as_indexed", "prefix_hashes", "read_from"]

_HEAD = 64 * 1024
_TAIL = 4 * 1024


def open_as_indexed(path: str, indexed_as: tuple[Any, ...]) -> Any:
    """The session file at ``path`` open for reading when it still holds
    the bytes it was indexed from (``indexed_as``: its ``sources`` row's
    size, mtime_ns, ino, indexed, head_hash, tail_hash): unchanged, or
    grown with the indexed prefix intact; else None."""
    size, mtime, ino, indexed, head, tail = indexed_as
    f = open_regular(Path(path))
    if f is None:
        return None
    try:
        st = os.fstat(f.fileno())
        if (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime, ino):
            return f
        if st.st_ino == ino and st.st_size >= indexed and prefix_hashes(f, indexed) == (head, tail):
            return f
    except OSError:
        pass
    f.close()
    return None


def prefix_hashes(f: Any, end: int) -> tuple[bytes, bytes]:
    """SHA-256 of the first 64 KiB of ``[0, end)`` and of its last 4 KiB."""
    f.seek(0)
    head = hashlib.sha256(f.read(min(end, _HEAD))).digest()
    start = max(0, end - _TAIL)
    f.seek(start)
    tail = hashlib.sha256(f.read(end - start)).digest()
    return head, tail


@dataclass
class FileRead:
    """What one file gave (:func:`_read_from`): its ``stat`` (size,
    mtime_ns, ino), the indexed range ``[start, end)`` (complete lines),
    the line count up to ``end``, the prefix hashes, the session id (""
    when the file is no session), the header's cwd (None: no header in the
    range), the documents ``(pos, length, Doc)`` and the numbers of the
    damaged lines in the range (holding no record: not searched)."""

    key: str
    stat: tuple[int, int, int]
    start: int
    end: int
    lines: int
    head: bytes
    tail: bytes
    session_id: str | None
    cwd: str | None
    docs: list[tuple[int, int, Doc]]
    damaged: list[int] = field(default_factory=list)


class V1Ids:
    """The entry ids of a v1 file's documents (v1 entries have none): the
    ones the v1→v2 migration gives them (:func:`pi_session.storage.versions.v1_entry_ids`,
    stable), so that a hit names the entry reading the file shows. Only
    for a file whose every line is one plain JSON record: the ids count
    records, and a damaged line read another way would shift them (its
    documents keep no id then)."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.types: list[Any] = []
        self.docs: list[tuple[Doc, int]] = []
        self.clean = True

    def add(self, raw: bytes, record: Any) -> None:
        self.types.append(record.get("type"))
        if self.clean:
            try:
                self.clean = orjson.loads(raw).__class__ is dict
            except orjson.JSONDecodeError:
                self.clean = False

    def assign(self) -> None:
        if self.clean:
            ids = v1_entry_ids(self.seed, self.types)
            for doc, index in self.docs:
                doc.entry_id = ids[index]


def read_from(f: Any, key: str, st: os.stat_result, start: int, line_no: int, session_id: str | None) -> FileRead:
    """Read the complete lines of an open file from byte ``start`` (line
    ``line_no``) and extract their documents (pure but for the read;
    ``session_id``: None before the header, "" for a file that is no
    session)."""
    f.seek(start)
    data = f.read(st.st_size - start)
    end = data.rfind(b"\n") + 1  # complete lines only; a torn tail waits
    if start == 0:
        head = hashlib.sha256(data[: min(end, _HEAD)]).digest()
        tail = hashlib.sha256(data[max(0, end - _TAIL) : end]).digest()
    else:
        head, tail = prefix_hashes(f, start + end)
    docs: list[tuple[int, int, Doc]] = []
    damaged: list[int] = []
    cwd: str | None = None
    pos = start
    v1: V1Ids | None = None  # a v1 file read from its start: its entries' ids are the migration's
    for raw in data[:end].split(b"\n")[:-1]:
        line_no += 1
        here = pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        record = line_record(raw, line_no)
        if record is NOT_JSON:
            damaged.append(line_no)
            if v1 is not None:
                v1.clean = False
            continue
        if session_id is None:
            if not is_session_header(record):
                session_id = ""  # not a session: nothing indexed
                break
            session_id = str(record["id"])
            header_cwd = record.get("cwd")
            cwd = header_cwd if isinstance(header_cwd, str) else ""
            if start == 0 and header_version(record) < 2:
                v1 = V1Ids(session_id)
        elif session_id == "":
            break
        if v1 is not None:
            v1.add(raw, record)
        doc = record_docs(record)
        if doc is not None:
            if v1 is not None and doc.entry_id is None and not is_session_header(record):
                v1.docs.append((doc, len(v1.types) - 1))
            docs.append((here, len(raw), doc))
    if v1 is not None:
        v1.assign()
    return FileRead(key, (st.st_size, st.st_mtime_ns, st.st_ino), start, start + end, line_no, head, tail, session_id, cwd, docs, damaged if session_id else [])
