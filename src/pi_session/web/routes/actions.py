"""The actions: ``POST /api/v1/sessions/{sid}/{action}`` for each name of
:data:`pi_session.web.actions.ACTIONS` (label, name, navigate, compact,
scrub), a JSON object in, the action's outcome out; 405 on a read-only
server."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import actions
from ..data import ApiError
from .common import Handler, Serving, json_response

__all__ = ["routes"]


def routes(served: Serving) -> list[Route]:
    """One POST route per action (see the module docstring)."""
    config = served.config

    def action(name: str) -> Handler:
        async def endpoint(request: Request) -> Response:
            if config.read_only:
                return served.page_error(request, ApiError(405, "this server is read-only (--read-only)"))
            try:
                raw = await request.body()
                body = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError as exc:
                return served.page_error(request, ApiError(400, f"request body: not JSON ({exc})"))
            if not isinstance(body, dict):
                return served.page_error(request, ApiError(400, "request body: expected a JSON object"))
            try:
                return json_response(await actions.run(name, served.access, request.path_params["sid"], body, summarizer=config.summarizer))
            except ApiError as exc:
                return served.page_error(request, exc)

        return endpoint

    return [Route(f"/api/v1/sessions/{{sid}}/{name}", action(name), methods=["POST"]) for name in actions.ACTIONS]
