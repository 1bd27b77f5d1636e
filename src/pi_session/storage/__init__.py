"""Session files on disk (pi 1.6's JSONL session files): tolerant reading, appends, atomic rewrites.

Reading never gives up on a damaged file: every line that cannot be used is
reported with its line number and reason and left in the file. A record a
writer split over several lines (raw newlines inside its strings) is read
whole (:func:`rejoin_split`; beyond pi, which drops the pieces). Only a file
whose first record is not a session header is refused
(:class:`SessionFileError`), where pi would truncate it.

Writing is append-only: each entry is one ``write`` of its complete line to a
file opened for appending, under an exclusive ``fcntl`` lock. Rewrites
(migration, repair) go through :func:`atomic_rewrite`: a temp file in the same
directory, fsync, a backup hard link of the original, rename, fsync of the
directory.

The package re-exports its public names (and the private ones other
modules of pi_session use); the modules own:

- :mod:`.model`: modes, :class:`Durability`, :class:`SessionFileError`,
  :class:`LineProblem`, :class:`ParsedLine`;
- :mod:`.lines`: one line: parsing, recovery of damaged lines, rejoining
  split records;
- :mod:`.scan`: the one line scanner (:class:`LineScanner`,
  :func:`scan_lines`): every line classified once, for reading, checking
  and repairing;
- :mod:`.decode`: the memory-saving (key-sharing) form of decoded records;
- :mod:`.lazy`: the lazy session index (:class:`EntryStore`,
  :class:`LazyRecords`, the lazy :class:`~pi_session.entries.source.EntrySource`,
  :class:`LazyById`) of ``read_session_file(lazy=True)``;
- :mod:`.access`: whether a path can be read as a session file and why
  not (:func:`session_path_problem`, :func:`is_regular_mode`);
- :mod:`.reader`: :func:`read_session_file`, :class:`SessionFile`,
  :class:`SessionFileBuilder`, :func:`iter_lines`;
- :mod:`.read_loop`: the read loop, one method per phase;
- :mod:`.append`: appends, locking, torn tails, side files;
- :mod:`.atomic`: :func:`~.atomic.write_atomic`, the one temp-and-rename
  write, and durable-I/O primitives;
- :mod:`.rewrite`: :func:`create_file`, :func:`atomic_rewrite`, backups,
  :func:`rewrite_records`;
- :mod:`.migration`: :func:`migrate_file`;
- :mod:`.dirlock`: :func:`directory_lock`, a directory's creation lock.
"""

from __future__ import annotations

from .append import (
    AppendError,
    AppendResult,
    ConcurrentAppendError,
    LeafMovedError,
    SessionGoneError,
    SessionStamp,
    append_lines,
    append_lines_checked,
    file_stamp,
    free_side_path,
    locked_append_fd,
    write_side_file,
)
from .dirlock import directory_lock
from .atomic import OwnershipWarning, adopt_directory_owner, data_sync, ensure_dir, fsync_dir, keep_ownership, write_all, write_atomic
from .lazy import EntryStore, LazyById, LazyRecords
from .lines import NOT_JSON, Rejoiner, RecoveredLine, SplitRecord, line_record, loads_js, parse_line, recover_line, rejoin_split
from .migration import MigrationResult, migrate_file
from .model import DIR_MODE, FILE_MODE, Durability, LineProblem, ParsedLine, SessionFileError
from .access import is_regular_mode, session_path_problem
from .reader import (
    SessionFile,
    SessionFileBuilder,
    iter_lines,
    parse_session_entries,
    read_session_file,
    read_session_lines,
    scan_session_file,
)
from .rewrite import atomic_rewrite, backup_path, create_file, rewrite_records, rewritten_lines
from .scan import LineScanner, ScannedLine, ScanStatus, scan_lines

__all__ = [
    "Durability",
    "LineProblem",
    "ParsedLine",
    "SessionFileError",
    "SessionFile",
    "EntryStore",
    "LazyRecords",
    "LazyById",
    "parse_line",
    "recover_line",
    "RecoveredLine",
    "rejoin_split",
    "Rejoiner",
    "loads_js",
    "NOT_JSON",
    "line_record",
    "is_regular_mode",
    "SplitRecord",
    "parse_session_entries",
    "read_session_file",
    "session_path_problem",
    "read_session_lines",
    "iter_lines",
    "SessionFileBuilder",
    "scan_session_file",
    "LineScanner",
    "ScannedLine",
    "ScanStatus",
    "scan_lines",
    "append_lines",
    "append_lines_checked",
    "AppendResult",
    "AppendError",
    "ConcurrentAppendError",
    "LeafMovedError",
    "SessionGoneError",
    "SessionStamp",
    "file_stamp",
    "write_side_file",
    "free_side_path",
    "create_file",
    "atomic_rewrite",
    "migrate_file",
    "MigrationResult",
    "backup_path",
    "FILE_MODE",
    "DIR_MODE",
    "ensure_dir",
    "adopt_directory_owner",
    "fsync_dir",
    "data_sync",
    "write_all",
    "write_atomic",
    "OwnershipWarning",
    "keep_ownership",
    "locked_append_fd",
    "directory_lock",
]
