"""``BrowseApp``: the Textual application behind ``pi-session browse``.

It opens the picker (no session given) or one session, and is the safety
net of the browser: an action's error becomes a notification
(:meth:`BrowseApp.reporting`), Ctrl-C quits from anywhere, and an
unexpected error ends the app with the terminal restored and a one-line
message instead of a traceback (``PI_SESSION_DEBUG=1`` keeps Textual's
traceback).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from ..operations import OperationError
from .summaries import SummarizerConfig

__all__ = ["BrowseApp"]


class BrowseApp(App[None]):
    """Browse pi sessions.

    Args:
        session: a session file to open at once; None shows the picker.
        cwd: the project directory whose sessions the picker lists first
            (default: the process cwd); exports go there too.
        all_projects: start the picker on every project's sessions.
        summarizer: the summarizer for branch summaries and compactions.
        store: the files store (``--store DIR``) whose sessions the picker
            lists; None: pi's sessions directory.
    """

    TITLE = "pi-session browse"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        session: Path | None = None,
        *,
        cwd: str | None = None,
        all_projects: bool = False,
        summarizer: SummarizerConfig | None = None,
        store: Any = None,
        at: str | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.at = at
        self.session = session
        self.cwd = cwd or os.getcwd()
        self.all_projects = all_projects
        self.summarizer_config = summarizer or SummarizerConfig()
        self.crash: BaseException | None = None

    def on_mount(self) -> None:
        from .picker import PickerScreen
        from .session import SessionScreen

        if self.session is not None:
            self.push_screen(SessionScreen(self.session, at=self.at))
        else:
            self.push_screen(PickerScreen(all_projects=self.all_projects))

    def say_error(self, message: str) -> None:
        """Show a one-line error (plain text) for a while."""
        self.notify(message, severity="error", markup=False, timeout=10)

    @contextmanager
    def reporting(self) -> Iterator[None]:
        """Run an action: an :class:`OperationError` becomes an error
        notification, any other error one naming it ("internal error");
        the app keeps running. Cancellation passes through."""
        try:
            yield
        except OperationError as exc:
            self.say_error(str(exc))  # notify is thread-safe
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            message = " ".join(f"internal error: {type(exc).__name__}: {exc}".split())
            if os.environ.get("PI_SESSION_DEBUG", "") not in ("", "0"):
                raise
            self.say_error(message)

    def action_show_keys(self) -> None:
        """Show or hide the panel of every key of the current screen."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error ends the app (Textual's rule) with the terminal
        restored; keep it for a one-line message instead of Textual's
        traceback with local variables (which would print session text)."""
        self.crash = error
        super()._handle_exception(error)
        if os.environ.get("PI_SESSION_DEBUG", "") in ("", "0"):
            renderables = getattr(self, "_exit_renderables", None)
            if isinstance(renderables, list):
                renderables.clear()
