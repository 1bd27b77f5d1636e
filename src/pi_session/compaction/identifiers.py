"""The identifier index of a summarized zone: the exact strings the next turn
may need verbatim (**beyond pi**).

A summary paraphrases; a path, a command, an error message, an id, a URL, a
version or a number must survive letter for letter or it is useless. This
module finds those strings in the messages a compaction summarizes, ranks
them, and writes them as the index lines that every extractive summary ends
its ``## Critical Context`` section with (pi reads a summary as free text, so
the section headings and the ``<read-files>`` / ``<modified-files>`` blocks
stay exactly as they are). The compaction probes use the same rules to ask
for the zone's identifiers (:mod:`pi_session.compaction.probes`, kind
``identifier``).

**What is an identifier.** From the user's messages, the assistant's replies
and the arguments of its tool calls (tool *output* is left out except the
line that states an error: a ``grep`` or ``ls`` listing is not something
anyone wrote):

- ``file``: a path given to a tool (``path``/``file_path`` arguments), or a
  word of text that is a path (it has a ``/`` and a dotted last part, or
  starts with ``/``, ``~/``, ``./``, or is ``name.ext`` with a known source
  extension); not a slash command (``/mode``: a one-segment ``/word``
  without a dot is a path only when it is a top-level directory such as
  ``/tmp``), a product name spelled like a file (``Node.js``), nor a call
  (``console.log(``: a ``name.ext`` right before ``(``);
- ``command``: a ``bash`` command the assistant ran that is not a look-up
  (``grep``, ``cat``, ``ls`` ...: :func:`pi_session.compaction.failures.is_lookup_command`)
  nor a bare ``cd``,
  first line, at most :data:`MAX_IDENTIFIER_CHARS` characters; commands with
  the same target (:func:`pi_session.compaction.failures.command_key`:
  ``npm run build 2>&1 | tail -3`` and ``... | tail -5``) count as one, the
  latest spelling;
- ``error``: the line that states an error still unresolved at the end of
  the zone (:attr:`pi_session.compaction.facts.HistoryFacts.unresolved`: a
  failure a later success or a later "it passes" resolved is history, not
  an error to carry), cut the same way;
- ``url``: ``http://`` / ``https://`` addresses;
- ``id``: version strings (``1.6.0``, ``v2.3``, ``pkg@4.1.2``; not a
  plain decimal such as ``73.5``), commit
  hashes and hex ids of 7+ characters with a digit, UUIDs, ticket ids
  (``ABC-123``, ``#1234``);
- ids and numbers only from the user's own words (not from pasted program
  output: :func:`pi_session.compaction.keywords.written_prose`);
- ``number``: numbers the *user* wrote (not in pasted program output:
  :func:`pi_session.compaction.keywords.written_prose`) with two or more
  digits or a unit (``70%``, ``8080``, ``250ms``).

Strings with a backtick or a line break, or shorter than 3 characters, are
not identifiers (they could not be quoted exactly in a code span).

**Ranking.** Each occurrence scores by where it was seen (the user's words
3, an error line 3, a tool-call argument 2, the assistant's prose 1), a file
that was edited or written gets 3 more, and the later the occurrence the
more it counts (up to +1 for the last message). Identifiers of an earlier
summary's index keep their place with a score of 2.5. The index takes
identifiers by score per length (:data:`DENSITY_CHARS`) while they fit its
budget (a string the summary's sections already quote verbatim is not
repeated), and lists them in that order (a path a ``read``, ``edit``
or ``write`` call was given is left out: the ``<read-files>`` /
``<modified-files>`` blocks list it), grouped by kind in the order
of :data:`KINDS`, each in a code span.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.jsonio import js_len
from ..entries.questions import ASSISTANT, USER
from .facts import analyze_history
from .failures import command_key, is_lookup_command
from .keywords import content_text, written_prose

__all__ = [
    "KINDS",
    "INDEX_LABELS",
    "MAX_IDENTIFIER_CHARS",
    "DENSITY_CHARS",
    "Identifier",
    "extract_identifiers",
    "identifiers_in_text",
    "format_identifier_index",
    "is_index_line",
    "parse_index_line",
]

KINDS = ("file", "command", "error", "url", "id", "number")
"""Identifier kinds, in the order the index lists them."""

INDEX_LABELS = {
    "file": "Exact paths",
    "command": "Exact commands",
    "error": "Exact errors",
    "url": "URLs",
    "id": "Ids and versions",
    "number": "Numbers",
}
"""The label that starts each index line (``- Exact paths: `a`, `b```)."""

DENSITY_CHARS = 80
"""The index fills its budget by ``score / (1 + chars / DENSITY_CHARS)``: a
string of 80 characters needs twice the score of a short one."""

MAX_IDENTIFIER_CHARS = 160
"""Longest command or error line kept (longer ones are cut there; the cut
string is still a verbatim prefix)."""

_URL_RE = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_EXTS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|rst|txt|toml|ya?ml|ini|cfg|conf|lock|sh|bash|zsh|"
    "rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|css|scss|html|vue|svelte|sql|proto|xml|env|csv|log"
)
_PATH_RE = re.compile(
    r"(?<![\w@/.:-])("
    r"(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*/?"  # /abs, ~/x, ./x, ../x
    r"|[\w.@+-]+(?:/[\w.@+-]+)+/?"  # a/b/c
    r"|[\w-]+(?:\.[\w-]+)*\.(?:" + _EXTS + r")"  # name.ext
    r")(?![\w/])"
)
_VERSION_RE = re.compile(r"(?<![\w.])(?:[\w-]+@)?v?\d+\.\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?(?![\w.]*\w)")
_UUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX_RE = re.compile(r"(?<![\w-])[0-9a-f]{7,40}(?![\w-])")
_TICKET_RE = re.compile(r"(?<![\w-])(?:[A-Z][A-Z0-9]+-\d+|#\d{2,})(?![\w-])")
_NUMBER_RE = re.compile(r"(?<![\w.,/#-])\d[\d,_]*(?:\.\d+)?(?:\s?(?:%|ms|s|KB|MB|GB|px|tokens?|MiB|GiB)\b|%)?(?![\w.]*\w)")
_TRAIL = ".,;:!?'\")]}>*"
_FILE_TOOLS = ("read", "edit", "write")
_CD_ONLY_RE = re.compile(r"^\s*(?:cd|pushd|popd)(?:\s+\S+)?\s*$")


@dataclass
class Identifier:
    """One exact string of the zone.

    Attributes:
        kind: one of :data:`KINDS`.
        text: the string, verbatim.
        score: the rank score (module docs; higher first).
        first: index of the first message it occurs in (-1: an earlier
            summary's index).
        listed: a path a ``read``/``edit``/``write`` call was given, which
            the compaction's ``<read-files>``/``<modified-files>`` blocks
            list (the index leaves it out).
    """

    kind: str
    text: str
    score: float = 0.0
    first: int = 0
    listed: bool = False


def _ok(text: str) -> bool:
    return 3 <= len(text) and "`" not in text and "\n" not in text and "\r" not in text


def _clean(text: str) -> str:
    return text.rstrip(_TRAIL) if text[-1:] in _TRAIL else text


_ROOT_DIRS = frozenset(
    "bin boot dev etc home lib lib64 media mnt nix opt private proc root run sbin srv sys tmp usr var "
    "workspace workspaces Applications Library System Users Volumes".split()
)
"""Top-level directories: the one-segment absolute paths that are paths
(any other ``/word`` reads as a slash command such as ``/mode``)."""
_PRODUCT_NAMES = frozenset(
    "Node.js Deno.js Vue.js React.js Next.js Nuxt.js Nest.js Express.js Angular.js Ember.js Backbone.js "
    "Svelte.js Alpine.js Three.js D3.js Chart.js Socket.js Ext.js Knockout.js Meteor.js Moment.js".split()
)
"""Product names spelled like a file name (``Node.js``): never a path."""


def _is_path(word: str, after: str = "") -> bool:
    """True when ``word`` (a :data:`_PATH_RE` match; ``after`` is the
    character that follows it) names a file or directory: not a slash
    command (``/mode``), a product name (``Node.js``) or a call
    (``console.log(``)."""
    if word.startswith("/") and "/" not in word[1:] and "." not in word:
        return word[1:] in _ROOT_DIRS  # `/mode` is a slash command, `/tmp` a directory
    if word.startswith(("/", "~/", "./", "../")):
        return len(word.strip("/.~")) >= 2
    if "/" not in word and (word in _PRODUCT_NAMES or after == "("):
        return False  # `Node.js` is a product, `console.log(...)` a call
    if "/" in word:
        last = word.rstrip("/").rsplit("/", 1)[-1]
        return "." in last.strip(".") or word.count("/") >= 2
    return True  # name.ext matched by the regex


def identifiers_in_text(text: str, *, numbers: bool = False) -> list[tuple[str, str]]:
    """``(kind, text)`` pairs of the paths, URLs, ids and versions (and, with
    ``numbers``, numbers) in free ``text``, in order of appearance, without
    duplicates. Pure."""
    out: dict[tuple[str, str], None] = {}
    rest = text
    for m in _URL_RE.finditer(text):
        url = _clean(m.group(0))
        if _ok(url):
            out[("url", url)] = None
    rest = _URL_RE.sub(" ", rest)
    for m in _UUID_RE.finditer(rest):
        out[("id", m.group(0))] = None
    rest = _UUID_RE.sub(" ", rest)
    for m in _PATH_RE.finditer(rest):
        word = _clean(m.group(1))
        after = rest[m.end(1) : m.end(1) + 1]
        if _ok(word) and _is_path(word, after) and not _VERSION_RE.fullmatch(word):
            out[("file", word)] = None
    rest = _PATH_RE.sub(" ", rest)
    for m in _VERSION_RE.finditer(rest):
        word = _clean(m.group(0))
        if _ok(word) and (word.count(".") >= 2 or word[:1] in "vV" or "@" in word):
            out[("id", word)] = None
    rest = _VERSION_RE.sub(" ", rest)
    for rx in (_HEX_RE, _TICKET_RE):
        for m in rx.finditer(rest):
            word = m.group(0)
            if rx is _HEX_RE and not (re.search(r"\d", word) and re.search(r"[a-f]", word)):
                continue
            out[("id", word)] = None
        rest = rx.sub(" ", rest)
    if numbers:
        for m in _NUMBER_RE.finditer(rest):
            word = m.group(0).strip().rstrip(",_")
            digits = sum(c.isdigit() for c in word)
            if (digits >= 2 or not word[-1:].isdigit()) and _ok(word):
                out[("number", word)] = None
    return list(out)


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_IDENTIFIER_CHARS else text[:MAX_IDENTIFIER_CHARS]


class _Collector:
    def __init__(self, total: int) -> None:
        self.found: dict[tuple[str, ...], Identifier] = {}
        self.listed: set[str] = set()
        self.total = max(1, total)

    def add(self, kind: str, text: str, weight: float, index: int, key: tuple[str, ...] | None = None) -> None:
        """Count one occurrence; ``key`` groups variants (the latest text wins)."""
        if not _ok(text):
            return
        slot = (kind, *(key if key is not None else (text,)))
        ident = self.found.get(slot)
        if ident is None:
            ident = self.found[slot] = Identifier(kind, text, 0.0, index)
        elif index >= 0:
            ident.text = text
        ident.score += weight + max(0, index) / self.total


def extract_identifiers(
    messages: Sequence[Mapping[str, Any]], previous_index: Iterable[tuple[str, str]] = ()
) -> list[Identifier]:
    """The identifiers of LLM ``messages`` (``user``, ``assistant``,
    ``toolResult``; after ``convert_to_llm``), best-ranked first (ties: first
    seen first). Pure and deterministic; malformed messages are skipped.

    Args:
        messages: the summarized zone, oldest first.
        previous_index: ``(kind, text)`` pairs of an earlier summary's index
            (:func:`parse_index_line`), kept with a fixed score.

    Returns:
        One :class:`Identifier` per distinct ``(kind, text)``.
    """
    col = _Collector(len(messages))
    for kind, text in previous_index:
        if kind in INDEX_LABELS:
            col.add(kind, text, 2.5, -1)
    calls: dict[str, str] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == USER:
            said = content_text(msg.get("content"))
            for kind, text in identifiers_in_text(said):
                if kind in ("file", "url"):  # pasted output's paths and URLs count too
                    col.add(kind, text, 3.0, i)
            for kind, text in identifiers_in_text(written_prose(said), numbers=True):
                if kind not in ("file", "url"):
                    col.add(kind, text, 3.0, i)
        elif role == ASSISTANT:
            content = msg.get("content")
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    for kind, text in identifiers_in_text(block["text"]):
                        col.add(kind, text, 1.0, i)
                elif block.get("type") == "toolCall":
                    name = str(block.get("name") or "")
                    args = block.get("arguments")
                    if isinstance(block.get("id"), str):
                        calls[block["id"]] = name
                    if not isinstance(args, Mapping):
                        continue
                    for key in ("path", "file_path"):
                        if isinstance(args.get(key), str):
                            bonus = 3.0 if name in ("edit", "write") else 0.0
                            col.add("file", _cut(args[key]), 2.0 + bonus, i)
                            if name in _FILE_TOOLS:
                                col.listed.add(args[key])
                    command = args.get("command")
                    if name == "bash" and isinstance(command, str) and command.strip():
                        line = _cut(command.strip().split("\n", 1)[0])
                        if not is_lookup_command(line) and not _CD_ONLY_RE.match(line):
                            col.add("command", line, 2.0, i, command_key(line) or None)
                        for kind, text in identifiers_in_text(command):
                            if kind != "file":
                                col.add(kind, text, 1.0, i)
    for ident in col.found.values():
        ident.listed = ident.kind == "file" and ident.text in col.listed
    for err in analyze_history(messages).unresolved:
        col.add("error", _cut(err.line), 3.0, err.index)
    return sorted(col.found.values(), key=lambda x: (-x.score, x.first))


def _span(text: str) -> str:
    return f"`{text}`"


def format_identifier_index(identifiers: Sequence[Identifier], budget: int, present: str = "") -> list[str]:
    """The index lines (without list markers): one per kind, in
    :data:`KINDS` order, ``"<label>: `a`, `b`"``, holding the best-ranked
    ``identifiers`` (not the ``listed`` paths, which the file-list blocks
    hold, nor strings ``present`` already holds verbatim, such as the rest of
    the summary) whose lines fit ``budget`` UTF-16 code units in all
    (each line counted with a ``"- "`` marker and a line break). Pure."""
    chosen: dict[str, list[str]] = {k: [] for k in KINDS}
    used = 0
    # best value per character first: a long command must rank higher than the short strings it displaces
    for ident in sorted(identifiers, key=lambda i: -i.score / (1 + js_len(i.text) / DENSITY_CHARS)):
        if ident.kind not in chosen or ident.listed or ident.text in present:
            continue
        piece = _span(ident.text)
        cost = js_len(piece) + (js_len(INDEX_LABELS[ident.kind]) + 5 if not chosen[ident.kind] else 2)
        if used + cost > budget:
            continue
        chosen[ident.kind].append(piece)
        used += cost
    return [f"{INDEX_LABELS[k]}: " + ", ".join(chosen[k]) for k in KINDS if chosen[k]]


_LABEL_KIND = {v: k for k, v in INDEX_LABELS.items()}
_SPAN_RE = re.compile(r"`([^`\n]+)`")


def is_index_line(item: str) -> bool:
    """True when ``item`` (a summary item without its list marker) is an
    index line of :func:`format_identifier_index`."""
    label = item.split(":", 1)[0]
    return label in _LABEL_KIND and ": `" in item


def parse_index_line(item: str) -> list[tuple[str, str]]:
    """The ``(kind, text)`` pairs of an index line (``[]`` when ``item`` is
    not one). Pure."""
    if not is_index_line(item):
        return []
    label, rest = item.split(":", 1)
    return [(_LABEL_KIND[label], t) for t in _SPAN_RE.findall(rest)]
