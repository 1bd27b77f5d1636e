"""Compaction commands: tokens, compact, navigate.

The workflows are :mod:`pi_session.operations` (plan, summarize, commit
only if the leaf did not move); the shared summarizer options and the
spinner are in :mod:`.summarizing`. These commands parse and print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import typer
from rich.table import Table

from ..adapters import unanswered_tool_calls
from ..compaction import CompactionCancelled, prepare_branch_entries
from ..compaction.masking import plan_masking
from ..operations import (
    STRATEGIES,
    LeafMovedError,
    MaskDone,
    OperationError,
    already_there_message,
    compact_session,
    keep_recent_source,
    mask_session,
    navigate_session,
    plan_compaction,
    summarize_branch,
)
from ..session.settings import CompactionSettings
from ..render.terminal import plural, sanitize
from ..session.tokens import (
    estimate_context_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    should_compact,
    usage_is_stale,
)
from .common import (
    JSON_OPTION,
    SESSION_ARGUMENT,
    apply_leaf,
    entry_id_arg,
    console,
    fail,
    open_session,
    print_json,
    warn,
)
from .summarizing import (
    check_summarizer_options,
    BASE_URL_OPTION,
    INSTRUCTIONS_OPTION,
    KEEP_RECENT_OPTION,
    MAX_RETRIES_OPTION,
    MODEL_OPTION,
    PROVIDER_OPTION,
    RESERVE_OPTION,
    TIMEOUT_OPTION,
    check_token_options,
    compaction_settings_for,
    make_summarizer,
    run_summary,
    settings_for,
)
from ..entries.questions import MESSAGE


# ---------------------------------------------------------------------------
# tokens


def tokens(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Measure the context at this entry (or 'null')."),
    window: int = typer.Option(200000, "--window", min=1, help="Model context window, in tokens."),
    reserve: Optional[int] = typer.Option(
        None, "--reserve", min=0, help="Tokens kept free (default: compaction.reserveTokens from settings, 16384)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Estimate the context size in tokens and whether compaction would trigger."""
    manager = open_session(ctx, session, quiet=as_json)
    apply_leaf(manager, leaf)
    settings = settings_for(manager, as_json).compaction
    if reserve is not None:
        settings = CompactionSettings(settings.enabled, reserve, settings.keep_recent_tokens)
    per_entry = [
        {"id": e.get("id"), "tokens": estimate_tokens(e["message"])}
        for e in manager.get_entries()
        if e.get("type") == MESSAGE and isinstance(e.get("message"), dict)
    ]
    path = manager.get_branch() if manager.get_leaf_id() is not None else []
    projection = manager.build_session_projection()
    messages = projection["messages"]
    est = estimate_context_tokens(messages)
    limits = {"enabled": True, "reserveTokens": settings.reserve_tokens}
    trigger = should_compact(est["tokens"], window, limits)
    projected = estimate_projected_context_tokens(projection, path)
    projected_trigger = should_compact(projected["tokens"], window, limits)
    if as_json:
        print_json(
            {
                "perEntry": per_entry,
                "context": est,
                "shouldCompact": trigger,
                "projected": projected,
                "projectedShouldCompact": projected_trigger,
            }
        )
        return
    # pi 1.6 decides with the projected estimate: usage reported before the
    # branch's latest compaction or context edit measured a context that no
    # longer exists, so it is not trusted.
    table = Table(show_header=False, show_edge=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("context tokens", f"{projected['tokens']:,}")
    stale_usage = usage_is_stale(projection, path)
    if projected["lastUsageIndex"] is not None:
        table.add_row("  from last reported usage", f"{projected['usageTokens']:,}")
        table.add_row("  estimated after it", f"{projected['trailingTokens']:,}")
    else:
        table.add_row("  (all estimated)", "")
    if stale_usage:
        table.add_row("counting the older usage", f"{est['tokens']:,}")
    table.add_row("messages in context", f"{len(messages):,}")
    table.add_row("context window", f"{window:,}")
    threshold = window - settings.reserve_tokens
    table.add_row("compaction threshold", f"{threshold:,}" if threshold > 0 else f"{threshold:,} (the reserve is larger than the window)")
    table.add_row("would compact", "yes" if projected_trigger else "no")
    if not settings.enabled:
        table.add_row("", "(auto-compaction is disabled in settings)")
    console.print(table)
    if threshold <= 0:
        console.print(
            f"note: the reserve ({settings.reserve_tokens:,} tokens, --reserve or compaction.reserveTokens) leaves no "
            f"room in a {window:,}-token window, so compaction would trigger on any context.",
            style="dim",
        )
    if stale_usage:
        console.print(
            "note: the last reported usage is from before the latest compaction or context edit, so it "
            "measured a context that no longer exists; like pi 1.6, the count above estimates every message "
            "until the model answers again.",
            style="dim",
        )


# ---------------------------------------------------------------------------
# compact


def _describe_messages(messages: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for m in messages:
        role = str(m.get("role"))
        counts[role] = counts.get(role, 0) + 1
    return ", ".join(f"{n} {role}" for role, n in sorted(counts.items())) or "none"


def compact_cmd(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    keep_recent_tokens: Optional[int] = KEEP_RECENT_OPTION,
    reserve_tokens: Optional[int] = RESERVE_OPTION,
    instructions: Optional[str] = INSTRUCTIONS_OPTION,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be summarized and kept; write nothing."),
    pi_exact: bool = typer.Option(
        False, "--pi-exact", help="Use pi's cut even where it would keep a tool result whose call is summarized away."
    ),
    provider: Optional[str] = PROVIDER_OPTION,
    model: Optional[str] = MODEL_OPTION,
    base_url: Optional[str] = BASE_URL_OPTION,
    timeout: Optional[float] = TIMEOUT_OPTION,
    max_retries: Optional[int] = MAX_RETRIES_OPTION,
    show_summary: bool = typer.Option(False, "--show-summary", help="Print the whole new summary (default: its first lines)."),
    strategy: str = typer.Option(
        "summary",
        "--strategy",
        help="summary: summarize older messages (pi's compaction); mask: replace their bulky tool outputs and "
        "arguments by one-line notes (context edits; every message stays); both: mask, then summarize.",
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Summarize older messages into a compaction entry, keeping recent ones.

    The file is only opened for writing once the summary is ready: if the
    summary fails, the session file is left exactly as it was (an old
    version-1/2 file is migrated only when the compaction is written)."""
    check_token_options(keep_recent_tokens, reserve_tokens)
    check_summarizer_options(provider, timeout, max_retries)
    if strategy not in STRATEGIES:
        fail(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    # Read-only until the compaction is written: a v1/v2 file is migrated
    # in memory, and only rewritten (with a backup) when there is something
    # to write, so a failure really leaves the file unchanged.
    manager = open_session(ctx, session, read_only=True, quiet=as_json, notes=dry_run)
    settings = compaction_settings_for(manager, as_json, reserve_tokens, keep_recent_tokens)
    plan = plan_compaction(
        manager, settings, keep_tool_pairs=not pi_exact, keep_source=keep_recent_source(manager.get_cwd(), keep_recent_tokens)
    )
    prep = plan.preparation
    if prep is None:
        if as_json:
            print_json(None)
        else:
            console.print(sanitize(plan.reason), markup=False, soft_wrap=True)
        return
    if dry_run:
        if as_json:
            print_json(prep.to_json())
        else:
            _print_plan(plan.path, prep, estimated_context_tokens(manager))
        return
    masked: dict[str, Any] | None = None
    if strategy != "summary":
        mask = _mask(ctx, session, plan, as_json, alone=strategy == "mask")
        if strategy == "mask":
            return
        masked = mask.to_json()
        if mask.manager is not None:  # summarize what the masked context still holds
            manager = mask.manager
            plan = plan_compaction(
                manager, settings, keep_tool_pairs=not pi_exact, keep_source=keep_recent_source(manager.get_cwd(), keep_recent_tokens)
            )
            if plan.preparation is None:
                if as_json:
                    print_json({"mask": masked})
                else:
                    console.print(sanitize(plan.reason), markup=False, soft_wrap=True)
                return
            prep = plan.preparation
    before = estimated_context_tokens(manager)
    summarizer = make_summarizer(provider, model, base_url, as_json, timeout, max_retries)
    try:
        done = run_summary(
            compact_session(
                manager,
                summarizer,
                plan=plan,
                open_writer=lambda: _open_to_write(ctx, session, quiet=as_json),
                custom_instructions=instructions,
            ),
            f"Summarizing {plural(len(prep.messages_to_summarize) + len(prep.turn_prefix_messages), 'message')} "
            f"with {getattr(summarizer, 'name', 'summarizer')}…",
            as_json,
        )
    except CompactionCancelled:
        fail("compaction cancelled; the session file was not changed")
    except (LeafMovedError, OperationError) as exc:  # the leaf moved (another writer): nothing written
        fail(str(exc))
    assert done is not None  # there was a plan
    writer, new_id, result = done.manager, done.entry_id, done.result
    if not as_json:
        for note in done.notes:
            warn(note)
    # both sides pure estimates of the messages (usage reported by kept
    # assistant messages predates the compaction, so "after" cannot use it)
    after = estimated_context_tokens(writer)
    if as_json:
        out = {"id": new_id, **result.to_json(), "estimatedTokensBefore": before, "tokensAfter": after,
               "summarizer": getattr(summarizer, "name", None)}
        print_json({**out, "mask": masked} if masked is not None else out)
        return
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    recorded = _recorded_tokens_before(plan.path, result.tokens_before)
    console.print(
        f"Compacted {plural(summarized, 'message')} into a summary of ~{plural(estimate_tokens({'role': 'compactionSummary', 'summary': result.summary}), 'token')} "
        f"(compaction entry {new_id}); kept from {sanitize(str(result.first_kept_entry_id))}.\n"
        f"Context: ~{before:,} → ~{after:,} tokens, both estimated from the messages' text (about 4 characters a token)."
        + (f"\nThe entry records pi's count as tokensBefore, {recorded}." if recorded is not None else ""),
        markup=False,
        soft_wrap=True,
    )
    if after > before:
        warn(
            f"the context is now estimated larger than before (~{before:,} → ~{after:,} tokens): "
            "the summary is longer than the messages it replaced, so compacting a session this small does not pay"
        )
    lines = sanitize(result.summary).splitlines()
    if show_summary or len(lines) <= SUMMARY_PREVIEW_LINES:
        console.print("\n".join(lines), markup=False, soft_wrap=True)
    else:
        console.print("\n".join(lines[:SUMMARY_PREVIEW_LINES]), markup=False, soft_wrap=True)
        console.print(
            f"… {plural(len(lines) - SUMMARY_PREVIEW_LINES, 'more line')} of the summary: run with --show-summary, "
            "or see it with `pi-session context SESSION`.",
            style="dim",
            markup=False,
            soft_wrap=True,
        )


def _mask(ctx: typer.Context, session: str, plan: Any, as_json: bool, *, alone: bool) -> Any:
    """``compact --strategy mask|both``: write the context edits that mask
    the old part's bulky tool outputs and arguments, and say what changed
    (with ``--json``, printed only for ``mask`` ``alone``)."""
    if not plan_masking(plan.preparation, plan.path):
        done = MaskDone((), (), 0, 0, None)
    else:
        try:
            done = mask_session(plan, _open_to_write(ctx, session, quiet=as_json))
        except OperationError as exc:  # the leaf moved: nothing written
            fail(str(exc))
    if as_json:
        if alone:
            print_json(done.to_json())
    elif not done.edit_ids:
        console.print("Nothing to mask: no tool output or argument in the part to compact is long enough.", markup=False)
    else:
        chars = sum(e.chars for e in done.edits)
        console.print(
            f"Masked {plural(len(done.edits), 'entry', 'entries')} ({chars:,} characters of tool output and arguments) "
            f"with context edits {sanitize(done.edit_ids[0])}…{sanitize(done.edit_ids[-1])}; every message stays in the file.\n"
            f"Context: ~{done.tokens_before:,} → ~{done.tokens_after:,} tokens.",
            markup=False,
            soft_wrap=True,
        )
    return done


SUMMARY_PREVIEW_LINES = 12
"""Lines of a new summary `compact` prints (all with --show-summary)."""


def _open_to_write(ctx: typer.Context, session: str, *, quiet: bool) -> Any:
    """Open the session for writing once there is something to write; says
    what opening did to the file (a migration rewrites an old file, keeping
    a backup)."""
    writer = open_session(ctx, session, read_only=False, quiet=True)
    if not quiet:
        for note in writer.notes:
            warn(note)
    return writer


def estimated_context_tokens(manager: Any) -> int:
    """The context at the manager's leaf in tokens, every message estimated
    from its text (pi's ``estimateTokens``, about 4 characters a token;
    what pi's ``estimateContextTokens`` gives without reported usage).
    ``compact`` reports the context before and after with it, so the two
    numbers are of one kind."""
    return sum(estimate_tokens(m) for m in manager.build_session_context()["messages"])


def _print_plan(path: Sequence[Mapping[str, Any]], prep: Any, before: int) -> None:
    kept_index = prep.first_kept_entry_index
    # the messages that stay: what the context holds from the first kept entry on
    items = prep.projection_entries
    kept = [m for item in items[kept_index:] for m in item["messages"]]
    kept_entry = items[kept_index]["sourceEntry"] if kept_index < len(items) else None
    path_pos = next((i for i, e in enumerate(path) if e is kept_entry), -1)
    kept_tokens = sum(estimate_tokens(m) for m in kept)
    summarized_tokens = sum(estimate_tokens(m) for m in prep.messages_to_summarize)
    prefix_tokens = sum(estimate_tokens(m) for m in prep.turn_prefix_messages)
    table = Table(show_header=False, show_edge=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    table.add_row("tokens before", f"~{before:,} (estimated from the messages' text)")
    recorded = _recorded_tokens_before(path, prep.tokens_before)
    if recorded is not None:
        table.add_row("pi's tokensBefore", f"{recorded} (pi's count, which the compaction entry records)")
    table.add_row(
        "to summarize",
        f"{plural(len(prep.messages_to_summarize), 'message')} (~{summarized_tokens:,} tokens): "
        f"{_describe_messages(prep.messages_to_summarize)}",
    )
    if prep.previous_summary:
        size = estimate_tokens({"role": "compactionSummary", "summary": prep.previous_summary})
        how = "merged in" if prep.messages_to_summarize or not prep.is_split_turn else "carried over as it is"
        table.add_row("previous summary", f"{how} (~{size:,} tokens)")
    if prep.is_split_turn:
        table.add_row(
            "split turn",
            f"yes: {plural(len(prep.turn_prefix_messages), 'message')} (~{prefix_tokens:,} tokens) of the current turn "
            "get their own summary",
        )
    table.add_row("first kept entry", f"{prep.first_kept_entry_id} (entry {path_pos + 1} of {len(path)} on the path)")
    table.add_row("kept verbatim", f"{plural(len(kept), 'message')} (~{kept_tokens:,} tokens)")
    table.add_row("tokens after", f"~{kept_tokens:,} + the summary (estimated alike)")
    lists = prep.summary_file_lists
    if lists["readFiles"]:
        table.add_row("read files", "\n".join(map(str, lists["readFiles"])))
    if lists["modifiedFiles"]:
        table.add_row("modified files", "\n".join(map(str, lists["modifiedFiles"])))
    console.print(table)
    console.print(
        "(dry run: nothing written; ~ marks estimates from the messages' text, about 4 characters a token, "
        "as pi estimates; tokens before and after are both such estimates)",
        style="dim",
    )


def _recorded_tokens_before(path: Sequence[Mapping[str, Any]], tokens: Any) -> str | None:
    """pi's ``tokensBefore`` (``tokens``, pi 1.6's
    ``estimateProjectedContextTokens`` of ``path``) saying where it comes
    from: the last reply's recorded usage plus estimates of the messages
    after it; None when pi trusts no recorded usage on the path (then it
    is an estimate like the others)."""
    from ..session.context import build_session_projection

    projected = estimate_projected_context_tokens(build_session_projection(path), path)
    if projected["lastUsageIndex"] is None:
        return None
    if not projected["trailingTokens"]:
        return f"{tokens:,}, the last reply's recorded usage"
    return (
        f"{tokens:,}: {projected['usageTokens']:,} from the last reply's recorded usage "
        f"+ ~{projected['trailingTokens']:,} estimated for the messages after it"
    )


# ---------------------------------------------------------------------------
# navigate


def navigate(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    entry_id: str = typer.Argument(..., help="The entry to move to."),
    summarize: bool = typer.Option(False, "--summarize", help="Summarize the branch being left."),
    instructions: Optional[str] = INSTRUCTIONS_OPTION,
    context_window: int = typer.Option(128000, "--window", min=1, help="Summarizer context window, in tokens."),
    provider: Optional[str] = PROVIDER_OPTION,
    model: Optional[str] = MODEL_OPTION,
    base_url: Optional[str] = BASE_URL_OPTION,
    timeout: Optional[float] = TIMEOUT_OPTION,
    max_retries: Optional[int] = MAX_RETRIES_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Move the session's position to another entry, optionally summarizing
    the branch left behind (stored as a branch_summary entry).

    The file is only opened for writing once the summary is ready, so a
    failed summary leaves it exactly as it was. A move to where the leaf
    already is (e.g. to the same entry twice) writes nothing; a branch with
    nothing to summarize gets no summary."""
    if summarize:
        check_summarizer_options(provider, timeout, max_retries)
    manager = open_session(ctx, session, read_only=True, quiet=as_json, notes=False)
    entry_id = entry_id_arg(manager, entry_id)
    try:
        plan = manager.plan_navigation(entry_id)
    except KeyError as exc:  # EntryNotFoundError: one line naming the session
        fail(str(exc))
    old_leaf = plan.old_leaf_id
    if plan.is_noop:
        if as_json:
            print_json({"oldLeafId": old_leaf, "newLeafId": old_leaf, "targetId": entry_id, "summaryEntry": None,
                        "editorText": None, "summarizedEntryIds": []})
        else:
            console.print(sanitize(f"Already at {entry_id}."), markup=False)
        return
    branch_entries = list(plan.entries_to_summarize)
    new_leaf = plan.new_leaf_id
    editor_text = plan.editor_text

    summary = None
    nothing_to_summarize = summarize and not plan.already_there and not plan.has_content_to_summarize
    if summarize and not nothing_to_summarize and not plan.already_there:
        branch_settings = settings_for(manager, as_json).branch_summary
        summarizer = make_summarizer(provider, model, base_url, as_json, timeout, max_retries)
        prep = prepare_branch_entries(plan.summarizable_entries, context_window - branch_settings.reserve_tokens)
        summary = run_summary(
            summarize_branch(
                plan,
                summarizer,
                reserve_tokens=branch_settings.reserve_tokens,
                context_window=context_window,
                custom_instructions=instructions,
            ),
            f"Summarizing {plural(len(prep.messages), 'message')} of the branch with {getattr(summarizer, 'name', 'summarizer')}…",
            as_json,
        )
    if nothing_to_summarize and not as_json:
        console.print(
            "Nothing to summarize: the branch left holds no messages"
            + (" (only the empty record of an earlier move)" if branch_entries and not plan.summarizable_entries else "")
            + "; no summary is stored.",
            markup=False,
            soft_wrap=True,
        )
    if plan.already_there:
        if as_json:
            unanswered_here = [u["toolCallId"] for u in unanswered_tool_calls(manager.build_session_context()["messages"])]
            print_json({"oldLeafId": old_leaf, "newLeafId": old_leaf, "targetId": entry_id, "summaryEntry": None,
                        "editorText": editor_text, "summarizedEntryIds": [], "unansweredToolCalls": unanswered_here})
        else:
            message = already_there_message(plan)
            console.print(sanitize(message[0].upper() + message[1:] + "."), markup=False, soft_wrap=True)
            _print_editor_text(editor_text)
        return
    summary_text = summary.summary if summary is not None else ""
    # The leaf of a session file is its last entry, so the move is persisted
    # as a branch_summary at the new position: with the summary, or empty
    # (pi leaves empty branch summaries out of the context) without one.
    manager = _open_to_write(ctx, session, quiet=as_json)
    seen = len(manager.notes)
    try:
        moved = navigate_session(manager, plan, summary)
    except (LeafMovedError, OperationError) as exc:  # the target is gone, or the leaf moved: nothing written
        fail(str(exc))
    summary_id = moved.summary_entry_id
    manager.save()
    if not as_json:
        for note in manager.notes[seen:]:
            warn(note)
    summary_entry = manager.get_entry(summary_id) if summary_id is not None else None
    # Navigating to an assistant message whose tool calls were answered on the
    # branch left behind leaves them unanswered; say so (the provider
    # adapters answer them with an explicit error result).
    unanswered = moved.unanswered_tool_call_ids
    if unanswered and not as_json:
        shown = unanswered[0] if len(unanswered) == 1 else None
        warn(
            (f"tool call {shown} at the new position has no result" if shown is not None else
             f"{plural(len(unanswered), 'tool call')} at the new position have no results (`--json` lists them)")
            + "; the provider adapters answer them with an error result"
        )
    if as_json:
        print_json(moved.to_json(leaf_id=manager.get_leaf_id(), summary_entry=summary_entry if summary_text else None))
        return
    where = sanitize(str(new_leaf)) if new_leaf is not None else "the start of the session"
    if summary_id is None:  # the leaf got there meanwhile (another writer): nothing written
        console.print(sanitize(f"The leaf got to {entry_id} meanwhile (another writer); nothing written."), markup=False, soft_wrap=True)
    elif summary_text:
        console.print(
            f"Moved the leaf from {sanitize(str(old_leaf))} to {where}, with a summary of the "
            f"{plural(len(branch_entries), 'entry', 'entries')} of the branch left (branch_summary entry {summary_id}):",
            markup=False,
            soft_wrap=True,
        )
        console.print(sanitize(summary_text), markup=False, soft_wrap=True)
    else:
        console.print(
            f"Moved the leaf from {sanitize(str(old_leaf))} to {where} (recorded as an empty branch_summary entry "
            f"{summary_id}, which pi leaves out of the context).",
            markup=False,
            soft_wrap=True,
        )
    _print_editor_text(editor_text)


def _print_editor_text(editor_text: str | None) -> None:
    if editor_text is not None:
        console.print("The target was a user message; its text (to edit and send again):", style="dim")
        console.print(sanitize(editor_text), markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``tokens``, ``compact`` and ``navigate`` to the app."""
    app.command()(tokens)
    app.command("compact")(compact_cmd)
    app.command()(navigate)
