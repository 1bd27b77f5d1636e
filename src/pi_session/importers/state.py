"""What the last import of another agent's sessions into a store found in
each source file (**beyond pi**): a cache that lets
:func:`pi_session.importers.import_agent_sessions` pass over a source file
unchanged since (same device, inode, size and modification time) whose
pi sessions the store still holds as that import left them, without
opening it: no conversion, no comparing every line with the store again.

One JSON file per source format and store, in pi-session's cache directory
(:func:`pi_session.core.paths.cache_dir`): ``imports/<32 hex>.v1.json`` (the
format version in the name; mode 0600 in a 0700 directory: it holds
session names and source paths). It is never the truth: a missing,
damaged or foreign file is ignored (and replaced by the next import); a
source file is passed over only when every pi session it gave is still in
the store with the mark it had after that import
(:meth:`pi_session.stores.SessionStore.session_marks`: a file's device,
inode, size and mtime; a database row's size, line count and write time),
so a session deleted, appended to, rewritten or scrubbed since is imported
again the full way; ``import --recheck`` converts everything again. It is a cache
as :mod:`pi_session.storage.cache` rules them: never read through a symbolic
link, from a FIFO or from another user's file, and not used at all in a
cache directory another user could change (one warning; every source file
is converted).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..storage.cache import read_cache_file, usable_cache_dir, versioned_name, write_cache_file
from ..core.paths import cache_dir

__all__ = ["ImportState", "SourceSeen", "counts_json", "stat_key", "state_path"]

_VERSION = 3
_LIMIT = 256 << 20
"""The largest import state read (bytes); a larger one is rebuilt."""


def state_path(source_format: str, store_url: str) -> Path:
    """The cache file of imports of ``source_format`` into the store at
    ``store_url``. Pure apart from reading the environment."""
    key = hashlib.sha256(f"{source_format}\0{store_url}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir() / "imports" / versioned_name(key, _VERSION, ".json")


@dataclass
class SourceSeen:
    """What one source file gave when last imported: its ``stat``
    (:func:`stat_key`), one item per pi session result (``source``,
    ``status``, ``session_id``, ``message``, ``counts``: the entries by
    kind; ``mark``: the stored session's
    :meth:`~pi_session.stores.SessionStore.session_marks` mark right after,
    a list of integers, absent for ``skipped``) and its damaged lines
    (``path``, ``line``, ``reason``)."""

    stat: tuple[int, int, int, int]
    results: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[tuple[str, int, str]] = field(default_factory=list)

    def to_json(self) -> list[Any]:
        return [list(self.stat), self.results, [list(d) for d in self.damaged]]

    @classmethod
    def from_json(cls, value: Any) -> SourceSeen | None:
        """The item read back, or None when it is not one this version wrote."""
        try:
            stat, results, damaged = value
            dev, ino, size, mtime_ns = stat
            if not all(type(x) is int for x in (dev, ino, size, mtime_ns)):
                return None
            good = [r for r in results if isinstance(r, dict) and isinstance(r.get("status"), str) and isinstance(r.get("source"), str)]
            if len(good) != len(results) or not all(isinstance(r.get("counts", {}), dict) for r in good):
                return None
            if not all(r.get("mark") is None or isinstance(r["mark"], list) and all(type(x) is int for x in r["mark"]) for r in good):
                return None
            lines = [(str(p), int(n), str(why)) for p, n, why in damaged]
        except (TypeError, ValueError):
            return None
        return cls((dev, ino, size, mtime_ns), good, lines)


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    """The ``(st_dev, st_ino, st_size, st_mtime_ns)`` a source file is
    compared by."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class ImportState:
    """The import cache of one source format and store (see the module
    docstring).

    Args:
        path: its file (:func:`state_path`).
        cached: whether the cache may be used; None: when its directory
            may hold a cache (:func:`pi_session.storage.cache.usable_cache_dir`, which
            warns when it may not). Without it nothing is read or written.
    """

    def __init__(self, path: Path, cached: bool | None = None) -> None:
        self.path = path
        self.files: dict[str, SourceSeen] = {}
        self.changed = False
        if cached is None:
            cached = usable_cache_dir(path.parent, "importing without it (every source file is converted)")
        self.cached = cached
        raw = read_cache_file(path, _LIMIT) if cached else None
        with contextlib.suppress(orjson.JSONDecodeError):
            data = orjson.loads(raw) if raw is not None else None
            if isinstance(data, dict) and data.get("version") == _VERSION and isinstance(data.get("files"), dict):
                for name, item in data["files"].items():
                    seen = SourceSeen.from_json(item)
                    if isinstance(name, str) and seen is not None:
                        self.files[name] = seen

    def session_ids(self) -> set[str]:
        """The pi session ids the remembered source files gave."""
        return {r["session_id"] for seen in self.files.values() for r in seen.results if isinstance(r.get("session_id"), str)}

    def unchanged(self, source: str, st: os.stat_result) -> SourceSeen | None:
        """What ``source`` gave last time, when its ``stat`` is the same."""
        seen = self.files.get(source)
        return seen if seen is not None and seen.stat == stat_key(st) else None

    def record(self, source: str, seen: SourceSeen | None) -> None:
        """Remember (or, with None, forget) what ``source`` gave."""
        if seen is None:
            self.changed |= self.files.pop(source, None) is not None
        else:
            self.files[source] = seen
            self.changed = True

    def save(self) -> None:
        """Write the cache atomically when anything changed; silently gives
        up when the cache directory cannot be written (importing does not
        need it)."""
        if not self.changed or not self.cached:
            return
        with contextlib.suppress(OSError, TypeError, ValueError):
            data = orjson.dumps({"version": _VERSION, "files": {k: v.to_json() for k, v in self.files.items()}})
            write_cache_file(self.path, data)  # a cache: no fsync, rebuilt by converting again if lost
            self.changed = False


def counts_json(counts: Counter[str]) -> dict[str, int]:
    """Entries by kind as the cache stores them."""
    return {str(k): int(v) for k, v in counts.items()}
