"""The digest of a sessions root (**beyond pi**): what a day, week or month
report needs, kept in one small file per root,
``<cache dir>/usage/<sha256 of the root, 32 hex>.digest.msgpack`` (mode
0600, written atomically beside the summary of :mod:`pi_session.usage.cache`).

It holds the counted message groups of every session merged per 15-minute
slot, agent, project, model and cost source
(:func:`pi_session.usage.report.merged_groups`: a few thousand rows for
thousands of sessions), the damaged lines, and one SHA-256 of the
``(path, size, mtime, inode)`` of every session file it was made from. A
report first walks the root (a ``stat`` per file, nothing opened) and, when
every file is as the digest recorded, sums the digest's rows; otherwise the
summary is brought up to date (:class:`pi_session.usage.cache.UsageCache`,
only appended bytes read) and the digest written again. It is also stale
when pi-session or the price data (the ``genai-prices`` package) changed.

Reports answered from a digest are remembered beside it
(``<...>.answers.json``, :func:`pi_session.usage.stamps.remembered_answers`)
while it stays fresh.

The stamps, the digest's path and the remembered answers are
:mod:`pi_session.usage.stamps`'s (it imports nothing heavy: a report asked
again is printed without importing msgspec); this module imports
``msgspec`` besides.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .stamps import DIGEST_VERSION, current_stamps, digest_path, format_version, pricing_stamp, read_private, session_files, stamps_digest, write_private

__all__ = ["DIGEST_VERSION", "Digest", "current_stamps", "digest_path", "fresh_digest", "pricing_stamp", "session_files", "write_digest"]


class Digest(msgspec.Struct, array_like=True):
    """The digest of one sessions root: ``version`` (:data:`DIGEST_VERSION`
    and pi-session's version), ``pricing`` (:func:`pricing_stamp`),
    ``root`` (absolute), ``stamps`` (:func:`stamps_digest` of the files it
    was made from), ``files`` (how many), ``merged``
    (:func:`pi_session.usage.report.merged_groups`) and ``problems``
    (``FILE:LINE: message`` of damaged lines)."""

    version: str
    pricing: str
    root: str
    stamps: bytes
    files: int
    merged: list[list[Any]]
    problems: list[str]


def fresh_digest(root: str, stamps: tuple[bytes, int] | None = None) -> Digest | None:
    """The digest of the sessions root ``root`` (absolute) when every
    session file under it is as the digest recorded (a ``stat`` each,
    nothing opened; ``stamps``: :func:`current_stamps` when already taken)
    and it was written by this version of pi-session with the same price
    data; None otherwise (no digest, damaged, stale)."""
    data = read_private(digest_path(root))
    if data is None:
        return None
    try:
        digest = msgspec.msgpack.decode(data, type=Digest)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if digest.version != format_version() or digest.root != root or digest.pricing != pricing_stamp():
        return None
    now, count = stamps if stamps is not None else current_stamps(root)
    if count != digest.files or now != digest.stamps:
        return None
    return digest


def write_digest(root: str, stamps: list[tuple[str, int, int, int]], merged: list[list[Any]], problems: list[str]) -> None:
    """Write the digest of ``root`` (absolute): ``stamps`` the ``(path,
    size, mtime_ns, inode)`` of every session file as read, in
    :func:`session_files` order; ``merged`` and ``problems`` what was read
    from them. A new 0600 file (never through a symlink) renamed over the
    old one. Fails quietly: a digest that cannot be written only makes the
    next report slower."""
    digest_bytes, count = stamps_digest(iter(stamps))
    write_private(digest_path(root), msgspec.msgpack.encode(Digest(format_version(), pricing_stamp(), root, digest_bytes, count, merged, problems)))
