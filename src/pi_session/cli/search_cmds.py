"""``search``: full-text search across sessions (:mod:`pi_session.search`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.text import Text
from typer.core import TyperCommand

from .common import JSON_OPTION, STORE_OPTION, active_store, console, err_console, fail, invocation, print_json, store_url, warn

if TYPE_CHECKING:
    from ..stores import SessionStore


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
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help='The query: words, "a phrase", prefix*, -word, role:, tool:, file:, project:, model:, after:, before:, session:, re:. '
        "A query starting with - is the query, not an option."
    ),
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Only this project's sessions (default: every project)."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=100_000, help="At most this many hits (1 to 100,000)."),
    include_edited: bool = typer.Option(False, "--include-edited", help="Also text a context edit replaced or omitted (marked)."),
    thinking: bool = typer.Option(False, "--thinking", help="Also search assistants' thinking."),
    open_: Optional[int] = typer.Option(
        None, "--open", metavar="N", help="Open hit N (1 = the first): the browser at the entry on a terminal, else the entries around it."
    ),
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
    from ..search import QueryError, open_target, parse_query
    from ..search import search as run_search
    from ..stores import StoreError

    if store_option:
        invocation(ctx).store_url = store_option
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
    store = active_store(store_url(ctx))
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
    from ..stores import StoreCapability, mask_url

    # a database by the store's own URL (a SQLite file by its absolute path,
    # so the commands work from any directory), unless that URL masks the
    # password of the one the user named: then as named (with credentials)
    given = store_url(ctx)
    url = None if store is None or store.can(StoreCapability.FILES) else given if given and mask_url(given) != given else store.url
    hits = result.hits
    if open_ is not None:
        if not 1 <= open_ <= len(hits):
            fail(f"--open {open_}: {len(hits):,} hit{'' if len(hits) == 1 else 's'} (--open counts from 1)")
        _open_hit(ctx, hits[open_ - 1], url)
        return
    hits = hits[:limit]
    if as_json:  # the exit status as grep's and rg's: 1 when nothing matched; the whole file or id, for programs
        print_json({"query": query, "hits": [dict(h.to_json(), open=open_commands(open_target(h, store_url=url))) for h in hits]})
        if not hits:
            raise typer.Exit(1)
        return
    if not hits:
        err_console.print("no hits", style="dim", markup=False)
        raise typer.Exit(1)
    from ..render.terminal import sanitize

    names = ShortNames(store, url)
    width = console.width if sys.stdout.isatty() else None  # piped: whole lines, for programs
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
        snippet = snippet_text(hit.snippet)
        if width is not None:
            head = fit_line(head, width)
            snippet = fit_around_match(snippet, width - 4)
        console.print(head, soft_wrap=True)
        console.print(Text("    ") + snippet, soft_wrap=True)
        console.print(Text("    " + sanitize(open_commands(open_target(hit, store_url=url, session=names.of(hit)))[0]), style="dim"), soft_wrap=True)


def open_commands(target: Any) -> list[str]:
    """Shell commands that open a :class:`pi_session.search.OpenTarget`:
    the context at the entry and the browser at it (``pi-session context
    SESSION --leaf ENTRY``, ``pi-session browse SESSION --at ENTRY``; only
    the browser for a session without an entry), with ``--store URL`` for
    a database. Quoted for a POSIX shell (a leading ``~/`` is left
    unquoted, so the shell expands it)."""
    import shlex

    base = ["pi-session"] if target.store_url is None else ["pi-session", "--store", target.store_url]
    shown = target.session
    # ~/ stays outside the quotes, for the shell to expand it
    arg = "~/" + shlex.quote(shown[2:]) if shown.startswith("~/") else shlex.quote(shown)
    head = " ".join(shlex.quote(word) for word in base)
    if target.entry_id is None:
        return [f"{head} browse {arg}"]
    entry = shlex.quote(target.entry_id)
    return [f"{head} context {arg} --leaf {entry}", f"{head} browse {arg} --at {entry}"]


def snippet_text(snippet: Any, *, style: str = "bold reverse") -> Text:
    """A :class:`pi_session.search.Snippet` as rich
    :class:`~rich.text.Text` for a terminal: each piece sanitized
    (:func:`pi_session.render.terminal.sanitize`; session text never reaches the
    terminal raw), matches in ``style``."""
    from ..render.terminal import sanitize

    text = Text()
    for piece, matched in snippet.pieces():
        text.append(sanitize(piece), style=style if matched else "")
    return text


def fit_line(line: Text, width: int) -> Text:
    """``line`` cut to ``width`` terminal cells
    (:func:`pi_session.render.terminal.cells`: a Chinese or Korean character takes
    two and is never split), its end marked ``…``; unchanged when it fits."""
    from ..render.terminal import cells, fit_cells

    plain = line.plain
    if cells(plain) <= width:
        return line
    kept = fit_cells(plain, width)[:-1]  # the characters that fit, without the …
    return line[: len(kept)] + Text("…")


def fit_around_match(snippet: Text, width: int) -> Text:
    """A search snippet cut to ``width`` terminal cells around its first
    match (the match stays in view, with some text before it), each cut
    end marked ``…``; unchanged when it fits. Cells as
    :func:`pi_session.render.terminal.cells` counts them (wide characters whole)."""
    from ..render.terminal import cells

    plain = snippet.plain
    if width <= 2 or cells(plain) <= width:
        return snippet
    start = min((span.start for span in snippet.spans), default=0)
    before = 0
    while start > 0 and before + cells(plain[start - 1]) <= (width - 2) // 4:
        start -= 1
        before += cells(plain[start])
    end, used = start, 0
    budget = width - 1 - (1 if start > 0 else 0)  # a … at each cut end
    while end < len(plain) and used + cells(plain[end]) <= budget:
        used += cells(plain[end])
        end += 1
    if end == len(plain):  # the end is in view: fill the line from the end back
        start, used = end, 0
        while start > 0 and used + cells(plain[start - 1]) <= width - 1:
            start -= 1
            used += cells(plain[start])
    out = Text("…") if start > 0 else Text()
    out += snippet[start:end]
    if end < len(plain):
        out += Text("…")
    return out


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
    a terminal, as the query is echoed (:func:`~pi_session.render.terminal.sanitize`,
    which shows a control character as a visible escape such as ``\x07``):
    as many cells as that takes (a wide character, such as CJK, takes two;
    a tab stays a tab)."""
    from rich.cells import cell_len

    from ..render.terminal import sanitize

    return "".join(c if c == "\t" else " " * cell_len(c) for c in sanitize(text))


def _check_sessions_dir(store: SessionStore | None) -> None:
    """Fail with one line when the session files' directory does not
    exist (a typo in --store would otherwise look like an empty store, and
    leave an index of nothing in the cache)."""
    from ..core.paths import sessions_dir

    from ..stores import StoreCapability

    if store is not None and not store.can(StoreCapability.FILES):
        return
    root = sessions_dir() if store is None else store.files_root
    if not os.path.isdir(root):
        fail(f"{root}: no such sessions directory")


def _open_hit(ctx: typer.Context, hit: Any, url: str | None) -> None:
    """Open a hit: ``browse SESSION --at ENTRY`` on a terminal, else the
    entries around it (:func:`print_neighbourhood`)."""
    session = hit.location if url is None else hit.session_id
    if sys.stdin.isatty() and sys.stdout.isatty() and url is None:
        from .browse_cmds import browse

        browse(ctx, session=session, at=hit.entry_id, all_=False, cwd=None, provider=None, model=None, base_url=None, timeout=None, max_retries=None)
        return
    from ..search import open_target
    from .common import open_session

    manager = open_session(ctx, session, quiet=False)
    names = ShortNames(active_store(store_url(ctx)), url)
    print_neighbourhood(manager, hit.entry_id, open_commands(open_target(hit, store_url=url, session=names.of(hit)))[0])


NEIGHBOURS = 3
"""``search --open N`` (not on a terminal) shows this many context entries
on each side of the hit."""
NEIGHBOUR_CHARS = 600
"""Characters of a neighbour's text that ``search --open N`` shows (the
hit's own text is shown as ``context`` shows it)."""


def print_neighbourhood(manager: Any, entry_id: str | None, whole: str, around: int = NEIGHBOURS) -> None:
    """Print the hit's neighbourhood in its session: the context entries
    on each side of entry ``entry_id`` (``around`` before and after, the
    hit marked in the middle), as ``context`` shows messages; then a line
    saying how many entries were left out and the command ``whole`` that
    shows the whole context at the hit.

    The entries after the hit follow the session's current branch when the
    hit is on it, else the newest child at each step; they are shown in
    the context at the last of them (at the hit itself when a compaction
    on the way left the hit out). An entry that a context edit anywhere in
    the session replaced or omitted (as search hides such text) shows
    what the edit left, never its own text. A hit without an entry (the
    session's cwd) shows the first entries of the current branch.
    """
    from ..session.context import applied_context_edits
    from ..session.context_edits import apply_context_edit
    from ..render.terminal import entry_line, sanitize
    from .session_cmds import message_body

    leaf = manager.get_leaf_id()
    on_branch = {e.get("id") for e in manager.get_branch()} if leaf is not None else set()
    end, later, steps = leaf, 0, 0  # the last entry shown; how many follow it on the way
    if entry_id is not None and manager.get_entry(entry_id) is not None:
        end = entry_id
        step: str | None = entry_id
        while step is not None:
            children = manager.get_children(step)
            step = next((c["id"] for c in children if c.get("id") in on_branch), children[-1]["id"]) if children else None
            if step is not None:
                steps += 1
                if steps <= around:
                    end = step
        later = max(0, steps - around)
    items = manager.build_session_projection().get("entries", []) if end is None else _projection_at(manager, end)
    at = next((i for i, item in enumerate(items) if item["sourceEntry"].get("id") == entry_id), None)
    if at is None and entry_id is not None and end != entry_id:
        # the hit lies before a compaction on the way: its own context then
        end, later = entry_id, later + min(steps, around)
        items = _projection_at(manager, end)
        at = next((i for i, item in enumerate(items) if item["sourceEntry"].get("id") == entry_id), None)
    centre = at if at is not None else (len(items) - 1 if entry_id is not None else 0)
    first, last = max(0, centre - around), min(len(items), centre + around + 1)
    if entry_id is None:
        first, last = 0, min(len(items), 2 * around + 1)
    applied = applied_context_edits(manager.get_branch(end)) if end is not None else {}
    elsewhere: dict[str, tuple[str, Any]] = {}  # edits off this path, the last of each target
    for edit_entry in manager.get_entries_of_type("context_edit"):
        target = edit_entry.get("targetId")
        if isinstance(target, str) and "replacement" in edit_entry:
            elsewhere[target] = (str(edit_entry.get("id")), edit_entry["replacement"])
    width = min(console.width, 80)
    for i in range(first, last):
        entry = items[i]["sourceEntry"]
        messages = items[i]["messages"]
        eid = entry.get("id")
        edit = applied.get(eid) if isinstance(eid, str) else None
        if edit is None and isinstance(eid, str) and eid in elsewhere:
            edit = elsewhere[eid]
            messages = apply_context_edit(messages, edit[1])
        hit = i == at
        head = Text(f"── {sanitize(str(eid))} ", style="bold" if hit else "dim")
        if messages:
            head.append(sanitize(str(messages[0].get("role"))), style="cyan")
        elif edit is None:
            head.append_text(entry_line(entry, 40))
        else:  # never the text the edit hid
            head.append(f"{sanitize(str(entry.get('type')))} (omitted by context edit {sanitize(edit[0])})", style="dim")
        if messages and edit is not None:
            head.append(f" (edited by context edit {sanitize(edit[0])})", style="dim")
        if hit:
            head.append("  ◀ hit", style="bold yellow")
        head.append(" " + "─" * max(0, width - head.cell_len - 1), style="dim")
        console.print(head, soft_wrap=True)
        for message in messages:
            body = message_body(message)
            if not hit and len(body) > NEIGHBOUR_CHARS:
                body = body[:NEIGHBOUR_CHARS] + " …"
            console.print(Text(body), soft_wrap=True)
    after = len(items) - last + later
    left = " and ".join(x for x in (f"{first:,} before" if first else "", f"{after:,} after" if after else "") if x)
    note = f"{left} left out" if left else "nothing left out"
    console.print(Text(f"{last - first:,} entries shown, {note}; the whole context at the hit: {sanitize(whole)}", style="dim"), soft_wrap=True)


def _projection_at(manager: Any, leaf: str) -> list[dict[str, Any]]:
    """The projection's entries (``sourceEntry``, ``messages``) at ``leaf``
    (the manager's leaf is put back)."""
    old = manager.get_leaf_id()
    manager.branch(leaf)
    try:
        return list(manager.build_session_projection().get("entries", []))
    finally:
        if old is None:
            manager.reset_leaf()
        else:
            manager.branch(old)


class ShortNames:
    """The SESSION argument a hit's printed commands use, shorter than the
    whole file path and still one that opens the same session from any
    directory: the shortest unique prefix of the session id (at least
    :data:`ID_PREFIX` characters) when the session files are pi's default
    directory or a database store, else the file's path relative to the
    current directory (when inside it) or to ``~``.

    Args:
        store: the searched store (None: pi's sessions directory).
        url: the database store's URL (None: session files).
    """

    ID_PREFIX = 8

    def __init__(self, store: Any, url: str | None) -> None:
        self.store = store
        self.url = url
        self._ids: list[str] | None = None  # file-name ids under pi's sessions directory, sorted
        self._paths: dict[str, list[str]] = {}
        self._shown: dict[tuple[str, str], str] = {}

    def of(self, hit: Any) -> str:
        """The SESSION argument for ``hit`` (a :class:`pi_session.search.Hit`)."""
        key = (hit.session_id, hit.location)
        if key not in self._shown:
            self._shown[key] = self._name(hit)
        return self._shown[key]

    def _name(self, hit: Any) -> str:
        if self.url is not None:
            return self._store_prefix(hit.session_id)
        if self.store is None:
            prefix = self._file_prefix(hit.session_id, hit.location)
            if prefix is not None:
                return prefix
        return short_path(hit.location)

    def _store_prefix(self, session_id: str) -> str:
        """The shortest prefix (growing 4 characters at a time) the
        database store resolves to this id, else the whole id."""
        from ..stores import StoreError

        for n in range(self.ID_PREFIX, len(session_id), 4):
            try:
                if self.store.resolve(session_id[:n]) == session_id:
                    return session_id[:n]
            except StoreError:  # ambiguous (or unreadable): a longer one
                continue
        return session_id

    def _file_prefix(self, session_id: str, location: str) -> str | None:
        """The shortest prefix of ``session_id`` that ``resolve_session``
        finds as the file ``location`` in pi's sessions directory: no other
        file's name holds an id starting with it, and it names no file in
        the current directory; None when there is none."""
        import bisect
        import re

        from ..core.paths import sessions_dir

        if self._ids is None:
            self._list(sessions_dir())
        ids = self._ids or []
        paths = self._paths.get(session_id, [])
        root = sessions_dir()
        if len(paths) != 1 or os.path.abspath(paths[0]) != os.path.abspath(location):
            return None
        try:
            if not Path(paths[0]).resolve().is_relative_to(root.resolve()):
                return None
        except OSError:
            return None
        for n in range(min(self.ID_PREFIX, len(session_id)), len(session_id) + 1):
            prefix = session_id[:n]
            at = bisect.bisect_left(ids, prefix)  # the ids starting with prefix are ids[at:...]
            alone = ids[at : at + 1] == [session_id] and not (at + 1 < len(ids) and ids[at + 1].startswith(prefix))
            if alone and re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z._-]*", prefix) and not os.path.lexists(prefix):
                return prefix
        return None

    def _list(self, root: Path) -> None:
        from ..stores.file import named_session_files

        paths: dict[str, list[str]] = {}
        for session_id, path in named_session_files(root):
            paths.setdefault(session_id, []).append(str(path))
        self._paths = paths
        self._ids = sorted(paths)


def short_path(path: str) -> str:
    """``path`` relative to the current directory when it lies inside it
    (``./`` only before a name starting with ``-``, which would read as an
    option: pi's project directories are named ``--<cwd>--``), else with
    the home directory as ``~/``, else as it is."""
    absolute = os.path.abspath(path)
    here = os.getcwd()
    if absolute.startswith(here.rstrip(os.sep) + os.sep):
        relative = os.path.relpath(absolute, here)
        return "./" + relative if relative.startswith("-") else relative
    home = os.path.expanduser("~")
    if home not in ("", "/") and absolute.startswith(home.rstrip(os.sep) + os.sep):
        return "~/" + os.path.relpath(absolute, home)
    return path


class QueryFirstCommand(TyperCommand):
    """The ``search`` command's parser: an argument starting with ``-``
    that is none of the command's options (``-theme``, ``-"a phrase"
    word``) is the query, as if it followed ``--``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, query_first(args, self.get_params(ctx)))


def query_first(args: list[str], params: list[Any]) -> list[str]:
    """``args`` with the first argument that starts with one ``-`` but is
    none of ``params``' short options (and comes before any other argument
    or ``--``) moved behind a ``--`` at the end, so click reads it as the
    query. ``-n 5``, ``-n5`` and ``--limit=5`` stay options; ``-nothing``
    is a query (``-n`` takes a number)."""
    shorts: dict[str, bool] = {}  # option -> takes a value
    longs: dict[str, bool] = {}
    for param in params:
        if getattr(param, "param_type_name", None) == "option":  # typer's click, which it may bundle
            for opt in [*param.opts, *param.secondary_opts]:
                (longs if opt.startswith("--") else shorts)[opt] = not param.is_flag and not getattr(param, "count", False)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return args  # the query comes first, or after --: nothing to do
        if arg.startswith("--"):  # a long option (an unknown one is click's error)
            name = arg.split("=", 1)[0]
            i += 2 if longs.get(name) and "=" not in arg else 1
            continue
        if arg[:2] in shorts:
            takes = shorts[arg[:2]]
            if len(arg) == 2:
                i += 2 if takes else 1
                continue
            if takes and arg[2:].isdigit():  # -n5
                i += 1
                continue
        return [*args[:i], *args[i + 1:], "--", arg]
    return args


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""
    app.command(cls=QueryFirstCommand)(search)
