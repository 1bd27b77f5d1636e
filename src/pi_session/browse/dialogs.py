"""Dialogs of ``pi-session browse``: confirm, ask for a text, show progress.

Each is a modal screen sized for an 80x24 terminal; Escape cancels. Text
from sessions is shown as plain text (no markup is interpreted).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, LoadingIndicator, Static

__all__ = ["ConfirmDialog", "InputDialog", "ProgressDialog"]

_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 76; max-width: 100%; height: auto; max-height: 100%;
    border: thick $primary; background: $panel; padding: 0 1;
}}
{name} .title {{ text-style: bold; width: 100%; }}
{name} .body {{ width: 100%; margin: 1 0 0 0; }}
{name} Horizontal {{ height: auto; width: 100%; align: right middle; margin: 1 0 0 0; }}
{name} Button {{ margin: 0 0 0 1; min-width: 10; }}
"""


class ConfirmDialog(ModalScreen[str | None]):
    """A question with buttons; dismissed with the pressed button's id, or
    None on Escape.

    Args:
        title: one line.
        body: the explanation (plain text).
        buttons: ``(id, label, variant)`` triples, the first is focused;
            variant is a Textual button variant (``"primary"``, ``"default"``,
            ``"warning"``, ...).
    """

    DEFAULT_CSS = _CSS.format(name="ConfirmDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, body: str, buttons: Sequence[tuple[str, str, str]]) -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._buttons = list(buttons)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self._title), classes="title")
            yield Static(Text(self._body), classes="body")
            with Horizontal():
                for button_id, label, variant in self._buttons:
                    yield Button(label, id=button_id, variant=variant)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        if self._buttons:
            self.query_one(f"#{self._buttons[0][0]}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class InputDialog(ModalScreen[str | None]):
    """Ask for one line of text; dismissed with the text (Enter or the OK
    button) or None (Escape or Cancel)."""

    DEFAULT_CSS = _CSS.format(name="InputDialog") + "InputDialog Input { margin: 1 0 0 0; }"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, body: str, value: str = "", *, ok: str = "OK", placeholder: str = "") -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._value = value
        self._ok = ok
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self._title), classes="title")
            if self._body:
                yield Static(Text(self._body), classes="body")
            yield Input(self._value, placeholder=self._placeholder, id="value")
            with Horizontal():
                yield Button(self._ok, id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#value", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(self.query_one("#value", Input).value if event.button.id == "ok" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ProgressDialog(ModalScreen[None]):
    """A running job: what it does, a spinner, the seconds so far and a
    Cancel button (or Escape), which calls ``on_cancel``. The caller closes
    it with :meth:`close`."""

    DEFAULT_CSS = _CSS.format(name="ProgressDialog") + "ProgressDialog LoadingIndicator { height: 1; margin: 1 0 0 0; }"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, on_cancel: Callable[[], object] | None = None) -> None:
        super().__init__()
        self._what = what
        self.on_cancel = on_cancel
        self._started = time.monotonic()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self._what), classes="title")
            yield LoadingIndicator()
            yield Static(Text("0 s"), classes="body", id="elapsed")
            with Horizontal():
                yield Button("Cancel", id="cancel", variant="warning")

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        seconds = int(time.monotonic() - self._started)
        self.query_one("#elapsed", Static).update(Text(f"{seconds} s (Escape cancels; nothing is written then)"))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()

    def action_cancel(self) -> None:
        if self.on_cancel is not None:
            self.on_cancel()

    def close(self) -> None:
        """Remove the dialog if it is still shown."""
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)
