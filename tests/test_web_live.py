"""``pi-session serve``'s live events (server-sent events): the open streams
are capped per client and in all (the one over the cap gets a one-line
JSON refusal; closing a stream frees its slot), and every open stream is
served by one look at the store per tick, whatever the number of streams
and sessions watched."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from web_helpers import LONG, SHOWCASE, Server, file_store, wait_for

httpx = pytest.importorskip("httpx")


@contextlib.contextmanager
def _stream(client: Any, session: str) -> Iterator[Any]:
    """An open live stream of ``session`` (its ``hello`` read when it is
    one: status 200)."""
    with client.stream("GET", f"/api/v1/sessions/{session}/events", timeout=httpx.Timeout(30, read=20)) as response:
        if response.status_code == 200:
            lines = response.iter_lines()
            assert next(lines) == "event: hello"
        yield response


def _refusal(response: Any, status: int) -> str:
    assert response.status_code == status
    body = response.read()
    assert body.count(b"\n") <= 1 and response.headers["content-type"].startswith("application/json")
    return json.loads(body)["error"]["message"]


def test_streams_per_client_are_capped_and_a_closed_one_frees_its_slot(tmp_path):
    root = file_store(tmp_path / "sessions")
    with Server(str(root), "--read-only", agent_dir=tmp_path / "agent") as server, server.client(timeout=30) as client:
        with contextlib.ExitStack() as opened:
            streams = [opened.enter_context(_stream(client, s)) for s in (LONG, LONG, SHOWCASE, SHOWCASE)]
            assert all(s.status_code == 200 for s in streams)
            with _stream(client, LONG) as extra:
                assert "live streams" in _refusal(extra, 429)
            # the pages and the API still answer
            assert client.get(f"/api/v1/sessions/{LONG}").status_code == 200
        # the streams closed: their slots are free again

        def opens() -> bool:
            with _stream(client, LONG) as again:
                return again.status_code == 200

        assert wait_for(opens, 20)


def test_streams_in_all_are_capped(tmp_path):
    root = file_store(tmp_path / "sessions")
    args = ("--read-only", "--max-streams", "2", "--max-streams-per-client", "8")
    with Server(str(root), *args, agent_dir=tmp_path / "agent") as server, server.client(timeout=30) as client:
        with _stream(client, LONG) as one:
            assert one.status_code == 200
            with _stream(client, SHOWCASE) as two:
                assert two.status_code == 200
                with _stream(client, LONG) as three:
                    assert "live streams" in _refusal(three, 503)
            # the second closed: its slot is free
            def opens() -> bool:
                with _stream(client, SHOWCASE) as again:
                    return again.status_code == 200

            assert wait_for(opens, 20)


def test_every_stream_shares_one_look_at_the_store(tmp_path):
    """Five streams on three sessions: each look at the store (uvicorn on
    127.0.0.1 in this process, the store's ``session_marks`` counted)
    asks for the three sessions at once, not one stream's session."""
    import uvicorn

    from pi_session.stores import open_store
    from pi_session.web import WebConfig, create_app
    from web_helpers import HOSTILE

    store = open_store(file_store(tmp_path / "sessions"))
    asked: list[tuple[str, ...]] = []
    counting = threading.Event()
    real_marks = store.session_marks

    def session_marks(ids: Any) -> Any:
        if counting.is_set():
            asked.append(tuple(sorted(ids)))
        return real_marks(ids)

    store.session_marks = session_marks  # type: ignore[method-assign]
    config = WebConfig(read_only=True, live_poll=0.05, max_streams_per_client=8)
    server = uvicorn.Server(uvicorn.Config(create_app(store, config), host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    config.stopping = lambda: server.should_exit
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, 20)
        port = server.servers[0].sockets[0].getsockname()[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client, contextlib.ExitStack() as opened:
            for session in (LONG, LONG, SHOWCASE, SHOWCASE, HOSTILE):
                assert opened.enter_context(_stream(client, session)).status_code == 200
            counting.set()
            wait_for(lambda: len(asked) >= 5, 20)
        assert set(asked[:5]) == {tuple(sorted((LONG, SHOWCASE, HOSTILE)))}, asked[:5]
    finally:
        server.should_exit = True
        thread.join(20)
