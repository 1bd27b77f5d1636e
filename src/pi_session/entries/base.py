"""What an entry descriptor is made of: :class:`EntryDescriptor` and the
vocabulary of its text-field declaration (:class:`Shape`, :class:`Variant`,
:class:`Content` and the leaf roles).

A record is plain JSON as decoded from the file. Its descriptor says, field
by field, what each value is, so that every feature that reads text out of
a record (secrets, search, export, the viewer) agrees on one list:

- :data:`PLAIN`: a structural value (an id, a time, a role, the name of a
  model or a tool). A plain string there (at most :data:`PLAIN_MAX`
  characters, no blanks) is not text; a longer string or one with blanks
  is, and any other JSON value is walked as :data:`JSON`;
- :data:`TEXT`: a string of text (anything else there is walked as :data:`JSON`);
- :data:`JSON`: an arbitrary JSON value (tool arguments, ``details``,
  ``data``): every string in it at any depth is text, except the base64
  ``data`` of an image block (an object of ``type`` ``"image"``);
- :data:`SIGNATURE`: a provider's signature: text, and when it holds a JSON
  object or array (the reasoning item a Codex import or an Agents SDK
  session keeps in ``thinkingSignature``) that value, walked as :data:`JSON`;
- :data:`BINARY`: base64 data, never text;
- a :class:`Shape`: an object with known fields; a :class:`Variant`: an
  object whose shape depends on one of its fields (a message's ``role``, a
  block's ``type``); a :class:`Content`: a message content (a string, or a
  list of content blocks).

A field a shape does not declare is walked as its shape's ``rest``
(:data:`JSON` unless said otherwise), so a field pi adds later is scanned
until it is declared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, Union

__all__ = [
    "BINARY", "JSON", "PLAIN", "PLAIN_MAX", "SIGNATURE", "TEXT", "Content", "EntryDescriptor", "Leaf", "Role",
    "Shape", "Variant", "entry_fields",
]

Leaf = Literal["plain", "text", "json", "signature", "binary"]
"""The roles of a value that is not walked by a shape (see the module docstring)."""

PLAIN: Leaf = "plain"
TEXT: Leaf = "text"
JSON: Leaf = "json"
SIGNATURE: Leaf = "signature"
BINARY: Leaf = "binary"

PLAIN_MAX = 256
"""The longest string (characters) under a :data:`PLAIN` field that is
taken as an id or a name rather than text."""


@dataclass(frozen=True)
class Shape:
    """An object with known fields.

    Attributes:
        fields: field name → its role.
        kind: the field kind of the text found below this object (one of
            :data:`pi_session.entries.FIELD_KINDS`), or None to keep the
            kind of the object holding it.
        rest: the role of a field not in ``fields``.
    """

    fields: Mapping[str, Role]
    kind: str | None = None
    rest: Role = "json"


@dataclass(frozen=True)
class Variant:
    """An object whose shape is chosen by the string value of its field
    ``key`` (``shapes[value]``, else ``other``)."""

    key: str
    shapes: Mapping[str, Shape]
    other: Shape


@dataclass(frozen=True)
class Content:
    """A message content: a string (text), or a list whose objects are
    walked as ``blocks`` (other items as :data:`JSON`)."""

    blocks: Variant


Role: TypeAlias = Union[Leaf, Shape, Variant, Content]
"""What a value is, for the text-field walk."""


ENTRY_BASE: dict[str, Role] = {"type": PLAIN, "id": PLAIN, "parentId": PLAIN, "timestamp": PLAIN}
"""The fields every entry has (type, id, parentId, ISO timestamp)."""


def entry_fields(text_kind: str | None, /, **fields: Role) -> Shape:
    """The :class:`Shape` of an entry type: the common entry fields
    (:data:`ENTRY_BASE`) plus ``fields``, its text of field kind ``text_kind``."""
    return Shape({**ENTRY_BASE, **fields}, text_kind)


def no_messages(entry: Mapping[str, Any], leading: bool) -> list[dict[str, Any]]:
    """The context contribution of an entry that contributes none."""
    return []


@dataclass(frozen=True)
class EntryDescriptor:
    """Everything the package knows about one entry type pi writes.

    Attributes:
        TYPE: the record's ``type`` on the wire (``"compaction"``); None for
            the descriptor of unknown types.
        shape: the TypedDict of the record.
        fields: which of its fields hold text (a :class:`Shape`; walked by
            :func:`pi_session.entries.text_fields`).
        context_messages: the agent messages the entry contributes to the
            model context before context edits, ``(entry, leading) ->
            messages``; ``leading`` is true at position 0 of the context
            entries (where a compaction contributes its summary). pi 1.6's
            ``sessionEntryToContextMessages``.
        cut_point: whether compaction may cut the session at this entry
            (when the messages it contributes have a role that may start
            the kept part, :data:`pi_session.entries.CUT_POINT_ROLES`); a
            compaction entry never is one.
        summary: one line saying what the entry records.
    """

    TYPE: str | None
    shape: Any
    fields: Shape
    summary: str
    context_messages: Callable[[Mapping[str, Any], bool], list[dict[str, Any]]] = field(default=no_messages)
    cut_point: bool = False
