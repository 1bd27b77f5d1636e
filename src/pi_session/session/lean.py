"""Keeping sessions lean (beyond pi), the pure part: which values of a
session line are bulky payloads, the note that stands in for a payload moved
to a blob, the byte spans of values in a raw line, and which entries a
prune keeps. The file and blob I/O is :mod:`pi_session.operations.slimming`
and :mod:`pi_session.operations.pruning`.

Payloads (what ``slim`` moves out):

- an image block anywhere in a message's content (``{"type": "image",
  "data": <base64>, "mimeType": ...}``): the whole block;
- a tool result's text block, a bash execution's ``output``, and each
  string argument of a tool call (``arguments.<key>``), over a size.

The note keeps the file a valid pi session: an image block becomes a text
block, a string stays a string, each naming its blob::

    {"type":"text","text":"[pi-session slim: image/png, 1.4 MB, block blob sha256:<hex>; pi-session restore puts it back]"}
    "[pi-session slim: text, 80.0 KB, blob sha256:<hex>; pi-session restore puts it back]"

The blob holds the exact bytes the note replaced in the line, so putting it
back gives the original line byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..entries.questions import BASH_EXECUTION, CUSTOM_MESSAGE, LABEL, MESSAGE, SESSION_INFO, TOOL_RESULT

__all__ = [
    "DEFAULT_OUTPUTS_OVER",
    "NOTE_PATTERN",
    "WARN_OVER",
    "LeanSizes",
    "Payload",
    "block_note",
    "find_payloads",
    "human_size",
    "kept_ids",
    "measure_file",
    "measure_lines",
    "note_hashes",
    "note_positions",
    "parse_size",
    "string_note",
    "value_spans",
]

_TAIL = "; pi-session restore puts it back]"

NOTE_PATTERN = re.compile(
    rb'(\{"type":"text","text":"\[pi-session slim: [A-Za-z0-9/+.,\- ]*, block blob sha256:([0-9a-f]{64})'
    + re.escape(_TAIL.encode())
    + rb'"\})|("\[pi-session slim: [A-Za-z0-9/+.,\- ]*, blob sha256:([0-9a-f]{64})'
    + re.escape(_TAIL.encode())
    + rb'")'
)
"""A note in a raw line: group 2 is the hash of a block note (the note is a
whole text block), group 4 that of a string note (a JSON string)."""

_SAFE = re.compile(r"[^A-Za-z0-9/+.\- ]")


def human_size(n: int) -> str:
    """``n`` bytes as ``"812 B"``, ``"80.0 KB"``, ``"1.4 MB"``, ``"2.1 GB"`` (powers of 1024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError  # unreachable


def parse_size(text: str) -> int:
    """A size as the command line takes it: ``"65536"``, ``"64K"``,
    ``"64KB"``, ``"1.5M"``, ``"2G"`` (powers of 1024, case-insensitive).

    Raises:
        ValueError: not a size (the message says what is accepted).
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmg]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{text!r} is not a size (give bytes, or a number with K, M or G)")
    return int(float(m.group(1)) * 1024 ** " kmg".index(m.group(2).lower() or " "))


def _describe(text: str) -> str:
    return _SAFE.sub("", text)[:60] or "payload"


def block_note(mime: str, size: int, digest: str) -> bytes:
    """The text block standing in for a whole content block (an image) of
    ``size`` bytes moved to the blob ``digest`` (sha256 hex)."""
    return (
        f'{{"type":"text","text":"[pi-session slim: {_describe(mime)}, {human_size(size)}, block blob sha256:{digest}{_TAIL}"}}'
    ).encode()


def string_note(kind: str, size: int, digest: str) -> bytes:
    """The JSON string standing in for a string value of ``size`` bytes
    moved to the blob ``digest`` (sha256 hex)."""
    return f'"[pi-session slim: {_describe(kind)}, {human_size(size)}, blob sha256:{digest}{_TAIL}"'.encode()


def note_hashes(raw: bytes) -> list[str]:
    """The blob hashes the notes of one raw line name, in line order."""
    if b"pi-session slim: " not in raw:
        return []
    return [(m.group(2) or m.group(4)).decode() for m in NOTE_PATTERN.finditer(raw)]


@dataclass(frozen=True)
class Payload:
    """One bulky value of a record.

    Attributes:
        path: where it is in the record (keys and list indexes).
        kind: ``"image"`` (a whole content block) or ``"text"`` (a string).
        label: what the note says it was (the image's MIME type, or
            ``"tool output"``, ``"bash output"``, ``"tool argument"``).
        size: its length in characters (images: of the base64 data).
    """

    path: tuple[str | int, ...]
    kind: str
    label: str
    size: int


def find_payloads(record: Any, *, images: bool, outputs_over: int | None) -> list[Payload]:
    """The payloads of one record (see the module docstring): image
    blocks when ``images``; tool result text blocks, bash execution
    outputs and tool call string arguments longer than ``outputs_over``
    characters when it is not None. Never raises on odd records."""
    out: list[Payload] = []
    if not isinstance(record, Mapping):
        return out
    rtype = record.get("type")
    if rtype == MESSAGE:
        message = record.get("message")
        base: tuple[str | int, ...] = ("message",)
    elif rtype == CUSTOM_MESSAGE:
        message = record
        base = ()
    else:
        return out
    if not isinstance(message, Mapping):
        return out
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, list):
        for i, block in enumerate(content):
            if not isinstance(block, Mapping):
                continue
            btype = block.get("type")
            if btype == "image" and images and isinstance(block.get("data"), str):
                mime = block.get("mimeType")
                out.append(Payload((*base, "content", i), "image", mime if isinstance(mime, str) else "image", len(block["data"])))
            elif outputs_over is not None and btype == "text" and role == TOOL_RESULT:
                text = block.get("text")
                if isinstance(text, str) and len(text) > outputs_over:
                    out.append(Payload((*base, "content", i, "text"), "text", "tool output", len(text)))
            elif outputs_over is not None and btype == "toolCall" and isinstance(block.get("arguments"), Mapping):
                for key, value in block["arguments"].items():
                    if isinstance(value, str) and len(value) > outputs_over:
                        out.append(Payload((*base, "content", i, "arguments", key), "text", "tool argument", len(value)))
    if outputs_over is not None and role == BASH_EXECUTION:
        output = message.get("output")
        if isinstance(output, str) and len(output) > outputs_over:
            out.append(Payload((*base, "output"), "text", "bash output", len(output)))
    return out


def note_positions(record: Any) -> dict[tuple[str | int, ...], Payload]:
    """Where in a record ``slim`` may have written a note: every content
    block of a message that is a bare text block (``{"type":"text",
    "text":…}``, an image's stand-in; ``kind`` ``"image"``, ``label`` empty),
    and every tool result text, bash output and tool call string argument
    (``kind`` ``"text"``, ``label`` as :func:`find_payloads` gives it).
    ``restore`` puts back only notes at these positions, so a note quoted
    elsewhere (a user's message) stays as it is. Never raises."""
    out = {p.path: p for p in find_payloads(record, images=False, outputs_over=-1)}
    if not isinstance(record, Mapping):
        return out
    base: tuple[str | int, ...]
    if record.get("type") == MESSAGE:
        message, base = record.get("message"), ("message",)
    elif record.get("type") == CUSTOM_MESSAGE:
        message, base = record, ()
    else:
        return out
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, Mapping) and list(block) == ["type", "text"] and block["type"] == "text":
                path = (*base, "content", i)
                out[path] = Payload(path, "image", "", 0)
    return out


_WS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb"[^,}\]\s]+")


def value_spans(raw: bytes, paths: Iterable[tuple[str | int, ...]]) -> dict[tuple[str | int, ...], tuple[int, int]]:
    """The byte spans ``(start, end)`` in the raw JSON text ``raw`` of the
    values at ``paths`` (keys and list indexes, as :class:`Payload` gives
    them). ``raw`` must be valid JSON. A path whose value is absent is left
    out. Long strings are skipped by a regular expression, so a line with
    a 100 MB image costs one pass.

    Raises:
        ValueError: ``raw`` is not the JSON text it should be.
    """
    import orjson

    wanted = set(paths)
    prefixes = {p[:i] for p in wanted for i in range(len(p) + 1)}
    found: dict[tuple[str | int, ...], tuple[int, int]] = {}

    def skip_ws(pos: int) -> int:
        m = _WS.match(raw, pos)
        assert m is not None
        return m.end()

    def value(pos: int, path: tuple[str | int, ...]) -> int:
        # iterative over the members of this container; recursion per level
        pos = skip_ws(pos)
        start = pos
        c = raw[pos : pos + 1]
        descend = path in prefixes
        if c == b'"':
            m = _STRING.match(raw, pos)
            if m is None:
                raise ValueError("unterminated string")
            end = m.end()
        elif c in (b"{", b"["):
            closing = b"}" if c == b"{" else b"]"
            pos = skip_ws(pos + 1)
            index = 0
            if raw[pos : pos + 1] == closing:
                end = pos + 1
            else:
                while True:
                    if c == b"{":
                        m = _STRING.match(raw, pos)
                        if m is None:
                            raise ValueError("expected a key")
                        key: str | int = orjson.loads(m.group()) if descend else ""
                        pos = skip_ws(m.end())
                        if raw[pos : pos + 1] != b":":
                            raise ValueError("expected ':'")
                        pos += 1
                    else:
                        key = index
                    pos = skip_ws(value(pos, (*path, key) if descend else ("\0",)))
                    index += 1
                    sep = raw[pos : pos + 1]
                    if sep == b",":
                        pos = skip_ws(pos + 1)
                        continue
                    if sep == closing:
                        end = pos + 1
                        break
                    raise ValueError("expected ',' or a closing bracket")
        else:
            m = _SCALAR.match(raw, pos)
            if m is None:
                raise ValueError("expected a value")
            end = m.end()
        if path in wanted:
            found[path] = (start, end)
        return end

    value(0, ())
    return found


@dataclass
class LeanSizes:
    """How much of a session is payload and abandoned branches (what
    ``info``, ``ls --sizes`` and ``check`` report).

    Attributes:
        total: the file's bytes.
        payload: bytes of images (any entry) and of tool outputs and
            arguments over the size ``slim`` uses by default, as they
            stand in the file.
        abandoned: bytes of the lines ``prune`` would move to an archive.
        slimmed: notes standing in for payloads moved to blobs.
    """

    total: int = 0
    payload: int = 0
    abandoned: int = 0
    slimmed: int = 0

    def to_json(self) -> dict[str, int]:
        """A JSON-ready dict: ``{"bytes", "payloadBytes", "abandonedBytes", "slimmedPayloads"}``."""
        return {"bytes": self.total, "payloadBytes": self.payload, "abandonedBytes": self.abandoned, "slimmedPayloads": self.slimmed}


def kept_ids(entries: Sequence[Mapping[str, Any]], leaves: Iterable[str]) -> set[str]:
    """The ids ``prune`` keeps: every entry on the path root→leaf of each
    of ``leaves`` and the last ``session_info`` entry (the session's name),
    with its path; then, until nothing changes, with their own paths:

    - each label entry naming a kept entry (a kept entry keeps its labels;
      the label's branch stays up to the label);
    - each entry that a kept label entry names while it has a label (pi
      appends a label entry at the leaf, whatever it labels, so a label
      made on the kept path can name an entry of an abandoned branch: the
      entry stays with its label instead of moving away from it);
    - each entry that would move to the archive (the moved entries and the
      entries they hang from) but show another label there than it has:
      a label the user cleared with a label entry that stays, set by one
      that would move.

    So every entry shows the label it has in the session (pi's rule: the
    last label entry naming it, in file order, wins; an empty label
    clears) in the session if it stays and in the archive if it moves, and
    an entry whose label was cleared moves like any other.

    Args:
        entries: the session's entries in file order (dicts with ``id``,
            ``parentId`` and, for label entries, ``type``, ``targetId`` and
            ``label``).
        leaves: the ids of the leaves whose paths stay.
    """
    parent: dict[str, Any] = {}
    for e in entries:
        eid = e.get("id")
        if isinstance(eid, str):
            parent[eid] = e.get("parentId")
    labels = [
        (e["id"], e["targetId"], _label_text(e))
        for e in entries
        if e.get("type") == LABEL and isinstance(e.get("id"), str) and isinstance(e.get("targetId"), str)
    ]
    current = {target: text for _eid, target, text in labels}
    keep: set[str] = set()

    def add_path(eid: Any) -> None:
        seen: set[str] = set()
        while isinstance(eid, str) and eid in parent and eid not in keep and eid not in seen:
            seen.add(eid)
            keep.add(eid)
            eid = parent[eid]

    for leaf in leaves:
        add_path(leaf)
    names = [e for e in entries if e.get("type") == SESSION_INFO]
    if names:
        add_path(names[-1].get("id"))
    while True:
        before = len(keep)
        for eid, target, _text in labels:
            if target in keep and eid not in keep:
                add_path(eid)
            elif eid in keep and target not in keep and current[target]:
                add_path(target)
        if len(keep) != before:
            continue
        archived = _archived(parent, keep)
        shown: dict[str, str | None] = {}
        for eid, target, text in labels:
            if eid in archived:
                shown[target] = text
        for target in archived - keep:
            if shown.get(target) != current.get(target):
                add_path(target)
        if len(keep) == before:
            return keep


def _label_text(entry: Mapping[str, Any]) -> str | None:
    """The label a label entry sets, or None when it clears one (pi: an
    absent or empty label clears)."""
    label = entry.get("label")
    return label if isinstance(label, str) and label else None


def _archived(parent: Mapping[str, Any], keep: set[str]) -> set[str]:
    """The entries ``prune`` writes to the archive when it keeps ``keep``:
    those not kept and the entries they hang from."""
    out = {eid for eid in parent if eid not in keep}
    for eid in list(out):
        up = parent.get(eid)
        while isinstance(up, str) and up in parent and up not in out:
            out.add(up)
            up = parent[up]
    return out


def iter_payload_bytes(raw: bytes, record: Any, *, outputs_over: int) -> Iterator[int]:
    """The byte lengths in ``raw`` of the payloads of ``record`` (images,
    and outputs over ``outputs_over``); an approximation by characters
    when the line's spans cannot be found."""
    payloads = find_payloads(record, images=True, outputs_over=outputs_over)
    if not payloads:
        return
    try:
        spans = value_spans(raw, [p.path for p in payloads])
    except (ValueError, RecursionError):
        spans = {}
    for p in payloads:
        span = spans.get(p.path)
        yield span[1] - span[0] if span else p.size


DEFAULT_OUTPUTS_OVER = 16 * 1024
"""Tool outputs and arguments longer than this (characters) are payloads
when ``slim`` is given neither ``--images`` nor ``--outputs-over``, and in
what ``info``, ``ls --sizes`` and ``check`` count."""

WARN_OVER = 8 * 1024 * 1024
"""``check`` warns when a session holds more payload bytes, or more bytes
of abandoned branches, than this."""


def measure_lines(lines: Iterable[bytes], leaf: str | None = None, *, outputs_over: int = DEFAULT_OUTPUTS_OVER) -> LeanSizes:
    """How much of a session is payload and abandoned branches.

    Args:
        lines: the session file's lines (each with its newline, as in the file).
        leaf: the session's leaf; None: the last entry (pi's rule on open).
        outputs_over: the size over which tool outputs and arguments count.

    Returns:
        A :class:`LeanSizes` (bytes). Lines that are not JSON count only in
        ``total``.
    """
    import orjson

    sizes = LeanSizes()
    entries: list[dict[str, Any]] = []
    length: dict[str, int] = {}
    for raw in lines:
        sizes.total += len(raw)
        if b"pi-session slim: " in raw:
            sizes.slimmed += len(note_hashes(raw))
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict) or record.get("type") == "session":
            continue
        if isinstance(record.get("id"), str):  # a v1 entry has none: its file is one path, nothing abandoned
            entries.append({k: record.get(k) for k in ("id", "parentId", "type", "targetId", "label")})
            length[record["id"]] = len(raw)
        if b'"image"' in raw or len(raw) > outputs_over:
            sizes.payload += sum(iter_payload_bytes(raw, record, outputs_over=outputs_over))
    if leaf is None and entries:
        leaf = entries[-1]["id"]
    keep = kept_ids(entries, [leaf] if leaf is not None else [])
    sizes.abandoned = sum(n for eid, n in length.items() if eid not in keep)
    return sizes


def measure_file(path: Any, leaf: str | None = None) -> LeanSizes:
    """:func:`measure_lines` of a session file (read once, line by line).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as f:
        return measure_lines(f, leaf)
