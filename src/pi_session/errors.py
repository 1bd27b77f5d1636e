"""The root of every error pi-session raises on bad input or state.

Each error of the library derives from :class:`PiSessionError`, so a front
end catches one class and shows ``str(error)``: one line naming the
session, file or line. Errors that are also a builtin kind keep that kind
as a second base (``SessionExistsError`` is a ``FileExistsError``,
``QueryError`` a ``ValueError``, ``AppendError`` an ``OSError``), so code
that catches the builtin keeps working.

The tree (each module documents its own):

- ``pi_session.storage.SessionFileError``: a session file that cannot be
  used, and the append errors below it (``ConcurrentAppendError``,
  ``LeafMovedError`` — the one error for "the leaf moved off the path an
  entry was planned on", raised by appends and workflows alike —
  ``SessionGoneError``); ``pi_session.storage.AppendError`` (an ``OSError``).
- ``pi_session.stores.StoreError``: a store that cannot be opened or used,
  ``SessionNotFoundError``, ``AmbiguousSessionError``, ``SessionExistsError``.
- ``pi_session.operations.OperationError``: a workflow that failed
  (``OutputExists``).
- ``pi_session.SummarizerError``: a model call that failed.
- ``ValueError`` kinds: ``QueryError`` (search), ``SettingsError``,
  ``AllowListError`` (secrets), ``FrontmatterError`` (skills).
"""

from __future__ import annotations

__all__ = ["PiSessionError"]


class PiSessionError(Exception):
    """Bad input or state found by pi-session; ``str(error)`` is one line
    for the user. Catch this to handle every error the library raises on
    purpose (an unexpected bug raises something else)."""
