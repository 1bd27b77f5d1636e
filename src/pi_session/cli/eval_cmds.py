"""``eval-compaction``: score a compaction with the probes of
:mod:`pi_session.compaction.probes` (**beyond pi**).

The summarizer options, the spinner and the error handling are those of
``pi-session compact`` (:mod:`.summarizing`), and the plan is
:func:`pi_session.operations.plan_compaction`, so both commands behave the
same.
"""

from __future__ import annotations

from typing import Any, Optional

import typer
from rich.table import Table

from ..compaction import CompactionCancelled, compact, prepare_compaction
from ..compaction.masking import plan_masking, with_mask_edits
from ..compaction.probes import (
    CompactionEvaluation,
    estimated_context_tokens,
    evaluate_compaction,
    evaluate_masking,
    probes_for_preparation,
    spread,
)
from ..operations import STRATEGIES, plan_compaction
from ..render.terminal import fit_cells, plural, sanitize
from .common import JSON_OPTION, SESSION_ARGUMENT, apply_leaf, console, fail, open_session, print_json
from . import summarizing as opts

_WHERE = {"summary": "summary", "kept": "kept msgs", None: "MISSING"}
_GROUPED = (
    ("identifier", "identifiers", "exact strings"),
    ("artifact", "artifact trail", "changed files with their change"),
)


def eval_compaction(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    keep_recent_tokens: Optional[int] = opts.KEEP_RECENT_OPTION,
    reserve_tokens: Optional[int] = opts.RESERVE_OPTION,
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Compact the path to this entry instead of the leaf."),
    instructions: Optional[str] = opts.INSTRUCTIONS_OPTION,
    show_summary: bool = typer.Option(False, "--show-summary", help="Print the summary after the report."),
    provider: Optional[str] = opts.PROVIDER_OPTION,
    model: Optional[str] = opts.MODEL_OPTION,
    base_url: Optional[str] = opts.BASE_URL_OPTION,
    timeout: Optional[float] = opts.TIMEOUT_OPTION,
    max_retries: Optional[int] = opts.MAX_RETRIES_OPTION,
    runs: Optional[int] = typer.Option(
        None,
        "--runs",
        min=1,
        max=20,
        help="Summarize this many times and report the spread (default: 3 for a model, 1 for the offline summarizer).",
    ),
    strategy: str = typer.Option(
        "summary",
        "--strategy",
        help="summary, mask (old tool outputs and arguments masked, no summary) or both (mask, then summarize): "
        "as `compact --strategy` would compact.",
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Compact a session in memory and check, with mechanical probes, what the
    summary kept: the first and latest requests, the user's constraints, the
    files modified and read, unresolved errors, decisions and the next step.
    The session file is opened read-only and never changed.

    Each probe is answered against the summary plus the kept messages; the
    report shows each probe, where it was found (or MISSING), the recall of
    each kind (exact identifiers, artifact trail, continuation, decisions),
    the summary's size in tokens and the compression ratio. Use --provider
    to score a model's summary the same way (three runs and their spread by
    default: --runs).
    """
    opts.check_token_options(keep_recent_tokens, reserve_tokens)
    manager = open_session(ctx, session, read_only=True, quiet=as_json)
    apply_leaf(manager, leaf)
    settings = opts.compaction_settings_for(manager, as_json, reserve_tokens, keep_recent_tokens)
    plan = plan_compaction(manager, settings)
    path, prep = list(plan.path), plan.preparation
    if prep is None or (not prep.messages_to_summarize and not prep.turn_prefix_messages):
        if as_json:
            print_json(None)
            return
        console.print(
            "Nothing to evaluate: no messages would be summarized (the session is empty, ends with a "
            "compaction, or fits in --keep-recent-tokens).",
            markup=False,
        )
        return
    if strategy not in STRATEGIES:
        fail(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    edits = plan_masking(prep, path) if strategy != "summary" else []
    if strategy == "mask":
        masked = evaluate_masking(path, prep, edits)
        if as_json:
            print_json(masked.to_json())
        else:
            print_report(masked, show_summary=False)
        return
    # both: the summarizer reads the masked context; the probes stay those of the unmasked zone
    probes = probes_for_preparation(prep)
    spath: list[Any] = with_mask_edits(path, edits) if strategy == "both" else path
    sprep = prepare_compaction(spath, settings) if strategy == "both" else prep
    if sprep is None:  # pragma: no cover - masking keeps every message, so the plan stays
        fail("nothing to summarize after masking")
    summarizer = opts.make_summarizer(provider, model, base_url, as_json, timeout, max_retries)
    name = str(getattr(summarizer, "name", "summarizer"))
    model_id = getattr(summarizer, "model", None)
    model_name = model_id if isinstance(model_id, str) else None
    count = runs if runs is not None else (1 if name == "extractive" else 3)
    every: list[CompactionEvaluation] = []
    for n in range(1, count + 1):
        try:
            result = opts.run_summary(
                compact(sprep, summarizer, custom_instructions=instructions),
                f"Summarizing {plural(len(sprep.messages_to_summarize) + len(sprep.turn_prefix_messages), 'message')} with {name}…"
                if n == 1
                else f"Summarizing again with {name} (run {n} of {count})…",
                as_json,
            )
        except CompactionCancelled:  # pragma: no cover - no hook here
            fail("compaction cancelled")
        every.append(
            evaluate_compaction(
                spath, sprep, result, summarizer=name, model=model_name, probes=probes, strategy=strategy,
                tokens_before=estimated_context_tokens(path),
            )
        )
    evaluation = every[0]
    if as_json:
        out = evaluation.to_json()
        if count > 1:
            out["spread"] = spread(every)
            out["runs"] = [
                {"answered": ev.answered, "summaryTokens": ev.summary_tokens, "recall": ev.to_json()["recall"]}
                for ev in every
            ]
        print_json(out)
        return
    print_report(evaluation, show_summary=show_summary)
    if count > 1:
        print_spread(spread(every))


def print_report(evaluation: CompactionEvaluation, *, show_summary: bool = False) -> None:
    """Print the human-readable report of ``evaluation`` to stdout."""
    ev = evaluation
    who = ev.summarizer + (f" ({ev.model})" if ev.model else "")
    total = len(ev.results)
    if ev.strategy == "mask":
        head = (
            f"Strategy: mask (no summary)\n"
            f"Masked {plural(ev.summarized_messages, 'entry', 'entries')} (tool outputs and arguments), kept every message "
            f"({ev.kept_messages:,}); context ~{ev.tokens_before:,} → ~{ev.tokens_after:,} tokens\n"
        )
    else:
        head = (
            f"Summarizer: {sanitize(who)}\n"
            f"Summarized {plural(ev.summarized_messages, 'message')}, kept {plural(ev.kept_messages, 'message')}"
            f"{' (split turn)' if ev.is_split_turn else ''}; context ~{ev.tokens_before:,} → ~{ev.tokens_after:,} tokens\n"
            f"Summary: ~{ev.summary_tokens:,} tokens (~{ev.summary_body_tokens:,} without the file lists)\n"
        )
    console.print(
        head + f"Compression: {ev.compression_ratio:.1f}× ({ev.strategy})\n"
        f"Probes answered: {ev.answered}/{total} ({ev.answered_by_summary} by the summary itself)\n"
        "Recall: "
        + ", ".join(f"{cat} {v['answered']}/{v['total']} ({v['recall']:.0%})" for cat, v in ev.recall().items()),
        markup=False,
        soft_wrap=True,
    )
    table = Table(show_edge=False, pad_edge=False, expand=False)
    table.add_column("found", no_wrap=True)
    table.add_column("probe", no_wrap=True)
    table.add_column("expected (from the summarized history)", overflow="fold")
    for kind, label, what in _GROUPED:  # one row each for the many identifier and artifact probes
        group = [r for r in ev.results if r.probe.kind == kind]
        if not group:
            continue
        lost = [r.probe.expected for r in group if not r.found]
        where = "summary" if all(r.where == "summary" for r in group) else ("kept" if not lost else None)
        text = f"{len(group) - len(lost)}/{len(group)} {what}" + (
            "; missing: " + ", ".join(x[:60] for x in lost[:5]) + (" ..." if len(lost) > 5 else "") if lost else ""
        )
        table.add_row(_WHERE[where], label, sanitize(text), style="bold red" if lost else None)
    for r in ev.results:
        if r.probe.kind in ("identifier", "artifact"):
            continue
        status = _WHERE.get(r.where, str(r.where))
        expected = r.probe.expected
        if r.probe.paths:
            expected = plural(len(r.probe.paths), 'path')
            if r.missing:
                expected += "; missing: " + ", ".join(r.missing[:5]) + (" ..." if len(r.missing) > 5 else "")
        else:
            expected = fit_cells(expected, 80)
            if not r.found:
                expected += f"  [best line holds {r.score:.0%} of the key tokens]"
        style = None if r.found else "bold red"
        table.add_row(status, r.probe.kind.replace("_", " "), sanitize(expected), style=style)
    console.print(table)
    if ev.strategy != "mask":
        if ev.contradictions:
            console.print(f"Contradictions: {len(ev.contradictions)}", style="bold red", markup=False)
            for c in ev.contradictions:
                console.print(
                    f"  {c.kind} in {c.section}: {sanitize(c.statement)[:160]}\n    history: {sanitize(c.evidence)[:160]}",
                    markup=False,
                    soft_wrap=True,
                )
        else:
            console.print("Contradictions: none", markup=False)
    if show_summary:
        console.print("")
        console.print(sanitize(ev.summary), markup=False, soft_wrap=True)


def print_spread(data: dict) -> None:
    """Print the spread of repeated runs (:func:`pi_session.compaction.probes.spread`)."""

    def span(d: dict, fmt: str) -> str:
        return f"{format(d['min'], fmt)}–{format(d['max'], fmt)} (mean {format(d['mean'], fmt)})"

    lines = [
        f"Spread over {data['runs']} runs:",
        f"  probes answered {span(data['answered'], '.0f')}",
        f"  summary tokens {span(data['summaryTokens'], ',.0f')}",
    ]
    lines += [f"  {cat} recall {span(v, '.0%')}" for cat, v in data["recall"].items()]
    console.print("\n".join(lines), markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``eval-compaction`` to the app."""
    app.command("eval-compaction")(eval_compaction)
