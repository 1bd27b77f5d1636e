"""The terminal view of ``usage``: a rich table of a report, and under a
terminal's table the spend per period as a bar chart (left out when stdout
is not a terminal: piped output is the plain table)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

__all__ = ["print_report", "print_blocks", "spend_chart"]

_TITLES = {"daily": "Date", "weekly": "Week", "monthly": "Month", "session": "Session"}
_BAR = "█"


def _n(value: int) -> str:
    return f"{value:,}"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _models(models: list[str]) -> str:
    return "\n".join(m.split("] ", 1)[-1] for m in models)


def print_report(console: Any, report: Any, *, breakdown: bool = False, compact: bool = False) -> None:
    """Print a :class:`pi_session.usage.UsageReport` as a table (a total
    row last; ``breakdown``: a row per model under each period;
    ``compact``: no model and cache columns), then, on a terminal, the
    spend chart (:func:`spend_chart`)."""
    from ..render.terminal import sanitize

    if not report.rows:
        console.print("No usage found.", markup=False)
        return
    table = Table(show_edge=False, pad_edge=False, expand=False, show_footer=True)
    first = _TITLES[report.kind]
    table.add_column(first, footer="Total", no_wrap=True)
    if report.by:
        table.add_column(report.by.capitalize(), no_wrap=False)
    if report.kind == "session":
        table.add_column("Project", no_wrap=False)
        table.add_column("Last activity", no_wrap=True)
    if not compact:
        table.add_column("Models")
    totals = report.totals
    table.add_column("Input", justify="right", footer=_n(totals["inputTokens"]))
    table.add_column("Output", justify="right", footer=_n(totals["outputTokens"]))
    if not compact:
        table.add_column("Cache write", justify="right", footer=_n(totals["cacheCreationTokens"]))
        table.add_column("Cache read", justify="right", footer=_n(totals["cacheReadTokens"]))
    table.add_column("Total tokens", justify="right", footer=_n(totals["totalTokens"]))
    table.add_column("Cost (USD)", justify="right", footer=_usd(totals["totalCost"]))
    for row in report.rows:
        cells = [sanitize(row.key if report.kind != "session" else row.key[:36])]
        if report.by:
            cells.append(sanitize(str(row.group)))
        if report.kind == "session":
            cells.append(sanitize(row.project or ""))
            cells.append(row.to_json("session")["lastActivity"] or "")
        if not compact:
            cells.append(sanitize(_models(row.models)))
        cells += [_n(row.input_tokens), _n(row.output_tokens)]
        if not compact:
            cells += [_n(row.cache_creation_tokens), _n(row.cache_read_tokens)]
        cells += [_n(row.total_tokens), _usd(row.cost)]
        table.add_row(*cells)
        if breakdown:
            for item in row.breakdowns_json():
                sub: list[Text | str] = [Text("  └ " + sanitize(item["modelName"].split("] ", 1)[-1]), style="dim")]
                sub += [""] * ((1 if report.by else 0) + (2 if report.kind == "session" else 0) + (0 if compact else 1))
                sub += [_n(item["inputTokens"]), _n(item["outputTokens"])]
                if not compact:
                    sub += [_n(item["cacheCreationTokens"]), _n(item["cacheReadTokens"])]
                total = item["inputTokens"] + item["outputTokens"] + item["cacheCreationTokens"] + item["cacheReadTokens"]
                sub += [_n(total), _usd(item["cost"])]
                table.add_row(*[c if isinstance(c, Text) else Text(c, style="dim") for c in sub])
    console.print(table)
    if console.is_terminal and report.kind != "session":
        chart = spend_chart(report, width=console.width)
        if chart is not None:
            console.print()
            console.print(chart)


def spend_chart(report: Any, *, width: int = 80) -> Text | None:
    """The cost of each period of a report as horizontal bars (one line
    per period, the longest bar the most expensive period), or None when
    nothing cost anything."""
    costs: dict[str, float] = {}
    for row in report.rows:
        costs[row.key] = costs.get(row.key, 0.0) + row.cost
    top = max(costs.values(), default=0.0)
    if top <= 0:
        return None
    label_width = max(len(k) for k in costs)
    bar_width = max(10, width - label_width - 16)
    out = Text()
    out.append("Spend per " + {"daily": "day", "weekly": "week", "monthly": "month"}.get(report.kind, "period") + "\n", style="bold")
    for key, cost in costs.items():
        length = round(cost / top * bar_width)
        out.append(f"{key:<{label_width}} ")
        out.append(_BAR * max(length, 1 if cost > 0 else 0), style="green")
        out.append(f" {_usd(cost)}\n")
    out.rstrip()
    return out


def print_blocks(console: Any, report: Any, *, compact: bool = False) -> None:
    """Print a :class:`pi_session.usage.BlocksReport`: one row per block
    (gaps dimmed, the active block marked)."""
    from ..render.terminal import sanitize

    if not report.blocks:
        console.print("No usage found.", markup=False)
        return
    table = Table(show_edge=False, pad_edge=False, expand=False)
    table.add_column("Block start (UTC)", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    if not compact:
        table.add_column("Models")
    table.add_column("Messages", justify="right")
    table.add_column("Total tokens", justify="right")
    table.add_column("Cost (USD)", justify="right")
    for b in report.blocks:
        data = b.to_json()
        start = data["startTime"][:16].replace("T", " ")
        if b.gap:
            cells = [start, "gap"] + ([""] if not compact else []) + ["", "", ""]
            table.add_row(*[Text(c, style="dim") for c in cells])
            continue
        status = "ACTIVE" if b.active else "done"
        cells = [start, status] + ([sanitize(_models(b.models))] if not compact else [])
        cells += [_n(b.entries), _n(b.total_tokens), _usd(b.cost)]
        table.add_row(*cells, style="bold" if b.active else None)
    console.print(table)
