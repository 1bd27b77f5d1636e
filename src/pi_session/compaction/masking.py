"""Masking old tool observations: a compaction strategy that keeps every
message and shrinks only the bulky ones (**beyond pi**).

Published measurements of agent context management found that replacing
old tool outputs by a placeholder, and keeping everything else verbatim,
matches or beats model summaries at a fraction of the cost. This module
plans that replacement for the part of the context a compaction would
summarize (the projection items from the summarized span's start to the
first kept entry of :func:`pi_session.compaction.prepare_compaction`, turn
prefix included); :func:`pi_session.operations.mask_session` writes it as
pi 1.6 ``context_edit`` entries, so the session file keeps every byte and
any edit can be undone by another edit.

**What is masked.**

- a ``toolResult`` message whose text has at least :data:`MASK_MIN_CHARS`
  characters (UTF-16 code units, as pi counts): its content becomes one
  line, :func:`mask_note` (the tool, the size, the entry to look up);
- an ``assistant`` message's tool-call arguments: each string argument of
  at least :data:`MASK_MIN_CHARS` characters (a ``write``'s ``content``, an
  ``edit``'s ``oldText``/``newText``) becomes a one-line note; the call's
  id, name and other arguments (its ``path``) stay, and so do the message's
  text and thinking blocks.

Entries that already have a context edit (a scrub, an earlier mask) are
left as they are; so are user messages, summaries, and everything in the
kept window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..session.context import build_session_context, collect_context_edits
from ..core.jsonio import js_len
from ..session.tokens import estimate_tokens
from ..entries.questions import ASSISTANT, MESSAGE, TOOL_RESULT
from .keywords import content_text

__all__ = ["MASK_MIN_CHARS", "MaskEdit", "mask_note", "argument_note", "plan_masking", "with_mask_edits", "masked_context"]

MASK_MIN_CHARS = 400
"""Shortest tool output (or tool-call argument) replaced: a shorter one
costs about what its note would."""


@dataclass(frozen=True)
class MaskEdit:
    """One planned context edit.

    Attributes:
        target_id: the entry whose content is replaced.
        role: ``toolResult`` or ``assistant``.
        tool: the tool's name (for arguments, the calls' names joined by ``, ``).
        chars: characters masked (UTF-16 code units).
        tokens_before: estimated tokens of the message before.
        tokens_after: estimated tokens of the message with the replacement.
        replacement: the ``context_edit`` replacement, ``{"content": [...]}``.
    """

    target_id: str
    role: str
    tool: str
    chars: int
    tokens_before: int
    tokens_after: int
    replacement: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """``{targetId, role, tool, chars, tokensBefore, tokensAfter}``."""
        return {
            "targetId": self.target_id,
            "role": self.role,
            "tool": self.tool,
            "chars": self.chars,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
        }


def mask_note(tool: str, chars: int, tokens: int, entry_id: str) -> str:
    """The one line a masked tool result shows the model: the tool, the
    size in characters and estimated tokens, and the entry id that holds
    the whole output."""
    return (
        f"[{tool} output masked to save context: {chars:,} characters (~{tokens:,} tokens); "
        f"the session keeps it whole in entry {entry_id}]"
    )


def argument_note(chars: int, entry_id: str) -> str:
    """The one line that replaces a long tool-call argument."""
    return f"[argument masked to save context: {chars:,} characters; the session keeps it whole in entry {entry_id}]"


def _masked_result(entry_id: str, message: Mapping[str, Any]) -> MaskEdit | None:
    text = content_text(message.get("content"))
    chars = js_len(text)
    if chars < MASK_MIN_CHARS:
        return None
    tool = str(message.get("toolName") or "tool")
    before = estimate_tokens(message)
    note = mask_note(tool, chars, before, entry_id)
    content = [{"type": "text", "text": note}]
    after = estimate_tokens({**message, "content": content})
    return MaskEdit(entry_id, "toolResult", tool, chars, before, after, {"content": content})


def _masked_arguments(entry_id: str, message: Mapping[str, Any]) -> MaskEdit | None:
    content = message.get("content")
    if not isinstance(content, list):
        return None
    blocks: list[Any] = []
    chars = 0
    tools: list[str] = []
    for block in content:
        args = block.get("arguments") if isinstance(block, Mapping) and block.get("type") == "toolCall" else None
        if not isinstance(args, Mapping):
            blocks.append(block)
            continue
        new_args: dict[str, Any] = {}
        for key, value in args.items():
            if isinstance(value, str) and js_len(value) >= MASK_MIN_CHARS:
                chars += js_len(value)
                new_args[key] = argument_note(js_len(value), entry_id)
            else:
                new_args[key] = value
        if new_args != dict(args):
            tools.append(str(block.get("name") or "tool"))
            blocks.append({**block, "arguments": new_args})
        else:
            blocks.append(block)
    if not chars:
        return None
    before = estimate_tokens(message)
    after = estimate_tokens({**message, "content": blocks})
    return MaskEdit(entry_id, "assistant", ", ".join(dict.fromkeys(tools)), chars, before, after, {"content": blocks})


def plan_masking(preparation: Any, path_entries: Sequence[Mapping[str, Any]]) -> list[MaskEdit]:
    """The context edits that mask the bulky tool observations of the span a
    compaction would summarize (module docs). Pure.

    Args:
        preparation: a :class:`pi_session.compaction.CompactionPreparation`
            (its projection items from ``boundary_start`` to
            ``first_kept_entry_index``: the summarized span and any turn
            prefix).
        path_entries: the root→leaf path it was prepared from (for the
            context edits already on it).

    Returns:
        One :class:`MaskEdit` per entry to edit, in path order; empty when
        nothing is big enough.
    """
    edited = collect_context_edits(path_entries)
    items = preparation.projection_entries[preparation.boundary_start : preparation.first_kept_entry_index]
    out: list[MaskEdit] = []
    for item in items:
        entry = item.get("sourceEntry") or {}
        entry_id = entry.get("id")
        if entry.get("type") != MESSAGE or not isinstance(entry_id, str) or entry_id in edited:
            continue
        messages = item.get("messages") or []
        if len(messages) != 1 or not isinstance(messages[0], Mapping):
            continue
        message = messages[0]
        role = message.get("role")
        edit = (
            _masked_result(entry_id, message)
            if role == TOOL_RESULT
            else _masked_arguments(entry_id, message) if role == ASSISTANT else None
        )
        if edit is not None and edit.tokens_after < edit.tokens_before:
            out.append(edit)
    return out


def with_mask_edits(path: Sequence[Mapping[str, Any]], edits: Sequence[MaskEdit]) -> list[Mapping[str, Any]]:
    """``path`` followed by one ``context_edit`` entry per edit (ids
    ``mask-0``, ``mask-1`` ...), as :func:`pi_session.operations.mask_session`
    would append them; nothing is written. Pure."""
    entries: list[Mapping[str, Any]] = list(path)
    parent = entries[-1].get("id") if entries else None
    for n, edit in enumerate(edits):
        entry_id = f"mask-{n}"
        entries.append(
            {
                "type": "context_edit",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "1970-01-01T00:00:00.000Z",
                "targetId": edit.target_id,
                "replacement": edit.replacement,
            }
        )
        parent = entry_id
    return entries


def masked_context(path: Sequence[Mapping[str, Any]], edits: Sequence[MaskEdit]) -> list[Any]:
    """The context messages of ``path`` with ``edits`` applied
    (:func:`with_mask_edits`; pi 1.6 builds the same). Pure."""
    return list(build_session_context(with_mask_edits(path, edits))["messages"])
