"""The session pages: ``GET /`` (the sessions, filtered and paged),
``/s/{sid}`` (a session's tree and rows, ``?at=`` an entry) and
``/s/{sid}/context`` (what the model sees from a leaf). The HTML is
:mod:`pi_session.web.pages`'."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from .. import pages
from ..data import PAGE_ROWS, SESSIONS_PAGE, ApiError, context_json, sessions_json
from ..masking import MASKED
from .common import Serving, int_param

__all__ = ["routes"]


def routes(served: Serving) -> list[Route]:
    """The session pages (see the module docstring). With the config's
    ``preload``, the first sessions page is made now."""
    access, config, csrf = served.access, served.config, served.csrf
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
        offset = int_param(request, "offset", 0)
        shown = served.masking(request)
        if query or project or offset or not shown.enabled:
            page = sessions_json(access, query=query, project=project, offset=offset, limit=SESSIONS_PAGE, masking=shown)
            html = pages.sessions_page(page, access.prepared().projects(shown), query=query, project=project, csrf=csrf,
                                       read_only=config.read_only)
            return HTMLResponse(html)
        return Response(first_sessions_page(), media_type="text/html; charset=utf-8")

    def page_session(request: Request) -> Response:
        view = served.view_of(request)
        at = request.query_params.get("at")
        if at:
            selected = view.index_of.get(at, -2)
            if selected == -2:
                raise ApiError(404, f"{view.manager.get_session_id()}: no entry {at[:80]!r}")
        else:
            selected = view.leaf_index
        offset = int_param(request, "offset", -1, -1)
        if offset < 0:
            offset = (max(selected, 0) // PAGE_ROWS) * PAGE_ROWS
        return HTMLResponse(pages.session_page(view, selected=selected, offset=offset, csrf=csrf, read_only=config.read_only))

    def page_context(request: Request) -> Response:
        manager = access.open(request.path_params["sid"], redact=served.masked(request))
        ctx = context_json(manager, request.query_params.get("leaf"))
        return HTMLResponse(pages.context_page(manager.get_session_id(), ctx, csrf=csrf, read_only=config.read_only))

    if config.preload:
        try:
            first_sessions_page()
        except ApiError:
            pass  # the first request reads the store again, and reports it

    return [
        Route("/", served.blocking(page_sessions)),
        Route("/s/{sid}", served.blocking(page_session)),
        Route("/s/{sid}/context", served.blocking(page_context)),
    ]
