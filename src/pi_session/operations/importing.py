"""Importing sessions into a store, as ``pi-session import`` does."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..stores import SessionStore
    from ..stores.transfer import ImportResult

__all__ = ["STORE_SCHEMES", "is_store_url", "import_sessions"]


STORE_SCHEMES = ("sqlite://", "postgresql://", "postgres://")
"""URL prefixes of database stores (lower case)."""


def is_store_url(text: str) -> bool:
    """Whether ``text`` names a database store (``sqlite://``, ``postgresql://``)."""
    return text.lower().startswith(STORE_SCHEMES)


def _is_sqlite_file(path: str) -> bool:
    if not os.path.isfile(path):  # never open a FIFO or a device
        return False
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def import_sessions(sources: Iterable[str], target: SessionStore) -> Iterator[ImportResult]:
    """Import pi sessions into ``target``, one result per session, as
    ``pi-session import`` does: a store URL copies every session of that
    store; a file or directory (searched at any depth) imports its session
    files with their exact lines (:func:`pi_session.stores.transfer.import_file`:
    idempotent, a grown file appends its new lines). A source that cannot
    be read, or a SQLite file given as a path, is a ``failed`` result. The
    sources are never changed.

    Raises:
        pi_session.stores.StoreError: a store cannot be opened or written.
    """
    from ..stores import open_store
    from ..stores.transfer import ImportResult, copy_session, import_file, session_files

    for source in sources:
        if is_store_url(source):
            origin = open_store(source)
            for info in origin.list(with_text=False):
                yield copy_session(origin, target, str(info["id"]))
            continue
        try:
            os.stat(source)
        except OSError as exc:  # missing, a dangling symlink, a symlink loop, no permission
            reason = exc.strerror or "cannot be read"
            yield ImportResult(source, "failed", message=f"{source}: {reason[:1].lower()}{reason[1:]}")
            continue
        if _is_sqlite_file(source):
            yield ImportResult(
                source, "failed", message=f"{source}: a SQLite database, not a session file: import from it as sqlite:///{os.path.abspath(source)}"
            )
            continue
        for path in session_files([source]):
            yield import_file(target, path)
