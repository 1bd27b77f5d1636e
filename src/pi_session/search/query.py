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
a superset of Python's ``re``, without recursion or group calls; compiled
and matched in a worker process bounded in memory and time, see
:class:`pi_session.search.regex_run.RegexRun`). A filter's value may be quoted
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
from dataclasses import dataclass, field

from ..errors import PiSessionError
from ..core.timestamps import iso_to_ms

__all__ = [
    "Query", "QueryError", "Term", "file_terms", "parse_query", "pattern_problem", "tokens", "FILTERS", "ROLES", "REGEX_SECONDS",
]

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
    such filter". ``regexes``: the ``re:`` patterns as written (compiled
    and run only by :class:`pi_session.search.regex_run.RegexRun`, in its
    worker process), ``regex_columns`` where each value starts (0-based)."""

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
    regexes: list[str] = field(default_factory=list)
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
        problem = pattern_problem(value)
        if problem is not None:
            raise QueryError(text, at + problem[0], f"re: {problem[1]}")
        query.regexes.append(value)
        query.regex_columns.append(at)


MAX_PATTERN_CHARS = 2000
"""The longest ``re:`` pattern, in characters."""

_CALL = re.compile(r"\(\s*\?\s*(?:R|[+-]?\s*\d|&|P\s*>)")
"""A recursion or group call: ``(?R)``, ``(?0)``, ``(?1)``, ``(?+1)``,
``(?-1)``, ``(?&name)``, ``(?P>name)`` (white space allowed, as the
verbose flag lets it be)."""


def pattern_problem(pattern: str) -> tuple[int, str] | None:
    """What refuses a ``re:`` pattern before it is compiled (pure):
    more than :data:`MAX_PATTERN_CHARS` characters, or a recursion or group
    call (``(?R)``, ``(?1)``, ``(?&name)``, ``(?P>name)`` …: matching
    one can take memory without bound). Conservative: such text inside a
    character class or a comment counts too (write ``\\(`` for a literal
    parenthesis). Syntax errors are the compiler's
    (:class:`pi_session.search.regex_run.RegexRun`).

    Returns:
        ``(offset in the pattern, problem)`` or None when none is seen.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        return MAX_PATTERN_CHARS, f"the pattern is longer than {MAX_PATTERN_CHARS:,} characters"
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2  # an escaped character is never a group's parenthesis
            continue
        if ch == "(" and _CALL.match(pattern, i):
            return i, (
                "recursion and group calls ((?R), (?1), (?&name), (?P>name)) are not supported: "
                "they can take memory without bound (write \\( for a parenthesis)"
            )
        i += 1
    return None


REGEX_SECONDS = 2.0
"""The time one search may spend matching its ``re:`` patterns, in
seconds (a pattern with catastrophic backtracking would otherwise run for
hours); compiling them has the same bound, apart."""

