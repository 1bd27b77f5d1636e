"""The ``msgspec`` decoders of the lazy session index (:mod:`.lazy`):
:class:`EntryHead` and :data:`HEAD_DECODER`, which read an entry line's
``type``, ``id`` and ``parentId`` and skip the rest, and
:data:`STAMP_DECODER`, which reads its ``id`` and ``timestamp``. Kept
apart from :mod:`.lazy` so that msgspec is imported only when a file is
indexed (``lazy=True``), not when a short command reads a small file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ..entries import EAGER_ENTRY_TYPES, ENTRY_TYPES

__all__ = ["DECODE_ERRORS", "EntryHead", "HEAD_DECODER", "INDEXED_TYPES", "MISSING_FIELD", "STAMP_DECODER"]

INDEXED_TYPES = tuple(t for t in ENTRY_TYPES if t not in EAGER_ENTRY_TYPES and t != "session")
"""The entry types the head decoder takes: those pi writes
(:data:`pi_session.entries.ENTRY_TYPES`) but the ones decoded in full
while indexing (:data:`.lazy.EAGER_TYPES`: the eager entry types and a
second ``session`` header)."""

MISSING_FIELD: Any = msgspec.UNSET
"""The value of a field a line does not have (a timestamp read by
:meth:`.lazy.EntryStore.timestamps`)."""

DECODE_ERRORS = (msgspec.DecodeError, RecursionError)
"""What the decoders raise on a line they do not take (which is then read
in full)."""

if TYPE_CHECKING:
    IndexedType = str
else:
    IndexedType = Literal[INDEXED_TYPES]
"""The head decoder's ``type``: a ``Literal`` of :data:`INDEXED_TYPES`.
msgspec gives a ``Literal``'s own string object (no new string a line, no
``sys.intern``); a line of any other type (an eager one, one pi does not
write) does not decode and is read in full."""


class EntryHead(msgspec.Struct):
    """The fields of one entry line the index keeps (every other field is
    skipped by the decoder). A line whose ``type`` is not an
    :data:`IndexedType`, whose ``id`` is not a string, or whose
    ``parentId`` is neither a string nor null, does not decode (it is read
    in full instead)."""

    type: IndexedType
    id: str
    parentId: str | None = None


HEAD_DECODER = msgspec.json.Decoder(EntryHead)
"""Decodes one line (never several: msgspec reads a newline as whitespace)."""


class EntryStamp(msgspec.Struct):
    """What :meth:`.lazy.EntryStore.timestamps` reads of a line: its ``id`` (to
    check the line still holds the entry) and ``timestamp``."""

    id: Any = msgspec.UNSET
    timestamp: Any = msgspec.UNSET


STAMP_DECODER = msgspec.json.Decoder(EntryStamp)
"""Decodes one line as an :class:`EntryStamp`."""
