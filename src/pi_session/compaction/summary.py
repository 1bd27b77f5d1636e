"""Writing the compaction summary (pi 1.6 compact): prompts, the
before-compact hook and :func:`compact`.

The prompts are our own words; what is fixed is the summary *format* (the
section headings: one table, :mod:`pi_session.compaction.summary_format`,
shown to the model by its ``format_template``), the ``<conversation>`` /
``<previous-summary>`` tags of the history request, the ``# Conversation`` /
``# Instructions`` headings and the turn-prefix sections of the turn-prefix
request, the ``---`` separator with the split-turn heading, and the
file-list blocks appended at the end — pi reads those back.

As in pi 1.6: no output-token cap is sent (the model's own limit applies); a
reply cut at that limit, or one calling a tool, is a failure and nothing is
stored (the summarizers raise :class:`~pi_session.llm.SummarizerError`);
the two requests of a split turn are made one after the other; the result
carries the summed usage of the requests. Transient provider errors are
retried by the summarizers (429, 5xx, connection errors, with backoff).

Beyond pi — an earlier summary is never lost. Whatever the shape of the plan,
every fact of the previous compaction's summary stays in the context after
the new compaction (with the offline summarizer, as far as its size bound
allows, see the last item):

- history to summarize (with or without a split turn): the model gets the
  previous summary in ``<previous-summary>`` tags with the instruction to
  merge it (pi does the same);
- split turn with nothing new before the turn (the plan is only a turn
  prefix): nothing is asked of the model about the history, so the previous
  summary is carried verbatim as the history part, less the file-list
  blocks at its end (the new summary's one cumulative block lists those
  files; pi 1.6 keeps them and so lists them twice). pi 1.6 carries it too;
  pi 0.73.1 put its fixed "No prior history." text there and so dropped
  every earlier fact from the context;
- repeated compactions: each one starts from the previous summary by the
  two rules above, so facts are carried forward from compaction to
  compaction;
- the offline extractive summarizer keeps the items of the previous
  summary whole when it merges, within a share of its size bound (a
  previous summary longer than that has its further items fitted like new
  ones), and text outside its headings becomes Critical Context instead of
  being dropped.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ..errors import PiSessionError
from ..session.context import convert_to_llm
from .summarizer import Summarizer, SummaryKind, SummaryRequest, combine_usage, usage_of
from ..core.text import well_formed
from .file_ops import format_file_operations
from .prepare import CompactionPreparation
from .serialize import serialize_conversation
from .summary_format import (
    MISSING_SECTION_PLACEHOLDER,
    SECTIONS,
    SUMMARY_SECTIONS,
    TURN_PREFIX_SECTIONS,
    ensure_sections,
    format_template,
    strip_trailing_file_lists,
)

__all__ = [
    "SUMMARY_SYSTEM_PROMPT",
    "IDENTIFIER_INDEX_INSTRUCTIONS",
    "SUMMARY_SECTIONS",
    "MISSING_SECTION_PLACEHOLDER",
    "ensure_sections",
    "HISTORY_INSTRUCTIONS",
    "UPDATE_INSTRUCTIONS",
    "TURN_PREFIX_INSTRUCTIONS",
    "SPLIT_TURN_SEPARATOR",
    "NO_PRIOR_HISTORY",
    "CompactionCancelled",
    "CompactionResult",
    "BeforeCompactHook",
    "build_summary_prompt",
    "build_turn_prefix_prompt",
    "structured_instructions",
    "build_summary_request",
    "compact",
]

SUMMARY_SYSTEM_PROMPT = (
    "You write context checkpoints. You are shown the transcript of a working session "
    "between a user and an AI coding assistant, and you condense it into a summary in the "
    "structure you are asked for, so that another model can pick the work up from there.\n\n"
    "The transcript is material to summarize, not a conversation you are part of: do not "
    "answer questions in it, do not carry on with its tasks, and write nothing except the summary."
)

_FORMAT = format_template(SECTIONS)

IDENTIFIER_INDEX_INSTRUCTIONS = (
    "End the Critical Context section with an index of exact identifiers: the file paths, "
    "commands, error messages, ids, URLs, versions and numbers of the transcript that the work "
    "may need again, copied character for character (never paraphrased), most important first, "
    "one line per kind in backticks, such as:\n"
    "- Exact paths: `src/app.py`, `tests/test_app.py`\n"
    "- Exact commands: `pytest -q tests/test_app.py`\n"
    "- Exact errors: `AssertionError: expected 3, got 4`\n"
    "- URLs: `https://example.com/docs`\n"
    "- Ids and versions: `v1.6.0`, `3f2a9c1`\n"
    "- Numbers: `8080`, `70%`\n"
    "Leave out a kind with nothing in it."
)
"""What the history and update prompts ask of the identifier index (the line
labels are those of :data:`pi_session.compaction.identifiers.INDEX_LABELS`,
so the offline summarizer reads a model's index back)."""


def structured_instructions(lead: str) -> str:
    """Instructions asking for the structured summary format, after a
    ``lead`` sentence saying what the transcript is."""
    return (
        f"{lead}\n\n"
        "Answer with exactly these sections, in this order, using these headings:\n\n"
        f"{_FORMAT}\n\n"
        "Be brief in every section. Quote file paths, function names, commands and error "
        "messages exactly as they appear.\n\n"
        f"{IDENTIFIER_INDEX_INSTRUCTIONS}"
    )


HISTORY_INSTRUCTIONS = structured_instructions(
    "Summarize the session transcript above as a checkpoint another model will continue from."
)

UPDATE_INSTRUCTIONS = (
    "The transcript above continues a session that was already summarized; that earlier "
    "summary is in the <previous-summary> tags. Produce one updated summary covering both.\n\n"
    "How to merge:\n"
    "- keep everything from the earlier summary that still holds\n"
    "- add the new work, decisions and facts from the transcript\n"
    "- move items from In Progress to Done once the transcript shows them finished\n"
    "- rewrite Next Steps for where the work stands now\n"
    "- drop items only when they clearly no longer matter\n"
    "- quote file paths, function names, commands and error messages exactly\n\n"
    "Answer with exactly these sections, in this order, using these headings:\n\n"
    f"{_FORMAT}\n\n"
    "Be brief in every section.\n\n"
    f"{IDENTIFIER_INDEX_INSTRUCTIONS}"
)

TURN_PREFIX_INSTRUCTIONS = (
    "The conversation above is the opening part of one turn that is still going on; everything after "
    "it is kept word for word and is not yours to rewrite. Write a short checkpoint of this opening "
    "part, to be placed in front of the kept messages so that the work can carry on from them.\n\n"
    "Use these sections:\n\n"
    f"{format_template(TURN_PREFIX_SECTIONS)}\n\n"
    "Report only what the part shown contains; do not guess at or recreate the messages that follow it."
)

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
"""Joins the history summary and the turn-prefix summary of a split turn."""

NO_PRIOR_HISTORY = "(Nothing was summarized before this turn.)"
"""History part of a split turn that has nothing before it and no previous
summary to carry."""


class CompactionCancelled(PiSessionError):
    """A before-compact hook cancelled the compaction (raise it, or return it
    or the class itself from the hook); nothing was written. Without a
    message, ``str(error)`` is "compaction cancelled"."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(args or ("compaction cancelled",)))


@dataclass
class CompactionResult:
    """A finished compaction, ready for ``SessionManager.append_compaction``.

    Attributes:
        summary: the summary text (with file lists appended).
        first_kept_entry_id: id of the first entry kept verbatim.
        tokens_before: estimated context tokens before compacting (a
            float only when recorded usage numbers are fractional).
        details: ``{"readFiles": [...], "modifiedFiles": [...]}``, or None
            (a hook that supplied only text).
        from_hook: True when a hook supplied the summary.
        usage: the summed usage of the summary requests (a pi ``Usage``
            object), or None when the summarizer reports none (the
            extractive one) or a hook supplied the summary.
    """

    summary: str
    first_kept_entry_id: str
    tokens_before: int | float
    details: dict[str, Any] | None = None
    from_hook: bool = False
    usage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{summary, firstKeptEntryId, tokensBefore, details?, usage?,
        fromHook?}`` (``details``/``usage`` only when set, ``fromHook`` only
        when true)."""
        out: dict[str, Any] = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.details is not None:
            out["details"] = self.details
        if self.usage is not None:
            out["usage"] = self.usage
        if self.from_hook:
            out["fromHook"] = True
        return out


HookResult = Union[None, str, CompactionResult, Mapping[str, Any], CompactionCancelled, type]
BeforeCompactHook = Callable[[CompactionPreparation], Union[HookResult, Awaitable[HookResult]]]
"""A callable (sync or async) given the preparation. It returns None to let
the compaction run, a string (the summary) or a :class:`CompactionResult` /
mapping with ``summary`` to supply it, or cancels by raising or returning
:class:`CompactionCancelled`."""


def build_summary_prompt(
    conversation_text: str,
    instructions: str,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
) -> str:
    """The user prompt: the conversation in ``<conversation>`` tags, the
    previous summary in ``<previous-summary>`` tags (if any), then the
    instructions, then the user's extra focus (if any)."""
    text = f"<conversation>\n{conversation_text}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += instructions
    if custom_instructions:
        text += f"\n\nAlso pay particular attention to: {custom_instructions}"
    return text


def build_turn_prefix_prompt(
    conversation_text: str, instructions: str, *, custom_instructions: str | None = None
) -> str:
    """The user prompt of a turn-prefix request (pi 1.6's layout): ``#
    Conversation`` and the serialized text, a blank line, ``#
    Instructions`` and the instructions, then the user's extra focus (if
    any)."""
    text = f"# Conversation\n{conversation_text}\n\n# Instructions\n{instructions}"
    if custom_instructions:
        text += f"\n\nAlso pay particular attention to: {custom_instructions}"
    return text


def build_summary_request(
    kind: SummaryKind,
    messages: Sequence[Mapping[str, Any]],
    max_tokens: int | None = None,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    instructions: str | None = None,
) -> SummaryRequest:
    """Build the :class:`SummaryRequest` for agent ``messages``.

    Args:
        kind: ``history``, ``update``, ``turn_prefix`` or ``branch``.
        messages: agent messages; converted with ``convert_to_llm`` and
            serialized with :func:`serialize_conversation`.
        max_tokens: output budget (tokens), or None (default): no cap is
            sent, the model's own limit applies (pi 1.6).
        previous_summary: merged into (``update``).
        custom_instructions: extra focus from the user.
        instructions: override the instructions chosen by ``kind``.
    """
    llm_messages = convert_to_llm(messages)
    if instructions is None:
        instructions = {
            "history": HISTORY_INSTRUCTIONS,
            "update": UPDATE_INSTRUCTIONS,
            "turn_prefix": TURN_PREFIX_INSTRUCTIONS,
        }.get(kind, HISTORY_INSTRUCTIONS)
    if kind == "turn_prefix":
        prompt = build_turn_prefix_prompt(
            serialize_conversation(llm_messages), instructions, custom_instructions=custom_instructions
        )
    else:
        prompt = build_summary_prompt(
            serialize_conversation(llm_messages),
            instructions,
            previous_summary=previous_summary if kind == "update" else None,
            custom_instructions=custom_instructions,
        )
    return SummaryRequest(
        kind=kind,
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        prompt=well_formed(prompt),  # lone surrogates -> U+FFFD (pi_session.core.text)
        max_tokens=max_tokens,
        messages=llm_messages,
        previous_summary=previous_summary if kind == "update" else None,
        custom_instructions=custom_instructions,
    )


async def _run_hook(hook: BeforeCompactHook, preparation: CompactionPreparation) -> CompactionResult | None:
    result = hook(preparation)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return None
    if isinstance(result, CompactionCancelled) or result is CompactionCancelled:
        raise result if isinstance(result, CompactionCancelled) else CompactionCancelled("cancelled by hook")
    if isinstance(result, str):
        return CompactionResult(result, preparation.first_kept_entry_id, preparation.tokens_before, None, True)
    if isinstance(result, CompactionResult):
        result.from_hook = True
        return result
    if isinstance(result, Mapping) and isinstance(result.get("summary"), str):
        details = result.get("details")
        return CompactionResult(
            summary=result["summary"],
            first_kept_entry_id=result.get("firstKeptEntryId") or preparation.first_kept_entry_id,
            tokens_before=result.get("tokensBefore", preparation.tokens_before),
            details=dict(details) if isinstance(details, Mapping) else None,
            from_hook=True,
        )
    raise TypeError(f"before-compact hook returned an unsupported value: {type(result).__name__}")


async def compact(
    preparation: CompactionPreparation,
    summarizer: Summarizer,
    custom_instructions: str | None = None,
    hook: BeforeCompactHook | None = None,
) -> CompactionResult:
    """Summarize a prepared compaction (pi's ``compact``).

    Args:
        preparation: from :func:`prepare_compaction`.
        summarizer: writes the summaries.
        custom_instructions: extra focus for the history summary.
        hook: optional before-compact hook (see :data:`BeforeCompactHook`).

    Returns:
        A :class:`CompactionResult`. The summary is the history summary
        (``update`` kind, merging the previous summary, when there is one),
        completed by :func:`ensure_sections` so every heading of
        :data:`SUMMARY_SECTIONS` is there even when the model left some out.
        For a split turn it is followed by :data:`SPLIT_TURN_SEPARATOR` and
        the turn-prefix summary (its own headings; ``custom_instructions``
        passed to it too); the history request comes first, then the
        prefix request, one after the other. With nothing before the turn
        the history part is the previous summary verbatim without its
        trailing file-list blocks, or :data:`NO_PRIOR_HISTORY` when there
        is none. Then one ``<read-files>`` / ``<modified-files>`` block each
        (cumulative: the previous compaction's files are in ``file_ops``;
        beyond pi, read paths the messages show to be directories are left
        out: :attr:`CompactionPreparation.summary_file_lists`), the same
        lists as ``details``. No output cap is
        sent. ``usage`` is the field-by-field sum of the usages the
        summarizer reported.

    Raises:
        CompactionCancelled: the hook cancelled.
        pi_session.llm.SummarizerError: a summary could not be written (also
            a reply cut at the output limit, or one calling a tool); nothing
            is returned, so nothing is stored.
        TypeError: the hook returned something unusable.
    """
    if hook is not None:
        supplied = await _run_hook(hook, preparation)
        if supplied is not None:
            return supplied

    previous = preparation.previous_summary
    usage: dict[str, Any] | None = None

    async def history_summary() -> str:
        nonlocal usage
        request = build_summary_request(
            "update" if previous else "history",
            preparation.messages_to_summarize,
            previous_summary=previous or None,
            custom_instructions=custom_instructions,
        )
        text = await summarizer.summarize(request)
        usage = combine_usage(usage, usage_of(text))
        return ensure_sections(str(text))

    if preparation.is_split_turn and preparation.turn_prefix_messages:
        if preparation.messages_to_summarize:
            history_text = await history_summary()
        else:
            # Nothing new before the turn: the model is not asked about the
            # history, so the previous summary is carried as it is, less its
            # file lists: the one block appended below holds them (pi 1.6 keeps
            # them, and its summary then lists the files twice).
            history_text = strip_trailing_file_lists(previous) if previous is not None else NO_PRIOR_HISTORY
        prefix_request = build_summary_request(
            "turn_prefix", preparation.turn_prefix_messages, custom_instructions=custom_instructions
        )
        prefix_text = await summarizer.summarize(prefix_request)
        usage = combine_usage(usage, usage_of(prefix_text))
        summary = f"{history_text}{SPLIT_TURN_SEPARATOR}{prefix_text}"
    else:
        summary = await history_summary()

    lists = preparation.summary_file_lists
    summary += format_file_operations(lists["readFiles"], lists["modifiedFiles"])
    return CompactionResult(
        summary=str(summary),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": lists["readFiles"], "modifiedFiles": lists["modifiedFiles"]},
        usage=usage,
    )
