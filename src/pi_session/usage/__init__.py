"""Usage and cost reports across every session of a store (**beyond pi**:
pi shows one session's cost): tokens and US dollars per day, week, month,
session or 5-hour billing block, with the numbers and the ``--json`` shape
of ccusage's ``ccusage pi daily|monthly|session`` on the same sessions.

- :func:`load_usage` reads every session's counted assistant messages
  (:mod:`.extract` says which count and how), from a persistent summary for
  session files (:mod:`.cache`: only appended bytes are read);
- :func:`usage_report` and :func:`blocks` sum them (:mod:`.report`,
  :mod:`.blocks`); :func:`report_for` does both, answering a day, week or
  month report over session files from the root's digest when no file
  changed (:mod:`.digest`: every file only ``stat``-ed); each
  report's ``to_json()`` is ccusage's shape.

Every assistant message is counted once, whichever branch of the tree it is
on (and a message a fork copied into another session, once). Messages
without a recorded cost are priced offline (:mod:`.pricing`); models that
cannot be priced are listed (``missing_pricing``), not counted as $0
silently.

Example::

    from pi_session.usage import load_usage, usage_report
    report = usage_report(load_usage("~/.pi/agent/sessions"), "daily", timezone="Europe/Berlin")
    print(report.to_json()["totals"]["totalCost"])
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from typing import Any

    from .blocks import BLOCK_HOURS, Block, BlocksReport, blocks
    from .report import BY_KEYS, KINDS, SessionUsage, UsageData, UsageReport, UsageRow, model_label, normalize_date, usage_report

_LAZY = {
    "BLOCK_HOURS": "blocks", "Block": "blocks", "BlocksReport": "blocks", "blocks": "blocks",
    "BY_KEYS": "report", "KINDS": "report", "SessionUsage": "report", "UsageData": "report", "UsageReport": "report",
    "UsageRow": "report", "model_label": "report", "normalize_date": "report", "usage_report": "report",
}


def __getattr__(name: str) -> Any:
    """The names of :mod:`.blocks` and :mod:`.report`, imported on first
    use (PEP 562): a warm report imports :mod:`.digest` and :mod:`.days`
    alone."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "BLOCK_HOURS",
    "BY_KEYS",
    "KINDS",
    "Block",
    "BlocksReport",
    "SessionUsage",
    "UsageData",
    "UsageReport",
    "UsageRow",
    "blocks",
    "load_usage",
    "model_label",
    "normalize_date",
    "report_for",
    "usage_report",
]


def _files_usage(root: str, cache: bool) -> UsageData:
    from .cache import UsageCache
    from .report import SessionUsage, UsageData

    if not os.path.isdir(root):
        if os.path.exists(root):
            raise NotADirectoryError(f"{root}: not a directory (expected a sessions root or one session directory)")
        raise FileNotFoundError(f"{root}: no such sessions directory")

    summary = UsageCache(root, persist=cache)
    files = summary.update()
    data = UsageData(read_bytes=summary.read_bytes)
    for path, entry in files.items():
        pending = summary.pending.get(path)
        agent = entry.agent or "pi"
        if pending:
            data.sessions.append(SessionUsage.from_rows(
                entry.session_id, entry.project, agent, path, summary.rows_of(path) + pending, order=os.path.basename(path), parent=entry.parent))
        else:
            data.sessions.append(SessionUsage(
                entry.session_id, entry.project, agent, path, entry.groups, _rows_of(summary, path), os.path.basename(path), entry.parent))
        if entry.problems:
            data.problems.extend(f"{path}:{line}: {message}" for line, message in entry.problems)
    data.problems.extend(summary.file_problems())
    if cache:
        from .digest import update_digest

        data.merged = update_digest(summary, files).merged
    return data


def _rows_of(summary: Any, path: str) -> Any:
    return lambda: summary.rows_of(path)


def _store_usage(store: Any) -> UsageData:
    """Every session of a database store, read whole (the store is the
    index: no cache)."""
    from ..core.paths import encode_cwd
    from .cache import scan_bytes
    from .report import SessionUsage, UsageData

    data = UsageData()
    for info in store.list(with_text=False):
        sid = info.get("id")
        if not isinstance(sid, str):
            continue
        try:
            raw = b"".join(store.read_lines(sid))
        except Exception:
            continue
        data.read_bytes += len(raw)
        scan = scan_bytes(raw)
        cwd = scan.cwd or info.get("cwd") or ""
        project = encode_cwd(cwd) if cwd else "unknown"
        created = info.get("created")
        order = str(created) if created is not None else sid
        data.sessions.append(SessionUsage.from_rows(sid, project, scan.agent or "pi", store.locator(sid), scan.rows, order=order, parent=scan.parent))
        data.problems.extend(f"{store.locator(sid)}:{line}: {message}" for line, message in scan.problems)
    return data


def load_usage(store_or_dir: Any = None, *, cache: bool = True) -> UsageData:
    """Read the usage of every session of a store.

    Args:
        store_or_dir: a :class:`pi_session.stores.SessionStore` (files,
            SQLite, PostgreSQL), a sessions root or one session directory
            (a path), or None (``~/.pi/agent/sessions``).
        cache: (session files) keep and use the persistent summary in
            pi-session's cache directory (``$XDG_CACHE_HOME/pi-session/usage``);
            False reads every file and writes nothing.

    Returns:
        :class:`UsageData`: the sessions' counted messages, damaged lines
        as ``FILE:LINE: message`` (skipped) and the bytes read.

    Raises:
        pi_session.stores.StoreError: a database store cannot be read.
        FileNotFoundError, NotADirectoryError: the sessions root is missing
            or is not a directory.
    """
    from pathlib import Path

    from ..core.paths import sessions_dir
    from ..stores import SessionStore, StoreCapability

    if isinstance(store_or_dir, SessionStore):
        if not store_or_dir.can(StoreCapability.FILES):
            return _store_usage(store_or_dir)
        return _files_usage(os.fspath(store_or_dir.files_root), cache)
    root_path = sessions_dir() if store_or_dir is None else Path(os.path.expanduser(os.fspath(store_or_dir)))
    return _files_usage(os.path.abspath(root_path), cache)


def _files_root(store_or_dir: Any) -> str | None:
    """The absolute sessions root :func:`load_usage` reads files from, or
    None for a database store."""
    from pathlib import Path

    from ..core.paths import sessions_dir
    from ..stores import SessionStore, StoreCapability

    if isinstance(store_or_dir, SessionStore):
        if not store_or_dir.can(StoreCapability.FILES):
            return None
        return os.path.abspath(os.fspath(store_or_dir.files_root))
    root_path = sessions_dir() if store_or_dir is None else Path(os.path.expanduser(os.fspath(store_or_dir)))
    return os.path.abspath(root_path)


def report_for(
    store_or_dir: Any = None,
    kind: str = "daily",
    *,
    timezone: str | None = None,
    since: str | None = None,
    until: str | None = None,
    by: str | None = None,
    last: int | None = None,
) -> UsageReport:
    """``usage_report(load_usage(store_or_dir), kind, ...)``, the same
    result, answered from the sessions root's digest
    (:mod:`pi_session.usage.digest`) when ``kind`` is ``daily``, ``weekly``
    or ``monthly``, the store holds files and none of them changed since
    the digest was written (each is only ``stat``-ed).

    Args:
        store_or_dir: as :func:`load_usage`.
        kind, timezone, since, until, by, last: as :func:`usage_report`.

    Returns:
        :class:`UsageReport`.

    Raises:
        ValueError: as :func:`usage_report`.
        pi_session.stores.StoreError: a database store cannot be read.
        FileNotFoundError, NotADirectoryError: as :func:`load_usage`.
    """
    if kind in ("daily", "weekly", "monthly"):
        root = _files_root(store_or_dir)
        if root is not None:
            from .digest import fresh_digest
            from .report import report_of_groups

            digest = fresh_digest(root)
            if digest is not None:
                return report_of_groups(digest.merged, digest.problems, kind, timezone=timezone, since=since, until=until, by=by, last=last)
    from .report import usage_report

    return usage_report(load_usage(store_or_dir), kind, timezone=timezone, since=since, until=until, by=by, last=last)
