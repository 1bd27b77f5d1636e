"""Checking session files (beyond pi): :func:`check_session` lists every
problem of a session file with its line number, reading the file once:
damaged lines (:mod:`pi_session.check.lines`), records and the tree
(:mod:`pi_session.check.records`) and leftover temp files
(:mod:`pi_session.storage.temps`). :mod:`pi_session.check.repair` fixes what is fixable."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .lines import LineAction, LineClassifier
from .records import record_problems
from ..storage.problems import CheckProblem, ProblemKind
from ..entries.records import StrPath
from ..storage import SessionFile, scan_session_file
from ..storage.temps import temp_problems

__all__ = ["CheckReport", "WARNING_KINDS", "check_report", "check_session", "check_with_actions"]


@dataclass
class CheckReport:
    """What :func:`check_session` found.

    Attributes:
        path: the file.
        problems: every problem, by line.
        notes: facts that are not problems (an old version, an empty file).
        warnings: things worth knowing that are not problems of the file and
            do not make it not ``ok``: ``lone-surrogate`` (a string holds
            half of a UTF-16 surrogate pair, e.g. an emoji a tool cut in
            two; pi reads and sends it, pi-session sends U+FFFD in its
            place; never changed, not even by repair), by line.
        line_count: lines in the file; entry_count: usable entries;
        version: the header's version (0 for an empty file); size: bytes.
    """

    path: Path
    problems: list[CheckProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[CheckProblem] = field(default_factory=list)
    line_count: int = 0
    entry_count: int = 0
    version: int = 0
    size: int = 0

    @property
    def ok(self) -> bool:
        """True when there is no problem at all."""
        return not self.problems

    @property
    def fixable(self) -> list[CheckProblem]:
        """The problems :func:`repair_session` fixes."""
        return [p for p in self.problems if p.fixable]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, like the rest of the CLI)."""
        return {
            "path": str(self.path),
            "ok": self.ok,
            "version": self.version,
            "lines": self.line_count,
            "entries": self.entry_count,
            "sizeBytes": self.size,
            "problems": [p.to_json() for p in self.problems],
            "warnings": [w.to_json() for w in self.warnings],
            "notes": list(self.notes),
        }


WARNING_KINDS: frozenset[ProblemKind] = frozenset(("unknown-type", "idle-context-edit"))
"""Kinds :func:`check_session` reports as warnings: records pi reads without
harm (an entry type from a newer pi, an edit that changes nothing)."""


def check_session(path: StrPath) -> CheckReport:
    """Find every problem of a session file; never modifies it. The file is
    read once (:func:`pi_session.storage.scan_session_file`).

    Args:
        path: the ``.jsonl`` file.

    Returns:
        A :class:`CheckReport` (problems sorted by line; file-level ones first).

    Raises:
        SessionFileError: the file cannot be read, is not a regular file, or
            its first record is not a session header.
    """
    return check_with_actions(Path(path))[0]


def check_with_actions(p: Path) -> tuple[CheckReport, dict[int, LineAction], SessionFile]:
    """:func:`check_session`, also returning repair's actions and the
    session as read."""
    warnings: list[CheckProblem] = []
    classifier = LineClassifier(p, warnings)
    sf = scan_session_file(p, classifier.take, migrate=True)
    return check_report(p, sf, classifier, warnings), classifier.actions, sf


def check_report(p: Path, sf: SessionFile, classifier: LineClassifier, warnings: list[CheckProblem]) -> CheckReport:
    """The :class:`CheckReport` of a session read (``sf``) and classified
    line by line (``classifier``), plus leftover temp files beside it."""
    tree_problems, entry_count, version, notes = record_problems(sf)
    # what pi reads without harm is a warning, not a problem of the file
    warnings.extend(pr for pr in tree_problems if pr.kind in WARNING_KINDS)
    warnings.sort(key=lambda pr: pr.line or 0)
    tree_problems = [pr for pr in tree_problems if pr.kind not in WARNING_KINDS]
    if sf.size == 0:
        tree_problems.append(CheckProblem(None, "empty", "empty file (0 bytes): no session in it yet (pi would start a new one in it)", False))
        notes = [n for n in notes if not n.startswith("empty file")]
    problems = sorted(temp_problems(p) + classifier.problems + tree_problems, key=lambda pr: (pr.line or 0))
    return CheckReport(
        path=p,
        problems=problems,
        notes=notes,
        warnings=warnings,
        line_count=sf.line_count,
        entry_count=entry_count,
        version=version,
        size=sf.size,
    )
