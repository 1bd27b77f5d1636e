"""``pi-session browse`` through Textual's pilot, in an 80x24 headless
terminal: the view (tree layout, filters, folds, search, detail, picker) and
every action, checked on the session file afterwards."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from browse_helpers import LONG_OUTPUT, make_session, records, run, type_text, until
from pi_session import SessionManager
from pi_session.browse.summaries import SummarizerConfig
from pi_session.browse.app import BrowseApp
from pi_session.browse.dialogs import ConfirmDialog, InputDialog, ProgressDialog
from pi_session.browse.entry_list import EntryList
from pi_session.browse.picker import PickerScreen
from pi_session.browse.rows import filtered_forest, layout_rows
from pi_session.browse.session import SessionScreen
from pi_session.cli.render import tree_lines, tree_row

ROOT = Path(__file__).resolve().parents[1]
EXTRACTIVE = SummarizerConfig(provider="extractive")


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("PI_SESSION_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)


class App(BrowseApp):
    """The real app, remembering what it told the user."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("summarizer", EXTRACTIVE)
        super().__init__(*args, **kwargs)
        self.said: list[str] = []

    def notify(self, message: str, **kwargs: Any) -> None:  # type: ignore[override]
        self.said.append(message)
        super().notify(message, **kwargs)


def screen(app: App) -> SessionScreen:
    assert isinstance(app.screen, SessionScreen), app.screen
    return app.screen


def shown_ids(app: App) -> list[str]:
    return [row.id for row in screen(app).rows]


async def select(pilot: Any, entry_id: str) -> None:
    """Move the cursor to ``entry_id`` with the arrow keys."""
    app = pilot.app
    target = shown_ids(app).index(entry_id)
    tree = app.screen.query_one(EntryList)
    key = "down" if target > tree.cursor else "up"
    for _ in range(abs(target - tree.cursor)):
        await pilot.press(key)
    assert screen(app).current_id() == entry_id


def detail(app: App) -> str:
    return str(app.screen.query_one("#detail", Static).render())


async def answer_input(pilot: Any, text: str) -> None:
    """Put ``text`` into the open input dialog (its last characters typed
    key by key) and press Enter."""
    await until(pilot, lambda: isinstance(pilot.app.screen, InputDialog), "the input dialog")
    field = pilot.app.screen.query_one(Input)
    field.value = text[:-3]
    field.cursor_position = len(field.value)
    await type_text(pilot, text[-3:])
    await pilot.press("enter")


async def press_button(pilot: Any, button_id: str) -> None:
    await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), "the confirmation dialog")
    await pilot.click(f"#{button_id}")


# ---------------------------------------------------------------------------
# the view


def test_rows_are_laid_out_as_the_tree_command_lays_them_out():
    """Every row of the unfiltered, unfolded tree is the line `pi-session
    tree` prints for that entry (real pi fixtures and the demo session)."""
    files = [ROOT / "examples" / "demo-session.jsonl", *sorted((ROOT.parent / "shared" / "fixtures" / "pi").glob("*.jsonl"))]
    checked = 0
    for file in files:
        manager = SessionManager.open(file, read_only=True)
        roots = manager.get_tree()
        active = {e["id"] for e in manager.get_branch()}
        expected = [line.plain for line in tree_lines(roots, manager.get_leaf_id(), active, 60)]
        rows = layout_rows(filtered_forest(roots, "all"))
        got = [tree_row(r.node.entry, r.node.label, r.prefix, manager.get_leaf_id(), active, 60).plain for r in rows]
        assert got == expected, file
        checked += 1
    assert checked >= 1


def test_tree_filters_fold_and_detail(tmp_path):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        s = screen(app)
        assert s.current_id() == ids["label"] == s.leaf_id  # opens on the leaf
        assert len(s.rows) == 10  # nine messages and the label
        # the branch point indents its two branches, as `tree` does
        prefixes = {row.id: row.prefix for row in s.rows}
        assert prefixes[ids["a2"]] == "├─ " and prefixes[ids["b1"]] == "└─ "
        assert prefixes[ids["u2"]] == "│  "
        # filters: 3 = user messages only, 2 = no tool results, 4 = labelled only, f cycles
        await pilot.press("3")
        assert shown_ids(app) == [ids["u1"], ids["u2"], ids["u3"]]
        # the hidden assistant messages pass their children up: still two branches
        assert [row.prefix for row in s.rows] == ["", "├─ ", "└─ "]
        assert s.current_id() == ids["u3"]  # the leaf's nearest shown ancestor
        await pilot.press("2")
        assert ids["t1"] not in shown_ids(app) and len(shown_ids(app)) == 9
        await pilot.press("4")
        assert shown_ids(app) == [ids["u1"]]
        await pilot.press("f")
        assert s.filter == "all" and len(shown_ids(app)) == 10
        # fold the branch point: both branches disappear, the row says how many
        await select(pilot, ids["t1"])
        await pilot.press("space")
        assert shown_ids(app) == [ids["u1"], ids["a1"], ids["t1"]]
        assert s.rows[-1].folded == 7
        assert "7 hidden" in s._render_row(2, 80).plain
        await pilot.press("space")
        assert len(shown_ids(app)) == 10
        await pilot.press("space", "o")
        assert len(shown_ids(app)) == 10
        # the detail pane has the full tool output (the tree shows one line)
        assert "Let me read" not in detail(app)
        await select(pilot, ids["t1"])
        text = detail(app)
        assert "END-OF-OUTPUT-MARKER" in text and "line 119:" in text and "result of read (call_1)" in text
        await select(pilot, ids["a1"])
        assert '"path": "src/parser.py"' in detail(app) and "tool call read (call_1)" in detail(app)
        await pilot.press("j")  # raw JSON
        assert '"toolCallId"' not in detail(app) and '"type": "toolCall"' in detail(app)
        await pilot.press("j", "enter")
        assert s.has_class("detail-max")
        await pilot.press("escape")
        assert not s.has_class("detail-max") and isinstance(app.screen, SessionScreen)

    run(app, body)


def test_search_finds_content_and_cycles(tmp_path):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await pilot.press("slash")
        await type_text(pilot, "END-OF-OUTPUT")  # only in the full text of the tool result
        await pilot.press("enter")
        assert screen(app).current_id() == ids["t1"]
        await pilot.press("slash")
        app.screen.query_one("#search", Input).value = ""
        await type_text(pilot, "approach")
        await pilot.press("enter")
        first = screen(app).current_id()
        await pilot.press("n")
        second = screen(app).current_id()
        assert {first, second} == {ids["a2"], ids["b1"]}
        await pilot.press("N")
        assert screen(app).current_id() == first
        await pilot.press("slash")
        app.screen.query_one("#search", Input).value = ""
        app.screen.query_one("#search", Input).value = "no such words anywh"
        await type_text(pilot, "ere")
        await pilot.press("enter")
        assert screen(app).current_id() == first
        assert any("no match" in m for m in app.said)

    run(app, body)


def test_picker_lists_newest_first_searches_and_opens(tmp_path, monkeypatch):
    older, _ = make_session(tmp_path, default_dir=True, first="Rename the config loader")
    newer, _ = make_session(tmp_path, default_dir=True, first="Speed up the tokenizer benchmarks")
    SessionManager.open(newer).append_session_info("Tokenizer speed")
    other = tmp_path / "elsewhere"
    other.mkdir()
    SessionManager.create(str(other)).append_message({"role": "user", "content": "a session of another project", "timestamp": 1})
    app = App(None, cwd=str(tmp_path / "project"))

    async def body(pilot):
        picker = await until(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.shown and app.screen, "the list")
        assert [info["path"] for info in picker.shown] == [str(newer), str(older)]
        title = str(app.screen.query_one("#title", Static).render())
        assert "2 sessions" in title
        await pilot.press("slash")
        await type_text(pilot, "config")
        assert [info["path"] for info in picker.shown] == [str(older)]
        await pilot.press("escape")
        assert len(picker.shown) == 2
        await pilot.press("slash")
        await type_text(pilot, "tokenizer speed")  # the name
        assert [info["path"] for info in picker.shown] == [str(newer)]
        await pilot.press("escape")
        await pilot.press("a")  # all projects
        await until(pilot, lambda: len(picker.shown) == 3, "every project's sessions")
        await pilot.press("a")
        await until(pilot, lambda: len(picker.shown) == 2, "this directory's sessions")
        await pilot.press("down", "enter")  # the older one
        await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
        assert app.screen.path == older
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen), "back in the picker")

    run(app, body)


def test_picker_lists_the_sessions_of_a_files_store(tmp_path):
    """``pi-session --store DIR browse`` lists DIR's sessions, as ``ls``
    does, not the default sessions directory's."""
    from pi_session.stores import open_store

    make_session(tmp_path, default_dir=True, first="in the default directory")
    root = tmp_path / "elsewhere-root"
    elsewhere = SessionManager.create(str(tmp_path / "project"), store=str(root))
    elsewhere.append_message({"role": "user", "content": "in the store", "timestamp": 1})
    app = App(None, cwd=str(tmp_path / "project"), store=open_store(str(root)))

    async def body(pilot):
        picker = await until(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.shown and app.screen, "the list")
        assert [info["firstMessage"] for info in picker.shown] == ["in the store"]
        assert str(app.screen.query_one("#title", Static).render()).startswith("1 session ·")  # not "1 sessions"
        await pilot.press("a")  # all projects: still the store's
        await until(pilot, lambda: picker.all_projects, "all projects")
        assert [info["firstMessage"] for info in picker.shown] == ["in the store"]

    run(app, body)


# ---------------------------------------------------------------------------
# actions


def test_label_and_name(tmp_path):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["a2"])
        await pilot.press("l")
        await answer_input(pilot, "approach A")
        await until(pilot, lambda: screen(app).manager.get_label(ids["a2"]) == "approach A", "the label")
        assert screen(app).current_id() == ids["a2"]
        # cancelling writes nothing
        count = len(records(path))
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, InputDialog), "the dialog")
        await pilot.press("escape")
        await pilot.press("r")
        await answer_input(pilot, "Parser line numbers")
        await until(pilot, lambda: screen(app).manager.get_session_name() == "Parser line numbers", "the name")
        assert "Parser line numbers" in str(app.screen.query_one("#title", Static).render())
        assert len(records(path)) == count + 1

    run(app, body)
    written = records(path)
    label = [r for r in written if r.get("type") == "label" and r.get("targetId") == ids["a2"]]
    assert label and label[-1]["label"] == "approach A"
    assert written[-1]["type"] == "session_info" and written[-1]["name"] == "Parser line numbers"


def test_navigate_without_summary_moves_the_leaf(tmp_path):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["a3"])
        await pilot.press("g")
        await press_button(pilot, "move")
        await until(pilot, lambda: screen(app).leaf_id not in (None, ids["label"]), "the new leaf")

    run(app, body)
    last = records(path)[-1]
    assert last["type"] == "branch_summary" and last["parentId"] == ids["a3"] and last["summary"] == ""
    assert SessionManager.open(path, read_only=True).get_branch()[-2]["id"] == ids["a3"]


def test_navigate_to_where_the_leaf_already_is_writes_nothing(tmp_path):
    """A second move to the same entry
    only says so, and a branch of only the empty record of a move offers
    no summary."""
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["u2"])  # a user message: the leaf goes to its parent a2
        await pilot.press("g")
        await press_button(pilot, "move")
        await until(pilot, lambda: screen(app).leaf_id not in (None, ids["label"]), "the new leaf")
        written = path.read_bytes()
        await select(pilot, ids["u2"])
        await pilot.press("g")
        await until(pilot, lambda: any(m.startswith(f"already at entry {ids['a2']}") for m in app.said), "the notice")
        assert not isinstance(app.screen, ConfirmDialog) and path.read_bytes() == written
        await select(pilot, ids["a3"])  # the branch left: only the empty record below a2
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirmation")
        assert not app.screen.query("#summary")
        assert "nothing to summarize" in str(app.screen.query_one(".body", Static).render())
        await press_button(pilot, "cancel")

    run(app, body)


def test_navigate_with_extractive_branch_summary(tmp_path):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["u2"])  # a user message: the leaf goes to its parent
        await pilot.press("g")
        await press_button(pilot, "summary")
        await until(pilot, lambda: screen(app).leaf_id != ids["label"], "the summary")
        assert any(m == "try nested blocks" for m in app.said)  # the message, to send again

    run(app, body)
    last = records(path)[-1]
    assert last["type"] == "branch_summary" and last["parentId"] == ids["a2"]
    assert last["fromId"] == ids["label"]
    assert "Extractive summary" in last["summary"] and "ship it" in last["summary"]
    assert last["details"] == {"readFiles": [], "modifiedFiles": []}


def test_clone_writes_a_new_session(tmp_path):
    path, ids = make_session(tmp_path)
    before = path.read_bytes()
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["a2"])
        await pilot.press("c")
        await press_button(pilot, "clone")
        await until(pilot, lambda: any(m.startswith("cloned") for m in app.said), "the clone")

    run(app, body)
    assert path.read_bytes() == before
    clones = [p for p in path.parent.glob("*.jsonl") if p != path]
    assert len(clones) == 1
    cloned = records(clones[0])
    assert cloned[0]["parentSession"] == str(path)
    kept = [r["id"] for r in cloned[1:] if r["type"] == "message"]
    assert kept == [ids["u1"], ids["a1"], ids["t1"], ids["a2"]]
    assert any(r["type"] == "label" and r["label"] == "task" for r in cloned)
    assert not any("leaves out" in m for m in app.said)


def test_clone_before_a_redaction_says_the_text_comes_back(tmp_path):
    """Cloning up to a point before the context
    edit that hid a tool result's content warns."""
    path, ids = make_session(tmp_path)
    sm = SessionManager.open(path)
    sm.append_context_edit(ids["t1"], {"content": "[redacted]"})
    sm.save()
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["a2"])
        await pilot.press("c")
        await press_button(pilot, "clone")
        await until(pilot, lambda: any("leaves out 1 context edit" in m for m in app.said), "the warning")

    run(app, body)


def test_export_writes_html_and_markdown_and_asks_before_overwriting(tmp_path):
    path, ids = make_session(tmp_path)
    before = path.read_bytes()
    out = tmp_path / "parser.md"
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await select(pilot, ids["a3"])
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, InputDialog), "the dialog")
        # the default: the file `pi-session export` writes
        assert app.screen.query_one(Input).value == str(tmp_path / f"pi-session-{path.stem}.html")
        await pilot.press("enter")
        await until(pilot, lambda: (tmp_path / f"pi-session-{path.stem}.html").exists(), "the HTML export")
        await pilot.press("e")
        await answer_input(pilot, str(out))
        await until(pilot, lambda: out.exists(), "the Markdown export")
        out.write_text("mine")
        await pilot.press("e")
        await answer_input(pilot, str(out))
        await press_button(pilot, "cancel")  # keep it
        assert out.read_text() == "mine"
        await pilot.press("e")
        await answer_input(pilot, str(out))
        await press_button(pilot, "overwrite")
        await until(pilot, lambda: out.read_text() != "mine", "the overwrite")
        await pilot.press("e")
        await answer_input(pilot, str(path))  # never over a session
        await until(pilot, lambda: any("refusing to overwrite" in m for m in app.said), "the refusal")

    run(app, body)
    html = (tmp_path / f"pi-session-{path.stem}.html").read_text()
    # HTML is the viewer, as `export --leaf` writes it: the whole tree (the
    # other branch too), opened at the selected entry
    assert "<html" in html.lower() and "nested done" in html and "tokenizer" in html
    markdown = out.read_text()
    assert "nested done" in markdown and "Approach A" in markdown
    assert path.read_bytes() == before


def test_compact_appends_a_compaction(tmp_path):
    path, ids = make_session(tmp_path, turns=8)
    (tmp_path / "project" / ".pi").mkdir()
    (tmp_path / "project" / ".pi" / "settings.json").write_text('{"compaction": {"keepRecentTokens": 300}}')
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await pilot.press("k")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the plan")
        body_text = str(app.screen.query_one(".body", Static).render())
        assert "Summarize" in body_text and "Kept verbatim" in body_text
        await press_button(pilot, "compact")
        await until(pilot, lambda: screen(app).manager.get_leaf_entry()["type"] == "compaction", "the compaction")
        assert screen(app).current_id() == screen(app).leaf_id
        await pilot.press("k")  # nothing left to compact
        await until(pilot, lambda: any(m.startswith("Nothing to compact") for m in app.said), "the refusal")

    run(app, body)
    last = records(path)[-1]
    assert last["type"] == "compaction" and "Extractive summary" in last["summary"]
    assert last["tokensBefore"] > 0 and last["details"]["readFiles"] == ["src/parser.py"]


def test_nothing_to_compact_names_the_estimates_and_the_setting(tmp_path):
    """The refusal names the message estimate,
    the context tokens, the kept-recent budget and where it comes from."""
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await pilot.press("k")
        await until(pilot, lambda: any(m.startswith("Nothing to compact") for m in app.said), "the refusal")

    run(app, body)
    said = next(m for m in app.said if m.startswith("Nothing to compact"))
    assert "within the kept-recent budget of 20,000 tokens (the default; set compaction.keepRecentTokens in settings.json)" in said
    assert "context tokens" in said and "tokens (characters / 4" in said


def test_summary_can_be_cancelled_and_nothing_is_written(tmp_path, monkeypatch):
    from fake_providers import FakeProviderServer, FakeResponse

    path, ids = make_session(tmp_path)
    before = path.read_bytes()
    with FakeProviderServer() as server:
        server.default = FakeResponse(delay=5)  # slower than the test: the summary is still running when cancelled
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        app = App(path, summarizer=SummarizerConfig(provider="openai", model="test-model", base_url=server.openai_base_url, max_retries=0))

        async def body(pilot):
            await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
            await select(pilot, ids["a3"])
            await pilot.press("g")
            await press_button(pilot, "summary")
            await until(pilot, lambda: isinstance(app.screen, ProgressDialog), "the progress dialog")
            await until(pilot, lambda: server.requests, "the summary request")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the dialog closed")
            await until(pilot, lambda: any("cancelled" in m for m in app.said), "the note")

        run(app, body)
    assert path.read_bytes() == before


def test_errors_become_notifications_not_crashes(tmp_path, monkeypatch):
    path, ids = make_session(tmp_path)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        moved = tmp_path / "moved.jsonl"
        shutil.move(path, moved)  # the file goes away under the browser
        await pilot.press("l")
        await answer_input(pilot, "x")
        await until(pilot, lambda: any("No such file" in m for m in app.said), "the error")
        shutil.move(moved, path)
        import pi_session.browse.actions as actions

        def broken(*_args: Any) -> Any:
            raise RuntimeError("boom")

        monkeypatch.setattr(actions, "clone", broken)
        await pilot.press("c")
        await press_button(pilot, "clone")
        await until(pilot, lambda: any("internal error: RuntimeError: boom" in m for m in app.said), "the error")
        assert isinstance(app.screen, SessionScreen)  # still running
        await pilot.press("q")

    run(app, body)
    assert app.crash is None and app.return_code in (0, None)


def test_a_file_that_is_not_a_session_is_an_error_message(tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"type": "message", "id": "x"}\n')
    app = App(notes)

    async def body(pilot):
        await until(pilot, lambda: any(str(notes) in m for m in app.said), "the error")

    run(app, body)
    assert app.crash is None


def test_a_bug_ends_the_app_without_a_traceback(tmp_path, monkeypatch):
    """An unexpected error outside the actions ends the app (the terminal is
    restored by Textual); it is kept for the command's one-line message and
    Textual's traceback (which prints local variables, session text among
    them) is not printed."""
    path, _ids = make_session(tmp_path)

    def bug(self: Any) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(SessionScreen, "action_fold", bug)
    app = App(path)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await pilot.press("space")

    with pytest.raises(ZeroDivisionError):
        run(app, body)
    assert isinstance(app.crash, ZeroDivisionError)
    assert app.return_code == 1 and app._exit_renderables == []


def test_screenshot(tmp_path):
    """An 80x24 screenshot of the demo session (docs/images/browse.svg is
    this picture: PI_SESSION_SCREENSHOTS=1 writes it there)."""
    demo = tmp_path / "demo-session.jsonl"
    demo.write_bytes((ROOT / "examples" / "demo-session.jsonl").read_bytes())
    app = App(demo)

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        s = screen(app)
        target = next(i for i, row in enumerate(s.rows) if row.node.label == "tax rounding decision")
        app.screen.query_one(EntryList).cursor = target - 3  # scrolls that row to the top
        await pilot.press("down", "down", "down")  # the labelled branch point, its two branches below
        await pilot.pause()
        svg = Path(app.save_screenshot("browse.svg", str(tmp_path)))
        text = svg.read_text()
        assert text.startswith("<svg") and "tax&#160;rounding&#160;decision" in text
        if os.environ.get("PI_SESSION_SCREENSHOTS", "") not in ("", "0"):
            (ROOT / "docs" / "images").mkdir(parents=True, exist_ok=True)
            shutil.copy(svg, ROOT / "docs" / "images" / "browse.svg")

    run(app, body)


def test_detail_of_deeply_nested_arguments_stays_small():
    """The detail pane and the raw view show deeply nested JSON compact
    (pretty-printed, 3,000 levels would be about 9 MB of indentation)."""
    from pi_session.browse.detail import entry_json, entry_sections

    deep: Any = "bottom"
    for _ in range(3000):
        deep = [deep]
    entry = {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
             "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "x", "arguments": {"deep": deep}}]}}
    sections = entry_sections(entry)
    assert sum(len(text) for _, text in sections) < 50_000
    assert any("[" * 3000 + '"bottom"' in text for _, text in sections)
    assert len(entry_json(entry).plain) < 50_000


def test_picker_searches_all_text_ids_and_cwds_through_the_index(tmp_path, monkeypatch):
    """A word that is only in the middle of a session
    (not its name nor first message) finds it through the search index, and
    opening it puts the cursor on the hit; ids and cwds shown are
    searchable too."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, ids = make_session(tmp_path, default_dir=True, first="Rename the config loader")
    second, _ = make_session(tmp_path, default_dir=True, first="Speed up the benchmarks")
    SessionManager.open(second).append_message({"role": "user", "content": "now the zeppelin theme", "timestamp": 5})
    app = App(None, cwd=str(tmp_path / "project"))
    second_id = SessionManager.open(second).get_session_id()

    async def body(pilot):
        picker = await until(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.shown and app.screen, "the list")
        await pilot.press("slash")
        await type_text(pilot, "zeppel")  # a prefix of a word deep in the session
        await until(pilot, lambda: [info["path"] for info in picker.shown] == [str(second)], "the index's hit")
        await pilot.press("escape")
        await pilot.press("slash")
        await type_text(pilot, second_id[:13])
        await until(pilot, lambda: [info["path"] for info in picker.shown] == [str(second)], "the id")
        await pilot.press("escape")
        await pilot.press("slash")
        await type_text(pilot, '"rewrite the tokenizer"')  # a phrase of an assistant message of both sessions
        await until(pilot, lambda: len(picker.shown) == 2 and picker.hits_for == '"rewrite the tokenizer"', "both")
        await pilot.press("enter")  # back to the table
        row = [info["path"] for info in picker.shown].index(str(first))
        await pilot.press(*["down"] * row, "enter")
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.manager is not None, "the session")
        assert app.screen.path == first
        assert app.screen.current_id() == ids["b1"]  # at the hit, not the leaf

    run(app, body)


def test_browse_at_starts_on_the_entry(tmp_path):
    """``browse SESSION --at ENTRY`` (a search hit): the cursor starts on
    that entry, not on the leaf."""
    path, ids = make_session(tmp_path)
    app = App(path, at=ids["a2"])

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.manager is not None, "the session")
        assert app.screen.current_id() == ids["a2"]

    run(app, body)


def test_the_keys_panel_lists_the_screens_own_keys_first(tmp_path):
    """``?`` shows the keys of the session screen (search, filter, label,
    export...) above the entry list's cursor keys and Textual's generic
    ones (focus, copy)."""
    path, _ids = make_session(tmp_path)
    app = App(path)
    seen: dict[str, Any] = {}

    async def body(pilot):
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.rows, "the tree")
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen.query("BindingsTable"), "the keys panel")
        from rich.console import Console

        console = Console(width=60, record=True, file=open(os.devnull, "w"))
        console.print(app.screen.query_one("BindingsTable").render())
        seen["text"] = console.export_text()

    run(app, body)
    lines = [line.strip() for line in seen["text"].splitlines() if line.strip()]
    first = next(i for i, line in enumerate(lines) if line.endswith("Search"))
    assert first == 0, lines
    for generic in ("Down", "Focus Next", "Copy selected text"):
        at = [i for i, line in enumerate(lines) if generic in line]
        assert at and min(at) > first, (generic, lines)
    assert any(line.endswith("Export") for line in lines[first:])


def test_compaction_confirmation_states_estimates_that_add_up(tmp_path):
    """The confirmation's context size is estimated as the kept part is: a
    recorded usage of 400,000 input tokens on the last assistant message
    (pi's tokensBefore) is not shown next to estimates of the messages."""
    from pi_session import SessionManager
    from pi_session.browse.summaries import describe_compaction, plan_compaction

    manager = SessionManager.create(str(tmp_path), session_dir=str(tmp_path))
    for i in range(30):
        manager.append_message({"role": "user", "content": f"question {i} " + "word " * 400, "timestamp": 1})
        manager.append_message({
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i} " + "word " * 400}],
            "stopReason": "stop", "timestamp": 2, "provider": "p", "model": "m",
            "usage": {"input": 400_000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 400_010,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        })
    plan, reason = plan_compaction(Path(manager.get_session_file()))
    assert plan is not None, reason
    text = describe_compaction(plan)
    before = int(re.search(r"context ~([\d,]+) tokens", text).group(1).replace(",", ""))
    kept = int(re.search(r"\(~([\d,]+) tokens\)", text).group(1).replace(",", ""))
    assert kept < before < 400_000
    context = SessionManager.open(manager.get_session_file()).build_session_context()["messages"]
    from pi_session.session.tokens import estimate_tokens

    assert before == sum(estimate_tokens(m) for m in context)


def test_detail_of_signed_thinking_without_text_has_a_heading_of_its_own():
    """Signed thinking with no text is not a bare "thinking" heading right
    above the reply (which then reads as thinking without colour)."""
    from pi_session.browse.detail import entry_sections

    entry = {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
             "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "thinkingSignature": "s"},
                                                          {"type": "text", "text": "The reply."}]}}
    sections = entry_sections(entry)
    assert ("redacted thinking", "(the provider sent no text)") in sections and ("", "The reply.") in sections
    assert not any(heading == "thinking" for heading, _text in sections)
