"""``PiSession``: an OpenAI Agents SDK session stored as a pi session tree
(**beyond pi**).

Size (over 500 lines): the one class the SDK talks to; the SDK's four
protocol methods, compaction (automatic, on overflow, manual) with its
events, and branching each need their synchronous part (run in a worker
thread) next to the async one. The item conversion lives in
:mod:`.convert`, the context as items in :mod:`.render`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import inspect
import logging
import os
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

try:  # the SDK's base class, where the installed version has it
    from agents.memory.session import SessionABC as _SessionBase
except ImportError:  # pragma: no cover - older SDKs: the protocol is structural
    _SessionBase = object  # type: ignore[assignment,misc]

from ...compaction import compact as _compact
from ...compaction import generate_branch_summary, prepare_compaction
from ...llm.base import Summarizer, SummarizerError
from ...llm.extractive import ExtractiveSummarizer
from ...manager import SessionManager, validate_session_id
from ...settings import (
    BranchSummarySettings,
    CompactionSettings,
    LoadedSettings,
    coerce_branch_summary_settings,
    coerce_compaction_settings,
    load_settings,
)
from ...tokens import should_compact
from .convert import (
    ITEM_CUSTOM_TYPE,
    MARK_CUSTOM_TYPE,
    assistant_block_from_pi,
    assistant_to_pi,
    item_kind,
    now_ms,
    plain_item,
    result_to_pi,
    split_call_id,
    user_to_pi,
)
from .render import RenderedItem, limit_items, render_items

if TYPE_CHECKING:
    from agents import Agent, RunResult
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.run_context import RunContextWrapper

    from ...navigation import NavigationResult

__all__ = [
    "PiSession",
    "CompactionEvent",
    "CompactionListener",
    "pi_session_id_for",
    "is_context_overflow_error",
]

log = logging.getLogger("pi_session.integrations.openai_agents")

T = TypeVar("T")

_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/pi-session/openai-agents-session-id")
_NO_LEAF: Any = object()
_NEUTRAL_TYPES = frozenset({"custom", "label", "session_info", "usage"})
"""Entry types that do not change the context: a leaf move may leave them behind."""


_MAX_FILE_ID = 200
"""The longest id used as it is: ``<timestamp>_<id>.jsonl`` (25 + id + 6
characters) must leave room in a 255-byte file name for the temp file of
an atomic write (``.<name>.<8 hex>.tmp``) and side files (``.torn-<offset>``)."""


def pi_session_id_for(session_id: str) -> str:
    """The pi session id of an SDK session id.

    A valid pi session id (letters, digits, ``.``, ``_``, ``-``, starting
    and ending with a letter or digit; see
    :func:`pi_session.manager.validate_session_id`) is used as it is. Any
    other string, and a valid one too long to name a session file safely
    (over 200 characters: the file name and its temp and side files must
    fit in 255 bytes), maps
    to ``uuid5(NS, session_id)`` (a fixed namespace), so the same SDK id
    always opens the same pi session, on files and in databases alike.

    Raises:
        TypeError: ``session_id`` is not a string.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session_id must be a string, not {type(session_id).__name__}")
    try:
        if len(session_id) > _MAX_FILE_ID:
            raise ValueError("too long to name a session file")
        return validate_session_id(session_id)
    except ValueError:
        # uuid5 by hand: the same value as uuid.uuid5(_ID_NAMESPACE, id) for
        # valid text, and a lone surrogate (which uuid5 cannot encode) is
        # hashed as its surrogatepass bytes instead of raising
        digest = hashlib.sha1(_ID_NAMESPACE.bytes + session_id.encode("utf-8", "surrogatepass"), usedforsecurity=False).digest()
        return str(uuid.UUID(bytes=digest[:16], version=5))


def is_context_overflow_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a provider's
    "the request does not fit the context window" error: an HTTP error of
    the ``openai`` SDK (or any exception with ``status_code``/``body``) whose
    status, code or message says so (OpenAI ``context_length_exceeded``,
    llama.cpp/vLLM "exceeds the context window", HTTP 413; see
    :func:`pi_session.llm._common.is_context_overflow`)."""
    from ...llm._common import is_context_overflow

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = getattr(current, "status_code", None)
        body = getattr(current, "body", None)
        if status is not None or body is not None:
            message = getattr(current, "message", None)
            if is_context_overflow(status if isinstance(status, int) else None, body, str(message or current)):
                return True
        current = current.__cause__ or current.__context__
    return False


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction the session made.

    Attributes:
        entry_id: the new ``compaction`` entry.
        reason: ``"threshold"`` (pi's trigger fired after ``add_items``),
            ``"overflow"`` (the model refused the context) or ``"manual"``.
        tokens_before: the context size before, in tokens.
        tokens_after: the context size after, in tokens. Both are
            :meth:`SessionManager.estimate_context_tokens` (pi 1.6's
            projected estimate), the "context tokens" ``pi-session tokens``
            shows at the leaf before and after.
        first_kept_entry_id: the first entry kept verbatim.
        summary: the summary text stored.
        summarizer: the summarizer's ``name``.
    """

    entry_id: str
    reason: str
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: str
    summary: str
    summarizer: str


CompactionListener = Callable[[CompactionEvent], "Awaitable[None] | None"]
"""Called (and awaited when it returns an awaitable) after each compaction."""


def _resolve_settings(settings: Any, cwd: str) -> tuple[CompactionSettings, BranchSummarySettings]:
    if settings is None:
        loaded = load_settings(cwd)
        for warning in loaded.warnings:
            log.warning("%s", warning)
        return loaded.compaction, loaded.branch_summary
    if isinstance(settings, LoadedSettings):
        return settings.compaction, settings.branch_summary
    if isinstance(settings, CompactionSettings):
        return settings, BranchSummarySettings()
    if isinstance(settings, Mapping) and ("compaction" in settings or "branchSummary" in settings):
        return (
            coerce_compaction_settings(settings.get("compaction")),
            coerce_branch_summary_settings(settings.get("branchSummary")),
        )
    return coerce_compaction_settings(settings), BranchSummarySettings()


class PiSession(_SessionBase):
    """An OpenAI Agents SDK session (``Runner.run(agent, input,
    session=PiSession("chat-1"))``) kept as a pi session: an append-only
    tree in a JSONL file that pi itself opens, with pi's compaction and
    branch summaries.

    Args:
        session_id: the SDK session id; the same id reopens the same pi
            session (see :func:`pi_session_id_for` for the pi id).
        cwd: the session's working directory (default: the process cwd);
            it chooses the default directory and the settings files.
        session_dir: where session files live (default: pi's
            ``<agent dir>/sessions/<encoded cwd>/``, where ``pi --resume``
            finds them).
        store: where the session lives instead of ``session_dir``: a
            :class:`pi_session.stores.SessionStore` or its URL
            (``sqlite:///…``, ``postgresql://…``, a directory); the session
            with exactly the pi id is reopened, else created there.
        context_window: the model's context window in tokens. With it,
            pi's trigger (context tokens > context window − reserve tokens)
            is checked after every ``add_items`` and compacts; None: only
            :meth:`compact` and :meth:`run`'s overflow recovery compact.
        summarizer: writes compaction and branch summaries (a
            :class:`pi_session.llm.Summarizer`; default: the offline
            :class:`~pi_session.llm.ExtractiveSummarizer`).
        settings: compaction settings: None (pi's settings files for
            ``cwd``), a :class:`~pi_session.settings.CompactionSettings`, a
            :class:`~pi_session.settings.LoadedSettings`, a pi settings object
            ``{"compaction": {...}, "branchSummary": {...}}`` or a
            compaction object ``{"reserveTokens", "keepRecentTokens", "enabled"}``.
        model, provider: recorded on the assistant messages (pi shows them
            as the session's model); default ``"unknown"``, ``"openai-agents"``.
        on_compaction: a first compaction listener (see :meth:`add_compaction_listener`).
        session_settings: the SDK's ``SessionSettings`` (e.g. a history
            ``limit`` the runner passes to :meth:`get_items`), as for the
            SDK's own sessions.

    Raises:
        TypeError: ``session_id`` is not a string.

    All methods are safe to call from several tasks: the blocking work
    (file reads and writes, context building) runs in a worker thread,
    one call at a time (a lock), never on the event loop.
    """

    def __init__(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        store: Any = None,
        context_window: int | None = None,
        summarizer: Summarizer | None = None,
        settings: Any = None,
        model: str | None = None,
        provider: str | None = None,
        on_compaction: CompactionListener | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.pi_session_id = pi_session_id_for(session_id)
        self.cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd is not None else os.getcwd()
        self.session_dir = session_dir
        self.store = store
        self.context_window = context_window
        self.summarizer: Summarizer = summarizer if summarizer is not None else ExtractiveSummarizer()
        self.compaction_settings, self.branch_summary_settings = _resolve_settings(settings, self.cwd)
        self.model = model or "unknown"
        self.provider = provider or "openai-agents"
        self.last_compaction_error: BaseException | None = None
        self._listeners: list[CompactionListener] = [on_compaction] if on_compaction is not None else []
        self._lock = threading.Lock()
        self._manager: SessionManager | None = None
        self._usage_seen: tuple[int, int] | None = None

    # ------------------------------------------------------------------
    # the manager and the worker thread

    def _open_manager(self) -> SessionManager:
        cwd, directory, pi_id = self.cwd, self.session_dir, self.pi_session_id
        if self.store is None:
            path = SessionManager.find_by_id(cwd, pi_id, directory)
            if path is not None:
                return SessionManager.open(path, directory)
            return SessionManager.create(cwd, directory, id=pi_id)
        from ...stores import open_store

        store = open_store(self.store) if isinstance(self.store, (str, os.PathLike)) else self.store
        self.store = store
        if store.exists(pi_id):  # exactly this id (never a prefix match)
            return SessionManager.open(pi_id, store=store)
        return SessionManager.create(cwd, id=pi_id, store=store)

    @property
    def manager(self) -> SessionManager:
        """The :class:`SessionManager` behind this session (opened or
        created on first use; blocking: call from a thread, or only while no
        other call of this session runs)."""
        if self._manager is None:
            self._manager = self._open_manager()
        return self._manager

    async def _call(self, func: Callable[..., T], *args: Any) -> T:
        def locked() -> T:
            with self._lock:
                return func(*args)

        return await asyncio.to_thread(locked)

    # ------------------------------------------------------------------
    # the SDK's session protocol

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """The context at the leaf as Responses input items (pi's context:
        after a compaction its summary first, as a user message, then the
        kept items), always a valid request (the adapters' pairing rules;
        see :func:`.render.render_items`).

        Args:
            limit: only the latest ``limit`` items (outputs at the start of
                the slice whose call fell outside it are left out); None: all.
            wrapper: the SDK's run context (unused here).
        """
        rendered = await self._call(self._render_sync, limit)
        return [r.item for r in rendered]  # type: ignore[misc]

    async def get_items_with_entry_ids(self, limit: int | None = None) -> list[tuple[str | None, dict[str, Any]]]:
        """:meth:`get_items` with the id of the session entry each item
        comes from (None for an error output the pairing rules inserted),
        e.g. to offer :meth:`branch` targets."""
        rendered = await self._call(self._render_sync, limit)
        return [(r.entry_id, r.item) for r in rendered]

    async def add_items(self, items: list[TResponseInputItem], *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Append items as pi entries (see :mod:`.convert`): user messages,
        one assistant message per run of reasoning/output/function-call
        items, tool results, and ``custom`` entries for the rest. When the
        SDK passes its run context, the last model request's token usage is
        stored on the assistant message (pi's ``usage``). Then, when the
        items hold a model response (pi checks after each assistant turn)
        and the session has a ``context_window``, pi's compaction trigger
        is checked and a compaction made when it fires (a failed summary is logged and kept
        in :attr:`last_compaction_error`; the items stay stored).

        Raises:
            TypeError: an item is not a dict.
            pi_session.storage.AppendError: writing failed.
        """
        plain = [plain_item(i) for i in items]
        if not plain:
            return
        response = any(item_kind(i) == "assistant" for i in plain)
        usage = self._usage_of(wrapper) if response else None
        fire = await self._call(self._add_sync, plain, usage, response)
        if fire:
            try:
                await self.compact(reason="threshold")
            except SummarizerError as exc:
                self.last_compaction_error = exc
                log.warning("automatic compaction failed: %s", exc)

    async def pop_item(self, *, wrapper: RunContextWrapper[Any] | None = None) -> TResponseInputItem | None:
        """Take the latest item out of the context and return it; nothing is
        deleted. The leaf moves to the parent of the entry holding it (with
        a ``custom`` marker entry, or a copy of an assistant message without
        the popped block, so the move is in the file). When entries that
        shape the context follow it on the path (a compaction keeping it,
        context edits, model changes), the item is left out with a
        ``context_edit`` instead, so they stay in force. When only a summary is left, popping it moves the
        leaf to before that compaction or branch summary. Returns None when
        the context is empty."""
        item = await self._call(self._pop_sync)
        return item  # type: ignore[return-value]

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Start over with an empty context: the leaf is reset and a
        ``custom`` marker entry becomes a new root. Nothing is deleted; the
        old conversation stays in the tree (see :meth:`branch`)."""
        await self._call(self._clear_sync)

    # ------------------------------------------------------------------
    # compaction

    def add_compaction_listener(self, listener: CompactionListener) -> None:
        """Call ``listener(event)`` (a :class:`CompactionEvent`; awaited when
        it returns an awaitable) after every compaction."""
        self._listeners.append(listener)

    async def context_tokens(self) -> int:
        """The context size at the leaf in tokens, as ``pi-session tokens``
        shows it (:meth:`SessionManager.estimate_context_tokens`)."""
        return await self._call(lambda: int(self.manager.estimate_context_tokens()["tokens"]))

    async def compact(self, *, reason: str = "manual", custom_instructions: str | None = None) -> CompactionEvent | None:
        """Compact the context now (pi's ``compact`` with this session's
        settings and summarizer) and tell the listeners.

        Returns:
            The :class:`CompactionEvent`, or None when there is nothing to
            compact (see :func:`pi_session.compaction.prepare_compaction`) or
            the session changed while the summary was written.

        Raises:
            pi_session.llm.SummarizerError: the summary failed (nothing stored).
        """
        state = await self._call(self._prepare_sync)
        if state is None:
            return None
        prep, leaf_id, tokens_before = state
        result = await _compact(prep, self.summarizer, custom_instructions)
        event = await self._call(self._commit_sync, leaf_id, tokens_before, result, reason)
        if event is not None:
            for listener in list(self._listeners):
                outcome = listener(event)
                if inspect.isawaitable(outcome):
                    await outcome
        return event

    async def recover_from_overflow(self, leaf_id: Any = _NO_LEAF) -> CompactionEvent | None:
        """After the model refused the context as too long: move the leaf
        back to ``leaf_id`` (the leaf before the failed run; its items stay
        in the file on a side branch) and compact there, so the same input
        can be run once more.

        Returns:
            The compaction, or None when there was nothing to compact (the
            leaf is then where it was).

        Raises:
            pi_session.llm.SummarizerError: the summary failed (the leaf is
                where it was).
        """
        previous = await self._call(lambda: self.manager.get_leaf_id())
        moved = leaf_id is not _NO_LEAF and leaf_id != previous
        if moved:
            await self._call(self._move_leaf, leaf_id)
        try:
            event = await self.compact(reason="overflow")
        except BaseException:
            if moved:
                await self._call(self._move_leaf, previous)
            raise
        if event is None and moved:
            await self._call(self._move_leaf, previous)
        return event

    async def run(self, agent: Agent[Any], input: str | list[TResponseInputItem], **kwargs: Any) -> RunResult:
        """``Runner.run(agent, input, session=self, **kwargs)``; when the
        model answers that the context is too long
        (:func:`is_context_overflow_error`), compact (see
        :meth:`recover_from_overflow`) and run the same input once more.

        Raises:
            whatever ``Runner.run`` raises (also the overflow error when
            there is nothing to compact, or on the second attempt).
        """
        from agents import Runner

        leaf_before = await self._call(lambda: self.manager.get_leaf_id())
        try:
            return await Runner.run(agent, input, session=self, **kwargs)
        except Exception as exc:
            if not is_context_overflow_error(exc):
                raise
            if await self.recover_from_overflow(leaf_before) is None:
                raise
        return await Runner.run(agent, input, session=self, **kwargs)

    # ------------------------------------------------------------------
    # branching

    async def branch(
        self, entry_id: str, *, summarize: bool = True, custom_instructions: str | None = None
    ) -> NavigationResult:
        """Go back to ``entry_id`` as pi's ``/tree`` does
        (:meth:`SessionManager.navigate`): the leaf moves to the entry (to
        its parent for a user message, whose text comes back as
        ``editor_text`` to run again), and a ``branch_summary`` of the branch
        left behind is appended there (with ``summarize``; written by the
        session's summarizer within ``context_window`` minus the
        branch-summary reserve), or an empty one that only records the move
        (pi leaves it out of the context).

        Raises:
            KeyError: unknown entry id.
            pi_session.llm.SummarizerError: the summary failed (nothing changed).
        """
        plan = await self._call(lambda: self.manager.plan_navigation(entry_id))
        summary, details, usage = "", None, None
        if summarize and not plan.is_noop and plan.entries_to_summarize:
            result = await generate_branch_summary(
                plan.entries_to_summarize,
                self.summarizer,
                context_window=self.context_window or 128000,
                reserve_tokens=self.branch_summary_settings.reserve_tokens,
                custom_instructions=custom_instructions,
            )
            summary, details, usage = result.summary, result.details, result.usage
        return await self._call(
            lambda: self.manager.navigate(entry_id, summary=summary, details=details, usage=usage)
        )

    async def fork(self, entry_id: str | None = None) -> PiSession:
        """A new session (new id, new file) holding the path root→``entry_id``
        (default: the leaf), as pi's ``/fork`` does
        (:meth:`SessionManager.create_branched_session`: the new file names
        this one as ``parentSession``). This session is unchanged.

        Raises:
            KeyError: unknown entry id.
        """

        def make() -> SessionManager:
            source = self.manager
            source.save()
            path = source.get_session_file()
            if self.store is not None:
                other = SessionManager.open(source.get_session_id(), store=self.store)
            elif path is None:
                raise RuntimeError("this session has no file to fork")
            else:
                other = SessionManager.open(path, source.get_session_dir())
            leaf = entry_id if entry_id is not None else source.get_leaf_id()
            if leaf is None:
                other.new_session(parent_session=str(path))
            else:
                other.create_branched_session(leaf)
            return other

        other = await self._call(make)
        forked = PiSession(
            other.get_session_id(),
            cwd=self.cwd,
            session_dir=self.session_dir,
            store=self.store,
            context_window=self.context_window,
            summarizer=self.summarizer,
            settings=self.compaction_settings,
            model=self.model,
            provider=self.provider,
        )
        forked.branch_summary_settings = self.branch_summary_settings
        forked._listeners = list(self._listeners)
        forked._manager = other
        return forked

    @property
    def session_file(self) -> Path | None:
        """The session's JSONL file (None before the first message of a new
        session is written; blocking on first use, see :attr:`manager`)."""
        return self.manager.get_session_file()

    # ------------------------------------------------------------------
    # synchronous parts (worker thread, under the lock)

    def _render_sync(self, limit: int | None) -> list[RenderedItem]:
        # copies: the caller may change the items; the session's entries must not change
        rendered = limit_items(render_items(self.manager.build_session_projection()), limit)
        return [RenderedItem(copy.deepcopy(r.item), r.entry_id, r.block) for r in rendered]

    def _usage_of(self, wrapper: Any) -> dict[str, Any] | None:
        usage = getattr(wrapper, "usage", None)
        entries = getattr(usage, "request_usage_entries", None)
        if not entries:
            return None
        key = (id(usage), len(entries))
        if key == self._usage_seen:
            return None
        self._usage_seen = key
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
        }

    def _known_calls(self) -> dict[str, tuple[str, str]]:
        calls: dict[str, tuple[str, str]] = {}
        for entry in self.manager.get_branch():
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                    calls[split_call_id(block["id"])] = (block["id"], str(block.get("name")))
        return calls

    def _add_sync(self, items: Sequence[dict[str, Any]], usage: dict[str, Any] | None, check: bool) -> bool:
        manager = self.manager
        groups: list[tuple[str, list[dict[str, Any]]]] = []
        for item in items:
            kind = item_kind(item)
            if kind == "assistant" and groups and groups[-1][0] == "assistant":
                groups[-1][1].append(item)
            else:
                groups.append((kind, [item]))
        last_assistant = max((i for i, (kind, _) in enumerate(groups) if kind == "assistant"), default=-1)
        calls = self._known_calls()
        for index, (kind, group) in enumerate(groups):
            timestamp = now_ms()
            if kind == "assistant":
                message = assistant_to_pi(
                    group,
                    provider=self.provider,
                    model=self.model,
                    timestamp=timestamp,
                    usage=usage if index == last_assistant else None,
                )
                for block in message["content"]:
                    if block["type"] == "toolCall":
                        calls[split_call_id(block["id"])] = (block["id"], block["name"])
                manager.append_message(message)
            elif kind == "user":
                manager.append_message(user_to_pi(group[0], timestamp))
            elif kind == "result":
                call_id = group[0].get("call_id")
                call_id = call_id if isinstance(call_id, str) else ""
                pi_id, name = calls.get(call_id, (call_id, "unknown_tool"))
                manager.append_message(result_to_pi(group[0], pi_id, name, timestamp))
            else:
                manager.append_custom_entry(ITEM_CUSTOM_TYPE, {"item": group[0]})
        if self.context_window is None or not check:
            return False
        tokens = manager.estimate_context_tokens()["tokens"]
        return should_compact(tokens, self.context_window, self.compaction_settings)

    def _move_leaf(self, leaf_id: str | None) -> None:
        if leaf_id is None:
            self.manager.reset_leaf()
        else:
            self.manager.branch(leaf_id)

    def _pop_sync(self) -> dict[str, Any] | None:
        manager = self.manager
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
        shaping = any(e.get("type") not in _NEUTRAL_TYPES for e in path[entry_index + 1 :])
        if editable and (entry_index < compaction_index or shaping):
            replacement = {"content": remaining["content"]} if remaining is not None else None
            manager.append_context_edit(last.entry_id, replacement)
            return last.item
        self._move_leaf(entry.get("parentId"))
        if remaining is not None:
            manager.append_message(remaining)
        else:
            manager.append_custom_entry(MARK_CUSTOM_TYPE, {"op": "pop", "entryId": last.entry_id})
        return last.item

    def _clear_sync(self) -> None:
        manager = self.manager
        if manager.get_leaf_id() is None:
            return
        manager.reset_leaf()
        manager.append_custom_entry(MARK_CUSTOM_TYPE, {"op": "clear"})

    def _prepare_sync(self) -> tuple[Any, str | None, int] | None:
        manager = self.manager
        prep = prepare_compaction(manager.get_branch(), self.compaction_settings)
        if prep is None:
            return None
        return prep, manager.get_leaf_id(), int(manager.estimate_context_tokens()["tokens"])

    def _commit_sync(self, leaf_id: str | None, tokens_before: int, result: Any, reason: str) -> CompactionEvent | None:
        manager = self.manager
        if manager.get_leaf_id() != leaf_id:
            log.warning("compaction dropped: the session changed while the summary was written")
            return None
        entry_id = manager.append_compaction_result(result)
        manager.save()
        return CompactionEvent(
            entry_id=entry_id,
            reason=reason,
            tokens_before=tokens_before,
            tokens_after=int(manager.estimate_context_tokens()["tokens"]),
            first_kept_entry_id=result.first_kept_entry_id,
            summary=result.summary,
            summarizer=str(getattr(self.summarizer, "name", type(self.summarizer).__name__)),
        )
