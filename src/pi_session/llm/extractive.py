"""``ExtractiveSummarizer``: an offline, deterministic summarizer that needs no
model (**beyond pi**).

It fills the structured summary format (the table of
:mod:`pi_session.compaction.summary_format`: headings, item markers, limits,
which items give way first) with excerpts picked from the messages by fixed
rules. The rules that find facts are those the compaction probes use
(:mod:`pi_session.compaction.facts`: requests, constraints, unresolved
errors, decisions, the next step), so the summary answers every probe that
fits its size; what follows is how the sections are filled.

- ``## Goal``: the first request that reads as prose (a pasted terminal
  screen, log or traceback is not a goal: a message that is mostly program
  output counts only by what the user wrote around it,
  :func:`pi_session.compaction.facts.goal_text`; the previous summary's
  goals come first when there is one), then the requests that *changed
  direction*, at most
  :data:`GOAL_CHANGES` (the latest). A request changes direction when it is
  not a question, reads as prose (not a paste), has at least 8 words, and at
  least 4 of its key tokens, and 60% of them, appear in no earlier request.
  Follow-ups, corrections and one-line tweaks are left out.
- ``## Constraints & Preferences``: the user's imperative sentences with
  must / never / always / don't / only / prefer
  (:func:`pi_session.compaction.facts.is_constraint`), without duplicates,
  the latest :data:`~pi_session.compaction.facts.MAX_CONSTRAINTS`.
- ``### Done``: the files that ``edit``/``write`` calls changed successfully,
  one line per file (latest :data:`DONE_FILES`; the older ones together on
  one :data:`ALSO_CHANGED` line first, each with its change), then the last
  :data:`DONE_COMMANDS` distinct ``bash`` commands that succeeded, commands
  that change something before look-ups (``grep``, ``cat``, ``ls`` ...).
  Reads are not progress.
- ``### In Progress``: the pending request (no assistant reply after the
  latest request), or tool calls without results, or a note that tool work
  was going on when the history was cut.
- ``### Blocked``: failures with no later success on the same target, the
  latest :data:`~pi_session.compaction.facts.MAX_ERRORS`, each quoted by
  the line of output that states the error (a ``FAILED`` line, the exception
  ending a traceback, ``Error: ...``). Failed look-ups (``grep`` finding
  nothing) and aborted commands are not failures.
- ``## Key Decisions``: the assistant's stated choices ("I'll use ...",
  "let's go with ...", "... instead of ..." in the first person), the latest
  :data:`~pi_session.compaction.facts.MAX_DECISIONS`.
- ``## Next Steps``: the plan of the assistant's last reply (a numbered list
  ending it, at most 3 items, or its last forward-looking sentence; see
  :func:`pi_session.compaction.facts.plan_steps`), else the request still
  waiting for a reply, else the question the last reply ends with ("Waiting
  for the user's answer: ..."). An answered request is not a next step, and
  no step is one that Done (or a context line saying it is done) already
  covers.
- ``## Critical Context``: the requested focus, the last unresolved error,
  the latest request and the latest assistant reply (cut short), then the
  identifier index (:mod:`pi_session.compaction.identifiers`: the exact
  paths, commands, unresolved errors, URLs, ids, versions and numbers, one
  line per kind, best-ranked first). The sections are fitted to the size
  bound less :data:`INDEX_SHARE` of it; the index fills what they leave. A
  turn prefix's index ends Context Needed to Continue; a branch summary has
  none.

With a previous summary (kind ``update``, ``<summary>`` blocks in the
messages, or a ``branchSummary``/``compactionSummary`` message among them:
a branch left a second time, a compaction after a detour) its items are
kept before the new ones; its state lines ("Pending
request", "Last error" ...) are replaced by the current ones; an item that
was in progress and is now done moves to Done. A turn prefix gets ``##
Original Request`` (the turn's request), ``## Progress So Far`` (files
changed, decisions, failures) and ``## Context Needed to Continue`` (its
constraints, state, next step and last error) — pi 1.6's turn-prefix
headings; a branch summary has no Critical Context.

**Size.** Items are cut to a few hundred characters and each section holds a
bounded number of them, so the text stays under :data:`HISTORY_MAX_TOKENS`
(a turn prefix :data:`TURN_PREFIX_MAX_TOKENS`, together under 2,500 tokens,
the file lists that :func:`pi_session.compaction.compact` appends not
counted) however long the history and whatever the previous summary, and
under ``max_tokens`` when that is smaller (about 4 characters per token,
UTF-16 units). Over budget, the least important items go first (Critical
Context, Done, later goals, then the older decisions, failures and
constraints; a marker says how many were omitted), then items are
shortened (to 80 characters); when that is not enough, the previous
summary's items kept whole (below) give way in the same order, and only
then are items shortened further and, as a last resort, the text cut (the
identifier index is then left out).

**Earlier summaries are carried whole (beyond pi).** When a request carries
a previous summary and no ``max_tokens`` (what
:func:`pi_session.compaction.compact` sends since pi 1.6), the items of the
previous summary's Goal, Constraints, Done, Blocked, Key Decisions and
Critical Context sections (and any text before its first heading, as
Critical Context) are kept whole and never dropped, as long as together
they fit :data:`KEPT_SHARE` of the sections' part of the bound: its first
goal first, then the sections from the most important (Constraints,
Blocked, Key Decisions, Goal, Done, Critical Context), each in the order
the previous summary gives them. The rest of the bound is for what the new
messages add, the Goal first. A previous summary too long for that share (a
compaction imported from Codex holds the whole replayed transcript as its
summary, 72 KB) has its remaining items fitted like new ones: shortened or
dropped, never kept whole on top of the bound. Next Steps and In Progress
are state the update rewrites (as the update prompt asks models to), and
state lines are replaced as described above. Same input, same output: no
clock, no randomness.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from ..compaction.facts import (
    MAX_CONSTRAINTS,
    MAX_DECISIONS,
    MAX_ERRORS,
    HistoryFacts,
    analyze_history,
    is_lookup_command,
    summary_blocks,
)
from ..compaction.identifiers import (
    Identifier,
    extract_identifiers,
    format_identifier_index,
    is_index_line,
    parse_index_line,
)
from ..compaction.keywords import content_text, is_prose_line, key_tokens, prose, sentences
from ..compaction.summary_format import (
    BLOCKED,
    CONSTRAINTS,
    CRITICAL,
    DECISIONS,
    DONE,
    EXTRACTIVE_NOTE,
    GOAL,
    HISTORY_FORMAT,
    IN_PROGRESS,
    NEXT,
    SECTIONS,
    TURN_PREFIX_FORMAT,
    SummaryFormat,
    SummarySection,
    item_sections,
    parse_summary_sections,
    section,
    section_keys,
    strip_marker,
)
from ..core.jsonio import js_len
from ..core.text import clip_line
from .base import SummaryRequest

__all__ = [
    "EXTRACTIVE_NOTE",
    "CHARS_PER_TOKEN",
    "HISTORY_MAX_TOKENS",
    "TURN_PREFIX_MAX_TOKENS",
    "GOAL_CHANGES",
    "DONE_FILES",
    "DONE_COMMANDS",
    "INDEX_SHARE",
    "ALSO_CHANGED",
    "ALSO_CHANGED_CHARS",
    "INDEX_MIN_TOKENS",
    "KEPT_SHARE",
    "ExtractiveSummarizer",
    "extractive_summary",
    "parse_summary_sections",
    "summary_budget",
]

CHARS_PER_TOKEN = 4
"""Characters (UTF-16 code units) per token assumed for the budgets."""

HISTORY_MAX_TOKENS = HISTORY_FORMAT.max_tokens
"""Most tokens of a history, update or branch summary."""
TURN_PREFIX_MAX_TOKENS = TURN_PREFIX_FORMAT.max_tokens
"""Most tokens of a turn-prefix summary."""
GOAL_CHANGES = (section(GOAL).max_items or 1) - 1
"""Most direction changes listed under Goal (the latest; the first goal
comes before them)."""
DONE_COMMANDS = 3
"""Most successful commands listed under Done (the latest)."""
DONE_FILES = (section(DONE).max_items or DONE_COMMANDS) - DONE_COMMANDS
"""Most changed files listed under Done (the latest)."""
_CHANGED_FILE_RE = re.compile(r"^(Edited|Wrote) `([^`]+)`$")
ALSO_CHANGED = "Also changed: "
"""Starts the Done item that lists the changed files older than the latest
:data:`DONE_FILES`, each with its change (the artifact trail; the latest of
them that fit :data:`ALSO_CHANGED_CHARS`). It is never
shortened; when the bound is tight, changed-file items of Done move onto it
instead of being dropped while it stays under a quarter of the sections'
bound (a bound under :data:`INDEX_MIN_TOKENS` protects nothing); past that
it is dropped whole."""
ALSO_CHANGED_CHARS = 1200
"""Longest artifact-trail line written (the latest older files that fit)."""
INDEX_SHARE = 0.3
"""Share of the size bound kept free for the identifier index: the sections
are fitted to the rest, and the index fills whatever the sections leave."""
INDEX_MIN_TOKENS = 400
"""Under this size bound (a small ``max_tokens``) nothing is reserved for the
index: it gets only what the sections leave."""
KEPT_SHARE = 0.5
"""Share of the sections' part of the bound that the previous summary's
items kept whole may take in an uncapped update (the rest is for what the
new messages add); the previous items past it are fitted like new ones."""

# section keys, in output order
_ORDER = section_keys(SECTIONS)
# which sections give up items first when the budget is tight
_DROP_ORDER = [s.key for s in sorted(item_sections(SECTIONS), key=lambda s: s.drop_rank)]
# sections whose oldest items go first (the others keep their first item: the original goal)
_KEEP_FIRST = {s.key for s in SECTIONS if s.keep_first}
# sections whose previous items an uncapped update keeps whole
_KEPT_SECTIONS = tuple(s.key for s in item_sections(SECTIONS) if s.carried)
_TRANSIENT_PREFIXES = (
    "Pending request:",
    "Unanswered request:",
    "Waiting on tool calls:",
    "Tool work was still going on",
    "Last error:",
    "Latest request:",
    "Latest user message:",
    "Latest assistant reply:",
    "Requested focus:",
    "Next step:",
    "Constraint:",
)


def _key(item: str) -> str:
    """Normalized form for de-duplication: no list markers, bold, case or spacing."""
    item = strip_marker(item)
    item = item.replace("**", "").replace("`", "")
    return " ".join(item.lower().split()).rstrip(".")


# --------------------------------------------------------------------------- rules


def _merge(*lists: Iterable[str]) -> list[str]:
    """Concatenate keeping the first of items equal under :func:`_key`."""
    seen: set[str] = set()
    out: list[str] = []
    for lst in lists:
        for item in lst:
            k = _key(item)
            if k and k not in seen:
                seen.add(k)
                out.append(item)
    return out


def _merge_latest(*lists: Iterable[str]) -> list[str]:
    """Concatenate keeping the *last* of items equal under :func:`_key` (a
    repeated item moves to the end)."""
    out: dict[str, str] = {}
    for lst in lists:
        for item in lst:
            k = _key(item)
            if k:
                out.pop(k, None)
                out[k] = item
    return list(out.values())


def _direction_changes(requests: Sequence[str], known: Iterable[str]) -> list[str]:
    """The requests that changed direction (module docs), oldest first;
    ``known`` are goals already listed (their words are not new)."""
    seen: set[str] = set()
    for text in known:
        seen.update(key_tokens(text, None))
    out: list[str] = []
    for text in requests:
        keys = key_tokens(text, None)
        novel = [k for k in keys if k not in seen]
        head = text[:200]
        if (
            not text.rstrip().endswith("?")
            and len(text.split()) >= 8
            and len(novel) >= 4
            and len(novel) >= 0.6 * len(keys)
            and is_prose_line(head)
        ):
            out.append(text)
        seen.update(keys)
    return out


def _first_prose_request(requests: Sequence[str]) -> int:
    """Index of the first request whose beginning reads as prose (not a
    pasted terminal screen, log or diff); 0 when none does."""
    for n, text in enumerate(requests):
        if is_prose_line(text[:200]):
            return n
    return 0


def _state(facts: HistoryFacts) -> tuple[list[str], list[str]]:
    """(in progress, critical) state lines from ``facts``."""
    in_progress: list[str] = []
    if facts.pending_request and facts.latest_request:
        in_progress.append(f"Pending request: {facts.latest_request}")
    elif facts.pending_calls:
        in_progress.append("Waiting on tool calls: " + "; ".join(facts.pending_calls))
    elif facts.last_role == "toolResult":
        in_progress.append("Tool work was still going on when the conversation was cut")
    critical: list[str] = []
    unresolved = facts.unresolved
    if unresolved:
        critical.append(f"Last error: {unresolved[-1].line}")
    if facts.latest_request and not facts.pending_request:
        critical.append(f"Latest request: {facts.latest_request}")
    if facts.last_assistant_text.strip():
        critical.append(f"Latest assistant reply: {clip_line(prose(facts.last_assistant_text), 600)}")
    return in_progress, critical


_DONE_WORDS_RE = re.compile(r"\b(?:done|complete[d]?|finished|fixed|implemented|passing|pass(?:es|ed)?)\b", re.I)


def _already_done(item: str, done: Sequence[str]) -> bool:
    """True when ``item`` names work a Done item (or a context line saying
    it is done) already covers: 60% of its key tokens are in one of them."""
    keys = set(key_tokens(item, None))
    if not keys:
        return False
    for line in done:
        if line.startswith(_TRANSIENT_PREFIXES):
            continue
        if strip_marker(line).startswith(("Edited ", "Wrote ", "Ran ")) or _DONE_WORDS_RE.search(line):
            if len(keys & set(key_tokens(line, None))) >= 0.6 * len(keys):
                return True
    return False


def _next_steps(facts: HistoryFacts, previous: Sequence[str], done: Sequence[str]) -> list[str]:
    """Next Steps: the plan of the last assistant reply; else the pending
    request; else, when the last reply asks the user something, that
    question; else, when no request came since, the previous summary's
    steps. A step the summary lists
    as done is never a next step, and an answered request is not one
    either: with no plan after it, the section stays empty."""
    if facts.plan_steps:
        steps = list(facts.plan_steps)
    elif facts.pending_request and facts.plan:
        steps = [facts.plan]  # the pending request, less any pasted program output
    else:
        question = _closing_question(facts.last_assistant_text)
        # an earlier summary's steps hold only while no request came since
        steps = [f"Waiting for the user's answer: {question}"] if question else ([] if facts.requests else list(previous))
    return [s for s in steps if not _already_done(s, done)]


def _closing_question(text: str) -> str:
    """The question a reply ends with, or ``""``."""
    found = [s for s in sentences(text) if s.strip()]
    return clip_line(found[-1], 300) if found and found[-1].rstrip().endswith("?") else ""


def _done_items(facts: HistoryFacts) -> list[str]:
    files = [f"{verb} `{path}`" for path, verb, _count in facts.edits][-DONE_FILES:]
    older = facts.edits[: max(0, len(facts.edits) - DONE_FILES)]
    trail: list[str] = []
    size = js_len(ALSO_CHANGED)
    for path, verb, _count in reversed(older):  # the artifact trail: the latest older files that fit, with their change
        piece = f"`{path}` ({'written' if verb == 'Wrote' else 'edited'})"
        size += js_len(piece) + 2
        if size > ALSO_CHANGED_CHARS:
            break
        trail.insert(0, piece)
    if trail:
        files.insert(0, ALSO_CHANGED + ", ".join(trail))
    changing = [c for c in facts.commands if not is_lookup_command(c)]
    lookups = [c for c in facts.commands if is_lookup_command(c)]
    picked = changing[-DONE_COMMANDS:]
    if len(picked) < DONE_COMMANDS:
        picked += lookups[len(lookups) - (DONE_COMMANDS - len(picked)) :]
    chosen = set(picked)
    commands = [f"Ran `{clip_line(c, 120)}`" for c in facts.commands if c in chosen]
    return files + commands


def _sections_for(request: SummaryRequest) -> dict[str, list[str]]:
    # pi leaves tool results out of a branch summary's input
    facts = analyze_history(request.messages, request.previous_summary, tool_results=request.kind != "branch")
    prev: dict[str, list[str]] = {k: [] for k in _ORDER}
    sources = []
    if request.previous_summary:
        sources.append(parse_summary_sections(request.previous_summary))
    for msg in request.messages:  # earlier summaries carried in the conversation
        if not isinstance(msg, Mapping):
            continue
        if msg.get("role") == "user":
            for block in summary_blocks(content_text(msg.get("content"))):
                sources.append(parse_summary_sections(block))
        elif msg.get("role") in ("branchSummary", "compactionSummary") and isinstance(msg.get("summary"), str):
            # a summary entry in the history summarized (a branch left twice, a compaction after a detour)
            sources.append(parse_summary_sections(msg["summary"]))
    for src in sources:
        for k in _ORDER:
            prev[k] = _merge(prev[k], src.get(k, []))
    if request.messages:  # state lines of an earlier extractive summary are superseded
        for k in _ORDER:
            prev[k] = [x for x in prev[k] if not x.startswith(_TRANSIENT_PREFIXES)]
    prev[CRITICAL] = [x for x in prev[CRITICAL] if not is_index_line(x)]  # the index is rebuilt

    requests = [g for _i, g in facts.goals]  # pasted program output is no goal
    if prev[GOAL]:
        goal_head, known = prev[GOAL][:1], prev[GOAL]
        changes = prev[GOAL][1:] + _direction_changes(requests, known)
    else:
        first = _first_prose_request(requests)
        goal_head, known = requests[first : first + 1], requests[first : first + 1]
        changes = _direction_changes(requests[first + 1 :], known)
    changes = [c for c in _merge(changes) if _key(c) not in {_key(g) for g in goal_head}]
    goal = goal_head + changes[-GOAL_CHANGES:]

    in_progress, critical = _state(facts)
    focus = [f"Requested focus: {request.custom_instructions}"] if request.custom_instructions else []
    done = _merge_latest(prev[DONE], _done_items(facts))
    blocked = _merge_latest(prev[BLOCKED], [e.describe() for e in facts.unresolved])
    next_steps = _next_steps(facts, prev[NEXT], done + prev[CRITICAL])
    sec = {
        GOAL: goal,
        CONSTRAINTS: facts.constraints[-MAX_CONSTRAINTS :],
        DONE: [d for d in done if d.startswith(ALSO_CHANGED)][-1:]
        + [d for d in done if not d.startswith(ALSO_CHANGED)][-(DONE_FILES + DONE_COMMANDS) :],
        IN_PROGRESS: _merge(prev[IN_PROGRESS][-2:], in_progress),
        BLOCKED: blocked[-MAX_ERRORS :],
        DECISIONS: facts.decisions[-MAX_DECISIONS :],
        NEXT: next_steps[: section(NEXT).max_items],
        CRITICAL: _merge(focus, prev[CRITICAL][-3:], critical),
    }
    for key, items in _kept_previous_items(request).items():
        # beyond pi: every fact of the previous summary stays (module docs)
        sec[key] = _merge(items, sec[key])
    done_keys = {_key(d) for d in sec[DONE]}
    sec[IN_PROGRESS] = [x for x in sec[IN_PROGRESS] if _key(x) not in done_keys]
    return sec


def _budgets(request: SummaryRequest) -> tuple[int, int]:
    """``(whole bound, the sections' part)`` of ``request``'s summary, in
    UTF-16 code units: :func:`summary_budget`, less :data:`INDEX_SHARE` of
    it kept for the identifier index (nothing under
    :data:`INDEX_MIN_TOKENS`)."""
    full = summary_budget(request)
    reserve = int(full * INDEX_SHARE) if full >= INDEX_MIN_TOKENS * CHARS_PER_TOKEN else 0
    return full, full - reserve


def _kept_previous_items(request: SummaryRequest) -> dict[str, list[str]]:
    """The previous summary's items that an uncapped update keeps whole, by
    section, in their order (empty when the request has a ``max_tokens`` or
    no previous summary); state lines are not facts and are left out.

    They share :data:`KEPT_SHARE` of the sections' part of the bound: the
    first goal claims its place first, then the sections from the most
    important (the reverse of the order in which items give way:
    Constraints, Blocked, Key Decisions, Goal, Done, Critical Context), each
    in the previous summary's order (a summary states what matters most
    first); an item that does not fit is left to the ordinary rules
    (:func:`_sections_for`: fitted and cut like a new item)."""
    if request.max_tokens is not None or not request.previous_summary or request.kind == "turn_prefix":
        return {}
    parsed = parse_summary_sections(request.previous_summary, keep_leading=True)
    items = {
        key: [x for x in parsed[key] if not x.startswith(_TRANSIENT_PREFIXES) and not is_index_line(x)]
        for key in _KEPT_SECTIONS
    }
    room = int(_budgets(request)[1] * KEPT_SHARE)
    chosen: dict[str, set[int]] = {key: set() for key in items}
    order: list[tuple[str, int]] = [(GOAL, 0)] if items.get(GOAL) else []
    for key in reversed(_DROP_ORDER):
        if key in items:
            order += [(key, n) for n in range(len(items[key])) if (key, n) != (GOAL, 0)]
    for key, n in order:
        size = js_len(items[key][n]) + 8  # the item's marker and line break
        if size <= room:
            room -= size
            chosen[key].add(n)
    return {key: [x for n, x in enumerate(items[key]) if n in chosen[key]] for key in items}


def _identifiers(request: SummaryRequest) -> list[Identifier]:
    """The ranked identifiers of ``request``'s messages, an earlier summary's
    index (in ``previous_summary`` or carried in the messages) counting too."""
    earlier: list[tuple[str, str]] = []
    texts = [request.previous_summary or ""]
    for msg in request.messages:
        if isinstance(msg, Mapping) and msg.get("role") in ("branchSummary", "compactionSummary"):
            texts.append(str(msg.get("summary") or ""))
        elif isinstance(msg, Mapping) and msg.get("role") == "user":
            texts += summary_blocks(content_text(msg.get("content")))
    for text in texts:
        for item in parse_summary_sections(text).get(CRITICAL, []) if text else ():
            earlier += parse_index_line(item)
    return extract_identifiers(request.messages, earlier)


def _turn_prefix_sections(request: SummaryRequest) -> dict[str, list[str]]:
    facts = analyze_history(request.messages)
    sec: dict[str, list[str]] = {k: [] for k in _ORDER}
    turn_requests = [g for _i, g in facts.goals]
    first = _first_prose_request(turn_requests)
    sec[GOAL] = turn_requests[first : first + 1]
    changed = [f"{verb} `{path}`" for path, verb, _c in facts.edits][-4:]
    sec[DONE] = _merge(changed, facts.decisions[-3:], [e.describe() for e in facts.unresolved][-MAX_ERRORS :])
    in_progress, _critical = _state(facts)
    context = [f"Constraint: {c}" for c in facts.constraints[-3:]]
    context += [x for x in in_progress if not x.startswith("Pending request:")]
    if facts.plan and (not sec[GOAL] or _key(facts.plan) != _key(sec[GOAL][0])):
        context.append(f"Next step: {facts.plan}")
    if facts.unresolved:
        context.append(f"Last error: {facts.unresolved[-1].line}")
    sec[CRITICAL] = _merge(context)
    return sec


# --------------------------------------------------------------------------- rendering


def _render_items(
    row: SummarySection, items: list[str], omitted: int, cap: int, keep: frozenset[str] = frozenset()
) -> list[str]:
    """The lines of one section: its items with the row's marker, cut to the
    row's item length (and ``cap``), or the row's empty line."""
    if not items:
        return [row.empty]
    lines = []
    for n, item in enumerate(items, 1):
        limit = min(cap, row.first_item_chars if n == 1 and row.first_item_chars else row.item_chars)
        bare = strip_marker(item) or item
        text = bare if _key(item) in keep or bare.startswith(ALSO_CHANGED) else clip_line(bare, limit)
        marker = f"{n}. " if row.bullet == "1. " else row.bullet
        lines.append(f"{marker}{text}")
    if omitted:
        marker = f"- ({omitted} earlier items omitted to fit the size limit)"
        lines.insert(1 if row.key in _KEEP_FIRST else 0, marker)
    return lines


def _format_of(kind: str) -> SummaryFormat:
    return TURN_PREFIX_FORMAT if kind == "turn_prefix" else HISTORY_FORMAT


def _index_key(kind: str) -> str | None:
    """The key of the section that ends with the identifier index: Critical
    Context (a turn prefix's Context Needed to Continue); None for a branch
    summary, which has no Critical Context."""
    return None if kind == "branch" else CRITICAL


def _render(
    kind: str,
    sec: dict[str, list[str]],
    omitted: dict[str, int],
    cap: int,
    keep: frozenset[str] = frozenset(),
    index: Sequence[str] = (),
) -> str:
    """The summary text: :data:`EXTRACTIVE_NOTE`, then the sections of the
    format of ``kind`` in order (a branch summary without the sections that
    are not ``in_branch``), a blank line between sections; the ``index``
    lines end :func:`_index_key`'s section, never shortened."""
    out = [EXTRACTIVE_NOTE]
    pending: list[str] = []
    index_key = _index_key(kind)
    for row in _format_of(kind).sections:
        if kind == "branch" and not row.in_branch:
            continue
        if row.container:
            pending.append(row.heading)
            continue
        items = _render_items(row, sec[row.key], omitted.get(row.key, 0), cap, keep)
        if row.key == index_key and index:
            items = [x for x in items if x != row.empty] + [f"- {line}" for line in index]
        out += ["", *pending, row.heading, *items]
        pending = []
    return "\n".join(out)


def summary_budget(request: SummaryRequest) -> int:
    """The most UTF-16 code units the summary of ``request`` may have:
    ``max_tokens`` and :data:`HISTORY_MAX_TOKENS` (a turn prefix
    :data:`TURN_PREFIX_MAX_TOKENS`), whichever is smaller, times
    :data:`CHARS_PER_TOKEN`."""
    cap = TURN_PREFIX_MAX_TOKENS if request.kind == "turn_prefix" else HISTORY_MAX_TOKENS
    try:
        tokens = cap if request.max_tokens is None else int(request.max_tokens)
    except (TypeError, ValueError, OverflowError):
        tokens = cap
    return max(0, min(tokens, cap)) * CHARS_PER_TOKEN


def _cut(text: str, budget: int) -> str:
    """``text`` cut to ``budget`` UTF-16 code units, ``...`` at the end."""
    if js_len(text) <= budget:
        return text
    keep = max(0, budget - 3)
    out = text[:keep]
    while out and js_len(out) > keep:
        out = out[:-1]
    return (out.rstrip() + "...") if budget >= 3 else out[:budget]


def extractive_summary(request: SummaryRequest) -> str:
    """The extractive summary of ``request`` (see module docs). Pure and
    deterministic.

    Args:
        request: uses ``kind``, ``messages`` (LLM messages: ``user``,
            ``assistant``, ``toolResult``), ``previous_summary``,
            ``custom_instructions`` and ``max_tokens``; ignores the prompts.

    Returns:
        Markdown text of at most :func:`summary_budget` UTF-16 code units
        (about ``min(max_tokens, 1850)`` tokens; 600 for a turn prefix),
        whatever the input; the previous summary's items kept whole count
        within it (module docs).
    """
    full_budget, budget = _budgets(request)
    reserve = full_budget - budget
    sec = _turn_prefix_sections(request) if request.kind == "turn_prefix" else _sections_for(request)
    keep = frozenset(_key(x) for items in _kept_previous_items(request).values() for x in items)
    omitted: dict[str, int] = {}
    cap = 600
    text = _render(request.kind, sec, omitted, cap, keep)

    trail_cap = budget // 4 if reserve else 0  # the most the artifact-trail line of Done may take

    def victim_index(key: str, floor: int) -> int | None:
        """The item of ``key`` to drop next (never a kept one, nor an
        artifact-trail line within its cap), or None."""
        order = range(1, len(sec[key])) if key in _KEEP_FIRST else range(len(sec[key]))
        free = [
            i
            for i in order
            if _key(sec[key][i]) not in keep
            and not (key == DONE and sec[key][i].startswith(ALSO_CHANGED) and js_len(sec[key][i]) <= trail_cap)
        ]
        return free[0] if len(sec[key]) > floor and free else None

    def fold(index: int) -> bool:
        """Move Done's changed-file item ``index`` onto the artifact-trail
        line when that stays within its cap; True when folded."""
        m = _CHANGED_FILE_RE.match(sec[DONE][index])
        if not m:
            return False
        piece = f"`{m.group(2)}` ({'written' if m.group(1) == 'Wrote' else 'edited'})"
        trail = next((n for n, x in enumerate(sec[DONE]) if x.startswith(ALSO_CHANGED)), None)
        line = (sec[DONE][trail] + ", " if trail is not None else ALSO_CHANGED) + piece
        if js_len(line) > trail_cap:
            return False
        del sec[DONE][index]
        if trail is None:
            sec[DONE].insert(0, line)
        else:
            sec[DONE][trail if trail < index else trail - 1] = line
        return True

    # 1) drop the least important items, down to each section's first/latest two,
    # 2) shorten items, 3) drop down to one item, 4) the previous summary's items
    # kept whole give way like the others (rather than the new ones being cut to
    # nothing), 5) shorten further, 6) cut
    for lift in (False, True):
        if lift:
            if js_len(text) <= budget or not keep:
                break
            keep, cap = frozenset(), 600
            text = _render(request.kind, sec, omitted, cap, keep)
        for floor in (2, 1):
            while js_len(text) > budget:
                found = next(((k, i) for k in _DROP_ORDER if (i := victim_index(k, floor)) is not None), None)
                if found is None:
                    break
                victim, index = found
                if victim == DONE and fold(index):
                    text = _render(request.kind, sec, omitted, cap, keep)
                    continue
                del sec[victim][index]
                omitted[victim] = omitted.get(victim, 0) + 1
                text = _render(request.kind, sec, omitted, cap, keep)
            while js_len(text) > budget and cap > 80:
                cap = max(80, cap * 2 // 3)
                text = _render(request.kind, sec, omitted, cap, keep)
    while js_len(text) > budget and cap > 20:
        cap = max(20, cap // 2)
        text = _render(request.kind, sec, omitted, cap, keep)
    fitted = js_len(text) <= budget  # else cut: the index is added to whole sections only
    text = _cut(text, budget)
    if _index_key(request.kind) and fitted:
        # the index fills what the sections left (at least its share of the bound)
        room = max(full_budget - js_len(text), full_budget - budget) - 2
        index_lines = format_identifier_index(_identifiers(request), room, text)
        if index_lines:
            with_index = _render(request.kind, sec, omitted, cap, keep, index_lines)
            if js_len(with_index) <= full_budget:
                text = with_index
    return text


class ExtractiveSummarizer:
    """Offline summarizer without a model (see module docs).

    ``summarize`` never fails for well-formed requests and makes no network
    calls; it is ``async`` only to match :class:`Summarizer`.
    """

    name = "extractive"
    fallback_reason: str | None = None

    async def summarize(self, request: SummaryRequest) -> str:
        """Return :func:`extractive_summary` of ``request``."""
        return extractive_summary(request)
