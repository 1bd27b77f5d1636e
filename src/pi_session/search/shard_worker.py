"""A worker process of a sharded build (:func:`pi_session.search.shards.write_in_workers`,
started as :func:`pi_session.search.shards.worker_command` says: isolated,
in ``/``, calling :func:`main`) reads its job (pickled: the index, the
shard, its files) from standard input, runs
:meth:`pi_session.search.files.FileIndex.write_shard`, prints ``p DONE``
after each file and ends with ``r`` and its result (pickled, hex): the
shard's :class:`~pi_session.search.files.IndexStats` and warnings, or the
error and whether it is damage. A damaged index is reported, never
rebuilt here: the parent rebuilds it."""

from __future__ import annotations

import pickle
import sqlite3
import sys
from pathlib import Path
from typing import Any

from .damage import IndexDamaged, is_damage
from .files import FileIndex

__all__ = ["main"]


def main() -> int:
    """Run the job on standard input; returns the exit status (130 when
    interrupted, else 0: an error is part of the result)."""
    job = pickle.loads(sys.stdin.buffer.read())
    index = FileIndex(job["root"], path=job["index"], busy_timeout=job["busy_timeout"])
    index.rebuilds = False
    out: dict[str, Any]

    def progress(done: int, _total: int) -> None:
        sys.stdout.write(f"p {done}\n")
        sys.stdout.flush()

    try:
        stats = index.write_shard(job["shard"], [Path(p) for p in job["todo"]], job["gone"], full=job["full"], on_progress=progress)
        out = {"stats": stats, "warnings": index.warnings}
    except KeyboardInterrupt:
        return 130
    except (sqlite3.Error, IndexDamaged, OSError) as exc:
        out = {"error": " ".join(str(exc).split()) or type(exc).__name__, "damage": is_damage(exc)}
    finally:
        index.close()
    sys.stdout.write("r " + pickle.dumps(out).hex() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
