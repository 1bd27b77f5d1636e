"""Every kind of problem pi-session reports about a session file, in one
place: :data:`ProblemKind`, the ``kind`` of
:class:`pi_session.storage.LineProblem` (damaged lines),
:class:`pi_session.tree.TreeProblem` (the parentId tree) and
:class:`pi_session.repair.Problem` (``check``). Kind names are stable:
they appear in ``pi-session check --json`` output."""

from __future__ import annotations

from typing import Literal, get_args

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
