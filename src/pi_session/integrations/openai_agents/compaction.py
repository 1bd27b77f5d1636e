"""What :class:`~.session.PiSession`'s compaction reports and reads: the
:class:`CompactionEvent` given to listeners, the settings it accepts, and
how a provider's "context too long" error is recognised (**beyond pi**)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...session.settings import (
    BranchSummarySettings,
    CompactionSettings,
    LoadedSettings,
    coerce_branch_summary_settings,
    coerce_compaction_settings,
    load_settings,
)

__all__ = ["CompactionEvent", "CompactionListener", "resolve_settings", "is_context_overflow_error", "warn_about_small_window"]

log = logging.getLogger("pi_session.integrations.openai_agents")


def is_context_overflow_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a provider's
    "the request does not fit the context window" error: an HTTP error of
    the ``openai`` SDK (or any exception with ``status_code``/``body``) whose
    status, code or message says so (OpenAI ``context_length_exceeded``,
    llama.cpp/vLLM "exceeds the context window", HTTP 413; see
    :func:`pi_session.llm.is_context_overflow`)."""
    from ...llm import is_context_overflow

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = getattr(current, "status_code", None)
        body = getattr(current, "body", None)
        if status is not None or body is not None:
            message = getattr(current, "message", None)
            if is_context_overflow(status if isinstance(status, int) else None, body, str(message or current)):
                return True
        current = current.__cause__ or current.__context__
    return False


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction the session made.

    Attributes:
        entry_id: the new ``compaction`` entry.
        reason: ``"threshold"`` (pi's trigger fired after ``add_items``),
            ``"overflow"`` (the model refused the context) or ``"manual"``.
        tokens_before: the context size before, in tokens.
        tokens_after: the context size after, in tokens. Both are
            :meth:`SessionManager.estimate_context_tokens` (pi 1.6's
            projected estimate), the "context tokens" ``pi-session tokens``
            shows at the leaf before and after.
        first_kept_entry_id: the first entry kept verbatim.
        summary: the summary text stored.
        summarizer: the summarizer's ``name``.
    """

    entry_id: str
    reason: str
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: str
    summary: str
    summarizer: str


CompactionListener = Callable[[CompactionEvent], "Awaitable[None] | None"]
"""Called (and awaited when it returns an awaitable) after each compaction."""


def resolve_settings(settings: Any, cwd: str) -> tuple[CompactionSettings, BranchSummarySettings]:
    """The compaction and branch-summary settings of ``PiSession(settings=...)``:
    None (pi's settings files of ``cwd``; their warnings logged), a
    :class:`~pi_session.session.settings.LoadedSettings`, a
    :class:`~pi_session.session.settings.CompactionSettings`, a pi settings object
    ``{"compaction": ..., "branchSummary": ...}`` or a compaction object."""
    if settings is None:
        loaded = load_settings(cwd)
        for warning in loaded.warnings:
            log.warning("%s", warning)
        return loaded.compaction, loaded.branch_summary
    if isinstance(settings, LoadedSettings):
        return settings.compaction, settings.branch_summary
    if isinstance(settings, CompactionSettings):
        return settings, BranchSummarySettings()
    if isinstance(settings, Mapping) and ("compaction" in settings or "branchSummary" in settings):
        return (
            coerce_compaction_settings(settings.get("compaction")),
            coerce_branch_summary_settings(settings.get("branchSummary")),
        )
    return coerce_compaction_settings(settings), BranchSummarySettings()


def warn_about_small_window(session_id: str, context_window: int | None, settings: Any) -> None:
    """Log one warning (logger ``pi_session.integrations.openai_agents``)
    when the compaction ``settings`` (a
    :class:`~pi_session.session.settings.CompactionSettings`) cannot work within
    ``context_window`` tokens (see :class:`~.session.PiSession`'s
    ``context_window``)."""
    if not context_window or not settings.enabled:
        return
    keep, reserve = settings.keep_recent_tokens, settings.reserve_tokens
    problems = []
    if keep >= context_window:
        problems.append(f"keepRecentTokens {keep} >= it, so the context is never compacted (it is all recent)")
    if reserve >= context_window:
        problems.append(f"reserveTokens {reserve} >= it, so pi's trigger fires after every response")
    if problems:
        log.warning(
            "PiSession %r: context_window %d: %s; pass settings={'compaction': {'reserveTokens': ..., "
            "'keepRecentTokens': ...}} smaller than the window (e.g. %d and %d)",
            session_id, context_window, "; ".join(problems), context_window // 4, context_window // 2,
        )  # fmt: skip
