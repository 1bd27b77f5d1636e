"""Building the model context from the session tree (pi 1.6's
``buildSessionContext``, ``buildContextEntries`` and
``buildSessionProjection``).

Pure functions: :func:`build_session_context` walks from a leaf to the root
and resolves compactions, branch summaries, custom messages and context
edits into the list of agent messages pi would send;
:func:`build_session_projection` says which entry contributes which of
them. The pieces live in their own modules and are named here too:
:mod:`pi_session.entries.agent_messages` (the messages of one entry, ``convert_to_llm``),
:mod:`pi_session.session.context_edits` and :mod:`pi_session.entries.system_messages`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from ..entries.source import EntrySource, entry_source
from .context_edits import (
    EDITABLE_ROLES,
    apply_context_edit,
    collect_context_edits,
    counted_edits,
    edited_entry,
)
from ..entries.agent_messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    bash_execution_to_text,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    message_from_entry,
    normalized_message,
    text_content,
)
from ..entries import SessionContext, SessionProjection, entry_messages
from ..entries.questions import (
    BRANCH_SUMMARY, COMPACTION, CONTEXT_EDIT, CUSTOM_MESSAGE, MESSAGE, MODEL_CHANGE, THINKING_LEVEL_CHANGE, is_assistant,
    is_system, message_of,
)
from ..entries.records import UNDEFINED, Undefined
from ..entries.system_messages import get_current_system_message, system_message_text
from .tree import path_to_root

__all__ = [
    "UNSET",
    "build_session_context",
    "build_session_projection",
    "build_context_entries",
    "context_from_path",
    "projection_from_path",
    "projection_to_json",
    "context_entries_from_path",
    "context_entries_and_edits",
    "applied_context_edits",
    "projected_messages",
    # named here from their modules (see the module docstring)
    "EDITABLE_ROLES",
    "apply_context_edit",
    "collect_context_edits",
    "counted_edits",
    "edited_entry",
    "entry_messages",
    "get_current_system_message",
    "system_message_text",
    "convert_to_llm",
    "bash_execution_to_text",
    "text_content",
    "message_from_entry",
    "create_custom_message",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
]


UNSET: Final[Undefined] = UNDEFINED
"""Leaf argument meaning "not given": use the last entry (pi's ``undefined``;
the package's one :data:`pi_session.entries.records.UNDEFINED`)."""


def build_session_context(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None | Undefined = UNSET,
    by_id: Mapping[str, Mapping[str, Any]] | None = None,
) -> SessionContext:
    """Resolve the messages, thinking level and model at a leaf (pi's
    ``buildSessionContext``).

    Args:
        entries: the session entries in file order (header excluded).
        leaf_id: the leaf entry id; None means "before the first entry" (no
            messages); :data:`UNSET` (the default) or an unknown id means the
            last entry.
        by_id: optional prebuilt index id → entry.

    Returns:
        ``{"messages": [...], "thinkingLevel": str, "model": {provider,
        modelId} | None}``, the messages of :func:`build_session_projection`
        (pi 1.6). Along the root→leaf path the last ``thinking_level_change``
        gives thinkingLevel (default ``"off"``), the last ``model_change`` or
        assistant message gives model, and the last ``compaction`` replaces
        everything before its ``firstKeptEntryId`` with its ``systemMessage``
        (if any) and a ``compactionSummary`` message; system messages in the
        kept range are left out. Context edits on the context entries
        replace or omit their targets' content (see
        :func:`apply_context_edit`). A parentId cycle is cut at the first
        repeated entry (pi would loop forever).

    Malformed entries never make it raise: ids and parentIds that are not
    strings only match equal values (arrays/objects match nothing), a
    ``message`` that is not an object contributes no message, and other
    fields are passed on as they are (as pi does).
    """
    if leaf_id is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    path = _path_at(entries, leaf_id, by_id)
    if not path:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    return context_from_path(path)


def _lookup(by_id: Mapping[Any, Mapping[str, Any]], key: Any) -> Mapping[str, Any] | None:
    """``by_id.get(key)``, None for keys that cannot be dict keys."""
    try:
        return by_id.get(key)
    except TypeError:
        return None


def _walk_to_root(leaf: Mapping[str, Any], by_id: Mapping[Any, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Root→leaf path for entries whose ids or parentIds are not strings
    (unhashable ones never match, as a JavaScript Map never matches two
    separately parsed objects); stops at the first repeated entry."""
    path: list[Mapping[str, Any]] = []
    seen: set[int] = set()
    current: Mapping[str, Any] | None = leaf
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent = current.get("parentId")
        current = _lookup(by_id, parent) if parent else None
    path.reverse()
    return path


def _whole_chain(entries: Sequence[Mapping[str, Any]], leaf_id: Any) -> list[Mapping[str, Any]] | None:
    """``entries`` as a list when they are already the root→leaf path that
    walking from ``leaf_id`` would give (the usual input: a branch), else
    None. Checked with whole-list operations, no walk: unique truthy ids,
    each entry the child of the one before, the first one's parent not
    among them, and ``leaf_id`` naming the last entry (or nothing known)."""
    if not entries:
        return None
    ids = [e.get("id") for e in entries]
    if not all(ids) or not all(isinstance(i, str) for i in ids):
        return None
    known = set(ids)
    if len(known) != len(ids):
        return None
    if isinstance(leaf_id, str) and leaf_id != ids[-1] and leaf_id in known:
        return None
    parents = [e.get("parentId") for e in entries]
    if parents[1:] != ids[:-1]:
        return None
    first_parent = parents[0]
    if first_parent and isinstance(first_parent, str) and first_parent in known:
        return None
    return list(entries)


def build_context_entries(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None | Undefined = UNSET,
    by_id: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Mapping[str, Any]]:
    """The compaction-aware entry list at a leaf (pi 1.6's
    ``buildContextEntries``); see :func:`context_entries_from_path`.

    Args: as :func:`build_session_context`. Returns the entries themselves
    (not copies); ``[]`` for a None leaf or no entries."""
    return context_entries_from_path(_path_at(entries, leaf_id, by_id))


_Entry = TypeVar("_Entry", bound=Mapping[str, Any])
"""An entry type; the context entry list holds the path's own objects."""


def context_entries_from_path(path: Sequence[_Entry], compaction_index: int | None = None) -> list[_Entry]:
    """The entries of a root→leaf path that make up the model context (pi
    1.6's ``buildContextEntries``).

    Without a compaction on the path: the whole path, state-only entries
    included. With one (C, the last on the path): ``[C]``, then the path
    entries before C from the one whose id is ``C.firstKeptEntryId`` (none
    when it is not found or is C's own id), leaving out ``system`` messages
    in that kept range, then every entry after C. Older compactions in the
    kept range stay in the list (they contribute no messages).
    ``compaction_index`` (the last compaction's index on the path, -1 for
    none) saves a scan when the caller knows it. Of a lazily read path
    (an :class:`~pi_session.entries.source.EntrySource`) only the returned
    entries are decoded.
    """
    source = entry_source(path)
    if compaction_index is None:
        compaction_index = _last_compaction_index(source)
    if compaction_index < 0:
        return list(path)
    compaction = path[compaction_index]
    out: list[_Entry] = [compaction]
    start = _kept_start(source, compaction_index)
    for entry in path[start:compaction_index]:  # a slice: a lazy path decodes the kept range in one batch
        if is_system(message_of(entry)):
            continue
        out.append(entry)
    out.extend(path[compaction_index + 1 :])  # a slice: a lazy path decodes only these
    return out


def context_entries_and_edits(path: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[Any, Any]]:
    """:func:`context_entries_from_path` and :func:`collect_context_edits`
    of them, for a long path: without a compaction on the path (then the
    context entries are the whole path) one scan from the end finds both
    that and whether there is any ``context_edit`` at all."""
    source = entry_source(path)
    saw_edit = False
    for etype in source.types(reverse=True):
        if etype == COMPACTION:
            break
        if etype == CONTEXT_EDIT:
            saw_edit = True
    else:
        entries: list[Mapping[str, Any]] = list(source)
        return entries, collect_context_edits(entries) if saw_edit else {}
    entries = context_entries_from_path(source)
    return entries, collect_context_edits(entries)


def _last_compaction_index(path: EntrySource) -> int:
    """The index of the last ``compaction`` on ``path``, -1 for none."""
    for i, etype in zip(range(len(path) - 1, -1, -1), path.types(reverse=True)):
        if etype == COMPACTION:
            return i
    return -1


def _kept_start(path: EntrySource, compaction_index: int) -> int:
    """Index of the compaction's first kept entry before it on the path, or
    ``compaction_index`` (nothing kept) when there is none. Scans back from
    the compaction: the kept entries are the recent ones, and the ids on a
    path are unique (a repeated id would be a cycle, cut when walking), so
    this finds the same entry as pi's forward search."""
    first_kept = path[compaction_index].get("firstKeptEntryId")
    id_of = path.id_of
    for i in range(compaction_index - 1, -1, -1):
        if id_of(i) == first_kept:
            return i
    return compaction_index


def _path_at(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: Any,
    by_id: Mapping[str, Mapping[str, Any]] | None,
) -> Sequence[Mapping[str, Any]]:
    """The root→leaf path that :func:`build_session_context` resolves."""
    if leaf_id is None or not entries:
        return []
    if by_id is None:
        whole = _whole_chain(entries, leaf_id)
        if whole is not None:
            return whole
        index: dict[Any, Mapping[str, Any]] = {}  # a damaged file's ids may be numbers
        for e in entries:
            eid = e.get("id")
            if eid.__hash__ is not None:  # an id that is an array/object can never be looked up
                index[eid] = e
        by_id = index
    leaf = _lookup(by_id, leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = entries[-1]
    try:
        return path_to_root(leaf, by_id)
    except TypeError:  # an id or parentId that is an array or object
        return _walk_to_root(leaf, by_id)


def applied_context_edits(path: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """The context edits that decide what the model sees at the end of a
    root→leaf path: target id → (id of the deciding edit, its replacement),
    taken from the context entries as :func:`collect_context_edits` does
    (for displays that mark edited and omitted entries)."""
    return {
        entry["targetId"]: (str(entry.get("id")), entry["replacement"])
        for entry in counted_edits(context_entries_from_path(path))
        if entry["targetId"].__class__ is str
    }


def build_session_projection(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None | Undefined = UNSET,
    by_id: Mapping[str, Mapping[str, Any]] | None = None,
) -> SessionProjection:
    """Which entry contributes which model-visible messages at a leaf (pi
    1.6's ``buildSessionProjection``).

    Args: as :func:`build_session_context`.

    Returns:
        ``{"entries": [{"sourceEntry", "messages"}, ...], "messages",
        "thinkingLevel", "model"}``: one item per context entry (see
        :func:`context_entries_from_path`) with its messages after context
        edits (:func:`collect_context_edits`, :func:`apply_context_edit`);
        ``messages`` is their concatenation, which is exactly
        :func:`build_session_context`'s. Use :func:`projection_to_json` for
        the oracle's JSON shape.
    """
    return projection_from_path(_path_at(entries, leaf_id, by_id))


def projection_from_path(path: Sequence[Mapping[str, Any]]) -> SessionProjection:
    """:func:`build_session_projection` for a root→leaf path of entries."""
    path = entry_source(path)
    items: list[dict[str, Any]] = []
    messages: list[Any] = []
    for entry, contributed in _contributions(path):
        items.append({"sourceEntry": entry, "messages": contributed})
        messages.extend(contributed)
    projection: dict[str, Any] = {"entries": items, "messages": messages}
    projection.update(_path_settings(path))
    return projection  # type: ignore[return-value]


def projection_to_json(projection: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The projection's entries as pi-oracle prints them:
    ``[{"sourceId", "type", "messages"}, ...]``."""
    out = []
    for item in projection["entries"]:
        source = item["sourceEntry"]
        row: dict[str, Any] = {}
        if "id" in source:
            row["sourceId"] = source["id"]
        if "type" in source:
            row["type"] = source["type"]
        row["messages"] = item["messages"]
        out.append(row)
    return out


def projected_messages(entry: Mapping[str, Any], edits: Mapping[Any, Any], *, leading: bool) -> list[dict[str, Any]]:
    """The messages one context entry contributes after context edits (one
    item of :func:`build_session_projection`, computed on its own).

    Args:
        entry: a context entry (see :func:`context_entries_from_path`).
        edits: the edits among the context entries
            (:func:`collect_context_edits`).
        leading: the entry is at position 0 of the context entries.

    Returns:
        :func:`entry_messages`, then :func:`apply_context_edit` with the
        edit targeting the entry's id, if any."""
    contributed = entry_messages(entry, leading=leading)
    if edits:
        eid = entry.get("id")
        if eid.__hash__ is not None and eid in edits:
            contributed = apply_context_edit(contributed, edits[eid])
    return contributed


def _contributions(path: Sequence[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], list[dict[str, Any]]]]:
    """(context entry, its messages after edits) along a path."""
    context_entries = context_entries_from_path(path)
    edits = collect_context_edits(context_entries)
    for i, entry in enumerate(context_entries):
        yield entry, projected_messages(entry, edits, leading=i == 0)


def context_from_path(path: Sequence[Mapping[str, Any]]) -> SessionContext:
    """The context for a root→leaf path of entries, as
    :func:`build_session_context` computes it once it has walked to the root.

    Args:
        path: the entries from the root to the leaf (e.g. from
            :meth:`pi_session.SessionManager.get_branch`).

    Returns:
        ``{"messages", "model", "thinkingLevel"}`` (see
        :func:`build_session_context`): the messages of
        :func:`projection_from_path`, built without the per-entry lists.
    """
    path = entry_source(path)
    compaction_index, settings = _scan_back(path)
    context: dict[str, Any] = {"messages": _context_messages(path, compaction_index)}
    context.update(settings)
    return context  # type: ignore[return-value]


def _context_messages(path: Sequence[Mapping[str, Any]], compaction_index: int | None = None) -> list[Any]:
    """The projection's messages. Fast path for the usual case (no context
    edit among the context entries): one pass appending each message
    entry's message as it is; the first ``context_edit`` met sends the
    work to the projection's per-entry path instead. ``compaction_index``:
    the last compaction's index on the path when already known."""
    context_entries = context_entries_from_path(path, compaction_index)
    messages: list[Any] = []
    append = messages.append
    first = context_entries[0] if context_entries else None
    for entry in context_entries:
        etype = entry.get("type")
        if etype == MESSAGE:
            msg = entry.get("message")
            if msg.__class__ is dict or isinstance(msg, dict):
                append(msg if msg.get("content") is not None else normalized_message(msg))
        elif etype == CONTEXT_EDIT:
            out: list[Any] = []
            for _entry, contributed in _contributions(path):
                out.extend(contributed)
            return out
        elif etype == CUSTOM_MESSAGE:
            append(create_custom_message(entry))
        elif etype == BRANCH_SUMMARY:
            if entry.get("summary"):
                append(create_branch_summary_message(entry))
        elif etype == COMPACTION and entry is first:
            messages.extend(entry_messages(entry, leading=True))
    return messages


def _path_settings(path: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"thinkingLevel"?, "model"}`` along a path: the last
    thinking_level_change and the last model_change or assistant message
    (context edits and omissions do not change them). ``thinkingLevel`` is
    absent when the last change has no such key (pi's undefined)."""
    return _scan_back(entry_source(path))[1]


def _scan_back(path: EntrySource) -> tuple[int, dict[str, Any]]:
    """One walk back along a path: (index of the last compaction or -1,
    :func:`_path_settings`). Stops as soon as all three are known; the
    entries' types come from the source, so of a lazily read path only the
    entries that matter are decoded."""
    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    model_found = False
    thinking_found = False
    compaction_index = -1
    for i, etype in zip(range(len(path) - 1, -1, -1), path.types(reverse=True)):
        if etype == MESSAGE:  # most entries: one test
            if model_found:
                continue
        elif etype.__class__ is not str or etype not in _SCANNED_TYPES:
            continue
        entry = path[i]
        if etype == MESSAGE:
            msg = entry.get("message")
            if isinstance(msg, dict) and is_assistant(msg):
                model = _model_ref(msg.get("provider", UNDEFINED), msg.get("model", UNDEFINED))
                model_found = True
            else:
                continue
        elif etype == MODEL_CHANGE:
            if model_found:
                continue
            model = _model_ref(entry.get("provider", UNDEFINED), entry.get("modelId", UNDEFINED))
            model_found = True
        elif etype == THINKING_LEVEL_CHANGE:
            if thinking_found:
                continue
            thinking_level = entry.get("thinkingLevel", UNDEFINED)
            thinking_found = True
        elif etype == COMPACTION:
            if compaction_index >= 0:
                continue
            compaction_index = i
        else:
            continue
        if model_found and thinking_found and compaction_index >= 0:
            break
    out: dict[str, Any] = {}
    if thinking_level is not UNDEFINED:
        out["thinkingLevel"] = thinking_level
    out["model"] = model
    return compaction_index, out


_SCANNED_TYPES = frozenset({MESSAGE, MODEL_CHANGE, THINKING_LEVEL_CHANGE, COMPACTION})
"""The entry types :func:`_scan_back` looks at."""


def _model_ref(provider: Any, model_id: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {}
    if provider is not UNDEFINED:
        ref["provider"] = provider
    if model_id is not UNDEFINED:
        ref["modelId"] = model_id
    return ref
