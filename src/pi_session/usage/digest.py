"""The digest of a sessions root (**beyond pi**): what a day, week or month
report needs, kept in one small file per root,
``<cache dir>/usage/<sha256 of the root, 32 hex>.digest.json`` (mode
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

Beside it, ``<...>.parts.msgpack`` (:mod:`pi_session.usage.parts`) keeps
each session's contribution to
those rows (its counted groups, its ``stat``, agent, project, fork origin
and damaged lines), so that when files changed the digest is brought up to
date one session at a time (:func:`update_digest`): the summary reads only
the files that changed (only their appended bytes), their old
contributions are taken out and their new ones put in by summing again only
the rows (15-minute slot, agent, project, model, cost source) they touch,
from every session's contribution to them in the same order as a report
made from nothing sums them, so the totals are equal to the last bit. A
fork's contribution (its messages less those copied from the sessions it
was forked from) is taken again whenever one of those changes.

Reports answered from a digest are remembered beside it
(``<...>.answers.json``, :func:`pi_session.usage.stamps.load_answers`)
while it stays fresh.

The digest is JSON behind a CRC-32, read with ``orjson`` (which the
report's output loads anyway) and checked value by value for the type a
report uses (:meth:`Digest.from_fields`): a digest crafted by whoever can
write it is ignored, never a crash. A fresh digest is read without
importing ``msgspec`` (only bringing it up to date loads
:mod:`pi_session.usage.parts`). The stamps, the digest's path and the
remembered answers are :mod:`pi_session.usage.stamps`'s.
"""

from __future__ import annotations

import json
import os

import orjson

from .stamps import (
    DIGEST_VERSION, checked, current_stamps, digest_path, format_version, pack_json, pricing_stamp, read_checked, session_files, stamps_digest,
    write_private,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DIGEST_VERSION", "Digest", "current_stamps", "digest_path", "fresh_digest", "load_digest", "pricing_stamp", "refresh_digest",
    "session_files", "update_digest",
]

_SHAPE = (str, str, str, str, int, list, list)
"""The types of a kept digest's fields (its stamps as hex)."""

_NONE = type(None)
_ROW: tuple[set[type], ...] = (
    {int}, {str, _NONE}, {int}, {int}, {int}, {int}, {int}, {int}, {int}, {int, float}, {int}, {int}, {str}, {str},
)
"""The types each column of a merged row may hold
(:func:`pi_session.usage.report.merged_groups`)."""


class Digest:
    """The digest of one sessions root: ``version`` (:data:`DIGEST_VERSION`
    and pi-session's version), ``pricing`` (:func:`pricing_stamp`),
    ``root`` (absolute), ``stamps`` (:func:`stamps_digest` of the files it
    was made from), ``files`` (how many), ``merged``
    (:func:`pi_session.usage.report.merged_groups`: lists of 14 values)
    and ``problems`` (``FILE:LINE: message`` of damaged lines)."""

    __slots__ = ("version", "pricing", "root", "stamps", "files", "merged", "problems")

    def __init__(
        self, version: str, pricing: str, root: str, stamps: bytes, files: int, merged: list[list[Any]], problems: list[str],
    ) -> None:
        self.version, self.pricing, self.root, self.stamps = version, pricing, root, stamps
        self.files, self.merged, self.problems = files, merged, problems

    def to_bytes(self) -> bytes:
        """The digest as it is kept: its fields in order as a JSON array
        (``stamps`` as hex) behind a CRC-32
        (:func:`pi_session.usage.stamps.checked`); written by ``orjson``,
        or, when a field holds what it does not write (a name of bytes
        that are not UTF-8, an integer past 64 bits), by :mod:`json`
        (``\\u`` escapes), which :func:`load_digest` reads too."""
        fields = [self.version, self.pricing, self.root, self.stamps.hex(), self.files, self.merged, self.problems]
        try:
            return checked(orjson.dumps(fields))
        except TypeError:
            return pack_json(fields)

    @classmethod
    def from_fields(cls, fields: Any) -> Digest | None:
        """The digest whose fields are ``fields`` (:meth:`to_bytes`, loaded),
        or None when they are not one's (damaged, another layout, a value
        of a type the report does not take)."""
        if type(fields) is not list or len(fields) != len(_SHAPE) or not all(type(v) is t for v, t in zip(fields, _SHAPE)):
            return None
        merged, problems = fields[5], fields[6]
        if not all(type(m) is list and len(m) == 14 for m in merged) or not all(type(p) is str for p in problems):
            return None
        if merged and not all(set(map(type, column)) <= kinds for column, kinds in zip(zip(*merged), _ROW)):
            return None
        try:
            stamps = bytes.fromhex(fields[3])
        except ValueError:
            return None
        return cls(fields[0], fields[1], fields[2], stamps, fields[4], merged, problems)


def load_digest(root: str) -> Digest | None:
    """The digest kept for the sessions root ``root`` (absolute), fresh or
    not, or None (none, damaged, not JSON, another layout, not a regular
    file of this user)."""
    data = read_checked(digest_path(root))
    if data is None:
        return None
    try:
        fields = orjson.loads(data)
    except orjson.JSONDecodeError:  # not JSON, or escapes only json reads (see Digest.to_bytes)
        try:
            fields = json.loads(bytes(data))
        except (ValueError, RecursionError):
            return None
    return Digest.from_fields(fields)


def fresh_digest(root: str, stamps: tuple[bytes, int] | None = None) -> Digest | None:
    """The digest of the sessions root ``root`` (absolute) when every
    session file under it is as the digest recorded (a ``stat`` each,
    nothing opened; ``stamps``: :func:`current_stamps` when already taken)
    and it was written by this version of pi-session with the same price
    data; None otherwise (no digest, damaged, stale)."""
    digest = load_digest(root)
    if digest is None:
        return None
    if digest.version != format_version() or digest.root != root or digest.pricing != pricing_stamp():
        return None
    now, count = stamps if stamps is not None else current_stamps(root)
    if count != digest.files or now != digest.stamps:
        return None
    return digest


def _ancestors(path: str, parent_of: dict[str, str | None]) -> list[str]:
    """The files ``path`` was forked from, nearest first, among
    ``parent_of`` (path -> ``parentSession``), as reports count them."""
    out: list[str] = []
    parent = parent_of.get(path)
    while parent is not None and parent in parent_of and parent != path and parent not in out:
        out.append(parent)
        parent = parent_of[parent]
    return out


def update_digest(summary: Any, files: dict[str, Any]) -> Digest:
    """Bring the digest of ``summary``'s root up to date with ``files``
    (what :meth:`pi_session.usage.cache.UsageCache.update` returned just
    before; ``summary.pending`` and ``summary.file_problems()`` as it left
    them), write
    it and the sessions' contributions beside it (see the module
    docstring), and return it. Only the sessions whose file changed, was
    added or removed (or that were forked from one of those) are summed
    again, and only the rows they touch; without usable contributions
    (none yet, another version, other price data) every session is."""
    from .extract import merge_groups, merged_order
    from .parts import Part, Parts, load_parts, save_parts

    root = summary.root
    old_digest = load_digest(root)
    old = load_parts(root)
    version, pricing = format_version(), pricing_stamp()
    if (
        old is None or old_digest is None or old.version != version or old.pricing != pricing or old.root != root
        or old_digest.version != version or old_digest.pricing != pricing or old_digest.root != root or old.stamps != old_digest.stamps
    ):
        old_parts: dict[str, Part] = {}
        merged: dict[tuple[Any, ...], list[Any]] | None = None
    else:
        old_parts = old.parts
        merged = {(m[0], m[12], m[13], m[1], m[2]): m for m in old_digest.merged}
    touched = {path for path in old_parts if path not in files}
    for path, entry in files.items():
        part = old_parts.get(path)
        if part is None or part.size != entry.size or part.mtime_ns != entry.mtime_ns or part.ino != entry.ino:
            touched.add(path)
    parent_of = {path: entry.parent for path, entry in files.items()}
    forks = [path for path, parent in parent_of.items() if parent is not None]
    if touched and forks:
        old_parent_of = {path: part.parent for path, part in old_parts.items()}
        for path in forks:
            if path not in touched and (set(_ancestors(path, parent_of)) | set(_ancestors(path, old_parent_of))) & touched:
                touched.add(path)
    parts: dict[str, Part] = {}
    for path, entry in files.items():
        part = old_parts.get(path)
        if part is None or path in touched:
            part = Part(entry.size, entry.mtime_ns, entry.ino, entry.agent or "pi", entry.project, entry.parent,
                        _groups_of(summary, files, path, parent_of), [f"{path}:{line}: {message}" for line, message in entry.problems])
        parts[path] = part
    sessions = ((p.agent, p.project, p.groups) for p in parts.values())
    if merged is None:
        merged = merge_groups(sessions)
    elif touched:
        keys = {(g[0], p.agent, p.project, g[1], g[2]) for p in (old_parts.get(t) for t in touched) if p is not None for g in p.groups}
        keys.update((g[0], p.agent, p.project, g[1], g[2]) for p in (parts.get(t) for t in touched) if p is not None for g in p.groups)
        for k in keys:
            merged.pop(k, None)
        if keys:
            merged.update(merge_groups(sessions, keys))
    problems = [problem for p in parts.values() for problem in p.problems]
    problems.extend(summary.file_problems())
    stamps, count = stamps_digest((path, p.size, p.mtime_ns, p.ino) for path, p in parts.items())
    digest = Digest(version, pricing, root, stamps, count, sorted(merged.values(), key=merged_order), problems)
    if summary.persist:
        if touched or old is None:
            save_parts(Parts(version, pricing, root, stamps, parts))
        write_private(digest_path(root), digest.to_bytes())
    return digest


def _groups_of(summary: Any, files: dict[str, Any], path: str, parent_of: dict[str, str | None]) -> list[list[Any]]:
    """The counted groups of one session file as a report counts them: its
    summary's, or, with an unterminated last line that parses or when it is
    a fork, summed again from its rows (a fork's copies left out)."""
    from .extract import group_rows

    ancestors = _ancestors(path, parent_of)
    pending = summary.pending.get(path)
    if not ancestors and not pending:
        return list(files[path].groups)
    rows = summary.rows_of(path) + (pending or [])
    if ancestors:
        copied = {row[9] for a in ancestors for row in summary.rows_of(a) + summary.pending.get(a, [])}
        rows = [row for row in rows if row[9] not in copied]
    return group_rows(rows)


def refresh_digest(root: str, listing: list[tuple[str, os.stat_result]] | None = None) -> Digest:
    """The digest of the sessions root ``root`` (absolute), brought up to
    date: the summary (:class:`pi_session.usage.cache.UsageCache`) reads
    what changed, then :func:`update_digest`. ``listing``:
    :func:`session_files` of the root when already taken."""
    from ..core.gc_pause import gc_paused
    from .cache import UsageCache

    with gc_paused():  # tens of thousands of rows decoded, none of them garbage
        summary = UsageCache(root)
        return update_digest(summary, summary.update(listing))
