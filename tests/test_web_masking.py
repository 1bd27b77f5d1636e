"""Secrets masked on ``pi-session serve``'s session pages and API: in
everything a page shows (entries, labels, the session name, context-edit
replacements, tool-call arguments), and by scanning only what is shown."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import pytest

from secrets_corpus import SECRETS
from web_helpers import Server, csrf_of

httpx = pytest.importorskip("httpx")

SID = "0196c000-0000-7000-8000-00000000a5ec"
TOKEN = SECRETS[9][2]


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


def _secret_session(root: Path) -> Path:
    """A session whose secret sits in its name, a label, a tool call's
    arguments, a tool result and a context edit's replacement."""
    d = root / "--m--"
    d.mkdir(parents=True)
    stamp = "2026-11-30T10:00:00.000Z"
    records = [
        {"type": "session", "version": 3, "id": SID, "timestamp": stamp, "cwd": "/m"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
         "message": {"role": "user", "content": "deploy it", "timestamp": 1764496800000}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp,
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": f"gh auth login {TOKEN}"}}],
                     "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1764496800001}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": stamp,
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "logged in"}],
                     "isError": False, "timestamp": 1764496800002}},
        {"type": "context_edit", "id": "e1", "parentId": "r1", "timestamp": stamp, "targetId": "u1",
         "replacement": {"content": f"deploy with {TOKEN}"}},
        {"type": "label", "id": "l1", "parentId": "e1", "timestamp": stamp, "targetId": "a1", "label": f"key {TOKEN}"},
        {"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": stamp, "name": f"release {TOKEN}"},
    ]
    (d / f"2026-11-30T10-00-00-000Z_{SID}.jsonl").write_text("".join(_line(r) for r in records))
    return root


def test_every_shown_secret_is_masked(tmp_path):
    root = _secret_session(tmp_path / "sessions")
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        for url in (f"/s/{SID}", f"/s/{SID}?at=u1", f"/s/{SID}?at=r1", f"/s/{SID}?at=a1", f"/api/v1/sessions/{SID}",
                    f"/api/v1/sessions/{SID}/entries/a1", f"/api/v1/sessions/{SID}/entries/r1", f"/api/v1/sessions/{SID}/entries/u1",
                    f"/api/v1/sessions/{SID}/entries/l1", f"/api/v1/sessions/{SID}/entries/n1"):
            masked = client.get(url)
            assert masked.status_code == 200, url
            assert TOKEN not in masked.text and "REDACTED" in masked.text, url
        for url in (f"/s/{SID}", f"/api/v1/sessions/{SID}", f"/api/v1/sessions/{SID}/entries/a1", f"/api/v1/sessions/{SID}/entries/u1"):
            assert TOKEN in client.get(url, params={"secrets": "show"}).text, url


def test_a_masked_page_scans_only_what_it_shows(tmp_path, monkeypatch):
    """The first screen of a long session, secrets masked, scans about a
    page of rows, not every entry (the real scanner, its calls counted)."""
    from pi_session.secrets.scanner import Scanner
    from pi_session.stores import open_store
    from pi_session.web import pages
    from pi_session.web.data import PAGE_ROWS, StoreAccess

    d = tmp_path / "sessions" / "--big--"
    d.mkdir(parents=True)
    sid = "0196c000-0000-7000-8000-0000000b1600"
    stamp = "2026-11-30T00:00:00.000Z"
    lines = [_line({"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": "/big"})]
    parent = None
    for k in range(5000):
        eid = f"{k:08x}"
        lines.append(_line({"type": "message", "id": eid, "parentId": parent, "timestamp": stamp,
                            "message": {"role": "user", "content": f"step {k}: run the tests again, then report what failed", "timestamp": 1764460800000 + k}}))
        parent = eid
    lines.append(_line({"type": "message", "id": "last", "parentId": parent, "timestamp": stamp,
                        "message": {"role": "user", "content": f"use {TOKEN}", "timestamp": 1764460900000}}))
    (d / f"2026-11-30T00-00-00-000Z_{sid}.jsonl").write_text("".join(lines))

    scanned: list[str] = []
    real_scan = Scanner.scan

    def counting_scan(self: Scanner, text: str) -> list:
        scanned.append(text)
        return real_scan(self, text)

    monkeypatch.setattr(Scanner, "scan", counting_scan)
    access = StoreAccess(open_store(tmp_path / "sessions"))
    view = access.view(sid, redact=True)
    html = pages.session_page(view, selected=view.leaf_index, offset=(view.leaf_index // PAGE_ROWS) * PAGE_ROWS, csrf="x", read_only=True)
    assert TOKEN not in html and "[REDACTED:github-token]" in html
    assert 0 < len(scanned) < 3 * PAGE_ROWS, len(scanned)


# -- every route ------------------------------------------------------------

WALK_SID = "0196c000-0000-7000-8000-0000000a11ed"
PLANTED = {  # where the secret sits -> the secret (each a format the scanner finds)
    "name": SECRETS[9][2], "cwd": SECRETS[7][2], "first message": SECRETS[0][2], "label": SECRETS[12][2],
    "tool arguments": SECRETS[3][2], "tool result": SECRETS[13][2], "thinking": SECRETS[6][2], "context edit": SECRETS[16][2],
    "bash": SECRETS[18][2], "custom message": SECRETS[5][2], "branch summary": SECRETS[8][2], "compaction": SECRETS[10][2],
    "snippet start": SECRETS[4][2], "live append": SECRETS[11][2],
}


def _walk_session(root: Path) -> Path:
    """A session holding a secret in every place the server shows text
    (:data:`PLANTED`), each after the word ``zebra`` (one search hits them
    all); the first message's crosses the listing's 300 characters, the
    tool result's and one assistant text's the edges of a search snippet.
    Its directory is named for its cwd, as pi names it."""
    s = PLANTED
    cwd = f"/srv/{s['cwd']}/app"
    d = root / ("--" + cwd.strip("/").replace("/", "-") + "--")
    d.mkdir(parents=True)
    stamp = "2026-11-30T10:00:00.000Z"
    usage = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.01}}
    asst = {"api": "openai-responses", "provider": "openai", "model": "gpt-5", "usage": usage}

    def entry(etype: str, eid: str, parent: str | None, **fields) -> dict:
        return {"type": etype, "id": eid, "parentId": parent, "timestamp": stamp, **fields}

    first = "zebra " + "words " * 46 + "key " + s["first message"] + " for the deploy"
    records = [
        {"type": "session", "version": 3, "id": WALK_SID, "timestamp": stamp, "cwd": cwd},
        entry("message", "u1", None, message={"role": "user", "content": first, "timestamp": 1764496800000}),
        entry("message", "a1", "u1", message={"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"zebra the key is {s['thinking']}"},
            {"type": "text", "text": "pad " * 10 + s["snippet start"] + " then zebra follows the key"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": f"zebra login {s['tool arguments']}"}}],
            **asst, "stopReason": "toolUse", "timestamp": 1764496800001}),
        entry("message", "r1", "a1", message={"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                                              "content": [{"type": "text", "text": "zebra " + "aaaaaa " * 18 + s["tool result"]}],
                                              "timestamp": 1764496800002}),
        entry("context_edit", "e1", "r1", targetId="u1", replacement={"content": f"zebra deploy with {s['context edit']}"}),
        entry("label", "l1", "e1", targetId="a1", label=f"zebra key {s['label']}"),
        entry("message", "x1", "l1", message={"role": "bashExecution", "command": f"zebra curl -H 'Authorization: Bearer {s['bash']}'",
                                              "output": "ok", "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 1764496800003}),
        entry("custom_message", "cm1", "x1", customType="note", content=f"zebra maps {s['custom message']}", display=True),
        entry("branch_summary", "b1", "cm1", fromId="a1", summary=f"zebra tried {s['branch summary']}"),
        entry("compaction", "k1", "b1", summary=f"zebra goal: use {s['compaction']}", firstKeptEntryId="x1", tokensBefore=1000),
        entry("message", "u2", "k1", message={"role": "user", "content": "zebra go on", "timestamp": 1764496800004}),
        entry("message", "a2", "u2", message={"role": "assistant", "content": [{"type": "text", "text": "zebra done"}],
                                              **asst, "stopReason": "stop", "timestamp": 1764496800005}),
        entry("session_info", "n1", "a2", name=f"zebra release {s['name']}"),
    ]
    path = d / f"2026-11-30T10-00-00-000Z_{WALK_SID}.jsonl"
    path.write_text("".join(_line(r) for r in records))
    return path


def _leaks(body: str, planted: dict[str, str]) -> list[str]:
    """The places whose secret, or any 12 characters of it, is in ``body``."""
    return [place for place, secret in planted.items() if any(secret[i:i + 12] in body for i in range(len(secret) - 11))]


def _routes(root: Path) -> set[tuple[str, str]]:
    """(method, path) of every route of the server's app (from the
    Starlette app itself, so a new route is walked or this test fails)."""
    from pi_session.stores import open_store
    from pi_session.web import create_app

    app = create_app(open_store(root)).app
    return {(method, route.path) for route in app.routes for method in (route.methods or {"GET"}) if method != "HEAD"}


def _gets(entry_ids: list[str]) -> dict[str, list[str]]:
    """Route path -> the addresses the walk asks for it."""
    s = f"/api/v1/sessions/{WALK_SID}"
    masked_cwd = f"/srv/[REDACTED:aws-access-key]/app"
    return {
        "/": ["/", "/?filter=zebra", "/?offset=0&filter=release", "/?" + urlencode({"project": masked_cwd})],
        "/api/v1/sessions": ["/api/v1/sessions", "/api/v1/sessions?q=zebra&limit=5", "/api/v1/sessions?project=" + masked_cwd],
        "/api/v1/sessions/{sid}": [s, s + "?offset=3&limit=4"],
        "/api/v1/sessions/{sid}/entries/{eid}": [f"{s}/entries/{e}" for e in entry_ids],
        "/api/v1/sessions/{sid}/context": [f"{s}/context"] + [f"{s}/context?leaf={e}" for e in entry_ids],
        "/api/v1/sessions/{sid}/export": [f"{s}/export?format={f}" for f in ("html", "md", "jsonl")],
        "/api/v1/search": ["/api/v1/search?q=zebra", "/api/v1/search?q=zebra+role:assistant", "/api/v1/search?q=key"],
        "/api/v1/usage/daily": ["/api/v1/usage/daily"],
        "/api/v1/usage/breakdown": ["/api/v1/usage/breakdown"],
        "/search": ["/search?q=zebra", "/search?q=key"],
        "/costs": ["/costs"],
        "/s/{sid}": [f"/s/{WALK_SID}"] + [f"/s/{WALK_SID}?at={e}" for e in entry_ids],
        "/s/{sid}/context": [f"/s/{WALK_SID}/context"] + [f"/s/{WALK_SID}/context?leaf={e}" for e in entry_ids],
        "/static/{name}": ["/static/web.js", "/static/web.css", "/static/viewer.css"],
    }


def _events(client, url: str, then) -> list[str]:
    """The data of the live events at ``url`` up to the first ``entries``
    one, ``then()`` run once the stream said hello."""
    seen: list[str] = []
    with client.stream("GET", url, timeout=httpx.Timeout(30, read=20)) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                seen.append(line[6:])
                if len(seen) == 1:
                    then()
                else:
                    return seen
    raise AssertionError("the event stream ended")


def test_no_route_shows_a_secret_unless_asked(tmp_path):
    """Every route of the app (GET with its query variants, the live
    events, every action), before and after the actions wrote summaries
    and edits: no secret of :data:`PLANTED`, nor any 12 characters of one,
    in any answer; each shown with ``?secrets=show``."""
    from pi_session import SessionManager

    root = tmp_path / "sessions"
    path = _walk_session(root)
    entry_ids = [json.loads(line)["id"] for line in path.read_text().splitlines()[1:]]
    gets = _gets(entry_ids)
    events = f"/api/v1/sessions/{WALK_SID}/events"
    posts = {f"/api/v1/sessions/{{sid}}/{name}": body for name, body in (
        ("label", {"entryId": "u2", "label": "checked"}), ("name", {"name": "renamed"}),
        ("navigate", {"entryId": "a1", "summarize": True}), ("compact", {"keepRecentTokens": 1}), ("scrub", {}))}
    walked = {("GET", p) for p in gets} | {("GET", "/api/v1/sessions/{sid}/events")} | {("POST", p) for p in posts}
    assert _routes(root) == walked, "a route the walk does not know: add it to the walk"
    leaks: list[tuple[str, str]] = []
    shown: set[str] = set()

    def walk(client) -> None:
        for urls in gets.values():
            for url in urls:
                answer = client.get(url)
                assert answer.status_code == 200, (url, answer.text[:300])
                leaks.extend((url, place) for place in _leaks(answer.text, PLANTED))
                body = client.get(url + ("&" if "?" in url else "?") + "secrets=show").text
                shown.update(place for place, secret in PLANTED.items() if secret in body)

    def append_live() -> None:
        writer = SessionManager.open(path)
        writer.append_message({"role": "user", "content": f"zebra now {PLANTED['live append']}", "timestamp": 1764496900000})
        writer.save()

    with Server(str(root), agent_dir=tmp_path / "agent") as server, server.client(timeout=60) as client:
        walk(client)
        # the sessions list shows the name, the cwd and the first message when asked
        listing = client.get("/api/v1/sessions", params={"secrets": "show"}).json()["sessions"][0]
        assert PLANTED["name"] in listing["name"] and PLANTED["cwd"] in listing["cwd"]
        assert PLANTED["first message"][:12] in listing["firstMessage"]
        for data in _events(client, events, append_live):
            leaks.extend(("events", place) for place in _leaks(data, PLANTED))
        live = _events(client, events + "?secrets=show", append_live)
        shown.update(place for place, secret in PLANTED.items() if any(secret in data for data in live))
        headers = {"Origin": server.url, "X-CSRF-Token": csrf_of(client, "/")}
        for route, body in posts.items():
            answer = client.post(route.replace("{sid}", WALK_SID), json=body, headers=headers)
            assert answer.status_code in (200, 409), (route, answer.text)
            leaks.extend((route, place) for place in _leaks(answer.text, PLANTED))
        walk(client)  # again, with the summaries and edits the actions wrote
    assert sorted(set(leaks)) == [], "\n".join(map(str, sorted(set(leaks))))
    assert shown == set(PLANTED), set(PLANTED) - shown
