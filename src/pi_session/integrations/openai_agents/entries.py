"""The SDK's items written to and taken from a pi session tree (the
synchronous work of :class:`~.session.PiSession`'s ``add_items`` and
``pop_item``; **beyond pi**). Each function works on one
:class:`~pi_session.SessionManager`; the item conversion is :mod:`.convert`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...manager.session_manager import SessionManager
from .convert import (
    ITEM_CUSTOM_TYPE,
    MARK_CUSTOM_TYPE,
    InvalidItemError,
    assistant_block_from_pi,
    assistant_to_pi,
    item_kind,
    now_ms,
    result_to_pi,
    split_call_id,
    user_to_pi,
)
from .render import render_items

__all__ = ["NEUTRAL_TYPES", "usage_of_run", "known_calls", "plan_items", "append_items", "move_leaf", "pop_last_item"]

NEUTRAL_TYPES = frozenset({"custom", "label", "session_info", "usage"})
"""Entry types that do not change the context: a leaf move may leave them behind."""


def usage_of_run(wrapper: Any, seen: tuple[int, int] | None) -> tuple[dict[str, Any] | None, tuple[int, int] | None]:
    """The last model request's token usage in the SDK's run context
    ``wrapper``, as pi's ``usage`` of an assistant message.

    Args:
        seen: the key returned for the previous call (a request's usage is
            stored once).

    Returns:
        ``(usage or None, key)``: pass ``key`` as ``seen`` next time.
    """
    usage = getattr(wrapper, "usage", None)
    entries = getattr(usage, "request_usage_entries", None)
    if not entries:
        return None, seen
    key = (id(usage), len(entries))
    if key == seen:
        return None, seen
    last = entries[-1]
    details = getattr(last, "input_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    input_tokens = int(getattr(last, "input_tokens", 0) or 0)
    output_tokens = int(getattr(last, "output_tokens", 0) or 0)
    total = int(getattr(last, "total_tokens", 0) or 0) or input_tokens + output_tokens
    return {
        "input": max(input_tokens - cached, 0),
        "output": output_tokens,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }, key


def known_calls(manager: SessionManager) -> dict[str, tuple[str, str]]:
    """The tool calls on the path to the leaf: SDK call id → (pi tool call
    id, tool name)."""
    calls: dict[str, tuple[str, str]] = {}
    for entry in manager.get_branch():
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                calls[split_call_id(block["id"])] = (block["id"], str(block.get("name")))
    return calls


def plan_items(
    manager: SessionManager, items: Sequence[dict[str, Any]], usage: dict[str, Any] | None, *, provider: str, model: str
) -> list[tuple[str, dict[str, Any]]]:
    """The entries :func:`append_items` writes for plain SDK items, made
    without writing anything: ``("message", pi message)`` or
    ``("custom", data)`` each (see :func:`append_items` for the mapping).

    Raises:
        InvalidItemError: an item the conversion cannot read (named by its
            index in ``items``).
    """
    groups: list[tuple[str, int, list[dict[str, Any]]]] = []
    for index, item in enumerate(items):
        kind = item_kind(item)
        if kind == "assistant" and groups and groups[-1][0] == "assistant":
            groups[-1][2].append(item)
        else:
            groups.append((kind, index, [item]))
    last_assistant = max((i for i, (kind, _, _) in enumerate(groups) if kind == "assistant"), default=-1)
    calls = known_calls(manager)
    planned: list[tuple[str, dict[str, Any]]] = []
    for n, (kind, first, group) in enumerate(groups):
        timestamp = now_ms()
        try:
            if kind == "assistant":
                message = assistant_to_pi(
                    group, provider=provider, model=model, timestamp=timestamp, usage=usage if n == last_assistant else None
                )
                for block in message["content"]:
                    if block["type"] == "toolCall":
                        calls[split_call_id(block["id"])] = (block["id"], block["name"])
                planned.append(("message", message))
            elif kind == "user":
                planned.append(("message", user_to_pi(group[0], timestamp)))
            elif kind == "result":
                call_id = group[0].get("call_id")
                call_id = call_id if isinstance(call_id, str) else ""
                pi_id, name = calls.get(call_id, (call_id, "unknown_tool"))
                planned.append(("message", result_to_pi(group[0], pi_id, name, timestamp)))
            else:
                planned.append(("custom", {"item": group[0]}))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            together = f" (with the {len(group) - 1} item(s) after it, one assistant message)" if len(group) > 1 else ""
            raise InvalidItemError(first, f"cannot be stored as a pi entry{together}: {type(exc).__name__}: {exc}") from None
    return planned


def append_items(
    manager: SessionManager, items: Sequence[dict[str, Any]], usage: dict[str, Any] | None, *, provider: str, model: str
) -> None:
    """Append plain SDK items as pi entries (see :mod:`.convert`): user
    messages, one assistant message per run of reasoning/output/function-call
    items (the last one carries ``usage``), tool results named after their
    calls, and ``custom`` entries for the rest. Every entry is made
    (:func:`plan_items`) before the first is written: an item that cannot
    be converted stores nothing of the batch.

    Raises:
        InvalidItemError: see :func:`plan_items` (nothing written).
        pi_session.storage.AppendError: writing failed.
    """
    for what, payload in plan_items(manager, items, usage, provider=provider, model=model):
        if what == "message":
            manager.append_message(payload)
        else:
            manager.append_custom_entry(ITEM_CUSTOM_TYPE, payload)


def move_leaf(manager: SessionManager, leaf_id: str | None) -> None:
    """Move the leaf to ``leaf_id`` (None: before the first entry) in memory.

    Raises:
        KeyError: no such entry.
    """
    if leaf_id is None:
        manager.reset_leaf()
    else:
        manager.branch(leaf_id)


def pop_last_item(manager: SessionManager) -> dict[str, Any] | None:
    """Take the latest item out of the context and return it (see
    :meth:`~.session.PiSession.pop_item`); nothing is deleted: the leaf
    moves to the parent of its entry (with a marker entry, or a copy of an
    assistant message without the popped block), or, when entries that
    shape the context follow it on the path, a ``context_edit`` leaves it
    out. None when the context is empty."""
    rendered = render_items(manager.build_session_projection())
    last = next((r for r in reversed(rendered) if r.entry_id is not None), None)
    if last is None or last.entry_id is None:
        return None
    entry = manager.get_entry(last.entry_id)
    if entry is None:
        return None
    path = manager.get_branch()
    ids = [e.get("id") for e in path]
    compaction_index = max((i for i, e in enumerate(path) if e.get("type") == "compaction"), default=-1)
    entry_index = ids.index(last.entry_id) if last.entry_id in ids else len(ids)
    message = entry.get("message") if entry.get("type") == "message" else None
    remaining: dict[str, Any] | None = None
    content = message.get("content") if isinstance(message, dict) else None
    if (
        isinstance(message, dict)
        and message.get("role") == "assistant"
        and isinstance(content, list)
        and last.block is not None
        and last.block < len(content)
        # the block as stored (a context edit may have replaced the content)
        and isinstance(content[last.block], Mapping)
        and assistant_block_from_pi(content[last.block]) == last.item
    ):
        content = list(content)
        del content[last.block]
        if any(isinstance(b, Mapping) and assistant_block_from_pi(b) is not None for b in content):
            has_call = any(isinstance(b, Mapping) and b.get("type") == "toolCall" for b in content)
            remaining = {**message, "content": content, "stopReason": "toolUse" if has_call else "stop"}
    editable = entry.get("type") == "custom_message" or (
        isinstance(message, dict) and message.get("role") in ("user", "assistant", "toolResult")
    )
    # entries after it that shape the context (a compaction, context
    # edits, model or thinking changes) would be left behind by a leaf
    # move: then the item is left out with a context edit instead
    shaping = any(e.get("type") not in NEUTRAL_TYPES for e in path[entry_index + 1 :])
    if editable and (entry_index < compaction_index or shaping):
        replacement = {"content": remaining["content"]} if remaining is not None else None
        manager.append_context_edit(last.entry_id, replacement)
        return last.item
    move_leaf(manager, entry.get("parentId"))
    if remaining is not None:
        manager.append_message(remaining)
    else:
        manager.append_custom_entry(MARK_CUSTOM_TYPE, {"op": "pop", "entryId": last.entry_id})
    return last.item
