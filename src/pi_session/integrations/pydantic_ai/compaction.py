"""pi-session's compaction for a Pydantic AI agent: the capability
:class:`PiCompaction` (**beyond pi**).

It plans and summarizes as ``pi-session compact`` does (pi 1.6's
``prepareCompaction`` and summary format, the offline extractive
summarizer by default) on the run's history seen as pi messages
(:func:`.convert.to_pi_messages`), and hands Pydantic AI the compacted
history: the summary in a ``CompactionPart`` (with the standing system
prompt before it), then the messages kept as they were. Saved by
:class:`~.store.PiConversationStore`, the summary becomes a pi
``compaction`` entry that keeps those messages (``firstKeptEntryId``), so
pi and pi-session see the same compacted context as the model.

With ``context_window`` it triggers as pi does (context tokens > window −
``reserveTokens``, checked before each model request); without, it
compacts when the run asks (``ctx.request_compaction()``), or when the
model says the context is too long.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.compaction import CompactionRequest, CompactionResult
from pydantic_ai.messages import CompactionPart, ModelMessage, ModelRequest, SystemPromptPart
from pydantic_ai.models import ModelRequestContext

from ...compaction import compact, prepare_compaction
from ...llm.base import Summarizer
from ...llm.extractive import ExtractiveSummarizer
from ...session.settings import CompactionSettings
from ...session.tokens import estimate_context_tokens, should_compact
from .convert import PI_METADATA_KEY, summary_of, to_pi_messages

__all__ = ["HANDLER", "PiCompaction", "pi_path", "context_tokens"]

HANDLER = "pi-session"
"""The ``handler`` of the compactions :class:`PiCompaction` makes."""


def pi_path(messages: Sequence[ModelMessage]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """A pi path (entries root→leaf) holding ``messages`` as pi messages
    (a summary as a ``compaction`` entry keeping nothing before it: the
    history given starts with what it kept), and the index in ``messages``
    of each entry's message.

    Returns:
        ``(entries, {entry id: message index})``.
    """
    entries: list[dict[str, Any]] = []
    owner: dict[str, int] = {}
    parent: str | None = None
    instructions: str | None = None
    for index, message in enumerate(messages):
        summary = summary_of(message)
        if summary is not None:
            entry_id = f"m{index}"
            entries.append(
                {"type": "compaction", "id": entry_id, "parentId": parent, "timestamp": "1970-01-01T00:00:00.000Z",
                 "summary": summary.summary, "firstKeptEntryId": entry_id, "tokensBefore": summary.tokens_before,
                 **({"details": summary.details} if summary.details is not None else {})}
            )
            owner[entry_id] = index
            parent, instructions = entry_id, None
            continue
        pi_messages, instructions = to_pi_messages(message, instructions)
        for k, pi_message in enumerate(pi_messages):
            entry_id = f"m{index}.{k}"
            entries.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "1970-01-01T00:00:00.000Z", "message": pi_message})
            owner[entry_id] = index
            parent = entry_id
    return entries, owner


def context_tokens(messages: Sequence[ModelMessage]) -> int:
    """The context size of ``messages`` in tokens as pi estimates it (the
    last response's usage, plus estimates of what follows it)."""
    pi_messages: list[dict[str, Any]] = []
    instructions: str | None = None
    for message in messages:
        summary = summary_of(message)
        if summary is not None:
            pi_messages.append({"role": "compactionSummary", "summary": summary.summary, "tokensBefore": summary.tokens_before, "timestamp": 0})
            continue
        converted, instructions = to_pi_messages(message, instructions)
        pi_messages.extend(converted)
    return int(estimate_context_tokens(pi_messages)["tokens"])


@dataclass
class PiCompaction(AbstractCapability[Any]):
    """A Pydantic AI capability compacting the history with pi-session's
    compaction (see the module docstring)::

        agent = Agent(model, capabilities=[PiCompaction(context_window=128_000)])

    Attributes:
        context_window: the model's context window in tokens: compact when
            pi's trigger fires before a model request; None: only when
            asked (``ctx.request_compaction()``) or on a context overflow.
        settings: ``reserve_tokens`` (the trigger's margin) and
            ``keep_recent_tokens`` (the recent messages kept as they were);
            pi's defaults: 16,384 and 20,000.
        summarizer: writes the summary (a :class:`pi_session.llm.Summarizer`);
            default: the offline extractive one.
        custom_instructions: extra focus for every summary (a request's own
            ``focus`` comes first).
    """

    context_window: int | None = None
    settings: CompactionSettings = field(default_factory=CompactionSettings)
    summarizer: Summarizer = field(default_factory=ExtractiveSummarizer)
    custom_instructions: str | None = None

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> ModelRequestContext:
        """Ask for a compaction when pi's trigger fires on the request's history."""
        if self.context_window is not None and should_compact(context_tokens(request_context.messages), self.context_window, self.settings):
            ctx.request_compaction(reason="threshold")
        return request_context

    async def compact_history(self, ctx: RunContext[Any], request: CompactionRequest) -> CompactionResult | None:
        """The history compacted as pi compacts it, or None when pi finds
        nothing to summarize (everything fits in ``keep_recent_tokens``)."""
        messages = request.messages
        entries, owner = pi_path(messages)
        preparation = prepare_compaction(entries, self.settings)
        if preparation is None:
            return None
        focus = "\n\n".join(text for text in (request.focus, self.custom_instructions) if text) or None
        result = await compact(preparation, self.summarizer, custom_instructions=focus)
        first = min(owner.get(result.first_kept_entry_id, len(messages) - 1), len(messages) - 1)
        first = max(first, 1)
        kept = list(messages[first:])
        kept_before = sum(1 for message in kept if message.run_id != ctx.run_id)
        part = CompactionPart(
            content=result.summary,
            metadata={PI_METADATA_KEY: {"keptBefore": kept_before, "tokensBefore": result.tokens_before, "details": result.details}},
        )
        opening = messages[0]
        leading = list(takewhile(lambda p: isinstance(p, SystemPromptPart), opening.parts)) if isinstance(opening, ModelRequest) else []
        return CompactionResult(messages=[ModelRequest(parts=[*leading, part]), *kept], part=part, handler=HANDLER, kept_from=1)
