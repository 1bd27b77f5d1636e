"""``PiSession``: an OpenAI Agents SDK session stored as a pi session tree
(**beyond pi**).

The one class the SDK talks to: the SDK's four protocol methods,
compaction (automatic, on overflow, manual) and branching, each an async
method whose blocking part runs in a worker thread. The workflows are
:mod:`pi_session.operations` (compaction: :func:`~pi_session.operations.compact_session`),
the item conversion :mod:`.convert` and :mod:`.entries`, the context as
items :mod:`.render`, the ids :mod:`.ids`, the events and settings
:mod:`.compaction`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

try:  # the SDK's base class, where the installed version has it
    from agents.memory.session import SessionABC as _SessionBase
except ImportError:  # pragma: no cover - older SDKs: the protocol is structural
    _SessionBase = object  # type: ignore[assignment,misc]

from ...llm.base import Summarizer, SummarizerError
from ...llm.extractive import ExtractiveSummarizer
from ...manager.session_manager import SessionManager
from ...entries.records import UNDEFINED
from ...storage import ConcurrentAppendError, SessionGoneError
from ...core.text import well_formed_deep
from ...operations import STRATEGIES, CompactionPlan, LeafMovedError, compact_session, mask_session, plan_compaction, summarize_branch
from ...session.tokens import should_compact
from .compaction import CompactionEvent, CompactionListener, is_context_overflow_error, resolve_settings, warn_about_small_window
from .convert import MARK_CUSTOM_TYPE, item_kind, plain_items
from .entries import append_items, move_leaf, pop_last_item, usage_of_run
from .ids import pi_session_id_for
from .render import RenderedItem, limit_items, render_items

if TYPE_CHECKING:
    from agents import Agent, RunResult
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.run_context import RunContextWrapper

    from ...compaction.navigation import NavigationResult

__all__ = [
    "PiSession",
    "CompactionEvent",
    "CompactionListener",
    "pi_session_id_for",
    "is_context_overflow_error",
]

log = logging.getLogger("pi_session.integrations.openai_agents")

T = TypeVar("T")

_POP_ATTEMPTS = 100
"""How often :meth:`PiSession.pop_item` reads again when other writers
appended between its read and its write."""



def _coerce_session_settings(value: Any) -> Any:
    """``session_settings`` as the SDK's ``SQLiteSession`` stores it: a
    ``SessionSettings`` (None: the default one; a dict: its fields, unknown
    keys refused with the SDK's ``TypeError``). Without the SDK the value is
    kept as it is."""
    try:
        from agents.memory.session_settings import SessionSettings, coerce_session_settings
    except ImportError:  # pragma: no cover - the SDK is not installed
        return value
    return SessionSettings() if value is None else coerce_session_settings(value)


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
            Creating is idempotent: objects or processes starting the same
            new id at once (in a directory or a store) make one session,
            the losers' first items following the winner's.
        context_window: the model's context window in tokens. With it,
            pi's trigger (context tokens > context window − reserve tokens)
            is checked after every ``add_items`` and compacts; None: only
            :meth:`compact` and :meth:`run`'s overflow recovery compact.
            The settings are used as given, never scaled (as pi does): when
            ``keepRecentTokens`` or ``reserveTokens`` is not smaller than
            the window (pi's defaults, 20,000 and 16,384, with a small
            model), the constructor logs one warning (logger
            ``pi_session.integrations.openai_agents``) naming them, since
            nothing would ever be compacted, or the trigger would fire after
            every response.
        summarizer: writes compaction and branch summaries (a
            :class:`pi_session.llm.Summarizer`; default: the offline
            :class:`~pi_session.llm.ExtractiveSummarizer`).
        settings: compaction settings: None (pi's settings files for
            ``cwd``), a :class:`~pi_session.session.settings.CompactionSettings`, a
            :class:`~pi_session.session.settings.LoadedSettings`, a pi settings object
            ``{"compaction": {...}, "branchSummary": {...}}`` or a
            compaction object ``{"reserveTokens", "keepRecentTokens", "enabled"}``.
        model, provider: recorded on the assistant messages (pi shows them
            as the session's model); default ``"unknown"``, ``"openai-agents"``.
        on_compaction: a first compaction listener (see :meth:`add_compaction_listener`).
        compaction_strategy: ``"summary"`` (pi's compaction, the default),
            ``"mask"`` (beyond pi: the old part's bulky tool outputs and
            arguments are replaced by one-line notes through context edits,
            every message kept; the event's ``summarizer`` is ``"mask"``,
            its ``entry_id`` the last edit, its ``summary`` empty) or
            ``"both"`` (mask, then summarize when pi's trigger still fires,
            or always without a ``context_window``); with ``"mask"``, when
            the model refused the context and nothing is left to mask, the
            session summarizes; the automatic trigger
            and :meth:`compact` use it (:data:`pi_session.operations.STRATEGIES`).
        session_settings: the SDK's ``SessionSettings`` or a dict of its
            fields (``{"limit": 2}``), coerced as the SDK's own sessions do
            (``SQLiteSession``): kept as a ``SessionSettings`` (default
            ``SessionSettings()``); its ``limit`` is what :meth:`get_items`
            returns when called without one.
        redact_secrets: mask secrets in :meth:`get_items` (what the model gets;
            :mod:`pi_session.secrets`); the session keeps what was written.

    Raises:
        TypeError: ``session_id`` is not a string; ``session_settings`` is
            neither a ``SessionSettings`` nor a dict, or names an unknown
            setting (the SDK's message, e.g. ``Unknown session settings: limt``).

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
        session_settings: SessionSettings | dict[str, Any] | None = None,
        redact_secrets: bool = False,
        compaction_strategy: str = "summary",
    ) -> None:
        if compaction_strategy not in STRATEGIES:
            raise ValueError(f"compaction_strategy must be one of {', '.join(STRATEGIES)}, not {compaction_strategy!r}")
        self.compaction_strategy = compaction_strategy
        self.session_id, self.redact_secrets = session_id, redact_secrets
        self.session_settings = _coerce_session_settings(session_settings)
        self.pi_session_id = pi_session_id_for(session_id)
        self.cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd is not None else os.getcwd()
        self.session_dir = session_dir
        self.store = store
        self.context_window = context_window
        self.summarizer: Summarizer = summarizer if summarizer is not None else ExtractiveSummarizer()
        self.compaction_settings, self.branch_summary_settings = resolve_settings(settings, self.cwd)
        warn_about_small_window(session_id, context_window, self.compaction_settings)
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
        cwd, directory, pi_id, redact = self.cwd, self.session_dir, self.pi_session_id, self.redact_secrets
        if self.store is None:
            path = SessionManager.find_by_id(cwd, pi_id, directory)
            if path is not None:
                return SessionManager.open(path, directory, redact_secrets=redact)
            return SessionManager.create(cwd, directory, id=pi_id, redact_secrets=redact)
        from ...stores import SessionExistsError, open_store

        store = open_store(self.store) if isinstance(self.store, (str, os.PathLike)) else self.store
        self.store = store
        if store.exists(pi_id):  # exactly this id (never a prefix match)
            return SessionManager.open(pi_id, store=store, redact_secrets=redact)
        try:
            return SessionManager.create(cwd, id=pi_id, store=store, redact_secrets=redact)
        except SessionExistsError:  # a file store: another writer created it since exists()
            return SessionManager.open(pi_id, store=store, redact_secrets=redact)

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
        kept items) of the session as stored now (when another object or
        process wrote to it since this one read it, the size of the stored
        session tells, and it is read again): the items as they were added,
        in order (see :func:`.render.render_items`), as the SDK's own
        sessions return them. No pairing rules are applied: a call without
        an output (e.g. one waiting for approval) gets no invented output,
        an output without a call stays where it was, nothing is moved; the
        SDK owns pairing and pending approvals (it reconciles a pending
        session write against these items). Items are valid Unicode: a lone
        surrogate stored in the session comes back as U+FFFD (the adapters' rule,
        :func:`pi_session.core.text.well_formed`; the file keeps what was
        written), as it does from :meth:`pop_item`.

        Args:
            limit: only the latest ``limit`` items, cut as they stand; 0: none;
                negative: all (SQLite's ``LIMIT``, as ``SQLiteSession``);
                None: ``session_settings.limit`` (None there: all), the
                precedence of the SDK's ``resolve_session_limit``.
            wrapper: the SDK's run context (unused here).
        """
        rendered = await self._call(self._render_sync, self._limit(limit))
        return [r.item for r in rendered]  # type: ignore[misc]

    async def get_items_with_entry_ids(self, limit: int | None = None) -> list[tuple[str | None, dict[str, Any]]]:
        """:meth:`get_items` with the id of the session entry each item
        comes from (a summary: its compaction or branch-summary entry), e.g.
        to offer :meth:`branch` targets."""
        rendered = await self._call(self._render_sync, self._limit(limit))
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

        The batch is checked and converted whole before anything is written;
        a session another writer deleted meanwhile is started again.

        Raises:
            InvalidItemError: the item it names (by index) cannot be stored
                (:func:`.convert.item_problem`); nothing of the batch written.
            pi_session.storage.AppendError: writing failed.
        """
        plain = plain_items(items)
        if not plain:
            return
        response = any(item_kind(i) == "assistant" for i in plain)
        usage = None
        if response:
            usage, self._usage_seen = usage_of_run(wrapper, self._usage_seen)
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
        the context is empty; the item is valid Unicode as in :meth:`get_items`.

        The pop is atomic among writers: it reads the session as stored now
        (as :meth:`get_items`), and its one entry is appended only if nobody
        appended since (checked under the store's lock); else it reads again
        and pops what is latest then, so two objects or processes never pop
        the same item.

        Raises:
            pi_session.storage.ConcurrentAppendError: other writers appended
                before every one of 100 attempts.
        """
        item = await self._call(self._pop_sync)
        return well_formed_deep(item)

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
        return await self._call(lambda: int(self.manager.estimate_projected_context_tokens()["tokens"]))

    async def compact(self, *, reason: str = "manual", custom_instructions: str | None = None) -> CompactionEvent | None:
        """Compact the context now (pi's ``compact`` with this session's
        settings and summarizer, through
        :func:`pi_session.operations.compact_session`) and tell the listeners.

        The compaction is written only if the leaf is still where it was
        planned, or the path continues it (entries appended meanwhile, by
        this process or another, are kept after the summary's first kept
        entry). When the leaf moved to another branch (a leaf move here, or
        another process writing on another branch), nothing is written: the
        :class:`pi_session.operations.LeafMovedError` is kept in
        :attr:`last_compaction_error` and logged, and, when another writer
        moved it, the session is opened again (the next call sees its
        entries; compact again to compact that branch).

        Returns:
            The :class:`CompactionEvent`, or None when there is nothing to
            compact (see :func:`pi_session.compaction.prepare_compaction`) or
            the leaf moved off the planned path while the summary was written.

        Raises:
            pi_session.llm.SummarizerError: the summary failed (nothing stored).
        """
        state = await self._call(self._plan_sync)
        if state is None:
            return None
        plan, tokens_before = state
        if self.compaction_strategy != "summary":  # mask first (beyond pi)
            try:
                masked = await self._call(lambda: mask_session(plan, self.manager))
            except LeafMovedError as exc:
                self.last_compaction_error = exc
                log.warning("masking dropped: %s", exc)
                return None
            nothing = not masked.edit_ids and reason == "overflow"  # the model refused the context: summarize
            replan = None
            if masked.edit_ids and self.compaction_strategy == "both" and await self._call(self._over_budget_sync):
                replan = await self._call(self._plan_sync)  # summarize what the masked context still holds
            if not nothing and replan is None and (masked.edit_ids or self.compaction_strategy == "mask"):
                if not masked.edit_ids:
                    return None
                event = CompactionEvent(
                    entry_id=masked.edit_ids[-1],
                    reason=reason,
                    tokens_before=tokens_before,
                    tokens_after=await self.context_tokens(),
                    first_kept_entry_id=str(plan.preparation.first_kept_entry_id if plan.preparation else ""),
                    summary="",
                    summarizer="mask",
                )
                for listener in list(self._listeners):
                    outcome = listener(event)
                    if inspect.isawaitable(outcome):
                        await outcome
                return event
            if replan is not None:
                plan = replan[0]
        try:
            done = await compact_session(
                self.manager, self.summarizer, plan=plan, custom_instructions=custom_instructions, run_blocking=self._call
            )
        except LeafMovedError as exc:
            self.last_compaction_error = exc
            log.warning("compaction dropped: %s", exc)
            if exc.by_other_writer:
                await self._call(self._reload)
            return None
        if done is None:  # pragma: no cover - the plan had a preparation
            return None
        event = CompactionEvent(
            entry_id=done.entry_id,
            reason=reason,
            tokens_before=tokens_before,
            tokens_after=await self.context_tokens(),
            first_kept_entry_id=done.result.first_kept_entry_id,
            summary=done.result.summary,
            summarizer=str(getattr(self.summarizer, "name", type(self.summarizer).__name__)),
        )
        for listener in list(self._listeners):
            outcome = listener(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event

    async def recover_from_overflow(self, leaf_id: Any = UNDEFINED) -> CompactionEvent | None:
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
        moved = leaf_id is not UNDEFINED and leaf_id != previous
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
        result = None
        if summarize:
            result = await summarize_branch(
                plan,
                self.summarizer,
                context_window=self.context_window or 128000,
                reserve_tokens=self.branch_summary_settings.reserve_tokens,
                custom_instructions=custom_instructions,
            )
        summary, details, usage = (result.summary, result.details, result.usage) if result is not None else ("", None, None)
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

    def _limit(self, limit: int | None) -> int | None:
        """An explicit ``limit`` first, else ``session_settings.limit``."""
        if limit is not None:
            return limit
        return getattr(self.session_settings, "limit", None)

    # ------------------------------------------------------------------
    # synchronous parts (worker thread, under the lock)

    def _current(self) -> SessionManager:
        """The manager, opened again when the stored session changed since
        it was read or written (:meth:`SessionManager.is_stale`); entries
        of a new chat not written yet are saved instead, continuing the
        session another writer created. Every leaf move of this class is
        written, so the reopened leaf (the last entry) is where this object
        left it, or after another writer's entries."""
        manager = self.manager
        if manager.is_stale():
            if manager.unsaved_entry_count():
                manager.save()
            else:
                self._reload()
        return self.manager

    def _pop_sync(self) -> dict[str, Any] | None:
        for attempt in range(_POP_ATTEMPTS):
            manager = self._current()
            concurrent, manager.concurrent = manager.concurrent, "strict"
            try:
                return pop_last_item(manager)
            except ConcurrentAppendError:
                self._reload()  # nothing was written: pop from what is stored now
                if attempt == _POP_ATTEMPTS - 1:
                    raise
            finally:
                manager.concurrent = concurrent
        return None  # pragma: no cover - the loop returns or raises

    def _render_sync(self, limit: int | None) -> list[RenderedItem]:
        # copies: the caller may change the items; the session's entries must not change.
        # Well formed (lone surrogates -> U+FFFD, pi_session.core.text): the SDK encodes them as UTF-8.
        rendered = limit_items(render_items(self._current().build_session_projection()), limit)
        return [RenderedItem(well_formed_deep(copy.deepcopy(r.item)), r.entry_id, r.block) for r in rendered]

    def _add_sync(self, items: Sequence[dict[str, Any]], usage: dict[str, Any] | None, check: bool) -> bool:
        manager = self._current()
        try:
            append_items(manager, items, usage, provider=self.provider, model=self.model)
        except SessionGoneError:  # deleted since the check: nothing of it written
            self._reload()
            manager = self.manager
            append_items(manager, items, usage, provider=self.provider, model=self.model)
        if self.context_window is None or not check:
            return False
        tokens = manager.estimate_projected_context_tokens()["tokens"]
        return should_compact(tokens, self.context_window, self.compaction_settings)

    def _move_leaf(self, leaf_id: str | None) -> None:
        move_leaf(self.manager, leaf_id)

    def _reload(self) -> None:
        """Open the session again (another writer changed it: what this
        process holds is stale)."""
        self._manager = None
        _ = self.manager

    def _clear_sync(self) -> None:
        manager = self._current()
        if manager.get_leaf_id() is None:
            return
        manager.reset_leaf()
        manager.append_custom_entry(MARK_CUSTOM_TYPE, {"op": "clear"})

    def _over_budget_sync(self) -> bool:
        """pi's trigger on the current context (always True without a
        context window: a manual compaction summarizes what is left)."""
        if self.context_window is None:
            return True
        tokens = self.manager.estimate_projected_context_tokens()["tokens"]
        return should_compact(tokens, self.context_window, self.compaction_settings)

    def _plan_sync(self) -> tuple[CompactionPlan, int] | None:
        manager = self.manager
        plan = plan_compaction(manager, self.compaction_settings)
        if plan.preparation is None:
            return None
        return plan, int(manager.estimate_projected_context_tokens()["tokens"])
