"""The search query language (pure): :func:`parse_query` turns a query
string into a :class:`Query`, or raises :class:`QueryError` saying where.

Syntax: words (all must match, in any order), ``"exact
phrase"``, ``prefix*``, ``-word`` / ``-"phrase"`` (documents holding it are
left out; a query of such words alone finds every document without them),
and filters ``role:user|assistant|tool|custom|system|session``,
``tool:NAME``, ``file:PATH`` (sessions whose tool calls or compactions name
a path containing PATH; a query without words ranks the entries naming
it first, :attr:`Query.mention_tiers`), ``project:TEXT`` (cwd contains TEXT),
``model:TEXT`` (sessions that used a model whose id contains TEXT),
``after:DATE`` / ``before:DATE`` (``YYYY-MM-DD`` or an ISO time;
after is inclusive, before exclusive), ``session:ID-PREFIX`` and
``re:PATTERN`` (a regular expression the document's text must match,
applied to the candidates the words found: the ``regex`` module's syntax,
a superset of Python's ``re``; one search spends at most
:data:`REGEX_SECONDS` matching, see :class:`RegexRun`). A filter's value may be quoted
(``file:"my dir/x.py"``); ``role`` and ``tool`` take alternatives separated
by ``|`` or ``,``. White space between a filter's colon and its value is
skipped (``file: x`` is ``file:x``). Filters of different names must all
hold; the values of one name are alternatives. ``project:`` and ``model:``
ignore case by Unicode case folding (Python's ``str.casefold``: ``STRASSE``
finds ``Straße``), the same on every store.

Words are split into tokens as the indexes split text (:func:`tokens`:
runs of letters and digits, lower-cased), so ``auth.py`` is the phrase
``auth py`` on every backend.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import regex

from ..errors import PiSessionError
from ..core.timestamps import iso_to_ms

__all__ = ["Query", "QueryError", "RegexRun", "Term", "file_terms", "parse_query", "tokens", "FILTERS", "ROLES", "REGEX_SECONDS"]

_TOKEN = re.compile(r"[^\W_]+")

FILTERS = ("role", "tool", "file", "project", "model", "after", "before", "session", "re")
"""The filter names of the query language."""
ROLES = ("user", "assistant", "tool", "custom", "system", "session")
"""The values of ``role:`` (see :class:`pi_session.search.extract.Doc`)."""


def tokens(text: str) -> list[str]:
    """The index tokens of ``text``: maximal runs of letters and digits
    (``_`` and punctuation separate), lower-cased. Pure."""
    return [t.lower() for t in _TOKEN.findall(text)]


def file_terms(value: str) -> list[Term]:
    """The terms an entry naming the file of ``file:VALUE`` holds: the
    value's tokens as a phrase, then (when it has a directory part) its
    base name's; the last token a prefix, as ``file:`` matches paths
    *containing* the value (``file:theme.p`` names ``theme.py``). Empty
    when the value has no letter or digit. Pure.

    Returns:
        ``[whole]`` or ``[whole, base name]`` (:class:`Term`, prefix set).
    """
    whole = tokens(value)
    if not whole:
        return []
    base = tokens(re.split(r"[/\\]", value.rstrip("/\\"))[-1])
    out = [Term(value, whole, prefix=True)]
    if base and base != whole:
        out.append(Term(value, base, prefix=True))
    return out


class QueryError(PiSessionError, ValueError):
    """A query that cannot be parsed; ``str(error)`` names the column
    (1-based) and the problem. ``position`` is the 0-based offset."""

    def __init__(self, query: str, position: int, problem: str) -> None:
        self.query = query
        self.position = position
        self.problem = problem
        super().__init__(f"query error at column {position + 1}: {problem}")


@dataclass
class Term:
    """One word, prefix or phrase.

    Attributes:
        text: as written (without ``-`` and quotes).
        tokens: its index tokens (a phrase when more than one).
        prefix: the last token is a prefix (``word*``).
        negated: ``-word``.
    """

    text: str
    tokens: list[str]
    prefix: bool = False
    negated: bool = False


@dataclass
class Query:
    """A parsed query (see the module docstring). Empty lists mean "no
    such filter"."""

    text: str
    terms: list[Term] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    after_ms: int | None = None
    before_ms: int | None = None
    regexes: list[regex.Pattern[str]] = field(default_factory=list)
    regex_columns: list[int] = field(default_factory=list)

    @property
    def positive(self) -> list[Term]:
        """The terms that must match."""
        return [t for t in self.terms if not t.negated]

    @property
    def negative(self) -> list[Term]:
        """The terms that must not."""
        return [t for t in self.terms if t.negated]

    @property
    def mention_tiers(self) -> list[list[Term]]:
        """How a query without words ranks the entries its ``file:``
        filters select: the terms of an entry that names one of the files,
        best tier first: the whole values (:func:`file_terms`), then their
        base names. Empty when the query has a positive word (bm25 ranks
        it) or no ``file:`` value with a letter or digit."""
        if self.positive:
            return []
        whole: list[Term] = []
        base: list[Term] = []
        for value in self.files:
            terms = file_terms(value)
            if terms:
                whole.append(terms[0])
                base.append(terms[-1])
        return [whole, base] if whole else []

    @property
    def has_filters(self) -> bool:
        return bool(
            self.roles or self.tools or self.files or self.projects or self.models or self.sessions
            or self.after_ms is not None or self.before_ms is not None or self.regexes
        )


def _read_value(text: str, i: int) -> tuple[str, int, bool]:
    """The value starting at ``i`` (quoted or up to white space) and the
    offset after it; raises on an unclosed quote."""
    if i < len(text) and text[i] == '"':
        end = text.find('"', i + 1)
        if end < 0:
            raise QueryError(text, i, 'unclosed quote: add a closing "')
        return text[i + 1 : end], end + 1, True
    j = i
    while j < len(text) and not text[j].isspace():
        if text[j] == '"':
            raise QueryError(text, j, 'a quote inside a word: put the whole phrase in quotes')
        j += 1
    return text[i:j], j, False


def _date_ms(query: str, at: int, name: str, value: str) -> int:
    candidate = value
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        candidate = f"{value}T00:00:00.000Z"
    ms = iso_to_ms(candidate) if re.match(r"\d{4}-\d\d-\d\d", candidate) else None
    if ms is None:
        raise QueryError(query, at, f"{name}: expects a date YYYY-MM-DD or an ISO time, not {value!r}")
    return int(ms)


def parse_query(text: str) -> Query:
    """Parse a query (see the module docstring).

    Returns:
        The :class:`Query`.

    Raises:
        QueryError: an unclosed quote, an unknown filter, an empty or bad
            filter value (role, date, regular expression), a word with no
            letter or digit, or an empty query.
    """
    query = Query(text)
    i = 0
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        negated = False
        if text[i] == "-" and i + 1 < n and not text[i + 1].isspace():
            negated = True
            i += 1
        m = re.match(r"([A-Za-z]+):", text[i:])
        spaced = m is not None and i + len(m[0]) < n and text[i + len(m[0])].isspace()
        if m is not None and not negated and (not spaced or m[1].lower() in FILTERS):
            name = m[1].lower()
            if name not in FILTERS:
                raise QueryError(text, i, f"unknown filter {m[1]}: (filters: {', '.join(f + ':' for f in FILTERS)}; quote it to search for the text)")
            colon = vat = i + len(m[0])
            while vat < n and text[vat].isspace():  # `file: x` is `file:x`
                vat += 1
            following = re.match(r"-?([A-Za-z]+):", text[vat:])
            if vat >= n or (spaced and following is not None and following[1].lower() in FILTERS):
                raise QueryError(text, colon, f"{name}: needs a value")  # `file: role:user` too
            value, i, _quoted = _read_value(text, vat)
            if not value:
                raise QueryError(text, vat, f"{name}: needs a value")
            _add_filter(query, text, vat, name, value)
            continue
        if m is not None and negated and m[1].lower() in FILTERS:
            raise QueryError(text, start, "a filter cannot be negated")
        value, i, quoted = _read_value(text, i)
        prefix = False
        if not quoted and value.endswith("*"):
            prefix = True
            value = value[:-1]
        toks = tokens(value)
        if not toks:
            raise QueryError(text, start, f"{value or text[start:i]!r} holds no letter or digit to search for")
        if prefix and value and not value[-1:].isalnum():
            raise QueryError(text, i - 1, "* must follow a letter or digit")
        query.terms.append(Term(value, toks, prefix, negated))
    if not query.terms and not query.has_filters:
        raise QueryError(text, 0 if not text.strip() else len(text), "nothing to search for: give a word, a phrase or a filter")
    return query


def _add_filter(query: Query, text: str, at: int, name: str, value: str) -> None:
    if name == "role":
        for role in re.split(r"[|,]", value):
            role = role.lower()
            if role not in ROLES:
                raise QueryError(text, at, f"role: one of {'|'.join(ROLES)}, not {role!r}")
            query.roles.append(role)
    elif name == "tool":
        query.tools.extend(t.lower() for t in re.split(r"[|,]", value) if t)
    elif name == "file":
        query.files.append(value)
    elif name == "project":
        query.projects.append(value)
    elif name == "model":
        query.models.append(value)
    elif name == "session":
        query.sessions.append(value)
    elif name == "after":
        query.after_ms = _date_ms(text, at, name, value)
    elif name == "before":
        query.before_ms = _date_ms(text, at, name, value)
    elif name == "re":
        try:
            query.regexes.append(regex.compile(value))
        except regex.error as exc:
            pos = at + (exc.pos or 0)
            raise QueryError(text, pos, f"re: {exc.msg}") from None
        except (RecursionError, OverflowError, MemoryError):
            raise QueryError(text, at, "re: the pattern is nested too deeply or too large") from None
        query.regex_columns.append(at)


REGEX_SECONDS = 2.0
"""The time one search may spend matching its ``re:`` patterns, in
seconds (a pattern with catastrophic backtracking would otherwise run for
hours)."""


class RegexRun:
    """One search's ``re:`` matching, within :data:`REGEX_SECONDS` in all.

    Args:
        query: the parsed query.
        seconds: the budget (default :data:`REGEX_SECONDS`).

    Raises (from its methods):
        QueryError: the budget ran out; names the first ``re:`` filter.
    """

    def __init__(self, query: Query, seconds: float | None = None) -> None:
        self.query = query
        self.seconds = REGEX_SECONDS if seconds is None else seconds
        self.deadline = time.monotonic() + self.seconds
        self.texts = 0  # texts matched so far

    def _left(self, i: int) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self._timed_out(i)
        return left

    def _timed_out(self, i: int) -> None:
        took = f"re: matching took more than {self.seconds:g} s"
        if self.texts > 1000:  # a plain pattern, tried on too many entries
            why = f"{took} over {self.texts:,} entries; add a word, so that only the entries holding it are matched"
        else:
            why = f"{took}; simplify the pattern (nested repeats backtrack)"
        raise QueryError(self.query.text, self.query.regex_columns[i] if i < len(self.query.regex_columns) else 0, why)

    def matches(self, text: str) -> bool:
        """Whether every ``re:`` pattern matches ``text``."""
        self.texts += 1
        for i, pattern in enumerate(self.query.regexes):
            try:
                if pattern.search(text, timeout=self._left(i)) is None:
                    return False
            except TimeoutError:
                self._timed_out(i)
        return True

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The non-empty matches of every ``re:`` pattern in ``text``:
        ``(start, end)`` character offsets."""
        out: list[tuple[int, int]] = []
        for i, pattern in enumerate(self.query.regexes):
            try:
                out += [(m.start(), m.end()) for m in pattern.finditer(text, timeout=self._left(i)) if m.end() > m.start()]
            except TimeoutError:
                self._timed_out(i)
        return out
