"""Context edits (pi 1.6 ``context_edit`` entries): which edits count
(:func:`counted_edits`, :func:`collect_context_edits`) and what an edit does
to the messages of its target (:func:`apply_context_edit`,
:func:`edited_entry`). The target stays in the file unchanged; these are
pure functions on the copies the model sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from operator import methodcaller
from typing import Any

from ..entries.records import UNDEFINED
from ..entries.questions import CONTEXT_EDIT, CUSTOM_MESSAGE, MESSAGE

__all__ = ["EDITABLE_ROLES", "apply_context_edit", "collect_context_edits", "counted_edits", "edited_entry", "edits_left_out"]

EDITABLE_ROLES = frozenset(("user", "assistant", "toolResult", "custom"))
"""Roles whose ``content`` a context edit replaces (pi 1.6); other roles keep
theirs (an edit can still omit them)."""


_BLOCK_ROLES = frozenset(("assistant", "toolResult"))


_type_of = methodcaller("get", "type")
"""``entry.get("type")``, for ``map`` (path scans that run in C)."""


def collect_context_edits(entries: Iterable[Mapping[str, Any]]) -> dict[Any, Any]:
    """The context edits that apply among ``entries`` (pi 1.6): target id →
    replacement (None = omit, else the ``{"content": ...}`` value as
    written). For each target the last edit in order wins, wherever it
    stands relative to its target.

    An edit without a ``replacement`` key, or whose ``targetId`` cannot name
    an entry (an array or object), is ignored (pi throws on the first and
    no context can be built; we report it in ``check`` instead)."""
    entries = entries if isinstance(entries, (list, tuple)) else list(entries)
    if CONTEXT_EDIT not in map(_type_of, entries):
        return {}
    return {entry["targetId"]: entry["replacement"] for entry in counted_edits(entries)}


def counted_edits(entries: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The ``context_edit`` entries among ``entries`` that count: with a
    ``replacement`` key and a ``targetId`` that can name an entry."""
    for entry in entries:
        if entry.get("type") == CONTEXT_EDIT and "replacement" in entry and entry.get("targetId").__hash__ is not None:
            yield entry


def edits_left_out(path: Iterable[Mapping[str, Any]], entries: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The context edits among ``entries`` (a whole session) that target an
    entry of ``path`` but are not on it: a session holding only ``path``
    (a clone up to an earlier entry) shows those targets' original content
    to the model again (e.g. the secret an ``edit --replace`` hid).

    Returns:
        The edit entries, in file order.
    """
    # ids of a damaged session may be any JSON value: only strings name entries
    on_path = {entry_id for entry in path if isinstance(entry_id := entry.get("id"), str)}
    return [
        edit
        for edit in counted_edits(entries)
        if isinstance(edit.get("targetId"), str) and edit["targetId"] in on_path
        and not (isinstance(edit.get("id"), str) and edit["id"] in on_path)
    ]


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
    content = replacement.get("content", UNDEFINED) if isinstance(replacement, dict) else UNDEFINED
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role") if isinstance(msg, dict) else None
        if role.__class__ is not str or role not in EDITABLE_ROLES:
            out.append(msg)
            continue
        edited = dict(msg)
        if content is UNDEFINED:
            edited.pop("content", None)
        elif isinstance(content, str) and role in _BLOCK_ROLES:
            edited["content"] = [{"type": "text", "text": content}]
        else:
            edited["content"] = content
        out.append(edited)
    return out


def edited_entry(entry: Mapping[str, Any], replacement: Any) -> Mapping[str, Any]:
    """``entry`` as the model sees it after a non-null context edit: a copy
    whose message (or custom_message content) carries the replacement
    content (see :func:`apply_context_edit`); other entries unchanged."""
    etype = entry.get("type")
    if etype == MESSAGE and isinstance(entry.get("message"), dict):
        return {**entry, "message": apply_context_edit([entry["message"]], replacement)[0]}
    if etype == CUSTOM_MESSAGE:
        edited = apply_context_edit([{"role": "custom", "content": entry.get("content")}], replacement)[0]
        return {**entry, "content": edited.get("content")}
    return entry
