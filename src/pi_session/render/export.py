"""Exporting a conversation as Markdown or self-contained HTML (beyond pi).

The export is the path from the root to the leaf (every entry, also those a
compaction summarised away), rendered in order: messages by role, compaction
and branch summaries, model and thinking-level changes, system messages and
context edits. Content a context edit replaced is shown as the model sees
it, and an entry a context edit omits is marked with its content left out
(an edit is how a user hides a secret or a huge output; an export must not
bring it back). Pure functions: they take entries and return text.

HTML is the viewer of :mod:`pi_session.viewer` (the whole tree; see there
for how it handles untrusted text and context edits). This module depends
on the viewer, never the other way round (the title both show is
:func:`pi_session.viewer.model.title_of`, re-exported here).

Markdown renders as the conversation: one ``##`` heading per entry, user
and assistant text and summaries as the Markdown they are, tool calls as a
line naming what they work on with a bash command or an edit's diff fenced,
tool and shell output fenced.

Safety: all session text is untrusted. Text kept as Markdown has ``<``
escaped outside code (no raw HTML), and is checked with markdown-it-py
(CommonMark with tables) before it is written: any raw HTML, a link other
than http(s)/mailto, an image (an outside request) or a construct that
would run into the next entry makes it a fenced text block instead. Fenced
text has a fence longer than any backtick run in it, so it cannot close it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, assert_never

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..session.context import applied_context_edits, edited_entry, system_message_text, text_content
from ..entries import entry_type
from ..core.jsonio import dumps_readable
from ..entries.records import UNDEFINED
from ..session.tree import SessionTree, TreeNode
from ..viewer import iter_page
from ..viewer.entries import args_summary, call_arguments
from ..viewer.markup import MARKDOWN_LIMIT, safe_href
from ..viewer.model import hiding_edits, title_of
from ..core.text import field_text
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE, MESSAGE, SYSTEM, TOOL_RESULT,
)

if TYPE_CHECKING:
    from ..manager.session_manager import SessionManager

__all__ = ["export_markdown", "export_html", "iter_export_html", "export_session", "title_of", "fold_output", "summary_markdown"]



_SENTINEL = "pi-session-end-of-text-7f3a"


class _SeeAllLinks(MarkdownIt):
    """markdown-it-py that keeps every link, so a check sees them all."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return True


_CHECK = _SeeAllLinks("commonmark", {"html": True}).enable(["table", "strikethrough"])
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")


def _escape_line(line: str) -> str:
    """``<`` as ``&lt;`` outside the code spans of one line (backslash
    escapes kept), so no HTML tag or autolink starts in it."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n:
            out.append(line[i : i + 2])
            i += 2
        elif c == "`":
            j = i
            while j < n and line[j] == "`":
                j += 1
            run, k, close = j - i, j, -1
            while k < n:
                if line[k] == "`":
                    m = k
                    while m < n and line[m] == "`":
                        m += 1
                    if m - k == run:
                        close = k
                        break
                    k = m
                else:
                    k += 1
            if close >= 0:
                out.append(line[i : close + run])
                i = close + run
            else:
                out.append(line[i:j])
                i = j
        elif c == "<":
            out.append("&lt;")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _tokens(tokens: Sequence[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _tokens(token.children)


def _inert(text: str) -> bool:
    """Whether ``text`` followed by the rest of the document renders as
    itself: no raw HTML, no link but http(s)/mailto, no image (an outside
    request), and nothing left open (a fence) that would swallow what
    follows; and no link reference definition (``[x]: url``), which
    renders as nothing and would turn a ``[x]`` or ``![x]`` of any other
    entry into a link or an image."""
    env: dict[str, Any] = {}
    tokens = _CHECK.parse(f"{text}\n\n{_SENTINEL}\n", env)
    if env.get("references"):
        return False
    for token in _tokens(tokens):
        if token.type in ("html_block", "html_inline", "image"):
            return False
        if token.type == "link_open" and not safe_href(str(token.attrGet("href") or "")):
            return False
    return (
        len(tokens) >= 3
        and tokens[-3].type == "paragraph_open"
        and tokens[-3].level == 0
        and tokens[-2].content == _SENTINEL
        and tokens[-1].type == "paragraph_close"
    )


_MARKUP = re.compile(r"[<#]|```|~~~|\]\(|\]:|^ {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)
"""What :func:`prose_markdown` must parse a text for: ``<`` (HTML, autolinks), an
ATX heading's ``#``, a fence (a run of three backticks or tildes), the
``](`` of a link or image or ``]:`` of a link definition, and a line of
only ``=`` or ``-`` (a setext heading's underline)."""


def is_plain_prose(text: str) -> bool:
    """Whether :func:`prose_markdown` leaves ``text`` (line ends already
    ``\\n``) as it is (but for trailing newlines) because it holds none of
    :data:`_MARKUP`: the markdown-it parses can then be skipped (most
    texts of a long export; ``tests/test_export_markdown.py`` checks that
    both ways agree)."""
    return _MARKUP.search(text) is None


def prose_markdown(text: str) -> str:
    """Markdown written by the model or the user (assistant and user text,
    summaries), kept as Markdown so it renders as the conversation: ATX
    headings two levels down (under the entry's ``##``), ``<`` outside code
    escaped, a fence left open closed. When the result could still hold
    raw HTML, an unsafe link or an image, or run into the next entry (as
    markdown-it-py, CommonMark with tables, parses it), the text is a
    fenced text block instead.

    Args:
        text: the text as the session holds it.

    Returns:
        Markdown for the body of an entry's section ("" for a blank text).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # a lone CR ends a line for Markdown too
    if not text.strip():
        return ""
    if len(text) > MARKDOWN_LIMIT:
        return _fence(text)
    if is_plain_prose(text):
        return text.rstrip("\n")
    return parsed_prose_markdown(text)


def parsed_prose_markdown(text: str) -> str:
    """:func:`prose_markdown` of a text that may hold markup (line ends
    already ``\\n``, not blank, within :data:`MARKDOWN_LIMIT`)."""
    lines = text.split("\n")
    code_lines: set[int] = set()
    setext: dict[int, tuple[int, int]] = {}  # first line -> (end line, level) of a top-level setext heading
    last_fence: Token | None = None
    for token in _CHECK.parse(text):
        if token.type in ("fence", "code_block") and token.map:
            code_lines.update(range(token.map[0], token.map[1]))
            if token.type == "fence":
                last_fence = token
        elif token.type == "heading_open" and token.markup in ("=", "-") and token.level == 0 and token.map:
            setext[token.map[0]] = (token.map[1], int(token.tag[1]))
    out = []
    k = 0
    while k < len(lines):
        if k in setext:
            # ``Title`` over ``----`` is an h2, an entry's own level: written
            # as an ATX heading two levels down, as ``#`` headings are
            end, level = setext[k]
            title = " ".join(line.strip() for line in lines[k : end - 1])
            out.append("#" * min(6, level + 2) + " " + _escape_line(title))
            k = end
            continue
        line = lines[k]
        if k not in code_lines:
            line = _HEADING.sub(lambda m: m.group(1) + "#" * min(6, len(m.group(2)) + 2), _escape_line(line))
        out.append(line)
        k += 1
    result = "\n".join(out).rstrip("\n")
    if not _inert(result) and last_fence is not None:
        closed = f"{result}\n{last_fence.markup}"
        if _inert(closed):
            return closed
    return result if _inert(result) else _fence(text)


def _code_span(text: str) -> str:
    """One line of text as an inline code span (inert: nothing in a code
    span is Markdown or HTML)."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str, lang: str = "text") -> str:
    text = text.replace("\r\n", "\n")  # a CRLF (output made on Windows) ends a line, as in the source
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


OUTPUT_HEAD_LINES = 20
"""Lines of a long tool or shell output a Markdown export keeps from its
start (unless ``full_outputs``) ..."""
OUTPUT_TAIL_LINES = 10
"""... and from its end; the lines between are counted in a note."""
OUTPUT_MAX_CHARS = 8000
"""A kept output longer than this many characters (a few very long lines)
keeps its first and last :data:`OUTPUT_MAX_CHARS` / 2 characters."""


def fold_output(text: str) -> str:
    """A tool's or a shell's output cut for a Markdown export: more than
    :data:`OUTPUT_HEAD_LINES` + :data:`OUTPUT_TAIL_LINES` lines keep their
    first and last lines with ``… N lines omitted …`` between them, and
    what is left is cut the same way to :data:`OUTPUT_MAX_CHARS`
    characters (``… N characters omitted …``). Pure; ``text`` as it is when
    short enough."""
    lines = text.split("\n")
    keep = OUTPUT_HEAD_LINES + OUTPUT_TAIL_LINES
    if len(lines) > keep:
        omitted = len(lines) - keep
        lines = [*lines[:OUTPUT_HEAD_LINES], f"… {omitted:,} lines omitted (--full-outputs keeps them) …", *lines[-OUTPUT_TAIL_LINES:]]
        text = "\n".join(lines)
    if len(text) > OUTPUT_MAX_CHARS:
        half = OUTPUT_MAX_CHARS // 2
        omitted = len(text) - 2 * half
        text = f"{text[:half]}\n… {omitted:,} characters omitted (--full-outputs keeps them) …\n{text[-half:]}"
    return text


_FILE_LIST = re.compile(r"<(read-files|modified-files)>\n(.*?)\n?</\1>", re.DOTALL)
_FILE_LIST_TITLES = {"read-files": "Read files", "modified-files": "Modified files"}


def summary_markdown(text: str) -> str:
    """A compaction's or a branch summary's text as Markdown: the summary
    as prose (:func:`prose_markdown`), and the ``<read-files>`` and
    ``<modified-files>`` blocks pi appends to it as lists (a bold title,
    one path a line as inline code), not one run-together paragraph."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts: list[str] = []
    pos = 0
    for m in _FILE_LIST.finditer(text):
        prose = prose_markdown(text[pos : m.start()])
        if prose:
            parts.append(prose)
        paths = [line.strip() for line in m.group(2).split("\n") if line.strip()]
        items = "\n".join(f"- {_code_span(path)}" for path in paths)
        parts.append(f"**{_FILE_LIST_TITLES[m.group(1)]}:**" + (f"\n\n{items}" if items else " none"))
        pos = m.end()
    if pos == 0:
        return prose_markdown(text)
    rest = prose_markdown(text[pos:])
    if rest:
        parts.append(rest)
    return "\n\n".join(parts)


def _md_inline(text: str) -> str:
    """One line of untrusted text made inert for a Markdown heading or list
    item (Markdown punctuation backslash-escaped, ``<`` and ``&`` as
    entities)."""
    text = " ".join(text.split())
    text = re.sub(r"([\\`*\[\]#~|])", r"\\\1", text)
    text = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)  # "_" inside a word is no emphasis
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _note(text: str) -> str:
    return f"*{_md_inline(text)}*"


def _tool_call_md(block: Mapping[str, Any]) -> list[str]:
    summary, command, diff, rest = call_arguments(block.get("arguments"))
    line = f"**→ {_md_inline(field_text(block.get('name', '')))}**"
    if summary:
        line += " " + _code_span(summary)
    parts = [line]
    if command is not None:
        parts.append(_fence(command, "bash"))
    if diff is not None:
        parts.append(_fence(diff, "diff"))
    if isinstance(rest, str):
        parts.append(_fence(rest))
    elif rest is not None and rest != {}:
        parts.append(_fence(dumps_readable(rest), "json"))
    return parts


def _image_md(block: Mapping[str, Any]) -> str:
    data = block.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return _note(f"(image, {field_text(block.get('mimeType'))}, about {size:,} bytes)")


def _content_md(content: Any, role: str, full_outputs: bool = True) -> list[str]:
    """Message content as Markdown parts: text as prose (user, assistant,
    custom) or fenced (tool output; :func:`fold_output` unless
    ``full_outputs``), thinking quoted, tool calls, images as a note."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = field_text(block.get("text", ""))
            piece = _fence(text if full_outputs else fold_output(text)) if role == TOOL_RESULT else prose_markdown(text)
            if piece:
                parts.append(piece)
        elif btype == "thinking":
            thought = prose_markdown(field_text(block.get("thinking", "")))
            if thought:
                quoted = "\n".join(f"> {line}" if line else ">" for line in thought.split("\n"))
                parts.append("> *Thinking:*\n>\n" + quoted)
        elif btype == "toolCall":
            parts.extend(_tool_call_md(block))
        elif btype == "image":
            parts.append(_image_md(block))
    return parts


_ROLE_HEADINGS = {"user": "User", "assistant": "Assistant", "custom": "Custom message"}


def _entry_md(entry: Mapping[str, Any], calls: Mapping[str, Any], full_outputs: bool = True) -> tuple[str, list[str]] | None:
    """(heading, Markdown parts) of one entry, None for an entry not shown
    (labels, session names, custom state). ``calls``: tool call id → its
    arguments, for what a tool result's call worked on; ``full_outputs``:
    tool and shell output whole (else :func:`fold_output`)."""
    kind = entry_type(entry)
    match kind:
        case "message":
            if not isinstance(entry.get("message"), dict):
                return None
            message = entry["message"]
            role = field_text(message.get("role"))
            if role == BASH_EXECUTION:
                parts = [_fence(f"$ {field_text(message.get('command', ''))}", "bash")]
                if message.get("output"):
                    output = field_text(message.get("output"))
                    parts.append(_fence(output if full_outputs else fold_output(output)))
                if message.get("exitCode") not in (0, None):
                    parts.append(_note(f"exit code {field_text(message.get('exitCode'))}"))
                return "Shell command (by the user)", parts
            if role in (BRANCH_SUMMARY_ROLE, COMPACTION_SUMMARY_ROLE):
                summary = summary_markdown(field_text(message.get("summary", "")))
                return ("Branch summary" if role == BRANCH_SUMMARY_ROLE else "Compaction summary"), [summary] if summary else []
            if role == SYSTEM:
                return "System prompt", [_fence(system_message_text(message))]
            if role == TOOL_RESULT:
                call_id = message.get("toolCallId")
                on = args_summary(calls[call_id]) if isinstance(call_id, str) and call_id in calls else ""
                heading = f"Tool result: {field_text(message.get('toolName', ''))}" + (f" {on}" if on else "") + (" (error)" if message.get("isError") is True else "")
            else:
                heading = _ROLE_HEADINGS.get(role, role)
            parts = _content_md(message.get("content"), role, full_outputs)
            if message.get("errorMessage"):
                parts.append(_note(f"error: {message['errorMessage']}"))
            return heading, parts
        case "compaction":
            tokens = entry.get("tokensBefore")
            before = f"{tokens:,}" if isinstance(tokens, int) else str(tokens)
            summary = summary_markdown(field_text(entry.get("summary", "")))
            return "Compaction", [_note(f"{before} tokens before"), *([summary] if summary else [])]
        case "branch_summary":
            summary = summary_markdown(field_text(entry.get("summary", "")))
            return "Branch summary", [_note(f"from {field_text(entry.get('fromId'))}"), *([summary] if summary else [])]
        case "custom_message":
            text = prose_markdown(text_content(entry.get("content"), "\n"))
            return f"Custom message: {field_text(entry.get('customType', ''))}", [text] if text else []
        case "model_change":
            return f"Model: {field_text(entry.get('provider'))}/{field_text(entry.get('modelId'))}", []
        case "thinking_level_change":
            return f"Thinking level: {field_text(entry.get('thinkingLevel'))}", []
        case "context_edit":
            what = "omits" if entry.get("replacement") is None else "replaces the content of"
            return "Context edit", [_note(f"{what} {field_text(entry.get('targetId'))}")]
        case "usage":
            raw_usage = entry.get("usage")
            usage = raw_usage if isinstance(raw_usage, dict) else {}
            return f"Usage: {field_text(entry.get('kind'))} {field_text(entry.get('provider'))}/{field_text(entry.get('model'))}, {field_text(usage.get('totalTokens', '?'))} tokens", []
        case "session" | "custom" | "label" | "session_info" | "unknown":
            return None  # not shown
        case _:
            assert_never(kind)



def export_markdown(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
    edits: Mapping[str, tuple[str, Any]] | None = None,
    full_outputs: bool = False,
) -> str:
    """Render a root→leaf path as Markdown that renders as the
    conversation: a ``#`` title, then one ``##`` heading per entry
    (``## User``, ``## Assistant (label: NAME)``, ``## Tool result:
    bash``); user and assistant text and summaries as the Markdown they
    are (their headings two levels down; a summary's file lists as lists:
    :func:`summary_markdown`); tool calls as a bold line with what they
    work on, a bash command or an edit's diff fenced; tool output, shell
    output and system prompts fenced, a long tool or shell output cut to
    its first and last lines (:func:`fold_output`) unless ``full_outputs``.

    Args:
        header: the session header (id, cwd, timestamp are shown).
        entries: the path, root first (``SessionManager.get_branch()``).
        labels: entry id → label, shown in the heading.
        name: the session name (the title; default from the first message).
        edits: target id → (edit id, replacement or None for omitted): the
            context edits to show applied; default: those that apply on
            the path (:func:`pi_session.session.context.applied_context_edits`).
            :func:`export_session` passes every edit of the file, as the
            HTML viewer shows them.
        full_outputs: keep every line of tool and shell output.

    Returns:
        The document (str). Session text cannot inject HTML, a link other
        than http(s)/mailto, or an image, nor run into the next entry (see
        :func:`prose_markdown`); headings are escaped.
    """
    if edits is None:
        edits = applied_context_edits(entries)
    labels = labels or {}
    calls: dict[str, Any] = {}
    out = [f"# {_md_inline(title_of(header, entries, name, edits))}", ""]
    if header:
        for key in ("id", "cwd", "timestamp"):
            if header.get(key) is not None:
                out.append(f"- {key}: {_code_span(field_text(header[key]))}")
        out.append("")
    for entry in entries:
        entry_id = entry.get("id")
        label = labels.get(str(entry_id))
        edit = edits.get(entry_id) if isinstance(entry_id, str) else None
        notes: list[str] = []
        if edit is not None:
            edit_id, replacement = edit
            if replacement is None:
                shown = _entry_md(entry, {})
                heading = shown[0] if shown is not None else field_text(entry.get("type"))
                out.append(f"## {_md_inline(heading + (f' (label: {field_text(label)})' if label else ''))}")
                out.extend(["", _note(f"omitted from the model context by context edit {edit_id} (its content is not included)"), ""])
                continue
            entry = edited_entry(entry, replacement)
            notes.append(_note(f"edited by context edit {edit_id} (shown as the model sees it)"))
        message = entry.get("message") if entry.get("type") == MESSAGE else None
        if isinstance(message, dict) and message.get("role") == ASSISTANT and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                    calls[block["id"]] = block.get("arguments")
        shown = _entry_md(entry, calls, full_outputs)
        if shown is None:
            continue
        heading, parts = shown
        out.append(f"## {_md_inline(heading + (f' (label: {field_text(label)})' if label else ''))}")
        out.append("")
        for part in [*notes, *parts]:
            out.append(part)
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def export_html(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
    roots: Sequence[TreeNode] | None = None,
    leaf_id: Any = UNDEFINED,
    selected_id: Any = UNDEFINED,
) -> str:
    """:func:`iter_export_html` joined into one string."""
    return "".join(iter_export_html(header, entries, labels=labels, name=name, roots=roots, leaf_id=leaf_id, selected_id=selected_id))


def iter_export_html(
    header: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    *,
    labels: Mapping[str, str] | None = None,
    name: str | None = None,
    roots: Sequence[TreeNode] | None = None,
    leaf_id: Any = UNDEFINED,
    selected_id: Any = UNDEFINED,
) -> Iterator[str]:
    """Render a session as the HTML viewer (:mod:`pi_session.viewer`): one
    self-contained page with the whole tree, the path to the selected entry
    shown, every other entry one click away.

    Args:
        header: the session header.
        entries: every entry in file order (a root→leaf path works too: it
            is then the whole tree).
        labels: entry id → label, used when ``roots`` is not given
            (default: the label entries among ``entries``).
        name: the session name (the title; default from the first message).
        roots: the tree (``SessionManager.get_tree()``); default: built
            from ``entries``.
        leaf_id: the current leaf (marked); default: the last entry's id.
        selected_id: the entry whose path shows when the page opens (None:
            none); default: ``leaf_id``.

    Yields:
        The page in pieces (str, up to about 1 MB each). Every piece of
        session text is escaped or rendered as Markdown with raw HTML off; a
        Content-Security-Policy lets only the page's own style and script
        (by hash) and ``data:`` images in.
    """
    if roots is None:
        usable = [e for e in entries if isinstance(e.get("id"), str)]
        tree = SessionTree(usable)
        roots = tree.roots()
        if labels is not None:
            for node, _depth in tree.walk(roots):
                node.label = labels.get(node.id)
    if leaf_id is UNDEFINED:
        leaf_id = entries[-1].get("id") if entries else None
    if selected_id is UNDEFINED:
        selected_id = leaf_id
    return iter_page(header, entries, roots, leaf_id=leaf_id, selected_id=selected_id, name=name)


def export_session(
    manager: SessionManager, kind: str, path: Sequence[Mapping[str, Any]], *, full_outputs: bool = False
) -> tuple[Iterator[str], int]:
    """What ``pi-session export`` (and ``browse``'s export) writes for a
    session: ``kind`` ``"html"``, the viewer (the whole tree, ``path``'s
    last entry selected), or ``"md"``, the Markdown of ``path``. Both show
    text as every context edit of the file leaves it, on every branch
    (:func:`pi_session.viewer.model.hiding_edits`): an export is made to be
    shared, and an edit is how a user removes a secret.

    Args:
        manager: the session.
        kind: ``"html"`` or ``"md"``.
        path: the entries root→selected entry (``manager.get_branch(id)``;
            empty for none).
        full_outputs: Markdown: every line of tool and shell output (by
            default long ones are cut: :func:`fold_output`).

    Returns:
        ``(chunks, count)``: the document in str pieces, and how many
        entries it holds (all for HTML, the path's for Markdown).

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "html":
        entries = manager.get_entries()
        return (
            iter_export_html(
                manager.get_header(),
                entries,
                name=manager.get_session_name(),
                roots=manager.get_tree(),
                leaf_id=manager.get_leaf_id(),
                selected_id=path[-1].get("id") if path else None,
            ),
            len(entries),
        )
    if kind == "md":
        text = export_markdown(
            manager.get_header(),
            path,
            labels=dict(manager.tree.labels),
            name=manager.get_session_name(),
            edits=hiding_edits(manager.get_entries_of_type("context_edit"), path),
            full_outputs=full_outputs,
        )
        return iter([text]), len(path)
    raise ValueError(f"unknown export kind {kind!r} (html, md)")
