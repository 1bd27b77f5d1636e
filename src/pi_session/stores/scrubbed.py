"""Stored lines that ``scrub`` changed since an import wrote them (**beyond
pi**): an import compares what the store holds with the lines it would
write (:func:`pi_session.stores.transfer.store_lines`), and a scrub of the
stored session must not make every later import of its source a conflict.

What is recognised, exactly (never a loose match):

- ``scrub --mode rewrite``: a stored record that is the source's record
  with spans of its strings replaced by redaction marks
  (:data:`REDACTION_MARK`, ``[REDACTED:<kind>]``), every other value, key
  and key order the same; a thinking block whose text was redacted may
  have lost its ``thinkingSignature`` (scrub drops it);
- ``scrub --mode edit``: ``context_edit`` entries whose replacement holds
  a redaction mark (:func:`scrub_edit`): entries added in the store, which
  the import passes over as it passes over every such addition
  (:mod:`pi_session.stores.additions`: the lines it appends continue from
  the last of them, so that the edits stay on the path to the new leaf),
  and such a re-parented line is recognised as the source line next time
  (:func:`same_entry`).

Pure functions of lines (bytes with their newline).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core.jsonio import dumps_line, loads
from ..entries.questions import CONTEXT_EDIT

__all__ = ["REDACTION_MARK", "scrub_edit", "same_entry"]

REDACTION_MARK = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
"""The mark ``scrub`` puts in place of a secret: the one pattern, which
:data:`pi_session.secrets.scanner.REDACTED_RE` names too."""

_MARK_BYTES = b"[REDACTED:"


def _parse(line: bytes) -> Any:
    try:
        return loads(line)
    except (ValueError, RecursionError):
        return None


def scrub_edit(line: bytes) -> tuple[str, str | None] | None:
    """``(id, parentId)`` when ``line`` is a ``context_edit`` entry whose
    replacement holds a redaction mark (one ``scrub --mode edit`` wrote),
    else None."""
    if _MARK_BYTES not in line or b'"context_edit"' not in line:
        return None
    rec = _parse(line)
    if not isinstance(rec, dict) or rec.get("type") != CONTEXT_EDIT or not isinstance(rec.get("id"), str):
        return None
    if _MARK_BYTES not in dumps_line(rec.get("replacement")):
        return None
    parent = rec.get("parentId")
    return rec["id"], parent if isinstance(parent, str) else None


def _redaction_pattern(stored: str) -> re.Pattern[str]:
    """The texts ``stored`` (holding marks) may have been before redaction:
    its text outside the marks literally, each mark standing for a
    non-empty span."""
    pieces = REDACTION_MARK.split(stored)
    return re.compile("(?:.+?)".join(re.escape(p) for p in pieces), re.S)


def _same_value(source: Any, stored: Any) -> bool:
    if isinstance(source, str):
        if not isinstance(stored, str):
            return False
        if stored == source:
            return True
        return "[REDACTED:" in stored and _redaction_pattern(stored).fullmatch(source) is not None
    if isinstance(source, dict):
        if not isinstance(stored, dict):
            return False
        keys = list(source)
        if list(stored) != keys:
            # scrub drops the signature of a thinking block whose text it redacted
            if not (
                source.get("type") == "thinking"
                and "thinkingSignature" in source
                and "thinkingSignature" not in stored
                and [k for k in keys if k != "thinkingSignature"] == list(stored)
                and stored.get("thinking") != source.get("thinking")
            ):
                return False
        return all(_same_value(source[k], stored[k]) for k in stored)
    if isinstance(source, list):
        return isinstance(stored, list) and len(stored) == len(source) and all(_same_value(a, b) for a, b in zip(source, stored))
    if isinstance(source, bool) or isinstance(stored, bool) or source is None or stored is None:
        return type(source) is type(stored) and source == stored
    return isinstance(stored, (int, float)) and isinstance(source, (int, float)) and stored == source


def same_entry(stored: bytes, source: bytes, edit_parents: Mapping[str, str | None]) -> bool:
    """Whether the stored line ``stored`` is the source line ``source``
    as a scrub may have left it: redacted (see the module docstring), or
    (``edit_parents``: the entries added in the store passed over so far,
    id -> parent: scrub's edits, labels, compactions, ...) re-parented
    onto the last of those entries after its parent. Lines
    equal byte for byte are the caller's first test; this parses both."""
    redacted = _MARK_BYTES in stored
    if not redacted and not edit_parents:
        return False
    st = _parse(stored)
    src = _parse(source)
    if not isinstance(st, dict) or not isinstance(src, dict):
        return False
    parent = st.get("parentId")
    if edit_parents and isinstance(parent, str) and parent in edit_parents:
        seen: set[str] = set()
        while isinstance(parent, str) and parent in edit_parents and parent not in seen:
            seen.add(parent)
            parent = edit_parents[parent]
        st = {**st, "parentId": parent}
    elif not redacted:
        return False
    return _same_value(src, st)
