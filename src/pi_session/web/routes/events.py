"""The live events: ``GET /api/v1/sessions/{sid}/events``, server-sent
events of one session's appends (:class:`pi_session.web.live.LiveFeed`:
one poller for every stream, the streams capped)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..data import ApiError, SessionView, new_rows
from .common import Serving

__all__ = ["KEEP_ALIVE_SECONDS", "routes"]

KEEP_ALIVE_SECONDS = 15.0
"""A live stream with nothing to send sends a comment this often."""


class _LiveResponse(StreamingResponse):
    """A live stream's response: frees the stream's slot
    (:meth:`pi_session.web.live.LiveFeed.admit`) when it ends, however it ends."""

    def __init__(self, content: AsyncIterator[bytes], release: Callable[[], None], **options: Any) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def routes(served: Serving) -> list[Route]:
    """The route of the live events (see the module docstring)."""
    access, feed, config = served.access, served.feed, served.config

    async def api_events(request: Request) -> Response:
        """Server-sent events of one session: ``hello`` (the current ids),
        then ``entries`` (rows appended since, with their HTML) whenever
        the store's mark of the session changes."""
        try:
            sid = await run_in_threadpool(access.resolve, request.path_params["sid"])
            redact = served.masked(request)
            release = feed.admit(request.client.host if request.client else "local")
        except ApiError as exc:
            return served.page_error(request, exc)

        async def stream() -> AsyncIterator[bytes]:
            def load() -> tuple[tuple[int, ...] | None, SessionView | None]:
                mark = access.mark(sid)
                if mark is None:
                    return None, None
                return mark, access.view(sid, redact=redact)

            mark, view = await run_in_threadpool(load)
            known: set[str] = {str(node.id) for node in view.rows.nodes} if view else set()
            sub = feed.subscribe(sid, mark)  # before the hello: a write the client makes after it is seen
            try:
                yield f"event: hello\ndata: {json.dumps({'sessionId': sid, 'entries': len(known)})}\n\n".encode()
                while True:
                    try:
                        await asyncio.wait_for(sub.changed.wait(), KEEP_ALIVE_SECONDS)
                    except asyncio.TimeoutError:
                        yield b": keep-alive\n\n"
                        continue
                    sub.changed.clear()
                    if sub.closed or config.stopping():
                        return
                    try:
                        mark, view = await run_in_threadpool(load)
                    except ApiError:
                        continue
                    if view is None:
                        continue
                    fresh = new_rows(view, known)
                    if not fresh:
                        continue
                    known.update(r["id"] for r in fresh)
                    payload = {
                        "entries": fresh,
                        "leafId": view.manager.get_leaf_id(),
                        "entryCount": view.manager.get_entry_count(),
                    }
                    yield b"event: entries\ndata: " + orjson.dumps(payload) + b"\n\n"
            finally:
                feed.unsubscribe(sub)

        return _LiveResponse(stream(), release, media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    return [Route("/api/v1/sessions/{sid}/events", api_events)]
