"""The errors of the workflow layer (one line each, for the user)."""

from __future__ import annotations

from ..errors import PiSessionError
from ..storage import LeafMovedError  # re-exported: the leaf-moved error of the workflows too

__all__ = ["OperationError", "LeafMovedError", "OutputExists", "one_line"]


class OperationError(PiSessionError):
    """A workflow failed; ``str(exc)`` is one line for the user, naming the
    session or file. Nothing was written unless the docstring of the
    operation says otherwise."""


class OutputExists(OperationError):
    """The output file of an export exists (and may be replaced: call again
    with ``overwrite=True``)."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(text.split())
