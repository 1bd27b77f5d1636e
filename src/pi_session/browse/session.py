"""The session screen of ``pi-session browse``: the tree, a detail pane,
filters, search, folds, and the actions (label, name, navigate, clone,
export, compact) behind confirmation dialogs.

The screen holds no session logic: it shows rows from
:mod:`pi_session.browse.rows` and :mod:`pi_session.browse.detail`, and every
change goes through :mod:`pi_session.browse.actions`, after which the file
is read again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Input, Static

from ..render.terminal import one_line, sanitize, tree_row
from ..session.conversation import hidden_summary
from .. import operations
from ..core.text import plural
from ..session.context import applied_context_edits
from . import actions, summaries
from .detail import detail_text, entry_json, entry_search_text
from .dialogs import ConfirmDialog, InputDialog, ProgressDialog
from .entry_list import EntryList
from .keys import OwnKeysFirst
from .rows import DEFAULT_FILTER, FILTERS, Row, filtered_forest, find_match, layout_rows

if TYPE_CHECKING:
    from .app import BrowseApp

__all__ = ["SessionScreen"]

_CANCELLED = object()


class SessionScreen(OwnKeysFirst):
    """One session: tree on top, the selected entry's content below."""

    DEFAULT_CSS = """
    SessionScreen #title { height: 1; background: $primary; color: $text; padding: 0 1; }
    SessionScreen #tree { height: 1fr; min-height: 5; }
    SessionScreen #detail-pane { height: 40%; border-top: solid $primary; padding: 0 1; }
    SessionScreen.detail-max #tree { display: none; }
    SessionScreen.detail-max #detail-pane { height: 1fr; }
    SessionScreen #search { dock: bottom; display: none; }
    SessionScreen.searching #search { display: block; }
    """
    BINDINGS = [
        Binding("slash", "search", "Search"),
        Binding("n", "next_match(1)", "Next", show=False),
        Binding("N", "next_match(-1)", "Previous", show=False),
        Binding("f", "cycle_filter", "Filter"),
        Binding("1", "filter('all')", "All", show=False),
        Binding("0", "filter('conversation')", "Conversation", show=False),
        Binding("2", "filter('no-tools')", "No tool results", show=False),
        Binding("3", "filter('user')", "User messages", show=False),
        Binding("4", "filter('labelled')", "Labelled", show=False),
        Binding("space", "fold", "Fold"),
        Binding("o", "unfold_all", "Unfold all", show=False),
        Binding("enter", "toggle_detail", "Detail", show=False),
        Binding("j", "toggle_raw", "Raw JSON", show=False),
        Binding("l", "label", "Label"),
        Binding("r", "rename", "Name", show=False),
        Binding("g", "navigate", "Go here"),
        Binding("c", "clone", "Clone", show=False),
        Binding("e", "export", "Export", show=False),
        Binding("k", "compact", "Compact", show=False),
        Binding("question_mark", "app.show_keys", "Keys"),
        Binding("q", "leave", "Back"),
        Binding("escape", "leave", "Back", show=False),
    ]

    def __init__(self, path: Path, *, from_picker: bool = False, at: Any = None) -> None:
        super().__init__()
        self.path = path
        self.at = at  # the entry the cursor starts on (browse --at, a search hit), else the leaf
        self.from_picker = from_picker
        self.filter = DEFAULT_FILTER
        self.hidden: list[Any] = []  # what the filter leaves out
        self.folded: set[Any] = set()
        self.raw = False
        self.query_text = ""
        self.rows: list[Row] = []
        self._index: dict[Any, int] = {}
        self._search_cache: dict[Any, str] = {}
        self.manager: Any = None  # None until the file is read
        self.roots: list[Any] = []
        self.leaf_id: Any = None
        self.active: set[Any] = set()
        self.edits: dict[str, Any] = {}

    @property
    def browse_app(self) -> BrowseApp:
        """The app, with its options and error reporting."""
        return self.app  # type: ignore[return-value]

    # ------------------------------------------------------------------
    # layout and loading

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield EntryList(self._render_row, id="tree")
        with VerticalScroll(id="detail-pane"):
            yield Static(id="detail")
        yield Input(placeholder="search ids, labels and content (Enter: find, Escape: close)", id="search")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#title", Static).update(Text(f"reading {self.path.name}…", no_wrap=True, overflow="ellipsis"))
        self.query_one(EntryList).focus()
        self.reload(self.at, initial=True)

    def reload(self, select_id: Any = None, *, initial: bool = False) -> None:
        """Read the file again (in a thread: a large session takes seconds)
        and show it, the cursor on ``select_id`` (or the entry under the
        cursor, or the leaf)."""
        current = None if initial else self.current_id()
        self._load(select_id if select_id is not None else current, initial)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self, select_id: Any, initial: bool) -> None:
        with self.browse_app.reporting():
            try:
                manager = actions.open_read(self.path)
            except actions.OperationError as exc:
                self.app.call_from_thread(self._load_failed, str(exc), initial)
                return
            roots = manager.get_tree()
            leaf_id = manager.get_leaf_id()
            branch = manager.get_branch() if leaf_id is not None else []
            edits = applied_context_edits(branch) if branch else {}
            self.app.call_from_thread(self._loaded, manager, roots, branch, edits, select_id, initial)

    def _load_failed(self, message: str, initial: bool) -> None:
        self.browse_app.say_error(message)
        if initial:
            self.action_leave()

    def _loaded(self, manager: Any, roots: Any, branch: Any, edits: Any, select_id: Any, initial: bool) -> None:
        self.manager = manager
        self.roots = roots
        self.leaf_id = manager.get_leaf_id()
        self.active = {e.get("id") for e in branch}
        self.edits = edits
        self._search_cache.clear()
        self.rebuild(select_id if select_id is not None else self.leaf_id)
        if initial:
            for note in actions.load_notes(manager):
                self.app.notify(note, severity="warning", markup=False, timeout=8)

    def rebuild(self, select_id: Any = None) -> None:
        """Lay the rows out again (filter, folds) with the cursor on
        ``select_id``, or on its nearest shown ancestor."""
        if self.manager is None:
            return
        self.hidden = []
        self.rows = layout_rows(filtered_forest(self.roots, self.filter, leaf_id=self.leaf_id, hidden=self.hidden), self.folded)
        self._index = {row.id: i for i, row in enumerate(self.rows)}
        tree = self.query_one(EntryList)
        tree.set_rows(len(self.rows), self._nearest_index(select_id))
        self._show_title()
        if not self.rows:
            self._show_detail(None)

    def _nearest_index(self, entry_id: Any) -> int:
        seen = 0
        while entry_id is not None and seen < 1_000_000:
            if entry_id in self._index:
                return self._index[entry_id]
            entry_id = self.manager.tree.parent_of(entry_id)
            seen += 1
        return 0

    def _show_title(self) -> None:
        name = self.manager.get_session_name()
        title = dict(FILTERS)[self.filter]
        total = self.manager.get_entry_count()
        shown = f"{len(self.rows):,}/{total:,} entries" if len(self.rows) != total else plural(total, "entry", "entries")
        head = one_line(name, 40) if name else self.path.name
        if self.filter == "conversation" and self.hidden:
            title += f" · {sanitize(hidden_summary(self.hidden))} (1: all)"
        self.query_one("#title", Static).update(Text(f"{head} · {shown} · {title}", no_wrap=True, overflow="ellipsis"))

    def _render_row(self, index: int, width: int) -> Text:
        row = self.rows[index]
        preview = max(20, width - len(row.prefix) - 14)
        note = f"▸ {row.folded} hidden" if row.folded else None
        return tree_row(row.node.entry, row.node.label, row.prefix, self.leaf_id, self.active, preview, edits=self.edits, note=note)

    def current_row(self) -> Row | None:
        """The row under the cursor, or None when no row is shown."""
        if not self.rows:
            return None
        index = self.query_one(EntryList).cursor
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def current_id(self) -> Any:
        """The id of the entry under the cursor, or None."""
        row = self.current_row() if self.is_mounted else None
        return row.id if row is not None else None

    def on_entry_list_highlighted(self, event: EntryList.Highlighted) -> None:
        row = self.rows[event.index] if 0 <= event.index < len(self.rows) else None
        self._show_detail(row)

    def _show_detail(self, row: Row | None) -> None:
        detail = self.query_one("#detail", Static)
        if row is None:
            empty = "(the session has no entries)" if not self.roots else "(no entry shown: change the filter with f)"
            detail.update(Text(empty, style="dim"))
            return
        entry = row.node.entry
        if self.raw:
            detail.update(entry_json(entry))
        else:
            detail.update(
                detail_text(
                    entry,
                    label=row.node.label,
                    is_leaf=row.id == self.leaf_id,
                    on_path=row.id in self.active,
                    children=len(row.node.children),
                )
            )
        self.query_one("#detail-pane", VerticalScroll).scroll_home(animate=False)

    # ------------------------------------------------------------------
    # view: filters, folds, search, detail

    def action_cycle_filter(self) -> None:
        keys = [key for key, _title in FILTERS]
        self.action_filter(keys[(keys.index(self.filter) + 1) % len(keys)])

    def action_filter(self, mode: str) -> None:
        current = self.current_id()
        self.filter = mode
        self.rebuild(current)
        self.app.notify(f"filter: {dict(FILTERS)[mode]}", timeout=2)

    def action_fold(self) -> None:
        row = self.current_row()
        if row is None:
            return
        if row.id in self.folded:
            self.folded.discard(row.id)
        elif row.branches:
            self.folded.add(row.id)
        else:
            self.app.notify("nothing below this entry to fold", timeout=2)
            return
        self.rebuild(row.id)

    def action_unfold_all(self) -> None:
        current = self.current_id()
        self.folded.clear()
        self.rebuild(current)

    def action_toggle_detail(self) -> None:
        self.toggle_class("detail-max")
        if self.has_class("detail-max"):
            self.query_one("#detail-pane", VerticalScroll).focus()
        else:
            self.query_one(EntryList).focus()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self._show_detail(self.current_row())

    def action_search(self) -> None:
        self.add_class("searching")
        search = self.query_one("#search", Input)
        search.value = self.query_text
        search.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        event.stop()
        self.query_text = event.value
        self._close_search()
        self._find(self.query_one(EntryList).cursor, 1)

    def _close_search(self) -> None:
        self.remove_class("searching")
        self.query_one(EntryList).focus()

    def action_next_match(self, step: int) -> None:
        if not self.query_text.strip():
            self.action_search()
            return
        self._find(self.query_one(EntryList).cursor + step, step)

    def _search_text(self, row: Row) -> str:
        text = self._search_cache.get(row.id)
        if text is None:
            text = entry_search_text(row.node.entry, row.node.label)
            self._search_cache[row.id] = text
        return text

    def _find(self, start: int, step: int) -> None:
        index = find_match(self.rows, self.query_text, self._search_text, start, step)
        if index is None:
            self.app.notify(f"no match for {self.query_text!r} in the entries shown", severity="warning", markup=False)
            return
        self.query_one(EntryList).cursor = index

    def action_leave(self) -> None:
        if self.has_class("searching"):
            self._close_search()
        elif self.has_class("detail-max"):
            self.action_toggle_detail()
        elif self.from_picker:
            self.dismiss(None)
        else:
            self.app.exit()

    # ------------------------------------------------------------------
    # actions (each one a worker: dialogs are awaited, errors become notifications)

    def _done(self, outcome: actions.Outcome) -> None:
        self.app.notify(outcome.message, markup=False)
        for note in outcome.notes:
            self.app.notify(note, severity="warning", markup=False, timeout=8)
        self.reload(outcome.select_id)

    def _need_row(self) -> Row | None:
        if self.manager is None:
            self.app.notify("still reading the session", severity="warning")
            return None
        row = self.current_row()
        if row is None:
            self.app.notify("no entry selected", severity="warning")
        return row

    async def _with_progress(self, what: str, make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """Run ``make()`` in a thread behind a progress dialog; returns its
        result, or ``_CANCELLED`` when the user cancelled."""
        task = asyncio.ensure_future(summaries.run_in_thread(make))
        dialog = ProgressDialog(what, on_cancel=task.cancel)
        await self.app.push_screen(dialog)
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:  # the worker itself was cancelled (the app quits)
            task.cancel()
            raise
        finally:
            dialog.close()
        if task.cancelled():
            return _CANCELLED
        return task.result()

    def _summarizer(self) -> Any:
        summarizer, note = self.browse_app.summarizer_config.make()
        if note:
            self.app.notify(note, severity="warning", markup=False, timeout=8)
        return summarizer

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_label(self) -> None:
        with self.browse_app.reporting():
            row = self._need_row()
            if row is None:
                return
            value = await self.app.push_screen_wait(
                InputDialog(
                    f"Label entry {row.id}",
                    "An empty label clears it.",
                    row.node.label or "",
                    ok="Save label",
                )
            )
            if value is not None:
                self._done(actions.set_label(self.path, row.id, value))

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_rename(self) -> None:
        with self.browse_app.reporting():
            if self.manager is None:
                return
            value = await self.app.push_screen_wait(
                InputDialog("Name the session", "An empty name clears it.", self.manager.get_session_name() or "", ok="Save name")
            )
            if value is not None:
                self._done(actions.set_name(self.path, value))

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_navigate(self) -> None:
        with self.browse_app.reporting():
            row = self._need_row()
            if row is None:
                return
            try:
                plan = actions.open_read(self.path).plan_navigation(row.id)
            except KeyError as exc:  # EntryNotFoundError: the file changed under the screen
                raise actions.OperationError(str(exc)) from None
            if plan.is_noop:
                self.app.notify("this entry is the leaf already")
                return
            if plan.already_there:
                self.app.notify(operations.already_there_message(plan))
                if plan.editor_text is not None:
                    self.app.notify(one_line(plan.editor_text, 300), title="the message, to send again", markup=False, timeout=10)
                return
            buttons = [("move", "Move", "primary")]
            if plan.has_content_to_summarize:
                buttons.append(("summary", "Move + summary", "default"))
            buttons.append(("cancel", "Cancel", "default"))
            choice = await self.app.push_screen_wait(
                ConfirmDialog(f"Navigate to {row.id}", summaries.describe_navigation(plan), buttons)
            )
            if choice not in ("move", "summary"):
                return
            summary = None
            if choice == "summary":
                summarizer = self._summarizer()
                cwd = self.manager.get_cwd()
                summary = await self._with_progress(
                    f"Summarizing the branch left with {getattr(summarizer, 'name', 'summarizer')}…",
                    lambda: summaries.summarize_branch(cwd, plan, summarizer),
                )
                if summary is _CANCELLED:
                    self.app.notify("cancelled; the session file was not changed", severity="warning")
                    return
            self._done(summaries.navigate(self.path, row.id, summary, plan))
            if plan.editor_text is not None:
                self.app.notify(one_line(plan.editor_text, 300), title="the message, to send again", markup=False, timeout=10)

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_clone(self) -> None:
        with self.browse_app.reporting():
            row = self._need_row()
            if row is None:
                return
            count = len(self.manager.get_branch(row.id))
            choice = await self.app.push_screen_wait(
                ConfirmDialog(
                    f"Clone up to {row.id}",
                    f"Write a new session file holding the path from the root to this entry ({plural(count, 'entry', 'entries')}). "
                    "This session stays as it is.",
                    [("clone", "Clone", "primary"), ("cancel", "Cancel", "default")],
                )
            )
            if choice == "clone":
                outcome = actions.clone(self.path, row.id)
                self.app.notify(outcome.message, markup=False, timeout=10)
                for note in outcome.notes:
                    self.app.notify(note, severity="warning", markup=False, timeout=10)

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_export(self) -> None:
        with self.browse_app.reporting():
            row = self._need_row()
            if row is None:
                return
            default = actions.default_export_path(self.path, self.browse_app.cwd)
            value = await self.app.push_screen_wait(
                InputDialog(
                    f"Export the conversation up to {row.id}",
                    "File to write: HTML, or Markdown for a .md name.",
                    str(default),
                    ok="Export",
                )
            )
            if not value or not value.strip():
                return
            output = Path(value.strip())
            try:
                outcome = actions.export(self.path, row.id, output)
            except actions.OutputExists:
                choice = await self.app.push_screen_wait(
                    ConfirmDialog(
                        "Overwrite?", f"{output} exists. Replace it?", [("overwrite", "Overwrite", "warning"), ("cancel", "Cancel", "default")]
                    )
                )
                if choice != "overwrite":
                    return
                outcome = actions.export(self.path, row.id, output, overwrite=True)
            self.app.notify(outcome.message, markup=False, timeout=10)

    @work(group="action", exclusive=True, exit_on_error=False)
    async def action_compact(self) -> None:
        with self.browse_app.reporting():
            if self.manager is None:
                return
            plan, text = summaries.plan_compaction(self.path)
            if plan is None:  # why, with both estimates and where the kept-recent budget comes from
                self.app.notify(text, markup=False, timeout=15)
                return
            choice = await self.app.push_screen_wait(
                ConfirmDialog("Compact the current branch", text, [("compact", "Compact", "primary"), ("cancel", "Cancel", "default")])
            )
            if choice != "compact":
                return
            summarizer = self._summarizer()
            outcome = await self._with_progress(
                f"Compacting with {getattr(summarizer, 'name', 'summarizer')}…",
                lambda: summaries.compact(self.path, plan, summarizer),
            )
            if outcome is _CANCELLED:
                self.app.notify("cancelled; the session file was not changed", severity="warning")
                return
            self._done(outcome)
