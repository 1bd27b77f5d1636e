"""Each session file's contribution to its root's digest
(:mod:`pi_session.usage.digest`), kept beside it in
``<...>.parts.msgpack`` (mode 0600, written atomically), so that the
digest is brought up to date one session at a time. Imports ``msgspec``:
only a digest that must be brought up to date loads this module."""

from __future__ import annotations

from typing import Any

import msgspec

from .stamps import checked, read_checked, usage_cache_file, write_private

__all__ = ["Part", "Parts", "load_parts", "save_parts"]


class Part(msgspec.Struct, array_like=True):
    """One session file's contribution to its root's digest: the file's
    ``stat`` when summarised (``size``, ``mtime_ns``, ``ino``), its
    ``agent`` (``pi``, ``claude-code``, ``codex``), ``project``,
    ``parent`` (the header's ``parentSession``), its counted ``groups``
    (:func:`pi_session.usage.extract.group_rows` of its messages, a fork's
    copies left out, an unterminated last line that parses included) and
    its damaged lines (``FILE:LINE: message``)."""

    size: int
    mtime_ns: int
    ino: int
    agent: str
    project: str
    parent: str | None
    groups: list[list[Any]]
    problems: list[str]


class Parts(msgspec.Struct, array_like=True):
    """Every session's :class:`Part` (path -> part) of the digest whose
    ``version``, ``pricing``, ``root`` and ``stamps`` are these
    (:class:`pi_session.usage.digest.Digest`)."""

    version: str
    pricing: str
    root: str
    stamps: bytes
    parts: dict[str, Part]


def _parts_path(root: str) -> str:
    return usage_cache_file(root, "parts.msgpack")


def load_parts(root: str) -> Parts | None:
    """The contributions kept for the sessions root ``root`` (absolute),
    or None (none, damaged: its CRC-32 differs, not a regular file of
    this user)."""
    data = read_checked(_parts_path(root))
    if data is None:
        return None
    try:
        return msgspec.msgpack.decode(data, type=Parts)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def save_parts(parts: Parts) -> None:
    """Keep ``parts`` for their root (a new 0600 file renamed over the
    old; failing quietly, also when they hold text MessagePack cannot:
    a path that is not UTF-8)."""
    try:
        data = msgspec.msgpack.encode(parts)
    except UnicodeEncodeError:
        return
    write_private(_parts_path(parts.root), checked(data))
