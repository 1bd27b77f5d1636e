"""``usage``: tokens and cost across every session (:mod:`pi_session.usage`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import typer

from .common import JSON_OPTION, STORE_OPTION, active_store, console, fail, print_json, store_url, warn

if TYPE_CHECKING:
    from ..stores import SessionStore

_KIND_HELP = "daily, weekly, monthly, session or blocks (5-hour billing windows)."


def usage(
    ctx: typer.Context,
    kind: str = typer.Argument("daily", metavar="KIND", help=_KIND_HELP),
    since: Optional[str] = typer.Option(None, "--since", metavar="DATE", help="First day counted (YYYY-MM-DD or YYYYMMDD)."),
    until: Optional[str] = typer.Option(None, "--until", metavar="DATE", help="Last day counted (YYYY-MM-DD or YYYYMMDD)."),
    timezone: Optional[str] = typer.Option(None, "--timezone", "-z", metavar="ZONE", help="IANA time zone of the days (default: the machine's)."),
    breakdown: bool = typer.Option(False, "--breakdown", "-b", help="A row per model under each period."),
    by: Optional[str] = typer.Option(None, "--by", metavar="project|model|agent", help="Split each period by project, model or agent."),
    last: Optional[int] = typer.Option(None, "--last", metavar="N", help="Only the last N periods (sessions, blocks)."),
    compact: bool = typer.Option(False, "--compact", help="Fewer columns, for narrow terminals."),
    as_json: bool = JSON_OPTION,
    store_option: Optional[str] = STORE_OPTION,
) -> None:
    """Tokens and cost per day, week, month, session or 5-hour billing block,
    across every session of the store, as ccusage reports them
    (``--json`` has ccusage's shape). Messages without a recorded cost
    (imported sessions) are priced offline; models that cannot be priced are
    listed under the table. Session files are summarised in the cache
    directory ($XDG_CACHE_HOME/pi-session), only what changed since the last
    report is read."""
    from ..stores import StoreError
    from ..usage import KINDS, blocks, load_usage
    from ..usage import report_for

    if kind not in KINDS:
        fail(f"{kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "blocks" and (by or breakdown):
        fail("blocks: --by and --breakdown apply to daily, weekly, monthly and session reports")
    store = active_store(store_url(ctx, store_option))
    _check_root(store)
    try:
        if kind == "blocks":
            report: Any = blocks(load_usage(store), timezone=timezone, since=since, until=until, last=last)
        else:
            report = report_for(store, kind, timezone=timezone, since=since, until=until, by=by, last=last)
    except (ValueError, StoreError) as exc:
        fail(str(exc))
    for problem in report.problems:
        warn(problem)
    if as_json:
        print_json(report.to_json())
        return
    from .usage_view import print_blocks, print_report

    if kind == "blocks":
        print_blocks(console, report, compact=compact)
    else:
        print_report(console, report, breakdown=breakdown, compact=compact)
    if report.missing_pricing:
        console.print(f"No price known for {', '.join(report.missing_pricing)}: counted as $0.", style="yellow", markup=False, soft_wrap=True)
    if report.estimated:
        console.print(f"Priced offline from the tokens (no cost recorded): {', '.join(report.estimated)}.", style="dim", markup=False, soft_wrap=True)


def _check_root(store: SessionStore | None) -> None:
    """Fail with one line when the session files' directory does not exist
    (a typo in --store would otherwise look like an empty store)."""
    import os

    from ..core.paths import sessions_dir

    from ..stores import StoreCapability

    if store is not None and not store.can(StoreCapability.FILES):
        return
    root = sessions_dir() if store is None else store.files_root
    if not os.path.isdir(root):
        fail(f"{root}: no such sessions directory")


def register(app: typer.Typer) -> None:
    """Add ``usage`` to ``app``."""
    app.command()(usage)
