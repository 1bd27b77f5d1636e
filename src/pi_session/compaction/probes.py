"""Probes: did a compaction keep what the next turn needs? (**beyond pi**)

Size (over 500 lines): every probe's rule sits next to its documentation; together they are the contract of ``eval-compaction``.

A compaction replaces old messages by a summary. Whether the summary is any
good is measured the way published evaluations of context compression do it:
ask questions whose answers are in the summarized history, and check that
the context after the compaction (the summary plus the kept messages) still
answers them. Here the questions ("probes") and the check are mechanical, so
every summarizer, with or without a model, is scored by the same rules.

**Which probes** (:func:`compute_probes`; all from the history a compaction
summarizes: the messages to summarize, then the turn prefix, as LLM messages,
plus the previous summary when there is one):

- ``first_request`` / ``latest_request``: the user's first and latest
  *requests*: user messages that are not acknowledgements ("ok", "thanks"),
  single words, pasted image paths, shell commands the user ran, or earlier
  summaries. The expected text is the message's prose (code blocks removed,
  whitespace collapsed) cut to 200 characters. With a previous summary the
  first request is the first item of its ``## Goal``.
- ``constraint``: the user's constraints and preferences: user sentences
  (prose, not questions, 3 to 60 words) that are imperatives with *must*,
  *never*, *always*, *don't* / *do not*, *only* or *prefer*, in any case:
  *must* or *prefer* anywhere in the sentence; *never*, *always*, *don't*,
  *do not*, *only*, *make sure* at the start of a clause (after fillers such
  as "please", "ok,", "and") or after "please" or "should" (see
  :func:`is_constraint`). Duplicates (sharing 80% of their key tokens, see
  below) are dropped, the later one kept; the previous summary's constraints
  come first; the last :data:`MAX_CONSTRAINTS` are kept.
- ``modified_files`` / ``read_files``: the compaction's file lists
  (:func:`pi_session.compaction.compute_file_lists`), exact paths.
- ``unresolved_error``: a tool call that failed (``isError``, or ``bash``
  output stating a failure such as a ``FAILED`` test line or a traceback), a
  shell command the user ran that exited non-zero, or an assistant turn that
  ended in an error, with no later success on the same *target*: the path
  for file tools (``edit`` and ``write`` count as one); for commands, the
  last command of a ``&&`` chain without ``cd``, pipes and redirections,
  whose first three non-option words must equal or extend those of the later
  success (``pytest`` passing resolves ``pytest tests/a.py`` failing, not
  the reverse); for an assistant error, any later assistant turn that did
  not fail. Failed look-ups (the ``read``, ``grep``, ``find``, ``ls`` tools,
  and commands such as ``grep``, ``cat``, ``ls``, ``find``, ``head`` that
  exit 1 when nothing matches) and aborted commands are not errors. The last
  :data:`MAX_ERRORS` are kept; the expected text is the target and the line
  of output that states the error (:func:`error_line`).
- ``decision``: assistant sentences stating a choice ("I'll use ...",
  "let's go with ...", "we decided ...", "switching to ...", "... instead of
  ..." said in the first person); the last :data:`MAX_DECISIONS` distinct.
- ``next_step``: the step in progress at the cut: when the latest request
  has an assistant reply after it, the plan in the last assistant text (the
  first item of a numbered list ending it, else its last forward-looking
  sentence: "next", "then", "let me", "I'll", "going to" ..., with at least 3
  key tokens; see :func:`plan_steps`); otherwise (or when there is no plan)
  the latest request, pending or in progress.

**When a probe counts as answered** (:func:`answer_probe`): text is
normalized (Unicode NFKC, lower case, contractions expanded, "never" read as
"not", markdown punctuation removed) and split into tokens; *key tokens*
are the tokens of 3+ characters (or holding a digit) that are not common
English words, lightly stemmed (``-ing``, ``-ed``, ``-es``, ``-s`` and a
final ``-e`` dropped), at most the first :data:`MAX_KEY_TOKENS`. A text probe
is answered by one *line* of the summary or of a kept message when that line
contains the normalized expected text (looked for whole only when it has
8+ characters or no key tokens), or at least :data:`KEY_TOKEN_THRESHOLD` of
its key tokens (all of them when it has 2 or fewer). A file-list probe is answered when every path occurs verbatim in the
summary or the kept messages. The summary is searched first; a probe answered
only by a kept message says so (``where="kept"``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import bash_execution_to_text, build_session_context, convert_to_llm, text_content
from ..jsonio import js_stringify
from ..records import AgentMessage
from ..text import clip_line
from ..tokens import estimate_tokens

__all__ = [
    "KEY_TOKEN_THRESHOLD",
    "MAX_CONSTRAINTS",
    "MAX_DECISIONS",
    "MAX_ERRORS",
    "MAX_KEY_TOKENS",
    "PROBE_KINDS",
    "HistoryFacts",
    "ErrorFact",
    "Probe",
    "ProbeResult",
    "CompactionEvaluation",
    "analyze_history",
    "compute_probes",
    "probes_for_preparation",
    "answer_probe",
    "answer_probes",
    "evaluate_compaction",
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

MAX_CONSTRAINTS = 8
"""Most constraints probed (the latest ones)."""
MAX_ERRORS = 5
"""Most unresolved errors probed (the latest ones)."""
MAX_DECISIONS = 5
"""Most decisions probed (the latest ones)."""
MAX_KEY_TOKENS = 12
"""Key tokens of a probe's expected text that are compared (the first ones)."""
KEY_TOKEN_THRESHOLD = 0.6
"""Share of a probe's key tokens one line must hold to answer it."""
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
)
"""Probe kinds, in report order."""

_QUESTIONS = {
    "first_request": "What did the user ask for first?",
    "latest_request": "What did the user ask for last?",
    "constraint": "What did the user require or forbid?",
    "modified_files": "Which files were modified?",
    "read_files": "Which files were read?",
    "unresolved_error": "What failed and is not fixed yet?",
    "decision": "What did the assistant decide?",
    "next_step": "What was the next step when the history was cut?",
}

# --------------------------------------------------------------------------- text helpers

_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_SUMMARY_BLOCK_RE = re.compile(r"<summary>\s*(.*?)\s*</summary>", re.S)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_ACK_RE = re.compile(
    r"^(ok(ay)?|yes|yep|no|nope|y|n|thanks?( you)?|thx|go( on| ahead)?|continue|sure|great|good|nice|cool|done|perfect)[.!]*$",
    re.I,
)
_IMAGE_PATH_RE = re.compile(r"""^['"]?[/~].*\.(png|jpe?g|gif|webp|bmp)['"]?$""", re.I)
_LIST_ITEM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(?:\[[ xX]\]\s*)?(.+)$")


def content_text(content: Any) -> str:
    """Text of a message ``content``, text blocks joined by newlines
    (:func:`pi_session.context.text_content`)."""
    return text_content(content, "\n")


def prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return _FENCE_RE.sub(" ", text)


def collapse(text: str) -> str:
    """Whitespace runs to one space, stripped."""
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (``...`` when cut;
    :func:`pi_session.text.clip_line`)."""
    return clip_line(text, limit)


def sentences(text: str) -> list[str]:
    """Sentences and lines of the prose of ``text`` (empty ones dropped)."""
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(prose(text)) if s and s.strip()]


def _bash_prefix() -> str:
    return bash_execution_to_text({"command": "\x00"}).split("\x00", 1)[0]


BASH_PREFIX = _bash_prefix()
"""How a shell command the user ran starts once it is a user message."""

_STOPWORDS = frozenset(
    """a an the and or but if then than so to of in on at by for with from into onto up down out over under
    is are was were be been being am do does did done doing have has had having can could would should will
    shall may might i me my mine we us our you your yours he him his she her it its they them their this that
    these those there here what which who whom whose when where why how all any both each few more most other
    some such no nor too very just also now ok okay please let lets yes yeah hey hi hmm well really actually
    maybe think thing things get got make makes made like want wanted need needs one two via about again
    still even same new old use""".split()
)
_CONTRACTIONS = (
    ("let's", "let us"),
    ("can't", "can not"),
    ("won't", "will not"),
    ("n't", " not"),
    ("'ll", " will"),
    ("'re", " are"),
    ("'ve", " have"),
    ("'m", " am"),
    ("'d", " would"),
)
_PUNCT_RE = re.compile(r"[`*#>\[\](){}\"“”,;:!?|<>=+~^$%&@\\]")
_TOKEN_STRIP = ".-/'_"


def normalize(text: str) -> str:
    """Lower-case, NFKC, contractions expanded, markdown punctuation replaced
    by spaces, whitespace collapsed. Paths and dotted names stay whole."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    for short, full in _CONTRACTIONS:
        text = text.replace(short, full)
    text = text.replace("dont ", "do not ")
    return collapse(_PUNCT_RE.sub(" ", text))


def _stem(token: str) -> str:
    if token == "never":
        return "not"
    if token.endswith("'s"):
        token = token[:-2]
    if token.isalpha():
        for suffix in ("ing", "ed", "es", "s"):
            if token.endswith(suffix) and len(token) - len(suffix) >= 3:
                token = token[: -len(suffix)]
                break
        if token.endswith("e") and len(token) > 3:
            token = token[:-1]
    return token


def _tokens(normalized: str) -> list[str]:
    out = []
    for raw in normalized.split():
        tok = raw.strip(_TOKEN_STRIP)
        if tok:
            out.append(tok)
    return out


def key_tokens(text: str, limit: int | None = MAX_KEY_TOKENS) -> list[str]:
    """The key tokens of ``text`` in order, distinct (see module docs):
    normalized tokens of 3+ characters or holding a digit, not common words,
    stemmed; "never" and "not" both become ``not``. At most ``limit``."""
    out: list[str] = []
    seen: set[str] = set()
    for tok in _tokens(normalize(text)):
        if tok in _STOPWORDS or (len(tok) < 3 and not any(c.isdigit() for c in tok)):
            continue
        stem = _stem(tok)
        if stem and stem not in seen:
            seen.add(stem)
            out.append(stem)
            if limit is not None and len(out) >= limit:
                break
    return out


def is_prose_line(line: str) -> bool:
    """True when ``line`` looks like something a person wrote, not pasted output: mostly letters
    and spaces, no box drawing."""
    if not line or any(ch in line for ch in "│─┌┐└┘├┤═║⠇⠋⠙⠹⠸⠼⠴⠦⠧⠏"):
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in line)
    return letters >= 0.75 * len(line)


# --------------------------------------------------------------------------- rules: user requests and constraints

_LEAD = r"(?:(?:please|and|but|also|so|then|just|ok|okay|oh|yes|no|again|remember|note|btw|and also)[,:]?\s+)*"
_CLAUSE_START_RE = re.compile(
    r"^" + _LEAD + r"(?:never|always|do not|only|must|prefer|make sure)\b", re.I
)
_ANYWHERE_RE = re.compile(
    r"\b(?:must|prefer|preferably)\b"
    r"|\bplease\s+(?:never|always|do not|only|make sure)\b"
    r"|\bshould\s+(?:never|always|only)\b"
    r"|\b(?:i|we)\s+(?:would\s+)?(?:always|only)\s+want\b",
    re.I,
)
_CLAUSE_SPLIT_RE = re.compile(r"\s*(?:[,;]|\s-\s|\s—\s)\s*")


def is_constraint(sentence: str) -> bool:
    """True when a user sentence is a constraint or preference (see module
    docs): an imperative with must / never / always / don't / only / prefer,
    in any case; questions and non-prose lines are not."""
    s = collapse(sentence)
    words = s.split()
    if not 3 <= len(words) <= 60 or s.endswith("?") or not is_prose_line(s):
        return False
    if _ANYWHERE_RE.search(normalize(s)):
        return True
    return any(_CLAUSE_START_RE.match(normalize(clause)) for clause in _CLAUSE_SPLIT_RE.split(s))


def user_request_text(message: Mapping[str, Any]) -> str | None:
    """The prose of a user message when it is a *request* (see module docs),
    else None: acknowledgements, one-word messages, pasted image paths,
    shell commands the user ran and summaries are not requests."""
    if message.get("role") != "user":
        return None
    text = content_text(message.get("content"))
    if _SUMMARY_BLOCK_RE.search(text) or (BASH_PREFIX and text.startswith(BASH_PREFIX)):
        return None
    body = collapse(prose(text))
    if not body or _ACK_RE.match(body) or len(body.split()) < 2 or _IMAGE_PATH_RE.match(body):
        return None
    return body


# --------------------------------------------------------------------------- rules: errors

_FAILED_LINE_RE = re.compile(r"^\s*FAILED\b")
_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):")
_ERROR_STATEMENT_RE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception)|(?i:error|fatal))\s*:"
    r"|^\s*(?:ERROR|FATAL)\b|^\s*npm ERR!"
    r"|^\S+:\d+(?::\d+)?:\s*(?:fatal )?error\b",
)
_ERROR_WORD_RE = re.compile(r"\b(?:\w*Error|\w*Exception|error|failed|failure|fatal)\b", re.I)
_LOOKUP_TOOLS = frozenset({"read", "ls", "grep", "find", "glob", "search"})
_LOOKUP_COMMANDS = frozenset(
    {"grep", "rg", "ag", "ack", "find", "fd", "ls", "cat", "head", "tail", "wc", "which", "type", "file", "stat",
     "tree", "less", "more", "diff", "cmp", "test", "["}
)
_ABORTED_RE = re.compile(r"^\s*(?:command|operation|request)?\s*(?:was\s+)?(?:aborted|cancell?ed|interrupted)\b", re.I)


def _traceback_exception_line(lines: list[str]) -> str:
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


def error_line(text: str, *, strict: bool = False) -> str:
    """The line of tool output that carries the error, or ``""``.

    In order: the first line starting with ``FAILED``; the exception line of
    the last Python traceback; the first line stating an error
    (``SomeError: ...``, ``Error: ...``, ``error: ...``, ``npm ERR!``,
    ``file:line: error ...``). Unless ``strict``: then the first line that
    mentions an error, and finally the first non-empty line. ``strict`` (for
    output of a command that did not report failure) gives ``""`` when no
    line clearly states an error."""
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


def _strip_command(command: str) -> str:
    """What a command runs: the last command of a ``&&`` / ``;`` chain
    (``cd``, ``export`` and ``source`` steps skipped), without what follows
    a pipe and without redirections."""
    cmd = collapse(command)
    parts = re.split(r"\s*(?:&&|;)\s*", cmd)
    parts = [p for p in parts if p and not re.match(r"^(?:cd|pushd|export|source|\.)\s", p)]
    cmd = parts[-1] if parts else cmd
    cmd = cmd.split(" | ", 1)[0].split("|", 1)[0] if "|" in cmd else cmd
    cmd = re.sub(r"\s*\d?>&?\d?\s*\S*$", "", cmd) if re.search(r"\d?>", cmd) else cmd
    cmd = re.sub(r"\s+\d>&\d", "", cmd)
    return cmd.strip()


def command_key(command: str) -> tuple[str, ...]:
    """The target of a command: the first three non-option words of
    :func:`_strip_command` (``npm run check``, ``pytest tests/x.py``)."""
    words = [w for w in _strip_command(command).split() if not w.startswith("-")]
    return tuple(words[:3])


def is_lookup_command(command: str) -> bool:
    """True for a command that only looks things up (``grep``, ``cat``,
    ``ls``, ``find``, ``head``, ``sed -n``, ``git status/log/diff`` ...), judged
    by what :func:`_strip_command` leaves."""
    words = _strip_command(command).split()
    if not words:
        return False
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "sed" and "-n" in words:
        return True
    if prog == "git" and len(words) > 1 and words[1] in ("status", "log", "diff", "show", "grep", "ls-files"):
        return True
    return prog in _LOOKUP_COMMANDS


@dataclass
class ErrorFact:
    """A failure found in the history.

    Attributes:
        index: index of the failing message in the history.
        tool: tool name, ``"user shell"`` for a command the user ran, or
            ``"assistant"`` for a failed assistant turn.
        target: the path or command (``""`` for an assistant turn).
        line: the line stating the error (at most 200 characters).
        resolved: a later success on the same target was found.
    """

    index: int
    tool: str
    target: str
    line: str
    key: tuple[str, ...] = ()
    resolved: bool = False

    def describe(self) -> str:
        """One line: ``tool `target`: error line``."""
        if self.tool == "assistant":
            return f"assistant turn failed: {self.line}"
        where = f" `{clip(self.target, 100)}`" if self.target else ""
        return f"{self.tool}{where} failed: {self.line}"


# --------------------------------------------------------------------------- rules: decisions and plans

_DECISION_RE = re.compile(
    r"\b(?:i|we)\s+(?:will|am going to|are going to|would)\s+(?:use|go with|switch to|stick with|keep|opt for|rely on|instead)\b"
    r"|\blet us\s+(?:use|go with|switch to|stick with|keep)\b"
    r"|\b(?:i|we)\s+(?:have\s+)?(?:decided|chose|opted|picked|settled on)\b"
    r"|\bdecided to\b|\bgoing with\b|\b(?:decision|approach|the plan)\s*(?:is|:)"
    r"|\bswitch(?:ed|ing)? to\b",
    re.I,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:i will|we will|let us|let me|i am going to|we are going to)\b", re.I)
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
    """True when an assistant sentence states a choice (see module docs)."""
    s = collapse(sentence)
    if not 4 <= len(s.split()) <= 50 or s.endswith("?"):
        return False
    text = normalize(s)
    return bool(_DECISION_RE.search(text) or (_INSTEAD_RE.search(text) and _FIRST_PERSON_RE.search(text)))


# --------------------------------------------------------------------------- the facts of a history


@dataclass
class HistoryFacts:
    """What the rules find in a history (lists oldest first).

    Attributes:
        requests: ``(index, text)`` of each user request (prose, whitespace
            collapsed).
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
            :func:`pi_session.llm.extractive.parse_summary_sections`), or
            empty.
    """

    requests: list[tuple[int, str]] = field(default_factory=list)
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
        """The first request (the previous summary's first goal if any), or ``""``."""
        prev_goal = self.previous.get("goal") or []
        if prev_goal:
            return prev_goal[0]
        return self.requests[0][1] if self.requests else ""

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
    if err.tool == "assistant":
        return tool == "assistant"
    if err.tool in ("bash", "user shell"):
        return tool in ("bash", "user shell") and bool(key) and err.key[: len(key)] == key
    return key == err.key


def analyze_history(messages: Sequence[Mapping[str, Any]], previous_summary: str | None = None) -> HistoryFacts:
    """Apply the rules of the module docs to LLM ``messages`` (``user``,
    ``assistant``, ``toolResult``; after ``convert_to_llm``). Pure and
    deterministic; never raises on malformed messages (they are skipped).

    Args:
        messages: the history, oldest first.
        previous_summary: the summary this history continues, if any; its
            constraints and decisions count before the messages' ones.
    """
    from ..llm.extractive import parse_summary_sections  # the summary format lives there

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

    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == "user":
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
            last_request_index = i
            for s in sentences(text):
                s = _LIST_ITEM_RE.sub(r"\1", s).strip()
                if is_constraint(s):
                    _distinct_append(f.constraints, ckeys, clip(s, 300))
        elif role == "assistant":
            f.last_role = "assistant"
            content = msg.get("content")
            text = content_text(content)
            if text.strip():
                f.last_assistant_text = text
                last_text_index = i
                for s in sentences(text):
                    s = _LIST_ITEM_RE.sub(r"\1", s).strip()
                    if is_decision(s):
                        _distinct_append(f.decisions, dkeys, clip(s, 300))
            f.pending_calls = []
            for b in content if isinstance(content, list) else ():
                if isinstance(b, Mapping) and b.get("type") == "toolCall":
                    cid = str(b.get("id", ""))
                    calls[cid] = (str(b.get("name", "")), b.get("arguments"))
                    f.pending_calls.append(cid)
            stop = msg.get("stopReason")
            if stop == "error":
                err = clip(str(msg.get("errorMessage") or "unknown error"), 200)
                f.errors.append(ErrorFact(i, "assistant", "", err, ("<assistant>",)))
            elif stop != "aborted":
                successes.append((i, "assistant", ("<assistant>",), ""))
        elif role == "toolResult":
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
                lookup = name in _LOOKUP_TOOLS or (name == "bash" and is_lookup_command(target))
                aborted = bool(_ABORTED_RE.match(text.strip() or "x")) and not failure
                if not lookup and not aborted:
                    line = clip(failure or error_line(text) or "error", 200)
                    f.errors.append(ErrorFact(i, name or "tool", target, line, key))
            else:
                successes.append((i, name, key, target))
                if name in ("edit", "write") and target:
                    _verb, count = edits.pop(target, ("", 0))
                    edits[target] = ("Wrote" if name == "write" else "Edited", count + 1)
                elif name == "bash" and target:
                    commands.pop(target, None)
                    commands[target] = None

    for fact in f.errors:
        fact.resolved = any(j > fact.index and _resolves(fact, tool, key) for j, tool, key, _t in successes)
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
        f.plan = f.requests[-1][1]
    return f


# --------------------------------------------------------------------------- probes


@dataclass
class Probe:
    """One question about the summarized history.

    Attributes:
        kind: one of :data:`PROBE_KINDS`.
        question: the question in words.
        expected: the fact as found in the history (for file probes, the
            paths joined by ``", "``).
        paths: for ``modified_files`` / ``read_files``, the exact paths.
    """

    kind: str
    question: str
    expected: str
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{kind, question, expected[, paths]}``."""
        out: dict[str, Any] = {"kind": self.kind, "question": self.question, "expected": self.expected}
        if self.kind in ("modified_files", "read_files"):
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
    return probes


def probes_for_preparation(preparation: Any) -> list[Probe]:
    """:func:`compute_probes` for a
    :class:`pi_session.compaction.CompactionPreparation`: its messages to
    summarize and turn prefix, file lists and previous summary."""
    messages = convert_to_llm([*preparation.messages_to_summarize, *preparation.turn_prefix_messages])
    return compute_probes(
        messages, file_lists=preparation.file_lists, previous_summary=preparation.previous_summary
    )


# --------------------------------------------------------------------------- answering


@dataclass
class ProbeResult:
    """A probe and whether the context after the compaction answers it.

    Attributes:
        probe: the probe.
        found: answered (see module docs).
        where: ``"summary"``, ``"kept"`` (only a kept message answers it) or
            None.
        score: the best share of key tokens one line held (1.0 for an exact
            match; for file probes the share of paths present).
        evidence: the line that answered it (cut to 200 characters), or ``""``.
        missing: for file probes, the paths not found.
    """

    probe: Probe
    found: bool
    where: str | None
    score: float
    evidence: str = ""
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The probe's JSON plus ``found, where, score, evidence[, missing]``."""
        out = self.probe.to_json()
        out.update({"found": self.found, "where": self.where, "score": round(self.score, 3), "evidence": self.evidence})
        if self.probe.kind in ("modified_files", "read_files"):
            out["missing"] = list(self.missing)
        return out


def _line_match(expected_norm: str, keys: list[str], lines: Sequence[str]) -> tuple[float, str]:
    best, evidence = 0.0, ""
    need = len(keys)
    for line in lines:
        norm = normalize(line)
        if not norm:
            continue
        if expected_norm and expected_norm in norm:
            return 1.0, line
        if need:
            have = set(key_tokens(line, None))
            score = sum(1 for k in keys if k in have) / need
            if score > best:
                best, evidence = score, line
    return best, evidence


def _needed(keys: list[str]) -> float:
    return 1.0 if len(keys) <= 2 else KEY_TOKEN_THRESHOLD


def answer_probe(probe: Probe, summary: str, kept_text: str = "") -> ProbeResult:
    """Whether ``summary`` (searched first) or ``kept_text`` answers
    ``probe`` (rules in the module docs). Pure.

    Args:
        probe: from :func:`compute_probes`.
        summary: the compaction summary (with its file lists).
        kept_text: the text of the kept messages (see
            :func:`kept_messages_text`).
    """
    if probe.kind in ("modified_files", "read_files"):
        missing = [p for p in probe.paths if p not in summary and p not in kept_text]
        in_summary = all(p in summary for p in probe.paths)
        found = not missing
        where = ("summary" if in_summary else "kept") if found else None
        score = 1.0 - len(missing) / len(probe.paths) if probe.paths else 1.0
        return ProbeResult(probe, found, where, score, "", missing)
    expected_norm = normalize(probe.expected)
    keys = key_tokens(probe.expected)
    if len(expected_norm) < 8 and keys:  # too short to look for as a whole: "fix it" is in "fix item 3"
        expected_norm = ""
    need = _needed(keys)
    best: tuple[float, str, str | None] = (0.0, "", None)
    for where, text in (("summary", summary), ("kept", kept_text)):
        score, line = _line_match(expected_norm, keys, text.splitlines())
        if score >= need and (keys or score == 1.0):
            return ProbeResult(probe, True, where, score, clip(line, 200))
        if score > best[0]:
            best = (score, line, where)
    return ProbeResult(probe, False, None, best[0], clip(best[1], 200))


def answer_probes(probes: Sequence[Probe], summary: str, kept_text: str = "") -> list[ProbeResult]:
    """:func:`answer_probe` for each probe, in order."""
    return [answer_probe(p, summary, kept_text) for p in probes]


def kept_messages_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Text a model sees of the kept messages: user and assistant text,
    tool-call names and arguments, tool results, one line per source line."""
    parts: list[str] = []
    for msg in convert_to_llm(messages):
        role = msg.get("role")
        if role in ("user", "toolResult"):
            parts.append(content_text(msg.get("content")))
        elif role == "assistant":
            content = msg.get("content")
            for b in content if isinstance(content, list) else ():
                if not isinstance(b, Mapping):
                    continue
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
                elif b.get("type") == "toolCall":
                    try:
                        args = js_stringify(b.get("arguments"))  # iterative: any nesting depth
                    except (TypeError, ValueError):
                        args = ""
                    parts.append(f"{b.get('name')}({args})")
    return "\n".join(parts)


# --------------------------------------------------------------------------- a whole compaction


def _split_file_lists(summary: str) -> str:
    """``summary`` without the ``<read-files>``/``<modified-files>`` blocks."""
    return re.sub(r"\n*<(read-files|modified-files)>.*?</\1>", "", summary, flags=re.S)


def text_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(chars / 4)`` in UTF-16 code units,
    as :func:`pi_session.tokens.estimate_tokens` counts a summary."""
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
        tokens_before: estimated context tokens before the compaction (a
            float only when recorded usage numbers are fractional).
        tokens_after: estimated context tokens after it (summary + kept).
        summarized_messages: how many messages were summarized (history +
            turn prefix).
        kept_messages: how many messages the context keeps verbatim.
        first_kept_entry_id: where the kept part starts.
        is_split_turn: the cut fell inside a turn.
        results: one :class:`ProbeResult` per probe.
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

    @property
    def answered(self) -> int:
        """Probes answered (by the summary or the kept messages)."""
        return sum(r.found for r in self.results)

    @property
    def answered_by_summary(self) -> int:
        """Probes the summary itself answers."""
        return sum(r.where == "summary" for r in self.results)

    def to_json(self) -> dict[str, Any]:
        """``{summarizer, model, summaryTokens, summaryBodyTokens, tokensBefore,
        tokensAfter, summarizedMessages, keptMessages, firstKeptEntryId,
        isSplitTurn, probes: {total, answered, answeredBySummary, missed},
        results: [...], summary}``."""
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
            "probes": {
                "total": len(self.results),
                "answered": self.answered,
                "answeredBySummary": self.answered_by_summary,
                "missed": len(self.results) - self.answered,
            },
            "results": [r.to_json() for r in self.results],
            "summary": self.summary,
        }


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
) -> CompactionEvaluation:
    """Score a finished compaction with the probes. Pure.

    Args:
        path_entries: the root→leaf path the compaction was prepared from.
        preparation: its :class:`pi_session.compaction.CompactionPreparation`.
        result: the :class:`pi_session.compaction.CompactionResult` that
            :func:`pi_session.compaction.compact` returned for it.
        summarizer: name shown in the report.
        model: model id shown in the report.

    Returns:
        A :class:`CompactionEvaluation`. The kept messages are the context
        after appending the compaction, without its summary message.
    """
    probes = probes_for_preparation(preparation)
    after = context_after(path_entries, result)
    kept = [m for m in after if not (isinstance(m, Mapping) and m.get("role") == "compactionSummary")]
    results = answer_probes(probes, result.summary, kept_messages_text(kept))
    return CompactionEvaluation(
        summarizer=summarizer,
        model=model,
        summary=result.summary,
        summary_tokens=text_tokens(result.summary),
        summary_body_tokens=text_tokens(_split_file_lists(result.summary)),
        tokens_before=result.tokens_before,
        tokens_after=sum(estimate_tokens(m) for m in after),
        summarized_messages=len(preparation.messages_to_summarize) + len(preparation.turn_prefix_messages),
        kept_messages=len(kept),
        first_kept_entry_id=str(result.first_kept_entry_id),
        is_split_turn=bool(preparation.is_split_turn),
        results=results,
    )
