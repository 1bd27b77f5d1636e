"""``pi-session serve`` (beyond pi): every session of a store in the
browser — the sessions, full-text search, a session's tree and path, what
the model sees from any entry, the daily costs, live appends (server-sent
events) and the actions of :mod:`pi_session.operations` — over any store
(session files, SQLite, PostgreSQL).

Modules: :mod:`.security` (bind rule, Host/Origin checks, token, CSRF,
headers), :mod:`.data` (the API's answers, from the library's public API),
:mod:`.pages` (server-rendered HTML), :mod:`.actions` (the writes),
:mod:`.app` (routes); the script and stylesheet in ``assets/``.
``docs/web.md`` is the API reference and the security model.
"""

from __future__ import annotations

from typing import Any

from .app import WebConfig, create_app
from .security import TOKEN_ENV, SecurityConfig, check_bind, is_loopback

__all__ = ["TOKEN_ENV", "SecurityConfig", "WebConfig", "check_bind", "create_app", "is_loopback", "serve"]

DEFAULT_PORT = 8321
"""The port ``pi-session serve`` listens on by default."""


def serve(
    store: Any,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    read_only: bool = False,
    allowed_hosts: tuple[str, ...] = (),
    summarizer: Any = None,
    on_ready: Any = None,
) -> None:
    """Run the web app on uvicorn until interrupted.

    Args:
        store: a :class:`pi_session.stores.SessionStore`.
        host, port: where to listen (port 0: a free one).
        token: the access token (needed for a non-loopback ``host``).
        read_only: refuse every action.
        allowed_hosts: further ``Host`` names to answer (a proxy's).
        summarizer: the :class:`pi_session.operations.SummarizerConfig`
            of the compact and move actions (None: offline extractive).
        on_ready: called with the URL once listening (after the store's
            listing is read and the sessions page made: ``preload`` of
            :class:`WebConfig`).

    Raises:
        ValueError: a non-loopback ``host`` without a token
            (:func:`check_bind`).
    """
    import uvicorn

    refusal = check_bind(host, token)
    if refusal is not None:
        raise ValueError(refusal)
    security = SecurityConfig(host=host, port=port, token=token or None, allowed_hosts=allowed_hosts)
    config = WebConfig(read_only=read_only, security=security, summarizer=summarizer, preload=True)
    app = create_app(store, config)
    server_config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="off",
        timeout_graceful_shutdown=2,  # open live streams never end by themselves
    )
    server = uvicorn.Server(server_config)
    config.stopping = lambda: server.should_exit
    if port == 0 or on_ready is not None:
        original = server.startup

        async def startup(sockets: Any = None) -> None:
            await original(sockets=sockets)
            bound = port
            for srv in getattr(server, "servers", []):
                for sock in srv.sockets:
                    bound = sock.getsockname()[1]
                    break
            security.port = bound  # the Host check learns the bound port
            if on_ready is not None:
                on_ready(f"http://{host if ':' not in host else '[' + host + ']'}:{bound}/")

        server.startup = startup  # type: ignore[method-assign]
    server.run()
