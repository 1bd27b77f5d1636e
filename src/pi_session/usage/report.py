"""Usage reports: the counted assistant messages of every session
(:class:`UsageData`) summed per day, week, month, session or 5-hour billing
block, in a time zone, as ccusage reports them (:func:`usage_report`).

Days are calendar days in the report's time zone (its daylight-saving
rules included); weeks start on Sunday (the week's first day is the
``week`` key); months are ``YYYY-MM``. ``--since``/``--until`` keep the
messages of those days (inclusive). A session row sums its messages of the
days kept; its ``projectPath`` is the project of its last message.

The 5-hour billing blocks are :mod:`pi_session.usage.blocks`'s.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .days import LocalDays, zone_of
from .extract import UNPRICED, group_rows, merge_groups, merged_order

__all__ = [
    "KINDS",
    "BY_KEYS",
    "SessionUsage",
    "UsageData",
    "UsageRow",
    "UsageReport",
    "normalize_date",
    "date_range",
    "usage_report",
    "model_label",
    "LocalDays",
    "zone_of",
    "iso_utc",
    "counted_rows",
    "merged_groups",
    "pricing_notes",
    "report_of_groups",
]

KINDS = ("daily", "weekly", "monthly", "session", "blocks")
BY_KEYS = ("project", "model", "agent")

@dataclass
class SessionUsage:
    """One session's counted messages.

    Attributes:
        session_id: as ccusage names it (session files: the part of the
            file name after ``_``; databases: the session id).
        project: the session's project (files: the directory below the
            sessions root, pi's encoded cwd; databases: the cwd encoded the
            same way).
        agent: ``pi``, or ``claude-code``/``codex`` for imported sessions.
        location: the session file, or the store's locator.
        groups: the messages summed per 15 minutes
            (:func:`pi_session.usage.extract.group_rows`).
        load_rows: returns the messages' rows (see
            :class:`pi_session.usage.extract.Scan`), for blocks and forks.
        order: sorts sessions oldest first (files: the file name, which
            starts with its creation time).
        parent: the header's ``parentSession`` (a fork's origin).
    """

    session_id: str
    project: str
    agent: str
    location: str
    groups: list[list[Any]]
    load_rows: Callable[[], list[list[Any]]]
    order: str = ""
    parent: str | None = None

    @classmethod
    def from_rows(cls, session_id: str, project: str, agent: str, location: str, rows: list[list[Any]], *, order: str = "",
                  parent: str | None = None) -> SessionUsage:
        """A session from its rows (grouped here)."""
        return cls(session_id, project, agent, location, group_rows(rows), lambda: rows, order, parent)


@dataclass
class UsageData:
    """Every session's usage as :func:`pi_session.usage.load_usage` read it.

    Attributes:
        sessions: one :class:`SessionUsage` per session.
        problems: ``FILE:LINE: message`` of damaged lines (skipped).
        read_bytes: bytes of session data read (files: only what was new
            since the cached summary).
    """

    sessions: list[SessionUsage] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    read_bytes: int = 0
    merged: list[list[Any]] | None = None
    """:func:`merged_groups` of these sessions, once computed."""


def model_label(agent: str, model: str) -> str:
    """A model as reports name it: ``[pi] claude-sonnet-4-5`` (ccusage's
    name for pi's models; imported sessions: ``[claude-code] ...``,
    ``[codex] ...``)."""
    return f"[{agent}] {model}"


def normalize_date(text: str) -> str:
    """``YYYY-MM-DD`` or ``YYYYMMDD`` as ``YYYYMMDD``.

    Raises:
        ValueError: not such a date (the message says what was expected).
    """
    digits = text.replace("-", "") if len(text) == 10 and text[4] == "-" and text[7] == "-" else text
    try:
        if len(digits) != 8 or not (digits.isascii() and digits.isdigit()):
            raise ValueError
        _dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        raise ValueError(f"{text!r}: expected a date as YYYY-MM-DD or YYYYMMDD") from None
    return digits


def date_range(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """``since`` and ``until`` (``--since``/``--until``) as
    :func:`normalize_date` gives them (None stays None).

    Raises:
        ValueError: not a date; ``since`` after ``until`` (no day could
            be counted).
    """
    lo = normalize_date(since) if since is not None else None
    hi = normalize_date(until) if until is not None else None
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"--since {since} is after --until {until}: no day is in between")
    return lo, hi


def iso_utc(ms: int) -> str:
    """RFC 3339 UTC with milliseconds, as ccusage prints times."""
    moment = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _week(day: str) -> str:
    """The Sunday starting the week of ``day`` (``YYYY-MM-DD``)."""
    d = _dt.date.fromisoformat(day)
    return (d - _dt.timedelta(days=(d.weekday() + 1) % 7)).isoformat()


@dataclass(slots=True)
class UsageRow:
    """One row of a report: a period (or session), optionally split by
    project, model or agent, with its sums.

    Attributes:
        key: the period (``2025-11-20``, the week's Sunday, ``2025-11``) or
            the session id.
        group: the ``--by`` value (project, model or agent), or None.
        input_tokens, output_tokens, cache_creation_tokens,
        cache_read_tokens: token sums; ``other_tokens`` tokens only
            ``totalTokens`` counted.
        cost: US dollars (recorded, else estimated; unpriced messages 0).
        models: the models in order of first use.
        breakdowns: per model ``[input, output, cache_write, cache_read,
            other, cost, unpriced]``.
        first_ms, last_ms: first and last message time (ms, UTC).
        project: (sessions) the project of the last message.
        messages: how many messages were counted.
    """

    key: str
    group: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    other_tokens: int = 0
    cost: float = 0.0
    models: list[str] = field(default_factory=list)
    breakdowns: dict[str, list[Any]] = field(default_factory=dict)
    first_ms: int | None = None
    last_ms: int | None = None
    project: str | None = None
    messages: int = 0

    @property
    def total_tokens(self) -> int:
        """Every token counted (``totalTokens``)."""
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens + self.other_tokens

    def add(self, group: list[Any], label: str | None, project: str) -> None:
        """Count one group of messages (:func:`pi_session.usage.extract.group_rows`;
        ``label``: its model as shown, or None)."""
        how, n, inp, out, cw, cr, other, cost, first, ts = (
            group[2], group[3], group[4], group[5], group[6], group[7], group[8], group[9], group[10], group[11])
        self.input_tokens += inp
        self.output_tokens += out
        self.cache_creation_tokens += cw
        self.cache_read_tokens += cr
        self.other_tokens += other
        self.cost += cost
        self.messages += n
        if self.first_ms is None or first < self.first_ms:
            self.first_ms = first
        if self.last_ms is None or ts > self.last_ms:
            self.last_ms, self.project = ts, project
        if label is not None:
            b = self.breakdowns.get(label)
            if b is None:
                b = self.breakdowns[label] = [0, 0, 0, 0, 0, 0.0, False]
                self.models.append(label)
            b[0] += inp
            b[1] += out
            b[2] += cw
            b[3] += cr
            b[4] += other
            b[5] += cost
            b[6] = b[6] or how == UNPRICED

    def to_json(self, kind: str, by: str | None = None) -> dict[str, Any]:
        """The row as ccusage's ``--json`` writes it (sessions: with
        ``sessionId``, ``projectPath``, ``firstActivity``,
        ``lastActivity``; with ``by``: the ``project``/``model``/``agent``
        value too)."""
        period = {"daily": "date", "weekly": "week", "monthly": "month", "session": "sessionId"}[kind]
        out: dict[str, Any] = {
            period: self.key,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheCreationTokens": self.cache_creation_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "totalTokens": self.total_tokens,
            "totalCost": self.cost,
            "modelsUsed": list(self.models),
            "modelBreakdowns": self.breakdowns_json(),
        }
        if kind == "session":
            out["projectPath"] = self.project
            out["firstActivity"] = iso_utc(self.first_ms) if self.first_ms is not None else None
            out["lastActivity"] = iso_utc(self.last_ms) if self.last_ms is not None else None
        if by is not None:
            out[by] = self.group
        return out

    def breakdowns_json(self) -> list[dict[str, Any]]:
        """Per model sums, the most expensive first (``modelBreakdowns``)."""
        rows = []
        for name in sorted(self.models, key=lambda m: -self.breakdowns[m][5]):
            inp, out, cw, cr, _other, cost, unpriced = self.breakdowns[name]
            item: dict[str, Any] = {
                "modelName": name, "inputTokens": inp, "outputTokens": out,
                "cacheCreationTokens": cw, "cacheReadTokens": cr, "cost": cost,
            }
            if unpriced:
                item["missingPricing"] = True
            rows.append(item)
        return rows


def _totals(rows: Iterable[UsageRow]) -> dict[str, Any]:
    rows = list(rows)
    inp = sum(r.input_tokens for r in rows)
    out = sum(r.output_tokens for r in rows)
    cw = sum(r.cache_creation_tokens for r in rows)
    cr = sum(r.cache_read_tokens for r in rows)
    other = sum(r.other_tokens for r in rows)
    return {
        "inputTokens": inp, "outputTokens": out, "cacheCreationTokens": cw, "cacheReadTokens": cr,
        "totalTokens": inp + out + cw + cr + other, "totalCost": sum(r.cost for r in rows),
    }


@dataclass
class UsageReport:
    """A usage report (:func:`usage_report`).

    Attributes:
        kind: ``daily``, ``weekly``, ``monthly`` or ``session``.
        rows: the rows, in period (or session id) order.
        by: the ``--by`` key, or None.
        missing_pricing: models with messages that have no recorded cost
            and that the pricing library cannot price (counted as $0).
        estimated: models with messages priced by the pricing library.
        problems: ``FILE:LINE: message`` of damaged lines (skipped).
        timezone: the zone's name (None: the machine's).
    """

    kind: str
    rows: list[UsageRow]
    by: str | None = None
    missing_pricing: list[str] = field(default_factory=list)
    estimated: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    timezone: str | None = None

    @property
    def totals(self) -> dict[str, Any]:
        """The sums of every row (ccusage's ``totals``; zeros without rows)."""
        return _totals(self.rows)

    def to_json(self) -> dict[str, Any]:
        """The report in ccusage's shape: ``{"daily"|"weekly"|"monthly"|
        "sessions": [rows], "totals": {...}}``; when some messages could
        not be priced, their models (as shown) in ``totals.unpricedModels``
        (ccusage's field) and ``missingPricing``; when some were priced
        offline from their tokens, those models in ``estimatedPricing``."""
        key = "sessions" if self.kind == "session" else self.kind
        out: dict[str, Any] = {key: [r.to_json(self.kind, self.by) for r in self.rows], "totals": self.totals}
        if self.missing_pricing:
            out["totals"]["unpricedModels"] = list(self.missing_pricing)
            out["missingPricing"] = list(self.missing_pricing)
        if self.estimated:
            out["estimatedPricing"] = list(self.estimated)
        return out


def _ancestors(s: SessionUsage, by_location: dict[str, SessionUsage]) -> list[SessionUsage]:
    """The sessions ``s`` was forked from, nearest first (``parentSession``)."""
    out: list[SessionUsage] = []
    parent = s.parent
    while parent is not None:
        p = by_location.get(parent)
        if p is None or p is s or p in out:
            break
        out.append(p)
        parent = p.parent
    return out


def _deduplicated(data: UsageData) -> list[tuple[SessionUsage, list[list[Any]] | None]]:
    """Every session with, for a fork, the rows left once the messages it
    copied from the sessions it was forked from (same entry id and time;
    without an entry id, the same time, model, tokens and cost) are taken
    out (None: all of its rows count)."""
    if not any(s.parent for s in data.sessions):
        return [(s, None) for s in data.sessions]
    by_location = {s.location: s for s in data.sessions}
    out: list[tuple[SessionUsage, list[list[Any]] | None]] = []
    for s in data.sessions:
        ancestors = _ancestors(s, by_location) if s.parent else []
        if not ancestors:
            out.append((s, None))
            continue
        copied = {row[9] for a in ancestors for row in a.load_rows()}
        out.append((s, [row for row in s.load_rows() if row[9] not in copied]))
    return out


def _counted_groups(data: UsageData) -> list[tuple[list[Any], SessionUsage]]:
    """Every message group once (a fork's copies left out), in time order,
    with its session."""
    out: list[tuple[list[Any], SessionUsage]] = []
    for s, rows in _deduplicated(data):
        for g in (s.groups if rows is None else group_rows(rows)):
            out.append((g, s))
    out.sort(key=lambda pair: pair[0][10])
    return out


def counted_rows(data: UsageData) -> list[tuple[list[Any], SessionUsage]]:
    """Every message once (a fork's copies left out), in time order, with
    its session."""
    out: list[tuple[list[Any], SessionUsage]] = []
    for s, rows in _deduplicated(data):
        for row in (s.load_rows() if rows is None else rows):
            out.append((row, s))
    out.sort(key=lambda pair: pair[0][0])
    return out


def pricing_notes(items: list[tuple[list[Any], SessionUsage]], model_at: int, how_at: int) -> tuple[list[str], list[str]]:
    """The models (as shown, sorted) of the rows or groups ``items`` that
    could not be priced, and of those priced by the pricing library;
    ``model_at``/``how_at``: where an item holds its model and cost source."""
    missing: dict[str, None] = {}
    estimated: dict[str, None] = {}
    for item, s in items:
        model, how = item[model_at], item[how_at]
        if how == UNPRICED:
            missing[model_label(s.agent, model) if model else f"[{s.agent}] (no model recorded)"] = None
        elif how == 1:
            estimated[model_label(s.agent, model)] = None
    return sorted(missing), sorted(estimated)


def merged_groups(data: UsageData) -> list[list[Any]]:
    """Every counted message group (a fork's copies left out) summed across
    sessions per 15-minute slot, agent, project, model and cost source:
    ``[slot, model, how, messages, input, output, cache_write, cache_read,
    other, cost, first_ts, last_ts, agent, project]``, in order of first
    message, then of key (:func:`pi_session.usage.extract.merge_groups`,
    :func:`~pi_session.usage.extract.merged_order`). Day, week and month reports (any ``by``, any time zone: every
    zone's offset is a multiple of 15 minutes) need no more than this; the
    persistent digest of a sessions root (:mod:`pi_session.usage.digest`)
    keeps it. Memoised in ``data.merged``."""
    if data.merged is not None:
        return data.merged
    sessions = [(s.agent, s.project, s.groups if rows is None else group_rows(rows)) for s, rows in _deduplicated(data)]
    data.merged = sorted(merge_groups(sessions).values(), key=merged_order)
    return data.merged


def _check_arguments(kind: str, by: str | None, last: int | None) -> None:
    if kind not in KINDS or kind == "blocks":
        raise ValueError(f"{kind!r}: expected daily, weekly, monthly or session")
    if by is not None and by not in BY_KEYS:
        raise ValueError(f"--by {by!r}: expected project, model or agent")
    if last is not None and last < 1:
        raise ValueError("--last must be at least 1")


def usage_report(
    data: UsageData,
    kind: str = "daily",
    *,
    timezone: str | None = None,
    since: str | None = None,
    until: str | None = None,
    by: str | None = None,
    last: int | None = None,
) -> UsageReport:
    """Sum the messages of ``data`` per period or session.

    Args:
        data: :func:`pi_session.usage.load_usage`'s result.
        kind: ``daily``, ``weekly``, ``monthly`` or ``session``.
        timezone: an IANA zone name for the days (None: the machine's).
        since, until: first and last day kept (``YYYY-MM-DD`` or
            ``YYYYMMDD``, inclusive, in ``timezone``).
        by: also split each row by ``project``, ``model`` or ``agent``.
        last: keep only the last ``last`` periods (sessions: the ``last``
            most recently active).

    Returns:
        :class:`UsageReport`.

    Raises:
        ValueError: an unknown kind or ``by``, a bad date or time zone, or
            ``last`` below 1 (one-line messages).
    """
    _check_arguments(kind, by, last)
    if kind == "session":
        items: Iterable[tuple[list[Any], str, str, str]] = [(g, s.agent, s.project, s.session_id) for g, s in _counted_groups(data)]
    else:
        items = ((m, m[12], m[13], "") for m in merged_groups(data))
    return _report(items, kind, data.problems, timezone=timezone, since=since, until=until, by=by, last=last)


def report_of_groups(
    merged: list[list[Any]],
    problems: list[str],
    kind: str = "daily",
    *,
    timezone: str | None = None,
    since: str | None = None,
    until: str | None = None,
    by: str | None = None,
    last: int | None = None,
) -> UsageReport:
    """:func:`usage_report` of a day, week or month report from
    :func:`merged_groups` (as the persistent digest keeps them) and the
    damaged lines ``problems``; the same arguments, the same result.

    Raises:
        ValueError: as :func:`usage_report`; ``kind`` ``session`` (which
            needs every session's groups).
    """
    _check_arguments(kind, by, last)
    if kind == "session":
        raise ValueError("'session': the merged groups hold no sessions")
    return _report(((m, m[12], m[13], "") for m in merged), kind, problems, timezone=timezone, since=since, until=until, by=by, last=last)


def _report(
    items: Iterable[tuple[list[Any], str, str, str]],
    kind: str,
    problems: list[str],
    *,
    timezone: str | None,
    since: str | None,
    until: str | None,
    by: str | None,
    last: int | None,
) -> UsageReport:
    """The rows of a report from ``(group, agent, project, session id)``
    in time order (arguments checked by the caller)."""
    lo, hi = date_range(since, until)
    days = LocalDays(zone_of(timezone))
    day_of, of_slot = days.memo.get, days.of_slot
    groups: dict[tuple[str, str | None], UsageRow] = {}
    missing: dict[str, None] = {}
    estimated: dict[str, None] = {}
    weeks: dict[str, str] = {}
    labels: dict[tuple[str, str], str] = {}
    for row, agent, project, session_id in items:
        day = day_of(row[0]) or of_slot(row[0])  # a group's slot is its first message's
        if lo is not None or hi is not None:
            compact = day.replace("-", "")
            if (lo is not None and compact < lo) or (hi is not None and compact > hi):
                continue
        model, how = row[1], row[2]
        label = (labels.get((agent, model)) or labels.setdefault((agent, model), model_label(agent, model))) if model else None
        if how == UNPRICED:
            missing[label or f"[{agent}] (no model recorded)"] = None
        elif how == 1:
            estimated[model_label(agent, model)] = None
        if kind == "daily":
            key = day
        elif kind == "weekly":
            key = weeks.get(day) or weeks.setdefault(day, _week(day))
        elif kind == "monthly":
            key = day[:7]
        else:
            key = session_id
        group = None
        if by == "project":
            group = project
        elif by == "agent":
            group = agent
        elif by == "model":
            group = label or "(no model recorded)"
        acc = groups.get((key, group))
        if acc is None:
            acc = groups[(key, group)] = UsageRow(key, group)
        acc.add(row, label, project)
    rows = sorted(groups.values(), key=lambda r: (r.key, r.group or ""))
    if last is not None:
        if kind == "session":
            wanted = {r.key for r in sorted(rows, key=lambda r: r.last_ms or 0)[-last:]}
        else:
            wanted = set(sorted({r.key for r in rows})[-last:])
        rows = [r for r in rows if r.key in wanted]
    return UsageReport(kind, rows, by, sorted(missing), sorted(estimated), list(problems), timezone)
