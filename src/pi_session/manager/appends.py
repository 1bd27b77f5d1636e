"""The ``append_*`` methods of :class:`pi_session.SessionManager`, one per
entry type pi writes (pi 1.6 SessionManager ``appendMessage`` ...
``appendLabelChange``): each builds its entry (pi's keys, in pi's order; a
field left at :data:`OMITTED` is left out, as ``JSON.stringify`` drops
``undefined``), checks what pi checks, and hands it to the manager's one
write path (``_append_entry``: the leaf moves to it, or nothing changes
when the write fails). ``append_session_info`` stays with the manager's
session-name rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..session import context as _context
from ..core.ids import new_entry_id
from ..entries.records import UNDEFINED
from .stale_leaf import FirstKeptOffPathError, continues_plan
from ..storage import LeafMovedError
from ..core.timestamps import iso_to_ms, now_iso
from ..entries.questions import ASSISTANT, CUSTOM_MESSAGE, MESSAGE, TOOL_RESULT

if TYPE_CHECKING:
    from ..compaction import CompactionResult
    from ..entries import SessionProjection
    from ..session.tree import SessionTree
    from .writer import SessionWriter

__all__ = ["EntryAppends", "OMITTED", "drop_omitted"]

OMITTED: Any = UNDEFINED
"""Default of optional entry fields: the key is left out (JavaScript's
``undefined``). Passing None writes an explicit ``null``, as pi does."""

_EDITABLE_ROLES = ("user", "assistant", "toolResult")
# what pi's appendContextEdit accepts as a target message (plus custom_message
# entries); narrower than context.EDITABLE_ROLES, the roles an edit applies to

_OMITTABLE = ("message", "custom_message", "branch_summary", "compaction")
# the entry types that give the model messages: what an omission can leave out


def drop_omitted(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` without the keys left at :data:`OMITTED` (JSON.stringify
    drops ``undefined``)."""
    return {k: v for k, v in entry.items() if v is not OMITTED}


class EntryAppends:
    """The ``append_*`` methods (mixed into :class:`pi_session.SessionManager`)."""

    if TYPE_CHECKING:
        _tree: SessionTree
        _leaf_id: str | None
        _writer: SessionWriter

        def _append_entry(self, entry: dict[str, Any]) -> str: ...
        def _new_entry(self, etype: str, **fields: Any) -> dict[str, Any]: ...
        def _where(self) -> str: ...
        def build_session_projection(self) -> SessionProjection: ...
        def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]: ...

    def append_message(self, message: Mapping[str, Any]) -> str:
        """Append an agent message (user, assistant, toolResult,
        bashExecution, custom, and pi 1.6's ``system``: a change of the
        system prompt or tool set). Summaries go
        through :meth:`append_compaction` and :meth:`branch_with_summary`.
        The first user or assistant message of a new session makes its file
        appear."""
        return self._append_entry(self._new_entry("message", message=dict(message)))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Append a ``thinking_level_change`` entry."""
        return self._append_entry(self._new_entry("thinking_level_change", thinkingLevel=thinking_level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Append a ``model_change`` entry."""
        return self._append_entry(self._new_entry("model_change", provider=provider, modelId=model_id))

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Mapping[str, Any], note: str | None = None
    ) -> dict[str, Any]:
        """Append a ``usage`` entry (pi 1.6 appendUsage): usage of a request that is
        not part of the conversation (pi writes ``kind="cache_warm"`` for
        prompt-cache warming). Never in the model context; only cost totals
        read it.

        Args:
            kind: free text.
            provider, model: who served the request.
            usage: pi's usage object (``input, output, cacheRead,
                cacheWrite, totalTokens, cost{...}``), stored as given.
            note: stored only when non-empty.

        Returns:
            The new entry itself (not its id; pi's ``appendUsage`` does the
            same).
        """
        fields: dict[str, Any] = {"kind": kind, "provider": provider, "model": model, "usage": usage}
        if note:
            fields["note"] = note
        entry = self._new_entry("usage", **fields)
        self._append_entry(entry)
        return entry

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = OMITTED,
        from_hook: bool | None = OMITTED,
        usage: Any = OMITTED,
    ) -> str:
        """Append a ``compaction`` entry (pi 1.6 appendCompaction).

        Args:
            summary: the summary text.
            first_kept_entry_id: the first entry kept verbatim; None means
                "keep nothing" and is stored as the new entry's own id.
            tokens_before: the context size before, in tokens.
            details: pi's ``{readFiles, modifiedFiles}`` (omitted when not given).
            from_hook: whether an extension made the summary.
            usage: usage of the summary request(s).

        The entry also records ``systemMessage``: the replayed system-prompt
        state (:func:`pi_session.session.context.get_current_system_message`) of the
        current context, with its ``timestamp`` set to the compaction's time
        in ms; left out when the context has no system message and no tools.
        Keys in pi's order: type, id, parentId, timestamp, summary,
        firstKeptEntryId, tokensBefore, details, usage, fromHook,
        systemMessage.

        Beyond pi: a ``first_kept_entry_id`` that is not on the path
        root→leaf the entry is appended to is refused, and so is one that
        is not on the path of another writer's entries this append would
        follow (:mod:`pi_session.manager.stale_leaf`): planned at another leaf, it
        would make the context at the leaf the summary alone (pi writes
        it).

        Returns:
            The new entry id.

        Raises:
            pi_session.manager.stale_leaf.FirstKeptOffPathError: (a
                :class:`~pi_session.storage.LeafMovedError`) the first kept
                entry is not on the path; nothing was written.
        """
        if first_kept_entry_id is not None and not self._tree.on_branch(first_kept_entry_id, self._leaf_id):
            raise FirstKeptOffPathError(self._where(), first_kept_entry_id, self._leaf_id)
        timestamp = now_iso()
        system_message = _context.get_current_system_message(self.build_session_projection()["messages"])
        entry_id = new_entry_id(self._tree.by_id)
        entry = drop_omitted(
            {
                "type": "compaction",
                "id": entry_id,
                "parentId": self._leaf_id,
                "timestamp": timestamp,
                "summary": summary,
                "firstKeptEntryId": first_kept_entry_id if first_kept_entry_id is not None else entry_id,
                "tokensBefore": tokens_before,
                "details": details,
                "usage": usage,
                "fromHook": from_hook,
            }
        )
        if system_message:
            entry["systemMessage"] = {**system_message, "timestamp": iso_to_ms(timestamp)}
        return self._append_entry(entry)

    def append_compaction_result(self, result: CompactionResult, *, planned_leaf_id: Any = OMITTED) -> str:
        """Append the compaction entry of a finished
        :class:`pi_session.compaction.CompactionResult` (what ``pi-session
        compact`` stores): its summary, first kept entry and tokens before,
        and ``details``, ``usage`` and ``fromHook`` when set. See
        :meth:`append_compaction`.

        Args:
            planned_leaf_id: the leaf the compaction was prepared at. When
                given, the entry is written only if the plan still holds
                (:func:`pi_session.manager.stale_leaf.continues_plan`): the path to
                the leaf here, and to the last of the entries another writer
                appended meanwhile (seen under the append lock), passes
                through that entry with no compaction after it. Otherwise
                nothing is written (beyond pi, which chains a stale plan onto
                whatever branch is last).

        Raises:
            pi_session.storage.LeafMovedError: the leaf moved off the
                planned path (nothing was written).

        Returns:
            The new entry id.
        """
        if planned_leaf_id is not OMITTED and not continues_plan(self.get_branch(), planned_leaf_id):
            raise LeafMovedError(self._where(), planned_leaf_id, self._leaf_id)
        self._writer.planned_leaf = planned_leaf_id
        try:
            return self._append_compaction_of(result)
        finally:
            self._writer.planned_leaf = OMITTED

    def _append_compaction_of(self, result: CompactionResult) -> str:
        return self.append_compaction(
            result.summary,
            result.first_kept_entry_id,
            result.tokens_before,  # type: ignore[arg-type]  # a float only when recorded usage was fractional; stored as it is
            details=result.details if result.details is not None else OMITTED,
            from_hook=True if result.from_hook else OMITTED,
            usage=result.usage if result.usage is not None else OMITTED,
        )

    def append_custom_entry(self, custom_type: str, data: Any = OMITTED) -> str:
        """Append a ``custom`` entry (extension data, not in the context)."""
        entry = drop_omitted({"type": "custom", "customType": custom_type, "data": data})
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = OMITTED) -> str:
        """Append a ``custom_message`` entry (in the context as role ``custom``)."""
        entry = drop_omitted(
            {"type": "custom_message", "customType": custom_type, "content": content, "display": display, "details": details}
        )
        entry.update(id=new_entry_id(self._tree.by_id), parentId=self._leaf_id, timestamp=now_iso())
        return self._append_entry(entry)

    def append_context_edit(self, target_id: str, replacement: Mapping[str, Any] | None, *, any_target: bool = False) -> str:
        """Append a ``context_edit`` entry (pi 1.6 appendContextEdit): on this
        branch, the target's model-visible content is replaced (or, with
        None, the target is left out of the context).

        Checks, in pi's order: ``replacement`` is None or a mapping whose
        ``content`` is a string or a list; the target exists; it is on the
        current branch (root→leaf); it is a ``custom_message`` or a
        user/assistant/toolResult message. A string replacement for an
        assistant or toolResult target is stored as
        ``[{"type": "text", "text": S}]``; otherwise the replacement is
        stored as given.

        With ``any_target``, the last check is the one pi 1.6 applies when
        it builds the context rather than the one its appendContextEdit
        makes: an omission (None) may target any entry that gives the model
        messages (a bash execution, a system message, a summary, a
        compaction), a replacement also a role-``custom`` message. pi 1.6
        applies such an edit wherever it reads one (its projection), though
        its own writer never writes it.

        Returns:
            The new entry id.

        Raises:
            ValueError: one of the checks failed (the message says which).
        """
        if replacement is not None and (
            not isinstance(replacement, Mapping)
            or "content" not in replacement
            or not isinstance(replacement["content"], (str, list))
        ):
            raise ValueError("context edit replacement must be None or a mapping whose 'content' is a string or a list")
        target = self._tree.by_id.get(target_id)
        if target is None:
            raise ValueError(f"context edit target {target_id} not found")
        if not any(e.get("id") == target_id for e in self.get_branch()):
            raise ValueError(f"context edit target {target_id} is not on the current branch")
        message = target.get("message") if target.get("type") == MESSAGE else None
        role = message.get("role") if isinstance(message, dict) else None
        if any_target:
            from ..session.context_edits import EDITABLE_ROLES

            allowed = target.get("type") == CUSTOM_MESSAGE or (
                role in EDITABLE_ROLES if replacement is not None else target.get("type") in _OMITTABLE
            )
        else:
            allowed = target.get("type") == CUSTOM_MESSAGE or role in _EDITABLE_ROLES
        if not allowed:
            kind = f"a {role} message" if role is not None else f"a {target.get('type')} entry"
            raise ValueError(f"context edit target {target_id} is {kind}, whose model content cannot be edited")
        stored: dict[str, Any] | None
        if replacement is None:
            stored = None
        elif role in (ASSISTANT, TOOL_RESULT) and isinstance(replacement["content"], str):
            stored = {"content": [{"type": "text", "text": replacement["content"]}]}
        else:
            stored = dict(replacement)
        return self._append_entry(self._new_entry("context_edit", targetId=target_id, replacement=stored))

    def append_label_change(self, target_id: str, label: str | None = OMITTED) -> str:
        """Set (or with None/"" clear) the label of an entry.

        Raises:
            KeyError: ``target_id`` is not an entry of this session.
        """
        if target_id not in self._tree.by_id:
            raise KeyError(f"Entry {target_id} not found")
        return self._append_entry(self._new_entry("label", targetId=target_id, label=label))
