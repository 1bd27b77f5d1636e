"""What every route module of the web app shares: the store's access, the
app's config, how a request's answer shows secrets, and how an
:class:`~pi_session.web.data.ApiError` is answered (JSON under ``/api/``,
an error page elsewhere)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from .. import pages
from ..data import ApiError, SessionView, StoreAccess
from ..live import LiveFeed
from ..masking import Masking, masking_for
from ..security import error_body

if TYPE_CHECKING:
    from ..app import WebConfig

__all__ = ["Handler", "Serving", "int_param", "json_response"]

Handler = Callable[[Request], Awaitable[Response]]
"""A Starlette endpoint."""


def json_response(value: Any, status: int = 200) -> Response:
    """``value`` as a JSON response (orjson; non-string keys allowed)."""
    return Response(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS), status_code=status, media_type="application/json")


def int_param(request: Request, name: str, default: int, lo: int = 0, hi: int = 1 << 31) -> int:
    """The query parameter ``name`` as an int in ``lo..hi`` (``default``
    when absent or empty).

    Raises:
        ApiError: 400, not a number or out of range.
    """
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


class Serving:
    """One app's shared state, handed to every route module's ``routes``.

    Attributes:
        access: the :class:`~pi_session.web.data.StoreAccess` over the store.
        config: the app's :class:`~pi_session.web.app.WebConfig`.
        csrf: the CSRF token the pages carry.
        feed: the :class:`~pi_session.web.live.LiveFeed` of the live events.
    """

    def __init__(self, access: StoreAccess, config: WebConfig) -> None:
        self.access = access
        self.config = config
        self.csrf = config.security.csrf_token
        self.feed = LiveFeed(access, poll=config.live_poll, per_client=config.max_streams_per_client, total=config.max_streams,
                             stopping=lambda: config.stopping())

    def page_error(self, request: Request, exc: ApiError) -> Response:
        """``exc`` answered: JSON under ``/api/``, else an error page."""
        if request.url.path.startswith("/api/"):
            return Response(error_body(exc.status, exc.message), status_code=exc.status, media_type="application/json")
        return HTMLResponse(pages.error_page(exc.status, exc.message, csrf=self.csrf, read_only=self.config.read_only),
                            status_code=exc.status)

    def blocking(self, work: Callable[[Request], Response]) -> Handler:
        """An endpoint running ``work`` in the thread pool, its ApiError
        answered as JSON (API) or an error page."""

        async def endpoint(request: Request) -> Response:
            try:
                return await run_in_threadpool(work, request)
            except ApiError as exc:
                return self.page_error(request, exc)

        return endpoint

    @staticmethod
    def masked(request: Request) -> bool:
        """Secrets are masked unless the request asks ``?secrets=show``."""
        return request.query_params.get("secrets") != "show"

    def masking(self, request: Request) -> Masking:
        """How the request's answer shows secrets (:mod:`pi_session.web.masking`)."""
        return masking_for(self.masked(request))

    def view_of(self, request: Request) -> SessionView:
        """The view of the session named by the path's ``{sid}``.

        Raises:
            ApiError: as :meth:`pi_session.web.data.StoreAccess.view`.
        """
        return self.access.view(request.path_params["sid"], redact=self.masked(request))

    def exception_handlers(self) -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
        """Starlette's exception handlers: an HTTP error (404: no route)
        and any other exception (500, naming only its type), each answered
        as :meth:`page_error` does."""

        async def not_found(request: Request, exc: Exception) -> Response:
            status = exc.status_code if isinstance(exc, HTTPException) else 500
            detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
            return self.page_error(request, ApiError(status, str(detail) if status != 404 else f"{request.url.path[:120]}: not found"))

        async def internal(request: Request, exc: Exception) -> Response:
            return self.page_error(request, ApiError(500, f"internal error: {type(exc).__name__}"))

        return {HTTPException: not_found, Exception: internal}
