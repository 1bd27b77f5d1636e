"""What the commands that call a summarizer share (``compact``,
``navigate --summarize``, ``eval-compaction``): their options, the
settings of the session's cwd, building the summarizer, and running a
summary with a spinner and one-line errors."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable
from typing import Any, TypeVar

import typer

from ..llm.base import SummarizerError
from ..operations import OperationError, SummarizerConfig, compaction_settings
from ..session.settings import CompactionSettings, LoadedSettings, load_settings
from .common import err_console, fail, warn

__all__ = [
    "PROVIDER_OPTION",
    "MODEL_OPTION",
    "KEEP_RECENT_OPTION",
    "RESERVE_OPTION",
    "INSTRUCTIONS_OPTION",
    "BASE_URL_OPTION",
    "TIMEOUT_OPTION",
    "MAX_RETRIES_OPTION",
    "check_token_options",
    "settings_for",
    "compaction_settings_for",
    "make_summarizer",
    "run_summary",
]

PROVIDER_OPTION = typer.Option(
    None, "--provider", help="Summarizer: openai, anthropic or extractive (default: by available API key)."
)
MODEL_OPTION = typer.Option(None, "--model", help="Model id for the summarizer.")
KEEP_RECENT_OPTION = typer.Option(None, "--keep-recent-tokens", help="Recent tokens kept verbatim (default: settings, 20000).")
RESERVE_OPTION = typer.Option(None, "--reserve-tokens", help="Tokens reserved for the summary (default: settings, 16384).")
INSTRUCTIONS_OPTION = typer.Option(None, "--instructions", help="Extra focus for the summary.")
BASE_URL_OPTION = typer.Option(None, "--base-url", help="OpenAI-compatible server URL (Ollama, vLLM, llama.cpp).")
TIMEOUT_OPTION = typer.Option(
    None, "--timeout", help="Seconds one summary request may take (default 120).", metavar="SECONDS"
)
MAX_RETRIES_OPTION = typer.Option(
    None, "--max-retries", help="Retries on 429, 5xx and connection errors, with backoff (default 3).", metavar="N"
)

T = TypeVar("T")


def check_token_options(keep_recent_tokens: int | None, reserve_tokens: int | None) -> None:
    """Fail with one line on a negative ``--keep-recent-tokens`` or ``--reserve-tokens``."""
    if keep_recent_tokens is not None and keep_recent_tokens < 0:
        fail("--keep-recent-tokens must be >= 0")
    if reserve_tokens is not None and reserve_tokens < 0:
        fail("--reserve-tokens must be >= 0")


def settings_for(manager: Any, quiet: bool) -> LoadedSettings:
    """The settings of the session's cwd (pi's settings files), their
    warnings printed unless ``quiet``."""
    loaded = load_settings(manager.get_cwd())
    if not quiet:
        for message in loaded.warnings:
            warn(message)
    return loaded


def compaction_settings_for(manager: Any, quiet: bool, reserve_tokens: int | None, keep_recent_tokens: int | None) -> CompactionSettings:
    """The compaction settings of the session's cwd
    (:func:`pi_session.operations.compaction_settings`; the files' warnings
    printed unless ``quiet``) with the command line's ``--reserve-tokens`` /
    ``--keep-recent-tokens`` (None: keep the file's)."""
    settings, warnings = compaction_settings(manager.get_cwd(), reserve_tokens, keep_recent_tokens)
    if not quiet:
        for message in warnings:
            warn(message)
    return settings


def check_summarizer_options(provider: str | None, timeout: float | None, max_retries: int | None) -> None:
    """End the command with one line when a summarizer option makes no
    sense (an unknown provider, a timeout that is not a positive number of
    seconds, negative retries), before any work: a command with nothing to
    summarize checks them too."""
    from ..llm import provider_name

    try:
        provider_name(provider)
    except SummarizerError as exc:
        fail(f"--provider: {exc}")
    if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
        fail("--timeout must be a positive number of seconds")
    if max_retries is not None and max_retries < 0:
        fail("--max-retries must be >= 0")


def make_summarizer(
    provider: str | None,
    model: str | None,
    base_url: str | None,
    quiet: bool,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> Any:
    """The summarizer of the command-line options
    (:class:`pi_session.operations.SummarizerConfig`); why the extractive one
    was chosen is printed as a warning. Bad options end the command with
    one line."""
    check_summarizer_options(provider, timeout, max_retries)
    try:
        summarizer, reason = SummarizerConfig(provider, model, base_url, timeout, max_retries).make()
    except OperationError as exc:
        fail(str(exc))
    if reason:
        warn(reason)
    return summarizer


class _RetryNotes(logging.Handler):
    """Shows the summarizers' retry notes (``pi_session.llm`` warnings) in the
    spinner line instead of printing them, so stderr keeps one line per
    outcome."""

    def __init__(self, status: Any, what: str) -> None:
        super().__init__(logging.WARNING)
        self.status = status
        self.what = what

    def emit(self, record: logging.LogRecord) -> None:
        if self.status is None:
            return
        try:
            self.status.update(f"{self.what} ({record.getMessage()})")
        except Exception:  # never let a display problem break the summary
            pass


def run_summary(coro: Awaitable[T], what: str, quiet: bool) -> T:
    """Run a summary coroutine with a spinner (``what``) on stderr.

    Ctrl-C (SIGINT) cancels the requests and exits 130 with a one-line
    message; a :class:`pi_session.llm.SummarizerError` exits 1 with its
    one-line message. Retry notes from the summarizers update the spinner
    text. Other errors propagate.
    """
    import asyncio  # only the commands that call a model need it

    llm_log = logging.getLogger("pi_session.llm")
    handler = _RetryNotes(None, what)
    llm_log.addHandler(handler)
    propagate = llm_log.propagate
    llm_log.propagate = False  # no stray lines from logging's last-resort handler
    try:
        if quiet:
            return asyncio.run(coro)  # type: ignore[arg-type]
        with err_console.status(what) as status:
            handler.status = status
            return asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        fail("cancelled (interrupted); the session file was not changed", 130)
    except SummarizerError as exc:
        fail(f"summary failed: {exc}; the session file was not changed")
    finally:
        handler.status = None
        llm_log.removeHandler(handler)
        llm_log.propagate = propagate
