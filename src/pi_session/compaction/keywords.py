"""Normalised text and key tokens: how the compaction probes compare a fact
with the text of a summary (**beyond pi**).

Text is normalized (Unicode NFKC, lower case, contractions expanded, "never"
read as "not", markdown punctuation removed) and split into tokens; *key
tokens* are the tokens of 3+ characters (or holding a digit) that are not
common English words, lightly stemmed (``-ing``, ``-ed``, ``-es``, ``-s`` and
a final ``-e`` dropped), at most the first :data:`MAX_KEY_TOKENS`. The same
helpers cut a history into sentences and clip excerpts for the fact rules
(:mod:`pi_session.compaction.facts`) and the extractive summarizer.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..session.context import text_content
from ..core.text import clip_line

__all__ = [
    "MAX_KEY_TOKENS",
    "content_text",
    "prose",
    "collapse",
    "clip",
    "sentences",
    "normalize",
    "key_tokens",
    "is_prose_line",
    "is_output_line",
    "is_pasted_output",
    "written_prose",
    "RUNTIME_NOTE_PATTERN",
]

MAX_KEY_TOKENS = 12
"""Key tokens of a probe's expected text that are compared (the first ones)."""

_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\n+")


def content_text(content: Any) -> str:
    """Text of a message ``content``, text blocks joined by newlines
    (:func:`pi_session.session.context.text_content`)."""
    return text_content(content, "\n")


def prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return _FENCE_RE.sub(" ", text)


def collapse(text: str) -> str:
    """Whitespace runs to one space, stripped."""
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (``...`` when cut;
    :func:`pi_session.core.text.clip_line`)."""
    return clip_line(text, limit)


def sentences(text: str) -> list[str]:
    """Sentences and lines of the prose of ``text`` (empty ones dropped)."""
    return [s.strip() for s in _SENTENCE_SPLIT_RE.split(prose(text)) if s and s.strip()]


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


RUNTIME_NOTE_PATTERN = (
    r"Debugger attached\.?|Waiting for the debugger to disconnect\.*|\(Use `node --trace-\w+.*"
    r"|\(node:\d+\) (?:\w+)?Warning:.*"
)
"""Regular expression of the notes a runtime prints around a program's
output (a debugger attaching or detaching, a Node warning): program output,
never something a person wrote nor an error."""

_OUTPUT_LINE_RE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)"
    r"|(?:" + RUNTIME_NOTE_PATTERN + r")\s*$"
    r"|File \"[^\"]*\", line \d+"
    r"|at \S.*:\d+(?::\d+)?\)?$"
    r"|[\w.]*(?:Error|Exception|Warning)\b[^ ]*:"
    r"|(?:FAILED|PASSED|ERROR|FATAL|WARN(?:ING)?|E)\b\s"
    r"|npm (?:ERR|WARN)!?"
    r"|[$#❯%>]\s"
    r"|\S+\.\w+:\d+(?::\d+)?\b"
    r"|\d+ (?:passed|failed|errors?|warnings?)\b"
    r"|[=\-_~^*#+]{3,}"
    r"|\x1b\["
    r")"
)
_LIST_MARKER_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_INDENTED_RE = re.compile(r"^(?: {4}|\t)(?!\s*(?:[-*+]|\d+[.)])\s)")


def is_output_line(line: str) -> bool:
    """True when a line of a user message looks like program output pasted
    from a terminal, not written by a person: a traceback or stack-trace
    line, a line stating an error or a test result (``ValueError: ...``,
    ``FAILED ...``, ``npm ERR!``, ``file.py:12:``), a shell prompt, a rule
    of ``===`` or ``---``, a terminal escape, a line indented by four spaces
    or a tab (code, as Markdown reads it) that is not a list item, a
    runtime's note (:data:`RUNTIME_NOTE_PATTERN`: "Waiting for the debugger
    to disconnect..."), or any line that is not prose
    (:func:`is_prose_line`); list items written as prose are not. Blank
    lines are not output."""
    if not line.strip():
        return False
    if _OUTPUT_LINE_RE.match(line) or _INDENTED_RE.match(line):
        return True
    stripped = line.strip()
    if _LIST_MARKER_RE.match(line):
        stripped = _LIST_MARKER_RE.sub("", line).strip()
    return not is_prose_line(stripped)


_SENTENCE_END_RE = re.compile(r"[.:?!]\s*$")


def written_prose(text: str) -> str:
    """What a person wrote in a message that may hold pasted program output:
    ``text`` without fenced blocks and without the lines that look like
    output (:func:`is_output_line`), whitespace collapsed. Lines between two
    output lines are part of the paste too (the items of a menu on a pasted
    terminal screen: "dark (current)", "→ light") unless one of them reads
    as a sentence (3 or more words ending with ``.``, ``:``, ``?`` or
    ``!``: "and then it says:"). A message that is all prose comes back
    whole (collapsed); a pasted traceback with a short "I get this:" in
    front gives just that line."""
    lines = [line for line in prose(text).splitlines() if line.strip()]
    output = [is_output_line(line) for line in lines]
    kept: list[str] = []
    n = 0
    while n < len(lines):
        if output[n]:
            n += 1
            continue
        end = n
        while end < len(lines) and not output[end]:
            end += 1
        run = lines[n:end]
        inside = n > 0 and end < len(lines)  # output lines before and after the run
        if not inside or any(len(x.split()) >= 3 and _SENTENCE_END_RE.search(x) for x in run):
            kept += run
        n = end
    return collapse(" ".join(kept))


def is_pasted_output(text: str) -> bool:
    """True when a message is mostly program output pasted from a terminal:
    at least half of its non-empty lines are output (:func:`is_output_line`;
    the lines of fenced blocks count as output)."""
    total = output = 0
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not line.strip():
            continue
        total += 1
        if fenced or is_output_line(line):
            output += 1
    return total > 0 and 2 * output >= total
