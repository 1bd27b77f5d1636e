"""Building the LLM context from the session tree (SPEC 5).

Size (over 500 lines): pi's context building is one concept (context entries, the projection, context edits, system-message replay, convert_to_llm), with fast paths that share its internals.

Pure functions: :func:`build_session_context` walks from a leaf to the root
and resolves compactions, branch summaries and custom messages into the list
of agent messages pi would send; :func:`convert_to_llm` turns agent messages
into the three roles a model API knows (user, assistant, toolResult).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from operator import methodcaller
from typing import Any, TypeVar

from .jsonio import js_stringify
from .records import UNDEFINED, SessionContext, SessionProjection
from .timestamps import MISSING, iso_to_ms
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
    "entry_messages",
    "collect_context_edits",
    "apply_context_edit",
    "projected_messages",
    "applied_context_edits",
    "edited_entry",
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


UNSET: Any = UNDEFINED
"""Leaf argument meaning "not given": use the last entry (pi's ``undefined``)."""

# Our own wording around the <summary> tags (the tags are the wire format).
COMPACTION_SUMMARY_PREFIX = (
    "Earlier parts of this conversation were condensed to save context. "
    "What happened before this point is summarized here:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The conversation returned here from another branch that was explored and left. "
    "What happened on that branch is summarized here:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


def create_custom_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``custom`` agent message for a ``custom_message`` entry.

    Keys follow pi's order (role, customType, content, display, details,
    timestamp); a null or missing ``content`` is ``[]`` (pi 1.6), other keys
    absent from the entry are absent from the message, as
    ``JSON.stringify`` drops undefined values. ``timestamp`` is Unix ms
    (None where JavaScript's ``new Date(timestamp)`` is invalid, see
    :func:`pi_session.timestamps.iso_to_ms`).
    """
    msg: dict[str, Any] = {"role": "custom"}
    if "customType" in entry:
        msg["customType"] = entry["customType"]
    content = entry.get("content")
    msg["content"] = [] if content is None else content
    for key in ("display", "details"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


def create_branch_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``branchSummary`` agent message for a ``branch_summary`` entry:
    ``{role, summary, fromId, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "branchSummary"}
    for key in ("summary", "fromId"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


def create_compaction_summary_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ``compactionSummary`` agent message for a ``compaction`` entry:
    ``{role, summary, tokensBefore, timestamp (Unix ms)}``."""
    msg: dict[str, Any] = {"role": "compactionSummary"}
    for key in ("summary", "tokensBefore"):
        if key in entry:
            msg[key] = entry[key]
    msg["timestamp"] = iso_to_ms(entry.get("timestamp", MISSING))
    return msg


def message_from_entry(entry: Mapping[str, Any], *, include_compaction: bool = True) -> dict[str, Any] | None:
    """The agent message an entry contributes, or None.

    ``message`` entries give their message; ``custom_message``,
    ``branch_summary`` and (unless ``include_compaction`` is false)
    ``compaction`` entries give a constructed message. This is pi's
    ``getMessageFromEntry`` used by compaction and branch summaries; note
    that context building skips empty branch summaries, this does not.
    """
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg if isinstance(msg, dict) else None
    if etype == "custom_message":
        return create_custom_message(entry)
    if etype == "branch_summary":
        return create_branch_summary_message(entry)
    if etype == "compaction" and include_compaction:
        return create_compaction_summary_message(entry)
    return None


def text_content(content: Any, separator: str = "") -> str:
    """The text of a message content: a string as it is, or the ``text`` of
    its text blocks joined by ``separator`` (other blocks, and text that is
    not a string, are skipped); anything else gives ``""``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        text
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text"
        for text in (block.get("text"),)
        if isinstance(text, str)
    )


def build_session_context(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None = UNSET,
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
    leaf_id: str | None = UNSET,
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
    none) saves a scan when the caller knows it.
    """
    if compaction_index is None:
        compaction_index = _last_compaction_index(path)
    if compaction_index < 0:
        return list(path)
    compaction = path[compaction_index]
    out: list[_Entry] = [compaction]
    start = _kept_start(path, compaction_index)
    for i in range(start, compaction_index):
        entry = path[i]
        if entry.get("type") == "message":
            msg = entry.get("message")
            if isinstance(msg, dict) and msg.get("role") == "system":
                continue
        out.append(entry)
    out.extend(islice(path, compaction_index + 1, None))
    return out


def context_entries_and_edits(path: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[Any, Any]]:
    """:func:`context_entries_from_path` and :func:`collect_context_edits`
    of them, for a long path: without a compaction on the path (then the
    context entries are the whole path) one scan from the end finds both
    that and whether there is any ``context_edit`` at all."""
    saw_edit = False
    for i in range(len(path) - 1, -1, -1):
        etype = path[i].get("type")
        if etype == "compaction":
            break
        if etype == "context_edit":
            saw_edit = True
    else:
        entries = list(path)
        return entries, collect_context_edits(entries) if saw_edit else {}
    entries = context_entries_from_path(path)
    return entries, collect_context_edits(entries)


_type_of = methodcaller("get", "type")
"""``entry.get("type")``, for ``map`` (path scans that run in C)."""


def _last_compaction_index(path: Sequence[Mapping[str, Any]]) -> int:
    for i in range(len(path) - 1, -1, -1):
        if path[i].get("type") == "compaction":
            return i
    return -1


def _kept_start(path: Sequence[Mapping[str, Any]], compaction_index: int) -> int:
    """Index of the compaction's first kept entry before it on the path, or
    ``compaction_index`` (nothing kept) when there is none. Scans back from
    the compaction: the kept entries are the recent ones, and the ids on a
    path are unique (a repeated id would be a cycle, cut when walking), so
    this finds the same entry as pi's forward search."""
    first_kept = path[compaction_index].get("firstKeptEntryId")
    for i in range(compaction_index - 1, -1, -1):
        if path[i].get("id") == first_kept:
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


def entry_messages(entry: Mapping[str, Any], *, leading: bool = False) -> list[dict[str, Any]]:
    """The messages one context entry contributes before context edits (pi
    1.6's ``sessionEntryToContextMessages``).

    - ``message``: the message; a user/assistant/toolResult message whose
      ``content`` is null or missing gets ``content: []`` (a copy; a
      ``system`` one gets ``""``). A ``message`` that is not an object
      contributes nothing (beyond pi, which would pass it on).
    - ``custom_message``: one ``custom`` message (null content → ``[]``).
    - ``branch_summary`` with a non-empty summary: one ``branchSummary``.
    - ``compaction``, only when ``leading`` (position 0 of the context
      entries): its ``systemMessage`` (when it is an object) then its
      ``compactionSummary``; elsewhere ``[]``.
    - anything else (``context_edit``, ``usage``, labels, ...): ``[]``.
    """
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if not isinstance(msg, dict):
            return []
        return [_normalized(msg)]
    if etype == "custom_message":
        return [create_custom_message(entry)]
    if etype == "branch_summary":
        return [create_branch_summary_message(entry)] if entry.get("summary") else []
    if etype == "compaction" and leading:
        system = entry.get("systemMessage")
        summary = create_compaction_summary_message(entry)
        return [system, summary] if isinstance(system, dict) else [summary]
    return []


_EMPTY_CONTENT_ROLES = frozenset(("user", "assistant", "toolResult"))


def _normalized(msg: dict[str, Any]) -> dict[str, Any]:
    """``msg`` itself, or a copy whose null or missing ``content`` is ``[]``
    (``""`` for a system message), as pi 1.6 sends it."""
    if msg.get("content") is not None:
        return msg
    role = msg.get("role")
    if role.__class__ is not str:  # a malformed role (a list, an object) is no known role
        return msg
    if role in _EMPTY_CONTENT_ROLES:
        return {**msg, "content": []}
    if role == "system":
        return {**msg, "content": ""}
    return msg


EDITABLE_ROLES = frozenset(("user", "assistant", "toolResult", "custom"))
"""Roles whose ``content`` a context edit replaces (pi 1.6); other roles keep
theirs (an edit can still omit them)."""
_BLOCK_ROLES = frozenset(("assistant", "toolResult"))
_NO_EDIT: Any = UNDEFINED


def collect_context_edits(entries: Iterable[Mapping[str, Any]]) -> dict[Any, Any]:
    """The context edits that apply among ``entries`` (pi 1.6): target id →
    replacement (None = omit, else the ``{"content": ...}`` value as
    written). For each target the last edit in order wins, wherever it
    stands relative to its target.

    An edit without a ``replacement`` key, or whose ``targetId`` cannot name
    an entry (an array or object), is ignored (pi throws on the first and
    no context can be built; we report it in ``check`` instead)."""
    entries = entries if isinstance(entries, (list, tuple)) else list(entries)
    if "context_edit" not in map(_type_of, entries):
        return {}
    return {entry["targetId"]: entry["replacement"] for entry in _counted_edits(entries)}


def _counted_edits(entries: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The ``context_edit`` entries among ``entries`` that count: with a
    ``replacement`` key and a ``targetId`` that can name an entry."""
    for entry in entries:
        if entry.get("type") == "context_edit" and "replacement" in entry and entry.get("targetId").__hash__ is not None:
            yield entry


counted_edits = _counted_edits
"""The ``context_edit`` entries that count (public name, for the viewer)."""


def apply_context_edit(messages: list[dict[str, Any]], replacement: Any) -> list[dict[str, Any]]:
    """The messages an entry contributes once a context edit applies (pi 1.6).

    ``replacement`` None omits them all. Otherwise each user, assistant,
    toolResult and custom message gets a copy whose ``content`` is the
    replacement's ``content``: a string stays a string for user and custom
    messages and becomes one text block for assistant and toolResult ones;
    other values are used as given, and a replacement without ``content``
    (or that is not an object) drops the key, as pi's spread of
    ``undefined`` does. Messages of other roles (system, bashExecution,
    summaries) are unchanged. Never mutates its input."""
    if replacement is None:
        return []
    content = replacement.get("content", _NO_EDIT) if isinstance(replacement, dict) else _NO_EDIT
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role") if isinstance(msg, dict) else None
        if role.__class__ is not str or role not in EDITABLE_ROLES:
            out.append(msg)
            continue
        edited = dict(msg)
        if content is _NO_EDIT:
            edited.pop("content", None)
        elif isinstance(content, str) and role in _BLOCK_ROLES:
            edited["content"] = [{"type": "text", "text": content}]
        else:
            edited["content"] = content
        out.append(edited)
    return out


def applied_context_edits(path: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """The context edits that decide what the model sees at the end of a
    root→leaf path: target id → (id of the deciding edit, its replacement),
    taken from the context entries as :func:`collect_context_edits` does
    (for displays that mark edited and omitted entries)."""
    return {
        entry["targetId"]: (str(entry.get("id")), entry["replacement"])
        for entry in _counted_edits(context_entries_from_path(path))
        if entry["targetId"].__class__ is str
    }


def edited_entry(entry: Mapping[str, Any], replacement: Any) -> Mapping[str, Any]:
    """``entry`` as the model sees it after a non-null context edit: a copy
    whose message (or custom_message content) carries the replacement
    content (see :func:`apply_context_edit`); other entries unchanged."""
    etype = entry.get("type")
    if etype == "message" and isinstance(entry.get("message"), dict):
        return {**entry, "message": apply_context_edit([entry["message"]], replacement)[0]}
    if etype == "custom_message":
        edited = apply_context_edit([{"role": "custom", "content": entry.get("content")}], replacement)[0]
        return {**entry, "content": edited.get("content")}
    return entry


def build_session_projection(
    entries: Sequence[Mapping[str, Any]],
    leaf_id: str | None = UNSET,
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
        if etype == "message":
            msg = entry.get("message")
            if msg.__class__ is dict or isinstance(msg, dict):
                append(msg if msg.get("content") is not None else _normalized(msg))
        elif etype == "context_edit":
            out: list[Any] = []
            for _entry, contributed in _contributions(path):
                out.extend(contributed)
            return out
        elif etype == "custom_message":
            append(create_custom_message(entry))
        elif etype == "branch_summary":
            if entry.get("summary"):
                append(create_branch_summary_message(entry))
        elif etype == "compaction" and entry is first:
            messages.extend(entry_messages(entry, leading=True))
    return messages


def _path_settings(path: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"thinkingLevel"?, "model"}`` along a path: the last
    thinking_level_change and the last model_change or assistant message
    (context edits and omissions do not change them). ``thinkingLevel`` is
    absent when the last change has no such key (pi's undefined)."""
    return _scan_back(path)[1]


def _scan_back(path: Sequence[Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
    """One walk back along a path: (index of the last compaction or -1,
    :func:`_path_settings`). Stops as soon as all three are known."""
    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    model_found = False
    thinking_found = False
    compaction_index = -1
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        etype = entry.get("type")
        if etype == "message":
            if model_found:
                continue
            msg = entry.get("message")
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                model = _model_ref(msg.get("provider", UNSET), msg.get("model", UNSET))
                model_found = True
            else:
                continue
        elif etype == "model_change":
            if model_found:
                continue
            model = _model_ref(entry.get("provider", UNSET), entry.get("modelId", UNSET))
            model_found = True
        elif etype == "thinking_level_change":
            if thinking_found:
                continue
            thinking_level = entry.get("thinkingLevel", UNSET)
            thinking_found = True
        elif etype == "compaction":
            if compaction_index >= 0:
                continue
            compaction_index = i
        else:
            continue
        if model_found and thinking_found and compaction_index >= 0:
            break
    out: dict[str, Any] = {}
    if thinking_level is not UNSET:
        out["thinkingLevel"] = thinking_level
    out["model"] = model
    return compaction_index, out


def get_current_system_message(messages: Iterable[Any]) -> dict[str, Any] | None:
    """The prompt state a message list replays to (pi-ai's
    ``getCurrentSystemMessage``, pi 1.6), or None without system messages.

    Walks every ``system`` message in order: non-empty content texts (a
    string, or text blocks joined by ``"\n"``) are joined by a blank line;
    ``sections`` patches one ordered map (a replaced name keeps its place, a
    None value removes the name, a name added after a removal goes to the
    end); ``toolsRemoved`` then ``toolsAdded`` change the tool set by name.

    Returns:
        ``{"role": "system", "content", "sections"?, "toolsAdded"?,
        "timestamp"?}``: sections only if any remain, ``toolsAdded`` the
        current tools only if any, ``timestamp`` the first one found.
    """
    seen = False
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for msg in messages:
        if not isinstance(msg, dict) or msg.get("role") != "system":
            continue
        seen = True
        text = _system_content_text(msg.get("content"))
        if text:
            texts.append(text)
        patch = msg.get("sections")
        if isinstance(patch, dict):
            for name, value in patch.items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        removed = msg.get("toolsRemoved")
        for tool in removed if isinstance(removed, list) else ():
            if isinstance(tool, dict) and tool.get("name").__hash__ is not None:
                tools.pop(tool.get("name"), None)
        added = msg.get("toolsAdded")
        for tool in added if isinstance(added, list) else ():
            if isinstance(tool, dict) and tool.get("name").__hash__ is not None:
                tools[tool.get("name")] = tool
        if timestamp is None:
            timestamp = msg.get("timestamp")
    if not seen:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    if timestamp is not None:
        out["timestamp"] = timestamp
    return out


def _system_content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return text_content(content, "\n")


def system_message_text(message: Mapping[str, Any]) -> str:
    """The prompt text of a (replayed) system message: its content, then
    every non-null section value, non-empty parts joined by a blank line
    (pi 1.6's rendering of a prompt state)."""
    parts = [_system_content_text(message.get("content"))]
    sections = message.get("sections")
    if isinstance(sections, dict):
        parts.extend(v for v in sections.values() if isinstance(v, str))
    return "\n\n".join(p for p in parts if p)


def _model_ref(provider: Any, model_id: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {}
    if provider is not UNSET:
        ref["provider"] = provider
    if model_id is not UNSET:
        ref["modelId"] = model_id
    return ref


def bash_execution_to_text(msg: Mapping[str, Any]) -> str:
    """The user-message text a ``bashExecution`` message becomes for the model:
    the command, its output in a code fence (or a note that there was none),
    and notes for cancellation, a non-zero exit code and truncated output."""
    text = f"The user ran the shell command `{_as_text(msg.get('command', ''))}`\n"
    output = msg.get("output")
    if output:
        text += f"```\n{_as_text(output)}\n```"
    else:
        text += "(it printed nothing)"
    exit_code = msg.get("exitCode")
    if msg.get("cancelled"):
        text += "\n\n(the command was cancelled before it finished)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nExit code: {_as_text(exit_code)}"
    if msg.get("truncated") and msg.get("fullOutputPath"):
        text += f"\n\n[The output above is cut short; all of it is in {_as_text(msg['fullOutputPath'])}]"
    return text


def _as_text(value: Any) -> str:
    """A field as text in a message we build: strings as they are; other
    values (malformed fields) as their JSON, ``undefined`` for a missing
    one, as JavaScript string concatenation would show numbers, booleans
    and null."""
    if isinstance(value, str):
        return value
    if value is _MISSING:
        return "undefined"
    try:
        return js_stringify(value)
    except (TypeError, ValueError):
        return str(value)


_MISSING: Any = UNDEFINED


def convert_to_llm(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn agent messages into LLM messages (pi's ``convertToLlm``).

    ``user``, ``assistant``, ``toolResult`` and (pi 1.6) ``system`` pass
    through unchanged;
    ``bashExecution`` becomes a user text (dropped when
    ``excludeFromContext``); ``custom`` becomes a user message with its
    content (a string becomes one text block); ``branchSummary`` and
    ``compactionSummary`` become user texts wrapping the summary in
    ``<summary>`` tags. Unknown roles are dropped.

    Malformed input never raises: items that are not objects and messages
    without a known ``role`` are dropped; a custom message's ``content``
    that is neither a string nor a list becomes ``[]``; summary and bash
    fields that are not strings are written as JSON (``undefined`` when
    missing), where JavaScript concatenation would stringify them.

    Returns:
        A new list; passed-through messages are the same dict objects.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role in ("user", "assistant", "toolResult", "system"):
            out.append(m)  # type: ignore[arg-type]
        elif role == "bashExecution":
            if m.get("excludeFromContext"):
                continue
            out.append(_user_text(bash_execution_to_text(m), m))
        elif role == "custom":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            elif not isinstance(content, list):
                content = []
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "branchSummary":
            out.append(_user_text(BRANCH_SUMMARY_PREFIX + _as_text(m.get("summary", _MISSING)) + BRANCH_SUMMARY_SUFFIX, m))
        elif role == "compactionSummary":
            out.append(
                _user_text(COMPACTION_SUMMARY_PREFIX + _as_text(m.get("summary", _MISSING)) + COMPACTION_SUMMARY_SUFFIX, m)
            )
    return out


def _user_text(text: str, source: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": source.get("timestamp")}
