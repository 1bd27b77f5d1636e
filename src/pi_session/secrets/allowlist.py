"""Known false positives: :class:`AllowList`, read from a text file.

File format (UTF-8, one item a line): a value that is not a secret, written
as it appears (``AKIAIOSFODNN7EXAMPLE``); ``re:PATTERN`` for a Python
regular expression a whole value must match (``re:test-[0-9a-f]{32}``);
blank lines and lines starting with ``#`` are ignored. Leading and trailing
blanks of a line are dropped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import PiSessionError
from ..entries.records import StrPath

__all__ = ["ALLOW_LIST_ENV", "AllowList", "AllowListError"]

ALLOW_LIST_ENV = "PI_SESSION_SECRETS_ALLOW"
"""Environment variable naming the default allow-list file (the CLI's
``--allow-list`` wins)."""


class AllowListError(PiSessionError, ValueError):
    """An allow-list file cannot be read, or a ``re:`` line is not a valid
    pattern (the message names the file and line)."""


@dataclass(frozen=True)
class AllowList:
    """Values (exact) and patterns (whole value) that are not secrets."""

    values: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = field(default=())

    @classmethod
    def empty(cls) -> AllowList:
        """An allow-list allowing nothing."""
        return cls()

    @classmethod
    def from_text(cls, text: str, name: str = "<allow-list>") -> AllowList:
        """Parse allow-list text (the file format above).

        Raises:
            AllowListError: a ``re:`` line does not compile (names ``name``
                and the line number).
        """
        values: set[str] = set()
        patterns: list[re.Pattern[str]] = []
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("re:"):
                try:
                    patterns.append(re.compile(line[3:]))
                except re.error as exc:
                    raise AllowListError(f"{name}: line {n}: not a regular expression: {exc}") from None
            else:
                values.add(line)
        return cls(frozenset(values), tuple(patterns))

    @classmethod
    def load(cls, path: StrPath) -> AllowList:
        """Read an allow-list file.

        Raises:
            AllowListError: it cannot be read or holds a bad pattern.
        """
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise AllowListError(f"{path}: cannot read the allow-list: {getattr(exc, 'strerror', None) or exc}") from None
        return cls.from_text(text, os.fspath(path))

    def allows(self, value: str) -> bool:
        """Whether ``value`` is a known false positive."""
        return value in self.values or any(p.fullmatch(value) for p in self.patterns)
