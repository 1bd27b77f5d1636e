"""The Starlette application of ``pi-session serve``: the JSON API under
``/api/v1/``, the pages, the live events and the static files (each part's
routes in its module of :mod:`pi_session.web.routes`, found there by URL),
behind :class:`pi_session.web.security.SecurityMiddleware`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette

from ..stores import SessionStore
from .data import StoreAccess
from .live import MAX_STREAMS, MAX_STREAMS_PER_CLIENT
from .routes import Serving, all_routes
from .security import SecurityConfig, SecurityMiddleware

__all__ = ["WebConfig", "create_app"]

LIVE_POLL_SECONDS = 0.25
"""How often the live events look at the store for a session's writes."""


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


def create_app(store: SessionStore, config: WebConfig | None = None) -> Any:
    """The ASGI application over ``store`` (see :mod:`pi_session.web`).

    Args:
        store: any :class:`pi_session.stores.SessionStore`.
        config: :class:`WebConfig` (default: loopback, no token, writable).

    Returns:
        The ASGI app: Starlette wrapped in the security middleware.
    """
    config = config or WebConfig()
    served = Serving(StoreAccess(store), config)
    app = Starlette(routes=all_routes(served), exception_handlers=served.exception_handlers())
    return SecurityMiddleware(app, config.security)
