"""A real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions and
the Anthropic Messages wire protocols, for tests that drive the real SDKs.

Usage (in a test module)::

    from fake_providers import FakeResponse, fake_provider  # noqa: F401  (fixture)

    async def test_x(fake_provider):
        fake_provider.script = [FakeResponse(status=429), FakeResponse()]
        s = OpenAISummarizer("test-model", base_url=fake_provider.openai_base_url, api_key="sk-test")
        ...
        assert fake_provider.requests[-1].json["max_tokens"] == 100

Endpoints: ``POST /v1/chat/completions``, ``GET /v1/models``,
``POST /v1/messages``. Each POST takes the next :class:`FakeResponse` from
``script`` (or ``default`` when the script is empty); a response with
``body=None`` is a success in the endpoint's format carrying
``reply_text``. Models outside ``known_models`` get a 404 in the provider's
error format; prompts longer than ``context_limit_chars`` get the
provider's context-overflow 400. ``on_post`` (when set) is called with each
POST's :class:`RecordedRequest` before the reply is sent, in the server's
thread: a test can hold the reply until something else happened (another
process wrote to the session), with no sleeps.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import pytest


@dataclass
class FakeResponse:
    """One scripted reply: HTTP ``status``, JSON ``body`` (``None``: the
    success body of the endpoint), extra ``headers``, and ``delay`` seconds
    before answering (for timeouts)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class RecordedRequest:
    """A request the server received: method, path, headers (lower-case
    names) and the decoded JSON body (``None`` for GET); ``received_at`` and
    ``answered_at`` are ``time.monotonic()`` values of the server process
    when the request was read and when the reply started (``None`` until
    then), for checking that requests overlap; ``raw`` the body's bytes as
    received."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    received_at: float = 0.0
    answered_at: float | None = None
    raw: bytes = b""


def openai_error(status: int, message: str, code: str | None = None, type_: str = "invalid_request_error") -> FakeResponse:
    """An error reply in OpenAI's format."""
    return FakeResponse(status, {"error": {"message": message, "type": type_, "param": None, "code": code}})


def anthropic_error(status: int, type_: str, message: str) -> FakeResponse:
    """An error reply in Anthropic's format."""
    return FakeResponse(status, {"type": "error", "error": {"type": type_, "message": message}})


class FakeProviderServer:
    """The fake server (see module docs). ``start()``/``stop()`` or use as a
    context manager."""

    def __init__(self) -> None:
        self.script: list[FakeResponse] = []
        self.default: FakeResponse | None = None
        self.reply_text = "## Goal\n- summary from the fake server"
        self.known_models: set[str] | None = {"test-model", "gpt-4.1-mini", "claude-haiku-4-5"}
        self.context_limit_chars: int | None = None
        self.requests: list[RecordedRequest] = []
        self.on_post: Callable[[RecordedRequest], None] | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> "FakeProviderServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> "FakeProviderServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url`` for the OpenAI SDK (includes ``/v1``)."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``base_url`` for the Anthropic SDK (the SDK adds ``/v1``)."""
        return self.url

    def posts(self) -> list[RecordedRequest]:
        """The POST requests received so far."""
        return [r for r in self.requests if r.method == "POST"]

    # -- handling
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = h.path.split("?", 1)[0]
        record = RecordedRequest(method, path, {k.lower(): v for k, v in h.headers.items()}, body, time.monotonic(), raw=raw)
        with self._lock:
            self.requests.append(record)
        if method == "GET" and path.endswith("/models"):
            models = sorted(self.known_models or {"test-model"})
            data = {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in models]}
            return self._send(h, FakeResponse(200, data))
        if method != "POST" or not (path.endswith("/chat/completions") or path.endswith("/messages")):
            return self._send(h, FakeResponse(404, {"error": {"message": f"no route {path}", "type": "not_found"}}))
        anthropic = path.endswith("/messages")
        with self._lock:
            resp = self.script.pop(0) if self.script else self.default
        if resp is None:
            resp = self._natural(body or {}, anthropic)
        if self.on_post is not None:
            self.on_post(record)
        if resp.delay:
            self._stopping.wait(resp.delay)
        if resp.status == 200 and resp.body is None:
            resp = FakeResponse(200, self._success(body or {}, anthropic), resp.headers)
        record.answered_at = time.monotonic()
        self._send(h, resp)

    def _natural(self, body: dict[str, Any], anthropic: bool) -> FakeResponse:
        """Reply as a real server would: 404 for unknown models, 400 for
        prompts over the limit, else success."""
        model = body.get("model")
        if self.known_models is not None and model not in self.known_models:
            if anthropic:
                return anthropic_error(404, "not_found_error", f"model: {model}")
            return openai_error(404, f"The model `{model}` does not exist or you do not have access to it.", "model_not_found")
        if self.context_limit_chars is not None:
            chars = len(json.dumps(body.get("messages", []))) + len(str(body.get("system", "")))
            if chars > self.context_limit_chars:
                if anthropic:
                    return anthropic_error(400, "invalid_request_error", f"prompt is too long: {chars} tokens > {self.context_limit_chars} maximum")
                return openai_error(
                    400,
                    f"This model's maximum context length is {self.context_limit_chars} tokens. However, your messages resulted in {chars} tokens.",
                    "context_length_exceeded",
                )
        return FakeResponse()

    def _success(self, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        model = body.get("model", "test-model")
        if anthropic:
            return {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": self.reply_text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.reply_text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, resp: FakeResponse) -> None:
        data = resp.body if isinstance(resp.body, (bytes, str)) else json.dumps(resp.body)
        payload = data.encode() if isinstance(data, str) else data
        try:
            h.send_response(resp.status)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(payload)))
            for k, v in resp.headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout/cancel)
            pass


@pytest.fixture
def fake_provider() -> Iterator[FakeProviderServer]:
    """A started :class:`FakeProviderServer`, stopped after the test."""
    with FakeProviderServer() as server:
        yield server
