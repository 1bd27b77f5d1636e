"""The session picker of ``pi-session browse`` (no session given): the
sessions of this directory or of every project, newest first, with the
columns of ``pi-session ls`` and a search: ids, cwds, names and first
messages at once, and every session's whole text through the search index
(:func:`pi_session.browse.actions.index_hits`, in a thread); a session
found so opens with the cursor on the hit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Input, Static

from ..core.timestamps import iso_to_ms
from ..render.terminal import SESSION_TITLE_MAX, cells, fit_cells, fit_cells_end, relative_age, sanitize, unique_prefixes
from . import actions
from .rows import matching
from .session import SessionScreen
from .keys import OwnKeysFirst

if TYPE_CHECKING:
    from .app import BrowseApp

__all__ = ["PickerScreen", "picker_columns"]

_CWD_WIDTH = 20
_PAD = 2  # a DataTable cell's padding, one cell either side
_TITLE_COMFORT = 30  # the title shrinks to this before the id and the time shorten (as in `ls`)
_TITLE_FLOOR = 12


def _search_text(info: dict[str, Any]) -> str:
    return f"{info.get('id') or ''}\n{info.get('cwd') or ''}\n{info.get('name') or ''}\n{info.get('firstMessage') or ''}"


def picker_columns(
    infos: list[dict[str, Any]], width: int, all_projects: bool, now_ms: int, among: list[str] | None = None
) -> tuple[list[tuple[str, int]], list[list[Any]]]:
    """The picker's table for ``width`` terminal cells: its columns (name,
    width in cells, each cell padded by one more either side) and one row of
    cells per session of ``infos`` (pi ``SessionInfo`` dicts).

    The columns of ``pi-session ls``: modified, id, msgs, cwd (all projects
    only, its end), name (bold) or first message, cut with ``…``. Short of
    room for 30 cells of title, as ``ls`` does: each id becomes its
    shortest unique prefix among ``infos`` and the ids ``among`` (the
    sessions a search left out; 8 characters or more), then the
    time an age as pi's picker writes it (``3h``, ``2d``); the title never
    gets under 12 cells. Pure but for sanitizing."""
    ids = [sanitize(str(info.get("id", ""))) for info in infos]
    stamps = [sanitize(str(info.get("modified", ""))[:19].replace("T", " ")) for info in infos]
    ages = [relative_age(iso_to_ms(info.get("modified")), now_ms) for info in infos]
    titles = [(bool(info.get("name")), " ".join(sanitize(str(info.get("name") or info.get("firstMessage") or "")).split())) for info in infos]
    counts = [str(info.get("messageCount", "")) for info in infos]
    cwds = [sanitize(str(info.get("cwd", ""))) for info in infos]

    def natural(head: str, column: list[str]) -> int:
        return max([cells(head), *(cells(c) for c in column)])

    title_natural = min(SESSION_TITLE_MAX, natural("name / first message", [t for _n, t in titles]))
    want = min(title_natural, _TITLE_COMFORT)
    cwd_w = min(_CWD_WIDTH, natural("cwd", cwds)) if all_projects else 0
    shown_ids, times = ids, stamps

    def room() -> int:
        fixed = [natural("id", shown_ids), natural("modified" if times is stamps else "age", times), natural("msgs", counts)]
        fixed += [cwd_w] if all_projects else []
        return width - sum(w + _PAD for w in fixed) - _PAD

    if room() < want:
        short = unique_prefixes([str(info.get("id", "")) for info in infos], among or ())
        shown_ids = [sanitize(short.get(str(info.get("id", "")), str(info.get("id", "")))) for info in infos]
    if room() < want:
        times = ages
    title_w = max(min(_TITLE_FLOOR, title_natural), min(title_natural, room()), 1)
    columns = [("modified" if times is stamps else "age", natural("modified" if times is stamps else "age", times)),
               ("id", natural("id", shown_ids)), ("msgs", natural("msgs", counts))]
    if all_projects:
        columns.append(("cwd", cwd_w))
    columns.append((fit_cells("name / first message", title_w), title_w))
    rows = []
    for i, (named, title) in enumerate(titles):
        row: list[Any] = [times[i], Text(shown_ids[i], style="dim"), Text(counts[i], justify="right")]
        if all_projects:
            row.append(fit_cells_end(cwds[i], cwd_w))  # its end, in terminal cells
        row.append(Text(fit_cells(title, title_w), style="bold" if named else ""))
        rows.append(row)
    return columns, rows


class PickerScreen(OwnKeysFirst):
    """Pick a session; Enter opens it in a :class:`SessionScreen`."""

    DEFAULT_CSS = """
    PickerScreen #title { height: 1; background: $primary; color: $text; padding: 0 1; }
    PickerScreen #query { height: 3; }
    PickerScreen DataTable { height: 1fr; }
    PickerScreen #empty { height: auto; padding: 1 2; display: none; }
    PickerScreen.empty #empty { display: block; }
    """
    BINDINGS = [
        Binding("a", "toggle_all", "This dir / all"),
        Binding("slash", "focus_search", "Search"),
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("q", "app.quit", "Quit"),
        Binding("escape", "clear_search", "Clear search", show=False),
    ]

    def __init__(self, *, all_projects: bool = False) -> None:
        super().__init__()
        self.all_projects = all_projects
        self.infos: list[dict[str, Any]] = []
        self.shown: list[dict[str, Any]] = []
        self.hits: dict[str, str | None] = {}  # session location -> entry of its best index hit
        self.hits_for = ""  # the query self.hits answer

    @property
    def browse_app(self) -> BrowseApp:
        """The app, with its options and error reporting."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield Input(placeholder="search ids, projects, names and all text (/)", id="query")
        yield Static(id="empty")
        table: DataTable[Any] = DataTable(cursor_type="row", zebra_stripes=True, id="sessions")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#sessions", DataTable).focus()
        self.load()

    def _where(self) -> str:
        return "all projects" if self.all_projects else self.browse_app.cwd

    @work(thread=True, exclusive=True, group="list", exit_on_error=False)
    def load(self) -> None:
        """List the sessions in a thread (a large agent dir takes a while)."""
        self.app.call_from_thread(self._set_title, "loading the sessions of ", "…")
        with self.browse_app.reporting():
            infos = actions.list_sessions(self.browse_app.cwd, all_projects=self.all_projects, store=self.browse_app.store)
            self.app.call_from_thread(self._loaded, infos)

    def _set_title(self, before: str, after: str = "") -> None:
        """The title bar: ``before``, the directory (or "all projects"),
        ``after``, on one line of the screen's width: a long directory keeps
        its end, anything still too long ends in ``…``."""
        width = max(10, self.size.width - 2)  # the bar's padding
        where = sanitize(self._where())
        where = fit_cells_end(where, max(12, width - cells(before) - cells(after)))
        self.query_one("#title", Static).update(Text(fit_cells(before + where + after, width), no_wrap=True, overflow="ellipsis"))

    def _loaded(self, infos: list[dict[str, Any]]) -> None:
        self.infos = infos
        self.refill()

    def refill(self) -> None:
        """Show the sessions matching the search, newest first."""
        query = self.query_one("#query", Input).value
        self.shown = matching(self.infos, query, _search_text)
        if query.strip() and self.hits and self.hits_for == query:
            local = {str(info.get("path")) for info in self.shown}
            found = [info for info in self.infos if str(info.get("path")) in self.hits or str(info.get("path")) in local]
            self.shown = found
        table = self.query_one("#sessions", DataTable)
        table.clear(columns=True)
        width = max(40, self.size.width - 2)
        columns, rows = picker_columns(self.shown, width, self.all_projects, int(time.time() * 1000),
                                       among=[str(info.get("id", "")) for info in self.infos])
        for n, (name, column_width) in enumerate(columns):
            table.add_column(name, width=column_width, key="title" if n == len(columns) - 1 else name)
        for info, row in zip(self.shown, rows):
            table.add_row(*row, key=str(info.get("path")))
        count = f"{len(self.shown):,} of {len(self.infos):,}" if query.strip() else f"{len(self.infos):,}"
        toggle = "a: this directory only" if self.all_projects else "a: all projects"
        self._set_title(f"{count} {'session' if len(self.infos) == 1 else 'sessions'} · ", f" · {toggle}")
        empty = self.query_one("#empty", Static)
        if not self.shown:
            empty.update(Text("No session matches the search." if self.infos else f"No sessions in {sanitize(self._where())}. Press a for all projects."))
        self.set_class(not self.shown, "empty")

    def on_resize(self) -> None:
        if self.infos:
            self.refill()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "query":
            self.refill()
            self.search_index(event.value)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def search_index(self, query: str) -> None:
        """Search the sessions' whole text through the index (a thread: a
        first search indexes every session)."""
        with self.browse_app.reporting():
            hits = actions.index_hits(query, self.browse_app.cwd, all_projects=self.all_projects, store=self.browse_app.store)
            self.app.call_from_thread(self._searched, query, hits)

    def _searched(self, query: str, hits: dict[str, str | None]) -> None:
        if query != self.query_one("#query", Input).value:
            return  # an older query's answer
        self.hits, self.hits_for = hits, query
        self.refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#sessions", DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.open(Path(event.row_key.value))

    def open(self, path: Path) -> None:
        """Show one session; back here when it is closed."""
        def back(_result: None) -> None:
            self.load()

        at = self.hits.get(str(path)) if self.hits_for == self.query_one("#query", Input).value else None
        self.app.push_screen(SessionScreen(path, from_picker=True, at=at), back)

    def action_toggle_all(self) -> None:
        self.all_projects = not self.all_projects
        self.load()

    def action_focus_search(self) -> None:
        self.query_one("#query", Input).focus()

    def action_clear_search(self) -> None:
        query = self.query_one("#query", Input)
        if query.value:
            query.value = ""
        self.query_one("#sessions", DataTable).focus()

    def action_reload(self) -> None:
        self.load()
