"""``EntryList``: the tree pane, a scrolling list of one-line rows with a
cursor, drawn with Textual's line API.

Only the rows on screen are rendered (by the ``render_row`` callback), so a
session of 100,000 entries scrolls as fast as one of ten. Rows are cropped
to the pane's width with an ellipsis, as ``pi-session tree`` crops them.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["EntryList"]


class EntryList(ScrollView, can_focus=True):
    """A list of ``count`` rows; ``render_row(index, width)`` gives a row's
    text. Posts :class:`EntryList.Highlighted` when the cursor moves."""

    COMPONENT_CLASSES = {"entry-list--cursor"}
    DEFAULT_CSS = """
    EntryList { background: $surface; overflow-x: hidden; }
    EntryList > .entry-list--cursor { background: $primary 30%; }
    EntryList:focus > .entry-list--cursor { background: $primary 60%; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        """The cursor is on row ``index``."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, render_row: Callable[[int, int], Text], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._render_row = render_row
        self.count = 0
        self._cache: dict[tuple[int, int, bool], Strip] = {}

    def set_rows(self, count: int, cursor: int = 0) -> None:
        """Show ``count`` rows (their texts are asked for again) with the
        cursor on ``cursor`` (clamped)."""
        self.count = count
        self._cache.clear()
        self.virtual_size = Size(0, count)
        self.cursor = max(0, min(cursor, count - 1))
        self.refresh()

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, self.count - 1)) if self.count else 0

    def watch_cursor(self, value: int) -> None:
        self._cache.clear()
        self._scroll_to_cursor()
        # once more after the layout: before the first one the pane has no size
        self.call_after_refresh(self._scroll_to_cursor)
        self.refresh()
        if self.count:
            self.post_message(self.Highlighted(value))

    def _scroll_to_cursor(self) -> None:
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(0, self.count)
        self.call_after_refresh(self._scroll_to_cursor)

    def action_move(self, step: int) -> None:
        self.cursor += step

    def action_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self.scrollable_content_region.height - 1)

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self.count - 1

    def on_click(self, event: Click) -> None:
        index = round(self.scroll_offset.y) + event.y
        if 0 <= index < self.count:
            self.cursor = index

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        index = round(self.scroll_offset.y) + y
        if index >= self.count or width <= 0:
            return Strip.blank(width, self.rich_style)
        selected = index == self.cursor
        key = (index, width, selected)
        strip = self._cache.get(key)
        if strip is None:
            text = self._render_row(index, width).copy()
            text.no_wrap = True
            text.truncate(width, overflow="ellipsis", pad=True)
            segments = list(text.render(self.app.console, end=""))
            base = self.rich_style
            if selected:
                base = base + self.get_component_rich_style("entry-list--cursor")
            strip = Strip(Segment.apply_style(segments, base), width).crop_extend(0, width, base)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = strip
        return strip
