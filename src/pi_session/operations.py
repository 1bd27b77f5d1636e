"""The workflows of pi-session, once, under every front end: the CLI
(:mod:`pi_session.cli`), the browser (:mod:`pi_session.browse`) and the
OpenAI Agents SDK session (:mod:`pi_session.integrations.openai_agents`).

- **Opening** (:func:`open_for_reading`, :func:`open_for_writing`): one
  policy. A session is read read-only (an old v1/v2 file is migrated in
  memory only) and opened for writing only once there is something to write
  (then a v1/v2 file is migrated on disk, with its backup, and the
  manager's notes say so). An empty file is refused for reading (pi would
  start a new session in it). Failures are an :class:`OperationError` with
  one line naming the session.
- **Compaction** (:func:`plan_compaction`, :func:`compact_session`,
  :func:`commit_compaction`): prepare, summarize, then commit only if the
  leaf is still where the plan was made (see :func:`commit_compaction` for
  the policy when it moved).
- **Navigation** with a branch summary (:func:`plan_navigation`,
  :func:`summarize_branch`, :func:`navigate_session`).
- **Export** (:func:`check_export_target`, :func:`export_chunks`,
  :func:`write_export`) and **import** (:func:`import_sessions`).

Front ends parse arguments, call these, and print. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .manager import SessionManager
from .settings import CompactionSettings, load_settings
from .storage import LeafMovedError, SessionFileError

if TYPE_CHECKING:
    from .compaction import BranchSummaryResult, CompactionPreparation, CompactionResult
    from .llm import Summarizer
    from .navigation import NavigationPlan, NavigationResult
    from .stores import SessionStore
    from .stores.transfer import ImportResult

__all__ = [
    "OperationError",
    "LeafMoved",
    "OutputExists",
    "one_line",
    "open_for_reading",
    "open_for_writing",
    "session_notes",
    "save",
    "SummarizerConfig",
    "compaction_settings",
    "CompactionPlan",
    "CompactionDone",
    "plan_compaction",
    "nothing_to_compact",
    "summarize_compaction",
    "commit_compaction",
    "compact_session",
    "plan_navigation",
    "summarize_branch",
    "navigate_session",
    "check_export_target",
    "export_chunks",
    "write_export",
    "STORE_SCHEMES",
    "is_store_url",
    "import_sessions",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------
# errors


class OperationError(Exception):
    """A workflow failed; ``str(exc)`` is one line for the user, naming the
    session or file. Nothing was written unless the docstring of the
    operation says otherwise."""


class LeafMoved(OperationError):
    """An entry planned at one leaf (a compaction, a branch summary) was not
    written: the session's leaf moved, in this process or through another
    writer, onto a path that does not continue the one planned on. Nothing
    was written.

    Attributes:
        planned_leaf_id: the leaf the plan was made at.
        leaf_id: the leaf now (None: unknown or the start).
        by_other_writer: True when another writer's appends moved it (the
            session in memory is stale then: open it again).
    """

    def __init__(self, location: Any, planned_leaf_id: str | None, leaf_id: str | None, *, by_other_writer: bool, what: str = "compaction") -> None:
        super().__init__(
            f"{location}: the leaf moved from {planned_leaf_id} to {leaf_id} while the summary was being written "
            f"({'another writer changed the session' if by_other_writer else 'the session changed'}); the {what} "
            f"was planned on the old branch, so nothing was written: run it again"
        )
        self.planned_leaf_id = planned_leaf_id
        self.leaf_id = leaf_id
        self.by_other_writer = by_other_writer


class OutputExists(OperationError):
    """The output file of an export exists (and may be replaced: call again
    with ``overwrite=True``)."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(text.split())


# ---------------------------------------------------------------------------
# opening


def _open(location: str | os.PathLike[str], store: SessionStore | None, read_only: bool, shown_as: str | None) -> SessionManager:
    name = location if shown_as is None else shown_as
    try:
        if store is not None:
            return SessionManager.open(str(location), store=store, read_only=read_only)
        path = Path(location)
        if read_only and path.stat().st_size == 0:
            # pi (and SessionManager.open) would start a new session in it:
            # reading must not invent one
            raise OperationError(f"{path}: empty file (0 bytes): no session in it yet")
        return SessionManager.open(path, read_only=read_only)
    except SessionFileError as exc:
        raise OperationError(str(exc)) from None
    except PermissionError as exc:
        raise OperationError(f"{name}: permission denied ({exc.strerror or exc})") from None
    except OSError as exc:
        raise OperationError(f"{name}: {exc.strerror or exc}") from None


def open_for_reading(
    location: str | os.PathLike[str], *, store: SessionStore | None = None, shown_as: str | None = None
) -> SessionManager:
    """Open a session read-only: a v1/v2 file is migrated in memory only;
    nothing is ever written through the manager.

    Args:
        location: the session file (a path), or with ``store`` a session id
            (prefix) in that database store.
        store: a database :class:`pi_session.stores.SessionStore`, or None
            for a file.
        shown_as: how an error reading the file names it (default:
            ``location``), e.g. as the user typed it.

    Raises:
        OperationError: missing, empty (0 bytes), unreadable or damaged
            beyond use; not a session. Store errors
            (:class:`pi_session.stores.StoreError`, e.g. no such id)
            propagate.
    """
    return _open(location, store, True, shown_as)


def open_for_writing(
    location: str | os.PathLike[str], *, store: SessionStore | None = None, shown_as: str | None = None
) -> SessionManager:
    """Open a session to write to it, once there is something to write: a
    v1/v2 file is migrated on disk now, with a backup (the manager's
    ``notes`` say so). See :func:`open_for_reading` for the arguments.

    Raises:
        OperationError: the file cannot be read or rewritten.
    """
    return _open(location, store, False, shown_as)


def session_notes(manager: SessionManager) -> list[str]:
    """The damage and notes found when ``manager`` opened its session, one
    line each, as the CLI prints them as warnings."""
    where = manager.get_session_location()
    lines = [p.format(where) if p.line else f"{where}: {p.message}" for p in manager.problems]
    return [*lines, *manager.notes]


def save(manager: SessionManager) -> tuple[str, ...]:
    """Write what is pending.

    Returns:
        The manager's notes (opening and writing), one line each.

    Raises:
        OperationError: the write failed.
    """
    try:
        manager.save()
    except OSError as exc:
        raise OperationError(f"{manager.get_session_location()}: {exc.strerror or exc}") from None
    return tuple(one_line(n) for n in manager.notes)


# ---------------------------------------------------------------------------
# summarizers and settings


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
        from .llm import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, SummarizerError, make_summarizer

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


# ---------------------------------------------------------------------------
# compaction


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


def nothing_to_compact(path: Sequence[Mapping[str, Any]], keep_setting: str = "--keep-recent-tokens") -> str:
    """Why a path has no compaction plan (pi 1.6 refuses with "already
    compacted" / "nothing to compact"), one line; ``keep_setting`` names
    where the kept tokens come from."""
    if not path:
        return "Nothing to compact: the session is empty."
    if path[-1].get("type") == "compaction":
        return "Nothing to compact: the session already ends with a compaction."
    if any(e.get("type") == "compaction" for e in path):
        return f"Nothing to compact: everything since the last compaction fits in {keep_setting}."
    return f"Nothing to compact: the whole conversation fits in {keep_setting}."


def plan_compaction(manager: SessionManager, settings: CompactionSettings, *, keep_tool_pairs: bool = True) -> CompactionPlan:
    """Prepare a compaction of the path to ``manager``'s leaf (nothing is
    written): pi 1.6's ``prepareCompaction``, with ``keep_tool_pairs``
    (beyond pi: never keep a tool result whose call is summarized away)."""
    from .compaction import prepare_compaction

    path = tuple(manager.get_branch())
    prep = prepare_compaction(path, settings, keep_tool_pairs=keep_tool_pairs)
    return CompactionPlan(
        str(manager.get_session_location()),
        manager.get_leaf_id(),
        path,
        prep,
        "" if prep is not None else nothing_to_compact(path),
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
    from .compaction import compact

    if plan.preparation is None:
        raise ValueError(plan.reason or "nothing to compact")
    return await compact(plan.preparation, summarizer, custom_instructions=custom_instructions)


def _continues(manager: SessionManager, planned_leaf_id: str | None) -> bool:
    """Whether the path to ``manager``'s leaf passes through
    ``planned_leaf_id`` with no compaction after it (entries another writer
    added on the same path)."""
    path = manager.get_branch()
    ids = [e.get("id") for e in path]
    if planned_leaf_id is None:
        start = 0
    elif planned_leaf_id in ids:
        start = ids.index(planned_leaf_id) + 1
    else:
        return False
    return not any(e.get("type") == "compaction" for e in path[start:])


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
      written and :class:`LeafMoved` is raised. The same check runs again
      under the append lock for appends made by another process between
      opening and writing. The plan is not made again: a summary of the
      branch the user did not ask about is never written without asking;
      the caller says so (the CLI prints the one line and exits 1) and the
      user runs it again on the current branch.

    Raises:
        LeafMoved: see above (nothing written).
        OSError: the write failed (:class:`pi_session.storage.AppendError`).
    """
    leaf = writer.get_leaf_id()
    if leaf != plan.leaf_id and not _continues(writer, plan.leaf_id):
        raise LeafMoved(plan.location, plan.leaf_id, leaf, by_other_writer=writer is not plan.manager)
    seen = len(writer.notes)
    try:
        entry_id = writer.append_compaction_result(result, planned_leaf_id=leaf)
        writer.save()
    except LeafMovedError as exc:
        raise LeafMoved(plan.location, plan.leaf_id, exc.leaf_id, by_other_writer=exc.count > 0) from None
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
        LeafMoved: the leaf moved off the planned path (nothing written).
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


# ---------------------------------------------------------------------------
# navigation


def plan_navigation(manager: SessionManager, entry_id: str) -> NavigationPlan:
    """What moving the leaf to ``entry_id`` would do (pi's ``navigateTree``
    plan; nothing written).

    Raises:
        OperationError: no such entry.
    """
    try:
        return manager.plan_navigation(entry_id)
    except KeyError:
        raise OperationError(f"{manager.get_session_location()}: no entry with id {entry_id}") from None


async def summarize_branch(
    plan: NavigationPlan,
    summarizer: Summarizer,
    *,
    reserve_tokens: int,
    context_window: int = 128000,
    custom_instructions: str | None = None,
) -> BranchSummaryResult | None:
    """Summarize the branch a move leaves behind (pi's
    ``generateBranchSummary`` over the plan's ``entries_to_summarize``,
    within ``context_window`` minus ``reserve_tokens``, in tokens).

    Returns:
        The summary, or None when the branch has nothing to summarize.

    Raises:
        pi_session.llm.SummarizerError: the summarizer failed.
    """
    from .compaction import generate_branch_summary

    entries = list(plan.entries_to_summarize)
    if plan.is_noop or not entries:
        return None
    return await generate_branch_summary(
        entries,
        summarizer,
        context_window=context_window,
        reserve_tokens=reserve_tokens,
        custom_instructions=custom_instructions,
    )


def navigate_session(writer: SessionManager, plan: NavigationPlan, summary: BranchSummaryResult | None = None) -> NavigationResult:
    """Move the leaf to the plan's target and record the move as a
    ``branch_summary`` entry at the new position, with ``summary`` or empty
    (pi leaves an empty one out of the context; a file's leaf is its last
    entry, so the move must be an entry). With a summary, the leaf must
    still be the planned one: a summary of a branch is never written after
    another branch (same policy as :func:`commit_compaction`).

    Raises:
        LeafMoved: with a summary, the leaf moved (nothing written).
        OperationError: the target is gone.
        OSError: the write failed.
    """
    if summary is not None and writer.get_leaf_id() != plan.old_leaf_id:
        raise LeafMoved(writer.get_session_location(), plan.old_leaf_id, writer.get_leaf_id(), by_other_writer=True, what="branch summary")
    try:
        return writer.navigate(
            plan.target_id,
            summary=summary.summary if summary is not None else "",
            details=summary.details if summary is not None else None,
            usage=summary.usage if summary is not None else None,
        )
    except KeyError:
        raise OperationError(
            f"{writer.get_session_location()}: entry {plan.new_leaf_id or plan.target_id} is gone; the session file was not changed"
        ) from None


# ---------------------------------------------------------------------------
# export


def check_export_target(output: str | os.PathLike[str], session_file: str | os.PathLike[str] | None, *, overwrite: bool = False) -> Path:
    """The file an export may write to for ``output``: never the session
    being exported or any pi session file, never a directory; an existing
    file only with ``overwrite`` (a symlink is kept: the file it points to
    is replaced).

    Returns:
        The absolute path to write (atomically).

    Raises:
        OutputExists: ``output`` exists and ``overwrite`` is false.
        OperationError: a session file or a directory in the way, or a
            missing directory.
    """
    from .listing import looks_like_session_file

    target = Path(os.path.abspath(Path(output).expanduser()))
    if not target.parent.is_dir():
        raise OperationError(f"{output}: directory {target.parent} does not exist")
    if not os.path.lexists(target):
        return target
    real = Path(os.path.realpath(target))
    try:
        same = session_file is not None and os.path.samefile(real, os.path.abspath(session_file))
    except OSError:
        same = False
    if same:
        raise OperationError(f"{output}: that is the session being exported; refusing to overwrite it")
    if real.is_dir():
        raise OperationError(f"{output}: is a directory")
    if real.exists() and looks_like_session_file(real):
        why = "a .jsonl file may be a session" if real.suffix.lower() == ".jsonl" else "it is a pi session file"
        raise OperationError(f"{output}: refusing to overwrite it: {why}")
    if not overwrite:
        raise OutputExists(f"{output}: already exists (use --force to overwrite it)")
    return real


def export_chunks(manager: SessionManager, kind: str, leaf_id: Any = None) -> tuple[Iterator[bytes], int]:
    """The export of a session as UTF-8 pieces (:func:`pi_session.export.export_session`):
    ``kind`` ``"html"`` (the viewer: the whole tree, the path to ``leaf_id``
    shown) or ``"md"`` (the path root→``leaf_id``, its terminal escapes
    shown as visible escapes). ``leaf_id`` None: the leaf; ``"null"``: no
    path (an empty conversation).

    Returns:
        ``(chunks, count)``: the document, and how many entries it holds.

    Raises:
        OperationError: no entry ``leaf_id``.
        ValueError: an unknown ``kind``.
    """
    from .export import export_session
    from .terminal import sanitize

    if leaf_id == "null":
        path: list[dict[str, Any]] = []
    else:
        if leaf_id is not None and manager.get_entry(leaf_id) is None:
            raise OperationError(f"{manager.get_session_location()}: no entry with id {leaf_id}")
        path = manager.get_branch(leaf_id)
    chunks, count = export_session(manager, kind, path)
    if kind == "md":
        chunks = (sanitize(chunk) for chunk in chunks)
    return (chunk.encode("utf-8") for chunk in chunks), count


def write_export(target: Path, chunks: Iterable[bytes]) -> None:
    """Write an export to ``target`` (from :func:`check_export_target`)
    atomically: a temp file beside it, fsync, rename; mode 0600.

    Raises:
        OSError: the write failed (the target is unchanged).
    """
    from .storage import write_atomic

    write_atomic(target, chunks)


# ---------------------------------------------------------------------------
# import


STORE_SCHEMES = ("sqlite://", "postgresql://", "postgres://")
"""URL prefixes of database stores (lower case)."""


def is_store_url(text: str) -> bool:
    """Whether ``text`` names a database store (``sqlite://``, ``postgresql://``)."""
    return text.lower().startswith(STORE_SCHEMES)


def _is_sqlite_file(path: str) -> bool:
    if not os.path.isfile(path):  # never open a FIFO or a device
        return False
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def import_sessions(sources: Iterable[str], target: SessionStore) -> Iterator[ImportResult]:
    """Import pi sessions into ``target``, one result per session, as
    ``pi-session import`` does: a store URL copies every session of that
    store; a file or directory (searched at any depth) imports its session
    files with their exact lines (:func:`pi_session.stores.transfer.import_file`:
    idempotent, a grown file appends its new lines). A source that cannot
    be read, or a SQLite file given as a path, is a ``failed`` result. The
    sources are never changed.

    Raises:
        pi_session.stores.StoreError: a store cannot be opened or written.
    """
    from .stores import open_store
    from .stores.transfer import ImportResult, copy_session, import_file, session_files

    for source in sources:
        if is_store_url(source):
            origin = open_store(source)
            for info in origin.list(with_text=False):
                yield copy_session(origin, target, str(info["id"]))
            continue
        try:
            os.stat(source)
        except OSError as exc:  # missing, a dangling symlink, a symlink loop, no permission
            reason = exc.strerror or "cannot be read"
            yield ImportResult(source, "failed", message=f"{source}: {reason[:1].lower()}{reason[1:]}")
            continue
        if _is_sqlite_file(source):
            yield ImportResult(
                source, "failed", message=f"{source}: a SQLite database, not a session file: import from it as sqlite:///{os.path.abspath(source)}"
            )
            continue
        for path in session_files([source]):
            yield import_file(target, path)
