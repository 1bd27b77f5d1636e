"""The context of a session as Responses input items (**beyond pi**).

:func:`render_items` turns a session projection into the items that were
added, in the order they stand on the path (after pi's context rules: a
compaction summary in place of what it summarised, the branch of the
leaf, context edits). No pairing rules are applied: a call without an
output (one waiting for approval, or whose output was never written), an
output without a call and an output apart from its call come back as they
were added, since the SDK owns pairing and pending approvals (its
``Runner`` reconciles a pending session write against exactly these
items). The provider-valid pairing of :mod:`pi_session.adapters` belongs to
the requests pi-session builds itself. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...session.context import convert_to_llm
from .convert import (
    ITEM_CUSTOM_TYPE,
    ITEM_KEY,
    assistant_block_from_pi,
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
        entry_id: the session entry holding it (a compaction or branch
            summary: that entry); None only for an entry without an id (a
            damaged file).
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


def _message_items(message: Mapping[str, Any], entry: Mapping[str, Any], calls: dict[str, str]) -> list[RenderedItem]:
    """The items of one context message; ``calls`` (pi tool-call id → the
    ``call_id`` of its item) is filled from assistant messages and read
    by tool results."""
    entry_id = entry.get("id")
    role = message.get("role")
    content = message.get("content")
    out: list[RenderedItem] = []
    if role == "assistant":
        for index, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping):
                continue
            item = assistant_block_from_pi(block)
            if item is None:
                continue
            if block.get("type") == "toolCall" and isinstance(block.get("id"), str) and isinstance(item.get("call_id"), str):
                calls[block["id"]] = item["call_id"]
            out.append(RenderedItem(item, entry_id, index))
        if isinstance(content, str) and content.strip():
            out.append(RenderedItem({"role": "assistant", "content": content}, entry_id))
        return out
    if role == "toolResult":
        pi_id = message.get("toolCallId")
        call_id = calls.get(pi_id) if isinstance(pi_id, str) else None
        result = result_from_pi(message, call_id if call_id is not None else split_call_id(pi_id), edited=_edited(message, entry))
        return [RenderedItem(result, entry_id)]
    from_item = role == "user"
    for llm in convert_to_llm([message]):
        if llm.get("role") != "user":
            continue  # pi 1.6 system messages: pi replays them into the system prompt
        item = user_from_pi(llm, plain_text=not from_item)
        if from_item:
            item = apply_overlay(item, message.get(ITEM_KEY), edited=_edited(message, entry))
        elif _blank(llm):
            continue  # a message pi made with no text (the adapters leave it out too)
        out.append(RenderedItem(item, entry_id))
    return out


def _blank(message: Mapping[str, Any]) -> bool:
    """A message with neither an image nor text other than whitespace."""
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
    return not any(
        isinstance(b, Mapping)
        and (b.get("type") == "image" or (b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip()))
        for b in blocks
    )


def render_items(projection: Mapping[str, Any]) -> list[RenderedItem]:
    """The context of a projection as the Responses input items that were
    added (see the module docs).

    Args:
        projection: a :class:`pi_session.entries.SessionProjection`.

    Returns:
        :class:`RenderedItem` s in context order: a compaction or branch
        summary as a user message with string content (the ``<summary>``
        text pi gives the model), every stored item as it was added (also
        a reasoning item with an empty summary, a call without output, an
        output without call, an empty message), items of ``custom`` item
        entries where they stand on the path. Messages pi made itself
        (summaries, custom and bash messages) become user messages; those
        without text are left out, as the adapters leave them out.
    """
    out: list[RenderedItem] = []
    calls: dict[str, str] = {}
    for row in projection["entries"]:
        entry = row["sourceEntry"]
        if is_item_entry(entry):
            out.append(RenderedItem(dict(entry["data"]["item"]), entry.get("id")))
            continue
        for message in row["messages"]:
            if isinstance(message, Mapping):
                out.extend(_message_items(message, entry, calls))
    return out


def limit_items(rendered: list[RenderedItem], limit: int | None) -> list[RenderedItem]:
    """The latest ``limit`` items (all for None or a negative limit, none
    for 0: SQLite's ``LIMIT``, as the SDK's ``SQLiteSession``), cut as
    they stand (an output whose call falls outside the slice stays in it,
    as in the SDK's sessions)."""
    if limit is None or limit < 0:
        return rendered
    if limit == 0:
        return []
    return rendered[-limit:]
