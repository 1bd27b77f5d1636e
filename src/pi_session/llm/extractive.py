"""``ExtractiveSummarizer``: an offline, deterministic summarizer that needs no
model (SPEC 12, **beyond pi**).

Size (over 500 lines): the summarizer is one algorithm whose rules are documented above; splitting it would separate rules from their documentation.

It fills the structured summary format (the section headings the model
prompts ask for) with excerpts picked from the messages by fixed rules. The
rules that find facts are those of the compaction probes
(:mod:`pi_session.compaction.probes`: requests, constraints, unresolved
errors, decisions, the next step), so the summary answers every probe that
fits its size; what follows is how the sections are filled.

- ``## Goal``: the first request (the previous summary's goals come first
  when there is one), then the requests that *changed direction*, at most
  :data:`GOAL_CHANGES` (the latest). A request changes direction when it is
  not a question, reads as prose (not a paste), has at least 8 words, and at
  least 4 of its key tokens, and 60% of them, appear in no earlier request.
  Follow-ups, corrections and one-line tweaks are left out.
- ``## Constraints & Preferences``: the user's imperative sentences with
  must / never / always / don't / only / prefer
  (:func:`pi_session.compaction.probes.is_constraint`), without duplicates,
  the latest :data:`~pi_session.compaction.probes.MAX_CONSTRAINTS`.
- ``### Done``: the files that ``edit``/``write`` calls changed successfully,
  one line per file (latest :data:`DONE_FILES`), then the last
  :data:`DONE_COMMANDS` distinct ``bash`` commands that succeeded, commands
  that change something before look-ups (``grep``, ``cat``, ``ls`` ...).
  Reads are not progress.
- ``### In Progress``: the pending request (no assistant reply after the
  latest request), or tool calls without results, or a note that tool work
  was going on when the history was cut.
- ``### Blocked``: failures with no later success on the same target, the
  latest :data:`~pi_session.compaction.probes.MAX_ERRORS`, each quoted by
  the line of output that states the error (a ``FAILED`` line, the exception
  ending a traceback, ``Error: ...``). Failed look-ups (``grep`` finding
  nothing) and aborted commands are not failures.
- ``## Key Decisions``: the assistant's stated choices ("I'll use ...",
  "let's go with ...", "... instead of ..." in the first person), the latest
  :data:`~pi_session.compaction.probes.MAX_DECISIONS`.
- ``## Next Steps``: the plan of the assistant's last reply (a numbered list
  ending it, at most 3 items, or its last forward-looking sentence), else the
  latest request (see :func:`pi_session.compaction.probes.plan_steps`).
- ``## Critical Context``: the requested focus, the last unresolved error,
  the latest request and the latest assistant reply (cut short).

With a previous summary (kind ``update``, or ``<summary>`` blocks in the
messages) its items are kept before the new ones; its state lines ("Pending
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
counted) however long the history, and under ``max_tokens`` when that is
smaller (about 4 characters per token, UTF-16 units). Over budget, the
least important items go first (Critical Context, Done, later goals, then
the older decisions, failures and constraints; a marker says how many were
omitted), then items are shortened, and as a last resort the text is cut.

**Earlier summaries are never lost (beyond pi).** When a request carries a
previous summary and no ``max_tokens`` (what
:func:`pi_session.compaction.compact` sends since pi 1.6), every item of the
previous summary's Goal, Constraints, Done, Blocked, Key Decisions and
Critical Context sections (and any text before its first heading, as
Critical Context) is kept, whole and never dropped; only the new items are
fitted to the size bound, so such a summary may be longer than the bound.
Next Steps and In Progress are state the update rewrites (as the update
prompt asks models to), and state lines are replaced as described above.
Same input, same output: no clock, no randomness.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from ..jsonio import js_len
from ..text import clip_line
from .base import SummaryRequest

EXTRACTIVE_NOTE = (
    "_Extractive summary: put together offline from excerpts of the conversation "
    "by fixed rules, without a language model._"
)
"""First line of every extractive summary."""

CHARS_PER_TOKEN = 4
"""Characters (UTF-16 code units) per token assumed for the budgets."""

HISTORY_MAX_TOKENS = 1850
"""Most tokens of a history, update or branch summary."""
TURN_PREFIX_MAX_TOKENS = 600
"""Most tokens of a turn-prefix summary."""
GOAL_CHANGES = 4
"""Most direction changes listed under Goal (the latest)."""
DONE_FILES = 10
"""Most changed files listed under Done (the latest)."""
DONE_COMMANDS = 3
"""Most successful commands listed under Done (the latest)."""

# section keys, in output order
GOAL, CONSTRAINTS, DONE, IN_PROGRESS, BLOCKED, DECISIONS, NEXT, CRITICAL = (
    "goal",
    "constraints",
    "done",
    "in_progress",
    "blocked",
    "decisions",
    "next",
    "critical",
)
_ORDER = [GOAL, CONSTRAINTS, DONE, IN_PROGRESS, BLOCKED, DECISIONS, NEXT, CRITICAL]
# which sections give up items first when the budget is tight
_DROP_ORDER = [CRITICAL, DONE, GOAL, DECISIONS, BLOCKED, CONSTRAINTS, NEXT, IN_PROGRESS]
# sections whose oldest items go first (the others keep their first item: the original goal)
_KEEP_FIRST = {GOAL}
# longest item per section (characters)
_ITEM_CHARS = {
    GOAL: 240,
    CONSTRAINTS: 220,
    DONE: 140,
    IN_PROGRESS: 240,
    BLOCKED: 240,
    DECISIONS: 220,
    NEXT: 240,
    CRITICAL: 300,
}
_FIRST_GOAL_CHARS = 300

_HEADING_KEYS = {
    "goal": GOAL,
    "constraints & preferences": CONSTRAINTS,
    "constraints and preferences": CONSTRAINTS,
    "constraints": CONSTRAINTS,
    "done": DONE,
    "in progress": IN_PROGRESS,
    "blocked": BLOCKED,
    "key decisions": DECISIONS,
    "decisions": DECISIONS,
    "next steps": NEXT,
    "critical context": CRITICAL,
    # turn-prefix sections fold into the main ones
    "original request": GOAL,
    "early progress": DONE,
    "context for suffix": CRITICAL,
    "progress so far": DONE,
    "context needed to continue": CRITICAL,
}

_SUMMARY_BLOCK_RE = re.compile(r"<summary>\s*(.*?)\s*</summary>", re.S)
_FILE_BLOCK_RE = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.S)
_MARKER_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?")
_OMITTED_RE = re.compile(r"^\(\d+ (?:more|earlier) .*omitted.*\)$")
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


# --------------------------------------------------------------------------- text helpers


def _key(item: str) -> str:
    """Normalized form for de-duplication: no list markers, bold, case or spacing."""
    item = _MARKER_RE.sub("", item)
    item = item.replace("**", "").replace("`", "")
    return " ".join(item.lower().split()).rstrip(".")


# --------------------------------------------------------------------------- summary parsing


def parse_summary_sections(summary: str, *, keep_leading: bool = False) -> dict[str, list[str]]:
    """Items of a structured summary by section key (``goal``,
    ``constraints``, ``done``, ``in_progress``, ``blocked``, ``decisions``,
    ``next``, ``critical``).

    Headings are recognised case-insensitively at levels ``##``/``###``
    (turn-prefix headings fold into the main sections; unknown headings go
    to ``critical``). List markers (``-``, ``1.``, ``[x]``) are removed;
    other non-empty lines are items too. File-list blocks, text before the
    first heading (unless ``keep_leading``: then its lines are ``critical``
    items, so a summary without headings loses nothing), ``---``
    separators, bold-only labels, "omitted" markers and ``(none)``
    placeholders are skipped. Pure function.
    """
    summary = _FILE_BLOCK_RE.sub("", summary)
    out: dict[str, list[str]] = {k: [] for k in _ORDER}
    current: str | None = CRITICAL if keep_leading else None
    for raw in summary.splitlines():
        line = raw.strip()
        if not line or line == "---":
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            title = m.group(2).strip().strip("*").strip().lower()
            if title == "progress":
                current = None
                continue
            current = _HEADING_KEYS.get(title, CRITICAL)
            continue
        if current is None:
            continue
        if re.fullmatch(r"\*\*[^*]+\*\*:?", line):
            continue
        item = _MARKER_RE.sub("", line).strip()
        if not item or item.lower().strip("()_. ") in ("none", "none found", "n/a", "nothing"):
            continue
        if item == EXTRACTIVE_NOTE or _OMITTED_RE.match(item):
            continue
        out[current].append(item)
    return out


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
    from ..compaction import probes

    seen: set[str] = set()
    for text in known:
        seen.update(probes.key_tokens(text, None))
    out: list[str] = []
    for text in requests:
        keys = probes.key_tokens(text, None)
        novel = [k for k in keys if k not in seen]
        head = text[:200]
        if (
            not text.rstrip().endswith("?")
            and len(text.split()) >= 8
            and len(novel) >= 4
            and len(novel) >= 0.6 * len(keys)
            and probes.is_prose_line(head)
        ):
            out.append(text)
        seen.update(keys)
    return out


def _state(facts: Any) -> tuple[list[str], list[str]]:
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
        from ..compaction.probes import prose

        critical.append(f"Latest assistant reply: {clip_line(prose(facts.last_assistant_text), 600)}")
    return in_progress, critical


def _done_items(facts: Any) -> list[str]:
    files = [f"{verb} `{path}`" for path, verb, _count in facts.edits][-DONE_FILES:]
    from ..compaction.probes import is_lookup_command

    changing = [c for c in facts.commands if not is_lookup_command(c)]
    lookups = [c for c in facts.commands if is_lookup_command(c)]
    picked = changing[-DONE_COMMANDS:]
    if len(picked) < DONE_COMMANDS:
        picked += lookups[len(lookups) - (DONE_COMMANDS - len(picked)) :]
    chosen = set(picked)
    commands = [f"Ran `{clip_line(c, 120)}`" for c in facts.commands if c in chosen]
    return files + commands


def _sections_for(request: SummaryRequest) -> dict[str, list[str]]:
    from ..compaction import probes

    facts = probes.analyze_history(request.messages, request.previous_summary)
    prev: dict[str, list[str]] = {k: [] for k in _ORDER}
    sources = []
    if request.previous_summary:
        sources.append(parse_summary_sections(request.previous_summary))
    for msg in request.messages:  # earlier summaries carried in the conversation
        if isinstance(msg, Mapping) and msg.get("role") == "user":
            for block in _SUMMARY_BLOCK_RE.findall(probes.content_text(msg.get("content"))):
                sources.append(parse_summary_sections(block))
    for src in sources:
        for k in _ORDER:
            prev[k] = _merge(prev[k], src.get(k, []))
    if request.messages:  # state lines of an earlier extractive summary are superseded
        for k in _ORDER:
            prev[k] = [x for x in prev[k] if not x.startswith(_TRANSIENT_PREFIXES)]

    requests = [r for _i, r in facts.requests]
    if prev[GOAL]:
        goal_head, known = prev[GOAL][:1], prev[GOAL]
        changes = prev[GOAL][1:] + _direction_changes(requests, known)
    else:
        goal_head, known = requests[:1], requests[:1]
        changes = _direction_changes(requests[1:], known)
    changes = [c for c in _merge(changes) if _key(c) not in {_key(g) for g in goal_head}]
    goal = goal_head + changes[-GOAL_CHANGES:]

    in_progress, critical = _state(facts)
    focus = [f"Requested focus: {request.custom_instructions}"] if request.custom_instructions else []
    done = _merge_latest(prev[DONE], _done_items(facts))
    blocked = _merge_latest(prev[BLOCKED], [e.describe() for e in facts.unresolved])
    next_steps = facts.plan_steps or ([facts.plan] if facts.plan else prev[NEXT])
    sec = {
        GOAL: goal,
        CONSTRAINTS: facts.constraints[-probes.MAX_CONSTRAINTS :],
        DONE: done[-(DONE_FILES + DONE_COMMANDS) :],
        IN_PROGRESS: _merge(prev[IN_PROGRESS][-2:], in_progress),
        BLOCKED: blocked[-probes.MAX_ERRORS :],
        DECISIONS: facts.decisions[-probes.MAX_DECISIONS :],
        NEXT: next_steps[:3],
        CRITICAL: _merge(focus, prev[CRITICAL][-3:], critical),
    }
    for key, items in _kept_previous_items(request).items():
        # beyond pi: every fact of the previous summary stays (module docs)
        sec[key] = _merge(items, sec[key])
    done_keys = {_key(d) for d in sec[DONE]}
    sec[IN_PROGRESS] = [x for x in sec[IN_PROGRESS] if _key(x) not in done_keys]
    return sec


_KEPT_SECTIONS = (GOAL, CONSTRAINTS, DONE, BLOCKED, DECISIONS, CRITICAL)
"""Sections whose previous items an uncapped update keeps whole."""


def _kept_previous_items(request: SummaryRequest) -> dict[str, list[str]]:
    """The previous summary's items that an uncapped update must keep, by
    section (empty when the request has a ``max_tokens`` or no previous
    summary); state lines are not facts and are left out."""
    if request.max_tokens is not None or not request.previous_summary or request.kind == "turn_prefix":
        return {}
    parsed = parse_summary_sections(request.previous_summary, keep_leading=True)
    return {
        key: [x for x in parsed[key] if not x.startswith(_TRANSIENT_PREFIXES)]
        for key in _KEPT_SECTIONS
    }


def _turn_prefix_sections(request: SummaryRequest) -> dict[str, list[str]]:
    from ..compaction import probes

    facts = probes.analyze_history(request.messages)
    sec: dict[str, list[str]] = {k: [] for k in _ORDER}
    sec[GOAL] = [r for _i, r in facts.requests][:1]
    changed = [f"{verb} `{path}`" for path, verb, _c in facts.edits][-4:]
    sec[DONE] = _merge(changed, facts.decisions[-3:], [e.describe() for e in facts.unresolved][-probes.MAX_ERRORS :])
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
    kind: str, key: str, items: list[str], omitted: int, cap: int, keep: frozenset[str] = frozenset()
) -> list[str]:
    if not items:
        return ["- (none)"] if key in (CONSTRAINTS, CRITICAL, BLOCKED) else ["- (none found)"]
    lines = []
    for n, item in enumerate(items, 1):
        limit = min(cap, _FIRST_GOAL_CHARS if key == GOAL and n == 1 else _ITEM_CHARS[key])
        if kind == "turn_prefix":
            limit = min(cap, 400 if key == GOAL else 200)
        bare = _MARKER_RE.sub("", item) or item
        text = bare if _key(item) in keep else clip_line(bare, limit)
        if key == DONE and kind != "turn_prefix":
            lines.append(f"- [x] {text}")
        elif key == IN_PROGRESS:
            lines.append(f"- [ ] {text}")
        elif key == NEXT:
            lines.append(f"{n}. {text}")
        else:
            lines.append(f"- {text}")
    if omitted:
        marker = f"- ({omitted} earlier items omitted to fit the size limit)"
        lines.insert(1 if key in _KEEP_FIRST else 0, marker)
    return lines


def _render(
    kind: str, sec: dict[str, list[str]], omitted: dict[str, int], cap: int, keep: frozenset[str] = frozenset()
) -> str:
    def block(key: str) -> list[str]:
        return _render_items(kind, key, sec[key], omitted.get(key, 0), cap, keep)

    out = [EXTRACTIVE_NOTE, ""]
    if kind == "turn_prefix":
        out += ["## Original Request", *block(GOAL), ""]
        out += ["## Progress So Far", *block(DONE), ""]
        out += ["## Context Needed to Continue", *block(CRITICAL)]
        return "\n".join(out)
    out += ["## Goal", *block(GOAL), ""]
    out += ["## Constraints & Preferences", *block(CONSTRAINTS), ""]
    out += ["## Progress", "### Done", *block(DONE), ""]
    out += ["### In Progress", *block(IN_PROGRESS), ""]
    out += ["### Blocked", *block(BLOCKED), ""]
    out += ["## Key Decisions", *block(DECISIONS), ""]
    out += ["## Next Steps", *block(NEXT)]
    if kind != "branch":
        out += ["", "## Critical Context", *block(CRITICAL)]
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
        (about ``min(max_tokens, 1850)`` tokens; 600 for a turn prefix) —
        except that an uncapped update keeps every item of the previous
        summary whole (module docs), which may make it longer.
    """
    budget = summary_budget(request)
    sec = _turn_prefix_sections(request) if request.kind == "turn_prefix" else _sections_for(request)
    keep = frozenset(_key(x) for items in _kept_previous_items(request).values() for x in items)
    omitted: dict[str, int] = {}
    cap = 600
    text = _render(request.kind, sec, omitted, cap, keep)

    def victim_index(key: str, floor: int) -> int | None:
        """The item of ``key`` to drop next (never a kept one), or None."""
        order = range(1, len(sec[key])) if key in _KEEP_FIRST else range(len(sec[key]))
        free = [i for i in order if _key(sec[key][i]) not in keep]
        return free[0] if len(sec[key]) > floor and free else None

    # 1) drop the least important items, down to each section's first/latest two,
    # 2) shorten items, 3) drop down to one item, 4) cut
    for floor in (2, 1):
        while js_len(text) > budget:
            found = next(((k, i) for k in _DROP_ORDER if (i := victim_index(k, floor)) is not None), None)
            if found is None:
                break
            victim, index = found
            del sec[victim][index]
            omitted[victim] = omitted.get(victim, 0) + 1
            text = _render(request.kind, sec, omitted, cap, keep)
        while js_len(text) > budget and cap > 80:
            cap = max(80, cap * 2 // 3)
            text = _render(request.kind, sec, omitted, cap, keep)
    while js_len(text) > budget and cap > 20:
        cap = max(20, cap // 2)
        text = _render(request.kind, sec, omitted, cap, keep)
    return text if keep else _cut(text, budget)


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
