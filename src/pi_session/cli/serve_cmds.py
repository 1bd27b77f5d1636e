"""``serve``: the web app (:mod:`pi_session.web`) on uvicorn."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from .common import STORE_OPTION, active_store, fail, store_url


def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; a non-loopback one needs --token."),
    port: int = typer.Option(8321, "--port", min=0, max=65535, help="Port to listen on (0: a free one, printed)."),
    token: Optional[str] = typer.Option(
        None, "--token", metavar="TOKEN",
        help="Access token every request must carry (default: $PI_SESSION_SERVE_TOKEN, else a random one in the printed URL).",
    ),
    unix_socket: Optional[str] = typer.Option(
        None, "--unix-socket", metavar="PATH",
        help="Listen on a Unix socket only you can connect to (mode 0600; no token asked) instead of --host/--port.",
    ),
    read_only: bool = typer.Option(False, "--read-only", help="Only look: refuse every action (label, rename, move, compact, scrub)."),
    allow_host: list[str] = typer.Option([], "--allow-host", metavar="NAME", help="Also answer requests for this Host name (a proxy's)."),
    max_streams_per_client: int = typer.Option(
        4, "--max-streams-per-client", min=1, max=10_000, metavar="N", help="Open live event streams allowed per client address (429 beyond)."
    ),
    max_streams: int = typer.Option(32, "--max-streams", min=1, max=100_000, metavar="N", help="Open live event streams allowed in all (503 beyond)."),
    provider: str = typer.Option(
        "extractive", "--provider", metavar="openai|anthropic|extractive",
        help="Who writes the summaries of the compact and move actions (default: offline, extractive).",
    ),
    model: Optional[str] = typer.Option(None, "--model", metavar="MODEL", help="The summarizing model (openai, anthropic)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", metavar="URL", help="An OpenAI-compatible server for --provider openai."),
    store_option: Optional[str] = STORE_OPTION,
) -> None:
    """Serve every session of the store in the browser: sessions, search,
    a session's tree and path, what the model sees at any entry, costs,
    live appends and actions. Binds to loopback by default and asks every
    request for an access token (a random one unless given, in the
    printed URL: open that URL); on a Unix socket only its owner can
    connect. Host and Origin are checked and every write needs the page's
    CSRF token."""
    from ..core.paths import sessions_dir

    try:
        from ..web import TOKEN_ENV, check_bind, serve as run_server
        from ..web.unix_socket import UnixSocketError
    except ImportError as exc:
        fail(f"serve needs starlette and uvicorn: pip install 'pi-session[web]' ({exc})")

    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and (len(token) < 16 or not all(c.isalnum() or c in "-_.~" for c in token)):
        fail("--token: use at least 16 characters of letters, digits, - _ . ~ (e.g. python3 -c 'import secrets; print(secrets.token_urlsafe())')")
    if unix_socket is not None:
        if host != "127.0.0.1" or port != 8321:
            fail("--unix-socket: the server listens on the socket only; leave out --host and --port")
    else:
        refusal = check_bind(host, token)
        if refusal is not None:
            fail(refusal)
    from ..operations import OperationError, SummarizerConfig

    summarizer = SummarizerConfig(provider=provider, model=model, base_url=base_url)
    try:
        summarizer.make()  # an unknown provider or a missing key fails now, not at the first action
    except OperationError as exc:
        fail(str(exc))
    store = active_store(store_url(ctx, store_option))
    if store is None:
        from ..stores import StoreError, open_store

        try:
            store = open_store(sessions_dir())
        except StoreError as exc:
            fail(str(exc))

    def ready(url: str) -> None:
        # the only place a token made for this start is written: the URL that logs a browser in
        where = f" on unix socket {unix_socket}" if unix_socket is not None else ""
        print(f"pi-session serve: {url}{where}{' (read-only)' if read_only else ''}", flush=True)

    try:
        run_server(store, host=host, port=port, token=token, unix_socket=unix_socket, read_only=read_only, allowed_hosts=tuple(allow_host),
                   summarizer=summarizer, on_ready=ready, max_streams_per_client=max_streams_per_client, max_streams=max_streams)
    except UnixSocketError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{host}:{port}: {exc.strerror or exc}")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command()(serve)
