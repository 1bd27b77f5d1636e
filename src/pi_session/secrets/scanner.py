"""Finding secrets in one text: :class:`Scanner` (the detectors of
:mod:`.providers` behind one prefilter) and :class:`Span` (where a secret
is in the text, and its kind).

How a text is scanned, fast: one compiled alternation of every detector's
anchors (:attr:`Detector.anchors`: cheap literals such as ``sk-``,
``ghp_``, ``token``, ``://``) runs over the lower-cased text; a text
without an anchor (most text) is done. For each anchor found, only the
detectors with that anchor run, and only over the line holding it (a
private key block: from the anchor on). Overlapping hits keep the most
specific (:attr:`Detector.priority`, then the longest); hits inside an
earlier ``[REDACTED:…]`` and allow-listed values are left out.

detect-secrets (a dependency) is the reference the formats were checked
against and the speed is measured next to (``bench/secrets_bench.py``);
its plugins are not run: their line-by-line scan of every line with every
plugin is about 20 times slower, and its high-entropy plugins report
hashes, ids and image data, which are not secrets.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ..stores.scrubbed import REDACTION_MARK
from .providers import DETECTORS, Detector

__all__ = ["MIN_SECRET", "REDACTED_RE", "Scanner", "Span", "kind_of", "redaction"]

REDACTED_RE = REDACTION_MARK
"""What :func:`redaction` writes (one pattern, kept with the import's
check of scrubbed lines, :mod:`pi_session.stores.scrubbed`); a hit
overlapping one is not reported again (so a scrubbed session scans clean
and ``scrub`` twice is a no-op)."""

MIN_SECRET = 8
"""The shortest text that can hold a secret the scanner finds (characters)."""

_ANCHORS: dict[str, tuple[int, ...]] = {}
for _n, _det in enumerate(DETECTORS):
    for _anchor in _det.anchors:
        _ANCHORS[_anchor] = (*_ANCHORS.get(_anchor, ()), _n)


@functools.cache
def _automaton() -> Any:
    """One Aho-Corasick automaton of every anchor (:mod:`ahocorasick`,
    built once): ``iter(text)`` gives ``(end index, (anchor length,
    detector indexes))`` for every occurrence, overlapping ones included."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for anchor, dets in _ANCHORS.items():
        automaton.add_word(anchor, (len(anchor), dets))
    automaton.make_automaton()
    return automaton


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def kind_of(secret_type: str) -> str:
    """The short kind of a secret type: ``"AWS Access Key"`` →
    ``"aws-access-key"`` (lower case, runs of other characters → ``-``)."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def redaction(kind: str) -> str:
    """The text a secret of ``kind`` is replaced with: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Span:
    """A secret in a text: ``text[start:end]``, of type ``secret_type``
    (e.g. ``"GitHub Token"``) and :attr:`kind`."""

    start: int
    end: int
    secret_type: str

    @property
    def kind(self) -> str:
        """:func:`kind_of` the type, e.g. ``"github-token"``."""
        return kind_of(self.secret_type)


class Scanner:
    """The secret detectors (:mod:`.providers`), used in a ``with`` block::

        with Scanner(allow=AllowList.empty()) as scanner:
            spans = scanner.scan("token ghp_...")

    Scanning holds no global state: scanners in several threads run at once.

    Args:
        allow: known false positives (an :class:`~.allowlist.AllowList`),
            or None.
    """

    def __init__(self, allow: Any = None) -> None:
        self.allow = allow
        self._open = False

    def __enter__(self) -> Scanner:
        self._open = True
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._open = False

    def scan(self, text: str) -> list[Span]:
        """The secrets in ``text``, in text order, not overlapping (where two
        detectors report overlapping text, the more specific wins: prefixed
        formats, then URL passwords and headers, then assignments; then the
        longer). Hits inside an earlier ``[REDACTED:…]``, on a line marked
        ``pragma: allowlist secret`` (detect-secrets' inline marker) and
        allow-listed values are left out.

        Raises:
            RuntimeError: used outside its ``with`` block.
        """
        if not self._open:
            raise RuntimeError("Scanner.scan outside its with block")
        if len(text) < MIN_SECRET:
            return []
        lowered = text.lower()
        if len(lowered) != len(text):  # a few characters lower-case to two: keep the offsets
            lowered = text.translate(_ASCII_LOWER)
        windows: dict[int, list[list[int]]] = {}
        starts: set[tuple[int, int]] = set()
        found: set[tuple[int, int, int, str]] = set()
        for end, (size, dets) in _automaton().iter(lowered):
            at = end - size + 1
            for n in dets:
                det = DETECTORS[n]
                before, after = det.reach
                if det.multiline:
                    hi = len(text)
                else:
                    hi = text.find("\n", at, at + after)
                    hi = min(len(text), at + after) if hi < 0 else hi
                if det.at_anchor:
                    if (n, at) not in starts:
                        starts.add((n, at))
                        hit = det.pattern.match(text, at, hi)
                        if hit is not None:
                            _take(det, hit, found)
                    continue
                lo = max(0, at - before)
                lo = max(lo, text.rfind("\n", lo, at) + 1)
                spans = windows.setdefault(n, [])
                if spans and lo <= spans[-1][1]:
                    spans[-1][1] = max(spans[-1][1], hi)
                else:
                    spans.append([lo, hi])
        for n, spans in windows.items():
            det = DETECTORS[n]
            for lo, hi in spans:
                for hit in det.pattern.finditer(text, lo, hi):
                    _take(det, hit, found)
        if not found:
            return []
        marks = [m.span() for m in REDACTED_RE.finditer(text)] if "[REDACTED:" in text else []
        if _PRAGMA in lowered:  # detect-secrets' inline marker: nothing on its line is reported
            marks += [_line_span(text, m.start()) for m in re.finditer(re.escape(_PRAGMA), lowered)]
        picked: list[tuple[int, int, str]] = []
        for _p, start, end, stype in sorted(found, key=lambda f: (f[0], f[1] - f[2], f[1])):
            if any(start < e and s < end for s, e, _t in picked) or any(start < e and s < end for s, e in marks):
                continue
            if self.allow is not None and self.allow.allows(text[start:end]):
                continue
            picked.append((start, end, stype))
        return [Span(s, e, t) for s, e, t in sorted(picked)]


_PRAGMA = "pragma: allowlist secret"


def _line_span(text: str, at: int) -> tuple[int, int]:
    """The span of the line of ``text`` holding ``at``."""
    end = text.find("\n", at)
    return text.rfind("\n", 0, at) + 1, len(text) if end < 0 else end


def _take(det: Detector, hit: re.Match[str], found: set[tuple[int, int, int, str]]) -> None:
    """Add the secret of ``det``'s match ``hit`` to ``found`` (priority,
    start, end, type) when it passes the detector's checks."""
    start, end = _secret_span(hit)
    if end - start < 3 or (det.check is not None and not det.check(hit.string[start:end])):
        return
    if det.accept is not None and not det.accept(hit):
        return
    found.add((det.priority, start, end, det.type_for(hit)))


def _secret_span(hit: re.Match[str]) -> tuple[int, int]:
    """Where the secret of a detector's match is: its ``secret`` or
    ``qsecret`` group when one matched, else the whole match."""
    groups = hit.re.groupindex
    for name in ("qsecret", "secret"):
        if name in groups and hit.group(name) is not None:
            return hit.span(name)
    return hit.span()
