"""Checking and repairing session files (beyond pi).

:func:`check_session` lists every problem of a session file with its line
number: damaged lines (blank, not JSON, NUL runs, invalid UTF-8, a BOM, CRLF
line ends, a truncated record with a complete one glued after it, a record
split over several lines by raw newlines in its strings, a torn last line,
records that cannot be entries) and tree problems (duplicate ids,
parentId cycles and self-parents, orphans, labels of missing entries,
compactions whose first kept entry is not on their path).

:func:`repair_session` fixes the storage problems and nothing else:

- every valid line is written back byte for byte;
- a recoverable line (BOM, NUL runs, CRLF, invalid UTF-8, glued records, a
  complete last line without its newline) is written clean;
- a record split over several lines (``split-record``, see
  :func:`pi_session.storage.rejoin_split`) is written on one line, its
  newlines escaped; its pieces never go to the side file;
- every other line (and the truncated part of a glued line) is removed from
  the file and kept, byte for byte, in a side file ``<file>.rejected-<n>``;
- the rewrite is atomic (:func:`pi_session.storage.atomic_rewrite`) and the
  original is kept as ``<file>.repair.bak``.

A temp file left beside the session by an interrupted rewrite or creation
(``.<file>.<8 hex>.tmp``) is reported as ``leftover-temp``; repair deletes
it when that cannot lose anything: when it is a second name of the session
file itself, or when it has been untouched for 10 minutes and either starts
with a header of the same session or holds only the start of the session's
own first line (an unfinished rewrite: the session file was never replaced,
so it is whole). Any other temp file is reported and kept.

Tree problems are reported, never "fixed": deciding which of two entries
with one id is right, or where a cycle should be cut, is the user's call
(pi-session's reader already cuts cycles safely at read time).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .report import CheckReport, check_report, check_session, check_with_actions
from .lines import LineClassifier
from ..storage.problems import CheckProblem
from ..entries.records import StrPath
from ..storage import (
    LineScanner,
    ScannedLine,
    SessionFileBuilder,
    SessionFileError,
    atomic_rewrite,
    iter_lines,
    write_side_file,
)
from ..storage.temps import STALE_TEMP_SECONDS, leftover_temps, temp_problems

Problem = CheckProblem
"""The name :class:`pi_session.storage.problems.CheckProblem` had here (kept for
existing imports)."""

__all__ = [
    "CheckProblem",
    "CheckReport",
    "Problem",
    "RepairResult",
    "STALE_TEMP_SECONDS",
    "check_session",
    "leftover_temps",
    "repair_session",
]


@dataclass
class RepairResult:
    """What :func:`repair_session` did.

    Attributes:
        path: the file.
        changed: False when there was nothing to fix (nothing written).
        backup: ``<file>.repair.bak`` holding the original bytes, or None.
        rejected: the side file holding removed lines and fragments, or None.
        recovered_lines: line numbers (of the original) written back clean.
        removed_lines: line numbers (of the original) removed from the file.
        before: the check before; after: the check of the repaired file
            (its problems are what repair does not fix).
        removed_temps: leftover temp files deleted (see the module docstring).
    """

    path: Path
    changed: bool
    backup: Path | None
    rejected: Path | None
    recovered_lines: list[int]
    removed_lines: list[int]
    before: CheckReport
    after: CheckReport
    removed_temps: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": str(self.path),
            "changed": self.changed,
            "backup": str(self.backup) if self.backup else None,
            "rejected": str(self.rejected) if self.rejected else None,
            "recoveredLines": self.recovered_lines,
            "removedLines": self.removed_lines,
            "removedTemps": [str(t) for t in self.removed_temps],
            "before": self.before.to_json(),
            "after": self.after.to_json(),
        }


def _free_rejected_suffix(path: Path) -> str:
    n = 1
    while os.path.lexists(path.with_name(f"{path.name}.rejected-{n}")):
        n += 1
    return f"rejected-{n}"


def repair_session(path: StrPath) -> RepairResult:
    """Fix a session file's storage problems, atomically, keeping a backup.

    Valid lines are kept byte for byte; recoverable lines are written clean;
    the bytes of every removed line (and of the truncated part of glued
    lines) go to ``<file>.rejected-<n>``, one per line, in file order; the
    original file is kept as ``<file>.repair.bak`` (a hard link, so it costs
    no space). Tree problems are left alone (see the module docstring).
    Nothing is written when there is nothing to fix.

    Returns:
        A :class:`RepairResult`.

    Raises:
        SessionFileError: unreadable or no session header (nothing written),
            or the file changed while it was being repaired (nothing
            changed; run it again).
        OSError: writing the side file or the new file failed (the original
            is untouched).
    """
    p = Path(os.path.realpath(path))  # through a symlink, the file it names is repaired
    before, actions, sf = check_with_actions(p)  # the one read of the file before the rewrite
    removed_temps: list[Path] = []
    for tmp, safe, _why in leftover_temps(p):
        if safe:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise SessionFileError(p, f"cannot delete leftover temp file {tmp.name}: {exc.strerror or exc}") from None
            removed_temps.append(tmp)
    if not actions:
        after = before
        if removed_temps:  # the file is as it was; only the temp files changed
            after = replace(before, problems=sorted(
                temp_problems(p) + [pr for pr in before.problems if pr.kind != "leftover-temp"], key=lambda pr: (pr.line or 0)
            ))
        return RepairResult(p, False, None, None, [], [], before, after, removed_temps)
    rejected_bytes = b"".join(a.rejected + b"\n" for _n, a in sorted(actions.items()) if a.rejected is not None)
    rejected: Path | None = None
    if rejected_bytes:
        rejected = write_side_file(p, _free_rejected_suffix(p), rejected_bytes)
    # the check after the repair looks at the lines as they are written
    after_warnings: list[CheckProblem] = []
    after_lines = LineClassifier(p, after_warnings)
    after_file = SessionFileBuilder(p)
    scanner = LineScanner()
    written = [0, 0]  # lines, bytes

    def check_line(scanned: ScannedLine) -> None:
        after_file.add(scanned)
        after_lines.take(scanned)

    def lines() -> Iterator[bytes]:
        for line_no, raw, _had_newline in iter_lines(p):
            action = actions.get(line_no)
            for out in (raw,) if action is None else action.out:
                written[0] += 1
                written[1] += len(out) + 1
                for scanned in scanner.feed(written[0], out, True):
                    check_line(scanned)
                yield out + b"\n"

    try:
        backup = atomic_rewrite(p, lines(), backup_tag="repair", expect_size=sf.size, expect_mtime_ns=sf.mtime_ns)
    except BaseException:
        if rejected is not None:
            try:
                os.unlink(rejected)
            except OSError:
                pass
        raise
    for scanned in scanner.finish():
        check_line(scanned)
    after_file.sf.line_count, after_file.sf.size = written
    after = check_report(p, after_file.finish(migrate=True), after_lines, after_warnings)
    return RepairResult(
        path=p,
        changed=True,
        backup=backup,
        rejected=rejected,
        recovered_lines=sorted(n for n, a in actions.items() if not a.removed),
        removed_lines=sorted(n for n, a in actions.items() if a.removed),
        before=before,
        after=after,
        removed_temps=removed_temps,
    )
