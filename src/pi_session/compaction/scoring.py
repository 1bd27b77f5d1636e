"""Answering the compaction probes: does the context after a compaction
still hold a fact? (**beyond pi**)

A text probe is answered by one *line* of the summary or of a kept message
when that line contains the normalized expected text (looked for whole only
when it has 8+ characters or no key tokens), or at least
:data:`KEY_TOKEN_THRESHOLD` of its key tokens (all of them when it has 2 or
fewer; normalisation and key tokens: :mod:`pi_session.compaction.keywords`).
A file-list probe is answered when every path occurs verbatim in the summary
or the kept messages; an ``identifier`` probe when its string occurs
verbatim; an ``artifact`` probe when one line holds the path verbatim and a
change word (:data:`CHANGE_WORD_RE`). The summary is searched first; a probe answered only
by a kept message says so (``where="kept"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..session.context import convert_to_llm
from ..core.jsonio import js_stringify
from ..entries.questions import ASSISTANT, TOOL_RESULT, USER
from .keywords import clip, content_text, key_tokens, normalize

if TYPE_CHECKING:
    from .probes import Probe

__all__ = [
    "KEY_TOKEN_THRESHOLD",
    "FILE_PROBE_KINDS",
    "CHANGE_WORD_RE",
    "ProbeResult",
    "answer_probe",
    "answer_probes",
    "kept_messages_text",
]

KEY_TOKEN_THRESHOLD = 0.6
"""Share of a probe's key tokens one line must hold to answer it."""

FILE_PROBE_KINDS = ("modified_files", "read_files")
"""Probe kinds answered by paths rather than by text."""

CHANGE_WORD_RE = re.compile(
    r"\b(?:edit(?:s|ed|ing)?|wr(?:ote|ite|ites|itten)|creat(?:e|ed|es)|modif(?:y|ied|ies)|chang(?:e|ed|es)"
    r"|updat(?:e|ed|es)|add(?:s|ed)?|remov(?:e|ed|es)|renam(?:e|ed|es)|delet(?:e|ed|es)|fix(?:ed|es)?"
    r"|mov(?:e|ed|es)|rewr(?:ote|ite|itten)|replac(?:e|ed|es)|refactor(?:ed|s)?)\b",
    re.I,
)
"""A word saying what happened to a file: what an ``artifact`` probe needs
next to the path on one line."""


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
        if self.probe.kind in FILE_PROBE_KINDS:
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
    if probe.kind in FILE_PROBE_KINDS:
        missing = [p for p in probe.paths if p not in summary and p not in kept_text]
        in_summary = all(p in summary for p in probe.paths)
        found = not missing
        where = ("summary" if in_summary else "kept") if found else None
        score = 1.0 - len(missing) / len(probe.paths) if probe.paths else 1.0
        return ProbeResult(probe, found, where, score, "", missing)
    if probe.kind == "identifier":
        for where, text in (("summary", summary), ("kept", kept_text)):
            at = text.find(probe.expected)
            if at >= 0:
                line = text[text.rfind("\n", 0, at) + 1 : (text.find("\n", at) + 1 or len(text) + 1) - 1]
                return ProbeResult(probe, True, where, 1.0, clip(line, 200))
        return ProbeResult(probe, False, None, 0.0)
    if probe.kind == "artifact":
        path = probe.paths[0] if probe.paths else probe.expected
        for where, text in (("summary", summary), ("kept", kept_text)):
            for line in text.splitlines():
                if path in line and CHANGE_WORD_RE.search(line.replace(path, " ")):
                    return ProbeResult(probe, True, where, 1.0, clip(line, 200))
        return ProbeResult(probe, False, None, 0.0)
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
        if role in (USER, TOOL_RESULT):
            parts.append(content_text(msg.get("content")))
        elif role == ASSISTANT:
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
