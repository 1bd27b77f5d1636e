"""The stale-leaf rule (beyond pi): what an append does when another writer
appended to the session since this process last read or wrote it. pi
appends onto its stale leaf silently, which puts the other writer's turn on
a side branch; :class:`pi_session.SessionManager` (its ``concurrent``
option) instead either refuses (``"strict"``) or loads the other writer's
entries and, when the entries being written continued the session's last
entry as known, chains them onto the real last entry (``"follow"``). A
compaction planned at one leaf (``append_compaction_result(...,
planned_leaf_id=)``) may follow the other writer only along the path it was
planned on; and a compaction whose first kept entry is not on the path it
is chained onto is never written (:class:`FirstKeptOffPathError`: the
context at its leaf would be its summary alone).

A pure function of what the append lock saw: :func:`follow_foreign_lines`.
The write path (:mod:`pi_session.manager.writer`) calls it from inside the
handle's append, while the session is locked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core import jsonio
from ..entries.records import HEADER_TYPE, UNDEFINED
from ..storage import ConcurrentAppendError, LeafMovedError, SessionFileError
from ..entries.questions import COMPACTION

__all__ = ["FollowedWriter", "FirstKeptOffPathError", "foreign_entries", "follow_foreign_lines"]


class FirstKeptOffPathError(LeafMovedError):
    """A compaction whose ``firstKeptEntryId`` is not on the path root→leaf
    it would be appended to (planned at another leaf: the leaf moved, in
    this process or by another writer whose entries the append followed);
    pi would write it and the context at its leaf would be the summary
    alone. Nothing was written. Besides :class:`LeafMovedError`'s
    attributes, ``first_kept_entry_id`` names the entry.

    Args:
        path: how messages name the session.
        first_kept_entry_id: the compaction's first kept entry.
        leaf_id: the leaf it would have been appended to.
        count: entries another writer appended that the append followed
            (0: the leaf moved in this process).
    """

    def __init__(self, path: str, first_kept_entry_id: str, leaf_id: str | None, count: int = 0) -> None:
        SessionFileError.__init__(
            self,
            path,
            f"the compaction keeps entry {first_kept_entry_id}, which is not on the path to the leaf {leaf_id} "
            "it would be appended to (it was planned on another branch); nothing was written "
            "(plan the compaction again at the current leaf)",
        )
        self.count = count
        self.planned_leaf_id = None  # not known here
        self.leaf_id = leaf_id
        self.first_kept_entry_id = first_kept_entry_id


@dataclass
class FollowedWriter:
    """What following another writer does (see :func:`follow_foreign_lines`).

    Attributes:
        foreign: the other writer's entries, in file order, to load before
            the pending ones.
        new_parent_id: the parentId the first pending entry gets (the real
            last entry), or None when it stays on its branch.
        note: one line for :attr:`pi_session.SessionManager.notes`.
    """

    foreign: list[dict[str, Any]]
    new_parent_id: str | None
    note: str


def foreign_entries(lines: Sequence[bytes], known: Mapping[str, Any], pending_ids: set[Any]) -> list[dict[str, Any]]:
    """The entries in ``lines`` (what the append lock found past the known
    size) that are neither ``known`` nor pending: other writers' entries.
    Lines that do not parse are passed over: damage is reported by the next
    open or check, never guessed at here."""
    foreign: list[dict[str, Any]] = []
    for line in lines:
        try:
            record = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") != HEADER_TYPE:
            rid = record.get("id")
            if isinstance(rid, str) and rid not in known and rid not in pending_ids:
                foreign.append(record)
    return foreign


def continues_plan(path: Sequence[Mapping[str, Any]], planned_leaf_id: str | None) -> bool:
    """Whether a compaction planned at ``planned_leaf_id`` may still be
    written at the end of ``path`` (root→leaf entries, or the part of it
    from the planned leaf on): the planned leaf is on it (None: planned on
    a session of only its header) and no compaction follows it. Entries
    appended after the planned leaf on the same path are kept after the
    summary's first kept entry, so the plan still holds (beyond pi, which
    chains a stale plan onto whatever branch is last)."""
    ids = [entry.get("id") for entry in path]
    if planned_leaf_id is None:
        start = 0
    elif planned_leaf_id in ids:
        start = ids.index(planned_leaf_id) + 1
    else:
        return False
    return not any(entry.get("type") == COMPACTION for entry in path[start:])


def _check_first_kept(
    pending: Sequence[Mapping[str, Any]],
    foreign: Sequence[Mapping[str, Any]],
    known: Mapping[str, Any],
    new_parent: Any,
    where: str,
) -> None:
    """Raise :class:`FirstKeptOffPathError` when a pending compaction,
    chained onto ``new_parent`` (the other writer's last entry), keeps an
    entry that is not on its path there."""
    compactions = [(i, e) for i, e in enumerate(pending) if e.get("type") == COMPACTION]
    if not compactions:
        return
    foreign_by_id = {r.get("id"): r for r in foreign}
    on_path: set[Any] = set()
    node: Mapping[str, Any] | None = foreign_by_id.get(new_parent) or known.get(new_parent)
    while node is not None and node.get("id") not in on_path:
        on_path.add(node.get("id"))
        parent = node.get("parentId")
        node = foreign_by_id.get(parent) or (known.get(parent) if isinstance(parent, str) else None)
    for i, entry in compactions:
        first_kept = entry.get("firstKeptEntryId")
        before = {e.get("id") for e in pending[: i + 1]}  # the pending entries before it, and itself ("keep nothing")
        if isinstance(first_kept, str) and first_kept not in on_path and first_kept not in before:
            raise FirstKeptOffPathError(where, first_kept, new_parent, len(foreign))


def follow_foreign_lines(
    lines: Sequence[bytes],
    *,
    known: Mapping[str, Any],
    pending: Sequence[Mapping[str, Any]],
    tip: str | None,
    concurrent: Literal["follow", "strict"],
    planned_leaf: Any = UNDEFINED,
    where: str = "",
) -> FollowedWriter | None:
    """Apply the stale-leaf rule to the lines another writer appended.

    Args:
        lines: the lines past the size this process knew.
        known: the entries this process holds, by id.
        pending: the entries being written (not empty).
        tip: the id of the session's last entry as this process knew it
            (None for a session of only its header).
        concurrent: ``"follow"`` or ``"strict"``.
        planned_leaf: the leaf a compaction being written was planned at
            (``UNDEFINED``: no plan to keep to).
        where: how messages name the session.

    Returns:
        None when ``lines`` hold no other writer's entry (write as planned);
        else a :class:`FollowedWriter`.

    Raises:
        pi_session.storage.ConcurrentAppendError: ``"strict"`` and another
            writer appended entries.
        pi_session.storage.LeafMovedError: the entries continue the planned
            leaf's path no longer (nothing must be written).
    """
    foreign = foreign_entries(lines, known, {r.get("id") for r in pending})
    if not foreign:
        return None
    if concurrent == "strict":
        raise ConcurrentAppendError(where, len(foreign))
    first = pending[0]
    continues = first.get("parentId") == tip
    if planned_leaf is not UNDEFINED and continues:
        foreign_by_id = {r.get("id"): r for r in foreign}
        node: Mapping[str, Any] | None = foreign[-1]
        seen: set[Any] = set()
        while node is not None and node.get("id") != tip and node.get("id") not in seen:
            seen.add(node.get("id"))
            parent = node.get("parentId")
            node = foreign_by_id.get(parent) or (known.get(parent) if isinstance(parent, str) else None)
        chain = [n for n in foreign if n.get("id") in seen]
        if node is None or node.get("id") != tip or not continues_plan([node, *chain], tip):
            raise LeafMovedError(where, tip, foreign[-1].get("id"), len(foreign))
    last = foreign[-1].get("id")
    if continues:
        _check_first_kept(pending, foreign, known, last, where)
        where_now = f"continues after them (from {last})"
    else:
        where_now = f"stays on its branch (from {first.get('parentId')})"
    note = (
        f"{where}: {len(foreign)} entr{'y was' if len(foreign) == 1 else 'ies were'} appended by another "
        f"writer since this session was read; loaded, and entry {first.get('id')} {where_now}"
    )
    return FollowedWriter(foreign, last if continues else None, note)
