"""Importing sessions into a store, as ``pi-session import`` does."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..stores.capabilities import StoreCapability

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
    idempotent, a grown file appends its new lines). The blobs a slimmed
    session's notes name (:mod:`.slimming`) come along into the target
    (its ``pi_blobs`` table, or a store of files' ``.blobs``); one that
    cannot be found is named in the result's ``missing_blobs``. A source that cannot
    be read, or a SQLite file given as a path, is a ``failed`` result. The
    sources are never changed.

    Raises:
        pi_session.stores.StoreError: a store cannot be opened or written
            (also: a store of files' blob directory is refused, see
            :mod:`.blobs`).
    """
    from ..stores import open_store
    from ..stores.transfer import ImportResult, copy_session, import_file, session_files

    for source in sources:
        if is_store_url(source):
            origin = open_store(source)
            for info in origin.list(with_text=False):
                yield _with_store_blobs(copy_session(origin, target, str(info["id"])), origin, target)
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
            yield _with_file_blobs(import_file(target, path), path, target)


def _blob_sink(target: SessionStore) -> Callable[[dict[str, bytes]], None]:
    """How blobs go into ``target``: a database's ``pi_blobs`` table, or
    the ``.blobs`` directory of a store of files."""
    if not target.can(StoreCapability.FILES):
        return target.put_blobs
    from .blobs import BlobStore

    blobs = BlobStore(target.files_root / ".blobs")

    def put_files(found: dict[str, bytes]) -> None:
        from ..stores import StoreError
        from .errors import OperationError

        try:
            for data in found.values():
                blobs.put(data)
        except OperationError as exc:  # a blob directory refused (another user's, or open to others)
            raise StoreError(str(exc)) from None

    return put_files


def _copy_blobs(result: ImportResult, target: SessionStore, digests: Iterable[str], fetch: Callable[[str], bytes | None]) -> ImportResult:
    """Copy the blobs ``digests`` (``fetch(digest)``: the checked bytes, or
    None when missing or damaged) into ``target`` for an imported session;
    ``result.blobs`` and ``result.missing_blobs`` say what came and what
    did not."""
    if result.status not in ("imported", "updated", "unchanged"):
        return result
    found: dict[str, bytes] = {}
    for digest in dict.fromkeys(digests):
        data = fetch(digest)
        if data is None:
            result.missing_blobs.append(digest)
        else:
            found[digest] = data
    if found:
        _blob_sink(target)(found)
        result.blobs = len(found)
    return result


def _with_file_blobs(result: ImportResult, path: Path, target: SessionStore) -> ImportResult:
    """An imported session file's blobs (beside it, as ``slim`` wrote
    them) copied into ``target`` (:func:`_copy_blobs`)."""
    from .errors import OperationError
    from .blobs import BlobStore, blob_dir
    from .slimming import slimmed_blobs

    if result.status not in ("imported", "updated", "unchanged"):
        return result
    try:
        digests = [digest for _n, digest, _p in slimmed_blobs(path)]
    except OSError:
        return result  # the session was read just now; what it names is checked on the next import
    if not digests:
        return result
    blobs = BlobStore.of_session(path)
    if target.can(StoreCapability.FILES) and blob_dir(path) == target.files_root / ".blobs":
        return result  # already there

    def fetch(digest: str) -> bytes | None:
        try:
            return blobs.get(digest)
        except OperationError:
            return None

    return _copy_blobs(result, target, digests, fetch)


def _with_store_blobs(result: ImportResult, origin: SessionStore, target: SessionStore) -> ImportResult:
    """A session copied from the database store ``origin``: the blobs its
    notes name copied from ``origin``'s table into ``target``."""
    import hashlib

    from ..session.lean import note_hashes

    if result.status not in ("imported", "updated", "unchanged") or result.session_id is None:
        return result
    digests = [d for raw in origin.read_lines(result.session_id) for d in note_hashes(raw)]

    def fetch(digest: str) -> bytes | None:
        if not origin.can(StoreCapability.BLOBS):
            return None  # a store keeping no blobs holds none of them
        data = origin.get_blob(digest)
        return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None

    return _copy_blobs(result, target, digests, fetch)
