"""``pi-session serve`` over each store (session files, SQLite,
PostgreSQL): the API lists, opens and searches the store's sessions, and
the live events (server-sent events) carry an entry another process
appends; on PostgreSQL, two servers on one store see each other's
writes."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from web_helpers import EXE, LONG, SHOWCASE, Server, csrf_of, file_store

httpx = pytest.importorskip("httpx")


def _cli(*args: str) -> None:
    run = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


@pytest.fixture
def filled_store(store_url, tmp_path):
    """``store_url`` holding the viewer's test sessions."""
    source = file_store(tmp_path / "source")
    if "://" not in store_url:
        return str(source)
    _cli("--store", store_url, "import", str(source))
    return store_url


def _events(client: Any, session: str) -> Iterator[tuple[str, Any]]:
    """The live events of a session as ``(event, data)``."""
    with client.stream("GET", f"/api/v1/sessions/{session}/events", timeout=httpx.Timeout(30, read=20)) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                yield event or "message", json.loads(line[6:])


def _wait_for_label(events: Iterator[tuple[str, Any]], text: str, deadline: float) -> dict:
    for event, data in events:
        if event == "entries":
            for row in data["entries"]:
                if row["type"] == "label" and text in row["html"]:
                    return row
        assert time.monotonic() < deadline, "no live entry in time"
    raise AssertionError("the event stream ended")


def test_api_and_live_events_on_each_store(filled_store, tmp_path):
    with Server(filled_store, agent_dir=tmp_path / "agent") as server, server.client(timeout=30) as client:
        listing = client.get("/api/v1/sessions").json()
        ids = {s["id"] for s in listing["sessions"]}
        assert {SHOWCASE, LONG} <= ids
        # paged, and filtered by every word, on each store
        second = client.get("/api/v1/sessions", params={"offset": 1, "limit": 1}).json()
        assert second["sessions"] == listing["sessions"][1:2] and second["total"] == second["count"] == len(ids)
        assert [s["id"] for s in client.get("/api/v1/sessions", params={"q": "ROUNDING cent"}).json()["sessions"]] == [SHOWCASE]
        assert SHOWCASE in client.get("/").text
        assert client.get(f"/api/v1/sessions/{SHOWCASE}").json()["name"] == "Cent rounding fix"
        hits = client.get("/api/v1/search", params={"q": "banker"}).json()["hits"]
        assert any(h["entryId"] == "u2" and h["sessionId"] == SHOWCASE for h in hits)
        events = _events(client, LONG)
        first = next(events)
        assert first[0] == "hello" and first[1]["sessionId"] == LONG
        started = time.monotonic()
        # another process writes to the store
        _cli("--store", filled_store, "label", LONG, "u2", "written elsewhere")
        row = _wait_for_label(events, "written elsewhere", started + 15)
        assert row["parentId"] is not None
        events.close()


def test_two_servers_on_one_postgres_store_see_each_others_writes(postgres_url, tmp_path):
    source = file_store(tmp_path / "source")
    _cli("--store", postgres_url, "import", str(source))
    with Server(postgres_url, agent_dir=tmp_path / "a") as one, Server(postgres_url, agent_dir=tmp_path / "b") as two:
        with one.client(timeout=30) as writer, two.client(timeout=30) as watcher:
            events = _events(watcher, SHOWCASE)
            assert next(events)[0] == "hello"
            token = csrf_of(writer, "/")
            done = writer.post(f"/api/v1/sessions/{SHOWCASE}/label", json={"entryId": "u1", "label": "from server one"},
                               headers={"Origin": one.url, "X-CSRF-Token": token})
            assert done.status_code == 200, done.text
            row = _wait_for_label(events, "from server one", time.monotonic() + 15)
            assert row["id"] == done.json()["id"]
            events.close()
            # and the other way round, through the pages' API
            token_two = csrf_of(watcher, "/")
            renamed = watcher.post(f"/api/v1/sessions/{SHOWCASE}/name", json={"name": "renamed on two"},
                                   headers={"Origin": two.url, "X-CSRF-Token": token_two})
            assert renamed.status_code == 200, renamed.text
            assert writer.get(f"/api/v1/sessions/{SHOWCASE}").json()["name"] == "renamed on two"
