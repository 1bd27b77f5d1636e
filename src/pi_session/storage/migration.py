"""Migration of a session file on disk (:func:`migrate_file`): the records
are migrated in memory by :func:`pi_session.storage.versions.migrate_session_entries`
(pi's ``migrateSessionEntries``, which the reader applies) and the file is
rewritten atomically by :func:`~.rewrite.rewrite_records`, keeping a
backup."""

from __future__ import annotations

from pathlib import Path

from ..entries.records import CURRENT_SESSION_VERSION, StrPath
from .model import SessionFileError
from .reader import read_session_file
from .rewrite import rewrite_records

__all__ = ["MigrationResult", "migrate_file"]


class MigrationResult(dict):
    """``{"path", "from_version", "to_version", "backup", "problems"}``."""


def migrate_file(path: StrPath) -> MigrationResult:
    """Migrate a session file on disk to the current version.

    The rewrite is atomic (temp file, fsync, rename), the original is kept
    next to it as ``<file>.v<N>.bak``, and lines that could not be parsed are
    written back unchanged at their place.

    Returns:
        A :class:`MigrationResult`; ``backup`` is None when the file was
        already current (nothing written).

    Raises:
        pi_session.storage.SessionFileError: unreadable file or no header.
    """
    sf = read_session_file(path, migrate=True)
    if sf.header is None:
        raise SessionFileError(path, "empty file: nothing to migrate")
    result = MigrationResult(
        path=str(Path(path)),
        from_version=sf.migrated_from or sf.version,
        to_version=CURRENT_SESSION_VERSION,
        backup=None,
        problems=sf.warnings(),
    )
    if sf.migrated_from is not None:
        backup = rewrite_records(sf, backup_tag=f"v{sf.migrated_from}")
        result["backup"] = str(backup) if backup else None
    return result
