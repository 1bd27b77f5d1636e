"""Secrets in sessions (beyond pi): find them (:func:`find_secrets`, the
``secrets`` command), keep them from the model
(:func:`redact_messages`, ``redact_secrets=True``) and remove them
(:func:`pi_session.operations.scrub_session`, the ``scrub`` command).

Scanned: every text a session holds (:mod:`.fields`): user and assistant
text, thinking (and reasoning kept as JSON in ``thinkingSignature``),
tool-call arguments, tool results, bash commands and output, compaction
and branch summaries, custom data and messages, labels, session names,
context-edit replacements and the header, at any depth (values under
structural keys unless plain ids and names), records split over lines
rejoined and decoded, and a session file's side files (torn and rejected
lines, backups: :func:`.finding.side_files`). Detected by the formats of
:mod:`.providers` behind one Aho-Corasick prefilter (:mod:`.scanner`).
Known false positives: an :class:`AllowList` file.

Example::

    from pi_session.secrets import find_secrets
    for hit in find_secrets("session.jsonl"):
        print(hit.entry_id, hit.field, hit.kind, hit.preview)   # never the secret
"""

from __future__ import annotations

from typing import Any

from .allowlist import ALLOW_LIST_ENV, AllowList, AllowListError
from .fields import FIELD_KINDS, text_fields
from .finding import SecretHit, find_secrets, mask, redact_text
from .purge import purge_caches
from .scanner import Scanner, Span, redaction
from .scrub import ScrubResult, redact_value, redacted_lines, redacted_records, shown_records

__all__ = [
    "ALLOW_LIST_ENV", "AllowList", "AllowListError", "FIELD_KINDS", "Scanner", "ScrubResult", "SecretHit", "Span",
    "find_secrets", "mask", "purge_caches", "redact_messages", "redact_text", "redact_value", "redaction",
    "redacted_lines", "redacted_records", "shown_records", "text_fields",
]


def redact_messages(messages: list[Any], allow: AllowList | None = None) -> list[Any]:
    """``messages`` (what is sent to a model) with every secret in their
    text replaced by ``[REDACTED:<kind>]``: a new list; messages without a
    secret are the same objects. Never mutates its input."""
    with Scanner(allow) as scanner:
        return [redact_value(m, scanner) for m in messages]
