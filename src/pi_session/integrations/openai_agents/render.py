"""The context of a session as Responses input items (**beyond pi**).

:func:`render_items` turns a session projection into items with the
adapters' pairing rules (:func:`pi_session.adapters.canonical.canonicalize`):
orphan and duplicate outputs are dropped, an output separated from its call
is moved next to it, a call without output gets an error output
(:data:`pi_session.adapters.MISSING_RESULT_TEXT`). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...adapters.canonical import canonicalize
from ...context import convert_to_llm
from .convert import (
    ITEM_CUSTOM_TYPE,
    ITEM_KEY,
    assistant_block_from_pi,
    missing_result,
    result_from_pi,
    split_call_id,
    user_from_pi,
)
from .overlay import apply_overlay


@dataclass(frozen=True)
class RenderedItem:
    """One item of the context and where it comes from.

    Attributes:
        item: the input item.
        entry_id: the session entry holding it; None for an output inserted
            by the pairing rules (a call without a recorded output).
        block: for an assistant message, the index of its content block.
    """

    item: dict[str, Any]
    entry_id: str | None
    block: int | None = None


def is_item_entry(entry: Mapping[str, Any]) -> bool:
    """A ``custom`` entry holding an item with no pi equivalent."""
    data = entry.get("data")
    return (
        entry.get("type") == "custom"
        and entry.get("customType") == ITEM_CUSTOM_TYPE
        and isinstance(data, Mapping)
        and isinstance(data.get("item"), Mapping)
    )


def _edited(message: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    raw = entry.get("message") if entry.get("type") == "message" else None
    return not isinstance(raw, Mapping) or raw.get("content") != message.get("content")


def render_items(projection: Mapping[str, Any]) -> list[RenderedItem]:
    """The context of a projection as Responses input items, always a valid
    request (see the module docs).

    Args:
        projection: a :class:`pi_session.records.SessionProjection`.

    Returns:
        :class:`RenderedItem` s in context order: a compaction or branch
        summary as a user message with string content (the ``<summary>``
        text pi gives the model), stored items as they were added, items of ``custom`` item
        entries where they stand on the path. As in the adapters, user and
        assistant messages with no content but whitespace are left out
        (some providers refuse them).
    """
    units: list[tuple[str, Any]] = []
    messages: list[dict[str, Any]] = []
    sources: list[Mapping[str, Any]] = []
    for row in projection["entries"]:
        entry = row["sourceEntry"]
        if is_item_entry(entry):
            units.append(("raw", entry))
            continue
        for m in row["messages"]:
            units.append(("msg", len(messages)))
            messages.append(m)
            sources.append(entry)
    position = {idx: u for u, (kind, idx) in enumerate(units) if kind == "msg"}
    raws = [(u, entry) for u, (kind, entry) in enumerate(units) if kind == "raw"]
    turns, _repairs = canonicalize(messages, "text")
    out: list[RenderedItem] = []
    r = 0

    def flush_raw(before: int) -> None:
        nonlocal r
        while r < len(raws) and raws[r][0] < before:
            entry = raws[r][1]
            out.append(RenderedItem(dict(entry["data"]["item"]), entry.get("id")))
            r += 1

    for turn in turns:
        flush_raw(position[turn.src])
        message = messages[turn.src]
        entry = sources[turn.src]
        entry_id = entry.get("id")
        if turn.role == "user":
            from_item = message.get("role") == "user"
            for llm in convert_to_llm([message]):
                item = user_from_pi(llm, plain_text=not from_item)
                if from_item:
                    item = apply_overlay(item, message.get(ITEM_KEY), edited=_edited(message, entry))
                out.append(RenderedItem(item, entry_id))
            continue
        uids = iter([c.uid for c in turn.calls])
        content = message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping):
                continue
            uid: str | None = next(uids, None) if block.get("type") == "toolCall" else None
            rendered = assistant_block_from_pi(block, split_call_id(uid) if uid is not None else None)
            if rendered is not None:
                out.append(RenderedItem(rendered, entry_id, index))
        if isinstance(content, str) and content.strip():
            out.append(RenderedItem({"role": "assistant", "content": content}, entry_id))
        for call in turn.calls:
            call_id: str = split_call_id(call.uid)
            if call.result is None or call.result.src is None:
                out.append(RenderedItem(missing_result(call_id), None))
                continue
            src = call.result.src
            result = messages[src]
            out.append(RenderedItem(result_from_pi(result, call_id, edited=_edited(result, sources[src])), sources[src].get("id")))
    flush_raw(len(units))
    return out


def limit_items(rendered: list[RenderedItem], limit: int | None) -> list[RenderedItem]:
    """The latest ``limit`` items (all for None or a negative limit, none
    for 0: SQLite's ``LIMIT``, as the SDK's ``SQLiteSession``), without
    outputs at the start whose call was cut off (so the slice is still a
    valid request)."""
    if limit is None or limit < 0:
        return rendered
    if limit == 0:
        return []
    tail = rendered[-limit:]
    calls = {r.item.get("call_id") for r in tail if r.item.get("type") == "function_call"}
    return [r for r in tail if not (r.item.get("type") == "function_call_output" and r.item.get("call_id") not in calls)]
