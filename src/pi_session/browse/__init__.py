"""``pi-session browse``: look at sessions interactively (Textual).

Modules, UI apart from logic:

- :mod:`~pi_session.browse.actions` -- what the browser does to sessions
  (library calls, as the matching CLI commands make them; no UI), and
  :mod:`~pi_session.browse.summaries` -- the actions that need a
  summarizer (navigate, compact);
- :mod:`~pi_session.browse.rows` -- filters, folds, layout and search of the
  tree rows (pure);
- :mod:`~pi_session.browse.detail` -- one entry's full content (pure);
- :mod:`~pi_session.browse.entry_list` -- the tree pane widget;
- :mod:`~pi_session.browse.dialogs` -- confirm, input and progress dialogs;
- :mod:`~pi_session.browse.session`, :mod:`~pi_session.browse.picker` -- the
  two screens; :mod:`~pi_session.browse.app` -- the application.

Textual is imported only when a UI module is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import BrowseApp

__all__ = ["BrowseApp"]


def __getattr__(name: str) -> Any:
    if name == "BrowseApp":
        from .app import BrowseApp

        return BrowseApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
