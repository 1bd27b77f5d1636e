"""The errors of the workflow layer (one line each, for the user)."""

from __future__ import annotations

from ..errors import PiSessionError
from ..storage import LeafMovedError

__all__ = ["OperationError", "LeafMoved", "OutputExists", "one_line"]


class OperationError(PiSessionError):
    """A workflow failed; ``str(exc)`` is one line for the user, naming the
    session or file. Nothing was written unless the docstring of the
    operation says otherwise."""


LeafMoved = LeafMovedError
"""The leaf-moved error of the workflows: the one
:class:`pi_session.storage.LeafMovedError` (it is a
:class:`~pi_session.errors.PiSessionError`, not an :class:`OperationError`),
raised with ``by_other_writer`` and ``what`` set."""


class OutputExists(OperationError):
    """The output file of an export exists (and may be replaced: call again
    with ``overwrite=True``)."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(text.split())
