"""What ``pi-session info SESSION [--json]`` shows of an opened session:
its JSON (:func:`info_json`) and its ``key  value`` rows (:func:`info_rows`),
shared by the typer command (:func:`pi_session.cli.session_cmds.info`) and
the start-up fast path (:mod:`pi_session.cli.info_fast`), so that the two
print the same bytes. Loads neither typer nor rich.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

    from ..session.lean import LeanSizes
    from ..session.stats import MessageStats, SessionStats

__all__ = ["FIELD_FLOOR", "INFO_LABELS", "info_json", "info_rows", "lean_sizes", "percent"]

INFO_LABELS = 10
"""How many labels ``info`` lists (``--json`` gives them all)."""

FIELD_FLOOR = 20
"""The fewest terminal cells ``info`` wraps a value to, however narrow the terminal."""


def lean_sizes(manager: Any) -> LeanSizes | None:
    """:func:`pi_session.session.lean.measure_file` of a manager's session (a file,
    or a database session's lines) at its leaf, or None (in memory, or
    unreadable)."""
    from ..session.lean import measure_file, measure_lines
    from ..stores.base import StoreError

    path = manager.get_session_file()
    try:
        if path is not None:
            return measure_file(path, manager.get_leaf_id())
        store = manager.get_store()
        if store is None:
            return None
        return measure_lines(store.read_lines(manager.get_session_id()), manager.get_leaf_id())
    except (OSError, StoreError):
        return None


def info_json(manager: Any) -> tuple[SessionStats, LeanSizes | None, dict[str, Any]]:
    """The statistics of an opened :class:`pi_session.SessionManager`
    (:meth:`~pi_session.SessionManager.stats`), its payload sizes
    (:func:`lean_sizes`) and what ``info --json`` prints: the statistics'
    JSON with a ``lean`` object when the sizes could be measured."""
    stats = manager.stats()
    data = stats.to_json()
    lean = lean_sizes(manager)
    if lean is not None:
        data["lean"] = lean.to_json()
    return stats, lean, data


def percent(part: int, whole: int) -> str:
    """``part`` as a whole percentage of ``whole`` (``"0%"`` when ``whole`` is 0)."""
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def usage_rows(m: MessageStats) -> list[tuple[str, str]]:
    """The rows of pi's ``/session`` in ``info``: messages, tools, tokens
    (input, cache read, cache write, output, as pi's usage fields and the
    HTML viewer's header name them: :meth:`UsageTotals.describe
    <pi_session.session.stats.UsageTotals.describe>`) and cost
    (:meth:`~pi_session.session.stats.UsageTotals.describe_cost`), over every branch."""
    from ..core.text import plural

    u = m.usage
    rows = [
        ("messages", f"{m.messages:,} (user {m.user:,}, assistant {m.assistant:,})"),
        ("tools", f"{plural(m.tool_calls, 'call')}, {plural(m.tool_results, 'result')}"),
    ]
    rows.append(("tokens", u.describe()))
    cost = u.describe_cost(3)
    if cost is not None:
        rows.append(("cost", cost))
    return rows


def lean_rows(lean: LeanSizes) -> list[tuple[str, str]]:
    """``info``'s rows on payload bytes, abandoned-branch bytes and slimmed payloads."""
    from ..core.text import plural
    from ..session.lean import human_size

    rows = [
        ("payload", f"{human_size(lean.payload)} ({percent(lean.payload, lean.total)}) in images and tool outputs over 16 KB"
         + (" (`pi-session slim` moves out those outside the model context)" if lean.payload else "")),
        ("abandoned", f"{human_size(lean.abandoned)} ({percent(lean.abandoned, lean.total)}) in branches off the path to the leaf"
         + (" (`pi-session prune` archives them)" if lean.abandoned else "")),
    ]
    if lean.slimmed:
        rows.append(("slimmed", f"{plural(lean.slimmed, 'payload')} in blobs (`pi-session restore` puts them back)"))
    return rows


def info_rows(stats: SessionStats, lean: LeanSizes | None, data: dict[str, Any]) -> list[tuple[str, str]]:
    """``info``'s terminal rows, ``(key, value)`` in the order shown, from
    :func:`info_json`'s three parts: the header fields that are set, the
    entry types, pi's ``/session`` counts (:func:`usage_rows`), up to
    :data:`INFO_LABELS` labels, the payload sizes and the problems. Values
    are not yet sanitized for a terminal. Pure."""
    from ..core.text import field_text
    from ..entries.records import CURRENT_SESSION_VERSION

    rows: list[tuple[str, str]] = []
    for key in ("path", "id", "version", "cwd", "created", "parentSession", "name", "sizeBytes", "entries", "leafId", "branchLength"):
        if data[key] is not None:
            value = str(data[key])
            if key == "version" and data[key] != CURRENT_SESSION_VERSION:
                value += f" (read as version {CURRENT_SESSION_VERSION}; `pi-session migrate` or any write rewrites the file, keeping a backup)"
            rows.append((key, value))
    rows.append(("types", ", ".join(f"{k} {v}" for k, v in sorted(stats.counts.items()))))
    rows.extend(usage_rows(stats.messages))
    if data["labels"]:
        shown = list(data["labels"].items())[:INFO_LABELS]
        more = len(data["labels"]) - len(shown)
        rows.append(("labels", ", ".join(f"{k}={' '.join(field_text(v).split())}" for k, v in shown) + (f", … {more:,} more (--json lists all)" if more else "")))
    if lean is not None:
        rows.extend(lean_rows(lean))
    rows.append(("problems", f"{len(stats.problems):,} found reading the file (`pi-session check` also checks each entry's fields)"))
    return rows
