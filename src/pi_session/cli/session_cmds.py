"""Session commands: ls, info, tree, context, label, edit, name, clone, fork,
migrate. Each parses its options and prints; the rules they apply live in
the library (manager, operations, context, listing, stats)."""

from __future__ import annotations

import os
from pathlib import Path
import sys
from typing import Any, Optional

import typer
from rich.text import Text

from ..session.context import (
    EDITABLE_ROLES,
    applied_context_edits,
    entry_messages,
    get_current_system_message,
    projection_to_json,
    system_message_text,
)
from ..core.jsonio import js_stringify
from ..manager.session_manager import SessionManager
from ..core.paths import default_session_dir, encode_cwd, is_windows_absolute, sessions_dir
from ..storage import SessionFileError, migrate_file
from ..stores.listing import list_session_dir, resolve_path
from ..stores import StoreCapability, StoreError
from .info_view import FIELD_FLOOR, info_json, info_rows, percent as _percent
from .common import (
    JSON_OPTION,
    SESSION_ARGUMENT,
    STORE_OPTION,
    active_store,
    database_store,
    store_url,
    CliError,
    apply_leaf,
    console,
    entry_id_arg,
    fail,
    open_session,
    other_session_ids,
    output_width,
    print_json,
    project_cwd,
    project_dir,
    resolve_session,
    warn,
    text_argument,
    report_new_notes,
)
from .render import (
    DEEP_TREE,
    ROLE_STYLES,
    content_text,
    entry_line,
    iter_flat_tree_json,
    one_line,
    plural,
    sanitize,
    session_list_lines,
    system_changes,
    TREE_ROW_STYLE,
    iter_tree_row_parts,
    print_rows,
    tree_depth,
    tree_value,
)
from ..render.terminal import cells, wrap_cells
from ..core.text import field_text
from ..session.conversation import ConversationView, hidden_summary
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE, SYSTEM, TOOL_RESULT,
)


def ls(
    ctx: typer.Context,
    all_: bool = typer.Option(False, "--all", "-a", help="Sessions of every project, not just this directory's."),
    cwd: Optional[str] = typer.Option(None, "--cwd", help="Project directory (default: the current directory)."),
    sizes: bool = typer.Option(False, "--sizes", help="How much of each session file is payload (images, big tool outputs) and abandoned branches (reads every file)."),
    paths: bool = typer.Option(False, "--paths", help="With --sizes: each session file's path, whole, even on a narrow terminal."),
    as_json: bool = JSON_OPTION,
    store: Optional[str] = STORE_OPTION,
) -> None:
    """List sessions, newest first: one line each, in terminal cells (a
    Chinese or Korean character takes two). On a narrow terminal the first
    message shrinks first, then each id becomes its shortest unique prefix
    (8 characters or more, as git abbreviates; every command takes it),
    the time an age (pi's picker), the cwd keeps its end, columns go.
    Piped, as wide as the terminal, or unlimited (whole ids) without one.

    --cwd takes a Windows path (C:\\Users\\me\\app), as pi names its directory.

    With a database store (--store, PI_SESSION_STORE) the table comes from
    the store's listing columns, without reading any session.

    --sizes: one line per session instead: its size, the bytes of
    payload `pi-session slim` would move out and of abandoned branches
    `pi-session prune` would archive, then the id and name or first message
    as above, and the file's path when the line has room for it, with
    --paths, or without a terminal (--json: a "lean" object each)."""
    url = store_url(ctx, store)
    project = project_dir(cwd) if cwd else os.getcwd()
    infos: list[dict[str, Any]]  # pi SessionInfo dicts (see pi_session.stores.listing.list_session_dir)
    chosen = active_store(url)
    db = database_store(url)
    if db is not None:
        try:
            infos = db.list(cwd=None if all_ else project_cwd(project), with_text=as_json)
        except StoreError as exc:
            fail(str(exc))
    elif all_:
        infos = SessionManager.list_all(store=chosen)
    elif is_windows_absolute(project):  # pi on Windows named its directory: no POSIX resolution
        infos = chosen.list(cwd=project) if chosen is not None else list_session_dir(default_session_dir(project))
    else:
        infos = SessionManager.list(project, store=chosen)
    if sizes:
        _ls_sizes(infos, as_json, db, paths=paths, other_ids=() if all_ else other_session_ids(db, chosen))
        return
    if as_json:
        print_json(infos)
        return
    if not infos:
        where: Any = sessions_dir() if all_ else default_session_dir(project)
        if chosen is not None:
            where = chosen.url if db is not None or all_ else chosen.session_dir(project_cwd(project))
        hint = "" if all_ else " (`pi-session ls --all` lists the sessions of every project)"
        console.print(f"No sessions in {sanitize(str(where))}{hint}", markup=False, soft_wrap=True)
        if db is None:
            _hint_loose_files(chosen.files_root if chosen is not None else sessions_dir())
        return
    import time

    other_ids = () if all_ else other_session_ids(db, chosen)
    for line in session_list_lines(infos, output_width(), all_projects=all_, now_ms=int(time.time() * 1000), other_ids=other_ids):
        console.print(line, soft_wrap=True)


def _hint_loose_files(root: Path) -> None:
    """After "No sessions": say so when the store's root holds session
    files directly, where a store of files (as pi's sessions directory)
    has project directories: ``search`` and ``usage`` read such a folder,
    ``ls`` and ids do not."""
    try:
        loose = sorted(name for name in os.listdir(root) if name.endswith(".jsonl") and (root / name).is_file())
    except OSError:
        return
    if not loose:
        return
    first = sanitize(str(root / loose[0]))
    console.print(
        f"{sanitize(str(root))} holds {plural(len(loose), 'session file')} directly, not in project directories "
        f"(<root>/--<cwd>--/): open one by its path (`pi-session info {first}`), or file them into a store with "
        f"`pi-session import {sanitize(str(root))} --store DIR`",
        markup=False, soft_wrap=True,
    )


def _ls_sizes(infos: list[dict[str, Any]], as_json: bool, db: Any, *, paths: bool = False, other_ids: Any = ()) -> None:
    """``ls --sizes``: each session's size, payload and abandoned-branch
    bytes (a file read once; a database session's lines), then its id and
    name or first message as ``ls`` shows them, and its path when
    ``paths``, when there is room for it or when no terminal is involved
    (:func:`_size_lines`)."""
    from ..session.lean import LeanSizes, human_size, measure_file, measure_lines

    rows: list[tuple[list[str], dict[str, Any], str]] = []
    for info in infos:
        path = info.get("path") if db is None else db.locator(str(info.get("id")))
        lean: LeanSizes | None
        try:
            if db is not None:
                lean = measure_lines(db.read_lines(str(info.get("id"))))
            else:
                lean = measure_file(path) if isinstance(path, str) else None
        except (OSError, StoreError):
            lean = None
        if as_json:
            info["lean"] = lean.to_json() if lean is not None else None
        elif lean is not None:
            sizes = [human_size(lean.total), human_size(lean.payload), _percent(lean.payload, lean.total),
                     human_size(lean.abandoned), _percent(lean.abandoned, lean.total)]
            rows.append((sizes, info, sanitize(str(path))))
    if as_json:
        print_json(infos)
        return
    if not rows:
        console.print("No sessions", markup=False)
        return
    for line in _size_lines(rows, output_width(), paths=paths, other_ids=other_ids):
        console.print(line, soft_wrap=True)


_SIZE_HEADS = ("size", "payload", "", "abandoned", "")


def _size_lines(rows: list[tuple[list[str], dict[str, Any], str]], width: int | None, *, paths: bool, other_ids: Any) -> list[Text]:
    """The lines of ``ls --sizes`` (a header first), each at most ``width``
    terminal cells: the five size columns, the id (whole, or its unique
    prefix as ``ls`` shortens it when the title would get under 30 cells),
    the name (bold) or first message cut with ``…``, and the path, whole,
    when ``paths``, when the line has room for it, or when ``width`` is
    None. With ``paths`` on a narrow terminal the title shrinks, then goes."""
    from ..render.terminal import SESSION_TITLE_MAX, fit_cells, pad_cells, unique_prefixes

    def natural(head: str, column: list[str]) -> int:
        return max([cells(head), *(cells(c) for c in column)])

    size_w = [natural(head, [r[0][i] for r in rows]) for i, head in enumerate(_SIZE_HEADS)]
    fixed = sum(size_w) + 2 * 3 + 1 * 2  # two spaces between the byte counts, one before each percentage
    ids = [str(info.get("id", "")) for _s, info, _p in rows]
    titles = [(bool(info.get("name")), one_line(str(info.get("name") or info.get("firstMessage") or ""), SESSION_TITLE_MAX)) for _s, info, _p in rows]
    title_nat = natural("name / first message", [t for _n, t in titles])
    path_w = natural("path", [p for _s, _i, p in rows])
    comfort = min(title_nat, 30)

    def room(id_w: int, with_path: bool) -> int:
        return (width or 0) - fixed - 2 - id_w - 2 - ((2 + path_w) if with_path else 0)

    id_w = natural("id", ids)
    show_path = paths or width is None or room(id_w, True) >= comfort
    if width is not None and room(id_w, show_path) < comfort:
        short = unique_prefixes(ids, other_ids or ())
        ids = [short.get(i, i) for i in ids]
        id_w = natural("id", ids)
    title_w = title_nat if width is None else max(0, min(title_nat, room(id_w, show_path)))
    if title_w < min(title_nat, 8):  # too narrow to tell anything: the path (asked for) takes the line
        title_w = 0

    def line(sizes: list[str], sid: Text, title: Text, path: str) -> Text:
        out = Text()
        out.append(pad_cells(sizes[0], size_w[0], right=True) + "  ")
        out.append(pad_cells(sizes[1], size_w[1], right=True) + " " + pad_cells(sizes[2], size_w[2], right=True) + "  ")
        out.append(pad_cells(sizes[3], size_w[3], right=True) + " " + pad_cells(sizes[4], size_w[4], right=True) + "  ")
        out.append_text(sid)
        out.append(" " * (id_w - cells(sid.plain)))
        if title_w:
            out.append("  ")
            out.append_text(title)
            out.append(" " * (title_w - cells(title.plain)) if show_path else "")
        if show_path:
            out.append("  " + path)
        out.rstrip()
        return out

    header = line(list(_SIZE_HEADS), Text("id"), Text(fit_cells("name / first message", title_w)), "path")
    header.stylize("bold")
    lines = [header]
    for (sizes, _info, path), sid, (named, title) in zip(rows, ids, titles):
        lines.append(line(sizes, Text(sid, style="dim"), Text(fit_cells(title, title_w), style="bold" if named else ""), path))
    return lines


def info(ctx: typer.Context, session: str = SESSION_ARGUMENT, as_json: bool = JSON_OPTION) -> None:
    """Show a session's header, size, leaf, name and any problems, and what
    pi's /session shows: messages, tool calls and results, tokens and cost
    (every branch; the sums the HTML viewer's header shows).

    version is the file's own format version; an older file is read as
    version 3 (migrated in memory) and left unchanged."""
    manager = open_session(ctx, session, quiet=as_json)
    stats, lean, data = info_json(manager)
    if as_json:
        print_json(data)
        return
    _print_fields(info_rows(stats, lean, data))


def _print_fields(rows: list[tuple[str, str]]) -> None:
    """``info``'s "key  value" lines: each value in a column after the
    widest key, wrapped at word boundaries (a path after a ``/``) to the
    terminal's width in cells, never cut; on one line each when no
    terminal is involved."""
    pad = max(len(key) for key, _ in rows) + 2
    width = output_width()
    room = None if width is None else max(FIELD_FLOOR, width - pad)
    for key, value in rows:
        for n, part in enumerate(wrap_cells(sanitize(value), room)):
            line = Text(key.ljust(pad) if n == 0 else " " * pad, style="bold")
            line.append(part)
            console.print(line, soft_wrap=True)


def tree(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    as_json: bool = JSON_OPTION,
    nested: bool = typer.Option(
        False, "--nested", help="With --json: pi's nested layout (pi-oracle's tree), one level per entry; too deep for Python's json or jq on long sessions."
    ),
    flat: bool = typer.Option(
        False, "--flat", help="With --json: the flat shape, one object per entry (the default; kept for scripts that pass it)."
    ),
    all_entries: bool = typer.Option(
        False, "--all-entries", help="Show custom entries too (extension and importer state, hidden by default and counted in a last line)."
    ),
) -> None:
    """Show the session tree: branches indented, the leaf marked, labels shown,
    failed tool results marked.

    Custom entries (an extension's or an importer's state, never sent to
    the model: most entries of an imported session) are left out unless
    labelled or the leaf; their children take their place, and a last
    line counts them by kind. --all-entries shows every entry; --json
    always lists every entry.

    --json prints one object per entry (id, parentId, depth, type, role,
    timestamp, label, onPath, children): readable by any JSON tool at any
    size. --json --nested prints pi's nested layout (pi-oracle's tree),
    which nests one level per entry: a long session is too deep for
    Python's json module or jq."""
    if nested and flat:
        fail("give one of --nested or --flat (the default), not both")
    if (nested or flat) and not as_json:
        fail(f"{'--nested' if nested else '--flat'} goes with --json")
    manager = open_session(ctx, session, quiet=False)
    roots = manager.get_tree()
    if as_json and not nested:
        on_path = {e.get("id") for e in manager.get_branch()}
        for chunk in iter_flat_tree_json(roots, manager.get_leaf_id(), on_path):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        return
    if as_json:
        # the oracle's indented layout, except for very deep trees (see DEEP_TREE)
        indent = tree_depth(roots) <= DEEP_TREE
        print_json(tree_value(roots, manager.get_leaf_id()), 1 if indent else None)
        return
    if not roots:
        console.print(Text(f"session {manager.get_session_id()} has no entries", style="dim"), soft_wrap=True)
        return
    branch = manager.get_branch()
    active = {e["id"] for e in branch}
    width = max(30, min(100, console.width - 30))
    edits = applied_context_edits(branch) if manager.get_leaf_id() is not None else {}
    view = None if all_entries else ConversationView(roots, manager.get_leaf_id())
    print_rows(console, iter_tree_row_parts(roots, manager.get_leaf_id(), active, width, edits=edits, view=view), TREE_ROW_STYLE)
    if view is not None and view.hidden:
        console.print(Text(f"… {sanitize(hidden_summary(view.hidden))} (--all-entries shows them)", style="dim"), soft_wrap=True)


def context(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Entry id (or a unique prefix) to build the context at, or 'null' for none."),
    projection: bool = typer.Option(
        False, "--projection", help="Per context entry, the messages it contributes after context edits (pi 1.6's projection)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show the messages pi would send to the model at the leaf.

    Context edits are applied as pi 1.6 applies them: edited messages are
    marked, omitted entries are listed where they stand. With --json the
    output is pi-oracle's `context` (or, with --projection, `projection`)."""
    manager = open_session(ctx, session, quiet=False)
    apply_leaf(manager, leaf)
    proj = manager.build_session_projection()
    if as_json:
        out: dict[str, Any] = {"leafId": manager.get_leaf_id()}
        if "thinkingLevel" in proj:
            out["thinkingLevel"] = proj["thinkingLevel"]
        out["model"] = proj["model"]
        if projection:
            out["entries"] = projection_to_json(proj)
        out["messages"] = proj["messages"]
        if projection:
            out["systemMessage"] = get_current_system_message(proj["messages"])
        print_json(out)
        return
    model = proj["model"]
    model_text = sanitize(f"{field_text(model.get('provider'))}/{field_text(model.get('modelId'))}") if model else "none"
    leaf_id = manager.get_leaf_id()
    console.print(
        Text.assemble(
            ("leaf ", "bold"), sanitize(leaf_id) if leaf_id is not None else "none (empty context)",
            ("  model ", "bold"), model_text, ("  thinking ", "bold"), sanitize(str(proj.get("thinkingLevel"))),
        ),
        soft_wrap=True,
    )
    edited_by = {target: edit_id for target, (edit_id, _r) in applied_context_edits(manager.get_branch() if leaf_id is not None else []).items()}
    rule_width = min(console.width, 80)
    index = 0
    for pos, item in enumerate(proj["entries"]):
        entry = item["sourceEntry"]
        eid = entry.get("id")
        edit_id = edited_by.get(eid) if isinstance(eid, str) else None
        if projection:
            # an edited entry is described by what the model sees, never by
            # the text the edit hid
            head = Text(f"● {sanitize(str(eid))} ", style="bold")
            if edit_id is None:
                head.append_text(entry_line(entry, 60))
            else:
                what = "omitted" if not item["messages"] else "edited"
                head.append(f"{sanitize(field_text(entry.get('type')))} ({what} by context edit {sanitize(edit_id)})", style="dim")
            console.print(head, soft_wrap=True)
        if edit_id is not None and not item["messages"] and entry_messages(entry, leading=pos == 0):
            console.print(Text(f"── omitted: {sanitize(str(eid))} (context edit {sanitize(edit_id)})", style="dim italic"), soft_wrap=True)
        for message in item["messages"]:
            role = sanitize(field_text(message.get("role")))
            note = f"(edited by {sanitize(edit_id)}) " if edit_id is not None and message.get("role") in EDITABLE_ROLES else ""
            rule_head = f"── [{index}] {role} {note}"
            console.print(
                Text(rule_head, style=ROLE_STYLES.get(role, "")) + Text("─" * max(0, rule_width - cells(rule_head)), style="dim"),
                soft_wrap=True,
            )
            # bodies are plain text (sanitized, at most CONTEXT_BODY_LIMIT
            # characters): soft_wrap leaves wrapping to the terminal, so a huge
            # message costs linear time
            console.print(Text(message_body(message)), soft_wrap=True)
            index += 1


CONTEXT_BODY_LIMIT = 20_000  # characters of one message shown by `context`
TOOL_RESULT_LIMIT = 2_000  # characters of one tool result shown by `context`


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({plural(len(text) - limit, 'more character')}; use --json for everything)"


def message_body(message: dict[str, Any]) -> str:
    """The text ``context`` shows for one agent message: sanitized for a
    terminal (see :func:`render.sanitize`), tool results cut to
    :data:`TOOL_RESULT_LIMIT` characters and everything else to
    :data:`CONTEXT_BODY_LIMIT`, with a note saying how much was left out."""
    role = message.get("role")
    if role == ASSISTANT:
        parts = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                parts.append(field_text(block.get("text", "")))
            elif block.get("type") == "thinking":
                thought = one_line(field_text(block.get("thinking", "")), 200)
                # signed thinking with no text (a provider that hides it): said so, on a line of its own
                parts.append(f"(thinking) {thought}" if thought.strip() else "(redacted thinking)")
            elif block.get("type") == "toolCall":
                parts.append(f"→ {field_text(block.get('name'))}({one_line(js_stringify(block.get('arguments')), 200)})")
        if message.get("errorMessage"):
            parts.append(f"(error: {message['errorMessage']})")
        return _cut(sanitize("\n".join(parts)), CONTEXT_BODY_LIMIT) or "(empty)"
    if role == BASH_EXECUTION:
        return _cut(sanitize(f"$ {field_text(message.get('command'))}\n{field_text(message.get('output', ''))}"), CONTEXT_BODY_LIMIT)
    if role in (BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE):
        return _cut(sanitize(field_text(message.get("summary", ""))), CONTEXT_BODY_LIMIT)
    if role == SYSTEM:
        changes = system_changes(message)
        body = system_message_text(message) or "(empty prompt text)"
        return _cut(sanitize(f"({changes})\n{body}" if changes else body), CONTEXT_BODY_LIMIT)
    text = content_text(message.get("content"))
    return _cut(text, TOOL_RESULT_LIMIT if role == TOOL_RESULT else CONTEXT_BODY_LIMIT)


def _open_for_write(ctx: typer.Context, session: str) -> SessionManager:
    return open_session(ctx, session, read_only=False)


def label(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    entry_id: str = typer.Argument(..., help="The entry to label (its id, or a unique prefix of it)."),
    text: str = typer.Argument("", help="The label; empty clears it."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Set (or clear, with an empty text) the label of an entry."""
    text_argument(text, "TEXT")
    # validate before opening for writing, which may migrate an old file
    probe = open_session(ctx, session, read_only=True, quiet=True)
    entry_id = entry_id_arg(probe, entry_id)
    manager = _open_for_write(ctx, session)
    seen = len(manager.notes)
    try:
        new_id = manager.append_label_change(entry_id, text) if text else manager.append_label_change(entry_id)
        manager.save()
        report_new_notes(manager, seen)
    except KeyError:
        fail(f"{manager.get_session_location()}: no entry with id {entry_id}")
    if as_json:
        print_json({"id": new_id, "targetId": entry_id, "label": text or None})
    else:
        done = f"{'labelled' if text else 'cleared label of'} {entry_id}" + (f": {text}" if text else "")
        console.print(one_line(done, 200), markup=False, soft_wrap=True)


def edit(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    entry_id: str = typer.Argument(..., help="The entry whose model-visible content changes (on the current branch; its id or a unique prefix)."),
    replace: Optional[str] = typer.Option(None, "--replace", help="The text the model sees instead of the entry's content."),
    omit: bool = typer.Option(False, "--omit", help="Leave the entry out of the model context."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Replace or omit what an entry contributes to the model context (a
    pi 1.6 context edit), e.g. to hide a pasted secret or a huge output.

    The original stays in the file, as in pi: the edit is a new entry that
    context building applies. User, assistant and tool-result messages and
    custom messages on the current branch can be edited."""
    if (replace is None) == (not omit):
        fail("give exactly one of --replace TEXT or --omit")
    if replace is not None:
        text_argument(replace, "--replace")
        if not replace.strip():
            fail("--replace: give the text the model should see (an empty text block is refused by some providers); to hide the entry, use --omit")
    replacement = None if omit else {"content": replace}
    # Validate before opening for writing (which may migrate an old file): a
    # read-only manager checks the edit as pi does, then refuses the write.
    probe = open_session(ctx, session, read_only=True, quiet=True)
    entry_id = entry_id_arg(probe, entry_id)
    try:
        probe.append_context_edit(entry_id, replacement)
    except PermissionError:
        pass
    except (ValueError, KeyError) as exc:
        fail(f"{probe.get_session_location()}: {exc.args[0] if exc.args else exc}")
    before = _pairing(probe)
    manager = _open_for_write(ctx, session)
    seen = len(manager.notes)
    new_id = manager.append_context_edit(entry_id, replacement)
    manager.save()
    report_new_notes(manager, seen)
    if as_json:
        print_json(manager.get_entry(new_id))
    else:
        what = "omitted from the model context" if omit else "replaced in the model context"
        console.print(
            sanitize(f"context edit {new_id}: {entry_id} {what} (the original stays in the file)"), markup=False, soft_wrap=True
        )
        _warn_unpaired(before, _pairing(manager))


def _pairing(manager: SessionManager) -> tuple[dict[Any, Any], set[Any]]:
    """The tool calls without a result (id → tool name) and the tool
    results without a call (ids) in the context at the leaf."""
    from ..adapters import orphan_tool_results, unanswered_tool_calls

    messages = manager.build_session_context()["messages"]
    return ({u["toolCallId"]: u.get("name") for u in unanswered_tool_calls(messages)},
            {o["toolCallId"] for o in orphan_tool_results(messages)})


def _warn_unpaired(before: tuple[dict[Any, Any], set[Any]], after: tuple[dict[Any, Any], set[Any]]) -> None:
    """Warn about the tool calls an edit left without a result, and the
    results it left without their call."""
    calls = [(cid, name) for cid, name in after[0].items() if cid not in before[0]]
    results = sorted(map(str, after[1] - before[1]))
    for cid, name in calls:
        warn(sanitize(
            f"tool call {cid}{f' ({name})' if name else ''} now has no result in the model context; the provider "
            "adapters answer it with an error result. To hide a long or secret output, --replace it with a short "
            "text instead, or omit the assistant message that made the call too"
        ))
    if results:
        warn(sanitize(
            f"{plural(len(results), 'tool result')} ({', '.join(results)}) now {'has' if len(results) == 1 else 'have'} "
            "no call in the model context; the provider adapters drop such results"
        ))


def name(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    text: Optional[str] = typer.Argument(None, help="The session's display name (empty clears it; none: print the current name)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Name the session (a session_info entry); without TEXT, print its
    current name and change nothing."""
    if text is None:
        current = open_session(ctx, session, read_only=True).get_session_name()
        if as_json:
            print_json({"name": current})
        else:
            console.print(f"name: {one_line(current, 200)}" if current else "no name (give TEXT to name the session)", markup=False, soft_wrap=True)
        return
    text_argument(text, "TEXT")
    manager = _open_for_write(ctx, session)
    seen = len(manager.notes)
    new_id = manager.append_session_info(text)
    manager.save()
    report_new_notes(manager, seen)
    if as_json:
        print_json({"id": new_id, "name": manager.get_session_name()})
    else:
        current = manager.get_session_name()
        console.print(f"named: {one_line(current, 200)}" if current else "name cleared", markup=False, soft_wrap=True)


def clone(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    leaf: Optional[str] = typer.Option(None, "--leaf", help="Keep the path root→this entry (its id or a unique prefix; default: the leaf)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Write a new session holding only the path root→leaf (or root→--leaf ID).

    Without --leaf this is pi's /clone. pi's /fork (continue from just
    before an earlier user message, its text in the editor) is navigate ID
    in the same file, or clone --leaf PARENT_ID for a new file (--leaf ID
    keeps the message itself)."""
    from ..operations import OperationError, clone_session  # not at start-up: it loads compaction

    if leaf is not None and not leaf.strip():
        fail("--leaf: give an entry id (or a unique prefix of one)", code=2)
    manager = open_session(ctx, session, read_only=True)
    if leaf:
        leaf = entry_id_arg(manager, leaf)
    try:
        done = clone_session(manager, leaf)
    except OperationError as exc:
        fail(str(exc))
    if as_json:
        print_json(done.to_json())
        return
    if done.warning is not None:
        warn(sanitize(done.warning))
    console.print(f"cloned {plural(done.entries, 'entry', 'entries')} to {sanitize(str(done.location))}", markup=False, soft_wrap=True)


def fork(
    ctx: typer.Context,
    session: str = SESSION_ARGUMENT,
    cwd: Optional[str] = typer.Option(
        None, "--cwd", help="The project directory the copy belongs to (default: the current directory)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Copy a whole session into a project's sessions, by default the
    current directory's (pi's --fork <path|id>).

    To start again from an earlier message instead (pi's /fork in a
    session), use clone --leaf ID. With --store the copy is a new session
    of that store (a directory: under it, in the project's directory)."""
    if database_store(store_url(ctx)) is not None:
        _fork_in_store(ctx, session, cwd, as_json)
        return
    path = _resolve(ctx, session)  # absolute: stored as the new header's parentSession
    try:
        project = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    except OSError as exc:  # the current directory was deleted
        fail(f"the current directory: {exc.strerror or exc} (give --cwd DIR)")
    if not cwd.strip() if cwd is not None else False:
        fail("--cwd: give a directory")
    if not os.path.isdir(project):
        warn(f"--cwd {project}: no such directory here; the copy is filed under it anyway")
    # Read the source first: lines it cannot read are not copied, and the
    # user must hear of it (warnings name each line).
    source = open_session(ctx, str(path), read_only=True, quiet=as_json)
    skipped = [problem for problem in source.problems if not problem.recovered]
    store = active_store(store_url(ctx))  # a store of files (--store DIR): the copy goes under its root
    target = store.files_root / encode_cwd(project) if store is not None and store.can(StoreCapability.FILES) else None
    try:
        manager = SessionManager.fork_from(os.path.abspath(path), project, target)
    except SessionFileError as exc:
        fail(str(exc))
    if as_json:
        print_json({"path": str(manager.get_session_file()), "id": manager.get_session_id(), "parentSession": str(path),
                    "entries": len(manager.get_entries()), "linesNotCopied": [p.line for p in skipped]})
    else:
        console.print(f"forked {plural(len(manager.get_entries()), 'entry', 'entries')} to {sanitize(str(manager.get_session_file()))}", markup=False, soft_wrap=True)
        if skipped:
            warn(f"{plural(len(skipped), 'line')} of {path} could not be read as entries and {'was' if len(skipped) == 1 else 'were'} not copied "
                 f"(listed above; `pi-session check {path}` tells more)")


def _fork_in_store(ctx: typer.Context, session: str, cwd: Optional[str], as_json: bool) -> None:
    """``fork`` within a database store."""
    project = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    source = open_session(ctx, session, read_only=True, quiet=as_json)
    db = source.get_store()
    try:
        manager = SessionManager.fork_from(source.get_session_id(), project, store=db)
    except (StoreError, SessionFileError) as exc:
        fail(str(exc))
    skipped = [problem for problem in source.problems if not problem.recovered]
    if as_json:
        print_json({"path": manager.get_session_location(), "id": manager.get_session_id(), "parentSession": source.get_session_location(),
                    "entries": len(manager.get_entries()), "linesNotCopied": [p.line for p in skipped]})
    else:
        console.print(f"forked {plural(len(manager.get_entries()), 'entry', 'entries')} to {sanitize(str(manager.get_session_location()))}", markup=False, soft_wrap=True)


def migrate(ctx: typer.Context, session: str = SESSION_ARGUMENT, as_json: bool = JSON_OPTION) -> None:
    """Rewrite an old (v1/v2) session file as version 3, keeping a backup."""
    path = _resolve(ctx, session)
    try:
        result = migrate_file(path)
    except SessionFileError as exc:
        fail(str(exc))
    backup = os.path.abspath(result["backup"]) if result["backup"] else None
    if as_json:
        print_json(
            {
                "path": os.path.abspath(result["path"]),
                "fromVersion": result["from_version"],
                "toVersion": result["to_version"],
                "backup": backup,
                "problems": list(result["problems"]),
            }
        )
        return
    for problem in result["problems"]:
        warn(str(problem))
    shown = sanitize(str(path))
    if backup:
        console.print(
            f"migrated {shown} from version {result['from_version']} to {result['to_version']}; original kept as {sanitize(backup)}",
            markup=False,
            soft_wrap=True,
        )
    else:
        console.print(sanitize(f"{shown} is already version {result['to_version']}; nothing to do"), markup=False, soft_wrap=True)


def _resolve(ctx: typer.Context, session: str):
    try:
        return resolve_session(session, active_store(store_url(ctx)))
    except CliError as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("ls")(ls)
    app.command()(info)
    app.command()(tree)
    app.command()(context)
    app.command()(label)
    app.command()(edit)
    app.command()(name)
    app.command()(clone)
    app.command()(fork)
    app.command()(migrate)
