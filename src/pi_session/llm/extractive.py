"""``ExtractiveSummarizer``: an offline, deterministic summarizer that needs no
model (SPEC 12, **beyond pi**).

It fills the structured summary format (the same section headings the model
prompts ask for) with excerpts picked from the messages by simple rules:

- ``## Goal``: the user's substantive requests (first line of each).
- ``## Constraints & Preferences``: user sentences with words such as
  *must*, *never*, *always*, *prefer*, *avoid*, *don't*.
- ``### Done``: successful file writes/edits and commands; ``### In
  Progress``: an unanswered request or unfinished tool work at the end;
  ``### Blocked``: failed tool calls not later repeated successfully and
  assistant turns that ended in an error.
- ``## Key Decisions``: assistant sentences such as "I'll use ...",
  "instead of ...", "decided ...".
- ``## Next Steps``: list items and forward-looking sentences of the last
  assistant reply.
- Failing tool results (``isError``, or ``bash`` output that states a
  failure: a ``FAILED`` line, a Python traceback, ``SomeError: ...``) are
  quoted by the line that carries the error: the first ``FAILED`` line, else
  the exception line closing the last traceback, else the first line stating
  an error (see :func:`_error_line`), not simply the first output line.
- ``## Critical Context``: the last error text, the latest user message and
  the latest assistant reply (cut short), the requested focus.

With a previous summary (kind ``update``, or ``<summary>`` blocks inside the
messages) its items are kept and new ones added after them; an item that was
in progress and is now done moves to Done. A turn prefix gets ``## Original
Request``, ``## Progress So Far`` and ``## Context Needed to Continue`` (pi
1.6's turn-prefix headings); a branch
summary has no Critical Context section. The output starts with a note that it
is extractive, and fits ``max_tokens`` at about 4 characters per token
(items are cut, then the least important dropped with an "omitted" marker);
without a budget (pi 1.6 sends none) the previous summary's items are never
cut or dropped.
Same input, same output: no clock, no randomness.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .base import SummaryRequest

EXTRACTIVE_NOTE = (
    "_Extractive summary: put together offline from excerpts of the conversation "
    "by fixed rules, without a language model._"
)
"""First line of every extractive summary."""

CHARS_PER_TOKEN = 4
"""Characters per token assumed for the ``max_tokens`` budget."""

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
_DROP_ORDER = [CRITICAL, DECISIONS, DONE, CONSTRAINTS, NEXT, BLOCKED, GOAL, IN_PROGRESS]

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

_READ_ONLY_TOOLS = {"read", "ls", "grep", "find", "glob", "search"}
_ACK_RE = re.compile(r"^(ok(ay)?|yes|no|y|n|thanks?( you)?|go( on| ahead)?|continue|sure|great|good|nice|cool|done)[.!]*$", re.I)
_CONSTRAINT_RE = re.compile(
    r"\b(must|mustn't|must not|should|shouldn't|should not|don't|do not|never|always|prefer|avoid|only"
    r"|make sure|require[sd]?|keep it|no more than|at most|at least)\b",
    re.I,
)
_DECISION_RE = re.compile(
    r"\b(decided|decide to|chose|choose to|going with|go with|instead of|rather than|i'll use|i will use"
    r"|we'll use|we will use|let's use|opted|switch(ed)? to|the approach|the plan is)\b",
    re.I,
)
_NEXT_RE = re.compile(r"\b(next|then|todo|to do|remaining|still need|i'll|i will|we'll|we should|need to|will now)\b", re.I)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?(.+)$")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])|\n+")
_SUMMARY_BLOCK_RE = re.compile(r"<summary>\s*(.*?)\s*</summary>", re.S)
_FILE_BLOCK_RE = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.S)
_TRANSIENT_PREFIXES = (
    "Unanswered request:",
    "Waiting on tool calls:",
    "Tool work was still going on",
    "Last error:",
    "Latest user message:",
    "Latest assistant reply:",
    "Requested focus:",
)
_IMAGE_PATH_RE = re.compile(r"""^['"]?[/~].*\.(png|jpe?g|gif|webp|bmp)['"]?$""", re.I)


def _bash_prefix() -> str:
    """How a user's shell command starts when turned into a user message by
    :func:`pi_session.context.bash_execution_to_text` (derived from it, so
    the wording lives in one place)."""
    try:
        from ..context import bash_execution_to_text

        return bash_execution_to_text({"command": "\x00"}).split("\x00", 1)[0]
    except Exception:  # pragma: no cover - context module unavailable
        return "\x00never"


_BASH_PREFIX = _bash_prefix()
_MARKER_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?")


# --------------------------------------------------------------------------- text helpers


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (``...`` when cut)."""
    text = " ".join(text.split())
    if limit <= 3:
        return text[: max(limit, 0)]
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _key(item: str) -> str:
    """Normalized form for de-duplication: no list markers, bold, case or spacing."""
    item = _MARKER_RE.sub("", item)
    item = item.replace("**", "").replace("`", "")
    return " ".join(item.lower().split()).rstrip(".")


def _content_text(content: Any) -> str:
    """Text of a message ``content`` (string or list of blocks; text blocks
    joined with newlines, others ignored)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def _prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return _FENCE_RE.sub(" ", text)


def _sentences(text: str) -> list[str]:
    """Sentences and lines of ``text`` (code fences removed, empty dropped)."""
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(_prose(text)) if s and s.strip()]


def _first_line(text: str) -> str:
    for line in _prose(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


_FAILED_LINE_RE = re.compile(r"^\s*FAILED\b")
_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):")
# a line that states an error, e.g. "ValueError: bad", "Error: not found",
# "error: could not compile", "src/a.c:3:1: error: ...", "npm ERR! ..."
_ERROR_STATEMENT_RE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception)|(?i:error|fatal))\s*:"  # ValueError: / Error: / error: / fatal:
    r"|^\s*(?:ERROR|FATAL)\b|^\s*npm ERR!"  # test runners, npm
    r"|^\S+:\d+(?::\d+)?:\s*(?:fatal )?error\b",  # compilers: file:line[:col]: error
)
_ERROR_WORD_RE = re.compile(r"\b(?:\w*Error|\w*Exception|error|failed|failure|fatal)\b", re.I)


def _traceback_exception_line(lines: list[str]) -> str:
    """The exception line ending the last Python traceback in ``lines``
    (the first unindented line after the last ``Traceback (most recent call
    last):``), or ``""``."""
    start = None
    for n, line in enumerate(lines):
        if _TRACEBACK_RE.match(line):
            start = n
    if start is None:
        return ""
    for line in lines[start + 1 :]:
        if line.strip() and not line[:1].isspace():
            return line.strip()
    return ""


def _error_line(text: str, *, strict: bool = False) -> str:
    """The line of tool output that carries the error, or ``""``.

    In order of preference: the first line starting with ``FAILED`` (test
    runners' summaries), the exception line of the last Python traceback,
    the first line stating an error (``SomeError: ...``, ``Error: ...``,
    ``error: ...``, ``file:line: error ...``). Unless ``strict``, then the
    first line mentioning an error at all, and finally the first non-empty
    line. ``strict`` (for output of a command that did not report failure)
    returns ``""`` when no line clearly states an error."""
    lines = text.splitlines()
    for line in lines:
        if _FAILED_LINE_RE.match(line):
            return line.strip()
    found = _traceback_exception_line(lines)
    if found:
        return found
    for line in lines:
        if _ERROR_STATEMENT_RE.match(line):
            return line.strip()
    if strict:
        return ""
    for line in lines:
        if _ERROR_WORD_RE.search(line):
            return line.strip()
    return next((line.strip() for line in lines if line.strip()), "")


def _arg_summary(name: str, args: Any) -> str:
    """Short description of a tool call's arguments: the path or command,
    else the first string argument, else compact JSON."""
    if not isinstance(args, Mapping):
        return ""
    for k in ("path", "file_path", "command", "cmd", "pattern", "query", "url"):
        v = args.get(k)
        if isinstance(v, str) and v:
            return v
    for v in args.values():
        if isinstance(v, str) and v:
            return v
    try:
        return json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return ""


def _call_label(name: str, args: Any) -> str:
    arg = _clip(_arg_summary(name, args), 120)
    verb = {"write": "Wrote", "edit": "Edited", "bash": "Ran"}.get(name)
    if verb:
        return f"{verb} `{arg}`" if arg else verb
    return f"Used `{name}`" + (f" on `{arg}`" if arg else "")


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
    separators, bold-only labels and ``(none)`` placeholders are skipped.
    Pure function.
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
        if item == EXTRACTIVE_NOTE:
            continue
        out[current].append(item)
    return out


# --------------------------------------------------------------------------- extraction


@dataclass
class _Facts:
    """What the rules found in the messages (all lists oldest first)."""

    requests: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    embedded: list[dict[str, list[str]]] = field(default_factory=list)
    first_request_full: str = ""


def _extract(messages: Sequence[Mapping[str, Any]]) -> _Facts:
    f = _Facts()
    calls: dict[str, tuple[str, Any]] = {}
    results: dict[str, bool] = {}  # toolCallId -> is_error
    errors: list[tuple[int, str, str, str]] = []  # (index, tool, signature, text)
    successes: list[tuple[int, str]] = []  # (index, signature)
    last_user = ""
    last_assistant_text = ""
    last_error_text = ""
    pending_calls: list[str] = []
    last_role = ""

    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "user":
            text = _content_text(msg.get("content"))
            blocks = _SUMMARY_BLOCK_RE.findall(text)
            if blocks:  # an earlier summary carried in the conversation
                for b in blocks:
                    f.embedded.append(parse_summary_sections(b))
                continue
            last_role = "user"
            if _BASH_PREFIX and text.startswith(_BASH_PREFIX):  # a shell command the user ran
                cmd = text[len(_BASH_PREFIX) :].split("\n", 1)[0].rstrip("`")
                f.done.append(f"User ran `{_clip(cmd, 120)}`")
                failure = _error_line(text.split("\n", 1)[1] if "\n" in text else "", strict=True)
                if failure:
                    last_error_text = _clip(failure, 200)
                continue
            line = _MARKER_RE.sub("", _first_line(text)).strip()
            if not line:
                continue
            last_user = text
            if not _ACK_RE.match(line) and len(line.split()) >= 2 and not _IMAGE_PATH_RE.match(line):
                f.requests.append(line)
                if not f.first_request_full:
                    f.first_request_full = _prose(text).strip()
            for s in _sentences(text):
                s = _MARKER_RE.sub("", s).strip()
                if s and _CONSTRAINT_RE.search(s):
                    f.constraints.append(s)
        elif role == "assistant":
            last_role = "assistant"
            content = msg.get("content") or []
            text = _content_text(content)
            if text.strip():
                last_assistant_text = text
                for s in _sentences(text):
                    if _DECISION_RE.search(s):
                        f.decisions.append(s)
            pending_calls = []
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, Mapping) and b.get("type") == "toolCall":
                        cid = str(b.get("id", ""))
                        calls[cid] = (str(b.get("name", "")), b.get("arguments"))
                        pending_calls.append(cid)
            if msg.get("stopReason") == "error":
                err = _clip(str(msg.get("errorMessage") or "unknown error"), 200)
                f.blocked.append(f"Assistant turn failed: {err}")
                last_error_text = err
        elif role == "toolResult":
            last_role = "toolResult"
            cid = str(msg.get("toolCallId", ""))
            name, args = calls.get(cid, (str(msg.get("toolName", "")), None))
            sig = name + " " + _arg_summary(name, args)
            is_error = bool(msg.get("isError"))
            results[cid] = is_error
            if cid in pending_calls:
                pending_calls.remove(cid)
            text = _content_text(msg.get("content"))
            # a shell command can print a failure and still exit 0 (e.g. `pytest || true`)
            failure = _error_line(text, strict=True) if not is_error and name == "bash" else ""
            if is_error or failure:
                line = _clip(failure or _error_line(text) or "error", 200)
                errors.append((i, name, sig, line))
                last_error_text = line
            else:
                successes.append((i, sig))
                if name not in _READ_ONLY_TOOLS:
                    f.done.append(_call_label(name, args))

    # failures not later repeated successfully
    for idx, name, sig, text in errors:
        if not any(j > idx and s == sig for j, s in successes):
            f.blocked.append(f"`{name}` failed ({_clip(sig.split(' ', 1)[1] if ' ' in sig else '', 80)}): {text}")

    # where the conversation stopped
    if last_role == "user" and last_user.strip():
        f.in_progress.append(f"Unanswered request: {_first_line(last_user)}")
    elif pending_calls:
        labels = [_call_label(*calls[c]) for c in pending_calls if c in calls]
        f.in_progress.append("Waiting on tool calls: " + "; ".join(labels))
    elif last_role == "toolResult":
        f.in_progress.append("Tool work was still going on when the conversation was cut")

    # next steps from the last assistant reply
    if last_assistant_text:
        listed = [m.group(1).strip() for line in _prose(last_assistant_text).splitlines() if (m := _LIST_ITEM_RE.match(line))]
        forward = [s for s in _sentences(last_assistant_text) if _NEXT_RE.search(s) and not _LIST_ITEM_RE.match(s)]
        f.next_steps.extend(listed if listed else forward)

    if last_error_text:
        f.critical.append(f"Last error: {last_error_text}")
    if last_user.strip():
        f.critical.append(f"Latest user message: {_clip(_prose(last_user), 400)}")
    if last_assistant_text.strip():
        f.critical.append(f"Latest assistant reply: {_clip(_prose(last_assistant_text), 400)}")
    return f


# --------------------------------------------------------------------------- merging and rendering


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


def _sections_for(request: SummaryRequest) -> dict[str, list[str]]:
    f = _extract(request.messages)
    prev: dict[str, list[str]] = {k: [] for k in _ORDER}
    sources = list(f.embedded)
    if request.previous_summary:
        sources.append(parse_summary_sections(request.previous_summary, keep_leading=True))
    for src in sources:
        for k in _ORDER:
            prev[k] = _merge(prev[k], src.get(k, []))
    if request.messages:  # state lines of an earlier extractive summary are superseded
        for k in _ORDER:
            prev[k] = [x for x in prev[k] if not x.startswith(_TRANSIENT_PREFIXES)]
    focus = [f"Requested focus: {_clip(request.custom_instructions, 300)}"] if request.custom_instructions else []
    sec = {
        GOAL: _merge(prev[GOAL], f.requests),
        CONSTRAINTS: _merge(prev[CONSTRAINTS], f.constraints),
        DONE: _merge(prev[DONE], f.done),
        IN_PROGRESS: _merge(prev[IN_PROGRESS], f.in_progress),
        BLOCKED: _merge(prev[BLOCKED], f.blocked),
        DECISIONS: _merge(prev[DECISIONS], f.decisions),
        NEXT: _merge(prev[NEXT], f.next_steps),
        CRITICAL: _merge(focus, prev[CRITICAL], f.critical),
    }
    done_keys = {_key(d) for d in sec[DONE]}
    sec[IN_PROGRESS] = [x for x in sec[IN_PROGRESS] if _key(x) not in done_keys]
    return sec


def _render_items(kind: str, key: str, items: list[str], omitted: int, cap: int, keep: set[str] = frozenset()) -> list[str]:
    if not items:
        return ["- (none)"] if key in (CONSTRAINTS, CRITICAL, BLOCKED) else ["- (none found)"]
    lines = []
    for n, item in enumerate(items, 1):
        text = item if _key(item) in keep else _clip(item, cap)
        if key == DONE and kind != "turn_prefix":
            lines.append(f"- [x] {text}")
        elif key == IN_PROGRESS:
            lines.append(f"- [ ] {text}")
        elif key == NEXT:
            lines.append(f"{n}. {text}")
        else:
            lines.append(f"- {text}")
    if omitted:
        lines.insert(1, f"- ({omitted} more omitted to fit the size limit)")
    return lines


def _render(kind: str, sec: dict[str, list[str]], omitted: dict[str, int], cap: int, keep: set[str] = frozenset()) -> str:
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


def _turn_prefix_sections(request: SummaryRequest) -> dict[str, list[str]]:
    f = _extract(request.messages)
    sec = {k: [] for k in _ORDER}
    sec[GOAL] = [f.first_request_full] if f.first_request_full else f.requests[:1]
    sec[DONE] = _merge(f.done, f.decisions, f.blocked)
    sec[CRITICAL] = _merge(f.in_progress, f.critical)
    return sec


DEFAULT_MAX_TOKENS = 12000
"""Size budget (tokens) of a summary whose request sets no ``max_tokens``
(compaction and branch summaries send none since pi 1.6)."""


def _protected(request: SummaryRequest) -> set[str]:
    """Keys of the previous summary's items, which an uncapped request never
    drops or shortens (no fact of an earlier summary is lost)."""
    if request.max_tokens is not None or not request.previous_summary:
        return set()
    parsed = parse_summary_sections(request.previous_summary, keep_leading=True)
    return {_key(item) for items in parsed.values() for item in items}


def extractive_summary(request: SummaryRequest) -> str:
    """The extractive summary of ``request`` (see module docs). Pure and
    deterministic.

    Args:
        request: uses ``kind``, ``messages`` (LLM messages: ``user``,
            ``assistant``, ``toolResult``), ``previous_summary``,
            ``custom_instructions`` and ``max_tokens``; ignores the prompts.

    Returns:
        Markdown text. With a ``max_tokens`` budget, at most ``max_tokens *
        4`` characters. Without one (``None``), new items are fitted into
        :data:`DEFAULT_MAX_TOKENS` but every item of the previous summary is
        kept whole (beyond pi: merging never loses an earlier fact), so the
        text may be longer.
    """
    explicit = request.max_tokens is not None
    budget = max(0, int(request.max_tokens if explicit else DEFAULT_MAX_TOKENS)) * CHARS_PER_TOKEN
    keep = _protected(request)
    sec = _turn_prefix_sections(request) if request.kind == "turn_prefix" else _sections_for(request)
    omitted: dict[str, int] = {}
    cap = 600 if request.kind == "turn_prefix" else 300
    text = _render(request.kind, sec, omitted, cap, keep)
    # 1) shorten long items, 2) drop items (keeping each section's first), 3) cut
    while len(text) > budget and cap > 80:
        cap = max(80, cap * 2 // 3)
        text = _render(request.kind, sec, omitted, cap, keep)

    def droppable(key: str, first: int) -> int | None:
        return next((i for i in range(first, len(sec[key])) if _key(sec[key][i]) not in keep), None)

    for first in (2, 1):  # first keep each section's oldest and newest item, then only the oldest
        while len(text) > budget:
            victim = next(
                (k for k in _DROP_ORDER if len(sec[k]) > first and droppable(k, 1) is not None), None
            )
            if victim is None:
                break
            excess = len(text) - budget
            removed = 0
            while len(sec[victim]) > first and removed < excess:
                i = droppable(victim, 1)
                if i is None:
                    break
                removed += min(len(sec[victim][i]), cap) + 8
                del sec[victim][i]
                omitted[victim] = omitted.get(victim, 0) + 1
            text = _render(request.kind, sec, omitted, cap, keep)
    while len(text) > budget and cap > 20:
        cap = max(20, cap // 2)
        text = _render(request.kind, sec, omitted, cap, keep)
    if len(text) > budget and not keep:
        text = text[: max(0, budget - 3)].rstrip() + "..." if budget >= 3 else text[:budget]
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
