"""The terminal view of ``usage``: a rich table of a report, and under a
terminal's table the spend per period as a bar chart (left out when stdout
is not a terminal: piped output is the plain table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from ..render.terminal import cells, sanitize, wrap_cells
from .common import NO_WIDTH

__all__ = ["print_report", "print_blocks", "spend_chart"]

_TITLES = {"daily": "Date", "weekly": "Week", "monthly": "Month", "session": "Session"}
_BAR = "█"


def _n(value: int) -> str:
    return f"{value:,}"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _models(models: list[str]) -> str:
    return "\n".join(m.split("] ", 1)[-1] for m in models)


_SEP = 3  # " │ " between two columns (no edge, no outer padding)
_WRAP_FLOOR = 10  # a wrapping column (models, project) is never narrower than this


@dataclass
class _Column:
    """One column of a usage table: its cells (one per row, the footer
    last when there is one), right-aligned numbers or text, and whether its
    text may wrap (models, projects, breakdown labels); a column that may
    not wrap is always as wide as its widest cell."""

    header: str
    cells: list[str]
    right: bool = False
    wrap: bool = False
    footer: str | None = None
    floor: int = 0  # a wrapping column's least width (0: _WRAP_FLOOR)

    def least(self) -> int:
        """The fewest cells this column takes: a number or a date whole, a
        header word whole."""
        header = max(cells(word) for word in self.header.split())
        values = [*self.cells, *([self.footer] if self.footer is not None else [])]
        widest = max([0, *(cells(line) for value in values for line in value.split("\n"))])
        if not self.wrap:
            return max(header, widest)
        return max(header, min(widest, self.floor or _WRAP_FLOOR))

    def natural(self) -> int:
        """The cells this column takes with nothing wrapped."""
        values = [self.header, *self.cells, *([self.footer] if self.footer is not None else [])]
        return max(cells(line) for value in values for line in value.split("\n"))


def _fit(columns: list[_Column], width: int | None) -> list[int] | None:
    """The width of each column so that the table takes at most ``width``
    cells, numbers whole: every column its least width, then what is left
    to the wrapping columns, in order, up to their natural width, then to
    the others (a header on one line). None
    when even the least widths do not fit."""
    least = [c.least() for c in columns]
    if width is None:
        return [c.natural() for c in columns]
    spare = width - sum(least) - _SEP * (len(columns) - 1)
    if spare < 0:
        return None
    widths = list(least)
    for wrapping in (True, False):  # model names on fewer lines first, then headers on one line
        for i, column in enumerate(columns):
            if column.wrap is wrapping:
                grow = min(spare, column.natural() - widths[i])
                widths[i] += grow
                spare -= grow
    return widths


def _table(columns: list[_Column], widths: list[int], styles: list[str | None], *, footer: bool) -> Table:
    """A rich table of ``columns`` at ``widths``, wrapping columns' text
    broken into lines (:func:`pi_session.render.terminal.wrap_cells`), row
    ``i`` in ``styles[i]``."""
    table = Table(show_edge=False, pad_edge=False, expand=False, show_footer=footer)
    for column, w in zip(columns, widths):
        table.add_column(column.header, footer=column.footer or "", justify="right" if column.right else "left",
                         width=w, no_wrap=False, overflow="fold")
    for i, style in enumerate(styles):
        row = []
        for column, w in zip(columns, widths):
            value = column.cells[i]
            if column.wrap:
                value = "\n".join(part for line in value.split("\n") for part in wrap_cells(line, w))
            row.append(Text(value, style=style or ""))
        table.add_row(*row)
    return table


def _print_fitted(console: Any, layouts: list[tuple[list[_Column], str]], styles: list[str | None], *, footer: bool) -> None:
    """Print the first of ``layouts`` (columns, the note saying what it
    leaves out, "" for the first) whose numbers fit the console whole, or
    the last; its note as one dim line under the table."""
    width = None if console.width >= NO_WIDTH else console.width
    for columns, note in layouts:
        widths = _fit(columns, width)
        if widths is not None:
            break
    else:  # narrower than any layout: numbers whole all the same, the terminal folds the lines
        columns, note = layouts[-1]
        widths = [c.least() for c in columns]
    table = _table(columns, widths, styles, footer=footer)
    table_width = sum(widths) + _SEP * (len(widths) - 1)
    if table_width <= console.width:
        console.print(table)
    else:
        from rich.segment import Segments

        lines = console.render_lines(table, console.options.update_width(table_width), new_lines=True)
        console.print(Segments([segment for line in lines for segment in line]), crop=False, soft_wrap=True)
    if note:
        console.print(Text(note, style="dim"))


_NOTE = "Narrow terminal: {} left out (--json has every column)."


def print_report(console: Any, report: Any, *, breakdown: bool = False, compact: bool = False) -> None:
    """Print a :class:`pi_session.usage.UsageReport` as a table (a total
    row last; ``breakdown``: a row per model under each period;
    ``compact``: no model and cache columns), then, on a terminal, the
    spend chart (:func:`spend_chart`).

    Numbers are never cut: when the table is wider than the console, the
    model names wrap, then (sessions) ids shrink to their unique prefix and
    times to dates, then the model and cache columns go (as ``compact``),
    then input and output; a dim line under the table names what was
    left out."""
    from ..render.terminal import unique_prefixes

    if not report.rows:
        console.print("No usage found.", markup=False)
        return
    totals = report.totals
    keys: list[str] = []
    groups: list[str] = []
    projects: list[str] = []
    lasts: list[str] = []
    models: list[str] = []
    numbers: dict[str, list[str]] = {name: [] for name in ("input", "output", "write", "read", "total", "cost")}
    styles: list[str | None] = []
    subrow: list[bool] = []

    def add(key: str, group: str, project: str, last: str, model: str, values: tuple[str, ...], style: str | None, sub: bool) -> None:
        keys.append(key)
        groups.append(group)
        projects.append(project)
        lasts.append(last)
        models.append(model)
        for name, value in zip(numbers, values):
            numbers[name].append(value)
        styles.append(style)
        subrow.append(sub)

    for row in report.rows:
        add(sanitize(row.key if report.kind != "session" else row.key[:36]), sanitize(str(row.group)) if report.by else "",
            sanitize(row.project or "") if report.kind == "session" else "",
            (row.to_json("session")["lastActivity"] or "") if report.kind == "session" else "",
            sanitize(_models(row.models)),
            (_n(row.input_tokens), _n(row.output_tokens), _n(row.cache_creation_tokens), _n(row.cache_read_tokens),
             _n(row.total_tokens), _usd(row.cost)), None, False)
        if breakdown:
            for item in row.breakdowns_json():
                total = item["inputTokens"] + item["outputTokens"] + item["cacheCreationTokens"] + item["cacheReadTokens"]
                add("  └ " + sanitize(item["modelName"].split("] ", 1)[-1]), "", "", "", "",
                    (_n(item["inputTokens"]), _n(item["outputTokens"]), _n(item["cacheCreationTokens"]),
                     _n(item["cacheReadTokens"]), _n(total), _usd(item["cost"])), "dim", True)

    def key_floor(shown: list[str]) -> int:
        return max([cells("Total"), *(cells(k) for k, sub in zip(shown, subrow) if not sub)])

    short_keys, short_lasts = keys, lasts
    if report.kind == "session":
        prefix = unique_prefixes([row.key[:36] for row in report.rows])
        short_keys = [k if sub else prefix.get(k, k) for k, sub in zip(keys, subrow)]
        short_lasts = [last[:10] for last in lasts]

    def columns(shown_keys: list[str], shown_lasts: list[str], *, with_models: bool, with_cache: bool, with_io: bool) -> list[_Column]:
        out = [_Column(_TITLES[report.kind], shown_keys, wrap=breakdown, footer="Total", floor=key_floor(shown_keys))]
        if report.by:
            out.append(_Column(report.by.capitalize(), groups, wrap=True))
        if report.kind == "session":
            if report.by != "project":  # else the column above names it
                out.append(_Column("Project", projects, wrap=True))
            out.append(_Column("Last activity", shown_lasts))
        if with_models and report.by != "model":
            out.append(_Column("Models", models, wrap=True))
        if with_io:
            out.append(_Column("Input", numbers["input"], right=True, footer=_n(totals["inputTokens"])))
            out.append(_Column("Output", numbers["output"], right=True, footer=_n(totals["outputTokens"])))
        if with_cache:
            out.append(_Column("Cache write", numbers["write"], right=True, footer=_n(totals["cacheCreationTokens"])))
            out.append(_Column("Cache read", numbers["read"], right=True, footer=_n(totals["cacheReadTokens"])))
        out.append(_Column("Total tokens", numbers["total"], right=True, footer=_n(totals["totalTokens"])))
        out.append(_Column("Cost (USD)", numbers["cost"], right=True, footer=_usd(totals["totalCost"])))
        return out

    full = not compact
    layouts = [(columns(keys, lasts, with_models=full, with_cache=full, with_io=True), "")]
    if report.kind == "session":
        layouts.append((columns(short_keys, short_lasts, with_models=full, with_cache=full, with_io=True), ""))
    if full:
        layouts.append((columns(short_keys, short_lasts, with_models=False, with_cache=False, with_io=True),
                        _NOTE.format("model and cache columns")))
    layouts.append((columns(short_keys, short_lasts, with_models=False, with_cache=False, with_io=False),
                    _NOTE.format("input, output" + (", model and cache columns" if full else " columns"))))
    _print_fitted(console, layouts, styles, footer=True)
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
    (gaps dimmed, the active block marked). Numbers are never cut: on a
    narrow console the model names wrap, then the model column goes (as
    ``compact``), then the message counts, named in a dim line under the
    table."""
    if not report.blocks:
        console.print("No usage found.", markup=False)
        return
    starts: list[str] = []
    statuses: list[str] = []
    models: list[str] = []
    counts: list[str] = []
    tokens: list[str] = []
    costs: list[str] = []
    styles: list[str | None] = []
    for b in report.blocks:
        starts.append(b.to_json()["startTime"][:16].replace("T", " "))
        if b.gap:
            values = ["gap", "", "", "", ""]
            styles.append("dim")
        else:
            values = ["ACTIVE" if b.active else "done", sanitize(_models(b.models)), _n(b.entries), _n(b.total_tokens), _usd(b.cost)]
            styles.append("bold" if b.active else None)
        for column, value in zip((statuses, models, counts, tokens, costs), values):
            column.append(value)

    def columns(*, with_models: bool, with_counts: bool) -> list[_Column]:
        out = [_Column("Block start (UTC)", starts), _Column("Status", statuses)]
        if with_models:
            out.append(_Column("Models", models, wrap=True))
        if with_counts:
            out.append(_Column("Messages", counts, right=True))
        return out + [_Column("Total tokens", tokens, right=True), _Column("Cost (USD)", costs, right=True)]

    layouts = [(columns(with_models=not compact, with_counts=True), "")]
    if not compact:
        layouts.append((columns(with_models=False, with_counts=True), _NOTE.format("model column")))
    layouts.append((columns(with_models=False, with_counts=False),
                    _NOTE.format("message count" + (" and model columns" if not compact else " column"))))
    _print_fitted(console, layouts, styles, footer=False)
