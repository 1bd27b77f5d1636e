"""Branch summaries (pi 1.6 branch summarization): when the user navigates away from a branch, the
part of it not shared with the target is summarized and stored at the
navigation point (pi's ``core/compaction/branch-summarization.js``, as of pi
1.6: context edits among the branch's entries are honoured, no output cap is
sent, a reply cut at the model's limit or calling a tool is a failure, and
the result carries the request's usage)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session.context import apply_context_edit, entry_messages, message_from_entry
from .summarizer import Summarizer, usage_of
from ..session.tokens import estimate_tokens
from ..session.tree import parent_id_of
from ..entries.questions import BRANCH_SUMMARY, CONTEXT_EDIT, CUSTOM_MESSAGE, MESSAGE, TOOL_RESULT, is_summary
from .file_ops import FileOps, compute_file_lists, extract_file_ops_from_message, format_file_operations, summary_file_lists
from .summary import build_summary_request, structured_instructions
from .summary_format import ensure_sections

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "BRANCH_INSTRUCTIONS",
    "NO_BRANCH_CONTENT",
    "BranchEntries",
    "BranchPreparation",
    "BranchSummaryResult",
    "collect_entries_for_branch_summary",
    "prepare_branch_entries",
    "generate_branch_summary",
]

BRANCH_SUMMARY_PREAMBLE = (
    "Before coming back to this point, the user tried out another path in this conversation. "
    "That detour went as follows:\n\n"
)
"""Put before the model's summary so a later reader knows what it describes."""

NO_BRANCH_CONTENT = "(The abandoned branch held nothing to summarize.)"

BRANCH_INSTRUCTIONS = structured_instructions(
    "The transcript above is a branch of the conversation that the user is leaving. Summarize it "
    "so the work can be understood, or resumed, when someone comes back to it later."
)

BRANCH_MAX_TOKENS = None
"""Output budget of a branch summary: none since pi 1.6 (0.73.1 sent 2048);
the model's own limit applies."""


@dataclass
class BranchEntries:
    """Entries of the branch being left.

    Attributes:
        entries: from just below the common ancestor down to the old leaf,
            oldest first.
        common_ancestor_id: the deepest entry on both paths, or None.
    """

    entries: list[Mapping[str, Any]]
    common_ancestor_id: str | None

    def to_json(self) -> dict[str, Any]:
        """``{"entries": [...], "commonAncestorId": id | None}`` (pi's names)."""
        return {"entries": self.entries, "commonAncestorId": self.common_ancestor_id}


@dataclass
class BranchPreparation:
    """Result of :func:`prepare_branch_entries`.

    Attributes:
        messages: agent messages to summarize, oldest first.
        file_ops: paths from all tool calls of the branch and from earlier
            (not hook-made) branch summaries' details.
        total_tokens: estimated tokens of ``messages``.
    """

    messages: list[dict[str, Any]]
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{messages, fileOps{read,written,edited}, totalTokens, fileLists}``."""
        return {
            "messages": self.messages,
            "totalTokens": self.total_tokens,
            "fileOps": self.file_ops.to_json(),
            "fileLists": compute_file_lists(self.file_ops),
        }


@dataclass
class BranchSummaryResult:
    """A written branch summary.

    Attributes:
        summary: preamble + model summary + file lists.
        read_files / modified_files: the file lists (also the entry's details).
        usage: usage of the summary request (a pi ``Usage`` object), or None
            (no request made, or a summarizer that reports none).
    """

    summary: str
    read_files: list[Any] = field(default_factory=list)
    modified_files: list[Any] = field(default_factory=list)
    usage: dict[str, Any] | None = None

    @property
    def details(self) -> dict[str, Any]:
        """``{"readFiles", "modifiedFiles"}`` for the branch_summary entry."""
        return {"readFiles": self.read_files, "modifiedFiles": self.modified_files}


def _branch_of(source: Any, entry_id: str) -> list[Mapping[str, Any]]:
    if hasattr(source, "get_branch"):
        return list(source.get_branch(entry_id))
    return list(source.branch(entry_id))


def _entry_of(source: Any, entry_id: str) -> Mapping[str, Any] | None:
    if hasattr(source, "get_entry"):
        return source.get_entry(entry_id)
    return source.by_id.get(entry_id)


def collect_entries_for_branch_summary(source: Any, old_leaf_id: str | None, target_id: str) -> BranchEntries:
    """Entries to summarize when moving from ``old_leaf_id`` to ``target_id``
    (pi's ``collectEntriesForBranchSummary``).

    Args:
        source: a ``SessionManager`` (``get_branch``/``get_entry``) or a
            :class:`pi_session.session.tree.SessionTree` (``branch``/``by_id``).
        old_leaf_id: where the user is now (None: nothing to summarize).
        target_id: where the user goes.

    Returns:
        :class:`BranchEntries`: walking parent links from the old leaf up to
        (not including) the deepest common ancestor, oldest first. Compaction
        and branch-summary entries on the way are included. A parentId cycle
        stops the walk at the repeated entry.
    """
    if not old_leaf_id:
        return BranchEntries([], None)
    old_path = {e.get("id") for e in _branch_of(source, old_leaf_id)}
    common: str | None = None
    for entry in reversed(_branch_of(source, target_id)):
        if entry.get("id") in old_path:
            common = entry.get("id")
            break
    collected: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    current: str | None = old_leaf_id
    while current and current != common and current not in seen:
        seen.add(current)
        entry = _entry_of(source, current)
        if entry is None:
            break
        collected.append(entry)
        current = parent_id_of(entry)
    collected.reverse()
    return BranchEntries(collected, common)


def _branch_message(entry: Mapping[str, Any], edit: Mapping[str, Any] | None) -> dict[str, Any] | None:
    etype = entry.get("type")
    if etype == MESSAGE:
        msg = entry.get("message")
        if not isinstance(msg, dict) or msg.get("role") == TOOL_RESULT:
            return None
        if edit is None:
            return msg
    elif etype == CUSTOM_MESSAGE:
        if edit is None:
            return message_from_entry(entry, include_compaction=True)
    else:
        # branch_summary / compaction entries become summary messages even
        # when an edit targets them (pi ignores such edits here)
        return message_from_entry(entry, include_compaction=True)
    edited = apply_context_edit(entry_messages(entry, leading=False), edit["replacement"])
    return edited[0] if edited else None


def prepare_branch_entries(entries: Sequence[Mapping[str, Any]], token_budget: int = 0) -> BranchPreparation:
    """Choose the messages of a branch to summarize (pi 1.6's ``prepareBranchEntries``).

    Args:
        entries: the branch entries, oldest first.
        token_budget: maximum estimated tokens (0 = no limit).

    Returns:
        :class:`BranchPreparation`. File ops come first from every
        branch_summary entry's details (unless ``fromHook``), then from the
        tool calls of every message visited. Context edits found among
        ``entries`` are applied (the last one per target wins) to message and
        custom_message entries: an omitted one (``replacement: null``) is
        skipped, a replaced one contributes its new content (and that
        content's tool calls to the file ops); edits of other entries are
        ignored. Messages are taken newest to oldest (tool results skipped;
        compaction and branch_summary entries as summary messages; system
        messages included) until the next one would exceed the budget; a
        summary entry that does not fit is still taken while the total is
        under 90% of the budget, and the walk stops there.
    """
    file_ops = FileOps()
    for entry in entries:
        if entry.get("type") == BRANCH_SUMMARY and not entry.get("fromHook") and entry.get("details"):
            file_ops.add_details(entry.get("details"))
    edits: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if entry.get("type") == CONTEXT_EDIT and "replacement" in entry and isinstance(entry.get("targetId"), str):
            edits[entry["targetId"]] = entry
    messages: list[dict[str, Any]] = []
    total = 0
    for entry in reversed(entries):
        eid = entry.get("id")
        msg = _branch_message(entry, edits.get(eid) if isinstance(eid, str) else None)
        if msg is None:
            continue
        extract_file_ops_from_message(msg, file_ops)
        tokens = estimate_tokens(msg)
        if token_budget > 0 and total + tokens > token_budget:
            if is_summary(entry) and total < token_budget * 0.9:
                messages.append(msg)
                total += tokens
            break
        messages.append(msg)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages, file_ops, total)


async def generate_branch_summary(
    entries: Sequence[Mapping[str, Any]],
    summarizer: Summarizer,
    *,
    context_window: int = 128000,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummaryResult:
    """Summarize the branch being left (pi's ``generateBranchSummary``).

    Args:
        entries: the branch entries, oldest first (from
            :func:`collect_entries_for_branch_summary`).
        summarizer: writes the summary.
        context_window: the model's context window (tokens); the messages
            taken are limited to ``context_window - reserve_tokens`` tokens.
        reserve_tokens: tokens kept free (settings ``branchSummary.reserveTokens``).
        custom_instructions: extra focus, or (with ``replace_instructions``)
            the whole instructions.
        replace_instructions: use ``custom_instructions`` instead of the
            structured-format instructions (the answer is then kept as is).

    Returns:
        :class:`BranchSummaryResult`: :data:`BRANCH_SUMMARY_PREAMBLE` + the
        structured summary (headings the model left out added by
        :func:`~pi_session.compaction.summary.ensure_sections`) + file lists,
        with the request's usage; with no messages, :data:`NO_BRANCH_CONTENT`
        and no model call. No output cap is sent (pi 1.6).

    Raises:
        pi_session.llm.SummarizerError: the summary could not be written
            (also a reply cut at the model's output limit, or one calling
            a tool).
    """
    prep = prepare_branch_entries(entries, context_window - reserve_tokens)
    if not prep.messages:
        return BranchSummaryResult(NO_BRANCH_CONTENT)
    if replace_instructions and custom_instructions:
        request = build_summary_request(
            "branch", prep.messages, BRANCH_MAX_TOKENS, instructions=custom_instructions
        )
    else:
        request = build_summary_request(
            "branch",
            prep.messages,
            BRANCH_MAX_TOKENS,
            custom_instructions=custom_instructions,
            instructions=BRANCH_INSTRUCTIONS,
        )
    answer = await summarizer.summarize(request)
    text = str(answer)
    if not (replace_instructions and custom_instructions):
        # the structured format was asked for: add the headings a model left out
        text = ensure_sections(text)
    lists = summary_file_lists(prep.file_ops, prep.messages)
    summary = BRANCH_SUMMARY_PREAMBLE + text + format_file_operations(lists["readFiles"], lists["modifiedFiles"])
    return BranchSummaryResult(summary, lists["readFiles"], lists["modifiedFiles"], usage_of(answer))
