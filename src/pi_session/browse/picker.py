"""The session picker of ``pi-session browse`` (no session given): the
sessions of this directory or of every project, newest first, with the
columns of ``pi-session ls`` and a search: ids, cwds, names and first
messages at once, and every session's whole text through the search index
(:func:`pi_session.browse.actions.index_hits`, in a thread); a session
found so opens with the cursor on the hit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Input, Static

from ..render.terminal import fit_cells_end, one_line, sanitize
from . import actions
from .rows import matching
from .session import SessionScreen
from .keys import OwnKeysFirst

if TYPE_CHECKING:
    from .app import BrowseApp

__all__ = ["PickerScreen", "session_cells"]

_FIXED = (("modified", 19), ("id", 13), ("msgs", 5))
_CWD_WIDTH = 20


def _search_text(info: dict[str, Any]) -> str:
    return f"{info.get('id') or ''}\n{info.get('cwd') or ''}\n{info.get('name') or ''}\n{info.get('firstMessage') or ''}"


def session_cells(info: dict[str, Any], all_projects: bool, title_width: int) -> list[Any]:
    """The cells of one session row: modified time, the id's first 13
    characters (unlike ``pi-session ls``, which never cuts it: here a
    session is opened by selecting its row, and the search matches names
    and first messages), message count, the cwd (all projects only; its end
    when long), and the name (bold) or first message."""
    cells: list[Any] = [
        sanitize(str(info.get("modified", ""))[:19].replace("T", " ")),
        Text(sanitize(str(info.get("id", ""))[:13]), style="dim"),
        Text(str(info.get("messageCount", "")), justify="right"),
    ]
    if all_projects:
        cwd = sanitize(str(info.get("cwd", "")))
        cells.append(fit_cells_end(cwd, _CWD_WIDTH))  # its end, in terminal cells
    name = info.get("name")
    cells.append(
        Text(one_line(str(name), title_width), style="bold") if name else Text(one_line(str(info.get("firstMessage", "")), title_width))
    )
    return cells


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
        self.app.call_from_thread(self._set_title, f"loading the sessions of {self._where()}…")
        with self.browse_app.reporting():
            infos = actions.list_sessions(self.browse_app.cwd, all_projects=self.all_projects, store=self.browse_app.store)
            self.app.call_from_thread(self._loaded, infos)

    def _set_title(self, text: str) -> None:
        self.query_one("#title", Static).update(Text(sanitize(text), no_wrap=True, overflow="ellipsis"))

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
        fixed = [*_FIXED, *((("cwd", _CWD_WIDTH),) if self.all_projects else ())]
        title_width = max(12, width - sum(w + 2 for _n, w in fixed) - 2)
        for name, column_width in fixed:
            table.add_column(name, width=column_width, key=name)
        table.add_column("name / first message", width=title_width, key="title")
        for info in self.shown:
            table.add_row(*session_cells(info, self.all_projects, title_width), key=str(info.get("path")))
        count = f"{len(self.shown):,} of {len(self.infos):,}" if query.strip() else f"{len(self.infos):,}"
        toggle = "a: this directory only" if self.all_projects else "a: all projects"
        self._set_title(f"{count} {'session' if len(self.infos) == 1 else 'sessions'} · {self._where()} · {toggle}")
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
