"""Before/after table of two ``bench/run.py --json`` result files: every
row of both runs side by side, with the ratio of ratios.

Usage::

    python bench/compare.py BEFORE.json AFTER.json [--label-before X] [--label-after Y]

Prints a Markdown table: for every data set and operation of AFTER, the
before median, pi 1.6.0's median in that run and the ratio, then the same
for after. Rows only one file has show ``n/a`` on the other side. Times are
ms (medians of the runs' repetitions), memory MB and its multiple of the
file size.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import OP_LABELS  # noqa: E402  (bench/run.py: one name per operation)

PI = "pi-1.6.0"
LABELS = {
    **OP_LABELS,
    "peak_memory_context": "peak memory after open + context",
    "peak_memory": "peak memory (end)",
}


def _rows(path: Path) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[str, int]]:
    """(set, op) -> row, and set -> file bytes, of one result file."""
    data = json.loads(path.read_text())
    rows = {(r["set"], r["op"]): r for r in data["rows"]}
    sizes = {name: s["bytes"] for name, s in data.get("results", {}).items() if "bytes" in s}
    return rows, sizes


def _cell(row: dict[str, Any] | None, size: int | None) -> list[str]:
    """[ours, pi, ratio] of one row as text."""
    if row is None:
        return ["n/a", "n/a", "n/a"]
    ours, theirs = row.get("ours"), row.get("pi", {}).get(PI)

    def fmt(v: float | None) -> str:
        if v is None:
            return "n/a"
        if row["unit"] == "bytes":
            text = f"{v / 1e6:.0f} MB"
            return text + (f" ({v / size:.1f}x)" if size and v is ours else "")
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"

    ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "n/a"
    return [fmt(ours), fmt(theirs), ratio]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--label-before", default="before")
    ap.add_argument("--label-after", default="after")
    args = ap.parse_args(argv)
    before, before_sizes = _rows(args.before)
    after, after_sizes = _rows(args.after)
    b, a = args.label_before, args.label_after
    print(f"| data set | operation | {b} | pi 1.6 | ratio | {a} | pi 1.6 | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    previous = None
    for (name, op), row in after.items():
        if name == "-":
            continue
        cells = _cell(before.get((name, op)), before_sizes.get(name)) + _cell(row, after_sizes.get(name))
        print(f"| {name if name != previous else ''} | {LABELS.get(op, op)} | " + " | ".join(cells) + " |")
        previous = name
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
