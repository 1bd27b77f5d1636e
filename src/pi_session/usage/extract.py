"""The usage of one session's lines: which records count, their tokens,
model and cost (the rules ccusage's pi reader applies, :mod:`pi_session.usage`).

A line counts when it is a ``message`` record (or has no ``type``) whose
``message`` has ``role`` ``assistant`` and a ``usage`` object, with a
``timestamp`` pi's way (ISO 8601). Its tokens are ``usage``'s ``input``,
``output``, ``cacheWrite`` and ``cacheRead`` (a non-negative integer each,
anything else 0); when ``totalTokens`` is larger than their sum the rest is
counted as output when ``output`` is 0, else as "other" tokens that only
``totalTokens`` shows. A message with no tokens at all is left out. Its cost
is ``usage.cost.total`` when that is a number above 0; otherwise it is priced
from the token counts (:mod:`pi_session.usage.pricing`).
"""

from __future__ import annotations
from ..entries.questions import ASSISTANT, CUSTOM, MESSAGE

import datetime as _dt
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

import orjson

from .days import SLOT_MS
from .pricing import price

__all__ = ["Scan", "scan_lines", "group_rows", "merge_groups", "merged_order", "iso_ms", "RECORDED", "ESTIMATED", "UNPRICED", "AGENT_PREFIXES", "SLOT_MS"]

RECORDED, ESTIMATED, UNPRICED = 0, 1, 2
"""Where a message's cost comes from (a row's ``how``): recorded in the
session, estimated from the pricing library, or unknown (counted as 0 and
reported as missing pricing)."""

AGENT_PREFIXES = {"claude-code/": "claude-code", "codex/": "codex"}
"""``customType`` prefixes of the entries an import keeps, and the agent
they name (the earlier import layout; the current one names the agent in a
message's ``imported.agent``); a session without either is pi's own."""


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)


_FIRST_MS = (_dt.datetime(1, 1, 15, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS
_LAST_MS = (_dt.datetime(9999, 12, 15, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS


def iso_ms(text: str) -> int | None:
    """Milliseconds since the epoch of an ISO 8601 date-time with a zone
    (``2025-11-20T23:33:54.572Z``, ``...+09:00``), or None when it is not
    one (a date-time without a zone is not a moment) or is in the first or
    last two weeks of the calendar (years 1 and 9999), where the day or
    the week in another time zone could not be written."""
    if len(text) < 20 or text[10] not in "Tt":
        return None
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    try:
        ms = (moment - _EPOCH) // _MS
    except OverflowError:
        return None
    return ms if _FIRST_MS <= ms < _LAST_MS else None


def _count(value: Any) -> int:
    """A token count: a non-negative integer, anything else 0."""
    return value if type(value) is int and 0 <= value < 1 << 64 else 0


@dataclass
class Scan:
    """What :func:`scan_lines` found in a run of lines.

    Attributes:
        rows: one row per counted assistant message, ``[ts_ms, model,
            input, output, cache_write, cache_read, other, cost, how,
            key]``: ``ts_ms`` its record's timestamp (ms since the epoch,
            UTC); ``model`` the recorded model or None; token counts;
            ``other`` tokens only ``totalTokens`` counts; ``cost`` in US
            dollars; ``how`` :data:`RECORDED`, :data:`ESTIMATED` or
            :data:`UNPRICED`; ``key`` the message's identity within the
            session (the entry id, else its timestamp and counts).
        problems: ``(line number, message)`` of lines that are not JSON
            objects (skipped).
        lines: how many lines were scanned.
        agent: ``claude-code`` or ``codex`` when an import's entries were
            seen, else None.
        cwd: the session header's cwd, when the header was scanned.
        parent: the header's ``parentSession`` (a fork's origin), if any.
    """

    rows: list[list[Any]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    lines: int = 0
    agent: str | None = None
    cwd: str | None = None
    parent: str | None = None


def _row(record: dict[str, Any]) -> list[Any] | None:
    """The usage row of one record, or None when it does not count."""
    kind = record.get("type")
    if kind is not None and kind != MESSAGE:
        return None
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role") != ASSISTANT:
        return None
    usage = message.get("usage")
    if usage is None:
        return None
    stamp = record.get("timestamp")
    if not isinstance(stamp, str) or not stamp.strip():
        return None
    ts = iso_ms(stamp.strip())
    if ts is None:
        return None
    if not isinstance(usage, dict):
        usage = {}
    inp, out = _count(usage.get("input")), _count(usage.get("output"))
    cw, cr = _count(usage.get("cacheWrite")), _count(usage.get("cacheRead"))
    other = 0
    missing = _count(usage.get("totalTokens")) - (inp + out + cw + cr)
    if missing > 0:
        if out == 0:
            out = missing
        else:
            other = missing
    if inp + out + cw + cr + other == 0:
        return None
    model = message.get("model")
    model = model.strip() or None if isinstance(model, str) else None
    cost_obj = usage.get("cost")
    recorded = cost_obj.get("total") if isinstance(cost_obj, dict) else None
    if isinstance(recorded, (int, float)) and not isinstance(recorded, bool) and recorded > 0:
        cost, how = float(recorded), RECORDED
    else:
        provider = message.get("provider")
        estimate = price(model, provider if isinstance(provider, str) else None, inp, out, cw, cr, ts) if model else None
        cost, how = (estimate, ESTIMATED) if estimate is not None else (0.0, UNPRICED)
    entry_id = record.get("id")
    if isinstance(entry_id, str) and entry_id:
        key = f"{entry_id}@{stamp}"
    else:
        key = f"{stamp}:{model}:{inp}:{out}:{cw}:{cr}:{other}:{cost!r}"
    return [ts, model, inp, out, cw, cr, other, cost, how, key]


def group_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows summed per 15-minute slot, model and cost source: ``[slot,
    model, how, messages, input, output, cache_write, cache_read, other,
    cost, first_ts, last_ts]`` (``slot``: ``ts_ms // SLOT_MS``), in order
    of first message. What day, week, month and session reports read."""
    groups: dict[tuple[int, Any, int], list[Any]] = {}
    for ts, model, inp, out, cw, cr, other, cost, how, _key in rows:
        k = (ts // SLOT_MS, model, how)
        g = groups.get(k)
        if g is None:
            groups[k] = [k[0], model, how, 1, inp, out, cw, cr, other, cost, ts, ts]
            continue
        g[3] += 1
        g[4] += inp
        g[5] += out
        g[6] += cw
        g[7] += cr
        g[8] += other
        g[9] += cost
        if ts < g[10]:
            g[10] = ts
        if ts > g[11]:
            g[11] = ts
    return sorted(groups.values(), key=lambda g: g[10])


def merge_groups(sessions: Iterable[tuple[str, str, list[list[Any]]]], keys: set[tuple[Any, ...]] | None = None) -> dict[tuple[Any, ...], list[Any]]:
    """The counted groups of sessions (``(agent, project, groups)`` in
    session order, ``groups`` as :func:`group_rows` gives them) summed per
    15-minute slot, agent, project, model and cost source: ``key -> [slot,
    model, how, messages, input, output, cache_write, cache_read, other,
    cost, first_ts, last_ts, agent, project]`` with ``key`` ``(slot,
    agent, project, model, how)``; only the keys in ``keys`` when given.

    A key's sums are taken over its groups in order of first message, then
    of session: the same sums, to the last bit of the cost, whichever other
    keys are merged with it (what lets the digest of a sessions root be
    brought up to date one session at a time)."""
    found: dict[tuple[Any, ...], list[list[Any]]] = {}
    slots = None if keys is None else {k[0] for k in keys}
    for agent, project, groups in sessions:
        for g in groups:
            if slots is not None and g[0] not in slots:
                continue
            k = (g[0], agent, project, g[1], g[2])
            if keys is not None and k not in keys:
                continue
            bucket = found.get(k)
            if bucket is None:
                found[k] = [g]
            else:
                bucket.append(g)
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for k, bucket in found.items():
        if len(bucket) > 1:
            bucket.sort(key=lambda g: g[10])
        m = merged[k] = [*bucket[0][:12], k[1], k[2]]
        for g in bucket[1:]:
            for i in range(3, 10):
                m[i] += g[i]
            if g[10] < m[10]:
                m[10] = g[10]
            if g[11] > m[11]:
                m[11] = g[11]
    return merged


def merged_order(m: list[Any]) -> tuple[Any, ...]:
    """The sort key of a merged group (:func:`merge_groups`): its first
    message, then its key; merged groups are kept in this order."""
    return (m[10], m[0], m[12], m[13], m[1] is None, m[1] or "", m[2])


def scan_lines(data: bytes, first_line: int = 1) -> Scan:
    """The usage rows of complete JSONL lines (``data`` ends with ``\\n``
    or is empty), numbered from ``first_line``.

    Lines that are not JSON objects are listed in ``problems`` and skipped;
    blank lines are ignored. Raises nothing for bad input."""
    out = Scan()
    loads = orjson.loads
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out.lines = len(lines)
    for n, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        has_usage = b'"usage"' in line
        if not has_usage and b'"customType"' not in line and b'"session"' not in line:
            # only the shape is checked: a line that cannot be a JSON object
            stripped = line.strip()
            if stripped[:1] != b"{" or stripped[-1:] != b"}":
                out.problems.append((n, "not a JSON object (skipped)"))
            continue
        try:
            record = loads(line)
        except orjson.JSONDecodeError as exc:
            out.problems.append((n, f"invalid JSON (skipped): {exc}"))
            continue
        if not isinstance(record, dict):
            out.problems.append((n, "not a JSON object (skipped)"))
            continue
        kind = record.get("type")
        if kind == "session" and out.cwd is None and isinstance(record.get("cwd"), str):
            out.cwd = record["cwd"]
            if isinstance(record.get("parentSession"), str):
                out.parent = record["parentSession"]
        elif kind == MESSAGE and out.agent is None and isinstance(record.get("imported"), dict):
            agent = record["imported"].get("agent")
            if agent in AGENT_PREFIXES.values():
                out.agent = agent
        elif kind == CUSTOM and out.agent is None:
            custom = record.get("customType")
            if isinstance(custom, str):
                for prefix, agent in AGENT_PREFIXES.items():
                    if custom.startswith(prefix):
                        out.agent = agent
        if has_usage:
            row = _row(record)
            if row is not None:
                out.rows.append(row)
    return out
