"""Compaction as a workflow: the summarizer and settings of a session,
prepare at the leaf, summarize, and commit only on the planned path."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..manager.session_manager import SessionManager
from ..session.settings import CompactionSettings, load_settings
from ..storage import LeafMovedError
from ..entries.questions import COMPACTION
from .errors import OperationError

if TYPE_CHECKING:
    from ..compaction import CompactionPreparation, CompactionResult
    from ..compaction.masking import MaskEdit
    from ..llm import Summarizer

__all__ = [
    "SummarizerConfig",
    "compaction_settings",
    "CompactionPlan",
    "CompactionDone",
    "plan_compaction",
    "nothing_to_compact",
    "keep_recent_source",
    "summarize_compaction",
    "commit_compaction",
    "compact_session",
    "STRATEGIES",
    "MaskDone",
    "mask_session",
]

STRATEGIES = ("summary", "mask", "both")
"""Compaction strategies: ``summary`` (pi's: summarize the old part),
``mask`` (replace the old part's bulky tool outputs and arguments by
one-line notes through context edits, keep every message:
:mod:`pi_session.compaction.masking`), ``both`` (mask, then summarize what
is still over the budget)."""

T = TypeVar("T")


@dataclass(frozen=True)
class SummarizerConfig:
    """The summarizer options of ``compact``, ``navigate --summarize`` and
    ``browse``: provider (None: by available API key, else extractive),
    model, base URL, seconds per request and retries (None: the defaults of
    :mod:`pi_session.llm`)."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None

    def make(self) -> tuple[Summarizer, str | None]:
        """Build the summarizer (:func:`pi_session.llm.make_summarizer`).

        Returns:
            ``(summarizer, note)``: the note says why the extractive
            summarizer was chosen, when it was chosen for lack of a key.

        Raises:
            OperationError: unknown provider, or a provider without its key.
        """
        from ..llm import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, SummarizerError, make_summarizer

        try:
            summarizer = make_summarizer(
                self.provider,
                self.model,
                self.base_url,
                timeout=DEFAULT_TIMEOUT if self.timeout is None else self.timeout,
                max_retries=DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries,
            )
        except SummarizerError as exc:
            raise OperationError(str(exc)) from None
        return summarizer, getattr(summarizer, "fallback_reason", None)


def compaction_settings(
    cwd: str, reserve_tokens: int | None = None, keep_recent_tokens: int | None = None
) -> tuple[CompactionSettings, list[str]]:
    """The compaction settings of ``cwd`` (pi's settings files) with
    ``reserve_tokens`` / ``keep_recent_tokens`` in tokens instead of the
    files' values when given.

    Returns:
        ``(settings, warnings)``: the warnings of the settings files, one
        line each.
    """
    loaded = load_settings(cwd)
    base = loaded.compaction
    settings = CompactionSettings(
        base.enabled,
        base.reserve_tokens if reserve_tokens is None else reserve_tokens,
        base.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens,
    )
    return settings, list(loaded.warnings)


@dataclass(frozen=True)
class CompactionPlan:
    """A compaction prepared at one leaf.

    Attributes:
        location: the session (file path or store id), for messages.
        leaf_id: the leaf the plan was made at (None: an empty session).
        path: the entries root→leaf the plan was made on.
        preparation: what to summarize and keep
            (:func:`pi_session.compaction.prepare_compaction`), or None when
            there is nothing to compact (:attr:`reason` says why).
        reason: why there is nothing to compact ("" when there is a plan).
        manager: the session the plan was made on.
    """

    location: str
    leaf_id: str | None
    path: tuple[Mapping[str, Any], ...]
    preparation: CompactionPreparation | None
    reason: str = ""
    manager: SessionManager | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CompactionDone:
    """A compaction written.

    Attributes:
        entry_id: the new ``compaction`` entry.
        result: the summary and first kept entry.
        plan: the plan it was made from.
        manager: the session written to (its leaf is the new entry).
        notes: notes of the write (a migration, another writer's entries
            loaded and followed), one line each.
    """

    entry_id: str
    result: CompactionResult
    plan: CompactionPlan
    manager: SessionManager
    notes: tuple[str, ...] = ()


def keep_recent_source(cwd: str, keep_recent_tokens: int | None = None, *, flag: str | None = "--keep-recent-tokens") -> str:
    """Where the kept-recent budget comes from, for messages: ``flag``
    when the command line gave ``keep_recent_tokens``, else the settings
    file whose ``compaction.keepRecentTokens`` is used, else the default
    (naming the ways to set it; ``flag`` None: no command-line option)."""
    if keep_recent_tokens is not None and flag:
        return flag
    source = load_settings(cwd).source_of("compaction.keepRecentTokens")
    if source is not None:
        return f"compaction.keepRecentTokens in {source}"
    ways = f"set {flag} or compaction.keepRecentTokens in settings.json" if flag else "set compaction.keepRecentTokens in settings.json"
    return f"the default; {ways}"


def nothing_to_compact(
    path: Sequence[Mapping[str, Any]],
    keep_setting: str = "--keep-recent-tokens",
    *,
    keep_recent_tokens: int | None = None,
) -> str:
    """Why a path has no compaction plan (pi 1.6 refuses with "already
    compacted" / "nothing to compact"), one line.

    Args:
        keep_setting: where the kept tokens come from (the option, or the
            source from :func:`keep_recent_source`).
        keep_recent_tokens: the budget in force; when given, the line names
            both estimates: the context tokens (as ``tokens`` reports them,
            from the last usage the model reported, which counts the system
            prompt and tools too) and the estimate the cut counts (the
            messages' characters / 4, since the last compaction), against
            the budget and its source.
    """
    if not path:
        return "Nothing to compact: the session is empty."
    if path[-1].get("type") == COMPACTION:
        return "Nothing to compact: the session already ends with a compaction."
    since = "since the last compaction" if any(e.get("type") == COMPACTION for e in path) else "of the whole conversation"
    if keep_recent_tokens is None:
        fits = "everything since the last compaction" if since.startswith("since") else "the whole conversation"
        return f"Nothing to compact: {fits} fits in {keep_setting}."
    from ..session.context import build_session_projection
    from ..session.tokens import estimate_projected_context_tokens, estimate_tokens

    entries = list(path)
    projection = build_session_projection(entries, entries[-1].get("id"))
    context = estimate_projected_context_tokens(projection, entries)
    items = projection["entries"]
    if items and items[0]["sourceEntry"].get("type") == COMPACTION:
        items = items[1:]  # the cut walks the messages after the previous summary
    kept = sum(estimate_tokens(m) for item in items for m in item["messages"])
    after = f", plus ~{context['trailingTokens']:,} estimated after it" if context.get("trailingTokens") else ""
    counted = (
        f"`tokens` counts {context['tokens']:,} context tokens (the last usage the model reported, which includes "
        f"the system prompt and tools{after})"
        if context["lastUsageIndex"] is not None
        else f"`tokens` counts {context['tokens']:,} context tokens (all estimated)"
    )
    budget = f"the kept-recent budget of {keep_recent_tokens:,} tokens ({keep_setting})"
    if kept < keep_recent_tokens:
        return (
            f"Nothing to compact: the messages {since} are estimated at ~{kept:,} tokens (characters / 4, "
            f"as the cut counts them), within {budget}, so all of them would be kept; {counted}."
        )
    return (
        f"Nothing to compact: the messages {since} are estimated at ~{kept:,} tokens, reaching {budget}, but "
        f"keeping the newest {keep_recent_tokens:,} already reaches back to the first message a kept part can start at, "
        f"so nothing would be summarized; {counted}."
    )


def plan_compaction(
    manager: SessionManager,
    settings: CompactionSettings,
    *,
    keep_tool_pairs: bool = True,
    keep_source: str = "compaction.keepRecentTokens",
) -> CompactionPlan:
    """Prepare a compaction of the path to ``manager``'s leaf (nothing is
    written): pi 1.6's ``prepareCompaction``, with ``keep_tool_pairs``
    (beyond pi: never keep a tool result whose call is summarized away).
    Without a plan, :attr:`CompactionPlan.reason` names the estimates, the
    kept-recent budget and ``keep_source`` (where it comes from, see
    :func:`keep_recent_source`). With the manager's ``redact_secrets``, the
    messages to summarize have their secrets masked
    (:meth:`SessionManager.summarized`)."""
    from ..compaction import prepare_compaction

    path = tuple(manager.get_branch())
    prep = prepare_compaction(manager.summarized(path), settings, keep_tool_pairs=keep_tool_pairs)
    return CompactionPlan(
        str(manager.get_session_location()),
        manager.get_leaf_id(),
        path,
        prep,
        "" if prep is not None else nothing_to_compact(path, keep_source, keep_recent_tokens=settings.keep_recent_tokens),
        manager,
    )


async def summarize_compaction(plan: CompactionPlan, summarizer: Summarizer, *, custom_instructions: str | None = None) -> CompactionResult:
    """Write the summary of a plan (pi's ``compact``); nothing is written to
    the session.

    Raises:
        ValueError: the plan has nothing to compact.
        pi_session.llm.SummarizerError: the summarizer failed.
        pi_session.compaction.CompactionCancelled: a hook cancelled it.
    """
    from ..compaction import compact

    if plan.preparation is None:
        raise ValueError(plan.reason or "nothing to compact")
    return await compact(plan.preparation, summarizer, custom_instructions=custom_instructions)


def commit_compaction(plan: CompactionPlan, result: CompactionResult, writer: SessionManager) -> CompactionDone:
    """Append the compaction entry of ``result``, planned by ``plan``, to
    ``writer`` (the session opened for writing; the same manager the plan
    was made on, or one opened since).

    The policy when the leaf moved (**refuse**, beyond pi, which chains a
    stale plan onto whatever branch is last):

    - the leaf still is the planned one, or the path now continues it
      (another writer, or this process, appended after the planned leaf,
      none of it a compaction): the entry is written, after those entries
      (its first kept entry is on the path);
    - otherwise (the leaf is on another branch, or moved back): nothing is
      written and :class:`LeafMovedError` is raised. The same check runs again
      under the append lock for appends made by another process between
      opening and writing. The plan is not made again: a summary of the
      branch the user did not ask about is never written without asking;
      the caller says so (the CLI prints the one line and exits 1) and the
      user runs it again on the current branch.

    Raises:
        LeafMovedError: see above (nothing written).
        OSError: the write failed (:class:`pi_session.storage.AppendError`).
    """
    seen = len(writer.notes)
    try:
        entry_id = writer.append_compaction_result(result, planned_leaf_id=plan.leaf_id)
        writer.save()
    except LeafMovedError as exc:
        by_other_writer = exc.count > 0 or writer is not plan.manager
        raise LeafMovedError(plan.location, plan.leaf_id, exc.leaf_id, exc.count, by_other_writer=by_other_writer, what="compaction") from None
    return CompactionDone(entry_id, result, plan, writer, tuple(writer.notes[seen:]))


async def compact_session(
    manager: SessionManager,
    summarizer: Summarizer,
    *,
    settings: CompactionSettings | None = None,
    plan: CompactionPlan | None = None,
    open_writer: Callable[[], SessionManager] | None = None,
    custom_instructions: str | None = None,
    keep_tool_pairs: bool = True,
    run_blocking: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
) -> CompactionDone | None:
    """Compact a session: prepare at the leaf, summarize, and commit only if
    the leaf is still where it was planned (or the path continues it; see
    :func:`commit_compaction` for the policy: otherwise refuse).

    Args:
        manager: the session, opened for reading (the plan is made on it).
        summarizer: writes the summary.
        settings: compaction settings (default: the session cwd's).
        plan: a plan made already (e.g. shown for a confirmation or a dry
            run); default: :func:`plan_compaction` now.
        open_writer: opens the session for writing once the summary is
            ready (default: write through ``manager``, which must be
            writable).
        custom_instructions: extra focus for the summary.
        keep_tool_pairs: see :func:`plan_compaction`.
        run_blocking: runs the blocking parts (planning, opening, writing),
            e.g. in a worker thread under a lock; default: directly.

    Returns:
        The compaction written, or None when there is nothing to compact.

    Raises:
        LeafMovedError: the leaf moved off the planned path (nothing written).
        pi_session.llm.SummarizerError: the summary failed (nothing written).
        pi_session.compaction.CompactionCancelled: a hook cancelled it.
        OperationError: opening for writing failed.
    """

    async def blocking(func: Callable[[], T]) -> T:
        if run_blocking is None:
            return func()
        return await run_blocking(func)

    if plan is None:
        def make_plan() -> CompactionPlan:
            used = settings if settings is not None else compaction_settings(manager.get_cwd())[0]
            return plan_compaction(manager, used, keep_tool_pairs=keep_tool_pairs)

        plan = await blocking(make_plan)
    if plan.preparation is None:
        return None
    result = await summarize_compaction(plan, summarizer, custom_instructions=custom_instructions)
    chosen = plan

    def commit() -> CompactionDone:
        writer = open_writer() if open_writer is not None else manager
        return commit_compaction(chosen, result, writer)

    return await blocking(commit)


@dataclass(frozen=True)
class MaskDone:
    """Masking written (or, with no edits, nothing to mask).

    Attributes:
        edit_ids: the new ``context_edit`` entries, in order.
        edits: what each masks (:class:`pi_session.compaction.masking.MaskEdit`).
        tokens_before: estimated context tokens before (pure estimate).
        tokens_after: the same after the edits.
        manager: the session written to (None when nothing was written).
    """

    edit_ids: tuple[str, ...]
    edits: tuple["MaskEdit", ...]
    tokens_before: int
    tokens_after: int
    manager: SessionManager | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """``{strategy: "mask", editIds, masked: [...], tokensBefore, tokensAfter}``."""
        return {
            "strategy": "mask",
            "editIds": list(self.edit_ids),
            "masked": [e.to_json() for e in self.edits],
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
        }


def mask_session(plan: CompactionPlan, writer: SessionManager) -> MaskDone:
    """Mask the bulky tool outputs and tool-call arguments of the part
    ``plan`` would summarize (:func:`pi_session.compaction.masking.plan_masking`)
    by appending one pi 1.6 ``context_edit`` entry per masked entry to
    ``writer`` (the session opened for writing). The masked entries stay in
    the file unchanged; pi 1.6 and ``pi-session context`` show the notes.

    The leaf must still be the planned one (else nothing is written and
    :class:`LeafMovedError` is raised: the edits target entries of the planned
    path).

    Returns:
        A :class:`MaskDone` (no edit ids when nothing was big enough).

    Raises:
        LeafMovedError: see above.
        ValueError: the plan has nothing to compact.
        OSError: the write failed.
    """
    from ..compaction.masking import plan_masking
    from ..session.tokens import estimate_tokens

    if plan.preparation is None:
        raise ValueError(plan.reason or "nothing to compact")
    edits = plan_masking(plan.preparation, plan.path)
    before = sum(estimate_tokens(m) for m in writer.build_session_context()["messages"])
    if not edits:
        return MaskDone((), (), before, before, None)
    if writer.get_leaf_id() != plan.leaf_id:
        raise LeafMovedError(plan.location, plan.leaf_id, writer.get_leaf_id(), by_other_writer=writer is not plan.manager, what="masking")
    ids = tuple(writer.append_context_edit(e.target_id, e.replacement) for e in edits)
    writer.save()
    after = sum(estimate_tokens(m) for m in writer.build_session_context()["messages"])
    return MaskDone(ids, tuple(edits), before, after, writer)
