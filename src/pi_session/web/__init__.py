"""``pi-session serve`` (beyond pi): every session of a store in the
browser — the sessions, full-text search, a session's tree and path, what
the model sees from any entry, the daily costs, live appends (server-sent
events) and the actions of :mod:`pi_session.operations` — over any store
(session files, SQLite, PostgreSQL).

Modules: :mod:`.security` (bind rule, Host/Origin checks, token, CSRF,
headers), :mod:`.unix_socket` (the owner-only socket), :mod:`.masking`
(the one rule secrets are masked by), :mod:`.live` (one poller for the
live events, the caps on open streams), :mod:`.data` (the API's answers, from the library's public API),
:mod:`.pages` (server-rendered HTML), :mod:`.actions` (the writes),
:mod:`.app` (the config, the app), :mod:`.routes` (the routes, one
module per part of the site, found by URL); the script and stylesheet in ``assets/``.
``docs/web.md`` is the API reference and the security model.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from .app import WebConfig, create_app
from .live import MAX_STREAMS, MAX_STREAMS_PER_CLIENT
from .security import TOKEN_ENV, SecurityConfig, check_bind, is_loopback, new_token

__all__ = ["TOKEN_ENV", "SecurityConfig", "WebConfig", "check_bind", "create_app", "is_loopback", "serve"]

DEFAULT_PORT = 8321
"""The port ``pi-session serve`` listens on by default."""


def serve(
    store: Any,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    unix_socket: str | None = None,
    read_only: bool = False,
    allowed_hosts: tuple[str, ...] = (),
    summarizer: Any = None,
    on_ready: Any = None,
    max_streams_per_client: int = MAX_STREAMS_PER_CLIENT,
    max_streams: int = MAX_STREAMS,
) -> None:
    """Run the web app on uvicorn until interrupted.

    Who may use it: on TCP, only requests carrying the access token
    (``token``, else a random one made now, which the URL given to
    ``on_ready`` carries); on a Unix socket (``unix_socket``), only its
    owner (the file is mode 0600, :func:`.unix_socket.bind_unix_socket`),
    so no token is asked unless ``token`` is given.

    Args:
        store: a :class:`pi_session.stores.SessionStore`.
        host, port: where to listen (port 0: a free one); not used with
            ``unix_socket``.
        token: the access token (needed for a non-loopback ``host``);
            None: a random one on TCP (:func:`.security.new_token`), none
            on a Unix socket.
        unix_socket: listen on a Unix socket at this path instead of TCP.
        read_only: refuse every action.
        allowed_hosts: further ``Host`` names to answer (a proxy's).
        summarizer: the :class:`pi_session.operations.SummarizerConfig`
            of the compact and move actions (None: offline extractive).
        on_ready: called with the URL once listening (after the store's
            listing is read and the sessions page made: ``preload`` of
            :class:`WebConfig`): ``http://HOST:PORT/``, with
            ``?token=TOKEN`` when the token was made here (opening it logs
            a browser in); ``http://localhost/`` on a Unix socket.
        max_streams_per_client, max_streams: open live event streams
            allowed per client address and in all (:mod:`.live`).

    Raises:
        ValueError: a non-loopback ``host`` without a token
            (:func:`check_bind`); :class:`.unix_socket.UnixSocketError`
            the socket cannot be made safely there.
    """
    import uvicorn

    listener = None
    if unix_socket is not None:
        from .unix_socket import bind_unix_socket

        listener = bind_unix_socket(unix_socket)
        host, port = "localhost", 0
    else:
        refusal = check_bind(host, token)
        if refusal is not None:
            raise ValueError(refusal)
    made = token is None and listener is None
    if made:
        token = new_token()
    try:
        security = SecurityConfig(host=host, port=port, token=token or None, allowed_hosts=allowed_hosts)
        config = WebConfig(read_only=read_only, security=security, summarizer=summarizer, preload=True,
                           max_streams_per_client=max_streams_per_client, max_streams=max_streams)
        app = create_app(store, config)
        server_config = uvicorn.Config(
            app, host=host, port=port, log_level="warning", access_log=False, lifespan="off",
            timeout_graceful_shutdown=2,  # open live streams never end by themselves
        )
        server = uvicorn.Server(server_config)
        config.stopping = lambda: server.should_exit
        original = server.startup

        async def startup(sockets: Any = None) -> None:
            await original(sockets=sockets)
            if listener is not None:
                url = "http://localhost/"
            else:
                bound = port
                for srv in getattr(server, "servers", []):
                    for sock in srv.sockets:
                        bound = sock.getsockname()[1]
                        break
                security.port = bound  # the Host check and the cookie's name learn the bound port
                url = f"http://{host if ':' not in host else '[' + host + ']'}:{bound}/"
                if made:
                    url += "?" + urlencode({"token": token})
            if on_ready is not None:
                on_ready(url)

        server.startup = startup  # type: ignore[method-assign]
        if listener is not None:
            original_shutdown = server.shutdown

            async def shutdown(sockets: Any = None) -> None:
                # before uvicorn hands a SIGTERM back to the process (which then ends at once)
                await original_shutdown(sockets=sockets)
                listener.close()

            server.shutdown = shutdown  # type: ignore[method-assign]
        server.run(sockets=[listener.sock] if listener is not None else None)
    finally:
        if listener is not None:
            listener.close()
