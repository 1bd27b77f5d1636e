"""The web app's security rules (beyond pi), as one ASGI middleware:

- **bind**: :func:`check_bind` refuses a non-loopback address without an
  access token;
- **Host** (DNS rebinding): a request whose ``Host`` is not one of the
  names the server answers to (the loopback names, the bound address, the
  ``--allow-host`` names) gets 421;
- **Origin**: a request whose ``Origin`` header is not the server's own
  origin gets 403; a write (any method but GET, HEAD, OPTIONS) must carry
  an ``Origin`` or ``Referer`` of the server;
- **token**: with a token, every request must carry it: header
  ``Authorization: Bearer TOKEN``, header ``X-Pi-Session-Token`` or the
  cookie a ``GET …?token=TOKEN`` login sets (HttpOnly, SameSite=Strict,
  named for the server's port: :func:`cookie_name`); else 401.
  ``pi-session serve`` always has one on TCP (given, or a random one per
  start: :func:`new_token`), so another local user cannot use a server on
  127.0.0.1; only its Unix socket (mode 0600) goes without;
- **CSRF**: a write must carry header ``X-CSRF-Token`` equal to the
  server's CSRF token (written into every page's
  ``<meta name="csrf-token">``); else 403;
- **headers**: every answer has a Content-Security-Policy allowing only
  the server's own script, stylesheet and fetches (no inline script, no
  frames), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy:
  no-referrer``, ``X-Frame-Options: DENY`` and ``Cache-Control: no-store``.

Refusals are JSON ``{"error": {"status": N, "message": "..."}}``.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson

__all__ = [
    "CSP",
    "COOKIE_NAME",
    "TOKEN_ENV",
    "SecurityConfig",
    "SecurityMiddleware",
    "check_bind",
    "cookie_name",
    "is_loopback",
    "new_token",
]

TOKEN_ENV = "PI_SESSION_SERVE_TOKEN"
"""The environment variable holding the access token (``--token``)."""

COOKIE_NAME = "pi_session_token"
"""The cookie a ``?token=`` login sets (the start of its name:
:func:`cookie_name`)."""


def cookie_name(port: int) -> str:
    """The login cookie's name for a server on ``port`` (0: a Unix socket
    or an unknown port): :data:`COOKIE_NAME` and the port, so that two
    servers on one host keep their own (a browser sends a host's cookies
    to every port of it)."""
    return f"{COOKIE_NAME}_{port}" if port else COOKIE_NAME


def new_token() -> str:
    """A random access token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(32)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The Content-Security-Policy of every answer: only the server's own
script, stylesheet, images (and ``data:`` images) and fetches; no inline
script or style, no plug-ins, no frames."""

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether a bind address (name or IP) is the loopback interface only:
    ``localhost``, ``127.0.0.0/8`` or ``::1``."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> str | None:
    """Why the server must not start on ``host`` (None: it may): a
    non-loopback address needs an access token."""
    if is_loopback(host) or token:
        return None
    return (
        f"--host {host}: not a loopback address; anyone who can reach it could read and change your sessions. "
        f"Give an access token with --token or {TOKEN_ENV} (or bind to 127.0.0.1)"
    )


@dataclass
class SecurityConfig:
    """What the middleware checks.

    Attributes:
        host: the bound address.
        port: the bound port (what ``Host`` and ``Origin`` may carry; 0:
            any port).
        token: the access token, or None (no token asked: every process
            that can connect is served; :func:`pi_session.web.serve` leaves
            it out only on a Unix socket of mode 0600).
        allowed_hosts: further host names the server answers to (a
            reverse proxy's name).
        csrf_token: the token every write must carry (random per server).
    """

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def host_names(self) -> set[str]:
        """Host names (lower case, no port, IPv6 without brackets) the
        server answers to: the loopback names, the bound address (bound to
        every address: the machine's host name and fully qualified name)
        and :attr:`allowed_hosts`."""
        import socket

        names = {n.lower() for n in _LOOPBACK_NAMES}
        bound = self.host.strip("[]").lower()
        if bound not in ("0.0.0.0", "::", ""):
            names.add(bound)
        else:
            names.update(n.lower() for n in (socket.gethostname(), socket.getfqdn()) if n)
        names.update(h.strip("[]").lower() for h in self.allowed_hosts)
        return names


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a ``Host`` header value, or None when malformed."""
    try:
        parts = urlsplit("//" + value)
        name = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not name:
        return None
    return name.lower(), port


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        out.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def security_headers() -> list[tuple[bytes, bytes]]:
    """The headers added to every answer (see the module docstring)."""
    return [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
        (b"cache-control", b"no-store"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cross-origin-resource-policy", b"same-origin"),
    ]


class SecurityMiddleware:
    """The ASGI middleware of :mod:`pi_session.web.security` around ``app``."""

    def __init__(self, app: ASGIApp, config: SecurityConfig) -> None:
        self.app = app
        self.config = config
        self._names = config.host_names()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        method = scope.get("method", "GET").upper()
        refusal = self._refusal(scope, headers, method)
        if refusal is not None:
            await _send_error(send, *refusal)
            return
        login = self._login(scope, method)
        if login is not None:
            await _send_login(send, scope, login, cookie_name(self.config.port), self.config.token or "")
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                existing = {k.lower() for k, _v in message.get("headers", ())}
                extra = [(k, v) for k, v in security_headers() if k not in existing]
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _origin_ok(self, origin: str, host: tuple[str, int | None]) -> bool:
        try:
            parts = urlsplit(origin)
            name, port = (parts.hostname or "").lower(), parts.port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or name not in self._names:
            return False
        default = 443 if parts.scheme == "https" else 80
        return (port or default) == (host[1] or default)

    def _refusal(self, scope: Scope, headers: dict[str, str], method: str) -> tuple[int, str] | None:
        raw_host = headers.get("host", "")
        host = _split_host(raw_host)
        if host is None or host[0] not in self._names:
            return 421, f"host {raw_host!r} is not one this server answers to (DNS rebinding protection; see --allow-host)"
        if self.config.port and host[1] is not None and host[1] != self.config.port:
            return 421, f"host {raw_host!r}: wrong port"
        origin = headers.get("origin")
        if origin is not None and origin != "null" and not self._origin_ok(origin, host):
            return 403, f"origin {origin!r} is not this server"
        if origin == "null":
            return 403, "an opaque origin may not call this server"
        token = self.config.token
        if token:
            given = _given_token(headers, cookie_name(self.config.port))
            query_token = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("token")
            if query_token is not None and method == "GET" and hmac.compare_digest(query_token.encode(), token.encode()):
                pass  # a login: answered by _login
            elif given is None or not hmac.compare_digest(given.encode(), token.encode()):
                return 401, "this server needs its access token (open the URL with ?token=…, or send Authorization: Bearer …)"
        if method not in _SAFE_METHODS:
            if origin is None:
                referer = headers.get("referer")
                if referer is None or not self._origin_ok(referer, host):
                    return 403, "a write needs an Origin (or Referer) of this server"
            csrf = headers.get("x-csrf-token", "")
            if not hmac.compare_digest(csrf.encode(), self.config.csrf_token.encode()):
                return 403, "missing or wrong CSRF token (X-CSRF-Token: the page's csrf-token)"
        return None

    def _login(self, scope: Scope, method: str) -> str | None:
        """The address to redirect a ``?token=`` login to (the same, without
        the token), or None when this is not a login."""
        if not self.config.token or method != "GET":
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if not any(k == "token" for k, _v in query):
            return None
        rest = [(k, v) for k, v in query if k != "token"]
        path = scope.get("path", "/") or "/"
        if not path.startswith("/") or path.startswith("//"):
            path = "/"
        return path + ("?" + urlencode(rest) if rest else "")


def _given_token(headers: dict[str, str], cookie: str) -> str | None:
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    if "x-pi-session-token" in headers:
        return headers["x-pi-session-token"]
    cookie_header = headers.get("cookie")
    if cookie_header:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie_header)
        except Exception:  # a malformed cookie header is no token
            return None
        morsel = jar.get(cookie)
        if morsel is not None:
            return morsel.value
    return None


def error_body(status: int, message: str) -> bytes:
    """The JSON body of an error answer."""
    return orjson.dumps({"error": {"status": status, "message": message}})


async def _send_error(send: Send, status: int, message: str) -> None:
    body = error_body(status, message)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *security_headers()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_login(send: Send, scope: Scope, location: str, name: str, token: str) -> None:
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    cookie = f"{name}={token}; Path=/; HttpOnly; SameSite=Strict{secure}"
    headers: Iterable[tuple[bytes, bytes]] = [
        (b"location", location.encode("latin-1", "replace")),
        (b"set-cookie", cookie.encode("latin-1")),
        (b"content-length", b"0"),
        *security_headers(),
    ]
    await send({"type": "http.response.start", "status": 303, "headers": list(headers)})
    await send({"type": "http.response.body", "body": b""})
