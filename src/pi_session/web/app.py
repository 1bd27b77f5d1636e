"""The Starlette application of ``pi-session serve``: the JSON API under
``/api/v1/``, the pages, the live events and the static files, behind
:class:`pi_session.web.security.SecurityMiddleware`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..stores import SessionStore
from . import pages
from .data import (
    PAGE_ROWS,
    SESSIONS_PAGE,
    ApiError,
    SessionView,
    StoreAccess,
    context_json,
    entry_json,
    new_rows,
    search_json,
    session_json,
    sessions_json,
    usage_breakdown_json,
    usage_daily_json,
)
from .live import MAX_STREAMS, MAX_STREAMS_PER_CLIENT, LiveFeed
from .masking import MASKED, Masking, masking_for
from .security import SecurityConfig, SecurityMiddleware, error_body

__all__ = ["WebConfig", "create_app"]

LIVE_POLL_SECONDS = 0.25
"""How often the live events look at the store for a session's writes."""

KEEP_ALIVE_SECONDS = 15.0
"""A live stream with nothing to send sends a comment this often."""


class _LiveResponse(StreamingResponse):
    """A live stream's response: frees the stream's slot
    (:meth:`.live.LiveFeed.admit`) when it ends, however it ends."""

    def __init__(self, content: AsyncIterator[bytes], release: Callable[[], None], **options: Any) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


@dataclass
class WebConfig:
    """How the app serves.

    Attributes:
        read_only: refuse every action (405).
        security: the checks of :mod:`pi_session.web.security`.
        live_poll: seconds between two looks at the store for the live
            events (one look for every open stream).
        max_streams_per_client: open live streams allowed per client
            address (429 beyond).
        max_streams: open live streams allowed in all (503 beyond).
        stopping: returns True once the server shuts down (the live
            streams then end, so the shutdown does not wait for them).
        summarizer: the :class:`pi_session.operations.SummarizerConfig`
            of compactions and branch summaries (None: the offline
            extractive summarizer).
        preload: read the store's listing and render the sessions page
            when the app is made (before the server says it is ready), so
            the first request of the sessions page answers from memory.
    """

    read_only: bool = False
    security: SecurityConfig = field(default_factory=SecurityConfig)
    live_poll: float = LIVE_POLL_SECONDS
    max_streams_per_client: int = MAX_STREAMS_PER_CLIENT
    max_streams: int = MAX_STREAMS
    stopping: Callable[[], bool] = lambda: False
    summarizer: Any = None
    preload: bool = False


def _json(value: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS), status_code=status, media_type="application/json")


def _int(request: Request, name: str, default: int, lo: int = 0, hi: int = 1 << 31) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name}: {raw[:40]!r} is not a number") from None
    if not lo <= value <= hi:
        raise ApiError(400, f"{name}: {value} is out of range ({lo} to {hi})")
    return value


Handler = Callable[[Request], Awaitable[Response]]


def create_app(store: SessionStore, config: WebConfig | None = None) -> Any:
    """The ASGI application over ``store`` (see :mod:`pi_session.web`).

    Args:
        store: any :class:`pi_session.stores.SessionStore`.
        config: :class:`WebConfig` (default: loopback, no token, writable).

    Returns:
        The ASGI app: Starlette wrapped in the security middleware.
    """
    config = config or WebConfig()
    access = StoreAccess(store)
    csrf = config.security.csrf_token
    feed = LiveFeed(access, poll=config.live_poll, per_client=config.max_streams_per_client, total=config.max_streams,
                    stopping=lambda: config.stopping())

    def page_error(request: Request, exc: ApiError) -> Response:
        if request.url.path.startswith("/api/"):
            return Response(error_body(exc.status, exc.message), status_code=exc.status, media_type="application/json")
        return HTMLResponse(pages.error_page(exc.status, exc.message, csrf=csrf, read_only=config.read_only), status_code=exc.status)

    def blocking(work: Callable[[Request], Response]) -> Handler:
        """An endpoint running ``work`` in the thread pool, its ApiError
        answered as JSON (API) or an error page."""

        async def endpoint(request: Request) -> Response:
            try:
                return await run_in_threadpool(work, request)
            except ApiError as exc:
                return page_error(request, exc)

        return endpoint

    # -- JSON API -------------------------------------------------------

    def masked(request: Request) -> bool:
        """Secrets are masked unless the request asks ``?secrets=show``."""
        return request.query_params.get("secrets") != "show"

    def masking(request: Request) -> Masking:
        """How the request's answer shows secrets (:mod:`.masking`)."""
        return masking_for(masked(request))

    def api_sessions(request: Request) -> Response:
        q = request.query_params
        limit = _int(request, "limit", 0, 0, 1_000_000)
        return _json(sessions_json(access, query=q.get("q", ""), project=q.get("project") or None, offset=_int(request, "offset", 0),
                                   limit=limit or None, masking=masking(request)))

    def view_of(request: Request) -> SessionView:
        return access.view(request.path_params["sid"], redact=masked(request))

    def api_session(request: Request) -> Response:
        view = view_of(request)
        return _json(session_json(view, offset=_int(request, "offset", 0), limit=_int(request, "limit", PAGE_ROWS, 1, 100_000)))

    def api_entry(request: Request) -> Response:
        return _json(entry_json(view_of(request), request.path_params["eid"]))

    def api_context(request: Request) -> Response:
        manager = access.open(request.path_params["sid"], redact=masked(request))
        return _json(context_json(manager, request.query_params.get("leaf")))

    def api_search(request: Request) -> Response:
        return _json(search_json(access, request.query_params.get("q", ""), limit=_int(request, "limit", 50, 1, 1000), redact=masked(request)))

    def api_usage_daily(request: Request) -> Response:
        q = request.query_params
        return _json(usage_daily_json(access, timezone=q.get("timezone") or None, since=q.get("since") or None, until=q.get("until") or None,
                                      masking=masking(request)))

    def api_usage_breakdown(request: Request) -> Response:
        return _json(usage_breakdown_json(access, timezone=request.query_params.get("timezone") or None, masking=masking(request)))

    async def api_events(request: Request) -> Response:
        """Server-sent events of one session: ``hello`` (the current ids),
        then ``entries`` (rows appended since, with their HTML) whenever
        the store's mark of the session changes (:class:`.live.LiveFeed`:
        one poller for every stream, the streams capped)."""
        try:
            sid = await run_in_threadpool(access.resolve, request.path_params["sid"])
            redact = masked(request)
            release = feed.admit(request.client.host if request.client else "local")
        except ApiError as exc:
            return page_error(request, exc)

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

    # -- actions --------------------------------------------------------

    from . import actions

    def action(name: str) -> Handler:
        async def endpoint(request: Request) -> Response:
            if config.read_only:
                return page_error(request, ApiError(405, "this server is read-only (--read-only)"))
            try:
                raw = await request.body()
                body = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError as exc:
                return page_error(request, ApiError(400, f"request body: not JSON ({exc})"))
            if not isinstance(body, dict):
                return page_error(request, ApiError(400, "request body: expected a JSON object"))
            try:
                return _json(await actions.run(name, access, request.path_params["sid"], body, summarizer=config.summarizer))
            except ApiError as exc:
                return page_error(request, exc)

        return endpoint

    def api_export(request: Request) -> Response:
        fmt = request.query_params.get("format", "html")
        data, media, filename = actions.export(access, request.path_params["sid"], fmt, redact=masked(request))
        return Response(data, media_type=media, headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    # -- pages ----------------------------------------------------------

    rendered: dict[str, Any] = {}

    def first_sessions_page() -> bytes:
        """The sessions page without filter or offset, secrets masked,
        made once per read of the store's listing."""
        listing = access.prepared()
        if rendered.get("of") is not listing:
            page = sessions_json(access, limit=SESSIONS_PAGE, masking=MASKED)
            rendered["html"] = pages.sessions_page(page, listing.projects(MASKED), csrf=csrf, read_only=config.read_only).encode()
            rendered["of"] = listing
        html: bytes = rendered["html"]
        return html

    def page_sessions(request: Request) -> Response:
        q = request.query_params
        query, project = q.get("filter", ""), q.get("project") or None
        offset = _int(request, "offset", 0)
        shown = masking(request)
        if query or project or offset or not shown.enabled:
            page = sessions_json(access, query=query, project=project, offset=offset, limit=SESSIONS_PAGE, masking=shown)
            html = pages.sessions_page(page, access.prepared().projects(shown), query=query, project=project, csrf=csrf,
                                       read_only=config.read_only)
            return HTMLResponse(html)
        return Response(first_sessions_page(), media_type="text/html; charset=utf-8")

    def page_search(request: Request) -> Response:
        query = request.query_params.get("q", "")
        result, error = None, None
        if query.strip():
            try:
                result = search_json(access, query, redact=masked(request))
            except ApiError as exc:
                if exc.status != 400:
                    raise
                error = exc.message
        return HTMLResponse(pages.search_page(query, result, error, csrf=csrf, read_only=config.read_only), status_code=400 if error else 200)

    def page_session(request: Request) -> Response:
        view = view_of(request)
        at = request.query_params.get("at")
        if at:
            selected = view.index_of.get(at, -2)
            if selected == -2:
                raise ApiError(404, f"{view.manager.get_session_id()}: no entry {at[:80]!r}")
        else:
            selected = view.leaf_index
        offset = _int(request, "offset", -1, -1)
        if offset < 0:
            offset = (max(selected, 0) // PAGE_ROWS) * PAGE_ROWS
        return HTMLResponse(pages.session_page(view, selected=selected, offset=offset, csrf=csrf, read_only=config.read_only))

    def page_context(request: Request) -> Response:
        manager = access.open(request.path_params["sid"], redact=masked(request))
        ctx = context_json(manager, request.query_params.get("leaf"))
        return HTMLResponse(pages.context_page(manager.get_session_id(), ctx, csrf=csrf, read_only=config.read_only))

    def page_costs(request: Request) -> Response:
        return HTMLResponse(pages.costs_page(usage_breakdown_json(access, masking=masking(request)), csrf=csrf, read_only=config.read_only))

    # -- static files: a fixed table, never a path from the request ------

    def static_files() -> dict[str, tuple[bytes, str]]:
        from ..viewer.page import page_assets

        base = resources.files(__package__) / "assets"
        css, _js = page_assets()
        return {
            "web.js": ((base / "web.js").read_bytes(), "text/javascript; charset=utf-8"),
            "web.css": ((base / "web.css").read_bytes(), "text/css; charset=utf-8"),
            "viewer.css": (css.encode(), "text/css; charset=utf-8"),
        }

    files = static_files()

    async def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return page_error(request, ApiError(404, "no such file"))
        return Response(found[0], media_type=found[1])

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
        return page_error(request, ApiError(status, str(detail) if status != 404 else f"{request.url.path[:120]}: not found"))

    async def internal(request: Request, exc: Exception) -> Response:
        return page_error(request, ApiError(500, f"internal error: {type(exc).__name__}"))

    if config.preload:
        try:
            first_sessions_page()
        except ApiError:
            pass  # the first request reads the store again, and reports it

    routes = [
        Route("/api/v1/sessions", blocking(api_sessions)),
        Route("/api/v1/sessions/{sid}", blocking(api_session)),
        Route("/api/v1/sessions/{sid}/entries/{eid}", blocking(api_entry)),
        Route("/api/v1/sessions/{sid}/context", blocking(api_context)),
        Route("/api/v1/sessions/{sid}/events", api_events),
        Route("/api/v1/sessions/{sid}/export", blocking(api_export)),
        *(Route(f"/api/v1/sessions/{{sid}}/{name}", action(name), methods=["POST"]) for name in actions.ACTIONS),
        Route("/api/v1/search", blocking(api_search)),
        Route("/api/v1/usage/daily", blocking(api_usage_daily)),
        Route("/api/v1/usage/breakdown", blocking(api_usage_breakdown)),
        Route("/", blocking(page_sessions)),
        Route("/search", blocking(page_search)),
        Route("/costs", blocking(page_costs)),
        Route("/s/{sid}", blocking(page_session)),
        Route("/s/{sid}/context", blocking(page_context)),
        Route("/static/{name}", static),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found, Exception: internal})
    return SecurityMiddleware(app, config.security)
