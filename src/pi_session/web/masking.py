"""The one rule by which ``pi-session serve`` masks secrets in everything
it shows from the store: pages, API answers, search hits, live events,
usage reports and exports.

Every secret the scanner (:mod:`pi_session.secrets`) finds in a string
shown is replaced by ``[REDACTED:<kind>]``, before anything is cut to
length (a secret is never shown in part). In a session record the strings
scanned are those its entry descriptor declares as text
(:func:`pi_session.secrets.redact_value`, what ``export --redact`` masks):
ids, times and the names of models and tools are structure and stay as
they are; in any other value (a session name, a cwd, a search hit, a
usage report) every string is scanned. A request asking ``?secrets=show``
gets :data:`SHOWN`, which changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MASKED", "SHOWN", "Masking", "masking_for"]


class Masking:
    """Masks secrets in what the server shows (see the module docstring),
    or changes nothing when not :attr:`enabled`.

    Attributes:
        enabled: whether secrets are masked.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def text(self, text: str) -> str:
        """``text`` with every secret found replaced by ``[REDACTED:<kind>]``."""
        if not self.enabled or not text:
            return text
        from ..secrets import Scanner, redact_text

        with Scanner() as scanner:
            return redact_text(text, scanner.scan(text))

    def cut(self, text: str, length: int, *, lookahead: int = 16_384) -> str:
        """The first ``length`` characters of ``text`` as shown: masked
        first (the text up to ``lookahead`` characters past the cut, so a
        secret crossing it is found whole), then cut."""
        if not self.enabled:
            return text[:length]
        return self.text(text[: length + lookahead])[:length]

    def strings(self, value: Any) -> Any:
        """A JSON value with every string in it masked (a new value; the
        same one when not :attr:`enabled`)."""
        if not self.enabled or value is None:
            return value
        from ..secrets import Scanner, redact_text

        with Scanner() as scanner:
            return _map_strings(value, lambda text: redact_text(text, scanner.scan(text)))

    def record(self, value: Any) -> Any:
        """A session record (or a message, or content) with the secrets of
        its text fields masked (:func:`pi_session.secrets.redact_value`;
        the same object when it holds none)."""
        if not self.enabled or value is None:
            return value
        from ..secrets import Scanner, redact_value

        with Scanner() as scanner:
            return redact_value(value, scanner)

    def manager(self, manager: Any) -> Any:
        """A session (:class:`pi_session.SessionManager`) as shown: when
        :attr:`enabled`, an in-memory copy whose every record is masked by
        :meth:`record`'s rule (:func:`pi_session.operations.redacted_manager`);
        else ``manager`` itself."""
        if not self.enabled:
            return manager
        from ..operations import redacted_manager

        return redacted_manager(manager)

    def jsonl(self, data: bytes, *, session: str | None = None) -> bytes:
        """A session's stored lines as shown: each record holding a secret
        masked by :meth:`record`'s rule and written again, every other
        line byte for byte (:func:`pi_session.operations.redacted_jsonl`)."""
        if not self.enabled:
            return data
        from ..operations import redacted_jsonl

        masked, _found = redacted_jsonl(data, session=session)
        return masked


MASKED = Masking(True)
"""Secrets masked (every request's default)."""

SHOWN = Masking(False)
"""Secrets shown (``?secrets=show``)."""


def masking_for(redact: bool) -> Masking:
    """:data:`MASKED` when ``redact``, else :data:`SHOWN`."""
    return MASKED if redact else SHOWN


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (JSON) with every string ``change(text)``."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    return value
