"""Terminal text: session content made safe and short for a terminal, and
rich renderings of entries and of the tree (pi's tree view layout).

Shared by the CLI (:mod:`pi_session.cli`) and the browser
(:mod:`pi_session.browse`); neither imports the other for it."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, assert_never

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from ..entries import entry_type
from ..entries.content import content_text as blocks_text
from ..entries.records import UNDEFINED
from ..core.text import field_text, plural, show_controls, wrap_text
from ..session.tree import TreeNode
from ..session.conversation import ConversationView
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY, BRANCH_SUMMARY_ROLE, COMPACTION, COMPACTION_SUMMARY_ROLE, MESSAGE,
    SYSTEM, TOOL_RESULT,
)

ROLE_STYLES = {
    "user": "bold cyan",
    "assistant": "bold green",
    "toolResult": "yellow",
    "bashExecution": "magenta",
    "custom": "blue",
    "branchSummary": "bold blue",
    "compactionSummary": "bold blue",
    "system": "bold red",
}


def sanitize(text: str) -> str:
    """``text`` safe to write to a terminal: every control character except
    newline and tab (C0, DEL, C1 ``0x80-0x9f``), every bidirectional
    mark, override or isolate (U+061C, U+200E/F, U+202A-202E, U+2066-2069:
    they make text
    read in another order than it is) and every lone surrogate is replaced
    by a visible escape (``\\x1b``, ``\\u202e``, ``\\ud800``), so session
    content cannot move the cursor, retitle the window, clear the screen or
    disguise itself. A carriage return before a newline (Windows line ends,
    in tool output made on Windows) ends the line with the newline; a lone
    one is escaped like the others (it would move the cursor back over the
    line). Pure;
    the result is at most 6 times as long (:func:`pi_session.core.text.show_controls`)."""
    return _show(text)


def _show(text: str) -> str:
    """:func:`pi_session.core.text.show_controls` of ``text``, a CRLF line
    end first made a newline."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return show_controls(text)


def _s(value: Any) -> str:
    """A short field of a row (an id, a name, a type) sanitized and on one
    line: newlines and tabs become spaces, as :func:`one_line` makes them,
    so a field never breaks its row."""
    text = value if value.__class__ is str else field_text(value)
    if text.isascii() and text.isprintable():  # nothing to escape (ids, names): the common case, cheaply
        return text
    shown = show_controls(text)
    return shown if shown.isprintable() else " ".join(shown.split())


def _quoted(value: Any) -> str:
    """A label's or a name's text in quotes (``'fix'``); a damaged one
    that is not a string as JSON (``{"a":1}``)."""
    return repr(value) if isinstance(value, str) else field_text(value)


def one_line(text: str, width: int = 72) -> str:
    """``text`` sanitized (see :func:`sanitize`) and on one line, cut to
    ``width`` terminal cells with an ellipsis (:func:`fit_cells`: a Chinese
    or Korean character takes two cells). Reads only the start of a long
    ``text`` when that gives more than ``width`` cells already (the result
    for a prefix of a text is a prefix of the text's: sanitizing and
    folding whitespace go character by character and word by word)."""
    head_chars = 2 * width + 64
    if width >= 1 and len(text) > head_chars:
        head = " ".join(show_controls(text[:head_chars]).split())
        if cells(head) > width:
            return fit_cells(head, width)
    return fit_cells(" ".join(show_controls(text).split()), width)


def cells(text: str) -> int:
    """The number of terminal cells ``text`` takes (rich's
    ``cell_len``: East Asian wide characters and most emoji take two, zero-width
    and combining characters none). Pure."""
    return len(text) if text.isascii() else cell_len(text)


def fit_cells(text: str, width: int) -> str:
    """``text`` when it takes at most ``width`` terminal cells (:func:`cells`),
    else its first ``width - 1`` cells and ``…`` (a wide character that
    would straddle the edge is left out, so the result may be one cell
    narrower). Pure."""
    if text.isascii():
        return text if len(text) <= width else text[: max(0, width - 1)] + "…"
    if cell_len(text) <= width:
        return text
    return _crop_cells(text, max(0, width - 1)) + "…"


def fit_cells_end(text: str, width: int) -> str:
    """Like :func:`fit_cells` but keeping the END of ``text`` (``…`` first):
    for paths, whose last parts tell most. Pure."""
    if cells(text) <= width:
        return text
    return "…" + _crop_cells(text[::-1], max(0, width - 1))[::-1]


def pad_cells(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal cells (on the left
    when ``right``: right-aligned); unchanged when it is wider. Pure."""
    gap = width - cells(text)
    if gap <= 0:
        return text
    return " " * gap + text if right else text + " " * gap


def wrap_cells(text: str, width: int | None) -> list[str]:
    """``text`` as lines of at most ``width`` terminal cells (:func:`cells`;
    a Chinese or Korean character takes two, never split):
    :func:`pi_session.core.text.wrap_text` measured in cells. Pure."""
    return wrap_text(text, width, cells, _crop_cells)


def _crop_cells(text: str, width: int) -> str:
    """The longest start of ``text`` that takes at most ``width`` cells."""
    cropped = set_cell_size(text, width)
    # set_cell_size pads with a space where a wide character would straddle
    # the edge: keep only what really comes from ``text``
    while cropped and not text.startswith(cropped):
        cropped = cropped[:-1]
    return cropped


def content_text(content: Any) -> str:
    """The text of a message content (string or blocks), sanitized for a
    terminal (see :func:`sanitize`); images as ``[image <mimeType>]``."""
    return sanitize(_raw_content_text(content))


def _raw_content_text(content: Any) -> str:
    """:func:`content_text` before sanitizing (what :func:`one_line` takes:
    it sanitizes, and sanitizing twice changes nothing)."""
    return blocks_text(content, _preview_block, " ")


def _preview_block(btype: str, block: Mapping[str, Any]) -> str | None:
    if btype == "text":
        return field_text(block.get("text", ""))
    if btype == "image":
        return f"[image {field_text(block.get('mimeType', ''))}]"
    return None


def message_preview(message: Mapping[str, Any], width: int = 72) -> str:
    """A one-line description of an agent message."""
    role = message.get("role")
    if role == ASSISTANT:
        raw_content = message.get("content")
        content = raw_content if isinstance(raw_content, list) else []
        text = " ".join(field_text(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
        calls = [_s(b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
        preview = one_line(text, width) if text.strip() else ""
        if calls:
            preview = (preview + " " if preview else "") + f"[{', '.join(calls)}]"
        if message.get("stopReason") in ("aborted", "error"):
            preview = (preview + " " if preview else "") + f"({_s(message.get('stopReason'))})"
        return preview or "(empty)"
    if role == TOOL_RESULT:
        failed = "✗ failed: " if message.get("isError") is True else ""
        return f"{_s(message.get('toolName'))}: {failed}{one_line(_raw_content_text(message.get('content')), width)}"
    if role == BASH_EXECUTION:
        return f"$ {one_line(field_text(message.get('command', '')), width)}"
    if role in (BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE):
        return one_line(field_text(message.get("summary", "")), width)
    if role == SYSTEM:
        return one_line(system_preview(message), width)
    return one_line(_raw_content_text(message.get("content")), width)


def system_preview(message: Mapping[str, Any]) -> str:
    """What a system message changes: its text, the sections it sets or
    removes and the tools it adds or removes (pi 1.6)."""
    text = content_text(message.get("content")).strip()
    changes = system_changes(message)
    return "; ".join(part for part in (text, changes) if part) or "(empty)"


def system_changes(message: Mapping[str, Any]) -> str:
    """The sections a system message sets (``-name`` removes) and the tools
    it adds (``+name``) or removes (``-name``); ``""`` when none."""
    parts = []
    sections = message.get("sections")
    if isinstance(sections, dict) and sections:
        parts.append("sections " + ", ".join(_s(k) if v is not None else f"-{_s(k)}" for k, v in sections.items()))
    for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
        tools = message.get(key)
        if isinstance(tools, list) and tools:
            parts.append("tools " + ", ".join(sign + _s(t.get("name")) for t in tools if isinstance(t, dict)))
    return "; ".join(parts)


Part = tuple[str, str]
"""A piece of a styled line: ``(text, style)``, ``""`` for no style of its own
(rich style strings such as ``"bold green"``)."""


def text_of(parts: Sequence[Part], style: str = "") -> Text:
    """The rich ``Text`` of ``parts`` (each appended with its style) over the
    base ``style``."""
    text = Text(style=style)
    for piece, piece_style in parts:
        text.append(piece, piece_style or None)
    return text


def entry_line(entry: Mapping[str, Any], width: int = 72) -> Text:
    """``<kind> <preview>`` for one entry, styled (:func:`entry_parts` as a
    rich ``Text``)."""
    return text_of(entry_parts(entry, width))


def entry_parts(entry: Mapping[str, Any], width: int = 72) -> list[Part]:
    """``<kind> <preview>`` for one entry as styled parts: the kind (a
    message's role) in its style, then the preview (at most about ``width``
    characters of text per field, sanitized: :func:`sanitize`)."""
    etype = entry.get("type")
    kind = entry_type(entry)
    parts: list[Part] = []
    if kind == MESSAGE:
        if not isinstance(entry.get("message"), dict):
            parts.append(("message", "dim"))
            parts.append((" (its message is not an object)", ""))
            return parts
        message = entry["message"]
        role = _s(message.get("role"))
        parts.append((role, ROLE_STYLES.get(role, "")))
        parts.append((" " + message_preview(message, width), ""))
        return parts
    parts.append((_s(etype), "bold blue" if kind in (COMPACTION, BRANCH_SUMMARY) else "dim"))
    match kind:
        case "compaction":
            keeps = "; keeps nothing" if entry.get("firstKeptEntryId") == entry.get("id") else ""
            parts.append((f" ({_s(entry.get('tokensBefore'))} tokens before{keeps}) " + one_line(field_text(entry.get("summary", "")), width), ""))
        case "branch_summary":
            parts.append((" " + one_line(field_text(entry.get("summary", "")), width), ""))
        case "model_change":
            parts.append((f" {_s(entry.get('provider'))}/{_s(entry.get('modelId'))}", ""))
        case "thinking_level_change":
            parts.append((f" {_s(entry.get('thinkingLevel'))}", ""))
        case "label":
            target = _s(entry.get("targetId"))
            parts.append((f" {target} = {_s(_quoted(entry.get('label', '')))}" if entry.get("label") else f" {target} cleared", ""))
        case "session_info":
            parts.append((f" name = {_s(_quoted(entry.get('name', '')))}", ""))
        case "custom":
            parts.append((f" {_s(entry.get('customType'))}", ""))
        case "custom_message":
            parts.append((f" {_s(entry.get('customType'))}: {one_line(_raw_content_text(entry.get('content')), width)}", ""))
        case "context_edit":
            replacement = entry.get("replacement", UNDEFINED)
            target = _s(entry.get("targetId"))
            if replacement is None:
                parts.append((f" {target} omitted", ""))
            elif isinstance(replacement, dict) and "content" in replacement:
                parts.append((f" {target} replaced: {one_line(_raw_content_text(replacement['content']), width)}", ""))
            else:
                parts.append((f" {target} (malformed replacement)", ""))
        case "usage":
            raw_usage = entry.get("usage")
            usage = raw_usage if isinstance(raw_usage, dict) else {}
            parts.append((f" {_s(entry.get('kind'))} {_s(entry.get('provider'))}/{_s(entry.get('model'))}", ""))
            if "totalTokens" in usage:
                parts.append((f" {_s(usage.get('totalTokens'))} tokens", ""))
        case "session" | "unknown":
            pass
        case _:
            assert_never(kind)
    return parts


N = TypeVar("N")


def iter_tree_layout(
    roots: Sequence[N], children: Callable[[N], Sequence[N]] = operator.attrgetter("children")
) -> Iterator[tuple[N, str]]:
    """The layout of pi's tree view, node by node, depth first: a chain
    stays at one indentation and only a branch point indents its children
    (``├─``/``└─`` guides), so a 5,000-entry linear session is 5,000 flat
    rows. Several roots each get a guide. Iterative: any depth works.

    Args:
        roots: the top nodes, in order.
        children: a node's children in order (default: its ``children``);
            return an empty list to hide a node's subtree (a fold).

    Yields:
        ``(node, prefix)``: the guide text drawn before the node's row.
    """
    # stack items: (node, prefix for this node's line, prefix for its descendants)
    stack: list[tuple[N, str, str]] = []
    multi_root = len(roots) > 1
    for i in reversed(range(len(roots))):
        if multi_root:
            last = i == len(roots) - 1
            stack.append((roots[i], "└─ " if last else "├─ ", "   " if last else "│  "))
        else:
            stack.append((roots[i], "", ""))
    while stack:
        node, prefix, child_prefix = stack.pop()
        yield node, prefix
        kids = children(node)
        if len(kids) == 1:
            stack.append((kids[0], child_prefix, child_prefix))
        else:
            for j in reversed(range(len(kids))):
                last = j == len(kids) - 1
                stack.append((kids[j], child_prefix + ("└─ " if last else "├─ "), child_prefix + ("   " if last else "│  ")))


def tree_row(
    entry: Mapping[str, Any],
    label: str | None,
    prefix: str,
    leaf_id: str | None,
    active: Container[Any],
    width: int = 72,
    *,
    edits: Mapping[str, tuple[str, Any]] | None = None,
    note: str | None = None,
) -> Text:
    """One row of the tree view: the guide ``prefix``, a bullet for entries
    on the active path, the id, the label, the leaf marker, ``note`` (e.g.
    what a fold hides) and the entry's preview (see :func:`tree_lines` for
    ``edits``); :func:`tree_row_parts` as a rich ``Text`` over
    :data:`TREE_ROW_STYLE`."""
    return text_of(tree_row_parts(entry, label, prefix, leaf_id, active, width, edits=edits, note=note), TREE_ROW_STYLE)


TREE_ROW_STYLE = "dim"
"""The base style of a tree row (:func:`tree_row`): its parts' styles are
added to it."""


def tree_row_parts(
    entry: Mapping[str, Any],
    label: str | None,
    prefix: str,
    leaf_id: str | None,
    active: Container[Any],
    width: int = 72,
    *,
    edits: Mapping[str, tuple[str, Any]] | None = None,
    note: str | None = None,
) -> list[Part]:
    """The styled parts of :func:`tree_row` (to be drawn over
    :data:`TREE_ROW_STYLE`), first the guide ``prefix`` (no style of its
    own)."""
    from ..session.context import edited_entry

    eid = entry.get("id")
    parts: list[Part] = [(prefix, ""), ("• " if eid in active else "  ", "green"), (_s(eid), "dim")]
    # label and leaf marker before the preview, so cropping never hides them
    if label:
        parts.append((f" [{_s(label)}]", "bold magenta"))
    if eid == leaf_id:
        parts.append((" ← leaf", "bold green"))
    if note:
        parts.append((f" {note}", "bold yellow"))
    parts.append((" ", ""))
    edit = edits.get(eid) if edits and eid.__class__ is str else None
    if edit is None:
        parts.extend(entry_parts(entry, width))
    elif edit[1] is None:
        parts.append((f"{_s(entry.get('type'))} (omitted from the model's context by {_s(edit[0])})", "dim"))
    else:
        parts.extend(entry_parts(edited_entry(entry, edit[1]), width))
        parts.append((f" (edited by {_s(edit[0])})", "dim"))
    return parts


def iter_tree_row_parts(
    roots: list[TreeNode],
    leaf_id: str | None,
    active: Container[Any],
    width: int = 72,
    *,
    edits: Mapping[str, tuple[str, Any]] | None = None,
    view: ConversationView | None = None,
) -> Iterator[list[Part]]:
    """The rows of :func:`tree_lines` as styled parts (:func:`tree_row_parts`),
    one list per row, lazily: what :func:`pi_session.render.styled_rows.print_rows`
    writes. Entries of a
    lazily read session are decoded 1,024 rows at a time
    (:meth:`TreeNode.decode_entries <pi_session.session.tree_node.TreeNode.decode_entries>`).

    ``view``: lay out that view of ``roots`` instead (e.g. a
    :class:`pi_session.session.conversation.ConversationView`, without the entries it
    hides; its ``hidden`` is complete once every row was taken)."""
    layout = iter_tree_layout(view.roots, view.children) if view is not None else iter_tree_layout(roots)
    while True:
        batch = list(itertools.islice(layout, 1024))
        if not batch:
            return
        TreeNode.decode_entries(node for node, _prefix in batch)
        for node, prefix in batch:
            yield tree_row_parts(node.entry, node.label, prefix, leaf_id, active, width, edits=edits)


def tree_lines(
    roots: list[TreeNode],
    leaf_id: str | None,
    active: set[str],
    width: int = 72,
    *,
    edits: Mapping[str, tuple[str, Any]] | None = None,
) -> list[Text]:
    """Render a session tree like pi's tree view (layout:
    :func:`iter_tree_layout`; rows: :func:`tree_row`). The leaf is marked,
    entries on the active path carry a bullet, labels are shown.

    ``edits`` (target id → (edit id, replacement), from
    :func:`pi_session.session.context.applied_context_edits`) marks entries a
    context edit changes at the leaf: they are previewed as the model sees
    them, and an omitted one without its text. For a long tree on a
    console, :func:`pi_session.render.styled_rows.print_rows` over
    :func:`iter_tree_row_parts` writes the
    same bytes much faster."""
    return [text_of(parts, TREE_ROW_STYLE) for parts in iter_tree_row_parts(roots, leaf_id, active, width, edits=edits)]


def relative_age(ms: int | None, now_ms: int) -> str:
    """How long ago ``ms`` (epoch milliseconds) was, as pi's session picker
    writes it: ``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``2y``;
    ``?`` when unknown."""
    if ms is None:
        return "?"
    diff = now_ms - ms
    minutes, hours, days = diff // 60_000, diff // 3_600_000, diff // 86_400_000
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    if hours < 24:
        return f"{hours}h"
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


SESSION_TITLE_MAX = 200
"""At most this many characters of a session's name or first message in
:func:`session_list_lines` (also when the width is unlimited)."""
_TITLE_COMFORT = 30  # the title shrinks to this before other columns give way
_TITLE_FLOOR = 12  # ... and to this before columns are dropped
_CWD_FLOOR = 16
SHORT_ID_MIN = 8
"""The fewest characters of an id :func:`unique_prefixes` shows (as git
shows commit hashes)."""


def unique_prefixes(ids: Iterable[str], among: Iterable[str] = (), minimum: int = SHORT_ID_MIN) -> dict[str, str]:
    """For each of ``ids``, its shortest start of at least ``minimum``
    characters that is the start of no other id of ``ids`` and ``among``,
    as git abbreviates commit hashes. An id that is itself the start of
    another id keeps all its characters (commands match a whole id
    first). Two sessions with one id share it whole or abbreviated alike:
    such an id names no session alone either way. Pure.

    Returns:
        ``{id: prefix}`` for every distinct id of ``ids``.
    """
    wanted = set(ids)
    known = sorted(wanted.union(among))
    out: dict[str, str] = {}
    for i, value in enumerate(known):
        if value not in wanted:
            continue
        need = minimum
        for j in (i - 1, i + 1):
            if 0 <= j < len(known):
                common = 0
                for a, b in zip(value, known[j]):
                    if a != b:
                        break
                    common += 1
                need = max(need, common + 1)
        out[value] = value[:need] if need < len(value) else value
    return out


def session_list_lines(
    infos: Sequence[Mapping[str, Any]],
    width: int | None,
    *,
    all_projects: bool,
    now_ms: int,
    other_ids: Iterable[str] | None = None,
) -> list[Text]:
    """The table of ``pi-session ls``: a header line and one line per
    session (pi ``SessionInfo`` dicts), every line at most ``width``
    terminal cells (None: no limit; East Asian wide characters take two:
    :func:`cells`).

    Columns: modified, id, msgs, cwd (``all_projects`` only), name (bold) or
    first message. When the line is too long, in this order: the
    name/first-message column shrinks to 30 cells; the id becomes its
    shortest unique prefix of at least 8 characters (:func:`unique_prefixes`
    among the listed ids and ``other_ids``, the ids of the sessions not
    listed, which every command that takes an id also matches; every
    command takes such a prefix); the modified time becomes an age as pi's
    picker shows it (``3h``, ``2d``; :func:`relative_age`); the cwd keeps
    its end, down to 16 cells; the title shrinks to 12; the msgs column
    goes, then the modified column. Whatever is left goes to the title
    again. Without a width the ids are whole. Session text is sanitized
    and on one line (:func:`one_line`)."""
    from ..core.timestamps import iso_to_ms

    titles = [(bool(info.get("name")), " ".join(_s(info.get("name") or info.get("firstMessage") or "").split())) for info in infos]
    ids = [_s(info.get("id")) for info in infos]
    counts = [str(info.get("messageCount", "")) for info in infos]
    stamps = [_s(info.get("modified", ""))[:19].replace("T", " ") for info in infos]
    ages = [relative_age(iso_to_ms(info.get("modified")), now_ms) for info in infos]
    cwds = [_s(info.get("cwd", "")) for info in infos]

    def natural(head: str, column: Sequence[str]) -> int:
        return max([cells(head), *(cells(c) for c in column)])

    id_w, msgs_w = natural("id", ids), natural("msgs", counts)
    title_natural = min(SESSION_TITLE_MAX, natural("name / first message", [t for _b, t in titles]))
    cwd_natural = natural("cwd", cwds) if all_projects else 0
    modified_w, use_age, cwd_w, show_msgs, show_modified = natural("modified", stamps), False, cwd_natural, True, True

    def fixed() -> int:
        parts = [id_w] + ([msgs_w] if show_msgs else []) + ([cwd_w] if all_projects else [])
        if show_modified:
            parts.append(modified_w)
        return sum(parts) + 2 * len(parts)  # two spaces before each next column

    def room() -> int:
        return (width - fixed()) if width is not None else title_natural

    if width is not None and room() < min(title_natural, _TITLE_COMFORT):
        raw_ids = [info.get("id") for info in infos]
        short = unique_prefixes([i for i in raw_ids if isinstance(i, str)], other_ids or ())
        ids = [_s(short.get(i, i)) if isinstance(i, str) else shown for i, shown in zip(raw_ids, ids)]
        id_w = natural("id", ids)
    if width is not None and room() < min(title_natural, _TITLE_COMFORT):
        use_age, modified_w = True, natural("age", ages)
        if all_projects and room() < min(title_natural, _TITLE_COMFORT):
            cwd_w = max(min(cwd_natural, _CWD_FLOOR), cwd_natural - (min(title_natural, _TITLE_COMFORT) - room()))
        if room() < min(title_natural, _TITLE_FLOOR):
            show_msgs = False
        if room() < min(title_natural, _TITLE_FLOOR):
            show_modified = False
        if all_projects and room() < min(title_natural, _TITLE_FLOOR):
            cwd_w = max(min(cwd_natural, 4), cwd_w - (min(title_natural, _TITLE_FLOOR) - room()))
    title_w = max(1, min(title_natural, room()))

    def line(modified: str, sid: Text, msgs: str, cwd: str, title: Text) -> Text:
        out = Text()
        if show_modified:
            out.append(pad_cells(modified, modified_w) + "  ")
        out.append_text(sid)
        out.append(" " * (id_w - cells(sid.plain)) + "  ")
        if show_msgs:
            out.append(pad_cells(msgs, msgs_w, right=True) + "  ")
        if all_projects:
            out.append(pad_cells(fit_cells_end(cwd, cwd_w), cwd_w) + "  ")
        out.append_text(title)
        return out

    lines = [line("age" if use_age else "modified", Text("id"), "msgs", "cwd", Text(fit_cells("name / first message", title_w)))]
    lines[0].stylize("bold")
    for i, (named, title) in enumerate(titles):
        shown = fit_cells(title, title_w)
        lines.append(line(ages[i] if use_age else stamps[i], Text(ids[i], style="dim"), counts[i], cwds[i],
                          Text(shown, style="bold" if named else "")))
    for out in lines:
        out.rstrip()
    return lines
