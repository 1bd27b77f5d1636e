"""JavaScript's ``undefined`` in Python: one object for a key that is absent
or an argument that was not given, as opposed to ``null``/None."""

from __future__ import annotations

from typing import ClassVar, Final

__all__ = ["UNDEFINED", "Undefined"]


class Undefined:
    """The type of :data:`UNDEFINED`, JavaScript's ``undefined``: a key that
    is absent, or an argument that was not given (as opposed to an explicit
    ``null``/None). It has one instance; test with ``value is UNDEFINED``.
    Copying or pickling gives the same object."""

    __slots__ = ()
    _instance: ClassVar[Undefined | None] = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Final[Undefined] = Undefined()
"""The one "undefined/omitted" object of the package (see :class:`Undefined`):
``pi_session.UNSET``, ``SessionManager``'s ``OMITTED`` and
``timestamps.MISSING`` are this object."""
