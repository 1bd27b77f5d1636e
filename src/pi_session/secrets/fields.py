"""The text fields secrets are looked for in: the entry model's one walk
(:mod:`pi_session.entries.text`), driven by each record type's declaration
of which of its fields hold text, exactly per entry type, message role and
content-block type.

Every string of a record is scanned, at any depth, except the plain ids and
names of the declared structural fields of the declared objects (an entry's
``id`` or ``timestamp``, a message's ``role``, ``provider`` or ``model``, a
tool call's ``id`` and ``name``; a string there of at most 256 characters
without blanks) and the base64 ``data`` of image blocks. A key named like
a structural field inside tool arguments, ``details``, ``data`` or any other
free JSON is text like the rest; so is a signature (``thinkingSignature``,
``textSignature``): one holding a JSON object or array (the reasoning item
a Codex import or an Agents SDK session keeps in ``thinkingSignature``) is
scanned as that value (its fields are paths under the signature's,
``…thinkingSignature.summary[0].text``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..entries import FIELD_KINDS, render_path, replace_strings, scanned_strings, text_fields as _entry_text_fields

__all__ = ["FIELD_KINDS", "field_kind", "render_path", "replace_strings", "scanned_strings", "text_fields"]


def text_fields(record: Any) -> Iterator[tuple[str, str]]:
    """The scanned strings of ``record`` (any JSON value; a record is an
    object): ``(path, text)`` pairs in document order, ``path`` in
    JavaScript notation relative to the record (``message.content[0].text``,
    ``message.content[1].arguments.command``; an object key that is not an
    identifier is quoted: ``details["a b"]``)."""
    for field in _entry_text_fields(record):
        yield field.path, field.text


def field_kind(record: Mapping[str, Any], path: str) -> str:
    """The kind of text field ``path`` of ``record`` (one of
    :data:`FIELD_KINDS`), ``"other"`` for a path that is not one of its
    text fields."""
    for field in _entry_text_fields(record):
        if field.path == path:
            return field.kind
    return "other"
