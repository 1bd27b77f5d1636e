"""The facts of a history: what the offline extractive summarizer writes
down and what the compaction probes ask about (**beyond pi**).

One set of mechanical rules, applied by :func:`analyze_history` to the LLM
messages a compaction summarizes (plus the previous summary, if any):

- *requests*: user messages that are not acknowledgements ("ok",
  "thanks"), single words, pasted image paths, shell commands the user ran,
  or earlier summaries (:func:`user_request_text`); their prose (code blocks
  removed, whitespace collapsed).
- *goals*: the requests that can stand as a goal (:func:`goal_text`): a
  message that is mostly pasted program output (a traceback, a test run)
  counts only by the lines the user wrote around it, and not at all when
  those say next to nothing ("I get this:").
- *constraints and preferences*: user sentences (prose, not questions, 3 to
  60 words) that are imperatives with *must*, *never*, *always*, *don't* /
  *do not*, *only* or *prefer*, in any case: *must* or *prefer* anywhere in
  the sentence; *never*, *always*, *don't*, *do not*, *only*, *avoid*,
  *stop* at the start of a clause (after fillers such as "please", "ok,",
  "and") or after "please" or "should"; *make sure* anywhere; a rule said
  of a thing ("setTheme should return an error", not "we should", "i think
  it should" or "where it should go"); a short prohibition with "!" ("no
  console logs!") (:func:`is_constraint`). Duplicates (sharing
  80% of their key tokens, :func:`pi_session.compaction.keywords.key_tokens`)
  are dropped, the later one kept; the previous summary's constraints come
  first.
- *unresolved errors*: a tool call that failed (``isError``, or ``bash``
  output stating a failure such as a ``FAILED`` test line or a traceback), a
  shell command the user ran that exited non-zero, or an assistant turn that
  ended in an error, with no later success on the same *target*: the path
  for file tools (``edit`` and ``write`` count as one); for commands, the
  last command of a ``&&`` chain without ``cd``, pipes and redirections,
  whose first three non-option words must equal or extend those of the later
  success (``pytest`` passing resolves ``pytest tests/a.py`` failing, not
  the reverse; :func:`command_key`); for a command, also a later assistant
  reply stating that what it ran passes (a sentence with pass, green,
  succeeded, fixed or works, without failure, negation or expectation
  words, naming a path the command was given, or the tests of a test run:
  "src/tax.py now rounds once; its tests pass" after ``pytest
  tests/test_tax.py`` failed; :func:`reports_passing`), so that a summary
  never lists as blocked what it quotes as passing; for an assistant
  error, any later assistant turn that did not fail. Failed look-ups (the ``read``, ``grep``,
  ``find``, ``ls`` tools, and commands such as ``grep``, ``cat``, ``ls``,
  ``find``, ``head`` that exit 1 when nothing matches,
  :func:`is_lookup_command`) and aborted commands (also when "Command
  aborted" ends the output) are not errors. Each is quoted by the line of
  output that states the error (:func:`.failures.error_line`); lines that state
  nothing, such as "Debugger attached." or a runtime warning, never are.
- *decisions*: assistant sentences stating a choice ("I'll use ...",
  "let's go with ...", "we decided ...", "switching to ...", "... instead of
  ..." said in the first person; :func:`is_decision`), distinct. Narration
  of the next action ("Let me ...", a sentence ending with ``:`` before a
  tool call) is not a decision.
- *the next step*: when the latest request has an assistant reply after it,
  the plan in the last assistant text (the first item of a numbered list
  ending it, else its last forward-looking sentence: "next", "then", "let
  me", "I'll", "going to" ..., with at least 3 key tokens; see
  :func:`plan_steps`); otherwise (or when there is no plan) the latest
  request, pending or in progress, by what of it can stand as a goal
  (:func:`goal_text`: the lines the user wrote around a pasted terminal
  screen or traceback; none when those say next to nothing).
- *work done*: files changed by successful ``edit``/``write`` calls and
  ``bash`` commands that succeeded; tool calls still without a result. A
  branch summary's input has no tool results (pi leaves them out): there
  every tool call counts as done (``tool_results=False``).

How many of each the summaries hold and the probes ask about is a limit of
the summary format (:mod:`pi_session.compaction.summary_format`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session.context import bash_execution_to_text
from ..entries.questions import ASSISTANT, TOOL_RESULT, USER
from .failures import (
    LOOKUP_TOOLS,
    ErrorFact,
    command_key,
    command_subjects,
    error_line,
    is_aborted_output,
    is_lookup_command,
    is_noise_line,
    reports_passing,
)
from .keywords import (
    clip,
    collapse,
    content_text,
    is_pasted_output,
    is_prose_line,
    key_tokens,
    normalize,
    prose,
    sentences,
    written_prose,
)
from .summary_format import BLOCKED, CONSTRAINTS, DECISIONS, parse_summary_sections, section

__all__ = [
    "MAX_CONSTRAINTS",
    "MAX_ERRORS",
    "MAX_DECISIONS",
    "BASH_PREFIX",
    "HistoryFacts",
    "ErrorFact",
    "analyze_history",
    "summary_blocks",
    "is_constraint",
    "is_decision",
    "plan_steps",
    "user_request_text",
    "goal_text",
    "reports_passing",
    "is_lookup_command",
    "command_key",
    "error_line",
    "is_noise_line",
]

MAX_CONSTRAINTS: int = section(CONSTRAINTS).max_items or 0
"""Most constraints kept (the latest ones): the summary format's limit."""
MAX_ERRORS: int = section(BLOCKED).max_items or 0
"""Most unresolved errors kept (the latest ones): the summary format's limit."""
MAX_DECISIONS: int = section(DECISIONS).max_items or 0
"""Most decisions kept (the latest ones): the summary format's limit."""

_SUMMARY_BLOCK_RE = re.compile(r"<summary>\s*(.*?)\s*</summary>", re.S)
_ACK_RE = re.compile(
    r"^(ok(ay)?|yes|yep|no|nope|y|n|thanks?( you)?|thx|go( on| ahead)?|continue|sure|great|good|nice|cool|done|perfect)[.!]*$",
    re.I,
)
_IMAGE_PATH_RE = re.compile(r"""^['"]?[/~].*\.(png|jpe?g|gif|webp|bmp)['"]?$""", re.I)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?(.+)$")


def summary_blocks(text: str) -> list[str]:
    """The bodies of the ``<summary>`` blocks in ``text`` (earlier branch or
    compaction summaries carried in a user message), stripped."""
    return _SUMMARY_BLOCK_RE.findall(text)


def _bash_prefix() -> str:
    return bash_execution_to_text({"command": "\x00"}).split("\x00", 1)[0]


BASH_PREFIX = _bash_prefix()
"""How a shell command the user ran starts once it is a user message."""


# --------------------------------------------------------------------------- rules: user requests and constraints

_LEAD = r"(?:(?:please|and|but|also|so|then|just|ok|okay|oh|yes|no|again|remember|note|btw|and also)[,:]?\s+)*"
_CLAUSE_START_RE = re.compile(
    r"^" + _LEAD + r"(?:never|always|do not|only|must|prefer|make sure|avoid|stop)\b", re.I
)
_ANYWHERE_RE = re.compile(
    r"\b(?:must|prefer|preferably|make sure)\b"
    r"|\bplease\s+(?:never|always|do not|only|make sure)\b"
    r"|\bshould\s+(?:never|always|only)\b"
    r"|\b(?:i|we)\s+(?:would\s+)?(?:always|only)\s+want\b",
    re.I,
)
_CLAUSE_SPLIT_RE = re.compile(r"\s*(?:[,;]|\s-\s|\s—\s)\s*")
# "setTheme should return an error", "the block should stay as is": a rule
# about the work, said of a thing (not "we should be good", not "where
# those modules should go", not after "i think")
_SHOULD_RE = re.compile(r"^(?:the |a |an |this |that |these |those |every |each |all )?(?:[\w.'/-]+ ){0,5}?should\b", re.I)
_SHOULD_SUBJECT_STOP = frozenset(
    "i we you it they he she there where which what how when why if whether who that think guess maybe probably "
    "perhaps then".split()
)
# "no console logs!", "no rgb indices!": a short prohibition with "!"
_NO_BANG_RE = re.compile(
    r"^no\s+(?!(?:worries|problem|problems|idea|clue|way|need|rush|thanks|doubt|kidding|luck)\b)[\w.'-]+(?:\s+[\w.'-]+){0,3}\s*!+$",
    re.I,
)


def _should_rule(clause: str) -> bool:
    m = _SHOULD_RE.match(clause)
    if not m:
        return False
    subject = clause[: m.end()].split()[:-1]
    return bool(subject) and not any(w.lower().strip(",.") in _SHOULD_SUBJECT_STOP for w in subject)


def is_constraint(sentence: str) -> bool:
    """True when a user sentence is a constraint or preference (see module
    docs): an imperative with must / never / always / don't / only / prefer /
    make sure / avoid, in any case; a rule said of a thing ("setTheme should
    return an error"); a short prohibition ("no console logs!"). Questions
    and non-prose lines are not."""
    s = collapse(sentence)
    words = s.split()
    if s.endswith("!") and _NO_BANG_RE.match(_CLAUSE_SPLIT_RE.split(s)[-1]):
        return True
    if not 3 <= len(words) <= 60 or s.endswith("?") or not is_prose_line(s):
        return False
    if _ANYWHERE_RE.search(normalize(s)):
        return True
    clauses = [normalize(clause) for clause in _CLAUSE_SPLIT_RE.split(s)]
    return any(_CLAUSE_START_RE.match(c) or _should_rule(re.sub("^" + _LEAD, "", c)) for c in clauses)


def user_request_text(message: Mapping[str, Any]) -> str | None:
    """The prose of a user message when it is a *request* (see module docs),
    else None: acknowledgements, one-word messages, pasted image paths,
    shell commands the user ran and summaries are not requests."""
    if message.get("role") != USER:
        return None
    text = content_text(message.get("content"))
    if _SUMMARY_BLOCK_RE.search(text) or (BASH_PREFIX and text.startswith(BASH_PREFIX)):
        return None
    body = collapse(prose(text))
    if not body or _ACK_RE.match(body) or len(body.split()) < 2 or _IMAGE_PATH_RE.match(body):
        return None
    return body


def goal_text(message: Mapping[str, Any]) -> str | None:
    """What of a user request can stand as a goal (see module docs), or
    None: the request itself (:func:`user_request_text`), except that a
    message that is mostly pasted program output (a traceback, a failing
    test run, compiler errors; :func:`pi_session.compaction.keywords.is_pasted_output`)
    gives only the lines a person wrote around the paste, and is no goal
    when those hold fewer than 3 key tokens ("I get this:")."""
    request = user_request_text(message)
    if request is None:
        return None
    text = content_text(message.get("content"))
    if not is_pasted_output(text):
        return request
    written = written_prose(text)
    return written if len(key_tokens(written, None)) >= 3 else None


# --------------------------------------------------------------------------- rules: decisions and plans

_DECISION_RE = re.compile(
    r"\b(?:i|we)\s+(?:will|am going to|are going to|would)\s+(?:use|go with|switch to|stick with|keep|opt for|rely on|instead)\b"
    r"|\blet us\s+(?:use|go with|switch to|stick with|keep)\b"
    r"|\b(?:i|we)\s+(?:have\s+)?(?:decided|chose|opted|picked|settled on)\b"
    r"|\bdecided to\b|\bgoing with\b|\b(?:decision|approach|the plan)\s*(?:is|:)"
    r"|\bswitch(?:ed|ing)? to\b",
    re.I,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:i will|we will|let us|i am going to|we are going to)\b", re.I)
_NARRATION_RE = re.compile(r"^(?:\w+\s+){0,2}?(?:let me|i will now|i am going to now|now i will|first,? let me)\b", re.I)
_INSTEAD_RE = re.compile(r"\b(?:instead of|rather than)\b", re.I)
_FORWARD_RE = re.compile(
    r"\b(?:next|then|let me|let us|i will|we will|going to|now i|todo|to do|still need|remaining|plan)\b", re.I
)


_NUMBERED_RE = re.compile(r"^\s*\d+[.)]\s+(?:\[[ xX]\]\s*)?(.+)$")


def plan_steps(text: str) -> list[str]:
    """The plan in an assistant reply: the items of a numbered list that ends
    it, else its last forward-looking sentence ("next", "then", "let me",
    "I'll", "going to" ...; at least 3 key tokens, not a question), else
    nothing. Items are cut to 300 characters."""
    lines = [line for line in prose(text).splitlines() if line.strip()]
    tail: list[str] = []
    for line in reversed(lines):
        m = _NUMBERED_RE.match(line)
        if not m:
            break
        tail.append(clip(m.group(1), 300))
    if tail:
        return tail[::-1]
    forward = [
        clip(_LIST_ITEM_RE.sub(r"\1", s), 300)
        for s in sentences(text)
        if _FORWARD_RE.search(normalize(s)) and len(key_tokens(s)) >= 3 and not s.endswith("?")
    ]
    return forward[-1:]


def is_decision(sentence: str) -> bool:
    """True when an assistant sentence states a choice (see module docs).

    Narration of the next action is not a decision: a sentence that starts
    "Let me ..." / "Now let me ..." or introduces a tool call (ends with
    ``:``), even when it says "instead of"."""
    s = collapse(sentence)
    if not 4 <= len(s.split()) <= 50 or s.endswith(("?", ":")):
        return False
    text = normalize(s)
    if _NARRATION_RE.match(text):
        return False
    return bool(_DECISION_RE.search(text) or (_INSTEAD_RE.search(text) and _FIRST_PERSON_RE.search(text)))


# --------------------------------------------------------------------------- the facts of a history


@dataclass
class HistoryFacts:
    """What the rules find in a history (lists oldest first).

    Attributes:
        requests: ``(index, text)`` of each user request (prose, whitespace
            collapsed).
        goals: ``(index, text)`` of the requests that can stand as a goal
            (:func:`goal_text`: pasted program output is not one).
        constraints: constraint sentences, distinct by key tokens.
        errors: every failure, with ``resolved`` set.
        decisions: decision sentences, distinct by key tokens.
        edits: ``(path, verb, count)`` of successful ``edit``/``write`` calls
            by path (verb ``Edited`` or ``Wrote``, last one wins).
        commands: successful ``bash`` commands, distinct, in order of last run.
        pending_calls: labels of tool calls with no result at the end.
        last_role: role of the last message (``""`` when empty).
        last_assistant_text: text of the last assistant message that had text.
        plan: the next step (see module docs) or ``""``.
        plan_steps: the steps of the last assistant plan (:func:`plan_steps`),
            empty when the next step is the pending request.
        pending_request: True when the latest request has no assistant text
            after it.
        previous: sections of the previous summary (see
            :func:`pi_session.compaction.summary_format.parse_summary_sections`), or
            empty.
    """

    requests: list[tuple[int, str]] = field(default_factory=list)
    goals: list[tuple[int, str]] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    edits: list[tuple[str, str, int]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    pending_calls: list[str] = field(default_factory=list)
    last_role: str = ""
    last_assistant_text: str = ""
    plan: str = ""
    plan_steps: list[str] = field(default_factory=list)
    pending_request: bool = False
    previous: dict[str, list[str]] = field(default_factory=dict)

    @property
    def unresolved(self) -> list[ErrorFact]:
        """Errors with no later success, oldest first."""
        return [e for e in self.errors if not e.resolved]

    @property
    def first_request(self) -> str:
        """The first request that can stand as a goal (the previous
        summary's first goal if any), or ``""``."""
        prev_goal = self.previous.get("goal") or []
        if prev_goal:
            return prev_goal[0]
        return self.goals[0][1] if self.goals else ""

    @property
    def latest_request(self) -> str:
        """The latest request in the messages, or ``""``."""
        return self.requests[-1][1] if self.requests else ""


def _distinct_append(items: list[str], keys: list[frozenset[str]], item: str) -> None:
    """Append ``item``; an earlier item that shares 80% of the key tokens
    of the longer of the two is a duplicate and is dropped (the repeated
    item moves to the end)."""
    k = frozenset(key_tokens(item, None))
    if not k:
        return
    for n, other in enumerate(keys):
        if len(k & other) >= 0.8 * max(len(k), len(other)):
            del items[n], keys[n]
            break
    items.append(item)
    keys.append(k)


def _call_label(name: str, args: Any) -> str:
    target = _call_target(name, args)
    verb = {"write": "Wrote", "edit": "Edited", "bash": "Ran"}.get(name)
    if verb:
        return f"{verb} `{clip(target, 120)}`" if target else verb
    return f"Used `{name}`" + (f" on `{clip(target, 120)}`" if target else "")


def _call_target(name: str, args: Any) -> str:
    if not isinstance(args, Mapping):
        return ""
    for k in ("path", "file_path", "command", "cmd", "pattern", "query", "url"):
        v = args.get(k)
        if isinstance(v, str) and v:
            return v
    for v in args.values():
        if isinstance(v, str) and v:
            return v
    return ""


def _resolves(err: ErrorFact, tool: str, key: tuple[str, ...]) -> bool:
    """A later success of ``tool`` on ``key`` resolves ``err`` (module docs)."""
    if err.tool == ASSISTANT:
        return tool == ASSISTANT
    if err.tool in ("bash", "user shell"):
        return tool in ("bash", "user shell") and bool(key) and err.key[: len(key)] == key
    return key == err.key


def _record_success(edits: dict[str, tuple[str, int]], commands: dict[str, None], name: str, target: str) -> None:
    """Count a successful ``edit``/``write`` (by path) or ``bash`` command."""
    if name in ("edit", "write") and target:
        _verb, count = edits.pop(target, ("", 0))
        edits[target] = ("Wrote" if name == "write" else "Edited", count + 1)
    elif name == "bash" and target:
        commands.pop(target, None)
        commands[target] = None


def analyze_history(
    messages: Sequence[Mapping[str, Any]], previous_summary: str | None = None, *, tool_results: bool = True
) -> HistoryFacts:
    """Apply the rules of the module docs to LLM ``messages`` (``user``,
    ``assistant``, ``toolResult``; after ``convert_to_llm``). Pure and
    deterministic; never raises on malformed messages (they are skipped).

    Args:
        messages: the history, oldest first.
        previous_summary: the summary this history continues, if any; its
            constraints and decisions count before the messages' ones.
        tool_results: False when the history leaves tool results out by
            design (a branch summary's input, as pi prepares it): every
            tool call then counts as done work (files changed, commands
            run) instead of a call still waiting for its result.
    """
    f = HistoryFacts()
    if previous_summary:
        f.previous = parse_summary_sections(previous_summary)
    ckeys: list[frozenset[str]] = []
    dkeys: list[frozenset[str]] = []
    for item in f.previous.get("constraints", []):
        _distinct_append(f.constraints, ckeys, item)
    for item in f.previous.get("decisions", []):
        _distinct_append(f.decisions, dkeys, item)

    calls: dict[str, tuple[str, Any]] = {}
    successes: list[tuple[int, str, tuple[str, ...], str]] = []  # (index, tool, key, target)
    edits: dict[str, tuple[str, int]] = {}
    commands: dict[str, None] = {}
    last_request_index = -1
    last_text_index = -1
    claims: list[tuple[int, str]] = []  # (index, sentence) of assistant replies that did not fail

    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == USER:
            f.last_role = "user"
            text = content_text(msg.get("content"))
            if BASH_PREFIX and text.startswith(BASH_PREFIX):
                cmd = text[len(BASH_PREFIX) :].split("\n", 1)[0].rstrip("`")
                m = re.search(r"\n\nExit code: (\S+)\s*$", text)
                if m and m.group(1) != "0" and not is_lookup_command(cmd):
                    body = text.split("\n", 1)[1] if "\n" in text else ""
                    line = clip(error_line(body, strict=True) or f"exit code {m.group(1)}", 200)
                    f.errors.append(ErrorFact(i, "user shell", cmd, line, command_key(cmd)))
                elif not m:
                    successes.append((i, "user shell", command_key(cmd), cmd))
                continue
            for block in _SUMMARY_BLOCK_RE.findall(text):  # an earlier (branch) summary
                for item in parse_summary_sections(block).get("constraints", []):
                    _distinct_append(f.constraints, ckeys, item)
            request = user_request_text(msg)
            if request is None:
                continue
            f.requests.append((i, request))
            goal = goal_text(msg)
            if goal is not None:
                f.goals.append((i, goal))
            last_request_index = i
            for s in sentences(text):
                s = _LIST_ITEM_RE.sub(r"\1", s).strip()
                if is_constraint(s):
                    _distinct_append(f.constraints, ckeys, clip(s, 300))
        elif role == ASSISTANT:
            f.last_role = "assistant"
            content = msg.get("content")
            text = content_text(content)
            if text.strip():
                f.last_assistant_text = text
                last_text_index = i
                failed_turn = msg.get("stopReason") in ("error", "aborted")
                for s in sentences(text):
                    s = _LIST_ITEM_RE.sub(r"\1", s).strip()
                    if is_decision(s):
                        _distinct_append(f.decisions, dkeys, clip(s, 300))
                    if not failed_turn:
                        claims.append((i, s))
            f.pending_calls = []
            for b in content if isinstance(content, list) else ():
                if isinstance(b, Mapping) and b.get("type") == "toolCall":
                    cid = str(b.get("id", ""))
                    name, args = str(b.get("name", "")), b.get("arguments")
                    calls[cid] = (name, args)
                    if tool_results:
                        f.pending_calls.append(cid)
                    else:
                        _record_success(edits, commands, name, _call_target(name, args))
            stop = msg.get("stopReason")
            if stop == "error":
                err = clip(str(msg.get("errorMessage") or "unknown error"), 200)
                f.errors.append(ErrorFact(i, "assistant", "", err, ("<assistant>",)))
            elif stop != "aborted":
                successes.append((i, "assistant", ("<assistant>",), ""))
        elif role == TOOL_RESULT:
            f.last_role = "toolResult"
            cid = str(msg.get("toolCallId", ""))
            name, args = calls.get(cid, (str(msg.get("toolName", "")), None))
            if cid in f.pending_calls:
                f.pending_calls.remove(cid)
            target = _call_target(name, args)
            text = content_text(msg.get("content"))
            is_error = msg.get("isError") is True
            failure = error_line(text, strict=True) if not is_error and name == "bash" else ""
            key = command_key(target) if name == "bash" else ("file" if name in ("edit", "write") else name, target)
            if is_error or failure:
                lookup = name in LOOKUP_TOOLS or (name == "bash" and is_lookup_command(target))
                aborted = is_aborted_output(text) and not failure
                if not lookup and not aborted:
                    line = clip(failure or error_line(text) or "error", 200)
                    f.errors.append(ErrorFact(i, name or "tool", target, line, key))
            else:
                successes.append((i, name, key, target))
                _record_success(edits, commands, name, target)

    for fact in f.errors:
        fact.resolved = any(j > fact.index and _resolves(fact, tool, key) for j, tool, key, _t in successes)
        if not fact.resolved and fact.tool in ("bash", "user shell"):
            # a later reply saying it passes: the summary must not call it
            # blocked next to that reply
            subjects = command_subjects(fact.key)
            fact.resolved = bool(subjects) and any(
                j > fact.index and reports_passing(sentence, subjects) for j, sentence in claims
            )
    f.edits = [(p, v, c) for p, (v, c) in edits.items()]
    f.commands = list(commands)
    f.pending_calls = [_call_label(*calls[c]) for c in f.pending_calls if c in calls]

    # the step in progress at the cut
    f.pending_request = last_request_index >= 0 and last_text_index < last_request_index
    if not f.pending_request and f.last_assistant_text:
        f.plan_steps = plan_steps(f.last_assistant_text)
    if f.plan_steps:
        f.plan = f.plan_steps[0]
    elif f.requests:
        # what of the latest request can stand as a goal: a pasted terminal
        # screen or traceback is no step to take (goal_text)
        f.plan = next((g for i, g in f.goals if i == f.requests[-1][0]), "")
    return f
