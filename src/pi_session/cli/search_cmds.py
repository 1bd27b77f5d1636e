"""``search``: full-text search across sessions (:mod:`pi_session.search`)."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

import typer
from rich.text import Text

from .common import JSON_OPTION, STORE_OPTION, active_store, console, err_console, fail, print_json, set_store_url, store_url, warn


def _progress() -> Any:
    """A rich progress bar on stderr while the index catches up (only on a
    terminal; quiet when piped), as ``(context manager, callback)``."""
    import contextlib

    if not err_console.is_terminal:
        return contextlib.nullcontext(), None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(TextColumn("indexing sessions"), BarColumn(), MofNCompleteColumn(), console=err_console, transient=True)
    task = bar.add_task("index", total=None)

    def on_progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, on_progress


def search(
    query: str = typer.Argument(..., help='The query: words, "a phrase", prefix*, -word, role:, tool:, file:, project:, model:, after:, before:, session:, re:.'),
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Only this project's sessions (default: every project)."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=100_000, help="At most this many hits (1 to 100,000)."),
    include_edited: bool = typer.Option(False, "--include-edited", help="Also text a context edit replaced or omitted (marked)."),
    thinking: bool = typer.Option(False, "--thinking", help="Also search assistants' thinking."),
    open_: Optional[int] = typer.Option(None, "--open", metavar="N", help="Open hit N (1 = the first): the browser at the entry on a terminal, else its context."),
    as_json: bool = JSON_OPTION,
    store_option: Optional[str] = STORE_OPTION,
) -> None:
    """Search every session (all projects; --cwd for one) and print ranked
    hits: session, entry, time, role, project, name and a snippet with
    the match marked, with the commands that open each hit.

    Words must all match; "exact phrase", prefix*, -word; filters
    role:user|assistant|tool, tool:bash, file:PATH, project:TEXT,
    model:TEXT, after:DATE, before:DATE, session:ID-PREFIX, re:PATTERN.
    Session files are indexed in the cache directory
    ($XDG_CACHE_HOME/pi-session), only what changed since the last search."""
    from ..search import QueryError, open_commands, parse_query
    from ..search import search as run_search
    from ..stores import StoreError

    if store_option:
        set_store_url(store_option)
    if limit < 1:
        fail("--limit must be at least 1")
    if cwd is not None and not cwd.strip():
        fail("--cwd: the directory is empty (leave the option out to search every project)")
    if open_ is not None and as_json:
        fail("--open shows one hit and --json prints the hits: give one of them")
    def query_failure(exc: QueryError) -> None:
        shown, at = query_window(query, exc.position)
        fail(f"{exc}\n  {shown}\n  {caret_pad(shown[:at])}^")

    try:
        parsed = parse_query(query)
    except QueryError as exc:
        query_failure(exc)
    store = active_store()
    _check_sessions_dir(store)
    bar, on_progress = _progress()
    try:
        with bar:
            result = run_search(
                store, parsed, cwd=os.path.abspath(os.path.expanduser(cwd)) if cwd else None, limit=max(limit, open_ or 0),
                include_edited=include_edited, thinking=thinking, on_progress=on_progress,
            )
    except QueryError as exc:  # a re: filter out of time
        query_failure(exc)
    except StoreError as exc:
        fail(str(exc))
    for line in result.warnings:
        warn(line)
    from ..stores.file import FileStore
    from ..stores.sqlite import SQLiteStore

    # a SQLite store by its absolute path, so the commands work from any
    # directory; another database as the user named it (with credentials)
    url = None if store is None or isinstance(store, FileStore) else store.url if isinstance(store, SQLiteStore) else store_url()
    hits = result.hits
    if open_ is not None:
        if not 1 <= open_ <= len(hits):
            fail(f"--open {open_}: {len(hits):,} hit{'' if len(hits) == 1 else 's'} (--open counts from 1)")
        _open_hit(hits[open_ - 1], url)
        return
    hits = hits[:limit]
    if as_json:  # the exit status as grep's and rg's: 1 when nothing matched
        print_json({"query": query, "hits": [dict(h.to_json(), open=open_commands(h, store_url=url)) for h in hits]})
        if not hits:
            raise typer.Exit(1)
        return
    if not hits:
        err_console.print("no hits", style="dim", markup=False)
        raise typer.Exit(1)
    from ..search import snippet_text
    from ..terminal import sanitize

    for n, hit in enumerate(hits, 1):
        head = Text(f"{n:>2}. ", style="bold")
        head.append(sanitize(hit.timestamp or "-"), style="dim")
        head.append("  ")
        head.append(sanitize(hit.kind if hit.kind == hit.role else f"{hit.role}/{hit.kind}"), style="cyan")
        if hit.in_thinking:
            head.append(" (thinking)", style="cyan")
        if hit.tool:
            head.append(f" {sanitize(hit.tool)}", style="yellow")
        if hit.edited:
            head.append(" [edited by a context edit]", style="bold red")
        head.append("  ")
        head.append(sanitize(hit.session_name or hit.session_id[:8]), style="bold")
        head.append(f"  {sanitize(hit.project)}", style="dim")
        console.print(head, soft_wrap=True)
        console.print(Text("    ") + snippet_text(hit.snippet), soft_wrap=True)
        console.print(Text("    " + sanitize(open_commands(hit, store_url=url)[0]), style="dim"), soft_wrap=True)


QUERY_SHOWN = 60
"""A query error shows at most this many characters of the query on each
side of the error (a longer query is cut there, marked ``…``)."""


def query_window(query: str, position: int, around: int = QUERY_SHOWN) -> tuple[str, int]:
    """The part of ``query`` a query error shows, and where the error is in
    it: all of it when short, else ``around`` characters on each side of
    ``position`` (0-based), each cut end marked ``…``.

    Returns:
        ``(text, index)``: the text to show and the error's index in it.
    """
    start, end = max(0, position - around), position + around
    shown = ("…" if start else "") + query[start:end] + ("…" if end < len(query) else "")
    return shown, position - start + (1 if start else 0)


def caret_pad(text: str) -> str:
    """The blanks that put a caret under the character after ``text`` on
    a terminal, as the query is echoed (:func:`~pi_session.terminal.sanitize`,
    which shows a control character as a visible escape such as ``\x07``):
    as many cells as that takes (a wide character, such as CJK, takes two;
    a tab stays a tab)."""
    from rich.cells import cell_len

    from ..terminal import sanitize

    return "".join(c if c == "\t" else " " * cell_len(c) for c in sanitize(text))


def _check_sessions_dir(store: Any) -> None:
    """Fail with one line when the session files' directory does not
    exist (a typo in --store would otherwise look like an empty store, and
    leave an index of nothing in the cache)."""
    from ..paths import sessions_dir
    from ..stores.file import FileStore

    if store is None:
        root = sessions_dir()
    elif isinstance(store, FileStore):
        root = store.root
    else:
        return
    if not os.path.isdir(root):
        fail(f"{root}: no such sessions directory")


def _open_hit(hit: Any, url: str | None) -> None:
    """Open a hit: ``browse SESSION --at ENTRY`` on a terminal, else the
    context at the entry (``context SESSION --leaf ENTRY``)."""
    from .session_cmds import context

    session = hit.location if url is None else hit.session_id
    if sys.stdin.isatty() and sys.stdout.isatty() and url is None:
        from .browse_cmds import browse

        browse(session=session, at=hit.entry_id, all_=False, cwd=None, provider=None, model=None, base_url=None, timeout=None, max_retries=None)
        return
    context(session=session, leaf=hit.entry_id, projection=False, as_json=False)


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""
    app.command()(search)
