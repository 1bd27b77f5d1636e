"""What the root ``pi-session --help`` shows, kept apart from typer so
that the help can be written without loading it: the table of commands
(:data:`COMMANDS`), the root's own texts, :func:`plain_root_help`, the
root help as plain text for an output that is not a terminal (a pipe, a
file; no library at all), and :func:`print_terminal_root_help`, the same
texts in typer's rich layout for a terminal, drawn with rich alone. The
typer application (:mod:`pi_session.cli.app`) shows the same texts (its
root help is what ``pi-session`` without a command prints);
``tests/test_cli_startup.py`` checks that the plain help holds the same
words, and ``tests/test_cli_fast_paths.py`` that the terminal help is
typer's byte for byte.
"""

# no `from __future__ import annotations` and no imports at module level:
# this module is loaded by `pi-session --help` before anything else (see
# pi_session.cli.main)

ROOT_HELP = "Inspect, branch, compact, repair and export pi coding-agent sessions."
"""The root command's description."""

VERSION_HELP = "Print the version and exit."
"""Help of the root ``--version`` option."""

STORE_HELP = (
    "Session store: a sessions directory, sqlite:///FILE or postgresql://USER@HOST/DB "
    "(default: $PI_SESSION_STORE, else the files under ~/.pi/agent/sessions)."
)
"""Help of the ``--store`` options."""

STORE_ENV = "PI_SESSION_STORE"
"""The environment variable the global ``--store`` falls back on."""

HELP_HELP = "Show this message and exit."
"""Help of ``--help`` / ``-h``."""

COMMANDS: dict[str, tuple[str, str]] = {
    "ls": ("session_cmds", "List sessions, newest first."),
    "info": ("session_cmds", "Show a session's header, size, leaf, name, problems, messages, tokens and cost."),
    "tree": ("session_cmds", "Show the session tree: branches indented, the leaf marked, labels shown."),
    "context": ("session_cmds", "Show the messages pi would send to the model at the leaf."),
    "label": ("session_cmds", "Set (or clear, with an empty text) the label of an entry."),
    "edit": ("session_cmds", "Replace or omit what an entry contributes to the model context (a context edit)."),
    "name": ("session_cmds", "Name the session, or print its current name."),
    "clone": ("session_cmds", "Write a new session holding only the path root→leaf (or root→--leaf ID)."),
    "fork": ("session_cmds", "Copy a whole session into a project's sessions (pi's --fork)."),
    "migrate": ("session_cmds", "Rewrite an old (v1/v2) session file as version 3, keeping a backup."),
    "tokens": ("compact_cmds", "Estimate the context size in tokens and whether compaction would trigger."),
    "compact": ("compact_cmds", "Summarize older messages into a compaction entry, keeping recent ones."),
    "navigate": ("compact_cmds", "Move the session's position to another entry, optionally summarizing the branch left."),
    "check": ("check_cmds", "Report every problem of a session file with its line number."),
    "export": ("check_cmds", "Export the conversation as HTML or Markdown, or the whole session as JSONL."),
    "system-prompt": ("prompt_cmds", "Print the system prompt for a directory, in named sections."),
    "eval-compaction": ("eval_cmds", "Compact a session in memory and check what the summary kept."),
    "import": ("store_cmds", "Import pi sessions into the store of --store (or PI_SESSION_STORE)."),
    "secrets": ("secrets_cmds", "Find secrets (API keys, tokens, private keys, passwords) in a session."),
    "scrub": ("secrets_cmds", "Remove secrets from a session."),
    "browse": ("browse_cmds", "Browse sessions in the terminal: pick one, walk its tree, read, label, export."),
    "search": ("search_cmds", "Search every session and print ranked hits."),
    "usage": ("usage_cmds", "Report tokens and cost per day, week, month, session or billing block."),
    "serve": ("serve_cmds", "Serve every session in the browser: browse, search, costs, live appends and actions."),
    "slim": ("lean_cmds", "Move images and big tool outputs out of a session into blobs, leaving notes pi still opens."),
    "restore": ("lean_cmds", "Put back, byte for byte, every payload slim moved out of a session."),
    "prune": ("lean_cmds", "Move a session's abandoned branches to an archive session."),
}
"""Every command, in the order ``--help`` lists them: its module in
:mod:`pi_session.cli` (whose ``register(app)`` adds it) and the one line
``pi-session --help`` shows for it. A module is imported only when one of
its commands runs or shows its own help, so start-up loads only what the
command uses."""


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, max(width, 20), break_on_hyphens=False, break_long_words=False) or [""]


def _rows(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Two columns as click's plain help lays them out: two spaces in,
    the first column as wide as its widest cell (at most 30), two spaces
    between, the second wrapped to what is left of ``width``."""
    first = min(max(len(name) for name, _text in rows), 30)
    out = []
    for name, text in rows:
        lines = _wrap(text, width - first - 4)
        if len(name) > first:
            out.append(f"  {name}")
            out.extend(" " * (first + 4) + line for line in lines)
            continue
        out.append(f"  {name:<{first}}  {lines[0]}".rstrip())
        out.extend(" " * (first + 4) + line for line in lines[1:])
    return out


def plain_root_help(width: int = 80) -> str:
    """The root ``pi-session --help`` as plain text, ``width`` columns
    wide (the usage line, the description, the options and the commands
    with their one-line help, as the terminal shows them, without colour
    or boxes); ends with a newline. Pure."""
    lines = ["Usage: pi-session [OPTIONS] COMMAND [ARGS]...", ""]
    lines += ["  " + line for line in _wrap(ROOT_HELP, width - 2)]
    lines += ["", "Options:"]
    lines += _rows([("--version", VERSION_HELP), ("--store URL", f"{STORE_HELP} [env var: {STORE_ENV}]"), ("-h, --help", HELP_HELP)], width)
    lines += ["", "Commands:"]
    lines += _rows([(name, summary) for name, (_module, summary) in COMMANDS.items()], width)
    return "\n".join(lines) + "\n"


def terminal_width(environ: "dict[str, str] | None" = None) -> int:
    """``$COLUMNS`` when it is a positive number, else 80 (what rich and
    click take for an output that is not a terminal)."""
    import os

    value = (os.environ if environ is None else environ).get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 80


def print_terminal_root_help() -> None:
    """Write the root ``pi-session --help`` to a terminal in typer's rich
    layout (the usage line, the description, then an "Options" and a
    "Commands" panel: options in bold cyan with their metavar in bold
    yellow, commands in bold cyan beside their one line of help) from
    :data:`COMMANDS` and this module's texts, loading only the parts of
    rich it draws with (not typer, click or any command module). The
    width is the terminal's (``$COLUMNS``, or ``$TERMINAL_WIDTH`` as typer
    reads it, when set); ``FORCE_COLOR``/``PY_COLORS`` force colour as in
    typer (and ``GITHUB_ACTIONS``; ``_TYPER_FORCE_DISABLE_TERMINAL`` turns it
    off). Raises ``OSError`` (a closed pipe included) when the write fails."""
    import os

    from rich.columns import Columns
    from rich.console import Console
    from rich.highlighter import RegexHighlighter
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
    from rich.theme import Theme

    class Options(RegexHighlighter):
        highlights = [  # noqa: RUF012 - rich's own class attribute
            r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
            r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
            r"(?P<usage>Usage: )",
        ]

    width = os.environ.get("TERMINAL_WIDTH", "")
    forced = True if os.environ.get("GITHUB_ACTIONS") or os.environ.get("FORCE_COLOR") or os.environ.get("PY_COLORS") else None
    if os.environ.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        forced = False
    highlight = Options()
    console = Console(
        theme=Theme({"option": "bold cyan", "switch": "bold green", "usage": "yellow"}),
        highlighter=highlight, force_terminal=forced, width=int(width) if width.isdigit() and int(width) > 0 else None,
    )
    console.print(Padding(highlight("Usage: pi-session [OPTIONS] COMMAND [ARGS]..."), 1), style="bold")
    console.print(Padding(highlight(ROOT_HELP), (0, 1, 1, 1)))

    def panel(title: str, table: Table) -> Panel:
        return Panel(table, border_style="dim", title=title, title_align="left")

    options = Table(highlight=True, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    store = [highlight(STORE_HELP), Text(f"[env var: {STORE_ENV}]", style="dim yellow")]
    for long, short, metavar, texts in (
        ("--version", "", "", [highlight(VERSION_HELP)]), ("--store", "", "URL", store), ("--help", "-h", "", [highlight(HELP_HELP)]),
    ):
        # typer's six columns: long and short names, their negative forms (none here), the metavar, the help
        options.add_row(highlight(long), highlight(short), Text(), Text(), Text(metavar, style="bold yellow"), Columns(texts))
    console.print(panel("Options", options))
    commands = Table(highlight=False, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    commands.add_column(style="bold cyan", no_wrap=True, width=max(len(name) for name in COMMANDS))
    commands.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name, (_module, summary) in COMMANDS.items():
        commands.add_row(Text(name), highlight(summary))
    console.print(panel("Commands", commands))
    console.print()
