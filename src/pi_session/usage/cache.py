"""The persistent usage summary of session files (**beyond pi**): one file
per sessions root, ``<cache dir>/usage/<sha256 of the root, 32 hex>.msgpack``
(:func:`cache_path`; mode 0600 in a 0700 directory), holding for every
session file its usage rows (:class:`pi_session.usage.extract.Scan`) and
what it was read from.

Kept fresh as the search index is: every ``*.jsonl`` regular file of the
root and of its directories is ``stat``-ed; one whose size, mtime and inode
are as recorded is not opened. A file that grew is read from the last
complete line read before (session files are append-only); a file that was
rewritten (another inode, shorter than what was read, or its first 64 KiB
or the 4 KiB before the end of what was read changed: ``repair`` and
``migrate`` rewrite files) is read again whole; a file that is gone is
dropped. The cache is never the truth: a cache that cannot be read (damaged,
another version, not a regular file) is ignored and written again.

The cache file is opened without following symlinks (``O_NOFOLLOW``), only
when it is a regular file, checked against the CRC-32 it was written with,
and written atomically (a new 0600 file renamed over it).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path
from typing import Any

import msgspec

from ..core.paths import open_regular
from .stamps import checked, pricing_stamp, read_checked, session_files, usage_cache_file, write_private
from .extract import Scan, group_rows, scan_lines

__all__ = ["CACHE_VERSION", "ROW_SHARDS", "FileSummary", "UsageCache", "cache_path", "scan_bytes", "session_files", "session_id_of", "shard_of"]

CACHE_VERSION = "5"
"""The cache's format; a cache of another format (or priced with another
version of the price data) is read again from the files."""
HEAD_BYTES = 64 << 10
TAIL_BYTES = 4 << 10
ROW_SHARDS = 64
"""The messages' rows are kept in this many files (by a CRC-32 of the
session file's path), so that a changed session rewrites one of them."""


class FileSummary(msgspec.Struct, array_like=True):
    """The cached usage of one session file: its ``stat`` when read
    (``size``, ``mtime_ns``, ``ino``), the bytes and lines read (complete
    lines only), the hashes of its first 64 KiB and of the 4 KiB before
    ``consumed``, its session id and project, the agent it was imported
    from (None: pi), its header's cwd and ``parentSession``, its usage rows
    summed per 15 minutes
    (:func:`pi_session.usage.extract.group_rows`) and its damaged lines
    ``(line, message)``."""

    size: int
    mtime_ns: int
    ino: int
    consumed: int
    lines: int
    head: bytes
    tail: bytes
    session_id: str
    project: str
    agent: str | None
    cwd: str | None
    parent: str | None
    groups: list[list[Any]]
    problems: list[tuple[int, str]]


class _CacheFile(msgspec.Struct):
    version: str
    root: str
    generations: list[str]
    files: dict[str, FileSummary]


class _RowsFile(msgspec.Struct):
    generation: str
    rows: dict[str, bytes]


def cache_path(root: str | os.PathLike[str]) -> Path:
    """Where the usage summary of a sessions root lives:
    ``<cache dir>/usage/<sha256 of the absolute path, 32 hex>.msgpack``
    (the messages themselves beside it, in :data:`ROW_SHARDS` files
    ``<...>.rows-NN.msgpack``: read only for blocks, forks and files that
    changed)."""
    return Path(usage_cache_file(os.path.abspath(root), "msgpack"))


def shard_of(path: str) -> int:
    """The shard (``0 ..`` :data:`ROW_SHARDS` ``- 1``) keeping the rows of
    the session file ``path``."""
    return zlib.crc32(os.fsencode(path)) % ROW_SHARDS


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[:16]


def session_id_of(path: str) -> str:
    """The session id of a session file as usage reports name it: its file
    name without ``.jsonl`` after the first ``_`` (pi names files
    ``<timestamp>_<id>.jsonl``), else the whole name."""
    stem = os.path.basename(path)[: -len(".jsonl")] if path.endswith(".jsonl") else os.path.basename(path)
    return stem.split("_", 1)[1] if "_" in stem else stem


class UsageCache:
    """The usage summary of the session files under ``root`` (see the
    module docstring).

    Args:
        root: a sessions root (directories of ``*.jsonl``) or one session
            directory.
        path: the cache file (default :func:`cache_path`); None with
            ``persist=False`` keeps nothing on disk.

    Attributes:
        files: ``path -> FileSummary`` after :meth:`update`.
        read_bytes: bytes of session files read by the last update.
        pending: rows of unterminated last lines that parse (counted, not
            cached: the line may still be being written), by path.
        torn: ``(path, line)`` of unterminated last lines that do not parse.
        unreadable: ``(path, reason)`` of session files that could not be
            opened (permissions): not counted, reported as damaged lines are.
    """

    def __init__(self, root: str | os.PathLike[str], *, path: str | os.PathLike[str] | None = None, persist: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.path = Path(path) if path is not None else cache_path(self.root)
        self.persist = persist
        self.files: dict[str, FileSummary] = {}
        self.read_bytes = 0
        self.pending: dict[str, list[list[Any]]] = {}
        self.torn: list[tuple[str, int]] = []
        self.unreadable: list[tuple[str, str]] = []
        self._version = f"{CACHE_VERSION}/{pricing_stamp()}"  # the price data's file, not its metadata: importlib.metadata costs more than a report
        self._generations = [""] * ROW_SHARDS
        self._shards: dict[int, dict[str, bytes]] = {}
        self._unpackable: dict[str, list[list[Any]]] = {}  # rows MessagePack cannot hold (text that is not UTF-8)
        self._dirty: set[int] = set()
        self._stem = self.path.name.replace(".msgpack", "")

    # ------------------------------------------------------------------
    # the cache file

    @staticmethod
    def _write_private(path: Path, data: bytes) -> None:
        """Write a cache file (:func:`.stamps.write_private` of
        :func:`.stamps.checked` data: a new 0600 file, never through a
        symlink, renamed over it) in its directory,
        made first. Failing quietly: a cache that cannot be written only
        makes the next report slower."""
        try:
            missing = not path.parent.is_dir()  # a directory that cannot be searched raises (Python 3.11)
        except OSError:
            return
        if missing:
            from ..storage import ensure_dir  # imported only here: a report brought up to date imports no store

            try:
                ensure_dir(path.parent)
            except OSError:
                return
        write_private(str(path), checked(data))

    def _load(self) -> dict[str, FileSummary]:
        """The cached summaries, or nothing when there is no usable cache."""
        data = read_checked(str(self.path))
        if data is None:
            return {}
        try:
            cached = msgspec.msgpack.decode(data, type=_CacheFile)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return {}
        if cached.version != self._version or cached.root != self.root:
            return {}
        if len(cached.generations) == ROW_SHARDS:
            self._generations = list(cached.generations)
        return cached.files

    def file_problems(self) -> list[str]:
        """What the last :meth:`update` could not count, as damaged lines
        are reported: unterminated last lines that do not parse and files
        that could not be opened (``FILE[:LINE]: message``)."""
        out = [f"{path}:{line}: incomplete last line (skipped)" for path, line in self.torn]
        out.extend(f"{path}: cannot be read ({reason}): not counted" for path, reason in self.unreadable)
        return out

    def rows_path(self, shard: int) -> Path:
        """The file of the rows of shard ``shard`` (:func:`shard_of`)."""
        return self.path.with_name(f"{self._stem}.rows-{shard:02d}.msgpack")

    def _shard(self, shard: int) -> dict[str, bytes]:
        """The packed rows of the cached files of one shard (read on first
        need; empty when they are not of the summary's generation)."""
        rows = self._shards.get(shard)
        if rows is None:
            rows = self._shards[shard] = {}
            generation = self._generations[shard]
            data = read_checked(str(self.rows_path(shard))) if generation else None
            if data is not None:
                try:
                    cached = msgspec.msgpack.decode(data, type=_RowsFile)
                    if cached.generation == generation:
                        rows = self._shards[shard] = cached.rows
                except (msgspec.DecodeError, msgspec.ValidationError):
                    pass
        return rows

    def rows_of(self, path: str) -> list[list[Any]]:
        """The usage rows of a cached file (see
        :class:`pi_session.usage.extract.Scan`); a file whose rows are not
        cached is read whole."""
        if path in self._unpackable:
            return list(self._unpackable[path])
        shard = self._shard(shard_of(path))
        packed = shard.get(path)
        if packed is not None:
            try:
                rows = msgspec.msgpack.decode(packed, type=list[list[Any]])
                if all(len(row) == 10 for row in rows):
                    return rows
            except (msgspec.DecodeError, msgspec.ValidationError):
                pass
            del shard[path]  # damaged: the file is read again, the shard written again
            self._dirty.add(shard_of(path))
        f = open_regular(path)
        if f is None:
            return []
        with f:
            data = f.read()
        return scan_bytes(data[: data.rfind(b"\n") + 1]).rows

    def _save(self, gone: set[str]) -> None:
        """Write the shards of rows that changed (``gone``: the files no
        longer there, their rows dropped), then the summaries naming their
        generations. A root whose path is not UTF-8 keeps nothing
        (MessagePack cannot hold its name): every report reads its files."""
        try:
            self.root.encode()
        except UnicodeEncodeError:
            return
        for path in gone:
            shard = shard_of(path)
            if self._shard(shard).pop(path, None) is not None:
                self._dirty.add(shard)
        for shard in sorted(self._dirty):
            generation = os.urandom(8).hex()
            self._write_private(self.rows_path(shard), msgspec.msgpack.encode(_RowsFile(generation, self._shard(shard))))
            self._generations[shard] = generation
        self._dirty.clear()
        try:
            os.unlink(self.path.with_name(f"{self._stem}.rows.msgpack"))  # the single rows file of format 2
        except OSError:
            pass
        self._write_private(self.path, self._packed_summaries())

    def _packed_summaries(self) -> bytes:
        """The summaries as they are kept, without those MessagePack cannot
        hold (a path that is not UTF-8, a lone surrogate from a ``\\udXXX``
        escape): such a file is read again by every report."""
        try:
            return msgspec.msgpack.encode(_CacheFile(self._version, self.root, self._generations, self.files))
        except UnicodeEncodeError:
            pass
        kept = {}
        for path, entry in self.files.items():
            try:
                msgspec.msgpack.encode((path, entry))
            except UnicodeEncodeError:
                continue
            kept[path] = entry
        return msgspec.msgpack.encode(_CacheFile(self._version, self.root, self._generations, kept))

    # ------------------------------------------------------------------
    # bringing it up to date

    def project_of(self, path: str) -> str:
        """A session file's project as usage reports name it: the directory
        it is in below the root (pi's encoded cwd, ``--home-me-proj--``);
        for a file directly in the root, the root's own name."""
        parent = os.path.dirname(path)
        return os.path.basename(parent if parent != self.root else self.root)

    def update(self, listing: list[tuple[str, os.stat_result]] | None = None) -> dict[str, FileSummary]:
        """Bring the summaries up to date with the files (see the module
        docstring) and save them when anything changed.

        Args:
            listing: :func:`session_files` of the root when already taken.

        Returns:
            ``path -> FileSummary`` of every session file now under the root.
        """
        old = self._load() if self.persist else {}
        files: dict[str, FileSummary] = {}
        changed = False
        for path, st in (session_files(self.root) if listing is None else listing):
            entry = old.get(path)
            if entry is not None and entry.size == st.st_size and entry.mtime_ns == st.st_mtime_ns and entry.ino == st.st_ino:
                if entry.consumed < entry.size:
                    self._read_tail(path, entry)
                files[path] = entry
                continue
            changed = True
            fresh = self._read(path, entry)
            if fresh is not None:
                files[path] = fresh
        if len(files) != len(old):
            changed = True
        self.files = files
        if changed and self.persist:
            self._save(set(old) - set(files))
        return files

    def _read(self, path: str, entry: FileSummary | None) -> FileSummary | None:
        """Read what is new in one file: the appended lines when ``entry``
        still describes its beginning, else all of it."""
        f = open_regular(path)
        if f is None:
            if os.path.isfile(path) and not os.access(path, os.R_OK):
                self.unreadable.append((path, "permission denied"))
            return None
        with f:
            st = os.fstat(f.fileno())
            if entry is not None and not self._same_prefix(f, st, entry):
                entry = None
            start = entry.consumed if entry is not None else 0
            f.seek(start)
            data = f.read()
        self.read_bytes += len(data)
        end = data.rfind(b"\n") + 1
        complete, rest = data[:end], data[end:]
        first_line = (entry.lines if entry is not None else 0) + 1
        scan = scan_lines(complete, first_line)
        if entry is None:
            entry = FileSummary(
                0, 0, 0, 0, 0, b"", b"", session_id_of(path), self.project_of(path), None, None, None, [], [],
            )
            rows: list[list[Any]] = []
        else:
            rows = self.rows_of(path)
        seen = {row[-1] for row in rows}
        for row in scan.rows:
            if row[-1] not in seen:
                seen.add(row[-1])
                rows.append(row)
        shard = shard_of(path)
        try:
            path.encode()
            self._shard(shard)[path] = msgspec.msgpack.encode(rows)
            self._dirty.add(shard)
        except UnicodeEncodeError:  # a path that is not UTF-8, a lone surrogate from a \udXXX escape
            self._unpackable[path] = rows
        entry.groups = group_rows(rows)
        entry.problems.extend(scan.problems)
        entry.agent = entry.agent or scan.agent
        entry.cwd = entry.cwd or scan.cwd
        entry.parent = entry.parent or scan.parent
        entry.consumed = start + len(complete)
        entry.lines += scan.lines
        entry.size, entry.mtime_ns, entry.ino = st.st_size, st.st_mtime_ns, st.st_ino
        entry.head, entry.tail = self._hashes_of(path, entry.consumed, complete if start == 0 else None)
        self._note_rest(path, entry, rest, seen)
        return entry

    def _read_tail(self, path: str, entry: FileSummary) -> None:
        """The unterminated last line of an unchanged file, counted again
        (it is not cached)."""
        f = open_regular(path)
        if f is None:
            return
        with f:
            f.seek(entry.consumed)
            rest = f.read()
        if rest.strip():
            self._note_rest(path, entry, rest, {row[-1] for row in self.rows_of(path)})

    def _note_rest(self, path: str, entry: FileSummary, rest: bytes, seen: set[str]) -> None:
        if not rest.strip():
            return
        scan = scan_lines(rest + b"\n", entry.lines + 1)
        if scan.problems:
            self.torn.append((path, entry.lines + 1))
            return
        rows = [row for row in scan.rows if row[-1] not in seen]
        if rows:
            self.pending[path] = rows

    def _hashes_of(self, path: str, consumed: int, whole: bytes | None) -> tuple[bytes, bytes]:
        """The digests of the first :data:`HEAD_BYTES` of the file and of
        the :data:`TAIL_BYTES` before ``consumed``."""
        if whole is not None and len(whole) >= consumed:
            return _digest(whole[: min(HEAD_BYTES, consumed)]), _digest(whole[max(0, consumed - TAIL_BYTES) : consumed])
        f = open_regular(path)
        if f is None:
            return b"", b""
        with f:
            head = f.read(min(HEAD_BYTES, consumed))
            f.seek(max(0, consumed - TAIL_BYTES))
            tail = f.read(consumed - max(0, consumed - TAIL_BYTES))
        return _digest(head), _digest(tail)

    @staticmethod
    def _same_prefix(f: Any, st: os.stat_result, entry: FileSummary) -> bool:
        """The open file still begins with the bytes ``entry`` was read
        from (same inode, not shorter, same head and tail digests)."""
        if st.st_ino != entry.ino or st.st_size < entry.consumed:
            return False
        f.seek(0)
        head = f.read(min(HEAD_BYTES, entry.consumed))
        start = max(0, entry.consumed - TAIL_BYTES)
        f.seek(start)
        tail = f.read(entry.consumed - start)
        return _digest(head) == entry.head and _digest(tail) == entry.tail


def scan_bytes(data: bytes) -> Scan:
    """:func:`pi_session.usage.extract.scan_lines` of a whole session's
    bytes (a last line without ``\\n`` too), rows deduplicated by key."""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    scan = scan_lines(data)
    seen: set[str] = set()
    rows = []
    for row in scan.rows:
        if row[-1] not in seen:
            seen.add(row[-1])
            rows.append(row)
    scan.rows = rows
    return scan
