"""The search index of session files (a sessions root such as
``~/.pi/agent/sessions``, or one session directory): SQLite FTS5 in
pi-session's cache directory, ``<cache dir>/search/<hash of the
root>.v<format version>.sqlite3`` (:func:`index_path`; mode 0600 in a 0700
directory), never inside pi's directories. The files are the truth; the
index is a cache, as :mod:`pi_session.storage.cache` rules them: a cache directory
another user could change is not used (the search runs on a temporary
index, with one warning), and an index file (or shard, or SQLite's
``-wal``/``-shm``/``-journal`` beside it) that is a symbolic link, not a
regular file or another user's is never opened: it is removed and the
index rebuilt, with one warning. Two installed versions keep their own
index files (the version is in the name).

Updating (:meth:`FileIndex.update`): every ``*.jsonl`` regular file of the
root and of its directories is ``stat``-ed; an unchanged one (size, mtime,
inode) costs nothing. The check reads one listing per directory from the
index (the ``dirs`` table: the directory's own mtime, ctime and inode when
it was listed, its files' names and their indexed size, mtime and inode)
and lists a directory again only when its stat differs (an entry was made,
deleted or renamed) or it was listed within 2 s of its last change (an
entry made in the same clock tick leaves the mtime unchanged); the files of
the other directories are only ``stat``-ed by name, so a search reads
neither every ``sources`` row nor every directory. Session files are append-only, so a grown file is
indexed from the last indexed byte to its last complete line. A file that
was rewritten (a new inode, shorter than what was indexed, or its indexed
prefix changed: SHA-256 of its first 64 KiB and of the 4 KiB before the
indexed end, so ``repair``'s and ``migrate``'s rewrites are seen) is
reindexed whole; a file that is gone is dropped.

The index keeps no text (the FTS5 table is contentless; ``docs`` holds
each document's byte offset and line length): a hit's text is the line
read back from its file and extracted again (:meth:`FileIndex.with_texts`),
used only while the file still holds the bytes it was indexed from.

Shards: a build from nothing of at least :data:`SHARD_BYTES` splits the
index into one database per CPU (at most :data:`MAX_SHARDS`): the main
file is shard 0 and holds the directory listings too, shard ``k`` is
``<hash>.v<version>.shard<k>.db`` next to it, and a file belongs to shard
``key_shard(file_key(path), shards)`` (its ``sources`` row, its documents).
The shards are written by worker processes in parallel (one FTS5 writer
per core: a single writer is the ceiling of a build) and queried in
parallel threads, their candidates merged in rank order
(:mod:`.shards`). Each shard's bm25 weights its own documents; over
thousands of sessions spread by a hash, their weights differ little. The
number of shards is fixed until the index is rebuilt.

Writers take SQLite's write lock per batch of files (``BEGIN IMMEDIATE``);
the journal is WAL, so a search reads a consistent snapshot while another
process indexes or appends. A damaged index (not a database, malformed, an
unknown version) is deleted and rebuilt, with one warning
(:attr:`FileIndex.warnings`).
"""

from __future__ import annotations

import base64
import contextlib
import glob
import hashlib
import os
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..storage.cache import create_cache_file, file_problem, prepare_cache_dir, versioned_name
from ..stores.listing import jsonl_names, open_regular
from ..core.paths import cache_dir
from ..storage import ensure_dir
from .damage import IndexDamaged, is_damage
from .freshness import DIRS_SCHEMA, Check, DirRow, check_dirs, dir_stats, read_listings, write_listings
from .fts import Candidate, FtsWriter, fts_schema, line_texts
from .query import Query
from .reading import FileRead, open_as_indexed, prefix_hashes, read_from

__all__ = ["FileIndex", "IndexStats", "file_key", "index_path", "key_shard", "INDEX_VERSION", "MAX_SHARDS", "SHARD_BYTES"]

INDEX_VERSION = "9"
"""The cache's format, part of its file's name (:func:`index_path`); a
file of the current name holding another version (damage) is rebuilt
once, with a warning (7: tool-call arguments as text, terminal escape
sequences left out, see :mod:`.extract`; 8: shorter index keys,
:func:`file_key`, and shards; 9: case-folded cwd and model ids, see
:mod:`.fts`)."""
_SQLITE_SIDES = ("-wal", "-shm", "-journal")
_BATCH_BYTES = 32 << 20
_AUTOMERGE = 4  # FTS5's default
_HASHSIZE = 16 << 20
_FTS5_HASHSIZE = 1 << 20  # FTS5's default, restored after a build
"""FTS5's ``hashsize`` (bytes of pending tokens before a segment is
written) while a build from nothing runs: 16 MiB instead of FTS5's 1 MiB
makes a segment per batch instead of many, and a fifth less merging."""
SHARD_BYTES = 64 << 20
"""A build from nothing of at least this many bytes of JSONL is sharded
(see the module docstring)."""
MAX_SHARDS = 4
MAX_SET_SHARDS = 16
"""The most shards ``shards=`` or ``$PI_SESSION_SEARCH_SHARDS`` can ask
for (each is a worker process while a build runs)."""
PARALLEL_BYTES = 16 << 20
"""A sharded index is written by worker processes when at least this many
bytes are to be read (less is written in this process, shard by shard)."""

_SOURCES = """CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY, dir TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    indexed INTEGER NOT NULL, lines INTEGER NOT NULL, head_hash BLOB, tail_hash BLOB, session_id TEXT, cwd TEXT)"""
_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def file_key(path: str) -> str:
    """The index key (``sid``) of a session file: the first 8 bytes of the
    SHA-256 of its path, in URL-safe base64 (11 characters; every document
    row and its index hold one, so short keys keep the index small; the
    path itself is the session row's ``location``)."""
    return base64.urlsafe_b64encode(hashlib.sha256(os.fsencode(path)).digest()[:8]).rstrip(b"=").decode("ascii")


def key_shard(key: str, shards: int) -> int:
    """The shard (0 to ``shards - 1``) of an index key (:func:`file_key`):
    its 8 bytes as a big-endian number, modulo ``shards``."""
    return int.from_bytes(base64.urlsafe_b64decode(key + "="), "big") % shards if shards > 1 else 0


def index_path(root: str | os.PathLike[str]) -> Path:
    """Where the search index of a sessions root (or directory) lives:
    ``<cache dir>/search/<sha256 of the absolute path, 32 hex>.v<INDEX_VERSION>.sqlite3``
    (:func:`pi_session.storage.cache.versioned_name`: each installed version keeps
    its own). Pure apart from reading the environment and the process cwd."""
    key = os.fsencode(os.path.abspath(root))
    return cache_dir() / "search" / versioned_name(hashlib.sha256(key).hexdigest()[:32], INDEX_VERSION, ".sqlite3")


@dataclass
class IndexStats:
    """What an update did: files (re)read, bytes indexed, files reindexed
    whole because they were rewritten, files dropped, files unchanged, and
    directories listed (the others' files were only ``stat``-ed)."""

    files_read: int = 0
    bytes_indexed: int = 0
    reindexed: int = 0
    dropped: int = 0
    unchanged: int = 0
    dirs_listed: int = 0

    def add(self, other: IndexStats) -> None:
        """Add another update's counts (a shard's) to these."""
        for name in ("files_read", "bytes_indexed", "reindexed", "dropped", "unchanged", "dirs_listed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _automerge(conn: sqlite3.Connection) -> int:
    """The FTS5 table's ``automerge`` setting."""
    row = conn.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchone()
    return int(row[0]) if row is not None else _AUTOMERGE


class FileIndex:
    """The search index of the session files under ``root``.

    Args:
        root: a sessions root (directories of ``*.jsonl``) or one session
            directory; both levels are indexed.
        path: the index file (default :func:`index_path`; when its
            directory may not hold a cache, :func:`pi_session.storage.cache.prepare_cache_dir`,
            a file in a private temporary directory, removed when this
            object is, with a warning).
        busy_timeout: seconds to wait for another process's write lock.
        shards: how many shards a build from nothing makes (None:
            ``$PI_SESSION_SEARCH_SHARDS``, else one per CPU, at most
            :data:`MAX_SHARDS`, when at least :data:`SHARD_BYTES` are to be
            read, else one). An index keeps its number of shards until it
            is rebuilt.
        parallel_bytes: a sharded index is written by worker processes
            when at least this many bytes are to be read.

    Attributes:
        warnings: one-line messages (a damaged index that was rebuilt).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        path: str | os.PathLike[str] | None = None,
        busy_timeout: float = 60.0,
        shards: int | None = None,
        parallel_bytes: int = PARALLEL_BYTES,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.busy_timeout = busy_timeout
        self.want_shards = shards
        self.parallel_bytes = parallel_bytes
        self.warnings: list[str] = []
        self.path = Path(os.path.abspath(path)) if path is not None else self._default_path()
        self._conn: sqlite3.Connection | None = None
        self._shards: dict[int, sqlite3.Connection] = {}
        self._nshards = 1
        self.rebuilds = True  # False in a worker process: damage is raised
        self.rebuilt = False  # a damaged index was deleted and started again

    # ------------------------------------------------------------------
    # opening, damage

    def _default_path(self) -> Path:
        """:func:`index_path`, or a file in a private temporary directory
        (removed with this object) when the cache directory may not be
        used."""
        path = index_path(self.root)
        problem = prepare_cache_dir(path.parent)
        if problem is None:
            return path
        temp = tempfile.mkdtemp(prefix="pi-session-search-")  # 0700, a new name
        weakref.finalize(self, shutil.rmtree, temp, True)
        self.warnings.append(f"the cache directory {path.parent} is not used: {problem}; searching with a temporary index")
        return Path(temp) / path.name

    def connection(self) -> sqlite3.Connection:
        """The open index (created, or rebuilt when damaged)."""
        if self._conn is None:
            try:
                self._conn = self._open()
            except (sqlite3.DatabaseError, IndexDamaged) as exc:
                if not is_damage(exc) or not self.rebuilds:
                    raise
                self._rebuild(exc)
        assert self._conn is not None
        return self._conn

    def _open(self) -> sqlite3.Connection:
        conn = self._open_db(self.path, create=True)
        row = conn.execute("SELECT value FROM meta WHERE key = 'shards'").fetchone()
        self._nshards = max(1, int(row[0])) if row is not None and str(row[0]).isdigit() else 1
        return conn

    def _open_db(self, path: Path, *, create: bool) -> sqlite3.Connection:
        """Open one database of the index (the main file or a shard),
        creating its tables when it is new; a shard that is missing
        (``create=False``) or of another version is damage, and so is a
        file at its path, or at SQLite's ``-wal``, ``-shm`` or ``-journal``
        beside it, that is a symbolic link, not a regular file or another
        user's (:func:`pi_session.storage.cache.file_problem`: it is never opened;
        the rebuild removes it)."""
        ensure_dir(path.parent)
        for name in (str(path), *(f"{path}{side}" for side in _SQLITE_SIDES)):
            problem = file_problem(name)
            if problem is not None:
                raise IndexDamaged(f"{name} is {problem}, not opened")
        if not os.path.lexists(path):
            if not create:
                raise IndexDamaged(f"its shard {path.name} is missing")
            create_cache_file(path)  # never through a symbolic link planted meanwhile
        conn = sqlite3.connect(path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not names:
                conn.execute("PRAGMA journal_mode = WAL").fetchall()
                conn.execute("BEGIN IMMEDIATE")
                for ddl in (_META, _SOURCES, *DIRS_SCHEMA, *fts_schema("", texts=False)):
                    conn.execute(ddl)
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('version', ?)", (INDEX_VERSION,))
                conn.execute("COMMIT")
            row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None or row[0] != INDEX_VERSION:
                raise IndexDamaged(f"version {row[0] if row else None}, expected {INDEX_VERSION}")
            conn.execute("PRAGMA cache_size = -65536")  # 64 MiB: FTS5 segments and the docs index are written in it
            conn.execute("PRAGMA synchronous = OFF")  # a cache: a crash that damages it is caught and it is rebuilt
            conn.execute("PRAGMA secure_delete = ON")  # forgotten text does not linger in free pages
        except BaseException:
            conn.close()
            raise
        return conn

    # ------------------------------------------------------------------
    # shards

    @property
    def shard_count(self) -> int:
        """How many shards the index has (1: the main file alone)."""
        self.connection()
        return self._nshards

    def shard_path(self, k: int) -> Path:
        """The database file of shard ``k`` (0: the main file)."""
        return self.path if k == 0 else self.path.with_name(f"{self.path.stem}.shard{k}.db")

    def shard_of(self, sid: str) -> int:
        """The shard of a file's index key (:func:`file_key`)."""
        return key_shard(sid, self.shard_count)

    def shard(self, k: int) -> sqlite3.Connection:
        """The open database of shard ``k``."""
        if k == 0:
            return self.connection()
        if k not in self._shards:
            self._shards[k] = self._open_db(self.shard_path(k), create=False)
        return self._shards[k]

    def shard_connections(self) -> list[sqlite3.Connection]:
        """Every shard's open database, shard 0 (the main file) first."""
        return [self.shard(k) for k in range(self.shard_count)]

    def _stale_shard_files(self) -> list[Path]:
        return sorted(self.path.parent.glob(f"{glob.escape(self.path.stem)}.shard*.db*"))

    def _make_shards(self, n: int) -> None:
        """Start a build from nothing with ``n`` shards (1: the main file
        alone), under the main file's write lock, so another process
        building it at the same time finds them made. Shard files left by
        an index that was deleted (its main file alone) go first: their
        text must not outlive it."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'shards'").fetchone()
            if row is None and conn.execute("SELECT 1 FROM sources LIMIT 1").fetchone() is None:
                for stale in self._stale_shard_files():
                    stale.unlink(missing_ok=True)
                for k in range(1, n):
                    self._shards[k] = self._open_db(self.shard_path(k), create=True)
                if n > 1:
                    conn.execute("INSERT INTO meta (key, value) VALUES ('shards', ?)", (str(n),))
                row = (str(n),)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._nshards = int(row[0])

    def _drop_stale_shards(self) -> None:
        """Delete shard files beyond the index's number of shards (left by
        an index whose main file alone was deleted, then built again with
        fewer), under the main file's write lock."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'shards'").fetchone()
            n = int(row[0]) if row is not None and str(row[0]).isdigit() else 1
            keep = {self.shard_path(k).name for k in range(1, n)}
            for path in self._stale_shard_files():
                if path.name.split(".db")[0] + ".db" not in keep:
                    path.unlink(missing_ok=True)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _shards_for(self, todo_bytes: int) -> int:
        """How many shards a build from nothing of ``todo_bytes`` makes:
        the ``shards`` argument, else ``$PI_SESSION_SEARCH_SHARDS`` (a
        number from 1 to :data:`MAX_SET_SHARDS`; another value is ignored
        with a warning), else automatic."""
        want = self.want_shards
        if want is None and "PI_SESSION_SEARCH_SHARDS" in os.environ:
            env = os.environ["PI_SESSION_SEARCH_SHARDS"].strip()
            if env.isdigit() and 1 <= int(env) <= MAX_SET_SHARDS:
                want = int(env)
            else:
                self.warnings.append(
                    f"PI_SESSION_SEARCH_SHARDS={env!r} is not a number from 1 to {MAX_SET_SHARDS}; the number of shards is chosen as usual"
                )
        if want is not None:
            return max(1, min(int(want), MAX_SET_SHARDS))
        if todo_bytes < SHARD_BYTES:
            return 1
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        return max(1, min(cpus, MAX_SHARDS))

    def _rebuild(self, exc: BaseException) -> None:
        """Delete the damaged index and start a new one, with one warning."""
        self.close()
        self.rebuilt = True
        for suffix in ("", *_SQLITE_SIDES):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
        for stale in self._stale_shard_files():
            stale.unlink(missing_ok=True)
        why = " ".join(str(exc).split())
        if isinstance(exc, IndexDamaged) and why.startswith("version "):
            self.warnings.append(f"the search index {self.path} is of another version ({why}); rebuilding it")
        else:
            self.warnings.append(f"the search index {self.path} was damaged ({why}); rebuilding it")
        self._conn = self._open()

    def guarded(self, work: Callable[[], Any]) -> Any:
        """Run ``work`` (which uses :meth:`connection`); when the index
        turns out damaged, rebuild it once and run ``work`` again."""
        try:
            return work()
        except (sqlite3.DatabaseError, IndexDamaged) as exc:
            if not is_damage(exc) or any("rebuilding" in w for w in self.warnings):
                raise
            self._rebuild(exc)
            return work()

    def close(self) -> None:
        """Close the index's connections."""
        for conn in self._shards.values():
            conn.close()
        self._shards = {}
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------
    # updating

    def session_files(self) -> Iterator[Path]:
        """The ``*.jsonl`` files of the root and of its directories, sorted."""
        names = jsonl_names(self.root) or []
        for name in sorted(names):
            yield self.root / name
        try:
            subs = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            subs = []
        for sub in subs:
            for name in sorted(jsonl_names(sub) or []):
                yield sub / name

    def _stats(self) -> Iterator[tuple[str, os.stat_result]]:
        """``(path, stat)`` of every regular ``*.jsonl`` file of the root and
        of its directories (symlinks followed), in directory order: the
        freshness check of every search, so plain strings and
        ``os.scandir``, not :class:`~pathlib.Path`."""
        root = str(self.root)
        dirs = [root]
        try:
            with os.scandir(root) as it:
                dirs += [e.path for e in it if not e.name.endswith(".jsonl") and e.is_dir()]
        except OSError:
            return
        for d in dirs:
            yield from dir_stats(d)

    def update(self, on_progress: Callable[[int, int], Any] | None = None, *, check: Check | None = None) -> IndexStats:
        """Bring the index up to date with the files (see the module
        docstring). ``on_progress(done, total)`` after each file;
        ``check``: what :meth:`check` found just before (else it runs
        now).

        Returns:
            :class:`IndexStats`.
        """
        pending = [check]

        def work() -> IndexStats:
            given, pending[0] = pending[0], None  # a rebuilt index is checked again
            return self._update(on_progress, given)

        stats: IndexStats = self.guarded(work)
        return stats

    def _update(self, on_progress: Callable[[int, int], Any] | None, check: Check | None = None) -> IndexStats:
        conn = self.connection()
        self.shard_connections()  # a missing or foreign shard is damage found here, not by the query
        stats = IndexStats()
        if check is None:
            check = self.check(self.dir_rows())
        todo, gone, known_any = self._changes(check)
        stats.unchanged = check.unchanged
        stats.dirs_listed = len(check.rescan) if not check.full else len(check.dirs)
        # oldest-modified first: document ids (FTS5 rowids) then follow the
        # files' modification order, so the newest matches a limited query
        # ranks (fts.candidate_count) are those of the latest sessions
        todo.sort(key=lambda t: (t[1].st_mtime_ns, t[0]))
        full = not known_any and len(todo) > 0
        if full and self._nshards == 1:
            self._make_shards(self._shards_for(sum(st.st_size for _p, st in todo)))
        dirty = {os.path.dirname(str(p)) for p, _st in todo} | {os.path.dirname(p) for p in gone}
        if dirty:
            # the listings of the directories whose sources rows change go
            # first (write_listings writes them again): a reader meanwhile
            # lists those directories itself
            self._locked(conn, lambda: conn.executemany("DELETE FROM dirs WHERE dir = ?", [(d,) for d in sorted(dirty)]))
        work: dict[int, tuple[list[Path], list[str]]] = {}
        for path, _st in todo:
            work.setdefault(self.shard_of(file_key(str(path))), ([], []))[0].append(path)
        for p in gone:
            work.setdefault(self.shard_of(file_key(p)), ([], []))[1].append(p)
        total = len(todo)
        read_bytes = sum(st.st_size for _p, st in todo)
        parallel = len(work) > 1 and read_bytes >= self.parallel_bytes
        if parallel:
            from .shards import WorkersUnavailable, write_in_workers

            try:
                for shard_stats, warnings in write_in_workers(self, work, full=full, total=total, on_progress=on_progress):
                    stats.add(shard_stats)
                    self.warnings += warnings
            except WorkersUnavailable:
                parallel = False  # this process writes them, one after the other
        if not parallel:
            done = 0
            for k in sorted(work):
                paths, gone_k = work[k]
                offset = done
                step = None
                if on_progress is not None:
                    report = on_progress

                    def step(d: int, _t: int, o: int = offset) -> None:
                        report(o + d, total)

                shard_stats = self.write_shard(k, paths, gone_k, full=full, on_progress=step)
                done += len(paths)
                stats.add(shard_stats)
        if not full and todo:
            # a build cut short in a shard this update did not write to
            for k, shard in enumerate(self.shard_connections()):
                if k not in work and _automerge(shard) == 0:
                    shard.execute(f"INSERT INTO fts (fts, rank) VALUES ('automerge', {_AUTOMERGE})")
        write_listings(self.connection(), str(self.root), check, self._dir_sources)
        return stats

    def write_shard(
        self, k: int, todo: list[Path], gone: list[str], *, full: bool, on_progress: Callable[[int, int], Any] | None = None
    ) -> IndexStats:
        """Drop the ``gone`` paths from shard ``k`` and index its ``todo``
        files (``full``: a build from nothing, merged once at the end).
        What a worker process runs (:mod:`.shard_worker`).

        Returns:
            :class:`IndexStats` of this shard.
        """
        conn = self.shard(k)
        stats = IndexStats()
        if full:
            # a build from nothing merges FTS5's segments once, at the end
            # ('optimize' below), none on the way (automerge is restored
            # after the build; one cut short is restored by the next update)
            conn.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")
            conn.execute(f"INSERT INTO fts (fts, rank) VALUES ('hashsize', {_HASHSIZE})")
        elif todo and _automerge(conn) == 0:
            conn.execute(f"INSERT INTO fts (fts, rank) VALUES ('automerge', {_AUTOMERGE})")  # a build cut short
        restore = [
            f"INSERT INTO fts (fts, rank) VALUES ('automerge', {_AUTOMERGE})",
            f"INSERT INTO fts (fts, rank) VALUES ('hashsize', {_FTS5_HASHSIZE})",
        ]
        try:
            self._write_batches(conn, todo, gone, stats, on_progress)
        except BaseException:
            if full:
                with contextlib.suppress(sqlite3.Error):  # the error raised is the one to see
                    for sql in restore:
                        conn.execute(sql)
            raise
        if full:
            for sql in restore:
                conn.execute(sql)
        if stats.reindexed or stats.dropped:
            self._refill_if_orphaned(conn)
        if full:
            # a build from nothing: FTS5's segments merged into one and the
            # file compacted (about a tenth smaller; the writes made it)
            conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")
            conn.execute("VACUUM")
        return stats

    def _write_batches(
        self,
        conn: sqlite3.Connection,
        todo: list[Path],
        gone: list[str],
        stats: IndexStats,
        on_progress: Callable[[int, int], Any] | None,
    ) -> None:
        """Drop the ``gone`` paths and index the ``todo`` files of one
        shard, one write transaction per :data:`_BATCH_BYTES` read."""
        total = len(todo)
        done = 0
        i = 0
        while i < len(todo) or gone:
            conn.execute("BEGIN IMMEDIATE")
            try:
                writer = FtsWriter(conn.cursor(), "", buffered=True, texts=False)
                for p in gone:
                    writer.forget(file_key(p))
                    conn.execute("DELETE FROM sources WHERE path = ?", (p,))
                    stats.dropped += 1
                gone = []
                batch = 0
                while i < len(todo) and batch < _BATCH_BYTES:
                    path = todo[i]
                    i += 1
                    batch += self._index_file(conn, writer, path, stats)
                    done += 1
                    if on_progress is not None:
                        on_progress(done, total)
                writer.flush()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------
    # the freshness check

    def dir_rows(self) -> dict[str, DirRow]:
        """The index's directory listings (:func:`~pi_session.search.freshness.read_listings`)."""
        return read_listings(self.connection())

    def check(self, rows: dict[str, DirRow]) -> Check:
        """What changed on disk since the listings ``rows`` were recorded
        (:func:`~pi_session.search.freshness.check_dirs`)."""
        return check_dirs(str(self.root), rows)

    def _sources(self, where: str = "", args: tuple[Any, ...] = ()) -> dict[str, tuple[Any, ...]]:
        """``path -> (size, mtime_ns, ino)`` of the ``sources`` rows of every
        shard (``where``: a condition on them)."""
        known: dict[str, tuple[Any, ...]] = {}
        for conn in self.shard_connections():
            known.update((row[0], tuple(row[1:])) for row in conn.execute(f"SELECT path, size, mtime_ns, ino FROM sources {where}", args))
        return known

    def _dir_sources(self, d: str) -> list[tuple[Any, ...]]:
        return [(path, *rest) for path, rest in self._sources("WHERE dir = ?", (d,)).items()]

    def _changes(self, check: Check) -> tuple[list[tuple[Path, os.stat_result]], list[str], bool]:
        """The files to index and the paths to drop for a :class:`Check`
        (directories listed again are compared with their ``sources``
        rows), and whether the index held any file."""
        todo: list[tuple[Path, os.stat_result]] = [(Path(p), st) for p, st in check.changed]
        gone: list[str] = []
        if check.full:
            known = self._sources()
            seen: set[str] = set()
            dirs = {str(self.root)}
            for key, st in self._stats():
                seen.add(key)
                dirs.add(os.path.dirname(key))
                if known.get(key) == (st.st_size, st.st_mtime_ns, st.st_ino):
                    check.unchanged += 1
                    continue
                todo.append((Path(key), st))
            try:
                with os.scandir(self.root) as it:
                    dirs.update(e.path for e in it if not e.name.endswith(".jsonl") and e.is_dir())
            except OSError:
                pass
            check.dirs = sorted(dirs)
            gone = [p for p in known if p not in seen]
            return todo, gone, bool(known)
        for d in sorted(check.rescan):
            known = self._sources("WHERE dir = ?", (d,))
            seen = set()
            for key, st in dir_stats(d):
                seen.add(key)
                if known.get(key) == (st.st_size, st.st_mtime_ns, st.st_ino):
                    check.unchanged += 1
                    continue
                todo.append((Path(key), st))
            gone += [p for p in known if p not in seen]
        for d in check.gone_dirs:
            gone += list(self._sources("WHERE dir = ?", (d,)))
        return todo, gone, True

    def _refill_if_orphaned(self, conn: sqlite3.Connection) -> None:
        """Refill the FTS5 table when more than a quarter of its rows (at
        least 1,000) are orphans of forgotten documents."""
        rows = int(conn.execute("SELECT count(*) FROM fts_docsize").fetchone()[0])
        docs = int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
        if rows - docs > max(1000, docs // 4):
            self._locked(conn, lambda: self._refill(conn))

    def _locked(self, conn: sqlite3.Connection, work: Callable[[], Any]) -> Any:
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = work()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return out

    def _refill(self, conn: sqlite3.Connection) -> None:
        """Build a shard's FTS5 table again from its documents' lines (inside
        the write transaction): the index keeps no text, so this is how
        forgotten documents' tokens (orphans) leave it. A file that no
        longer holds the bytes it was indexed from is forgotten (the next
        update indexes it again)."""
        self.connection().execute("DELETE FROM dirs")  # sources rows may go: every listing is made again
        conn.execute("DROP TABLE IF EXISTS fts")
        conn.execute(fts_schema("", texts=False)[-1])
        writer = FtsWriter(conn.cursor(), "", texts=False)
        sources = conn.execute("SELECT path, size, mtime_ns, ino, indexed, head_hash, tail_hash FROM sources").fetchall()
        for path, size, mtime, ino, indexed, head, tail in sources:
            sid = file_key(path)
            rows = conn.execute("SELECT doc, pos, len FROM docs WHERE sid = ? ORDER BY pos", (sid,)).fetchall()
            if not rows:
                continue
            f = open_as_indexed(path, (size, mtime, ino, indexed, head, tail))
            texts: list[tuple[int, str, str]] | None = []
            if f is None:
                texts = None
            else:
                with f:
                    data = f.read(indexed)
                for doc, pos, length in rows:
                    got = line_texts(data[pos : pos + length])
                    if got is None:
                        texts = None
                        break
                    texts.append((doc, got[1], got[2]))  # type: ignore[union-attr]
            if texts is None:
                writer.forget(sid)
                conn.execute("DELETE FROM sources WHERE path = ?", (path,))
                continue
            conn.executemany("INSERT INTO fts (rowid, body, thinking) VALUES (?, ?, ?)", texts)
        conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")

    # ------------------------------------------------------------------
    # texts of hits

    def with_texts(self, candidates: Iterator[Candidate], *, thinking: bool) -> Iterator[Candidate]:
        """The candidates with their ``body`` (and ``thinking`` when asked)
        read back from their session files: the line at ``pos`` (``length``
        bytes) re-extracted. A file changed since it was indexed is used
        while its indexed bytes are intact (it grew: same inode, SHA-256 of
        its prefix as indexed); a hit in a file that no longer holds those
        bytes (rewritten under the index) is skipped, never shown with
        another line's text."""
        files: dict[str, Any] = {}
        try:
            for c in candidates:
                path = c.location
                if path is None:
                    continue
                if path not in files:
                    row = self.shard(self.shard_of(c.sid)).execute(
                        "SELECT size, mtime_ns, ino, indexed, head_hash, tail_hash FROM sources WHERE path = ?", (path,)
                    ).fetchone()
                    files[path] = open_as_indexed(path, tuple(row)) if row is not None else None
                f = files[path]
                if f is None:
                    continue
                try:
                    raw = os.pread(f.fileno(), c.length, c.pos)
                except OSError:
                    continue
                got = line_texts(raw) if len(raw) == c.length else None
                # a v1 line holds no id (the index has the migration's)
                if got is None or (got[0] != c.entry_id and got[0] is not None):
                    continue
                c.body, c.thinking = got[1], (got[2] if thinking else "")
                yield c
        finally:
            for f in files.values():
                if f is not None:
                    f.close()

    def _index_file(self, conn: sqlite3.Connection, writer: FtsWriter, path: Path, stats: IndexStats) -> int:
        """Index what is new in one file (inside the write transaction, so
        the ``sources`` row read here is current). Returns bytes read."""
        key = str(path)
        sid = file_key(key)
        f = open_regular(path)
        if f is None:
            return 0
        with f:
            st = os.fstat(f.fileno())
            row = conn.execute(
                "SELECT size, mtime_ns, ino, indexed, lines, head_hash, tail_hash, session_id FROM sources WHERE path = ?", (key,)
            ).fetchone()
            if row is not None and tuple(row[:3]) == (st.st_size, st.st_mtime_ns, st.st_ino):
                return 0  # another process indexed it meanwhile
            start, line_no, session_id = 0, 0, None
            if row is not None:
                _size, _mtime, ino, indexed, lines, head, tail, session_id = row
                if ino == st.st_ino and st.st_size >= indexed and prefix_hashes(f, indexed) == (head, tail):
                    start, line_no = indexed, lines
                else:
                    stats.reindexed += 1
            if start == 0:
                session_id = None
            elif session_id is None:
                session_id = ""  # not a session: stays so while it grows
            read = read_from(f, key, st, start, line_no, session_id)
        if start == 0 and row is not None:  # a file without a sources row has no documents to forget
            writer.forget(sid)
        return self._write_read(conn, writer, read, stats)

    def _write_read(self, conn: sqlite3.Connection, writer: FtsWriter, read: FileRead, stats: IndexStats) -> int:
        """Write what :func:`~.reading.read_from` found (inside the write transaction)."""
        sid = file_key(read.key)
        stats.files_read += 1
        stats.bytes_indexed += read.end - read.start
        if read.cwd is not None:
            writer.session(sid, read.session_id, read.cwd, read.key)
        for pos, length, doc in read.docs:
            writer.add_doc(sid, pos, doc, length)
        if read.damaged:
            n = len(read.damaged)
            at = ", ".join(map(str, read.damaged[:5])) + (", …" if n > 5 else "")
            self.warnings.append(
                f"{read.key}: {n} damaged line{'' if n == 1 else 's'} not searched (line{'' if n == 1 else 's'} {at}; "
                "pi-session check shows them)"
            )
        conn.execute(
            "INSERT OR REPLACE INTO sources (path, dir, size, mtime_ns, ino, indexed, lines, head_hash, tail_hash, session_id, cwd) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT cwd FROM sessions WHERE sid = ?))",
            (read.key, os.path.dirname(read.key), *read.stat, read.end, read.lines, read.head, read.tail, read.session_id or None, sid),
        )
        return read.end - read.start

    # ------------------------------------------------------------------
    # forgetting

    def forget(self, session_id: str) -> int:
        """Remove every file holding session ``session_id`` from the index
        (its documents; the FTS5 table refilled from the other documents'
        lines, since the index keeps no text to delete tokens with, so no
        token of them is left in it; free pages are zeroed:
        ``secure_delete``). The next update indexes the files again from
        their first byte.

        Returns:
            How many files were forgotten.
        """

        def forget_in(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            try:
                paths = [r[0] for r in conn.execute("SELECT path FROM sources WHERE session_id = ?", (session_id,))]
                writer = FtsWriter(conn.cursor(), "", texts=False)
                for p in paths:
                    writer.forget(file_key(p))
                    conn.execute("DELETE FROM sources WHERE path = ?", (p,))
                if paths:
                    self._refill(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            if paths:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return len(paths)

        def work() -> int:
            self._drop_stale_shards()
            return sum(forget_in(conn) for conn in self.shard_connections())

        count: int = self.guarded(work)
        return count

    def sids_under(self, directory: Path) -> list[str]:
        """The index keys (:func:`file_key`) of the sessions in ``directory``."""
        prefix = str(directory).rstrip("/") + "/"
        paths = self._sources("WHERE substr(path, 1, length(?)) = ?", (prefix, prefix))
        return [file_key(p) for p in paths if "/" not in p[len(prefix):]]

    def candidates(self, query: Query, *, limit: int | None, **options: Any) -> Iterator[Candidate]:
        """The documents matching ``query`` in every shard, best first (as
        :func:`~pi_session.search.fts.fts_candidates`, whose keyword
        arguments ``options`` are; texts are "" until :meth:`with_texts`)."""
        from .shards import sharded_candidates

        return sharded_candidates(self.shard_connections(), query, limit=limit, shard_of=self.shard_of, **options)
