"""The static files: ``GET /static/{name}`` for ``web.js``, ``web.css``
(``pi_session/web/assets/``) and ``viewer.css`` (the session viewer's
stylesheet): a fixed table read when the app is made, never a path from
the request."""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..data import ApiError
from .common import Serving

__all__ = ["routes"]


def _static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, media type) of every static file."""
    from ...viewer.page import page_assets

    base = resources.files("pi_session.web") / "assets"
    css, _js = page_assets()
    return {
        "web.js": ((base / "web.js").read_bytes(), "text/javascript; charset=utf-8"),
        "web.css": ((base / "web.css").read_bytes(), "text/css; charset=utf-8"),
        "viewer.css": (css.encode(), "text/css; charset=utf-8"),
    }


def routes(served: Serving) -> list[Route]:
    """The static files' route (see the module docstring)."""
    files = _static_files()

    async def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return served.page_error(request, ApiError(404, "no such file"))
        return Response(found[0], media_type=found[1])

    return [Route("/static/{name}", static)]
