"""What ``pi-session browse`` does to sessions: library calls, no UI.

Each action opens the session file as the matching CLI command does
(``label``, ``name``, ``navigate``, ``clone``, ``export``, ``compact``), so
the browser writes exactly what the command would: a session is read
read-only, a summary is made first, and the file is opened for writing only
when there is something to write (an old v1/v2 file is migrated then, with
its backup, and the note says so). Every failure is an :class:`ActionError`
with a one-line message; the file is unchanged unless an
:class:`Outcome` came back.

Summaries (branch summary, compaction) are coroutines; the UI runs them
with :func:`run_in_thread`, which keeps the screen responsive and can be
cancelled (nothing is written then).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..cli.render import plural
from ..manager import SessionManager
from ..storage import SessionFileError

if TYPE_CHECKING:
    from ..compaction import BranchSummaryResult, CompactionPreparation, CompactionResult
    from ..llm import Summarizer
    from ..navigation import NavigationPlan

__all__ = [
    "ActionError",
    "ExportExists",
    "Outcome",
    "SummarizerConfig",
    "open_read",
    "list_sessions",
    "load_notes",
    "set_label",
    "set_name",
    "plan_navigation",
    "describe_navigation",
    "summarize_branch",
    "navigate",
    "clone",
    "default_export_path",
    "export",
    "plan_compaction",
    "describe_compaction",
    "summarize_compaction",
    "write_compaction",
    "run_in_thread",
]

T = TypeVar("T")


class ActionError(Exception):
    """An action failed; ``str(exc)`` is one line for the user. The session
    file was not changed."""


class ExportExists(ActionError):
    """The export's output file exists: ask, then call :func:`export` again
    with ``overwrite=True``."""


@dataclass(frozen=True)
class Outcome:
    """What an action did.

    Attributes:
        message: one line for the user.
        notes: notes of the write (a migration with its backup, another
            writer's entries loaded), one line each.
        path: a file the action made (clone, export), else None.
        select_id: the entry to select afterwards (the new leaf), or None.
    """

    message: str
    notes: tuple[str, ...] = ()
    path: Path | None = None
    select_id: str | None = None


@dataclass(frozen=True)
class SummarizerConfig:
    """The summarizer options of ``navigate --summarize`` and ``compact``:
    provider (None: by API key, else extractive), model, base URL, seconds
    per request and retries (None: the defaults)."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None

    def make(self) -> tuple[Summarizer, str | None]:
        """Build the summarizer as the CLI does.

        Returns:
            ``(summarizer, note)``: the note says why the extractive
            summarizer was chosen, when it was chosen for lack of a key.

        Raises:
            ActionError: unknown provider, or a provider without its key.
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
            raise ActionError(str(exc)) from None
        return summarizer, getattr(summarizer, "fallback_reason", None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def open_read(path: Path) -> SessionManager:
    """Open a session read-only (an old file is migrated in memory only).

    Raises:
        ActionError: missing, empty or unreadable file, or not a session.
    """
    try:
        if path.stat().st_size == 0:
            raise ActionError(f"{path}: empty file (0 bytes): no session in it yet")
        return SessionManager.open(path, read_only=True)
    except SessionFileError as exc:
        raise ActionError(_one_line(str(exc))) from None
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None


def list_sessions(cwd: str, *, all_projects: bool = False) -> list[dict[str, Any]]:
    """The sessions of ``cwd`` (or of every project), newest first, as
    ``pi-session ls [--all]`` lists them (pi's ``SessionInfo`` dicts)."""
    return SessionManager.list_all() if all_projects else SessionManager.list(cwd)


def load_notes(manager: SessionManager) -> list[str]:
    """The damage and notes found when ``manager`` opened its file, one line
    each (what the CLI prints as warnings)."""
    file = manager.get_session_file()
    lines = [p.format(file) if p.line else f"{file}: {p.message}" for p in manager.problems]
    return [_one_line(line) for line in [*lines, *manager.notes]]


def _open_write(path: Path) -> tuple[SessionManager, int]:
    """The session opened for writing and the number of notes it had (the
    notes after it are what the write did)."""
    try:
        manager = SessionManager.open(path, read_only=False)
    except SessionFileError as exc:
        raise ActionError(_one_line(str(exc))) from None
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    return manager, 0


def _save(manager: SessionManager, seen: int) -> tuple[str, ...]:
    """Write what is pending; the notes of the opening and the write."""
    try:
        manager.save()
    except OSError as exc:
        raise ActionError(f"{manager.get_session_file()}: {exc.strerror or exc}") from None
    return tuple(_one_line(n) for n in manager.notes[seen:])


def _check_text(text: str, what: str) -> None:
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise ActionError(f"{what}: not valid Unicode text")


def set_label(path: Path, entry_id: str, text: str) -> Outcome:
    """Set the label of ``entry_id`` (empty ``text``: clear it), as
    ``pi-session label``.

    Raises:
        ActionError: no such entry, or the write failed.
    """
    _check_text(text, "label")
    text = text.strip()
    if open_read(path).get_entry(entry_id) is None:
        raise ActionError(f"{path}: no entry with id {entry_id}")
    manager, seen = _open_write(path)
    try:
        manager.append_label_change(entry_id, text) if text else manager.append_label_change(entry_id)
    except KeyError:
        raise ActionError(f"{path}: no entry with id {entry_id}") from None
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager, seen)
    done = f"labelled {entry_id}: {text}" if text else f"cleared the label of {entry_id}"
    return Outcome(_one_line(done), notes, select_id=entry_id)


def set_name(path: Path, text: str) -> Outcome:
    """Name the session (empty ``text``: clear the name), as ``pi-session
    name``.

    Raises:
        ActionError: the write failed.
    """
    _check_text(text, "name")
    manager, seen = _open_write(path)
    try:
        manager.append_session_info(text)
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager, seen)
    current = manager.get_session_name()
    return Outcome(_one_line(f"named: {current}") if current else "name cleared", notes)


def plan_navigation(path: Path, entry_id: str) -> NavigationPlan:
    """What moving the leaf to ``entry_id`` would do (nothing written).

    Raises:
        ActionError: no such entry.
    """
    try:
        return open_read(path).plan_navigation(entry_id)
    except KeyError:
        raise ActionError(f"{path}: no entry with id {entry_id}") from None


def describe_navigation(plan: NavigationPlan) -> str:
    """The confirmation text for a move: where the leaf goes, how many
    entries the branch left holds, and the text handed back for a user
    message target."""
    where = f"entry {plan.new_leaf_id}" if plan.new_leaf_id is not None else "the start of the session"
    lines = [f"Move the leaf from {plan.old_leaf_id} to {where}."]
    count = len(plan.entries_to_summarize)
    lines.append(
        f"The branch left behind has {plural(count, 'entry', 'entries')}; a summary of it can be stored at the new position."
        if count
        else "The branch left behind has no entries of its own: nothing to summarize."
    )
    if plan.editor_text is not None:
        lines.append("The target is a user message: the leaf goes to its parent, so the message can be sent again.")
    return "\n".join(lines)


async def summarize_branch(
    cwd: str, plan: NavigationPlan, summarizer: Summarizer, *, context_window: int = 128000
) -> BranchSummaryResult | None:
    """Summarize the branch a move leaves behind, as ``pi-session navigate
    --summarize`` does (branch-summary settings of ``cwd``).

    Returns:
        The summary, or None when the branch has nothing to summarize.

    Raises:
        ActionError: the summarizer failed.
    """
    from ..compaction import generate_branch_summary
    from ..llm import SummarizerError
    from ..settings import load_settings

    entries = list(plan.entries_to_summarize)
    if not entries:
        return None
    reserve = load_settings(cwd).branch_summary.reserve_tokens
    try:
        return await generate_branch_summary(entries, summarizer, context_window=context_window, reserve_tokens=reserve)
    except SummarizerError as exc:
        raise ActionError(f"summary failed: {_one_line(str(exc))}; the session file was not changed") from None


def navigate(path: Path, entry_id: str, summary: BranchSummaryResult | None = None) -> Outcome:
    """Move the leaf to ``entry_id`` and record the move as a
    ``branch_summary`` entry at the new position, with ``summary`` or empty
    (as ``pi-session navigate``: a file's leaf is its last entry).

    Raises:
        ActionError: no such entry (anymore), or the write failed.
    """
    manager, seen = _open_write(path)
    try:
        moved = manager.navigate(
            entry_id,
            summary=summary.summary if summary is not None else "",
            details=summary.details if summary is not None else None,
            usage=summary.usage if summary is not None else None,
        )
    except KeyError:
        raise ActionError(f"{path}: entry {entry_id} is gone; the session file was not changed") from None
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager, seen)
    if moved.summary_entry_id is None:
        return Outcome(f"already at {entry_id}", notes, select_id=entry_id)
    where = moved.new_leaf_id if moved.new_leaf_id is not None else "the start of the session"
    what = "with a summary of the branch left" if summary is not None else "(an empty branch_summary entry records the move)"
    extra = list(notes)
    if moved.unanswered_tool_call_ids:
        count = len(moved.unanswered_tool_call_ids)
        extra.append(f"{plural(count, 'tool call')} at the new position {'has' if count == 1 else 'have'} no result")
    return Outcome(f"moved the leaf to {where} {what}", tuple(extra), select_id=moved.summary_entry_id)


def clone(path: Path, entry_id: str) -> Outcome:
    """Write a new session holding the path root→``entry_id``, as
    ``pi-session clone --leaf``; the source stays untouched.

    Raises:
        ActionError: no such entry, or the write failed.
    """
    writer = open_read(path)
    try:
        new_file = writer.create_branched_session(entry_id)
        writer.save()
    except KeyError:
        raise ActionError(f"{path}: no entry with id {entry_id}") from None
    except (OSError, SessionFileError) as exc:
        raise ActionError(_one_line(f"clone failed: {exc}")) from None
    count = len(writer.get_entries())
    return Outcome(f"cloned {plural(count, 'entry', 'entries')} to {new_file}", path=new_file)


def default_export_path(session: Path, directory: str | None = None) -> Path:
    """Where an export goes unless the user says otherwise:
    ``<directory or cwd>/<session file stem>.html``."""
    return Path(directory or os.getcwd()) / f"{session.stem}.html"


def _looks_like_session(path: Path) -> bool:
    if path.suffix.lower() == ".jsonl":
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{") and b'"type":"session"' in head.split(b"\n", 1)[0].replace(b" ", b"")


def export(path: Path, leaf_id: str | None, output: Path, *, overwrite: bool = False) -> Outcome:
    """Export the conversation root→``leaf_id`` (None: the leaf) to
    ``output`` as ``pi-session export -o`` does: Markdown for a ``.md`` or
    ``.markdown`` name, else HTML; written atomically; never over a session
    file.

    Raises:
        ExportExists: ``output`` exists and ``overwrite`` is false.
        ActionError: no such entry, a session file or a directory in the
            way, a missing directory, or the write failed.
    """
    from ..cli.render import sanitize
    from ..export import export_html, export_markdown
    from ..storage import write_atomic

    manager = open_read(path)
    if leaf_id is not None and manager.get_entry(leaf_id) is None:
        raise ActionError(f"{path}: no entry with id {leaf_id}")
    target = Path(os.path.abspath(output.expanduser()))
    if not target.parent.is_dir():
        raise ActionError(f"{output}: directory {target.parent} does not exist")
    if os.path.lexists(target):
        real = Path(os.path.realpath(target))
        try:
            same = os.path.samefile(real, path)
        except OSError:
            same = False
        if same or (real.exists() and _looks_like_session(real)):
            raise ActionError(f"{output}: refusing to overwrite a session file")
        if real.is_dir():
            raise ActionError(f"{output}: is a directory")
        if not overwrite:
            raise ExportExists(f"{output} already exists")
        target = real
    entries = manager.get_branch(leaf_id)
    render = export_markdown if target.suffix.lower() in (".md", ".markdown") else export_html
    text = sanitize(render(manager.get_header(), entries, labels=dict(manager.tree.labels), name=manager.get_session_name()))
    try:
        write_atomic(target, [text.encode("utf-8")])
    except OSError as exc:
        raise ActionError(f"{output}: {exc.strerror or exc}") from None
    return Outcome(f"exported {plural(len(entries), 'entry', 'entries')} to {target}", path=target)


def plan_compaction(path: Path) -> tuple[CompactionPreparation | None, str]:
    """What ``pi-session compact`` would do at the leaf, with the
    compaction settings of the session's cwd.

    Returns:
        ``(preparation, text)``: the text describes the plan for a
        confirmation, or says why there is nothing to compact
        (preparation None).
    """
    from ..compaction import prepare_compaction
    from ..settings import load_settings
    from ..tokens import estimate_tokens

    manager = open_read(path)
    settings = load_settings(manager.get_cwd()).compaction
    branch = manager.get_branch()
    prep = prepare_compaction(branch, settings)
    if prep is None:
        if not branch:
            return None, "Nothing to compact: the session is empty."
        if branch[-1].get("type") == "compaction":
            return None, "Nothing to compact: the session already ends with a compaction."
        return None, "Nothing to compact: the recent messages fit in the kept tokens (compaction.keepRecentTokens)."
    return prep, describe_compaction(prep, estimate_tokens)


def describe_compaction(prep: CompactionPreparation, estimate: Callable[[Any], int]) -> str:
    """The confirmation text for a compaction plan: what is summarized, what
    is kept, the tokens before."""
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    kept_items = prep.projection_entries[prep.first_kept_entry_index :]
    kept = sum(len(item["messages"]) for item in kept_items)
    kept_tokens = sum(estimate(m) for item in kept_items for m in item["messages"])
    lines = [
        f"Summarize {plural(summarized, 'message')} of the current branch into a compaction entry "
        f"({prep.tokens_before:,} tokens before).",
        f"Kept verbatim from entry {prep.first_kept_entry_id}: {plural(kept, 'message')} (~{kept_tokens:,} tokens).",
    ]
    if prep.previous_summary:
        lines.append("The previous compaction summary is merged in.")
    return "\n".join(lines)


async def summarize_compaction(prep: CompactionPreparation, summarizer: Summarizer) -> CompactionResult:
    """Write the compaction summary (nothing is written to the session).

    Raises:
        ActionError: the summarizer failed.
    """
    from ..compaction import CompactionCancelled, compact
    from ..llm import SummarizerError

    try:
        return await compact(prep, summarizer)
    except SummarizerError as exc:
        raise ActionError(f"summary failed: {_one_line(str(exc))}; the session file was not changed") from None
    except CompactionCancelled:
        raise ActionError("compaction cancelled; the session file was not changed") from None


def write_compaction(path: Path, result: CompactionResult) -> Outcome:
    """Append the compaction entry, as ``pi-session compact`` does.

    Raises:
        ActionError: the write failed.
    """
    manager, seen = _open_write(path)
    extra: dict[str, Any] = {}
    if result.details is not None:
        extra["details"] = result.details
    if result.from_hook:
        extra["from_hook"] = True
    if result.usage is not None:
        extra["usage"] = result.usage
    try:
        # tokensBefore is a float only when recorded usage was fractional; stored as it is (as `compact` does)
        new_id = manager.append_compaction(result.summary, result.first_kept_entry_id, result.tokens_before, **extra)  # type: ignore[arg-type]
    except OSError as exc:
        raise ActionError(f"{path}: {exc.strerror or exc}") from None
    notes = _save(manager, seen)
    return Outcome(f"compacted: compaction entry {new_id}, kept from {result.first_kept_entry_id}", notes, select_id=new_id)


async def run_in_thread(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` on its own event loop in a daemon
    thread and wait for it without blocking the caller's loop (the UI stays
    responsive while a summarizer works). Cancelling the wait cancels the
    coroutine in its thread (a model request is abandoned).

    Returns:
        The coroutine's result; its exception is raised here.
    """
    outer = asyncio.get_running_loop()
    done: asyncio.Future[T] = outer.create_future()
    inner = asyncio.new_event_loop()
    task = inner.create_task(make())

    def finish(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def target() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            asyncio.set_event_loop(inner)
            result = inner.run_until_complete(task)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
            error = exc
        finally:
            inner.close()
        try:
            outer.call_soon_threadsafe(finish, result, error)
        except RuntimeError:  # the waiting loop is gone (the app quit)
            pass

    threading.Thread(target=target, name="pi-session-browse-summary", daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        try:
            inner.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # finished meanwhile
            pass
        raise
