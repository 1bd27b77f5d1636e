"""The freshness check of the files' search index (:mod:`pi_session.search.files`):
one stored listing per directory (the ``dirs`` table) tells which files to
``stat`` without listing the directory, and which directories changed.

A directory whose ``stat`` (mtime, ctime, inode) is as when it was listed
holds the same names: creating, deleting or renaming an entry changes its
mtime and ctime. An entry made in the same clock tick as the directory's
last change before the listing leaves them as they were, so a directory
listed within :data:`RACY_NS` of its last change is listed again next time
("racy", as git calls its index entries). An append changes only the
file's own stat, which is why every file is still ``stat``-ed.
"""

from __future__ import annotations

import array
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Check", "DirRow", "DIRS_SCHEMA", "RACY_NS", "changed_files", "check_dirs", "dir_stats", "read_listings", "sig", "write_listings"]

DIRS_SCHEMA = [
    # one row per directory (the root and its directories): its stat when it
    # was listed (sig), its *.jsonl files' names ("\n"-separated) and their
    # sources' (size, mtime_ns, ino) as an array of int64 (native order: a
    # cache of this machine), the root's directories. A writer deletes the
    # rows of the directories whose sources rows it changes, first thing in
    # its transaction (not by a trigger: a trigger's statement savepoint
    # makes FTS5 write its pending data out, a segment per file)
    """CREATE TABLE IF NOT EXISTS dirs (
        dir TEXT PRIMARY KEY, sig TEXT NOT NULL, racy INTEGER NOT NULL, names TEXT NOT NULL, stats BLOB NOT NULL, subdirs TEXT)""",
    "CREATE INDEX IF NOT EXISTS sources_dir ON sources (dir)",
]
RACY_NS = 2_000_000_000
"""A directory modified less than this long (ns) before it was listed is
listed again by the next check: an entry made in the same clock tick as
its last modification leaves its mtime as it was."""


@dataclass
class DirRow:
    """A stored directory listing: its stat signature (:func:`sig`), racy
    (list it again), its files' names and, three numbers per name, their
    size, mtime_ns and ino as indexed (``-1``: not indexed), and for the
    root its directories' names."""

    sig: str
    racy: bool
    names: list[str]
    stats: array.array[int]
    subdirs: list[str] | None


@dataclass
class Check:
    """What :func:`check_dirs` found: ``full`` (no usable listing:
    every file is compared with the index), the current directories, those
    to list again, directories gone, the changed files ``(path, stat)``
    and how many files were unchanged."""

    full: bool = False
    dirs: list[str] = field(default_factory=list)
    rescan: set[str] = field(default_factory=set)
    gone_dirs: list[str] = field(default_factory=list)
    changed: list[tuple[str, os.stat_result]] = field(default_factory=list)
    unchanged: int = 0

    @property
    def fresh(self) -> bool:
        """Nothing changed: the index is current."""
        return not (self.full or self.rescan or self.gone_dirs or self.changed)


def sig(st: os.stat_result) -> str:
    """A directory's stat signature: mtime, ctime and inode."""
    return f"{st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def _is_file(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def _is_dir(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_dir()
    except OSError:
        return False


def changed_files(d: str, fd: int, row: DirRow) -> list[tuple[str, os.stat_result]] | None:
    """The files of a listed directory (open as ``fd``) whose stat differs
    from the listing's, or None when one is gone or no longer a regular
    file (the directory must be listed again)."""
    changed = []
    numbers = iter(row.stats)
    for name, size, mtime, ino in zip(row.names, numbers, numbers, numbers):
        try:
            st = os.stat(name, dir_fd=fd)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size != size or st.st_mtime_ns != mtime or st.st_ino != ino:
            changed.append((os.path.join(d, name), st))
    return changed


def dir_stats(d: str) -> Iterator[tuple[str, os.stat_result]]:
    """``(path, stat)`` of the regular ``*.jsonl`` files of one directory
    (symlinks followed)."""
    try:
        with os.scandir(d) as it:
            entries = [e for e in it if e.name.endswith(".jsonl")]
    except OSError:
        return
    for e in entries:
        try:
            st = e.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield e.path, st


def read_listings(conn: sqlite3.Connection) -> dict[str, DirRow]:
    """The stored directory listings (the ``dirs`` table of the index
    open as ``conn``), read once per check: all the check needs from the
    index."""
    rows: dict[str, DirRow] = {}
    query = "SELECT dir, sig, racy, names, stats, subdirs FROM dirs"
    for d, signature, racy, names, packed, subdirs in conn.execute(query):
        numbers = array.array("q")
        numbers.frombytes(packed)
        below = None if subdirs is None else (subdirs.split("\n") if subdirs else [])
        rows[d] = DirRow(signature, bool(racy), names.split("\n") if names else [], numbers, below)
    return rows


def check_dirs(root: str, rows: dict[str, DirRow]) -> Check:
    """What changed on disk since the index's directory listings
    ``rows`` (:func:`read_listings`) were recorded, under the index's
    ``root`` and its directories: files only, no database.

    A directory whose ``stat`` (mtime, ctime, inode) is as recorded
    holds the same names (creating, deleting or renaming an entry
    changes it; a directory listed within :data:`RACY_NS` of its last
    change is listed again), so only its files are ``stat``-ed; any
    other directory is listed again (``Check.rescan``). Without a
    listing of the root everything is (``Check.full``)."""
    out = Check()
    top = rows.get(root)
    try:
        st = os.stat(root)
    except OSError:
        top = None
    if top is None or top.subdirs is None:
        out.full = True
        return out
    subdirs = top.subdirs
    if top.racy or sig(st) != top.sig:
        out.rescan.add(root)
        try:
            with os.scandir(root) as it:
                subdirs = sorted(e.name for e in it if not e.name.endswith(".jsonl") and e.is_dir())
        except OSError:
            out.full = True
            return out
        out.gone_dirs = [os.path.join(root, n) for n in set(top.subdirs) - set(subdirs)]
    out.dirs = [root, *(os.path.join(root, n) for n in subdirs)]
    for d in out.dirs:
        row = rows.get(d)
        if d in out.rescan or row is None:
            out.rescan.add(d)
            continue
        try:
            if d != root:
                st = os.stat(d)
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            out.rescan.add(d)
            continue
        try:
            if row.racy or sig(st) != row.sig:
                out.rescan.add(d)
                continue
            changed = changed_files(d, fd, row)
            if changed is None:
                out.rescan.add(d)
            else:
                out.changed += changed
                out.unchanged += len(row.names) - len(changed)
        finally:
            os.close(fd)
    return out


def write_listings(
    conn: sqlite3.Connection, root: str, check: Check, sources: Callable[[str], Iterable[Any]] | None = None
) -> None:
    """Write the listing of every current directory (``check.dirs``)
    that has none (a writer deleted it when it changed the directory's
    ``sources`` rows, or the directory is new), that was listed again or
    whose listing was racy, in one write transaction. ``sources(dir)``:
    the directory's ``(path, size, mtime_ns, ino)`` rows as indexed
    (default: ``conn``'s ``sources`` table; a sharded index reads every
    shard's). A listing copies only committed rows, so at worst it is
    older than the index, which makes the next check ``stat`` and compare
    the file again."""
    if sources is None:
        sources = lambda d: conn.execute("SELECT path, size, mtime_ns, ino FROM sources WHERE dir = ?", (d,))  # noqa: E731
    have = {d: bool(racy) for d, racy in conn.execute("SELECT dir, racy FROM dirs")}
    need = [d for d in check.dirs if d not in have or have[d] or d in check.rescan]
    stale = [d for d in have if d not in set(check.dirs)] if (check.full or root in check.rescan) else []
    if not need and not stale:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for d in stale:
            conn.execute("DELETE FROM dirs WHERE dir = ?", (d,))
        for d in need:
            try:
                st = os.stat(d)  # before listing: a later change changes it
                with os.scandir(d) as it:
                    entries = list(it)
            except OSError:
                continue
            now = time.time_ns()
            names = sorted(e.name for e in entries if e.name.endswith(".jsonl") and _is_file(e))
            known = {os.path.basename(r[0]): tuple(r[1:]) for r in sources(d)}
            numbers = array.array("q", [x for n in names for x in known.get(n, (-1, -1, -1))])
            subdirs = None
            if d == root:
                subdirs = "\n".join(sorted(e.name for e in entries if not e.name.endswith(".jsonl") and _is_dir(e)))
            racy = now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS or bool(set(known) - set(names))
            conn.execute(
                "INSERT OR REPLACE INTO dirs (dir, sig, racy, names, stats, subdirs) VALUES (?, ?, ?, ?, ?, ?)",
                (d, sig(st), int(racy), "\n".join(names), numbers.tobytes(), subdirs),
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
