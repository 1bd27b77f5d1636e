"""``pi-session serve``'s JSON API and security rules, against the real
console script (uvicorn on 127.0.0.1, a free port) with httpx: one
server per module over a store of session files (the viewer's showcase,
hostile and long sessions); the tests that change the store or need other
options start their own."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from fake_providers import fake_provider  # noqa: F401  (fixture)
from cli_runner import run_in_process
from web_helpers import EXE, HOSTILE, LONG, SHOWCASE, Server, csrf_of, file_store

httpx = pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return file_store(tmp_path_factory.mktemp("web") / "sessions")


@pytest.fixture(scope="module")
def server(store, tmp_path_factory):
    with Server(str(store), agent_dir=tmp_path_factory.mktemp("agent")) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    with server.client(timeout=30) as c:
        yield c


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    """``pi-session ARGS`` in the test process (``tests/cli_runner.py``)."""
    return run_in_process(args, dict(os.environ))


def _error(response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["error"]["status"] == status
    assert "Traceback" not in response.text
    return body["error"]["message"]


def test_sessions_newest_first_and_filtered(client, store):
    infos = client.get("/api/v1/sessions").json()["sessions"]
    ids = [s["id"] for s in infos]
    assert set(ids) == {SHOWCASE, HOSTILE, LONG}
    modified = [s["modified"] for s in infos]
    assert modified == sorted(modified, reverse=True)
    assert [s["id"] for s in client.get("/api/v1/sessions", params={"q": "cent ROUNDING"}).json()["sessions"]] == [SHOWCASE]
    assert client.get("/api/v1/sessions", params={"limit": 1}).json()["sessions"] == infos[:1]


def test_session_header_and_paged_rows(client):
    full = client.get(f"/api/v1/sessions/{SHOWCASE}").json()
    assert full["id"] == SHOWCASE and full["name"] == "Cent rounding fix" and full["leafId"] == "n1"
    assert full["header"]["cwd"] == "/home/dev/projects/inventory"
    assert full["rowCount"] == full["entryCount"] == len(full["rows"])
    by_id = {r["id"]: r for r in full["rows"]}
    assert by_id["a2"]["label"] == "rounding fix" and by_id["n1"]["leaf"] is True
    assert by_id["u1"]["p"] == by_id["m0"]["i"]
    page = client.get(f"/api/v1/sessions/{SHOWCASE[:-2]}", params={"offset": 3, "limit": 4}).json()
    assert page["offset"] == 3 and page["rows"] == full["rows"][3:7]


def test_entry_and_its_path(client):
    body = client.get(f"/api/v1/sessions/{SHOWCASE}/entries/a2").json()
    assert body["entry"]["id"] == "a2" and body["label"] == "rounding fix"
    assert body["path"] == ["m0", "u1", "a1", "r1", "a2"]
    assert body["html"].startswith("<article")
    assert "no entry" in _error(client.get(f"/api/v1/sessions/{SHOWCASE}/entries/nope"), 404)


@pytest.mark.parametrize("leaf", [None, "a2", "u2"])
def test_context_is_the_cli_context(client, store, leaf):
    params = {"leaf": leaf} if leaf else {}
    ours = client.get(f"/api/v1/sessions/{SHOWCASE}/context", params=params).json()
    args = ["--store", str(store), "context", SHOWCASE, "--json"] + (["--leaf", leaf] if leaf else [])
    cli = _run_cli(*args)
    assert cli.returncode == 0, cli.stderr
    assert ours == json.loads(cli.stdout)


def test_search_hits_and_query_errors(client, store):
    response = client.get("/api/v1/search", params={"q": "banker"})
    hits = response.json()["hits"]
    assert hits and all(h["sessionId"] == SHOWCASE for h in hits)
    # the server's file paths stay on the server: a hit opens by its session id
    assert all("location" not in h for h in hits) and str(store) not in response.text
    assert any(h["entryId"] == "u2" for h in hits)
    hit = next(h for h in hits if h["entryId"] == "u2")
    start, end = hit["marks"][0]
    assert hit["snippet"][start:end].lower().startswith("banker")
    assert "query" in _error(client.get("/api/v1/search", params={"q": '"unclosed'}), 400)
    _error(client.get("/api/v1/search", params={"q": "  "}), 400)


def test_usage_daily_is_the_cli_report(client, store):
    ours = client.get("/api/v1/usage/daily", params={"timezone": "UTC"}).json()
    cli = _run_cli("usage", "daily", "--json", "--timezone", "UTC", "--store", str(store))
    assert cli.returncode == 0, cli.stderr
    assert ours == json.loads(cli.stdout)
    assert ours["daily"] and ours["totals"]["totalCost"] > 0
    _error(client.get("/api/v1/usage/daily", params={"since": "yesterday"}), 400)


def test_errors_are_json_and_never_a_file_outside_the_store(client):
    assert "no session" in _error(client.get("/api/v1/sessions/ffffffff"), 404)
    assert "ambiguous" in _error(client.get("/api/v1/sessions/0196a"), 409)
    for evil in ("..", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "etc.passwd", "~root"):
        response = client.get(f"/api/v1/sessions/{evil}")
        assert response.status_code in (400, 404), (evil, response.text)
        assert "root:" not in response.text and "Traceback" not in response.text
    _error(client.get("/api/v1/nothing-here"), 404)
    static = client.get("/static/..%2f..%2fweb%2fapp.py")
    assert static.status_code == 404 and "import" not in static.text
    _error(client.get(f"/api/v1/sessions/{SHOWCASE}", params={"offset": "x"}), 400)


def test_security_headers_on_pages_and_api(client):
    for path in ("/", f"/s/{SHOWCASE}", "/api/v1/sessions", "/static/web.js"):
        response = client.get(path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"


def test_hostile_text_is_escaped(client):
    for path in ("/", f"/s/{HOSTILE}", f"/s/{HOSTILE}/context", "/search?q=alert"):
        page = client.get(path).text
        assert "<script>alert" not in page and "<script>window" not in page, path
        assert "<img src=x" not in page and "<svg onload" not in page, path
        assert page.count("<script") == 1  # our own script file


def test_wrong_host_and_origin_are_refused(client, server):
    assert "DNS rebinding" in _error(client.get("/api/v1/sessions", headers={"Host": "evil.example"}), 421)
    assert "DNS rebinding" in _error(client.get("/", headers={"Host": f"attacker.example:{server.url.rsplit(':', 1)[1]}"}), 421)
    _error(client.get("/api/v1/sessions", headers={"Origin": "http://evil.example"}), 403)
    _error(client.get("/api/v1/sessions", headers={"Origin": "null"}), 403)
    assert client.get("/api/v1/sessions", headers={"Host": "localhost:" + server.url.rsplit(":", 1)[1]}).status_code == 200


def test_posts_need_the_csrf_token(client, server):
    url = f"/api/v1/sessions/{SHOWCASE}/label"
    body = {"entryId": "u1", "label": "x"}
    assert "CSRF" in _error(client.post(url, json=body, headers={"Origin": server.url}), 403)
    assert "CSRF" in _error(client.post(url, json=body, headers={"Origin": server.url, "X-CSRF-Token": "guess"}), 403)
    token = csrf_of(client, "/")
    # the right token from another origin, or with no origin at all
    _error(client.post(url, json=body, headers={"Origin": "http://evil.example", "X-CSRF-Token": token}), 403)
    assert "Origin" in _error(client.post(url, json=body, headers={"X-CSRF-Token": token}), 403)


@pytest.fixture
def own_store(tmp_path):
    return file_store(tmp_path / "sessions")


def test_label_and_rename_write_the_session(own_store, tmp_path, oracle):
    with Server(str(own_store), agent_dir=tmp_path / "agent") as server, server.client(timeout=30) as client:
        token = csrf_of(client, "/")
        headers = {"Origin": server.url, "X-CSRF-Token": token}
        done = client.post(f"/api/v1/sessions/{LONG}/label", json={"entryId": "u2", "label": "start here"}, headers=headers)
        assert done.status_code == 200, done.text
        assert done.json()["targetId"] == "u2"
        renamed = client.post(f"/api/v1/sessions/{LONG}/name", json={"name": "long one"}, headers=headers)
        assert renamed.status_code == 200, renamed.text
        assert "no entry" in _error(client.post(f"/api/v1/sessions/{LONG}/label", json={"entryId": "zz", "label": "a"}, headers=headers), 404)
        _error(client.post(f"/api/v1/sessions/{LONG}/label", json={"entryId": 3}, headers=headers), 400)
        _error(client.post(f"/api/v1/sessions/{LONG}/name", content=b"{not json", headers=headers), 400)
        session = client.get(f"/api/v1/sessions/{LONG}").json()
        assert session["name"] == "long one"
    path = next(own_store.glob(f"*/*{LONG}.jsonl"))
    tree = json.loads(oracle("tree", str(path)))

    def labels(nodes):
        for n in nodes:
            yield n["id"], n.get("label")
            yield from labels(n.get("children", []))

    assert dict(labels(tree["roots"]))["u2"] == "start here"
    entries = json.loads(oracle("entries", str(path)))["entries"]
    assert [e["name"] for e in entries if e["type"] == "session_info"] == ["long one"]


def test_read_only_refuses_actions(own_store, tmp_path):
    before = {p: p.read_bytes() for p in own_store.rglob("*.jsonl")}
    with Server(str(own_store), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=30) as client:
        token = csrf_of(client, "/")
        response = client.post(f"/api/v1/sessions/{LONG}/label", json={"entryId": "u2", "label": "x"},
                               headers={"Origin": server.url, "X-CSRF-Token": token})
        assert "read-only" in _error(response, 405)
        assert 'data-action="label"' not in client.get(f"/s/{LONG}").text
    assert before == {p: p.read_bytes() for p in own_store.rglob("*.jsonl")}


def test_non_loopback_host_needs_a_token(own_store, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PI_SESSION_SERVE_TOKEN"}
    run = subprocess.run([str(EXE), "--store", str(own_store), "serve", "--host", "0.0.0.0", "--port", "0"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 1
    assert "--token" in run.stderr and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_token_is_required_then_accepted(own_store, tmp_path):
    token = "t0ken-for-the-test-0123456789"
    with Server(str(own_store), "--host", "0.0.0.0", env={"PI_SESSION_SERVE_TOKEN": token}, agent_dir=tmp_path / "agent") as server:
        port = server.url.rsplit(":", 1)[1]
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            assert "token" in _error(client.get("/api/v1/sessions"), 401)
            # bound to every address: the machine's name is answered too, other names are not
            import socket

            named = client.get("/api/v1/sessions", headers={"Host": f"{socket.gethostname()}:{port}", "Authorization": f"Bearer {token}"})
            assert named.status_code == 200
            _error(client.get("/api/v1/sessions", headers={"Host": f"elsewhere.example:{port}", "Authorization": f"Bearer {token}"}), 421)
            _error(client.get("/api/v1/sessions", headers={"Authorization": "Bearer wrong-token-wrong-token"}), 401)
            assert client.get("/api/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
            _error(client.get("/?token=wrong"), 401)
            login = client.get(f"/s/{LONG}?token={token}", follow_redirects=False)
            assert login.status_code == 303 and login.headers["location"] == f"/s/{LONG}"
            assert "HttpOnly" in login.headers["set-cookie"] and "SameSite=Strict" in login.headers["set-cookie"]
            # the client keeps the cookie: the pages and the API work without the header now
            assert client.get(f"/s/{LONG}").status_code == 200
            assert client.get("/api/v1/sessions").status_code == 200


def test_bad_token_is_refused_at_start(own_store):
    run = _run_cli("--store", str(own_store), "serve", "--token", "short")
    assert run.returncode == 1 and "--token" in run.stderr and "Traceback" not in run.stderr


def test_unknown_store_fails_with_one_line(tmp_path):
    missing = tmp_path / "nothing" / "x.db"
    run = _run_cli("--store", f"sqlite:///{missing}", "serve")
    assert run.returncode != 0 and "Traceback" not in run.stderr and run.stderr.strip()


def test_web_imports_no_front_end():
    """pi_session.web is built on the library alone: no module of it imports
    the CLI or the terminal browser (at module level or in a function)."""
    import ast

    import pi_session.web

    root = Path(pi_session.web.__file__).parent
    found = []
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [(path.name, n) for n in names if any(part in ("cli", "browse") for part in n.replace(".", " ").split())]
    assert found == []


def test_compact_scrub_export_and_leaf_moved(own_store, tmp_path, oracle):
    from pi_session import SessionManager
    from secrets_corpus import SECRETS

    token = SECRETS[9][2]
    path = next(own_store.glob(f"*/*{LONG}.jsonl"))
    manager = SessionManager.open(path)
    manager.append_message({"role": "user", "content": f"use {token} for the push", "timestamp": 1764500000000})
    manager.save()
    with Server(str(own_store), agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        headers = {"Origin": server.url, "X-CSRF-Token": csrf_of(client, "/")}
        scrubbed = client.post(f"/api/v1/sessions/{LONG}/scrub", json={}, headers=headers)
        assert scrubbed.status_code == 200, scrubbed.text
        assert scrubbed.json()["secrets"] == 1 and len(scrubbed.json()["edits"]) == 1
        assert token not in client.get(f"/api/v1/sessions/{LONG}/context").text
        leaf = client.get(f"/api/v1/sessions/{LONG}").json()["leafId"]
        # the page showed another leaf: refused, nothing written
        moved = client.post(f"/api/v1/sessions/{LONG}/compact", json={"expectLeaf": "u2"}, headers=headers)
        assert "leaf moved" in _error(moved, 409)
        done = client.post(f"/api/v1/sessions/{LONG}/compact", json={"expectLeaf": leaf, "keepRecentTokens": 20}, headers=headers)
        assert done.status_code == 200, done.text
        masked = client.get(f"/api/v1/sessions/{LONG}/export", params={"format": "jsonl"})
        exported = client.get(f"/api/v1/sessions/{LONG}/export", params={"format": "jsonl", "secrets": "show"})
        assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
        html = client.get(f"/api/v1/sessions/{SHOWCASE}/export", params={"format": "html"})
        assert html.status_code == 200 and html.text.startswith("<!DOCTYPE html>")
        _error(client.get(f"/api/v1/sessions/{LONG}/export", params={"format": "exe"}), 400)
    assert exported.content == path.read_bytes() and token.encode() in exported.content
    assert token.encode() not in masked.content and b"[REDACTED:github-token]" in masked.content
    entries = json.loads(oracle("entries", str(path)))["entries"]
    assert entries[-1]["type"] == "compaction" and entries[-1]["summary"]
    ours = json.loads(_run_cli("context", str(path), "--json").stdout)
    assert ours == json.loads(oracle("context", str(path)))
    assert ours["messages"][0]["role"] == "compactionSummary"
    assert token not in json.dumps(ours)


def test_scrub_buttons_say_what_each_mode_does_and_leave_no_secret_in_the_context(own_store, tmp_path):
    """The page offers both scrub modes with wording true for each: "Hide
    secrets from the model" appends context edits (no backup is claimed;
    a key from ``!cat .env`` is hidden by leaving that bash execution
    out), and refuses (409, naming the entry and its kind, pointing to the
    rewrite) when a secret sits where an edit cannot hide it; "Remove
    secrets from the session" rewrites the file and keeps the backup it
    promises (mode 0600). Afterwards no context holds a key."""
    import stat

    from secrets_corpus import BASH_KEYS, SECRETS, bash_env_session

    summary_key = SECRETS[9][2]
    plain_id, summarized_id = "0196a000-0000-7000-8000-00000000ba51", "0196a000-0000-7000-8000-00000000ba52"
    folder = next(own_store.glob("*/"))
    plain = bash_env_session(folder / f"2026-11-30T12-00-00-000Z_{plain_id}.jsonl", session_id=plain_id)
    summarized = bash_env_session(folder / f"2026-11-30T12-00-00-000Z_{summarized_id}.jsonl", session_id=summarized_id,
                                  summary_key=summary_key)
    keys = [*BASH_KEYS, summary_key]

    def context(client, sid: str) -> str:
        answer = client.get(f"/api/v1/sessions/{sid}/context", params={"secrets": "show"})
        assert answer.status_code == 200, answer.text
        return answer.text

    with Server(str(own_store), agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        page = client.get(f"/s/{plain_id}").text
        forms = re.findall(r'<form class="act" data-action="scrub" data-confirm="([^"]*)"><input type="hidden" name="mode" value="(\w+)">'
                           r"<button>([^<]*)</button>", page)
        assert [(mode, button) for _q, mode, button in forms] == [
            ("edit", "Hide secrets from the model"), ("rewrite", "Remove secrets from the session")]
        (edit_question, _, _), (rewrite_question, _, _) = forms
        assert "backup" not in edit_question and "nothing is rewritten" in edit_question and "keeps the secrets" in edit_question
        assert "secrets.bak" in rewrite_question and "mode 0600" in rewrite_question
        assert "backup is kept" not in page

        headers = {"Origin": server.url, "X-CSRF-Token": csrf_of(client, "/")}
        assert any(k in context(client, plain_id) for k in BASH_KEYS)
        hidden = client.post(f"/api/v1/sessions/{plain_id}/scrub", json={"mode": "edit"}, headers=headers)
        assert hidden.status_code == 200, hidden.text
        assert hidden.json()["omitted"] == ["bash1", "bash2"] and hidden.json()["notHidden"] == 0
        assert not any(k in context(client, plain_id) for k in keys)
        assert not list(folder.glob("*.bak"))  # an append: nothing rewritten, no backup

        refused = client.post(f"/api/v1/sessions/{summarized_id}/scrub", json={"mode": "edit"}, headers=headers)
        message = _error(refused, 409)
        assert "cmp1 (compaction summary)" in message and "Remove secrets from the session" in message
        assert summary_key not in message
        assert "mode: expected edit or rewrite" in _error(client.post(f"/api/v1/sessions/{summarized_id}/scrub", json={"mode": "wipe"}, headers=headers), 400)

        removed = client.post(f"/api/v1/sessions/{summarized_id}/scrub", json={"mode": "rewrite"}, headers=headers)
        assert removed.status_code == 200, removed.text
        assert removed.json()["backupKept"] is True and removed.json()["secrets"] >= 3
        assert not any(k in context(client, summarized_id) for k in keys)
    assert not any(k in summarized.read_text() for k in keys) and "[REDACTED:github-token]" in summarized.read_text()
    backup = summarized.parent / (summarized.name + ".secrets.bak")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600 and summary_key in backup.read_text()
    assert all(k in plain.read_text() for k in BASH_KEYS)  # edit mode: the file keeps them
    ours = json.loads(_run_cli("context", str(summarized), "--json").stdout)
    assert not any(k in json.dumps(ours) for k in keys)


def test_secrets_are_masked_unless_asked(own_store, tmp_path):
    from pi_session import SessionManager
    from secrets_corpus import SECRETS

    token = SECRETS[9][2]
    path = next(own_store.glob(f"*/*{LONG}.jsonl"))
    manager = SessionManager.open(path)
    entry = manager.append_message({"role": "user", "content": f"zebra key {token}", "timestamp": 1764500000000})
    manager.save()
    with Server(str(own_store), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        for url in (f"/s/{LONG}", f"/s/{LONG}/context", f"/api/v1/sessions/{LONG}/context", f"/api/v1/sessions/{LONG}/entries/{entry}",
                    "/search?q=zebra", "/api/v1/search?q=zebra", f"/api/v1/sessions/{LONG}/export?format=html"):
            masked = client.get(url)
            assert masked.status_code == 200, url
            assert token not in masked.text and "REDACTED" in masked.text, url
            sep = "&" if "?" in url else "?"
            assert token in client.get(url + sep + "secrets=show").text, url


def test_a_long_session_page_is_paged(tmp_path):
    root = file_store(tmp_path / "sessions", long_entries=1200)
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        # opens at the page of rows holding the leaf (row 1199): rows 1001-1200, with a link to the ones before
        page = client.get(f"/s/{LONG}").text
        assert page.count('class="row item') == 200 and 'id="prevrows"' in page and 'id="nextrows"' not in page
        assert page.count("<article") == 200  # the last entries of the path
        first = client.get(f"/s/{LONG}", params={"offset": 0}).text
        assert first.count('class="row item') == 500 and 'id="nextrows"' in first
        assert '<h1 id="title">question 0</h1>' in first  # no name: the first user message, as the viewer titles it
        api = client.get(f"/api/v1/sessions/{LONG}", params={"offset": 1000}).json()
        assert api["rowCount"] == 1200 and len(api["rows"]) == 200 and api["rows"][0]["i"] == 1000


def test_ctrl_c_ends_the_server_with_a_live_stream_open(own_store, tmp_path):
    import signal
    import threading

    server = Server(str(own_store), agent_dir=tmp_path / "agent")
    try:
        opened = threading.Event()

        def listen() -> None:
            with server.client(timeout=30) as client, client.stream("GET", f"/api/v1/sessions/{LONG}/events") as response:
                for _line in response.iter_lines():
                    opened.set()

        reader = threading.Thread(target=listen, daemon=True)
        reader.start()
        assert opened.wait(20)
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(5) in (0, 130)  # 130: the command line's status for Ctrl-C
    finally:
        stderr = server.close()
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr


def test_compact_with_a_configured_model(own_store, tmp_path, fake_provider):
    fake_provider.reply_text = "## Goal\n- summary written by the configured model"
    answered: list[int] = []

    def meanwhile(_request) -> None:
        # while the model writes the summary, the server answers other requests
        with server.client(timeout=10) as other:
            answered.append(other.get(f"/api/v1/sessions/{SHOWCASE}", params={"secrets": "show"}).status_code)

    fake_provider.on_post = meanwhile
    args = ("--provider", "openai", "--model", "test-model", "--base-url", fake_provider.openai_base_url)
    with Server(str(own_store), *args, env={"OPENAI_API_KEY": "sk-test"}, agent_dir=tmp_path / "agent") as server, \
            server.client(timeout=120) as client:
        headers = {"Origin": server.url, "X-CSRF-Token": csrf_of(client, "/")}
        done = client.post(f"/api/v1/sessions/{LONG}/compact", json={"keepRecentTokens": 20}, headers=headers)
        assert done.status_code == 200, done.text
    assert fake_provider.requests and fake_provider.requests[-1].json["model"] == "test-model"
    assert answered and set(answered) == {200}
    path = next(own_store.glob(f"*/*{LONG}.jsonl"))
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["type"] == "compaction" and "summary written by the configured model" in last["summary"]


def test_a_provider_without_its_key_is_refused_at_start(own_store):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    run = subprocess.run([str(EXE), "--store", str(own_store), "serve", "--provider", "openai"], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 1 and "OPENAI_API_KEY" in run.stderr and "Traceback" not in run.stderr


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A store of 200 sessions (more than the sessions page's first 150),
    its server and the ids newest first; its own listing cache."""
    from web_helpers import many_sessions

    base = tmp_path_factory.mktemp("many")
    ids = many_sessions(base / "sessions", 200)
    cache = base / "cache"
    with Server(str(base / "sessions"), "--read-only", agent_dir=base / "agent", env={"XDG_CACHE_HOME": str(cache)}) as s:
        yield s, ids, cache


def test_the_listing_is_read_before_the_server_is_ready(many):
    # the URL is printed once the listing is read (its index written) and
    # the sessions page made: the first request answers from memory
    _server, _ids, cache = many
    assert len(list((cache / "pi-session" / "listing").glob("*.json"))) == 4


def test_sessions_api_pages_and_filters_every_session(many):
    server, ids, _cache = many
    with server.client(timeout=30) as client:
        first = client.get("/api/v1/sessions", params={"limit": 150}).json()
        assert [s["id"] for s in first["sessions"]] == ids[:150]
        assert (first["total"], first["offset"], first["count"]) == (200, 0, 200)
        rest = client.get("/api/v1/sessions", params={"offset": 150, "limit": 150}).json()
        assert [s["id"] for s in rest["sessions"]] == ids[150:]
        assert client.get("/api/v1/sessions").json()["sessions"] == first["sessions"] + rest["sessions"]
        # every word, anywhere, case-insensitive: the oldest session, far past the first page
        found = client.get("/api/v1/sessions", params={"q": "TOPIC0x question"}).json()
        assert [s["id"] for s in found["sessions"]] == [ids[-1]] and found["total"] == 1
        assert client.get("/api/v1/sessions", params={"q": "topic0x nothere"}).json()["total"] == 0
        in_project = client.get("/api/v1/sessions", params={"project": "/many1", "limit": 10}).json()
        assert in_project["total"] == 50 and all(s["cwd"] == "/many1" for s in in_project["sessions"])
        _error(client.get("/api/v1/sessions", params={"offset": "-1"}), 400)


def test_sessions_page_sends_the_first_page_and_links_the_next(many):
    import re

    server, ids, _cache = many
    with server.client(timeout=30) as client:
        page = client.get("/").text
        shown = re.findall(r'<div class="sub">([^<]+)</div>', page)
        assert shown == ids[:150]
        assert "200 sessions" in page and "All projects (200)" in page and "/many3 (50)" in page
        more = re.search(r'<a id="moresessions" href="([^"]+)"', page)
        assert more and more[1] == "/?offset=150"
        second = client.get(more[1]).text
        assert re.findall(r'<div class="sub">([^<]+)</div>', second) == ids[150:]
        assert 'id="moresessions"' not in second and 'id="prevsessions" href="/">' in second
        # without script, the form's filter finds a session of any page
        filtered = client.get("/", params={"filter": "topic3x"}).text
        assert re.findall(r'<div class="sub">([^<]+)</div>', filtered) == [ids[-4]]
        assert 'value="topic3x"' in filtered
