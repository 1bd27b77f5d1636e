"""``pi-session serve`` in a real headless Chromium (Debian's ``chromium``,
driven by playwright) against the real server (the console script, uvicorn
on 127.0.0.1): list, filter, search, open a hit, walk a branch, see the
context at an entry, keys, costs, hostile sessions, a live append from
another process, and the actions, the written file checked with pi 1.6.

One browser and one server per module (over a store of session files);
every page is watched: no dialog but our confirmations, no page error and
no console message (a CSP violation is a console error)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from viewer_pages import CHROMIUM, launch_browser
from web_helpers import EXE, HOSTILE, LONG, SHOWCASE, Server, file_store

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra (make install-test)")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} missing (.ci/run installs Debian's chromium package)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return file_store(tmp_path_factory.mktemp("webb") / "sessions")


@pytest.fixture(scope="module")
def server(store, tmp_path_factory):
    with Server(str(store), agent_dir=tmp_path_factory.mktemp("agent")) as s:
        yield s


class Watched:
    """A page with every dialog, page error and console message recorded;
    ``confirm``: accept confirmation dialogs (else dismissed)."""

    def __init__(self, browser: Any, url: str, *, confirm: bool = False, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.events: list[str] = []
        self.confirmed: list[str] = []

        def on_dialog(d: Any) -> None:
            if confirm and d.type == "confirm":
                self.confirmed.append(d.message)
                d.accept()
                return
            self.events.append(f"dialog: {d.message}")
            d.dismiss()

        self.page.on("dialog", on_dialog)
        self.page.on("pageerror", lambda e: self.events.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.events.append(f"console {m.type}: {m.text}"))
        self.page.goto(url)

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> Watched:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def test_list_filter_and_keys(browser, server):
    with Watched(browser, server.login_url("/")) as w:
        page = w.page
        ids = page.eval_on_selector_all("#sessions tbody tr .sub", "xs => xs.map(x => x.textContent)")
        assert set(ids) == {SHOWCASE, HOSTILE, LONG}
        page.fill("#filter", "cent round")
        page.wait_for_function("() => document.querySelectorAll('#sessions tbody tr:not([hidden])').length === 1")
        assert page.text_content("#count") == "1 session"
        page.fill("#filter", "")
        page.wait_for_function("() => document.querySelectorAll('#sessions tbody tr:not([hidden])').length === 3")
        page.press("#filter", "Escape")  # leaves the box: keys are commands again
        page.keyboard.press("?")
        assert page.is_visible("#keys")
        page.keyboard.press("Escape")
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.keyboard.press("k")
        first = page.eval_on_selector("#sessions tr.cur .sub", "x => x.textContent")
        assert first == ids[0]
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/s/{first}")
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "q"
        assert w.events == []


def test_search_opens_the_hit_at_its_entry(browser, server):
    with Watched(browser, server.login_url("/")) as w:
        page = w.page
        page.fill("#q", "banker")
        page.press("#q", "Enter")
        page.wait_for_selector("#hits li")
        marks = page.eval_on_selector_all("#hits mark", "ms => ms.map(m => m.textContent.toLowerCase())")
        assert marks and all(m.startswith("banker") for m in marks)
        page.click("#hits li a[href*='at=u2']")
        page.wait_for_selector("#rows a.row.sel")
        assert page.get_attribute("#rows a.row.sel", "data-id") == "u2"
        assert "Try banker" in page.text_content("#path article:last-child")
        # the hit's entry is in view
        assert page.evaluate("(() => { const r = document.querySelector('#path article:last-child').getBoundingClientRect();"
                             " return r.top >= 0 && r.top < window.innerHeight; })()")
        assert w.events == []


def test_walk_a_branch_and_see_the_context(browser, server):
    with Watched(browser, server.login_url(f"/s/{SHOWCASE}")) as w:
        page = w.page
        # the leaf's path, then the branch left behind (u2 … r2)
        on_path = page.eval_on_selector_all("#path article .eid", "xs => xs.map(x => x.textContent)")
        assert on_path[-1] == "n1" and "u2" not in on_path
        page.click('#rows a.row[data-id="r2"]')
        page.wait_for_url("**at=r2")
        on_branch = page.eval_on_selector_all("#path article .eid", "xs => xs.map(x => x.textContent)")
        assert on_branch == ["m0", "u1", "a1", "r1", "a2", "u2", "a3", "r2"]
        page.click("#contextlink")
        page.wait_for_selector("#context article")
        roles = page.eval_on_selector_all("#context article .kind", "xs => xs.map(x => x.textContent.split('. ')[1])")
        assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant", "toolResult"]
        assert w.events == []


def test_hostile_sessions_run_no_script(browser, server):
    for path in ("/", f"/s/{HOSTILE}", f"/s/{HOSTILE}/context", "/search?q=alert", "/search?q=pwned"):
        with Watched(browser, server.login_url(path)) as w:
            w.page.wait_for_load_state("load")
            assert w.page.evaluate("window.__pwned === undefined"), path
            assert w.page.locator("#path img[src^='x'], img[onerror]").count() == 0
            assert w.events == [], (path, w.events)


def test_costs_page(browser, server):
    with Watched(browser, server.login_url("/costs")) as w:
        assert w.page.locator("#daily tbody tr meter").count() >= 1
        assert w.page.text_content("#totalcost").startswith("$0.07")
        models = w.page.eval_on_selector_all("#bymodel tbody td:first-child", "xs => xs.map(x => x.textContent)")
        assert models == ["[pi] claude-sonnet-4-5", "[pi] m"]  # the most expensive first (the long session's "m" costs $0)
        projects = w.page.eval_on_selector_all("#byproject tbody td:first-child", "xs => xs.map(x => x.textContent)")
        assert projects == ["--w--"]  # the usage report's project: the sessions' directory
        assert w.events == []


def test_phone_width_and_dark_mode(browser, server):
    with Watched(browser, server.login_url(f"/s/{SHOWCASE}"), viewport={"width": 390, "height": 800}, color_scheme="dark") as w:
        page = w.page
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 400
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)"
        assert w.events == []


def _append_label(store: Any, session: str, entry: str, text: str) -> None:
    run = subprocess.run([str(EXE), "--store", str(store), "label", session, entry, text], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_live_append_from_another_process(browser, server, store):
    with Watched(browser, server.login_url(f"/s/{LONG}")) as w:
        page = w.page
        page.wait_for_function("() => document.getElementById('live').textContent.startsWith('live')")
        rows = page.locator("#rows a.row").count()
        # another process (a SessionManager in its own interpreter) appends a message
        code = (
            "import sys; from pi_session import SessionManager; from pi_session.stores import open_store;"
            "m = SessionManager.open(sys.argv[2], store=open_store(sys.argv[1]));"
            "m.append_message({'role': 'user', 'content': 'appended elsewhere', 'timestamp': 1764500000000}); m.save()"
        )
        subprocess.run([sys.executable, "-c", code, str(store), LONG], check=True, timeout=120)
        page.wait_for_function(f"() => document.querySelectorAll('#rows a.row').length === {rows + 1}", timeout=5000)
        page.wait_for_selector("#path article.new")
        assert "appended elsewhere" in page.text_content("#path article.new")
        assert w.events == []


def test_actions_label_and_move_checked_with_pi(browser, tmp_path, oracle):
    import json

    own = file_store(tmp_path / "sessions")
    with Server(str(own), agent_dir=tmp_path / "agent") as server, Watched(browser, server.login_url(f"/s/{SHOWCASE}?at=a2"), confirm=True) as w:
        page = w.page
        page.click("#actions summary")
        page.fill('form[data-action="label"] input[name="label"]', "the table")
        page.click('form[data-action="label"] button')
        page.wait_for_function("() => document.getElementById('actresult').textContent.startsWith('done')")
        page.fill('form[data-action="name"] input[name="name"]', "renamed in the browser")
        page.click('form[data-action="name"] button')
        page.wait_for_function("() => document.getElementById('title').textContent === 'renamed in the browser'")
        page.goto(server.url + f"/s/{SHOWCASE}?at=r2")
        page.click("#actions summary")
        page.check('form[data-action="navigate"] input[name="summarize"]')
        page.click('form[data-action="navigate"] button')
        # the page reloads with the new leaf: a branch summary after r2
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('#rows a.row')).some(r => r.querySelector('.leafmark')"
            " && r.querySelector('.k').textContent === 'branch_summary' && r.dataset.id !== 'bs1')"
        )
        assert len(w.confirmed) == 3
        assert w.events == []
    path = next(own.glob(f"*/*{SHOWCASE}.jsonl"))
    ours = json.loads(subprocess.run([str(EXE), "context", str(path), "--json"], capture_output=True, text=True, check=True).stdout)
    theirs = json.loads(oracle("context", str(path)))
    assert ours == theirs
    entries = json.loads(oracle("entries", str(path)))["entries"]
    assert any(e["type"] == "label" and e.get("label") == "the table" and e["targetId"] == "a2" for e in entries)
    assert [e["name"] for e in entries if e["type"] == "session_info"][-1] == "renamed in the browser"
    summary = entries[-1]
    assert summary["type"] == "branch_summary" and summary["parentId"] == "r2" and summary["summary"]
    assert theirs["leafId"] == summary["id"]


def test_the_sessions_page_shows_activity(browser, tmp_path):
    root = file_store(tmp_path / "sessions")
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, Watched(browser, server.login_url("/")) as w:
        page = w.page
        assert page.locator("#sessions tr.active").count() == 0
        code = (
            "import sys, time; from pi_session import SessionManager; from pi_session.stores import open_store;"
            "m = SessionManager.open(sys.argv[2], store=open_store(sys.argv[1]));"
            "m.append_message({'role': 'user', 'content': 'still going', 'timestamp': int(time.time() * 1000)}); m.save()"
        )
        subprocess.run([sys.executable, "-c", code, str(root), LONG], check=True, timeout=120)
        page.wait_for_selector("#sessions tbody tr.active", timeout=15000)
        assert page.eval_on_selector("#sessions tbody tr:first-child .sub", "x => x.textContent") == LONG
        assert w.events == []


def test_entries_the_conversation_view_hides_are_shown_on_request(browser, tmp_path):
    from pi_session import SessionManager

    root = file_store(tmp_path / "sessions")
    path = next(root.glob(f"*/*{LONG}.jsonl"))
    manager = SessionManager.open(path)
    hidden_id = manager.append_custom_entry("ext/state", {"step": 1})
    manager.append_message({"role": "user", "content": "after the custom entry", "timestamp": 1764500000000})
    manager.save()
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, Watched(browser, server.login_url(f"/s/{LONG}")) as w:
        page = w.page
        row = page.locator(f'#rows a.row[data-id="{hidden_id}"]')
        assert "ext/state" in page.text_content(".hidnote")
        assert not row.is_visible()
        page.check("#showall")
        assert row.is_visible()
        assert w.events == []


def test_sessions_beyond_the_first_page_load_filter_and_walk(browser, tmp_path):
    from web_helpers import many_sessions

    ids = many_sessions(tmp_path / "sessions", 320)
    rows = "#sessions tbody tr"
    with Server(str(tmp_path / "sessions"), "--read-only", agent_dir=tmp_path / "agent") as server, \
            Watched(browser, server.login_url("/"), viewport={"width": 1000, "height": 700}) as w:
        page = w.page
        assert page.text_content("#count") == "320 sessions"
        assert page.eval_on_selector_all(f"{rows} .sub", "xs => xs.map(x => x.textContent)")[:3] == ids[:3]
        assert page.locator(rows).count() == 150
        # scrolling to the end of the list loads the next page through the API
        page.eval_on_selector("#sessionpager", "p => p.scrollIntoView()")
        page.wait_for_function(f"() => document.querySelectorAll('{rows}').length >= 300")
        page.eval_on_selector("#sessionpager", "p => p.scrollIntoView()")
        page.wait_for_function(f"() => document.querySelectorAll('{rows}').length === 320")
        assert page.eval_on_selector_all(f"{rows} .sub", "xs => xs.map(x => x.textContent)") == ids
        assert page.is_hidden("#sessionpager")
        # the filter asks the server: the oldest session, never sent with the page
        page.goto(server.url + "/")
        page.fill("#filter", "topic0X")
        page.wait_for_function(f"() => document.querySelectorAll('{rows}').length === 1")
        assert page.text_content(f"{rows} .sub") == ids[-1]
        assert page.text_content("#count") == "1 session"
        page.fill("#filter", "")
        page.wait_for_function(f"() => document.querySelectorAll('{rows}').length === 150")
        # j walks past the first page's rows into the ones it loads
        page.press("#filter", "Escape")
        for _ in range(160):
            page.keyboard.press("j")
        page.wait_for_function("() => document.querySelector('#sessions tr.cur') !== null")
        assert page.eval_on_selector("#sessions tr.cur .sub", "x => x.textContent") == ids[159]
        page.keyboard.press("k")
        assert page.eval_on_selector("#sessions tr.cur .sub", "x => x.textContent") == ids[158]
        # a project from the menu: its sessions only, from the server
        page.select_option("#project", "/many2")
        page.wait_for_function("() => document.querySelector('#count').textContent === '80 sessions'")
        assert set(page.eval_on_selector_all(f"{rows} .cwd", "xs => xs.map(x => x.textContent)")) == {"/many2"}
        assert w.events == []


def test_sessions_pages_without_script(browser, tmp_path):
    from web_helpers import many_sessions

    ids = many_sessions(tmp_path / "sessions", 170)
    with Server(str(tmp_path / "sessions"), "--read-only", agent_dir=tmp_path / "agent") as server, \
            Watched(browser, server.login_url("/"), java_script_enabled=False) as w:
        page = w.page
        assert page.locator("#sessions tbody tr").count() == 150
        page.click("#moresessions")
        page.wait_for_url("**/?offset=150")
        assert page.eval_on_selector_all("#sessions tbody tr .sub", "xs => xs.map(x => x.textContent)") == ids[150:]
        page.fill("#filter", "topic1x")
        page.click("#filterbutton")
        page.wait_for_url("**/?filter=topic1x**")
        assert page.eval_on_selector_all("#sessions tbody tr .sub", "xs => xs.map(x => x.textContent)") == [ids[-2]]
        assert w.events == []
