"""Finding secrets in one text with detect-secrets: :class:`Scanner` (a
context manager holding detect-secrets' settings while it scans) and
:class:`Span` (where a secret is in the text, and its kind).

detect-secrets' plugins run as its own line scan runs them: for each line,
the line filters, then every plugin's ``analyze_line`` and the secret
filters (:func:`detect_secrets.core.scan.get_filters_with_parameter`).
Not :func:`detect_secrets.core.scan.scan_line`: that one is made for ad-hoc
exploration and turns on the plugins' *eager search* (every word counts as
a high-entropy string, whatever its entropy), which would flag most prose.

Plugins: every plugin detect-secrets 1.5 ships (cloud keys: AWS, Azure,
IBM, Cloudant, SoftLayer; private keys; GitHub, GitLab, Slack, Stripe,
Discord, Telegram, npm, PyPI, SendGrid, Mailchimp, Twilio, Square,
Artifactory and OpenAI tokens; JWTs; basic-auth URLs; keyword assignments
such as ``password = "…"``; quoted high-entropy strings) except
``IPPublicDetector`` (a public IP address is not a secret, and tool output
is full of them), plus ours (:mod:`.providers`: model providers' key
formats, ``.env``-style assignments). High-entropy thresholds
are detect-secrets' defaults, :data:`BASE64_LIMIT` and :data:`HEX_LIMIT`
(Shannon entropy in bits per character of a quoted string). No plugin
verifies a secret over the network (the verification filter is off).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any


__all__ = ["BASE64_LIMIT", "HEX_LIMIT", "REDACTED_RE", "Scanner", "Span", "kind_of", "redaction"]

BASE64_LIMIT = 4.5
"""Entropy (bits per character) above which a quoted base64-alphabet string
is reported (detect-secrets' default)."""
HEX_LIMIT = 3.0
"""Entropy (bits per character) above which a quoted hex string is reported
(detect-secrets' default)."""

REDACTED_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
"""What :func:`redaction` writes; a hit overlapping one is not reported
again (so a scrubbed session scans clean and ``scrub`` twice is a no-op)."""

_LEFT_OUT = ("IPPublicDetector",)
_FILENAME = "session-text"  # no extension: detect-secrets' "other" file type
_OFF_FILTERS = (
    # reads the file system for the (made-up) file name
    "detect_secrets.filters.common.is_invalid_file",
)
_PRIORITY = {"Secret Environment Variable": 2, "Secret Keyword": 2, "Basic Auth Credentials": 2, "Base64 High Entropy String": 3, "Hex High Entropy String": 3}


@functools.cache
def _provider_types() -> frozenset[str]:
    """The secret types of our provider plugins (detect-secrets, which
    they build on, loads only when a scan starts: it imports requests)."""
    from . import providers

    return frozenset(getattr(providers, name).secret_type for name in providers.PROVIDER_PLUGINS) - set(_PRIORITY)

_lock = threading.RLock()


def kind_of(secret_type: str) -> str:
    """The short kind of a detect-secrets secret type: ``"AWS Access Key"``
    → ``"aws-access-key"`` (lower case, runs of other characters → ``-``)."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def redaction(kind: str) -> str:
    """The text a secret of ``kind`` is replaced with: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Span:
    """A secret in a text: ``text[start:end]``, of detect-secrets type
    ``secret_type`` (e.g. ``"GitHub Token"``) and :attr:`kind`."""

    start: int
    end: int
    secret_type: str

    @property
    def kind(self) -> str:
        """:func:`kind_of` the type, e.g. ``"github-token"``."""
        return kind_of(self.secret_type)


def _plugin_config() -> list[dict[str, Any]]:
    from . import providers
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    names = sorted(plugin.__name__ for plugin in mapping.values())
    config: list[dict[str, Any]] = [{"name": n} for n in names if n not in _LEFT_OUT and n not in providers.PROVIDER_PLUGINS]
    for entry in config:
        if entry["name"] == "Base64HighEntropyString":
            entry["limit"] = BASE64_LIMIT
        elif entry["name"] == "HexHighEntropyString":
            entry["limit"] = HEX_LIMIT
    path = Path(providers.__file__).resolve()
    config += [{"name": n, "path": f"file://{path}"} for n in providers.PROVIDER_PLUGINS]
    return config



_KEYWORD_GATE: re.Pattern[str] | None = None


def _is_keyword(plugin: Any) -> bool:
    return type(plugin).__name__ == "KeywordDetector"


def _may_match(plugin: Any, text: str) -> bool:
    """False when ``plugin`` cannot find anything in ``text``: a cheap
    check before the expensive one. detect-secrets' keyword plugin matches
    only next to one of its deny-list words (every one of its patterns
    starts from ``DENYLIST``, case-insensitive), and its patterns are the
    slowest by far (about half of a scan's time on pi's sessions): text
    with none of those words skips it."""
    global _KEYWORD_GATE
    if not _is_keyword(plugin):
        return True
    if _KEYWORD_GATE is None:
        from detect_secrets.plugins.keyword import DENYLIST

        _KEYWORD_GATE = re.compile("|".join(DENYLIST), re.IGNORECASE)
    return _KEYWORD_GATE.search(text) is not None

class Scanner:
    """detect-secrets configured for session text, while the ``with`` block
    runs (its settings are process-global: scanners in several threads take
    turns, one at a time)::

        with Scanner(allow=AllowList.empty()) as scanner:
            spans = scanner.scan("token ghp_...")

    Args:
        allow: known false positives (an :class:`~.allowlist.AllowList`),
            or None.
    """

    def __init__(self, allow: Any = None) -> None:
        self.allow = allow
        self._stack: ExitStack | None = None
        self._plugins: list[Any] = []

    def __enter__(self) -> Scanner:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.core.scan import get_filters_with_parameter
        from detect_secrets.settings import get_filters, get_plugins, get_settings, transient_settings

        stack = ExitStack()
        stack.enter_context(_lock)
        try:
            stack.enter_context(transient_settings({"plugins_used": _plugin_config()}))
            get_settings().disable_filters(*_OFF_FILTERS)
            # the plugin classes known, now with ours (cached by detect-secrets)
            get_mapping_from_secret_type_to_class.cache_clear()
            stack.callback(get_mapping_from_secret_type_to_class.cache_clear)
            get_filters.cache_clear()
            self._plugins = list(get_plugins())
            self._line_filters = list(get_filters_with_parameter("line"))
            self._secret_filters = list(get_filters_with_parameter("secret"))
            self._context_filters = [f for f in get_filters_with_parameter("context") if f not in self._line_filters]
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def _filtered(self, filters: list[Any], **kwargs: Any) -> bool:
        from detect_secrets.util.inject import call_function_with_arguments

        for fn in filters:
            try:
                if call_function_with_arguments(fn, **kwargs):
                    return True
            except TypeError:  # a filter wanting an argument we do not have (as detect-secrets does)
                continue
        return False

    def scan(self, text: str) -> list[Span]:
        """The secrets in ``text``, in text order, not overlapping (where two
        plugins report overlapping text, the more specific wins: our
        provider plugins, then detect-secrets' token plugins, then keyword
        and basic-auth, then high entropy). Hits inside an earlier
        ``[REDACTED:…]`` and allow-listed values are left out.

        Raises:
            RuntimeError: used outside its ``with`` block.
        """
        if self._stack is None:
            raise RuntimeError("Scanner.scan outside its with block")
        found: list[tuple[int, int, int, str]] = []
        plugins = self._plugins
        if "\n" in text:
            # A gate: a plugin that finds nothing in the whole text finds
            # nothing in any of its lines (its patterns match within a line;
            # line starts and ends are whitespace or \W to them), so each
            # line runs only the plugins that found something in the whole.
            # The lines are joined with \v (whitespace and \W as \n is),
            # where the keyword patterns' "[^\v'\"]*" stops as at a line end.
            whole = text.replace("\n", "\v")
            # The keyword plugin is gated by its words alone, here and per line.
            plugins = [
                p for p in plugins
                if _may_match(p, whole) and (_is_keyword(p) or p.analyze_line(filename=_FILENAME, line=whole, line_number=1, context=None))
            ]
            if not plugins:
                return []
        else:
            plugins = [p for p in plugins if _may_match(p, text)]
        offset = 0
        for line in text.split("\n"):
            if len(line.strip()) >= 8:
                found.extend((p, s + offset, e + offset, t) for p, s, e, t in self._scan_line(line, plugins))
            offset += len(line) + 1
        if not found:
            return []
        marks = [m.span() for m in REDACTED_RE.finditer(text)] if "[REDACTED:" in text else []
        picked: list[tuple[int, int, str]] = []
        for _p, start, end, stype in sorted(found, key=lambda f: (f[0], f[1] - f[2], f[1])):
            if any(start < e and s < end for s, e, _t in picked) or any(start < e and s < end for s, e in marks):
                continue
            if self.allow is not None and self.allow.allows(text[start:end]):
                continue
            picked.append((start, end, stype))
        spans: list[Span] = []
        for s, e, t in sorted(_whole_key(text, s, e, t) + (t,) for s, e, t in picked):
            if spans and s < spans[-1].end:
                continue  # inside a private key block
            spans.append(Span(s, e, t))
        return spans

    def _scan_line(self, line: str, plugins: list[Any]) -> Iterator[tuple[int, int, int, str]]:
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.util.code_snippet import get_code_snippet

        context = None
        for plugin in plugins:
            if not _may_match(plugin, line):
                continue
            secrets = plugin.analyze_line(filename=_FILENAME, line=line, line_number=1, context=context)
            if not secrets:
                continue
            if context is None:
                context = get_code_snippet(lines=[line], line_number=1)
                if self._filtered(self._line_filters, filename=_FILENAME, line=line, context=context):
                    return
            for secret in secrets:
                value = secret.secret_value
                if not value or self._filtered(
                    self._secret_filters, filename=_FILENAME, secret=value, plugin=plugin, line=line
                ) or self._filtered(
                    self._context_filters, filename=_FILENAME, secret=value, plugin=plugin, line=line, context=context
                ):
                    continue
                stype = secret.type
                priority = 0 if stype in _provider_types() else _PRIORITY.get(stype, 1)
                spans = list(_occurrences(line, value))
                if isinstance(plugin, RegexBasedDetector) and len(value) < 8:
                    # a pattern whose group is a prefix (GitHub's "ghp", GitLab's "glpat"):
                    # the secret is the whole match
                    spans = [m.span() for pattern in plugin.denylist for m in pattern.finditer(line) if value in m.group(0)] or spans
                for start, end in spans:
                    yield priority, start, end, stype


def _occurrences(line: str, value: str) -> Iterator[tuple[int, int]]:
    start = line.find(value)
    while start >= 0:
        yield start, start + len(value)
        start = line.find(value, start + len(value))


_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")


def _whole_key(text: str, start: int, end: int, secret_type: str) -> tuple[int, int]:
    """A private key's span widened from the ``BEGIN … PRIVATE KEY`` that
    detect-secrets reports to the whole PEM block (its ``-----`` included,
    through the ``-----END …-----`` line, or to the end of the text when it
    is cut off): the key is the lines after the header."""
    if secret_type != "Private Key":
        return start, end
    while start > 0 and text[start - 1] == "-":
        start -= 1
    found = _PEM_END.search(text, end)
    return start, found.end() if found else len(text)
