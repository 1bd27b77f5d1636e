"""Probes: did a compaction keep what the next turn needs? (**beyond pi**)

A compaction replaces old messages by a summary. Whether the summary is any
good is measured the way published evaluations of context compression do it:
ask questions whose answers are in the summarized history, and check that
the context after the compaction (the summary plus the kept messages) still
answers them. Here the questions ("probes") and the check are mechanical, so
every summarizer, with or without a model, is scored by the same rules.

**Which probes** (:func:`compute_probes`; all from the history a compaction
summarizes: the messages to summarize, then the turn prefix, as LLM messages,
plus the previous summary when there is one). The facts are found by the
rules of :mod:`pi_session.compaction.facts` (the extractive summarizer uses
the same rules); how many are probed is the summary format's limit
(:mod:`pi_session.compaction.summary_format`); which section of the format
should answer each kind is :data:`PROBE_SECTIONS`.

- ``first_request`` / ``latest_request``: the user's first and latest
  requests. The expected text is the message's prose cut to
  :data:`REQUEST_CHARS` characters. With a previous summary the first
  request is the first item of its ``## Goal``.
- ``constraint``: the user's constraints and preferences, the last
  :data:`MAX_CONSTRAINTS`.
- ``modified_files`` / ``read_files``: the compaction's file lists
  (:func:`pi_session.compaction.compute_file_lists`), exact paths.
- ``unresolved_error``: failures with no later success on the same target,
  the last :data:`MAX_ERRORS`; the expected text is the target and the line
  of output that states the error (:func:`error_line`).
- ``decision``: the assistant's stated choices, the last
  :data:`MAX_DECISIONS` distinct.
- ``next_step``: the step in progress at the cut: the plan in the last
  assistant reply (:func:`plan_steps`), otherwise the latest request.
- ``identifier``: exact strings of the zone (paths, commands, unresolved
  errors, URLs, ids, versions, the user's numbers:
  :mod:`pi_session.compaction.identifiers`), at most
  :data:`MAX_IDENTIFIER_PROBES` picked evenly in the order they first occur
  (:func:`identifier_sample`); answered only verbatim.
- ``artifact``: each file an ``edit``/``write`` call changed (the latest
  :data:`MAX_ARTIFACT_PROBES`), with its change (edited or written):
  answered by a line that holds the path verbatim and says what happened to
  it (a change word: edited, wrote, created, modified ..., or the
  ``edit``/``write`` call itself in a kept message). A bare path in
  ``<modified-files>`` answers the ``modified_files`` probe, not this one.

Each kind belongs to a category (:data:`PROBE_CATEGORIES`): ``identifiers``
(identifiers), ``artifact`` (the artifact trail: ``artifact`` and the two
file lists), ``continuation`` (the next step, the latest request),
``decision`` and ``context`` (first request, constraints, errors). The
report gives the recall of each.

**When a probe counts as answered**: :mod:`pi_session.compaction.scoring`
(:func:`answer_probe`; normalisation and key tokens in
:mod:`pi_session.compaction.keywords`). :func:`evaluate_compaction` scores a
whole compaction.

The names of those modules are re-exported here (``eval-compaction`` and
older callers import them from this module).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session.context import build_session_context, convert_to_llm
from ..entries import AgentMessage
from ..session.tokens import estimate_tokens
from ..entries.questions import COMPACTION_SUMMARY_ROLE
from .facts import (
    BASH_PREFIX,
    MAX_CONSTRAINTS,
    MAX_DECISIONS,
    MAX_ERRORS,
    ErrorFact,
    HistoryFacts,
    analyze_history,
    command_key,
    error_line,
    is_constraint,
    is_decision,
    is_lookup_command,
    plan_steps,
    user_request_text,
)
from .contradictions import Contradiction, find_contradictions
from .identifiers import extract_identifiers
from .keywords import (
    MAX_KEY_TOKENS,
    clip,
    collapse,
    content_text,
    is_prose_line,
    key_tokens,
    normalize,
    prose,
    sentences,
)
from .scoring import FILE_PROBE_KINDS, KEY_TOKEN_THRESHOLD, ProbeResult, answer_probe, answer_probes, kept_messages_text
from .summary_format import FILE_LIST_PROBES, SECTIONS, strip_file_lists

__all__ = [
    "BASH_PREFIX",
    "FILE_PROBE_KINDS",
    "PROBE_SECTIONS",
    "REQUEST_CHARS",
    "collapse",
    "KEY_TOKEN_THRESHOLD",
    "MAX_CONSTRAINTS",
    "MAX_DECISIONS",
    "MAX_ERRORS",
    "MAX_KEY_TOKENS",
    "PROBE_KINDS",
    "PROBE_CATEGORIES",
    "CATEGORIES",
    "MAX_IDENTIFIER_PROBES",
    "MAX_ARTIFACT_PROBES",
    "identifier_sample",
    "HistoryFacts",
    "ErrorFact",
    "Probe",
    "ProbeResult",
    "CompactionEvaluation",
    "spread",
    "analyze_history",
    "compute_probes",
    "probes_for_preparation",
    "answer_probe",
    "answer_probes",
    "evaluate_compaction",
    "evaluate_masking",
    "key_tokens",
    "normalize",
    "content_text",
    "prose",
    "clip",
    "sentences",
    "is_prose_line",
    "user_request_text",
    "kept_messages_text",
    "context_after",
    "text_tokens",
    "is_constraint",
    "is_decision",
    "plan_steps",
    "is_lookup_command",
    "command_key",
    "error_line",
]

REQUEST_CHARS = 200
"""Expected text of a request probe: its prose cut to this many characters."""

PROBE_KINDS = (
    "first_request",
    "latest_request",
    "constraint",
    "modified_files",
    "read_files",
    "unresolved_error",
    "decision",
    "next_step",
    "identifier",
    "artifact",
)
"""Probe kinds, in report order."""

PROBE_CATEGORIES: dict[str, str] = {
    "identifier": "identifiers",
    "artifact": "artifact",
    "modified_files": "artifact",
    "read_files": "artifact",
    "next_step": "continuation",
    "latest_request": "continuation",
    "decision": "decision",
    "first_request": "context",
    "constraint": "context",
    "unresolved_error": "context",
}
"""Probe kind -> the category its recall is reported under: the four kinds
of the published evaluations (recall of exact ``identifiers``, the
``artifact`` trail, ``continuation``, ``decision``) and ``context`` for the
requests, constraints and errors."""

CATEGORIES = ("identifiers", "artifact", "continuation", "decision", "context")
"""Probe categories, in report order."""

MAX_IDENTIFIER_PROBES = 400
"""Most ``identifier`` probes: the zone's identifiers in the order they
first occur, this many picked at even intervals (all when fewer)."""

MAX_ARTIFACT_PROBES = 20
"""Most ``artifact`` probes (the latest changed files)."""

PROBE_SECTIONS: dict[str, str] = {
    **{kind: s.key for s in SECTIONS for kind in s.probes},
    **{kind: tag for tag, kind in FILE_LIST_PROBES.items()},
}
"""Probe kind -> the section key (or file-list tag) of the summary format
whose text should answer it (from :data:`pi_session.compaction.summary_format.SECTIONS`)."""

_QUESTIONS = {
    "first_request": "What did the user ask for first?",
    "latest_request": "What did the user ask for last?",
    "constraint": "What did the user require or forbid?",
    "modified_files": "Which files were modified?",
    "read_files": "Which files were read?",
    "unresolved_error": "What failed and is not fixed yet?",
    "decision": "What did the assistant decide?",
    "next_step": "What was the next step when the history was cut?",
    "identifier": "What was the exact string?",
    "artifact": "Which file changed, and how?",
}

# --------------------------------------------------------------------------- probes


@dataclass
class Probe:
    """One question about the summarized history.

    Attributes:
        kind: one of :data:`PROBE_KINDS`.
        question: the question in words.
        expected: the fact as found in the history (for file probes, the
            paths joined by ``", "``).
        paths: for ``modified_files`` / ``read_files``, the exact paths;
            for ``artifact``, the changed file.
    """

    kind: str
    question: str
    expected: str
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{kind, question, expected[, paths]}``."""
        out: dict[str, Any] = {"kind": self.kind, "question": self.question, "expected": self.expected}
        if self.kind in FILE_PROBE_KINDS or self.kind == "artifact":
            out["paths"] = list(self.paths)
        return out


def _probe(kind: str, expected: str, paths: Sequence[str] = ()) -> Probe:
    return Probe(kind, _QUESTIONS[kind], expected, list(paths))


def compute_probes(
    messages: Sequence[Mapping[str, Any]],
    *,
    file_lists: Mapping[str, Sequence[Any]] | None = None,
    previous_summary: str | None = None,
) -> list[Probe]:
    """The probes of a history (see module docs), in :data:`PROBE_KINDS`
    order. Pure and deterministic.

    Args:
        messages: LLM messages of the summarized history (the messages to
            summarize, then the turn prefix), after ``convert_to_llm``.
        file_lists: ``{"readFiles", "modifiedFiles"}`` of the compaction
            (:attr:`pi_session.compaction.CompactionPreparation.file_lists`);
            None: no file probes.
        previous_summary: the previous compaction's summary, if any.

    Returns:
        The probes; empty lists give no probe (no file list probe when the
        list is empty, no error probe when every failure was resolved).
    """
    facts = analyze_history(messages, previous_summary)
    probes: list[Probe] = []
    first, latest = facts.first_request, facts.latest_request
    if first:
        probes.append(_probe("first_request", clip(first, REQUEST_CHARS)))
    if latest and normalize(clip(latest, REQUEST_CHARS)) != normalize(clip(first, REQUEST_CHARS)):
        probes.append(_probe("latest_request", clip(latest, REQUEST_CHARS)))
    for c in facts.constraints[-MAX_CONSTRAINTS:]:
        probes.append(_probe("constraint", c))
    if file_lists:
        modified = [str(p) for p in file_lists.get("modifiedFiles") or []]
        read = [str(p) for p in file_lists.get("readFiles") or []]
        if modified:
            probes.append(_probe("modified_files", ", ".join(modified), modified))
        if read:
            probes.append(_probe("read_files", ", ".join(read), read))
    for err in facts.unresolved[-MAX_ERRORS:]:
        probes.append(_probe("unresolved_error", err.describe()))
    for d in facts.decisions[-MAX_DECISIONS:]:
        probes.append(_probe("decision", d))
    if facts.plan:
        probes.append(_probe("next_step", clip(facts.plan, REQUEST_CHARS)))
    for ident in identifier_sample(messages):
        probes.append(_probe("identifier", ident))
    for path, verb, _count in facts.edits[-MAX_ARTIFACT_PROBES:]:
        probes.append(_probe("artifact", f"{path} ({verb.lower()})", [path]))
    return probes


def identifier_sample(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The exact strings the ``identifier`` probes ask for: the identifiers
    of ``messages`` (:func:`pi_session.compaction.identifiers.extract_identifiers`,
    every kind, paths the file lists name included) in the order they first
    occur, at most :data:`MAX_IDENTIFIER_PROBES` picked at even intervals,
    so that the sample does not follow the index's ranking. Pure."""
    found = sorted(extract_identifiers(messages), key=lambda i: (i.first, i.kind, i.text))
    if len(found) <= MAX_IDENTIFIER_PROBES:
        return [i.text for i in found]
    step = len(found) / MAX_IDENTIFIER_PROBES
    return [found[int(n * step)].text for n in range(MAX_IDENTIFIER_PROBES)]


def probes_for_preparation(preparation: Any) -> list[Probe]:
    """:func:`compute_probes` for a
    :class:`pi_session.compaction.CompactionPreparation`: its messages to
    summarize and turn prefix, file lists and previous summary."""
    messages = convert_to_llm([*preparation.messages_to_summarize, *preparation.turn_prefix_messages])
    return compute_probes(
        messages, file_lists=preparation.summary_file_lists, previous_summary=preparation.previous_summary
    )


# --------------------------------------------------------------------------- a whole compaction


def text_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(chars / 4)`` in UTF-16 code units,
    as :func:`pi_session.session.tokens.estimate_tokens` counts a summary."""
    return estimate_tokens({"role": "compactionSummary", "summary": text})


@dataclass
class CompactionEvaluation:
    """The probe report of one compaction.

    Attributes:
        summarizer: the summarizer's name (``extractive``, ``openai`` ...).
        model: the model id, when the summarizer has one.
        summary: the summary text written.
        summary_tokens: estimated tokens of the whole summary.
        summary_body_tokens: the same without the file lists.
        tokens_before: the context before the compaction, in tokens
            estimated from the messages' text (as ``tokens_after``).
        tokens_after: estimated context tokens after it (summary + kept).
        summarized_messages: how many messages were summarized (history +
            turn prefix).
        kept_messages: how many messages the context keeps verbatim.
        first_kept_entry_id: where the kept part starts.
        is_split_turn: the cut fell inside a turn.
        results: one :class:`ProbeResult` per probe.
        strategy: ``summary``, ``mask`` or ``both`` (how the context was
            compacted).
        contradictions: what the summary states that the history
            contradicts (:func:`pi_session.compaction.contradictions.find_contradictions`).
    """

    summarizer: str
    model: str | None
    summary: str
    summary_tokens: int
    summary_body_tokens: int
    tokens_before: int | float
    tokens_after: int
    summarized_messages: int
    kept_messages: int
    first_kept_entry_id: str
    is_split_turn: bool
    results: list[ProbeResult]
    strategy: str = "summary"
    contradictions: list[Contradiction] = field(default_factory=list)

    @property
    def answered(self) -> int:
        """Probes answered (by the summary or the kept messages)."""
        return sum(r.found for r in self.results)

    @property
    def answered_by_summary(self) -> int:
        """Probes the summary itself answers."""
        return sum(r.where == "summary" for r in self.results)

    @property
    def compression_ratio(self) -> float:
        """``tokens_before / tokens_after`` (0.0 when nothing is kept)."""
        return float(self.tokens_before) / self.tokens_after if self.tokens_after else 0.0

    def recall(self) -> dict[str, dict[str, Any]]:
        """Per category of :data:`CATEGORIES` that has probes:
        ``{total, answered, recall}`` (recall in 0..1)."""
        out: dict[str, dict[str, Any]] = {}
        for cat in CATEGORIES:
            rs = [r for r in self.results if PROBE_CATEGORIES.get(r.probe.kind) == cat]
            if rs:
                hit = sum(r.found for r in rs)
                out[cat] = {"total": len(rs), "answered": hit, "recall": hit / len(rs)}
        return out

    def to_json(self) -> dict[str, Any]:
        """``{summarizer, model, summaryTokens, summaryBodyTokens, tokensBefore,
        tokensAfter, summarizedMessages, keptMessages, firstKeptEntryId,
        isSplitTurn, strategy, compressionRatio, probes: {total, answered,
        answeredBySummary, missed}, recall: {category: {total, answered,
        recall}}, contradictions: [...], results: [...], summary}``."""
        return {
            "summarizer": self.summarizer,
            "model": self.model,
            "summaryTokens": self.summary_tokens,
            "summaryBodyTokens": self.summary_body_tokens,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "summarizedMessages": self.summarized_messages,
            "keptMessages": self.kept_messages,
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "strategy": self.strategy,
            "compressionRatio": round(self.compression_ratio, 3),
            "probes": {
                "total": len(self.results),
                "answered": self.answered,
                "answeredBySummary": self.answered_by_summary,
                "missed": len(self.results) - self.answered,
            },
            "recall": {k: {**v, "recall": round(v["recall"], 4)} for k, v in self.recall().items()},
            "contradictions": [c.to_json() for c in self.contradictions],
            "results": [r.to_json() for r in self.results],
            "summary": self.summary,
        }


def estimated_context_tokens(path_entries: Sequence[Mapping[str, Any]]) -> int:
    """The context at the end of ``path_entries`` (root→leaf) in tokens,
    every message estimated from its text (pi's ``estimateTokens``, about 4
    characters a token). Pure. The evaluation states the context before and
    after in this one unit: pi's ``tokensBefore`` counts the last reported
    usage, which includes the system prompt and tool definitions that no
    estimate of the messages sees."""
    return sum(estimate_tokens(m) for m in build_session_context(list(path_entries))["messages"])


def context_after(path_entries: Sequence[Mapping[str, Any]], result: Any) -> list[AgentMessage]:
    """The context messages after appending ``result`` (a
    :class:`pi_session.compaction.CompactionResult`) as a compaction entry at
    the end of ``path_entries``. Pure: the entries are not changed."""
    entries = list(path_entries)
    leaf = entries[-1].get("id") if entries else None
    entry = {
        "type": "compaction",
        "id": "eval-compaction",
        "parentId": leaf,
        "timestamp": "1970-01-01T00:00:00.000Z",
        "summary": result.summary,
        "firstKeptEntryId": result.first_kept_entry_id,
        "tokensBefore": result.tokens_before,
    }
    if result.details is not None:
        entry["details"] = result.details
    return build_session_context([*entries, entry])["messages"]


def evaluate_compaction(
    path_entries: Sequence[Mapping[str, Any]],
    preparation: Any,
    result: Any,
    *,
    summarizer: str = "",
    model: str | None = None,
    probes: Sequence[Probe] | None = None,
    strategy: str = "summary",
    tokens_before: int | float | None = None,
) -> CompactionEvaluation:
    """Score a finished compaction with the probes. Pure.

    Args:
        path_entries: the root→leaf path the compaction was prepared from.
        preparation: its :class:`pi_session.compaction.CompactionPreparation`.
        result: the :class:`pi_session.compaction.CompactionResult` that
            :func:`pi_session.compaction.compact` returned for it.
        summarizer: name shown in the report.
        model: model id shown in the report.
        probes: the probes to answer (default: those of ``preparation``;
            ``both`` passes the probes of the unmasked zone).
        strategy: shown in the report.
        tokens_before: the context size before, in estimated tokens
            (default: :func:`estimated_context_tokens` of ``path_entries``).

    Returns:
        A :class:`CompactionEvaluation`. The kept messages are the context
        after appending the compaction, without its summary message.
    """
    probes = list(probes) if probes is not None else probes_for_preparation(preparation)
    after = context_after(path_entries, result)
    kept = [m for m in after if not (isinstance(m, Mapping) and m.get("role") == COMPACTION_SUMMARY_ROLE)]
    results = answer_probes(probes, result.summary, kept_messages_text(kept))
    zone = convert_to_llm([*preparation.messages_to_summarize, *preparation.turn_prefix_messages])
    contradictions = find_contradictions(
        result.summary, zone, convert_to_llm(kept), previous_summary=preparation.previous_summary
    )
    return CompactionEvaluation(
        summarizer=summarizer,
        model=model,
        summary=result.summary,
        summary_tokens=text_tokens(result.summary),
        summary_body_tokens=text_tokens(strip_file_lists(result.summary)),
        tokens_before=estimated_context_tokens(path_entries) if tokens_before is None else tokens_before,
        tokens_after=sum(estimate_tokens(m) for m in after),
        summarized_messages=len(preparation.messages_to_summarize) + len(preparation.turn_prefix_messages),
        kept_messages=len(kept),
        first_kept_entry_id=str(result.first_kept_entry_id),
        is_split_turn=bool(preparation.is_split_turn),
        results=results,
        strategy=strategy,
        contradictions=contradictions,
    )


def evaluate_masking(
    path_entries: Sequence[Mapping[str, Any]], preparation: Any, edits: Sequence[Any]
) -> CompactionEvaluation:
    """Score the ``mask`` strategy: the probes of ``preparation``'s zone
    answered from the whole context after the mask ``edits``
    (:func:`pi_session.compaction.masking.masked_context`; there is no
    summary, so every answer is ``kept``). Pure.

    Args:
        path_entries: the root→leaf path.
        preparation: its :class:`pi_session.compaction.CompactionPreparation`.
        edits: :func:`pi_session.compaction.masking.plan_masking` of it.
    """
    from .masking import masked_context

    probes = probes_for_preparation(preparation)
    after = masked_context(path_entries, edits)
    results = answer_probes(probes, "", kept_messages_text(after))
    return CompactionEvaluation(
        summarizer="none",
        model=None,
        summary="",
        summary_tokens=0,
        summary_body_tokens=0,
        tokens_before=estimated_context_tokens(path_entries),
        tokens_after=sum(estimate_tokens(m) for m in after),
        summarized_messages=len(edits),
        kept_messages=len(after),
        first_kept_entry_id=str(preparation.first_kept_entry_id),
        is_split_turn=bool(preparation.is_split_turn),
        results=results,
        strategy="mask",
    )


def spread(evaluations: Sequence[CompactionEvaluation]) -> dict[str, Any]:
    """How much repeated runs of one summarizer on one session differ
    (published evaluations found model summaries varying widely between
    runs). Pure.

    Returns:
        ``{runs, answered: {min, max, mean}, summaryTokens: {min, max,
        mean}, recall: {category: {min, max, mean}}}`` (recall in 0..1; a
        category counts in the runs that have probes of it).
    """

    def stats(values: Sequence[float]) -> dict[str, float]:
        if not values:
            return {"min": 0.0, "max": 0.0, "mean": 0.0}
        return {"min": min(values), "max": max(values), "mean": round(sum(values) / len(values), 4)}

    recall: dict[str, dict[str, float]] = {}
    for cat in CATEGORIES:
        values = [ev.recall()[cat]["recall"] for ev in evaluations if cat in ev.recall()]
        if values:
            recall[cat] = stats([round(v, 4) for v in values])
    return {
        "runs": len(evaluations),
        "answered": stats([float(ev.answered) for ev in evaluations]),
        "summaryTokens": stats([float(ev.summary_tokens) for ev in evaluations]),
        "recall": recall,
    }
