"""Full-text search: ``GET /api/v1/search?q=`` (the hits as JSON) and the
page ``GET /search?q=`` (a bad query shown on the page, status 400)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from .. import pages
from ..data import ApiError, search_json
from .common import Serving, int_param, json_response

__all__ = ["routes"]


def routes(served: Serving) -> list[Route]:
    """The search API and page (see the module docstring)."""
    access, config = served.access, served.config

    def api_search(request: Request) -> Response:
        return json_response(search_json(access, request.query_params.get("q", ""), limit=int_param(request, "limit", 50, 1, 1000),
                                         redact=served.masked(request)))

    def page_search(request: Request) -> Response:
        query = request.query_params.get("q", "")
        result, error = None, None
        if query.strip():
            try:
                result = search_json(access, query, redact=served.masked(request))
            except ApiError as exc:
                if exc.status != 400:
                    raise
                error = exc.message
        return HTMLResponse(pages.search_page(query, result, error, csrf=served.csrf, read_only=config.read_only),
                            status_code=400 if error else 200)

    return [
        Route("/api/v1/search", served.blocking(api_search)),
        Route("/search", served.blocking(page_search)),
    ]
