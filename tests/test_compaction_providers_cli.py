"""``pi-session compact`` / ``navigate --summarize`` with model providers, end to
end: the command line (run in the test process; Ctrl-C and memory as real
processes) talks through the official SDKs to the fake OpenAI / Anthropic server of tests/fake_providers.py, which runs in
this test process on 127.0.0.1.

Checked: what the requests carry (serialized conversation, previous summary,
max tokens), split turns making two overlapping requests, what is written,
retries, and that failures, timeouts and Ctrl-C leave the session file
byte-identical with a one-line message; API keys never leak; summaries always
have the structured sections; a 40 MB session prepares quickly in bounded
memory.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from child_signals import sigint_as_a_terminal_sends_it
from cli_runner import run_in_process
from fake_providers import FakeResponse, fake_provider, openai_error  # noqa: F401  (fixture)
from pi_session.core import jsonio
from pi_session.compaction.summary import (
    MISSING_SECTION_PLACEHOLDER,
    SPLIT_TURN_SEPARATOR,
    SUMMARY_SECTIONS,
    compact,
    ensure_sections,
)
from pi_session.compaction import prepare_compaction
from pi_session.llm.anthropic import output_limit
from pi_session.llm.base import combine_usage, make_usage
from pi_session.session.settings import CompactionSettings

EXE = Path(sys.executable).parent / "pi-session"
PROVIDERS = ("openai", "anthropic")
MODEL_TEXT = "## Goal\n- fix the parser (from the fake model)"

# ---------------------------------------------------------------------------
# sessions written by hand, so every cut is known


class Builder:
    """Writes a small version-3 session, one entry at a time (a chain)."""

    def __init__(self) -> None:
        self.t = 1_765_000_000_000
        self.header = {
            "type": "session",
            "version": 3,
            "id": "0b5e0a6e-7c1d-4a55-9c7e-3f1f2d6b9a01",
            "timestamp": self._iso(),
            "cwd": "/work/project",
        }
        self.entries: list[dict[str, Any]] = []

    def _iso(self) -> str:
        import datetime as dt

        d = dt.datetime.fromtimestamp(self.t / 1000, tz=dt.timezone.utc)
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t % 1000:03d}Z"

    def _entry(self, type_: str, **fields: Any) -> str:
        self.t += 1000
        eid = f"e{len(self.entries):07x}"
        parent = self.entries[-1]["id"] if self.entries else None
        self.entries.append({"type": type_, "id": eid, "parentId": parent, "timestamp": self._iso(), **fields})
        return eid

    def user(self, text: str) -> str:
        return self._entry("message", message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self.t})

    def assistant(self, *blocks: dict[str, Any], stop: str = "stop") -> str:
        return self._entry(
            "message",
            message={
                "role": "assistant",
                "content": list(blocks),
                "api": "openai-completions",
                "provider": "openai",
                "model": "gpt-test",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": stop,
                "timestamp": self.t,
            },
        )

    def say(self, text: str) -> str:
        return self.assistant({"type": "text", "text": text})

    def call(self, call_id: str, name: str, **args: Any) -> str:
        return self.assistant({"type": "toolCall", "id": call_id, "name": name, "arguments": args}, stop="toolUse")

    def result(self, call_id: str, name: str, text: str) -> str:
        return self._entry(
            "message",
            message={"role": "toolResult", "toolCallId": call_id, "toolName": name,
                     "content": [{"type": "text", "text": text}], "isError": False, "timestamp": self.t},
        )

    def compaction(self, summary: str, first_kept: str, details: dict[str, Any] | None = None) -> str:
        extra = {"details": details} if details is not None else {}
        return self._entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=999, **extra)

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(jsonio.dumps_line(x) for x in [self.header, *self.entries]))
        return path


def plain_session(path: Path) -> Path:
    """Two turns with read/edit tool calls; keep 30 tokens -> cut at the second
    user message (not a split turn)."""
    b = Builder()
    b.user("Please fix the off by one error in src/parser.py")
    b.call("c1", "read", path="src/parser.py")
    b.result("c1", "read", "def parse(xs):\n    return xs[1:]\n")
    b.call("c2", "edit", path="src/parser.py", oldText="xs[1:]", newText="xs[0:]")
    b.result("c2", "edit", "ok")
    b.say("Fixed the slice in src/parser.py.")
    b.user("Now add a regression test for the parser. " + "It must cover empty input and nested blocks. " * 3)
    b.say("Added tests.")
    return b.write(path)


def split_session(path: Path) -> Path:
    """The last turn is long: keep 40 tokens -> cut at its last assistant message."""
    b = Builder()
    b.user("First task: look at README.md")
    b.call("c1", "read", path="README.md")
    b.result("c1", "read", "# Project\n")
    b.say("The README is short.")
    b.user("Second task: rewrite src/app.py")
    b.call("c2", "write", path="src/app.py", content="print('hi')\n")
    b.result("c2", "write", "written")
    b.say("Rewrote src/app.py; " + "now checking the result carefully and explaining every step. " * 4)
    return b.write(path)


def chained_session(path: Path) -> Path:
    """A session that already has a compaction (with details), then more work."""
    b = Builder()
    b.user("Start: read docs/guide.md")
    b.call("c1", "read", path="docs/guide.md")
    b.result("c1", "read", "guide")
    b.say("Read it.")
    kept = b.user("Next: improve the guide wording")
    b.say("Improved.")
    b.compaction("PREVIOUS-SUMMARY-MARKER\n## Goal\n- earlier work", kept,
                 {"readFiles": ["docs/guide.md"], "modifiedFiles": ["docs/old.md"]})
    b.user("Then edit src/x.py")
    b.call("c2", "edit", path="src/x.py", oldText="a", newText="b")
    b.result("c2", "edit", "ok")
    b.say("Edited.")
    b.user("Finally write the changelog. " + "Mention every change in detail please. " * 4)
    b.say("Done.")
    return b.write(path)


# ---------------------------------------------------------------------------
# running the CLI


def cli_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200"}
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(var, None)
    env.update(extra or {})
    return env


def run_cli(tmp_path: Path, *args: Any, env: dict[str, str] | None = None):
    """``pi-session ARGS`` in the test process (``tests/cli_runner.py``)."""
    return run_in_process([*map(str, args)], cli_env(tmp_path, env))


def base_url(server, provider: str) -> str:
    return server.openai_base_url if provider == "openai" else server.anthropic_base_url


def provider_args(server, provider: str, *extra: Any) -> list[Any]:
    return ["--provider", provider, "--base-url", base_url(server, provider), "--model", "test-model", *extra]


def dry_run(tmp_path: Path, f: Path, *args: Any) -> dict[str, Any]:
    res = run_cli(tmp_path, "compact", f, "--dry-run", "--json", *args)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def prompt_of(req, provider: str) -> tuple[str, str, int | None]:
    """(system prompt, user prompt, max tokens or None when none was sent)
    of a recorded request."""
    body = req.json
    if provider == "openai":
        msgs = body["messages"]
        assert [m["role"] for m in msgs] == ["system", "user"]
        assert "max_completion_tokens" not in body
        return msgs[0]["content"], msgs[1]["content"], body.get("max_tokens")
    assert [m["role"] for m in body["messages"]] == ["user"]
    return body["system"], body["messages"][0]["content"], body["max_tokens"]


def assert_uncapped(max_tokens: int | None, provider: str) -> None:
    """pi 1.6 sends no output cap; the Messages API requires one, so the
    model's own limit is sent there."""
    if provider == "openai":
        assert max_tokens is None
    else:
        assert max_tokens == output_limit("test-model")


FAKE_USAGE = make_usage(10, 5)
"""The usage the fake server reports for one request (10 in, 5 out)."""


def assert_one_line_failure(res, *fragments: str) -> None:
    err = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(err) == 1, res.stderr
    assert err[0].startswith("pi-session: "), res.stderr
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    for frag in fragments:
        assert frag in err[0], err[0]


# ---------------------------------------------------------------------------
# 1. requests and what is written


@pytest.mark.parametrize("provider", PROVIDERS)
def test_compact_request_and_written_entry(tmp_path, fake_provider, provider):
    f = plain_session(tmp_path / "s.jsonl")
    plan = dry_run(tmp_path, f, "--keep-recent-tokens", 30, "--reserve-tokens", 1000)
    assert not plan["isSplitTurn"] and "previousSummary" not in plan
    before = f.read_bytes()
    fake_provider.reply_text = MODEL_TEXT
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, "--reserve-tokens", 1000, "--json",
                  *provider_args(fake_provider, provider))
    assert res.returncode == 0, res.stderr
    (req,) = fake_provider.posts()
    system, prompt, max_tokens = prompt_of(req, provider)
    assert_uncapped(max_tokens, provider)
    assert req.json["model"] == "test-model"
    assert system.strip()
    assert prompt.startswith("<conversation>\n[User]: Please fix the off by one error in src/parser.py")
    conv = prompt[: prompt.index("</conversation>")]
    assert '[Assistant tool calls]: read(path="src/parser.py")' in conv
    assert "[Tool result]: def parse(xs):" in conv
    assert "[Assistant]: Fixed the slice in src/parser.py." in conv
    assert "Added tests." not in conv  # kept verbatim, not summarized
    assert "<previous-summary>" not in prompt
    for heading in SUMMARY_SECTIONS:  # the format is asked for
        assert heading in prompt

    # the file grew by exactly one line; the old bytes are a prefix
    after = f.read_bytes()
    assert after.startswith(before) and after[len(before):].count(b"\n") == 1
    entry = lines(f)[-1]
    out = json.loads(res.stdout)
    assert entry["type"] == "compaction" and entry["id"] == out["id"]
    assert entry["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert entry["tokensBefore"] == plan["tokensBefore"]
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/parser.py"]} == plan["fileLists"]
    assert "fromHook" not in entry
    assert entry["usage"] == FAKE_USAGE == out["usage"]  # the request's usage, stored (pi 1.6)
    assert entry["summary"] == (
        ensure_sections(MODEL_TEXT) + "\n\n<modified-files>\nsrc/parser.py\n</modified-files>"
    )
    assert entry["summary"].startswith(MODEL_TEXT)
    # pi-session reads it back: the context starts with the summary
    ctx = run_cli(tmp_path, "context", f, "--json")
    assert ctx.returncode == 0, ctx.stderr
    messages = json.loads(ctx.stdout)
    messages = messages["messages"] if isinstance(messages, dict) else messages
    assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == entry["summary"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_compact_update_carries_previous_summary(tmp_path, fake_provider, provider):
    f = chained_session(tmp_path / "s.jsonl")
    plan = dry_run(tmp_path, f, "--keep-recent-tokens", 30, "--reserve-tokens", 500)
    assert plan["previousSummary"].startswith("PREVIOUS-SUMMARY-MARKER")
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, "--reserve-tokens", 500,
                  *provider_args(fake_provider, provider))
    assert res.returncode == 0, res.stderr
    (req,) = fake_provider.posts()
    _system, prompt, max_tokens = prompt_of(req, provider)
    assert_uncapped(max_tokens, provider)
    assert "<previous-summary>\nPREVIOUS-SUMMARY-MARKER\n## Goal\n- earlier work\n</previous-summary>" in prompt
    conv = prompt[prompt.index("<conversation>"): prompt.index("</conversation>")]
    assert "[User]: Next: improve the guide wording" in conv  # from the previous firstKeptEntryId
    assert "[User]: Start: read docs/guide.md" not in conv  # already in the previous summary
    assert "PREVIOUS-SUMMARY-MARKER" not in conv  # not serialized as a message
    entry = lines(f)[-1]
    assert entry["type"] == "compaction"
    # file lists accumulate over compactions
    assert entry["details"] == {"readFiles": ["docs/guide.md"], "modifiedFiles": ["docs/old.md", "src/x.py"]}
    assert entry["summary"].endswith(
        "<read-files>\ndocs/guide.md\n</read-files>\n\n<modified-files>\ndocs/old.md\nsrc/x.py\n</modified-files>"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_split_turn_makes_two_requests_one_after_the_other(tmp_path, fake_provider, provider):
    f = split_session(tmp_path / "s.jsonl")
    plan = dry_run(tmp_path, f, "--keep-recent-tokens", 40, "--reserve-tokens", 1000)
    assert plan["isSplitTurn"] and plan["messagesToSummarize"] and plan["turnPrefixMessages"]
    fake_provider.default = FakeResponse(delay=0.2)
    fake_provider.reply_text = MODEL_TEXT
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 40, "--reserve-tokens", 1000,
                  "--instructions", "mind the tests", *provider_args(fake_provider, provider))
    assert res.returncode == 0, res.stderr
    first, second = fake_provider.posts()
    # pi 1.6: the history request first, the turn prefix after it was answered
    assert second.received_at >= first.answered_at
    history = prompt_of(first, provider)
    prefix = prompt_of(second, provider)
    assert_uncapped(history[2], provider)
    assert_uncapped(prefix[2], provider)
    assert history[1].startswith("<conversation>\n[User]: First task: look at README.md")
    assert "Second task" not in history[1]
    assert prefix[1].startswith("# Conversation\n[User]: Second task: rewrite src/app.py")
    assert "\n\n# Instructions\n" in prefix[1] and "## Progress So Far" in prefix[1]
    assert "mind the tests" in history[1] and prefix[1].endswith("mind the tests")
    entry = lines(f)[-1]
    assert entry["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert entry["tokensBefore"] == plan["tokensBefore"]
    assert entry["usage"] == combine_usage(FAKE_USAGE, FAKE_USAGE)
    history_text, rest = entry["summary"].split(SPLIT_TURN_SEPARATOR)
    assert history_text == ensure_sections(MODEL_TEXT)
    assert rest == MODEL_TEXT + "\n\n<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nsrc/app.py\n</modified-files>"


def _length_stop(provider: str) -> FakeResponse:
    if provider == "openai":
        return FakeResponse(body={"id": "x", "object": "chat.completion", "created": 0, "model": "test-model",
                                  "choices": [{"index": 0, "finish_reason": "length",
                                               "message": {"role": "assistant", "content": "## Goal\n- half a summ"}}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return FakeResponse(body={"id": "m", "type": "message", "role": "assistant", "model": "test-model",
                              "content": [{"type": "text", "text": "## Goal\n- half a summ"}],
                              "stop_reason": "max_tokens", "stop_sequence": None,
                              "usage": {"input_tokens": 10, "output_tokens": 5}})


def _tool_call_reply(provider: str) -> FakeResponse:
    if provider == "openai":
        call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        return FakeResponse(body={"id": "x", "object": "chat.completion", "created": 0, "model": "test-model",
                                  "choices": [{"index": 0, "finish_reason": "tool_calls",
                                               "message": {"role": "assistant", "content": "## Goal\n- x", "tool_calls": [call]}}],
                                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return FakeResponse(body={"id": "m", "type": "message", "role": "assistant", "model": "test-model",
                              "content": [{"type": "text", "text": "## Goal\n- x"},
                                          {"type": "tool_use", "id": "t1", "name": "read", "input": {}}],
                              "stop_reason": "tool_use", "stop_sequence": None,
                              "usage": {"input_tokens": 10, "output_tokens": 5}})


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("reply", [_length_stop, _tool_call_reply], ids=["length", "tool-call"])
def test_partial_or_tool_call_reply_is_a_failure_and_nothing_is_stored(tmp_path, fake_provider, provider, reply):
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    fake_provider.default = reply(provider)
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, "--max-retries", 2,
                  *provider_args(fake_provider, provider))
    assert res.returncode == 1
    assert_one_line_failure(res, "the session file was not changed")
    assert ("output limit" in res.stderr) if reply is _length_stop else ("tool call" in res.stderr)
    assert f.read_bytes() == before
    assert len(fake_provider.posts()) == 1  # not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_then_success_after_retry(tmp_path, fake_provider, provider):
    f = plain_session(tmp_path / "s.jsonl")
    fake_provider.script = [openai_error(429, "slow down", "rate_limit_exceeded"), FakeResponse()]
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, "--max-retries", 2, "--timeout", 10,
                  *provider_args(fake_provider, provider))
    assert res.returncode == 0, res.stderr
    assert len(fake_provider.posts()) == 2
    assert lines(f)[-1]["type"] == "compaction"
    assert "Traceback" not in res.stderr


def _unchanged_failure(tmp_path, fake_provider, provider, *args, expect=(), code=1):
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    t0 = time.monotonic()
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, *args, *provider_args(fake_provider, provider))
    took = time.monotonic() - t0
    assert res.returncode == code, (res.returncode, res.stderr)
    assert f.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("s.")) == ["s.jsonl"]  # no side files
    assert_one_line_failure(res, "the session file was not changed", *expect)
    return res, took


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_error_forever_leaves_file_unchanged(tmp_path, fake_provider, provider):
    fake_provider.default = openai_error(500, "internal trouble", type_="server_error")
    _res, _took = _unchanged_failure(tmp_path, fake_provider, provider, "--max-retries", 2, expect=("500", "after 2 retries"))
    assert len(fake_provider.posts()) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_leaves_file_unchanged(tmp_path, fake_provider, provider):
    fake_provider.default = FakeResponse(delay=5.0)
    # the SDK retries a timed-out request too; --max-retries 0: one request
    _unchanged_failure(tmp_path, fake_provider, provider, "--timeout", 0.5, "--max-retries", 0, expect=("timeout", "0.5s"))
    ended = time.monotonic()
    posts = fake_provider.posts()
    assert len(posts) == 1
    # The bound measures the work (from the request's arrival to the exit),
    # not interpreter and SDK start-up, which take seconds on a loaded
    # machine. Without the timeout the server would answer after 5 s.
    assert ended - posts[0].received_at < 4.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_ctrl_c_leaves_file_unchanged(tmp_path, fake_provider, provider):
    """SIGINT once the request has reached the provider, which never
    answers: the process ends cancelled (status 130, one line) without
    waiting for a reply, and the session file is unchanged."""
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    fake_provider.default = FakeResponse(delay=3600.0)  # answered only when the fixture stops
    proc = subprocess.Popen(
        [str(EXE), "compact", str(f), "--keep-recent-tokens", "30", *map(str, provider_args(fake_provider, provider))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(tmp_path),
        preexec_fn=sigint_as_a_terminal_sends_it,
    )
    try:
        deadline = time.monotonic() + 300  # a safety net: the event awaited is the request's arrival
        while not fake_provider.posts():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the request never arrived"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert f.read_bytes() == before
    assert [p.answered_at for p in fake_provider.posts()] == [None], "the reply came before the process ended"

    class R:
        stdout, stderr = out, err

    assert_one_line_failure(R, "cancelled", "the session file was not changed")


# ---------------------------------------------------------------------------
# navigate --summarize through a provider


def test_navigate_summarize_with_provider(tmp_path, fake_provider):
    f = plain_session(tmp_path / "s.jsonl")
    entries = lines(f)[1:]
    target = entries[5]["id"]  # the assistant "Fixed the slice" message
    fake_provider.reply_text = "Looked at tests only."  # no headings at all
    res = run_cli(tmp_path, "navigate", f, target, "--summarize", "--json", "--timeout", 10, "--max-retries", 0,
                  *provider_args(fake_provider, "openai"))
    assert res.returncode == 0, res.stderr
    (req,) = fake_provider.posts()
    assert "max_tokens" not in req.json and "max_completion_tokens" not in req.json  # no cap since pi 1.6
    assert "[User]: Now add a regression test" in req.json["messages"][1]["content"]
    entry = lines(f)[-1]
    assert entry["type"] == "branch_summary" and entry["parentId"] == target
    assert entry["usage"] == FAKE_USAGE
    assert "Looked at tests only." in entry["summary"]
    for heading in SUMMARY_SECTIONS:
        assert f"\n{heading}\n" in entry["summary"]


def test_navigate_failure_leaves_file_unchanged(tmp_path, fake_provider):
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    target = lines(f)[6]["id"]
    fake_provider.default = openai_error(503, "overloaded", type_="server_error")
    res = run_cli(tmp_path, "navigate", f, target, "--summarize", "--max-retries", 0,
                  *provider_args(fake_provider, "openai"))
    assert res.returncode == 1
    assert f.read_bytes() == before
    assert_one_line_failure(res, "503")


def test_bad_timeout_and_retries_options(tmp_path, fake_provider):
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    for args in (["--timeout", "0"], ["--timeout", "-1"], ["--max-retries", "-1"]):
        res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, *args, *provider_args(fake_provider, "openai"))
        assert res.returncode != 0
        assert_one_line_failure(res, args[0])
    assert f.read_bytes() == before
    assert not fake_provider.posts()


# ---------------------------------------------------------------------------
# 2. API keys never reach output or the session


SECRET = "sk-secret-XYZ-0123456789abcdef"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_api_key_not_leaked_on_auth_error(tmp_path, fake_provider, provider):
    f = plain_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    env_var = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    fake_provider.default = openai_error(401, f"Incorrect API key provided: {SECRET}. Check it.", "invalid_api_key")
    res = run_cli(tmp_path, "compact", f, "--keep-recent-tokens", 30, *provider_args(fake_provider, provider),
                  env={env_var: SECRET})
    assert res.returncode == 1
    (req,) = fake_provider.posts()
    sent = req.headers.get("authorization", "") + req.headers.get("x-api-key", "")
    assert SECRET in sent  # the key did go to the server...
    assert SECRET not in res.stdout and SECRET not in res.stderr  # ...and nowhere else
    assert "sk-secret" not in res.stderr
    assert f.read_bytes() == before
    assert_one_line_failure(res, "401", env_var)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_api_key_not_leaked_on_success(tmp_path, fake_provider, provider):
    f = plain_session(tmp_path / "s.jsonl")
    env_var = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    for as_json in ([], ["--json"]):
        fake_provider.requests.clear()
        g = tmp_path / f"copy{len(as_json)}.jsonl"
        g.write_bytes(f.read_bytes())
        res = run_cli(tmp_path, "compact", g, "--keep-recent-tokens", 30, *as_json,
                      *provider_args(fake_provider, provider), env={env_var: SECRET})
        assert res.returncode == 0, res.stderr
        assert len(fake_provider.posts()) == 1
        assert SECRET not in res.stdout and SECRET not in res.stderr
        assert SECRET.encode() not in g.read_bytes()
        assert lines(g)[-1]["type"] == "compaction"
    for p in tmp_path.rglob("*"):  # nor any file the CLI may have written (logs, settings, locks)
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p


# ---------------------------------------------------------------------------
# 3. structured sections are always present


def test_ensure_sections_keeps_complete_text():
    text = "\n\n".join(f"{h}\n- item" for h in SUMMARY_SECTIONS)
    assert ensure_sections(text) == text
    # case, bold markers, trailing colons and other heading levels still count
    loose = text.replace("## Goal", "# **goal**:").replace("### Done", "#### done")
    assert ensure_sections(loose) == loose


def test_ensure_sections_adds_missing_in_order():
    text = "## Goal\n- ship it\n\n### In Progress\n- tests\n\n## Next Steps\n1. release"
    out = ensure_sections(text)
    heads = [ln for ln in out.splitlines() if ln.startswith("#")]
    assert heads == list(SUMMARY_SECTIONS)
    assert out.startswith("## Goal\n- ship it\n\n## Constraints & Preferences\n" + MISSING_SECTION_PLACEHOLDER)
    # the model's own lines are all still there, in their order
    kept = [ln for ln in out.splitlines() if ln in text.splitlines() and ln]
    assert kept == [ln for ln in text.splitlines() if ln]
    # ## Progress is a container: no placeholder of its own
    assert "## Progress\n### Done\n" in out
    assert out.endswith("## Critical Context\n" + MISSING_SECTION_PLACEHOLDER)


def test_ensure_sections_on_prose_and_fences():
    out = ensure_sections("The user fixed a bug.")
    assert out.startswith("The user fixed a bug.\n\n## Goal\n")
    assert [ln for ln in out.splitlines() if ln.startswith("#")] == list(SUMMARY_SECTIONS)
    # a heading inside a code fence does not count
    fenced = "## Goal\n- x\n```\n## Next Steps\n```"
    assert ensure_sections(fenced).count("## Next Steps") == 2


def test_ensure_sections_is_idempotent():
    for text in ("", "prose", "## Goal\n- a", "### Blocked\n- b\n\n## Critical Context\n- c"):
        once = ensure_sections(text)
        assert ensure_sections(once) == once


class _Canned:
    name = "canned"

    def __init__(self, text: str) -> None:
        self.text = text
        self.kinds: list[str] = []

    async def summarize(self, request):
        self.kinds.append(request.kind)
        return self.text if request.kind != "turn_prefix" else "## Original Request\n- the turn"


def _prep(tmp_path: Path, maker, keep: int):
    import asyncio  # noqa: F401

    f = maker(tmp_path / "p.jsonl")
    from pi_session.manager.session_manager import SessionManager

    sm = SessionManager.open(str(f))
    return prepare_compaction(sm.get_branch(), CompactionSettings(True, 1000, keep))


def test_compact_completes_sections_but_not_turn_prefix_or_hook(tmp_path):
    import asyncio

    prep = _prep(tmp_path, split_session, 40)
    assert prep.is_split_turn
    res = asyncio.run(compact(prep, _Canned("just prose")))
    history, prefix = res.summary.split(SPLIT_TURN_SEPARATOR)
    assert history == ensure_sections("just prose")
    assert prefix.startswith("## Original Request\n- the turn\n\n<read-files>")  # own headings, untouched
    assert "## Goal" not in prefix
    # a hook's summary is stored as given
    hooked = asyncio.run(compact(prep, _Canned("x"), hook=lambda p: "HOOK TEXT"))
    assert hooked.summary == "HOOK TEXT" and hooked.from_hook


def test_branch_summary_completes_sections_unless_instructions_replaced():
    import asyncio

    from pi_session.compaction import generate_branch_summary

    entries = [
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "try something", "timestamp": 1}},
    ]
    res = asyncio.run(generate_branch_summary(entries, _Canned("short answer")))
    assert "short answer" in res.summary
    assert [ln for ln in res.summary.splitlines() if ln.startswith("#")] == list(SUMMARY_SECTIONS)
    own = asyncio.run(generate_branch_summary(entries, _Canned("free form"), custom_instructions="one line please",
                                              replace_instructions=True))
    assert "## Goal" not in own.summary and own.summary.endswith("free form")


# ---------------------------------------------------------------------------
# 5. a 40 MB session: preparation with bounded memory (about 3 s here, so not marked slow)


_MEASURE = """
import json, resource, subprocess, sys, time
t0 = time.monotonic()
res = subprocess.run(sys.argv[1:], capture_output=True, text=True)
took = time.monotonic() - t0
print(json.dumps({"rc": res.returncode, "stdout": res.stdout, "stderr": res.stderr, "seconds": took,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measured(tmp_path: Path, *args: Any) -> dict[str, Any]:
    """Run the CLI under a fresh Python whose only child it is, so
    ``RUSAGE_CHILDREN.ru_maxrss`` is the CLI's own peak RSS (KiB on Linux)."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(EXE), *map(str, args)],
        capture_output=True, text=True, env=cli_env(tmp_path), timeout=300, check=True,
    )
    return json.loads(out.stdout)


def test_compact_dry_run_on_40mb_session(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from gen import generate_session_file
    finally:
        sys.path.pop(0)
    f = tmp_path / "big.jsonl"
    generate_session_file(f, 40_000, mb=40)
    size = f.stat().st_size
    assert size > 35 * 10**6
    before = f.read_bytes()
    for args in (["--json"], []):
        run = measured(tmp_path, "compact", f, "--dry-run", *args)
        assert run["rc"] == 0, run["stderr"]
        assert "Traceback" not in run["stderr"]
        if args:
            plan = json.loads(run["stdout"])
            assert plan is not None and plan["firstKeptEntryId"] and plan["tokensBefore"] > 0
        else:
            assert "tokens before" in run["stdout"]
        # memory is bounded here; speed is measured by bench/, not by tests
        assert run["maxrss_kib"] * 1024 < 5 * size, (run["maxrss_kib"], size)
    assert f.read_bytes() == before


def test_streamed_json_equals_print_json(capsys):
    """print_json streams through jsonio.write_pretty; the chunked text is
    dumps_pretty's (JSON.stringify(value, null, 1): integer keys first in
    numeric order, 1.0 as 1, 1e21 as 1e+21), whatever the chunk size."""
    import io

    from pi_session.cli.common import print_json
    from pi_session.core.jsonio import dumps_pretty, write_pretty

    assert dumps_pretty({"b": [1.0, "naïve 🎉"], "10": None, "2": {}, "1": 1e21}) == (
        '{\n "1": 1e+21,\n "2": {},\n "10": null,\n "b": [\n  1,\n  "naïve 🎉"\n ]\n}'
    )

    values = [
        None, [], {}, 1.0, "naïve 🎉",
        {"b": [1, 2.5, {"2": "x", "10": None, "a": [True, False]}], "a": {"nested": [[], {}]}, "1": 1e21},
        {"messages": [{"role": "user", "content": "x" * 5000, "n": i} for i in range(300)]},
    ]
    for value in values:
        print_json(value)
        expected = capsys.readouterr().out
        assert expected == dumps_pretty(value) + "\n"
        out = io.StringIO()
        write_pretty(value, out, chunk_chars=64)
        assert out.getvalue() == expected
