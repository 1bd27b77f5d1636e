"""The errors of the workflow layer (one line each, for the user)."""

from __future__ import annotations

from typing import Any

__all__ = ["OperationError", "LeafMoved", "OutputExists", "one_line"]


class OperationError(Exception):
    """A workflow failed; ``str(exc)`` is one line for the user, naming the
    session or file. Nothing was written unless the docstring of the
    operation says otherwise."""


class LeafMoved(OperationError):
    """An entry planned at one leaf (a compaction, a branch summary) was not
    written: the session's leaf moved, in this process or through another
    writer, onto a path that does not continue the one planned on. Nothing
    was written.

    Attributes:
        planned_leaf_id: the leaf the plan was made at.
        leaf_id: the leaf now (None: unknown or the start).
        by_other_writer: True when another writer's appends moved it (the
            session in memory is stale then: open it again).
    """

    def __init__(self, location: Any, planned_leaf_id: str | None, leaf_id: str | None, *, by_other_writer: bool, what: str = "compaction") -> None:
        super().__init__(
            f"{location}: the leaf moved from {planned_leaf_id} to {leaf_id} while the summary was being written "
            f"({'another writer changed the session' if by_other_writer else 'the session changed'}); the {what} "
            f"was planned on the old branch, so nothing was written: run it again"
        )
        self.planned_leaf_id = planned_leaf_id
        self.leaf_id = leaf_id
        self.by_other_writer = by_other_writer


class OutputExists(OperationError):
    """The output file of an export exists (and may be replaced: call again
    with ``overwrite=True``)."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(text.split())
