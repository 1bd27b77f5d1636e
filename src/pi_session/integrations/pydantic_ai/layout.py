"""How a Pydantic AI conversation lies in a pi session (**beyond pi**):
the lines :class:`~.store.PiConversationStore` writes and what it reads
back from them (:class:`SessionView`).

A conversation is one pi session (its id: :func:`pi_session_id_for` of the
conversation id). In it:

* each ``ConversationEntry`` is a short chain of pi entries, the pi
  messages of its message (:func:`.convert.to_pi_messages`) in order; the
  last entry of the chain has the conversation entry's id and *carries*
  the message: under :data:`MESSAGE_KEY` it holds ``{"v": 1, "parentId":
  <the conversation entry's parent>, "message": <the message's JSON>}``
  (a field pi ignores). The other entries of the chain have the ids
  ``<entry id>.1``, ``<entry id>.2``, …; a message with no pi form is
  carried by a ``custom`` entry of type :data:`MESSAGE_TYPE`;
* each write of the record appends a ``custom`` entry of type
  :data:`RECORD_TYPE` whose ``data`` holds the whole
  ``ConversationRecord`` as JSON (``record``) and, readable, its
  ``conversationId``, ``revision`` and ``headId``. The last one in the
  file is the conversation's record. Its parent is the head's entry (or an
  entry after it that leaves pi's context as it is: a compaction, a label,
  a context edit), so pi, which continues a session at its last entry,
  builds the context the conversation holds;
* a fork is a session whose header names the session it was forked from
  (``parentSession``: a file's path, a database session's locator) and
  that starts with a copy of the pi path it kept.

The entries pi-session or pi append (labels, compactions, context edits,
messages typed in pi) stay where they are: a save continues after those
that leave the context as it is, and past any other, from the head.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pydantic
from pydantic_ai.conversation_store import ConversationEntry, ConversationRecord

from ...core import jsonio
from ...core.timestamps import ms_to_iso
from ...entries.records import make_header
from ...errors import PiSessionError
from ...storage import SessionStamp, parse_line, read_session_lines
from ..session_ids import session_id_for
from .convert import message_from_json, message_json, record_from_json, record_json, summary_of, time_ms, to_pi_messages

__all__ = [
    "FORMAT",
    "MESSAGE_KEY",
    "MESSAGE_TYPE",
    "RECORD_TYPE",
    "NEUTRAL_TYPES",
    "ConversationDataError",
    "MissingEntryError",
    "Carrier",
    "StoredRecord",
    "SessionView",
    "pi_session_id_for",
    "read_view",
    "read_tail",
    "header_line",
    "record_line",
    "name_line",
    "entry_lines",
    "fork_path_lines",
    "pi_leaf",
]

FORMAT = 1
"""The version of this layout, written as ``v`` in every payload."""

MESSAGE_KEY = "pydanticAi"
"""The key, on the entry carrying a conversation entry, of its payload."""

MESSAGE_TYPE = "pydantic-ai:message"
"""``customType`` of the entry carrying a message that has no pi form."""

RECORD_TYPE = "pydantic-ai:conversation"
"""``customType`` of the entries holding the conversation's record."""

NEUTRAL_TYPES = frozenset({"custom", "label", "session_info", "model_change", "thinking_level_change", "context_edit", "usage", "compaction"})
"""Entry types a save continues after when they follow the record: they
leave the messages of pi's context as they are (a compaction and a context
edit change how pi shows them, which a save keeps)."""

_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/pi-session/pydantic-ai-conversation-id")


def pi_session_id_for(conversation_id: str) -> str:
    """The pi session id of a conversation id: the id itself when pi
    accepts it as a session id (a Pydantic AI default id, a UUID, does),
    else a fixed uuid5 of it (:func:`pi_session.integrations.session_ids.session_id_for`).

    Raises:
        TypeError: ``conversation_id`` is not a string.
    """
    return session_id_for(conversation_id, _ID_NAMESPACE)


class ConversationDataError(PiSessionError):
    """A conversation's session holds something that cannot be read as
    what it should be (a message or record damaged or edited by hand);
    ``str(error)`` names the session and the line."""


class MissingEntryError(ConversationDataError, LookupError):
    """An entry a conversation's history or record names is not in its
    session (or in the store)."""


@dataclass
class Carrier:
    """The payload of one conversation entry, as read.

    Attributes:
        parent_id: the conversation entry's parent.
        payload: the message's JSON.
        line: its line in the session (None: not known, a tail read).
    """

    parent_id: str | None
    payload: str
    line: int | None


@dataclass
class StoredRecord:
    """A record entry as read.

    Attributes:
        entry_id: the pi entry's id.
        data: its ``data``.
        line: its line (None: a tail read).
    """

    entry_id: str
    data: dict[str, Any]
    line: int | None

    @property
    def revision(self) -> Any:
        return self.data.get("revision")

    @property
    def conversation_id(self) -> Any:
        return self.data.get("conversationId")

    @property
    def head_id(self) -> Any:
        return self.data.get("headId")

    @property
    def instructions(self) -> str | None:
        value = self.data.get("instructions")
        return value if isinstance(value, str) else None

    def record(self, location: str) -> ConversationRecord:
        """The ``ConversationRecord``.

        Raises:
            ConversationDataError: it cannot be read (names the line).
        """
        text = self.data.get("record")
        try:
            if not isinstance(text, str):
                raise ValueError("no record JSON")
            return record_from_json(text)
        except (pydantic.ValidationError, ValueError) as exc:
            raise ConversationDataError(f"{_where(location, self.line)}: the conversation record cannot be read: {_first_error(exc)}") from None


def _where(location: str, line: int | None) -> str:
    return f"{location}:{line}" if line is not None else location


def _first_error(exc: Exception) -> str:
    if isinstance(exc, pydantic.ValidationError):
        errors = exc.errors(include_url=False)
        if errors:
            first = errors[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            return f"{first.get('msg')}" + (f" at {loc}" if loc else "")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


@dataclass
class SessionView:
    """What a conversation's session holds, as far as it was read.

    Attributes:
        session_id: the pi session id.
        location: how messages name the session (its file, its locator).
        size: the byte count read (the ``expected_size`` of the next append).
        stamp: the session's stamp when read.
        record: the last record entry, or None.
        trailer: the entries after it, in file order.
        complete: every line was read: ``carriers`` and ``entries`` are whole.
        carriers: conversation entry id → :class:`Carrier`.
        entries: every entry by id (a complete view).
        lines: the line of each entry id (a complete view).
        line_count: the number of lines read (a complete view: the
            session's lines up to ``size``).
    """

    session_id: str
    location: str
    size: int
    stamp: SessionStamp | None
    record: StoredRecord | None = None
    trailer: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False
    carriers: dict[str, Carrier] = field(default_factory=dict)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    line_count: int = 0

    def take(self, entry: dict[str, Any], line: int | None) -> None:
        """Add one entry read (in file order)."""
        entry_id = entry["id"]
        payload = entry.get(MESSAGE_KEY)
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            parent = payload.get("parentId")
            self.carriers[entry_id] = Carrier(parent if isinstance(parent, str) else None, payload["message"], line)
        if entry.get("type") == "custom" and entry.get("customType") == RECORD_TYPE and isinstance(entry.get("data"), dict):
            self.record = StoredRecord(entry_id, entry["data"], line)
            self.trailer = []
        elif self.record is not None:
            self.trailer.append(entry)
        if self.complete:
            self.entries[entry_id] = entry
            if line is not None:
                self.lines[entry_id] = line

    def chain_of(self, entry_id: str) -> tuple[str | None, str] | None:
        """``(parent id, id of the first pi entry of its chain)`` of a
        conversation entry in a complete view, or None when it is not there."""
        carrier = self.carriers.get(entry_id)
        if carrier is None:
            return None
        first = f"{entry_id}.1"
        return carrier.parent_id, first if first in self.entries else entry_id

    def history(self, head_id: str | None, limit: int | None) -> list[ConversationEntry]:
        """The conversation entries from the first up to ``head_id``, or
        the last ``limit`` of them (a complete view).

        Raises:
            MissingEntryError: an entry on the way is not in the session.
            ConversationDataError: a message cannot be read.
        """
        chain: list[tuple[str, Carrier]] = []
        entry_id = head_id
        child: str | None = None
        seen: set[str] = set()
        while entry_id is not None and (limit is None or len(chain) < limit):
            carrier = self.carriers.get(entry_id)
            if carrier is None:
                named_by = f"{_where(self.location, self.lines.get(child))}: entry {child}'s parent" if child else f"{self.location}: the head"
                raise MissingEntryError(f"{named_by} {entry_id} is not in the session")
            if entry_id in seen:
                raise ConversationDataError(f"{_where(self.location, carrier.line)}: entry {entry_id} is its own ancestor")
            seen.add(entry_id)
            chain.append((entry_id, carrier))
            child, entry_id = entry_id, carrier.parent_id
        chain.reverse()
        return [self.entry(entry_id, carrier) for entry_id, carrier in chain]

    def entry(self, entry_id: str, carrier: Carrier) -> ConversationEntry:
        """The conversation entry ``carrier`` holds.

        Raises:
            ConversationDataError: its message cannot be read (names the line).
        """
        try:
            message = message_from_json(carrier.payload)
        except (pydantic.ValidationError, ValueError) as exc:
            raise ConversationDataError(
                f"{_where(self.location, carrier.line)}: the Pydantic AI message of entry {entry_id} cannot be read: {_first_error(exc)}"
            ) from None
        return ConversationEntry(id=entry_id, parent_id=carrier.parent_id, message=message)


def _is_entry(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("type"), str) and record.get("type") != "session"


def read_view(session_id: str, location: str, lines: list[bytes], size: int, stamp: SessionStamp | None) -> SessionView:
    """A complete :class:`SessionView` of a session's lines (read as pi-session
    reads any session: damaged lines are passed over).

    Raises:
        pi_session.storage.SessionFileError: the lines do not start with a
            session header.
    """
    sf = read_session_lines(lines, name=location, migrate=False)
    view = SessionView(session_id, location, size, stamp, complete=True, line_count=len(lines))
    for record, line in zip(sf.records, sf.record_lines):
        if _is_entry(record):
            view.take(record, line)
    return view


def read_tail(session_id: str, location: str, lines: Iterable[bytes], size: int, stamp: SessionStamp | None) -> SessionView:
    """A :class:`SessionView` of the last lines of a session (``record``
    None when they hold no record entry; ``carriers`` only those read)."""
    view = SessionView(session_id, location, size, stamp)
    for raw in lines:
        parsed = parse_line(raw[:-1] if raw.endswith(b"\n") else raw, 0)
        if parsed.ok and _is_entry(parsed.record):
            view.take(parsed.record, None)
    return view


def _entry(entry_type: str, entry_id: str, parent_id: str | None, timestamp: str, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, "id": entry_id, "parentId": parent_id, "timestamp": timestamp, **fields}


def _iso(value: datetime | None) -> str:
    if value is None:
        value = datetime.now(timezone.utc)
    return ms_to_iso(time_ms(value, 0))


def header_line(session_id: str, cwd: str, created: datetime, parent_session: str | None = None) -> bytes:
    """The session header's line."""
    return jsonio.dumps_line(make_header(session_id, cwd, _iso(created), parent_session))


def record_line(record: ConversationRecord, parent_id: str | None, instructions: str | None) -> bytes:
    """The line of a record entry under ``parent_id``.

    Args:
        instructions: :func:`.convert.instructions_digest` of the
            instructions in effect at the head on the pi path, or None
            (not known).

    Raises:
        UnstorableValueError: the record holds a value JSON cannot represent.
    """
    data: dict[str, Any] = {
        "v": FORMAT,
        "conversationId": record.conversation_id,
        "revision": record.revision,
        "headId": record.head_id,
        "instructions": instructions,
        "record": record_json(record),
    }
    return jsonio.dumps_line(_entry("custom", str(uuid.uuid4()), parent_id, _iso(record.updated_at), customType=RECORD_TYPE, data=data))


Lookup = Callable[[str], "tuple[str | None, str] | None"]
"""``lookup(entry id) -> (parent id, first pi entry id of its chain) | None``:
what :func:`entry_lines` asks about stored conversation entries."""


def name_line(entry_id: str, parent_id: str | None, title: str | None, when: datetime | None) -> bytes:
    """The line of a ``session_info`` entry naming the session after a
    conversation's title (pi shows it as the session's name; line breaks
    become spaces; None or an empty title clears it)."""
    name = " ".join((title or "").replace("\r", "\n").split("\n")).strip()
    return jsonio.dumps_line(_entry("session_info", entry_id, parent_id, _iso(when), name=name))


def entry_lines(
    entries: Sequence[ConversationEntry], attach: str | None, instructions: str | None, lookup: Lookup | None = None
) -> tuple[list[bytes], str | None]:
    """The lines of new conversation entries (each after the one it points
    at; the first one's chain under the pi entry ``attach``). A summary
    (:func:`.convert.summary_of`) is carried by a pi ``compaction`` entry
    whose ``firstKeptEntryId`` is the first pi entry of the messages the
    compaction kept before it (its own id when none, or when they cannot be
    found), with the request's system prompt as its ``systemMessage``.

    Args:
        instructions: the instructions digest in effect at ``attach`` (None: not known).
        lookup: finds stored entries (see :data:`Lookup`); None: only
            the entries given are known.

    Returns:
        ``(lines, instructions in effect after the last entry)``.

    Raises:
        UnstorableValueError: a message holds a value JSON cannot represent.
    """
    lines: list[bytes] = []
    previous: str | None = None
    pi_parent = attach
    known: dict[str, tuple[str | None, str]] = {}

    def chain(entry_id: str) -> tuple[str | None, str] | None:
        return known.get(entry_id) or (lookup(entry_id) if lookup is not None else None)

    for n, item in enumerate(entries):
        if n > 0 and item.parent_id != previous:
            pi_parent = item.parent_id  # not after the entry before it: under its own parent
        timestamp = _iso(getattr(item.message, "timestamp", None))
        payload = {"v": FORMAT, "parentId": item.parent_id, "message": message_json(item.message)}
        summary = summary_of(item.message)
        if summary is not None:
            first_kept = item.id
            found = chain(item.parent_id) if item.parent_id is not None and summary.kept_before > 0 else None
            for _ in range(summary.kept_before - 1):
                if found is None or found[0] is None:
                    found = None
                    break
                found = chain(found[0])
            if found is not None:
                first_kept = found[1]
            carrier = _entry("compaction", item.id, pi_parent, timestamp, summary=summary.summary, firstKeptEntryId=first_kept, tokensBefore=summary.tokens_before)
            if summary.details is not None:
                carrier["details"] = summary.details
            if summary.system:
                carrier["systemMessage"] = {"role": "system", "content": summary.system, "timestamp": time_ms(getattr(item.message, "timestamp", None), 0)}
            instructions = None  # the compaction hides the system messages before it: written again
            known[item.id] = (item.parent_id, item.id)
        else:
            pi_messages, instructions = to_pi_messages(item.message, instructions)
            for k, pi_message in enumerate(pi_messages[:-1], 1):
                chain_id = f"{item.id}.{k}"
                lines.append(jsonio.dumps_line(_entry("message", chain_id, pi_parent, timestamp, message=pi_message)))
                pi_parent = chain_id
            if pi_messages:
                carrier = _entry("message", item.id, pi_parent, timestamp, message=pi_messages[-1])
            else:
                carrier = _entry("custom", item.id, pi_parent, timestamp, customType=MESSAGE_TYPE, data={"kind": item.message.kind})
            known[item.id] = (item.parent_id, f"{item.id}.1" if len(pi_messages) > 1 else item.id)
        carrier[MESSAGE_KEY] = payload
        lines.append(jsonio.dumps_line(carrier))
        pi_parent = previous = item.id
    return lines, instructions


def pi_leaf(record: StoredRecord | None, trailer: Sequence[dict[str, Any]]) -> str | None:
    """Where a save that continues the head goes in pi's tree: the record
    entry, or the last of the entries after it that continue it one by one
    and leave the context's messages as they are (:data:`NEUTRAL_TYPES`;
    not a carrier)."""
    if record is None:
        return None
    leaf = record.entry_id
    for entry in trailer:
        if entry.get("parentId") == leaf and entry.get("type") in NEUTRAL_TYPES and MESSAGE_KEY not in entry:
            leaf = entry["id"]
    return leaf


def fork_path_lines(view: SessionView, head_id: str) -> list[bytes]:
    """The lines of the pi path from the first entry to ``head_id`` in a
    complete view, record entries left out (each kept entry's parent is the
    kept entry before it), for the session of a fork.

    Raises:
        MissingEntryError: ``head_id`` is not in the session.
    """
    if head_id not in view.entries:
        raise MissingEntryError(f"{view.location}: entry {head_id} is not in the session")
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    entry_id: Any = head_id
    while isinstance(entry_id, str) and entry_id in view.entries and entry_id not in seen:
        seen.add(entry_id)
        entry = view.entries[entry_id]
        path.append(entry)
        entry_id = entry.get("parentId")
    path.reverse()
    lines: list[bytes] = []
    parent: str | None = None
    for entry in path:
        if entry.get("type") == "custom" and entry.get("customType") == RECORD_TYPE:
            continue
        copy = dict(entry)
        copy["parentId"] = parent
        lines.append(jsonio.dumps_line(copy))
        parent = entry["id"]
    return lines
