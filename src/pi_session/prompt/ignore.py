"""A small gitignore-style matcher used while walking skill directories.

pi skips skill files and directories excluded by ``.gitignore``, ``.ignore`` and
``.fdignore`` files found along the walk (it uses the npm ``ignore`` package).
This module covers the gitignore syntax that matters in practice: ``*``, ``?``,
``**``, bracket classes, ``\\`` escapes, negation with ``!``, directory-only
patterns ending in ``/``, anchoring by an inner ``/``, case-insensitive
matching (the ``ignore`` package's default) and "a path inside an excluded
directory is excluded, whatever later rules say".

Why not ``pathspec``: its gitignore pattern (``GitIgnoreSpecPattern``,
a.k.a. ``gitwildmatch``) compiles ``a/**`` to ``^a/``, which matches the
directory ``a/`` itself; git and the ``ignore`` package match only what is
inside it, so with pathspec a later ``!a/b/`` could no longer bring back a
subdirectory (tests/test_prompt_skills.py::test_ignore_matcher, case
``a/**`` / ``a/``). It is also case-sensitive only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool


def _translate_class(pattern: str, start: int) -> tuple[str, int] | None:
    """Translate the bracket expression at ``pattern[start] == '['``.

    Returns ``(regex source, index after ']')`` or ``None`` when unterminated."""
    i = start + 1
    negated = False
    if i < len(pattern) and pattern[i] in "!^":
        negated = True
        i += 1
    members: list[str] = []
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            body = "".join(members)
            if negated:
                return f"[^/{body}]", i + 1
            return f"(?!/)[{body}]", i + 1
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
            ch = pattern[i]
        if (
            i + 2 < len(pattern)
            and pattern[i + 1] == "-"
            and pattern[i + 2] != "]"
        ):
            lo, hi = ch, pattern[i + 2]
            if lo <= hi:
                members.append(f"{re.escape(lo)}-{re.escape(hi)}")
            else:
                members.append(re.escape(lo))
            i += 3
        else:
            members.append(re.escape(ch))
            i += 1
        first = False
    return None


def _compile(pattern: str) -> _Rule | None:
    """Compile one (already prefixed) gitignore line into a rule, or ``None``."""
    negated = pattern.startswith("!")
    if negated:
        pattern = pattern[1:]
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = pattern.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(pattern):
        stripped += " "
    pattern = stripped
    if not pattern:
        return None
    dir_only = pattern.endswith("/") and not pattern.endswith("\\/")
    if dir_only:
        pattern = pattern.rstrip("/")
    if pattern.startswith("/"):
        pattern = pattern[1:]
        anchored = True
    else:
        anchored = "/" in pattern
    if not pattern:
        return None

    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            at_seg_start = i == 0 or pattern[i - 1] == "/"
            at_seg_end = j == n or pattern[j] == "/"
            if stars >= 2 and at_seg_start and at_seg_end:
                if j == n:
                    out.append(".+" if i > 0 else ".*")
                    i = j
                else:
                    out.append("(?:.*/)?")
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            translated = _translate_class(pattern, i)
            if translated is None:
                return _Rule(re.compile(r"(?!)"), negated)
            source, i = translated
            out.append(source)
        elif ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    body = "".join(out)
    head = "^" if anchored else "^(?:.*/)?"
    tail = "/$" if dir_only else "/?$"
    return _Rule(re.compile(head + body + tail, re.IGNORECASE | re.DOTALL), negated)


def _prefix_line(line: str, prefix: str) -> str | None:
    """Re-root one ignore-file line found ``prefix`` below the walk's root
    (pi's rule: comments and blanks dropped, a leading ``/`` removed, the
    directory prefix glued in front, ``!`` kept in front)."""
    if not line.strip():
        return None
    if line.lstrip().startswith("#") and not line.lstrip().startswith("\\#"):
        return None
    pattern = line
    negated = False
    if pattern.startswith("!"):
        negated = True
        pattern = pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    if pattern.startswith("/"):
        pattern = pattern[1:]
    prefixed = f"{prefix}{pattern}" if prefix else pattern
    return f"!{prefixed}" if negated else prefixed


@dataclass
class IgnoreMatcher:
    """Accumulates ignore rules while a directory tree is walked.

    Paths given to :meth:`ignores` are relative to the walk's root, use ``/``,
    and end with ``/`` for directories."""

    rules: list[_Rule] = field(default_factory=list)

    def add_rules_from_dir(self, directory: str, root: str) -> None:
        """Read the ignore files of ``directory`` (if any) and add their rules,
        re-rooted relative to ``root``. Unreadable files are skipped silently,
        as pi does."""
        rel = os.path.relpath(directory, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in IGNORE_FILE_NAMES:
            path = os.path.join(directory, name)
            if not os.path.exists(path):
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            for line in re.split(r"\r?\n", text):
                prefixed = _prefix_line(line, prefix)
                if prefixed is None:
                    continue
                rule = _compile(prefixed)
                if rule is not None:
                    self.rules.append(rule)

    def _test(self, path: str) -> bool | None:
        verdict: bool | None = None
        for rule in self.rules:
            if rule.regex.match(path):
                verdict = not rule.negated
        return verdict

    def ignores(self, path: str) -> bool:
        """True when ``path`` (or one of its parent directories) is excluded."""
        if not self.rules:
            return False
        parts = path.rstrip("/").split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth]) + "/"
            if self._test(parent):
                return True
        return bool(self._test(path))
