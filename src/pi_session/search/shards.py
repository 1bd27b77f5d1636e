"""A sharded files' index (:class:`pi_session.search.files.FileIndex`):
its shards written by worker processes in parallel, and queried in
parallel threads with their candidates merged in rank order.

A build is as fast as its FTS5 writer: one writer per database, and a
writer tokenizing and merging runs on one core. So a large index is split
into shards (one database each) and each shard is written by a worker
process of its own (:func:`worker_command`: this Python in isolated mode,
run from ``/``, importing :mod:`pi_session.search.shard_worker` from where
this process imported pi_session, so nothing is ever imported from the
caller's directory), which reads its job (pickled: the index, the shard,
its files, absolute paths) from standard input,
prints ``p DONE`` after each file and ends with ``r`` and its result
(pickled, hex). A worker runs nothing but :meth:`FileIndex.write_shard`;
a worker that fails stops the others and its error is raised here
(damage as :class:`~pi_session.search.damage.IndexDamaged`, so the index
is rebuilt; anything else as :class:`OSError` naming the index).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import pickle
import selectors
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import PiSessionError
from .damage import IndexDamaged
from .fts import Candidate, fts_candidates
from .query import Query

__all__ = ["WorkersUnavailable", "rank_key", "sharded_candidates", "worker_command", "write_in_workers"]


class WorkersUnavailable(PiSessionError, OSError):
    """No worker process could be started (the caller writes the shards
    itself); an ``OSError`` too."""


def rank_key(c: Candidate) -> tuple[Any, ...]:
    """The order of :func:`~pi_session.search.fts.fts_candidates`' rows as
    a sort key: rank, then newest first (no time last), then session key
    and position."""
    return (c.rank, c.ts_ms is None, -(c.ts_ms or 0), c.sid, c.pos)


def sharded_candidates(
    conns: list[Any],
    query: Query,
    *,
    limit: int | None,
    shard_of: Callable[[str], int],
    sids: list[str] | None = None,
    **options: Any,
) -> Iterator[Candidate]:
    """The candidates of every shard, best first.

    Args:
        conns: each shard's connection (shard ``k`` at index ``k``).
        limit: as in ``fts_candidates``: a limited query without ``re:``
            ranks each shard's bounded candidate set, the shards queried in
            parallel threads (SQLite works without Python's lock); else the
            shards' ranked rows are merged as they are read.
        shard_of: the shard of an index key (``sids`` are given to theirs).
        sids: only these sessions' index keys, or all.
        options: the other keyword arguments of ``fts_candidates``.
    """
    if len(conns) == 1:
        yield from fts_candidates(conns[0], query, limit=limit, sids=sids, texts=False, **options)
        return
    scopes: list[list[str] | None] = [None] * len(conns)
    if sids is not None:
        parts: list[list[str]] = [[] for _ in conns]
        for sid in sids:
            parts[shard_of(sid)].append(sid)
        scopes = list(parts)

    def one(k: int) -> Iterator[Candidate]:
        return fts_candidates(conns[k], query, limit=limit, sids=scopes[k], texts=False, shards=len(conns), **options)

    if limit is not None and not query.regexes:
        # each shard's first row is where SQLite ranks its candidate set:
        # those run in parallel; the rest is read as the merge needs it
        def started(k: int) -> Iterator[Candidate]:
            rows = one(k)
            first = next(rows, None)
            return rows if first is None else itertools.chain([first], rows)

        with ThreadPoolExecutor(len(conns)) as pool:
            streams = list(pool.map(started, range(len(conns))))
        yield from heapq.merge(*streams, key=rank_key)
        return
    yield from heapq.merge(*(one(k) for k in range(len(conns))), key=rank_key)


_BOOTSTRAP = "import sys; sys.path[:0] = sys.argv[1:]; from pi_session.search.shard_worker import main; sys.exit(main())"


def worker_command() -> list[str]:
    """The command line of a shard worker: ``sys.executable -I -c
    <bootstrap> <path>...``. Isolated mode (``-I``): neither the current
    directory nor ``$PYTHONPATH`` nor the user's site directory is on its
    ``sys.path``, and no ``PYTHON*`` variable is read, so a ``pickle.py``
    (or any module name) in the directory a command runs in is never
    imported. The bootstrap puts back, first on ``sys.path``, the
    directory this package was imported from and this process's other
    absolute ``sys.path`` entries (``$PYTHONPATH`` ones included; ``""``,
    the current directory, is left out), so the worker runs this very
    pi_session with the same libraries."""
    here = str(Path(__file__).resolve().parents[2])
    paths = [here, *(p for p in sys.path if p and os.path.isabs(p) and p != here)]
    return [sys.executable, "-I", "-c", _BOOTSTRAP, *paths]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def write_in_workers(
    index: Any,
    work: dict[int, tuple[list[Path], list[str]]],
    *,
    full: bool,
    total: int,
    on_progress: Callable[[int, int], Any] | None,
    at_once: int | None = None,
) -> list[tuple[Any, list[str]]]:
    """Run each shard's :meth:`~pi_session.search.files.FileIndex.write_shard`
    in a worker process of its own, ``at_once`` of them at a time.

    Args:
        index: the :class:`~pi_session.search.files.FileIndex`.
        work: shard -> (files to index, paths to drop).
        full: a build from nothing.
        total: the files to index in all shards (for ``on_progress``).
        on_progress: ``on_progress(done, total)`` as workers report files.
        at_once: how many workers run together (default: one per CPU).

    Returns:
        Each shard's ``(IndexStats, warnings)``, in shard order.

    Raises:
        WorkersUnavailable: no worker could be started.
        IndexDamaged: a shard turned out damaged.
        OSError: a worker could not run or failed (the message names the
            index and the worker's error).
    """
    pending = sorted(work.items())
    limit = max(1, at_once if at_once is not None else _cpus())
    procs: dict[int, tuple[subprocess.Popen[bytes], Any]] = {}
    results: dict[int, Any] = {}
    done: dict[int, int] = {}
    buffers: dict[int, bytes] = {}
    sel = selectors.DefaultSelector()

    def start() -> None:
        k, (todo, gone) = pending.pop(0)
        job = {  # absolute paths (the files are under the absolute root): the worker runs in /
            "root": os.path.abspath(index.root), "index": os.path.abspath(index.path), "busy_timeout": index.busy_timeout,
            "shard": k, "todo": [str(p) for p in todo], "gone": gone, "full": full,
        }
        err = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen(worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd="/")
        except OSError as exc:
            err.close()
            if not procs:
                raise WorkersUnavailable(f"{sys.executable}: {exc.strerror or exc}") from exc
            raise
        procs[k] = (proc, err)
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(BrokenPipeError):  # a worker that died at once: its exit says why
            proc.stdin.write(pickle.dumps(job))
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        sel.register(proc.stdout, selectors.EVENT_READ, k)
        buffers[k], done[k] = b"", 0

    def failure(k: int) -> BaseException:
        proc, err = procs[k]
        got = results.get(k)
        if got is not None:
            return IndexDamaged(got["error"]) if got["damage"] else OSError(f"{index.path}: indexing shard {k} failed: {got['error']}")
        proc.wait()
        err.seek(0)
        said = err.read().decode("utf-8", "replace").strip().splitlines()
        code = proc.returncode
        why = said[-1] if said else (f"killed by signal {-code}" if code < 0 else f"exit status {code}")
        return OSError(f"{index.path}: indexing shard {k} failed: {why}")

    try:
        while pending and len(procs) < limit:
            start()
        running = len(procs)
        while running:
            for key, _mask in sel.select():
                k = key.data
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    # a worker ended: with its result, the next one starts;
                    # without it, it failed and the others are stopped
                    sel.unregister(key.fileobj)
                    running -= 1
                    got = results.get(k)
                    if got is None or "error" in got:
                        raise failure(k)
                    procs[k][0].wait()
                    if pending:
                        start()
                        running += 1
                    continue
                buffers[k] += chunk
                *lines, buffers[k] = buffers[k].split(b"\n")
                for line in lines:
                    if line.startswith(b"p "):
                        done[k] = int(line[2:])
                        if on_progress is not None:
                            on_progress(sum(done.values()), total)
                    elif line.startswith(b"r "):
                        results[k] = pickle.loads(bytes.fromhex(line[2:].decode("ascii")))
        return [(results[k]["stats"], results[k]["warnings"]) for k in sorted(work)]
    finally:
        sel.close()
        for proc, err in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            err.close()
