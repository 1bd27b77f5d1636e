"""Every problem pi-session reports about a session file, in one place:
:data:`ProblemKind` and :class:`Problem`, the base of
:class:`pi_session.storage.LineProblem` (damaged lines),
:class:`pi_session.session.tree.TreeProblem` (the parentId tree) and
:class:`pi_session.check.repair.CheckProblem` (``check``), with the one
:meth:`Problem.format` and :meth:`Problem.to_json`. Kind names are stable:
they appear in ``pi-session check --json`` output."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, get_args

from ..entries.records import StrPath

__all__ = ["GROUP_RUN", "PROBLEM_KINDS", "CheckProblem", "Problem", "ProblemKind", "grouped_problems"]

ProblemKind = Literal[
    # one line (storage): skipped or recovered
    "blank",
    "invalid-json",
    "nul-bytes",
    "invalid-utf8",
    "bom",
    "crlf",
    "glued",
    "split-record",
    "torn-tail",
    "no-newline",
    # a record that cannot be an entry
    "not-object",
    "no-type",
    "no-id",
    "extra-header",
    # the tree
    "duplicate-id",
    "cycle",
    "self-parent",
    "orphan",
    "label-target-missing",
    "compaction-first-kept-off-path",
    # the shape of records (check; never fixed)
    "bad-header",
    "unknown-version",
    "bad-timestamp",
    "bad-message",
    "unknown-role",
    "bad-content",
    "bad-field",
    "bad-context-edit",
    "empty",
    # warnings of check (not problems of the file)
    "unknown-type",
    "idle-context-edit",
    "lone-surrogate",
    # beside the file
    "leftover-temp",
]
"""The kind of a problem (see the module docstring); one ``-``-separated
lowercase name."""

PROBLEM_KINDS: frozenset[str] = frozenset(get_args(ProblemKind))
"""Every :data:`ProblemKind`, for checks at run time."""


@dataclass(frozen=True)
class Problem:
    """One problem of a session file.

    Attributes:
        line: 1-based line number; None (or 0) when the problem has no line
            (a file-level problem, an entry not read from a file).
        kind: a :data:`ProblemKind`.
        message: what is wrong, one line.

    Subclasses add their own fields and name, in :attr:`JSON_FIELDS`, the
    ones :meth:`to_json` writes after the three above.
    """

    line: int | None
    kind: ProblemKind
    message: str

    JSON_FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """``(attribute, JSON key)`` of the fields :meth:`to_json` adds."""

    def format(self, path: StrPath | None) -> str:
        """``<path>:<line>: <message>``, or ``<path>: <message>`` without a
        line (``<session>`` when ``path`` is None or empty)."""
        where = path or "<session>"
        return f"{where}:{self.line}: {self.message}" if self.line else f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """``{"line", "kind", "message", ...}`` then the subclass's
        :attr:`JSON_FIELDS`; ``line`` is null when there is none (0 counts
        as none)."""
        out: dict[str, Any] = {"line": self.line or None, "kind": self.kind, "message": self.message}
        for attribute, key in self.JSON_FIELDS:
            out[key] = getattr(self, attribute)
        return out


@dataclass(frozen=True)
class CheckProblem(Problem):
    """One problem :func:`pi_session.check.repair.check_session` reports (a
    :class:`Problem`).

    Attributes:
        line: 1-based line number (None for a problem of the whole file).
        kind: a :data:`ProblemKind`: storage kinds ``blank``, ``invalid-json``, ``nul-bytes``,
            ``invalid-utf8``, ``bom``, ``crlf``, ``glued``, ``split-record``
            (reported on its first line, the message names the range
            ``lines 4-6``), ``torn-tail``, ``no-newline``, ``not-object``, ``no-type``, ``no-id``,
            ``extra-header``; tree kinds ``duplicate-id``, ``cycle``,
            ``self-parent``, ``orphan``, ``label-target-missing``,
            ``compaction-first-kept-off-path``; structure warnings (never
            fixable) ``bad-header`` (cwd/timestamp not a string or missing,
            version not a number), ``unknown-version`` (newer than 3),
            ``bad-timestamp`` (not an ISO date), ``bad-message`` (a message
            entry's message is not an object), ``unknown-role``,
            ``bad-content`` (content of the wrong type for the role),
            ``bad-context-edit`` (a pi 1.6 context edit without a string
            targetId or a valid replacement), ``empty`` (a 0-byte file);
            warnings (in :attr:`pi_session.check.repair.CheckReport.warnings`, not
            problems) ``unknown-type`` (an entry type this tool does not
            know: kept, left out of the context), ``idle-context-edit`` (an
            edit whose target is missing, itself or not editable: it changes
            nothing), ``lone-surrogate``; file kind ``leftover-temp`` (a temp
            file of an interrupted rewrite beside the session; ``line`` is
            None).
        message: one line saying what is wrong.
        fixable: True when :func:`pi_session.check.repair.repair_session` fixes it.
        entry_id: the entry concerned (tree problems).

    JSON (:meth:`Problem.to_json`): ``{"line", "kind", "message", "fixable",
    "entryId"}``.
    """

    fixable: bool
    entry_id: str | None = None

    JSON_FIELDS: ClassVar[tuple[tuple[str, str], ...]] = (("fixable", "fixable"), ("entry_id", "entryId"))


P = TypeVar("P", bound="Problem")

GROUP_RUN = 3
""":func:`grouped_problems`: the shortest run of alike problems on
consecutive lines shown as one line."""


def grouped_problems(problems: Sequence[P], path: StrPath | None) -> Iterator[tuple[str, P]]:
    """The text lines ``pi-session check`` prints for ``problems`` (in line
    order), each with the problem it stands for (the first of a run): a
    run of at least :data:`GROUP_RUN` problems of the same kind, message
    and fixability on consecutive lines is one line,
    ``<path>:<first>-<last>: <message> (<n> lines)`` (a file saved with
    CRLF line ends has one such problem per line), whatever other problems
    those lines also have (they keep lines of their own); the others are
    :meth:`Problem.format`. ``--json`` keeps every problem.

    Returns:
        ``(text, problem)`` pairs, ordered by their (first) line.
    """
    runs: list[list[P]] = []
    open_runs: dict[tuple[Any, ...], list[P]] = {}  # key -> the run its next line would extend
    for problem in problems:
        key = (problem.kind, problem.message, getattr(problem, "fixable", None))
        run = open_runs.get(key) if problem.line else None
        if run is not None and problem.line == (run[-1].line or 0) + 1:
            run.append(problem)
            continue
        run = [problem]
        runs.append(run)
        if problem.line:
            open_runs[key] = run
    items: list[tuple[int, int, str, P]] = []
    for order, run in enumerate(runs):
        first = run[0]
        if len(run) >= GROUP_RUN:
            where = path or "<session>"
            items.append((first.line or 0, order, f"{where}:{first.line}-{run[-1].line}: {first.message} ({len(run):,} lines)", first))
        else:
            items.extend((p.line or 0, order, p.format(path), p) for p in run)
    items.sort(key=lambda item: (item[0], item[1]))
    for _line, _order, text, problem in items:
        yield text, problem
