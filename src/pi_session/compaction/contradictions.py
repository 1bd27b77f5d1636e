"""Contradictions between a summary and the history it stands for
(**beyond pi**).

A summary must state nothing its zone does not support. The checker reads
the summary's sections (:func:`pi_session.compaction.summary_format.parse_summary_sections`)
and compares them with the facts of the summarized messages followed by
the kept messages (:func:`pi_session.compaction.facts.analyze_history`:
a failure and its resolution can fall on either side of the cut):

- ``done_failed_later``: a Done item says a command ran (``Ran `X```), or
  says a command's subject passes or is fixed, while that command's latest
  run failed and nothing resolved it;
- ``blocked_passed_later``: a Blocked item quotes a command (or a file)
  whose failures were all resolved by a later success or a later reply
  saying it passes;
- ``empty_but_found``: a section says there is nothing (``(none)``,
  ``(none found)``) while the zone holds what belongs there (a constraint,
  a failure still unresolved, a decision, a changed file, the plan of the
  last reply or a request still waiting for one) and neither the rest of
  the summary (a split turn's prefix part) nor the kept messages hold it.

Every check is mechanical and errs towards silence: it flags only what it
can tie to one command or file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .facts import analyze_history
from .failures import command_key, command_subjects
from .keywords import clip, key_tokens
from .scoring import answer_probe, kept_messages_text
from .summary_format import BLOCKED, CONSTRAINTS, DECISIONS, DONE, NEXT, heading_title, section

__all__ = ["Contradiction", "find_contradictions"]

_CODE_RE = re.compile(r"`([^`]+)`")
_PASS_RE = re.compile(r"\b(?:pass(?:es|ed|ing)?|fixed|works|green|succeed(?:s|ed)?)\b", re.I)
_EMPTY_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*(?:\[[ xX]\]\s*)?\(?\s*(?:none(?: found)?|nothing|n/a)\s*\)?\s*\.?\s*$", re.I)


@dataclass(frozen=True)
class Contradiction:
    """One statement of the summary that the history contradicts.

    Attributes:
        kind: ``done_failed_later``, ``blocked_passed_later`` or
            ``empty_but_found``.
        section: the section key (``done``, ``blocked`` ...).
        statement: the summary's line.
        evidence: what the history shows instead (one line).
    """

    kind: str
    section: str
    statement: str
    evidence: str

    def to_json(self) -> dict[str, str]:
        """``{kind, section, statement, evidence}``."""
        return {"kind": self.kind, "section": self.section, "statement": self.statement, "evidence": self.evidence}


def _section_lines(summary: str) -> dict[str, list[str]]:
    """Raw lines under each heading of the summary format (empty markers
    included), by section key."""
    titles = {s.title.lower(): s.key for s in (section(k) for k in (CONSTRAINTS, DONE, BLOCKED, DECISIONS, NEXT))}
    out: dict[str, list[str]] = {}
    current: str | None = None
    for raw in summary.splitlines():
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*)$", raw)
        if m:
            current = titles.get(heading_title(m.group(1)))
            continue
        if current is not None and raw.strip():
            out.setdefault(current, []).append(raw.strip())
    return out


def find_contradictions(
    summary: str,
    zone: Sequence[Mapping[str, Any]],
    kept: Sequence[Mapping[str, Any]] = (),
    *,
    previous_summary: str | None = None,
) -> list[Contradiction]:
    """The contradictions between ``summary`` and its history (module
    docs). Pure.

    Args:
        summary: the summary text (file lists may be included).
        zone: LLM messages the summary stands for, oldest first.
        kept: LLM messages kept after it (they can resolve or repeat a
            failure of the zone).
        previous_summary: the previous compaction's summary, if any (its
            items count as known).

    Returns:
        The contradictions, in section order.
    """
    facts = analyze_history([*zone, *kept], previous_summary)
    zone_facts = analyze_history(zone, previous_summary)
    lines = _section_lines(summary)
    out: list[Contradiction] = []

    unresolved = facts.unresolved
    for line in lines.get(DONE, []):
        for err in unresolved:
            if not err.target:
                continue
            quoted = _CODE_RE.findall(line)
            ran = line.lstrip("-*[]xX ").startswith("Ran ") and any(err.key and command_key(q) == err.key for q in quoted)
            subjects = command_subjects(err.key) if err.key else set()
            claims = bool(_PASS_RE.search(line)) and bool(subjects) and bool(subjects & set(key_tokens(line, None)))
            if ran or claims:
                out.append(Contradiction("done_failed_later", DONE, line, err.describe()))
                break

    resolved_keys = {e.key for e in facts.errors if e.resolved and e.key}
    unresolved_keys = {e.key for e in unresolved if e.key}
    for line in lines.get(BLOCKED, []):
        for q in _CODE_RE.findall(line):
            key = command_key(q)
            if key and key in resolved_keys and key not in unresolved_keys:
                out.append(Contradiction("blocked_passed_later", BLOCKED, line, f"`{q}` succeeded later"))
                break

    present: dict[str, tuple[str, str, str]] = {}  # section -> (probe kind, expected, evidence)
    if zone_facts.constraints:
        c = zone_facts.constraints[-1]
        present[CONSTRAINTS] = ("constraint", c, f"constraint: {c}")
    still = [e for e in unresolved if e.index < len(zone)]  # failed in the zone, not resolved since
    if still:
        present[BLOCKED] = ("unresolved_error", still[-1].describe(), still[-1].describe())
    if zone_facts.decisions:
        d = zone_facts.decisions[-1]
        present[DECISIONS] = ("decision", d, f"decision: {d}")
    if zone_facts.edits:
        path, verb, _n = zone_facts.edits[-1]
        present[DONE] = ("artifact", f"{path} ({verb.lower()})", f"{verb} `{path}`")
    # a next step: the plan of the last reply, or a request still waiting for one (an answered request is none)
    step = zone_facts.plan_steps[0] if zone_facts.plan_steps else (zone_facts.latest_request if zone_facts.pending_request else "")
    if step:
        present[NEXT] = ("next_step", clip(step, 200), f"next step: {step}")
    kept_text = kept_messages_text(kept)
    for sec, (kind, expected, evidence) in present.items():
        items = lines.get(sec, [])
        if not items or not all(_EMPTY_RE.match(x) for x in items):
            continue
        # the fact may sit in another part of the summary (a split turn's prefix) or in the kept messages
        paths = (expected.rsplit(" (", 1)[0],) if kind == "artifact" else ()
        if answer_probe(cast(Any, _Fact(kind, expected, paths)), summary, kept_text).found:
            continue
        out.append(Contradiction("empty_but_found", sec, items[0], evidence))
    return out


@dataclass(frozen=True)
class _Fact:
    """What :func:`pi_session.compaction.scoring.answer_probe` reads of a probe."""

    kind: str
    expected: str
    paths: tuple[str, ...] = ()
