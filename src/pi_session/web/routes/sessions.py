"""The sessions API: ``GET /api/v1/sessions`` (the listing),
``/api/v1/sessions/{sid}`` (a page of a session's rows),
``/api/v1/sessions/{sid}/entries/{eid}`` (one entry),
``/api/v1/sessions/{sid}/context`` (what the model sees) and
``/api/v1/sessions/{sid}/export`` (a download)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import actions
from ..data import PAGE_ROWS, context_json, entry_json, session_json, sessions_json
from .common import Serving, int_param, json_response

__all__ = ["routes"]


def routes(served: Serving) -> list[Route]:
    """The routes of the sessions API (see the module docstring)."""
    access = served.access

    def api_sessions(request: Request) -> Response:
        q = request.query_params
        limit = int_param(request, "limit", 0, 0, 1_000_000)
        return json_response(sessions_json(access, query=q.get("q", ""), project=q.get("project") or None,
                                           offset=int_param(request, "offset", 0), limit=limit or None, masking=served.masking(request)))

    def api_session(request: Request) -> Response:
        view = served.view_of(request)
        return json_response(session_json(view, offset=int_param(request, "offset", 0), limit=int_param(request, "limit", PAGE_ROWS, 1, 100_000)))

    def api_entry(request: Request) -> Response:
        return json_response(entry_json(served.view_of(request), request.path_params["eid"]))

    def api_context(request: Request) -> Response:
        manager = access.open(request.path_params["sid"], redact=served.masked(request))
        return json_response(context_json(manager, request.query_params.get("leaf")))

    def api_export(request: Request) -> Response:
        fmt = request.query_params.get("format", "html")
        data, media, filename = actions.export(access, request.path_params["sid"], fmt, redact=served.masked(request))
        return Response(data, media_type=media, headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    return [
        Route("/api/v1/sessions", served.blocking(api_sessions)),
        Route("/api/v1/sessions/{sid}", served.blocking(api_session)),
        Route("/api/v1/sessions/{sid}/entries/{eid}", served.blocking(api_entry)),
        Route("/api/v1/sessions/{sid}/context", served.blocking(api_context)),
        Route("/api/v1/sessions/{sid}/export", served.blocking(api_export)),
    ]
