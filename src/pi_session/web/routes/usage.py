"""Usage and costs: ``GET /api/v1/usage/daily`` (per day, optionally
``timezone``, ``since``, ``until``), ``/api/v1/usage/breakdown`` (per
project and model) and the page ``GET /costs``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from .. import pages
from ..data import usage_breakdown_json, usage_daily_json
from .common import Serving, json_response

__all__ = ["routes"]


def routes(served: Serving) -> list[Route]:
    """The usage API and the costs page (see the module docstring)."""
    access = served.access

    def api_usage_daily(request: Request) -> Response:
        q = request.query_params
        return json_response(usage_daily_json(access, timezone=q.get("timezone") or None, since=q.get("since") or None,
                                              until=q.get("until") or None, masking=served.masking(request)))

    def api_usage_breakdown(request: Request) -> Response:
        return json_response(usage_breakdown_json(access, timezone=request.query_params.get("timezone") or None,
                                                  masking=served.masking(request)))

    def page_costs(request: Request) -> Response:
        return HTMLResponse(pages.costs_page(usage_breakdown_json(access, masking=served.masking(request)), csrf=served.csrf,
                                             read_only=served.config.read_only))

    return [
        Route("/api/v1/usage/daily", served.blocking(api_usage_daily)),
        Route("/api/v1/usage/breakdown", served.blocking(api_usage_breakdown)),
        Route("/costs", served.blocking(page_costs)),
    ]
