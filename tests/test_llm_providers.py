"""OpenAISummarizer and AnthropicSummarizer driven through the real SDKs
against a real local HTTP server (tests/fake_providers.py)."""

from __future__ import annotations

import asyncio
import time

import anthropic  # noqa: F401 - imported up front: timed sections measure requests, not imports
import openai  # noqa: F401
import pytest
from fake_providers import FakeResponse, anthropic_error, fake_provider, openai_error  # noqa: F401

from pi_session.llm import (
    AnthropicSummarizer,
    ExtractiveSummarizer,
    OpenAISummarizer,
    SummarizerError,
    SummaryRequest,
    make_summarizer,
)
from pi_session.llm.sdk import parse_retry_after, redact

QUICK = {"retry-after-ms": "10"}
"""Headers of a retryable reply asking the SDK to retry after 10 ms (instead of its 0.5 s backoff)."""
KEY = "sk-test-SECRET-0123456789abcdef"

REQ = SummaryRequest(
    kind="history",
    system_prompt="SYSTEM: you write summaries",
    prompt="<conversation>\n[User]: fix the parser in src/p.py\n</conversation>\n\nSummarize please.",
    max_tokens=321,
)


def make(provider: str, server, **kw):
    kw.setdefault("api_key", KEY)
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout", 5.0)
    model = kw.pop("model", "test-model")
    if provider == "openai":
        return OpenAISummarizer(model, base_url=server.openai_base_url, **kw)
    return AnthropicSummarizer(model, base_url=server.anthropic_base_url, **kw)


def run(coro):
    return asyncio.run(coro)


PROVIDERS = ["openai", "anthropic"]


# --------------------------------------------------------------------------- requests


def test_openai_request_shape(fake_provider):
    fake_provider.reply_text = "  ## Goal\n- fix parser\n"
    s = make("openai", fake_provider)
    assert run(s.summarize(REQ)) == "## Goal\n- fix parser"
    (req,) = fake_provider.posts()
    assert req.path == "/v1/chat/completions"
    assert req.json["model"] == "test-model"
    assert req.json["messages"] == [
        {"role": "system", "content": REQ.system_prompt},
        {"role": "user", "content": REQ.prompt},
    ]
    # a compatible (non-OpenAI) server gets max_tokens
    assert req.json["max_tokens"] == 321
    assert "max_completion_tokens" not in req.json
    assert req.headers["authorization"] == f"Bearer {KEY}"


def test_openai_token_param_override(fake_provider):
    s = make("openai", fake_provider, token_param="max_completion_tokens")
    run(s.summarize(REQ))
    body = fake_provider.posts()[0].json
    assert body["max_completion_tokens"] == 321 and "max_tokens" not in body


def test_openai_official_api_uses_max_completion_tokens(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    s = OpenAISummarizer(api_key=KEY)
    assert s.official and s.token_param == "max_completion_tokens" and s.model == "gpt-4.1-mini"


def test_openai_model_from_server_list(fake_provider):
    fake_provider.known_models = {"only-model"}
    s = OpenAISummarizer(None, base_url=fake_provider.openai_base_url, api_key=KEY)
    run(s.summarize(REQ))
    assert fake_provider.posts()[0].json["model"] == "only-model"


def test_anthropic_request_shape(fake_provider):
    s = make("anthropic", fake_provider)
    assert run(s.summarize(REQ)) == fake_provider.reply_text
    (req,) = fake_provider.posts()
    assert req.path == "/v1/messages"
    assert req.json["model"] == "test-model"
    assert req.json["system"] == REQ.system_prompt
    assert req.json["messages"] == [{"role": "user", "content": REQ.prompt}]
    assert req.json["max_tokens"] == 321
    # the SDK sends the key as x-api-key (older SDKs) or as a Bearer token (newer)
    assert req.headers.get("x-api-key") == KEY or req.headers.get("authorization") == f"Bearer {KEY}"


def test_local_base_url_needs_no_key(fake_provider, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    s = OpenAISummarizer("test-model", base_url=fake_provider.openai_base_url)
    assert run(s.summarize(REQ))
    a = AnthropicSummarizer("test-model", base_url=fake_provider.anthropic_base_url)
    assert run(a.summarize(REQ))


# --------------------------------------------------------------------------- retries (the SDKs' own)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_then_success(fake_provider, provider):
    fake_provider.script = [FakeResponse(429, {"error": {"message": "slow down"}}, QUICK), FakeResponse()]
    s = make(provider, fake_provider)
    assert run(s.summarize(REQ)) == fake_provider.reply_text
    first, second = fake_provider.posts()
    # the SDK retried: it numbers its attempts
    assert (first.headers["x-stainless-retry-count"], second.headers["x-stainless-retry-count"]) == ("0", "1")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_after_is_honoured(fake_provider, provider):
    fake_provider.script = [FakeResponse(429, {"error": {"message": "wait"}}, {"retry-after": "0.4"}), FakeResponse()]
    s = make(provider, fake_provider)
    run(s.summarize(REQ))
    first, second = fake_provider.posts()
    # measured by the server, between the two requests (the SDK's own backoff would be 0.5 s +- 25 %)
    assert first.answered_at is not None and second.received_at - first.answered_at >= 0.35


def test_retry_after_too_long_fails_at_once(fake_provider):
    # the OpenAI SDK does not wait more than two minutes for a retry
    fake_provider.default = FakeResponse(429, {"error": {"message": "quota"}}, {"retry-after": "3600"})
    s = make("openai", fake_provider)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert ei.value.kind == "rate_limited" and "3600" in str(ei.value)
    assert len(fake_provider.posts()) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_forever_fails_after_retries(fake_provider, provider):
    fake_provider.default = FakeResponse(500, {"error": {"message": "boom\nsecond line"}}, QUICK)
    s = make(provider, fake_provider)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    msg = str(ei.value)
    assert "\n" not in msg
    assert "500" in msg and "after 2 retries" in msg and "boom second line" in msg
    assert ei.value.kind == "server" and ei.value.status == 500
    assert len(fake_provider.posts()) == 3


def test_server_says_do_not_retry(fake_provider):
    fake_provider.default = FakeResponse(503, {"error": {"message": "busy"}}, {"x-should-retry": "false"})
    with pytest.raises(SummarizerError) as ei:
        run(make("openai", fake_provider).summarize(REQ))
    assert ei.value.kind == "server" and "retr" not in str(ei.value)
    assert len(fake_provider.posts()) == 1


def test_anthropic_529_overloaded_is_retried(fake_provider):
    fake_provider.script = [FakeResponse(529, anthropic_error(529, "overloaded_error", "Overloaded").body, QUICK), FakeResponse()]
    assert run(make("anthropic", fake_provider).summarize(REQ))
    assert len(fake_provider.posts()) == 2


def test_connection_refused_fails_after_retries():
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    s = OpenAISummarizer("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=1)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert ei.value.kind == "connection" and "cannot connect" in str(ei.value)
    assert "after 1 retry" in str(ei.value)


# --------------------------------------------------------------------------- timeouts, cancellation


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_fails(fake_provider, provider):
    fake_provider.default = FakeResponse(delay=6.0)
    # 1.5 s leaves a loaded machine time to deliver the request before the deadline
    s = make(provider, fake_provider, timeout=1.5, max_retries=0)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    ended = time.monotonic()
    assert ei.value.kind == "timeout" and "1.5s" in str(ei.value)
    (post,) = fake_provider.posts()
    # measured from the request's arrival (one monotonic clock for both processes), not from start-up
    assert ended - post.received_at < 4.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancellation_propagates(fake_provider, provider):
    fake_provider.default = FakeResponse(delay=3.0)
    s = make(provider, fake_provider)

    async def main() -> float:
        task = asyncio.create_task(s.summarize(REQ))
        while not fake_provider.posts():
            await asyncio.sleep(0.01)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - t0

    assert run(main()) < 2.0  # from the cancel, not from start-up


def test_cancellation_during_backoff(fake_provider):
    # the SDK is told to wait 5 s before its retry; cancelling ends the wait
    fake_provider.default = FakeResponse(503, {"error": {"message": "busy"}}, {"retry-after": "5"})
    s = make("openai", fake_provider, max_retries=5)

    async def main() -> float:
        task = asyncio.create_task(s.summarize(REQ))
        while not (fake_provider.posts() and fake_provider.posts()[0].answered_at is not None):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - t0

    assert run(main()) < 2.0
    assert len(fake_provider.posts()) == 1


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unknown_model_404(fake_provider, provider):
    s = make(provider, fake_provider, model="no-such-model")
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert ei.value.kind == "model_not_found" and ei.value.status == 404
    assert "no-such-model" in str(ei.value) and "\n" not in str(ei.value)
    assert len(fake_provider.posts()) == 1  # not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_context_overflow_400(fake_provider, provider):
    fake_provider.context_limit_chars = 50
    s = make(provider, fake_provider)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert ei.value.kind == "context_overflow" and ei.value.status == 400
    assert "too large" in str(ei.value)
    assert len(fake_provider.posts()) == 1


@pytest.mark.parametrize(
    "resp",
    [
        openai_error(400, "Requested tokens (5000) exceed context window of 2048"),  # llama.cpp style
        openai_error(400, "This model's maximum context length is 8192 tokens", None),  # vLLM style
        anthropic_error(413, "request_too_large", "Request exceeds the maximum size"),
    ],
)
def test_overflow_variants(fake_provider, resp):
    fake_provider.default = resp
    with pytest.raises(SummarizerError) as ei:
        run(make("openai", fake_provider).summarize(REQ))
    assert ei.value.kind == "context_overflow"


def test_other_400_is_bad_request(fake_provider):
    fake_provider.default = openai_error(400, "temperature must be <= 2")
    with pytest.raises(SummarizerError) as ei:
        run(make("openai", fake_provider).summarize(REQ))
    assert ei.value.kind == "bad_request" and "temperature must be" in str(ei.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_auth_failure_401_never_shows_key(fake_provider, provider, caplog):
    # the server echoes the key back, as some servers do
    fake_provider.default = FakeResponse(401, {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "authentication_error"}})
    s = make(provider, fake_provider)
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert ei.value.kind == "auth" and ei.value.status == 401
    assert KEY not in str(ei.value) and "SECRET" not in str(ei.value)
    assert "API_KEY" in str(ei.value)
    assert KEY not in repr(s)
    assert all(KEY not in r.getMessage() for r in caplog.records)


def test_retry_logs_never_show_key(fake_provider, caplog):
    fake_provider.script = [FakeResponse(500, {"error": {"message": f"bad key {KEY} here"}}, QUICK), FakeResponse()]
    with caplog.at_level("INFO"):
        run(make("openai", fake_provider).summarize(REQ))
    assert any("retrying" in r.getMessage().lower() for r in caplog.records)  # the SDK's own log line
    assert all("SECRET" not in r.getMessage() for r in caplog.records)


def test_empty_reply_is_an_error(fake_provider):
    fake_provider.reply_text = ""
    with pytest.raises(SummarizerError) as ei:
        run(make("openai", fake_provider).summarize(REQ))
    assert ei.value.kind == "empty"
    with pytest.raises(SummarizerError):
        run(make("anthropic", fake_provider).summarize(REQ))


def test_missing_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for provider, env in (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")):
        with pytest.raises(SummarizerError) as ei:
            make_summarizer(provider)
        assert ei.value.kind == "missing_key" and env in str(ei.value) and "\n" not in str(ei.value)
    with pytest.raises(SummarizerError) as ei:
        OpenAISummarizer("m", base_url="https://example.invalid/v1")
    assert ei.value.kind == "missing_key"


# --------------------------------------------------------------------------- factory


def test_factory_auto_choice(monkeypatch):
    for v in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(v, raising=False)
    s = make_summarizer(None)
    assert isinstance(s, ExtractiveSummarizer) and "extractive" in s.fallback_reason
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    s = make_summarizer(None, model="claude-x")
    assert isinstance(s, AnthropicSummarizer) and s.fallback_reason is None and s.model == "claude-x"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    s = make_summarizer(None, timeout=7, max_retries=1)
    assert isinstance(s, OpenAISummarizer) and s.timeout == 7 and s.max_retries == 1
    assert make_summarizer("extractive").fallback_reason is None
    assert make_summarizer("Anthropic").name == "anthropic"


def test_factory_base_url_implies_openai(monkeypatch):
    for v in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(v, raising=False)
    s = make_summarizer(None, base_url="http://localhost:11434/v1", model="llama3")
    assert isinstance(s, OpenAISummarizer) and s.token_param == "max_tokens"


def test_factory_unknown_provider():
    with pytest.raises(SummarizerError) as ei:
        make_summarizer("gemini")
    assert ei.value.kind == "config" and "openai" in str(ei.value)


# --------------------------------------------------------------------------- helpers


def test_redact():
    assert redact("key sk-abc123456789 used", ()) == "key sk-*** used"
    assert redact("Authorization: Bearer abcdefghijkl", ()) == "Authorization: Bearer ***"
    assert redact("my token zzzz-1234", ["zzzz-1234"]) == "my token ***"


def test_parse_retry_after():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "garbage"}) is None
    assert parse_retry_after({}) is None
    assert 0 <= parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) <= 0.0 + 1e-9


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_call_has_a_deadline_even_when_the_server_asks_to_wait_an_hour(fake_provider, provider):
    """The Anthropic SDK would wait the hour a Retry-After asks for (the
    OpenAI SDK gives up at once); the call's deadline ends it either way."""
    from pi_session.llm.sdk import call_deadline

    assert call_deadline(120, 3) == 120 * 4 + 8 * 3 + 2  # the default: about 8.5 minutes
    fake_provider.default = FakeResponse(429, {"error": {"message": "quota"}}, {"retry-after": "3600"})
    s = make(provider, fake_provider)
    s.deadline = 1.0
    started = time.monotonic()
    with pytest.raises(SummarizerError) as ei:
        run(s.summarize(REQ))
    assert time.monotonic() - started < 30
    assert ei.value.kind in ("timeout", "rate_limited") and "\n" not in str(ei.value)
    if provider == "anthropic":
        assert ei.value.kind == "timeout" and "within 1s" in str(ei.value)
