"""File operations seen in a conversation (pi's ``core/compaction/utils.js``):
which files the agent read, wrote and edited, and how they are listed at the
end of a summary.

Beyond pi, the lists a summary carries (:func:`summary_file_lists`) leave
out read "files" the conversation shows to be directories
(:func:`directory_paths`): pi lists every ``read`` path, so a read of a
directory, or one cut short mid-path, shows up as a file read."""

from __future__ import annotations

import bisect
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..entries.questions import ASSISTANT, BASH_EXECUTION, TOOL_RESULT

__all__ = [
    "FileOps",
    "js_sorted",
    "extract_file_ops_from_message",
    "extract_file_ops",
    "FileOpsCollector",
    "compute_file_lists",
    "directory_paths",
    "summary_file_lists",
    "format_file_operations",
]


def _utf16_key(value: Any) -> bytes:
    text = value if isinstance(value, str) else str(value)
    return text.encode("utf-16-be", errors="surrogatepass")


def js_sorted(values: Iterable[Any]) -> list[Any]:
    """Sort like JavaScript's default ``Array.prototype.sort``: by UTF-16
    code units (so U+FFFF sorts after an emoji, unlike Python's code-point
    order)."""
    return sorted(values, key=_utf16_key)


@dataclass
class FileOps:
    """Paths touched by tool calls, as insertion-ordered sets (dict keys).

    Attributes:
        read: paths passed to ``read``.
        written: paths passed to ``write``.
        edited: paths passed to ``edit`` (and, for cumulative tracking,
            the ``modifiedFiles`` of earlier summaries).
    """

    read: dict[Any, None] = field(default_factory=dict)
    written: dict[Any, None] = field(default_factory=dict)
    edited: dict[Any, None] = field(default_factory=dict)

    def add_read(self, path: Any) -> None:
        """Record a path that was read."""
        self.read[path] = None

    def add_written(self, path: Any) -> None:
        """Record a path that was written."""
        self.written[path] = None

    def add_edited(self, path: Any) -> None:
        """Record a path that was edited."""
        self.edited[path] = None

    def to_json(self) -> dict[str, list[Any]]:
        """``{"read", "written", "edited"}``, each sorted (the oracle's
        ``sortedOps``)."""
        return {
            "read": js_sorted(self.read),
            "written": js_sorted(self.written),
            "edited": js_sorted(self.edited),
        }

    def add_details(self, details: Any) -> None:
        """Merge an earlier summary's ``details``: ``readFiles`` into read,
        ``modifiedFiles`` into edited (lists only; other shapes, and
        object/array items, are ignored)."""
        if not isinstance(details, Mapping):
            return
        read = details.get("readFiles")
        if isinstance(read, list):
            for path in read:
                if not isinstance(path, (dict, list)):
                    self.add_read(path)
        modified = details.get("modifiedFiles")
        if isinstance(modified, list):
            for path in modified:
                if not isinstance(path, (dict, list)):
                    self.add_edited(path)


_TOOL_KINDS = {"read": FileOps.add_read, "write": FileOps.add_written, "edit": FileOps.add_edited}


def _add_op(name: Any, args: Any, file_ops: FileOps) -> None:
    if not _is_map(args):
        return
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return
    add = _TOOL_KINDS.get(name) if isinstance(name, str) else None
    if add is not None:
        add(file_ops, path)


def extract_file_ops_from_message(message: Mapping[str, Any], file_ops: FileOps) -> None:
    """Record the file operations of one message into ``file_ops`` (pi 1.6's
    ``extractFileOpsFromMessage``).

    - assistant message: the ``path`` argument of its ``read``/``write``/
      ``edit`` tool calls;
    - toolResult message (new in pi 1.6): the calls listed in its
      ``nestedCalls.calls`` (tools a tool ran, e.g. a script), each call with
      name read/write/edit and a string ``arguments.path``, whatever its
      ``status``; a call recorded with only ``argumentsBytes`` (arguments
      too large to keep) has no path and counts for nothing.

    Other roles, other tools, and calls without a non-empty string ``path``
    are ignored, as are malformed parts (a ``message`` or block that is not
    an object, ``content``/``nestedCalls``/``calls`` of the wrong type,
    ``arguments`` that are not an object). Mutates ``file_ops``; never
    raises."""
    extract_file_ops((message,), file_ops)


def _is_map(value: Any) -> bool:
    return value.__class__ is dict or (value is not None and isinstance(value, Mapping))


def extract_file_ops(messages: Iterable[Any], file_ops: FileOps) -> None:
    """:func:`extract_file_ops_from_message` for each of ``messages`` in
    order (one loop, for long conversations)."""
    add = FileOpsCollector(file_ops).add
    for message in messages:
        add(message)


class FileOpsCollector:
    """Records messages' file operations into a :class:`FileOps` (the rules
    of :func:`extract_file_ops_from_message`), and can watch for tool calls
    by id on the way: compaction planning reads the summarized messages
    once for both.

    Attributes:
        file_ops: where the paths go.
        watched_call_ids: tool-call ids to look out for.
        watched_call_seen: an assistant message given to :meth:`add` made a
            tool call whose (string) id is in ``watched_call_ids``.
    """

    def __init__(self, file_ops: FileOps, watched_call_ids: frozenset[str] | set[str] = frozenset()) -> None:
        self.file_ops = file_ops
        self.watched_call_ids = watched_call_ids
        self.watched_call_seen = False
        # the path sets by tool name (what _add_op does, inlined in add)
        self._targets = {"read": file_ops.read, "write": file_ops.written, "edit": file_ops.edited}

    def add(self, message: Any) -> None:
        """Record one message's file operations; never raises."""
        # ``x.__class__ is dict`` first: the common case without a call
        if not (message.__class__ is dict or _is_map(message)):
            return
        role = message.get("role")
        if role == ASSISTANT:
            content = message.get("content")
            if not isinstance(content, list):
                return
            targets = self._targets
            for block in content:
                if not (block.__class__ is dict or _is_map(block)) or block.get("type") != "toolCall":
                    continue
                if self.watched_call_ids and not self.watched_call_seen:
                    call_id = block.get("id")
                    self.watched_call_seen = isinstance(call_id, str) and call_id in self.watched_call_ids
                if "arguments" not in block or "name" not in block:
                    continue
                name = block.get("name")
                target = targets.get(name) if isinstance(name, str) else None
                if target is None:
                    continue
                args = block.get("arguments")
                if args.__class__ is dict or _is_map(args):
                    path = args.get("path")
                    if isinstance(path, str) and path:
                        target[path] = None
        elif role == TOOL_RESULT:
            nested = message.get("nestedCalls")
            if nested is None:
                return
            calls = nested.get("calls") if _is_map(nested) else None
            for call in calls if isinstance(calls, list) else ():
                if _is_map(call):
                    _add_op(call.get("name"), call.get("arguments"), self.file_ops)


def compute_file_lists(file_ops: FileOps) -> dict[str, list[Any]]:
    """Final file lists (pi's ``computeFileLists``).

    Returns:
        ``{"readFiles": [...], "modifiedFiles": [...]}``: modified = edited ∪
        written; readFiles = read paths not modified. Both sorted by UTF-16
        code units.
    """
    modified = dict.fromkeys([*file_ops.edited, *file_ops.written])
    read_only = [p for p in file_ops.read if p not in modified]
    return {"readFiles": js_sorted(read_only), "modifiedFiles": js_sorted(modified)}


_DIR_TOOLS = frozenset({"ls", "find"})
"""pi tools whose ``path`` argument is a directory (what to list, where to search)."""
_DIR_RESULT_RE = re.compile(r"EISDIR|\bis a directory\b", re.I)
_SHELL_SPLIT_RE = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")


def _norm_path(path: str) -> str:
    """``path`` without ``.`` and ``..`` steps and trailing slashes (``/`` stays)."""
    path = path.strip()
    return posixpath.normpath(path) if path else path


def _shell_directories(command: str, output: str | None) -> set[str]:
    """Paths a shell command treats as directories: the target of ``cd`` /
    ``pushd``, the roots of ``find`` (its words before the first
    expression), what ``mkdir`` creates and what ``ls``/``tree`` list
    (unless ``output`` shows the path listed as a file: a line that is the
    path, or ends with it as ``ls -l`` writes it)."""
    dirs: set[str] = set()
    for part in _SHELL_SPLIT_RE.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        if not words:
            continue
        prog = words[0].rsplit("/", 1)[-1]
        args = words[1:]
        if prog in ("cd", "pushd"):
            targets = [a for a in args if not a.startswith("-")][:1]
        elif prog == "find":
            targets = []
            for a in args:
                if a.startswith(("-", "(", "!")):
                    break
                targets.append(a)
        elif prog == "mkdir":
            targets = [a for a in args if not a.startswith("-")]
        elif prog in ("ls", "tree"):
            lines = {line.strip() for line in (output or "").splitlines()}
            targets = [
                a
                for a in args
                if not a.startswith("-")
                and a not in lines
                and not any(line.endswith(" " + a) for line in lines)
            ]
        else:
            continue
        dirs.update(_norm_path(t) for t in targets if t and not any(c in t for c in "*?[$`"))
    return dirs


def directory_paths(messages: Iterable[Any], paths: Iterable[Any]) -> set[str]:
    """The read paths among ``paths`` that the conversation shows to be
    directories (beyond pi), as given:

    - a path ending with ``/``;
    - a path another of ``paths`` lies under (``/Users/dev`` when
      ``/Users/dev/project/a.ts`` is there too);
    - a ``read`` that failed saying the path is a directory (``EISDIR``);
    - a path named as a directory by a tool call in ``messages``: the
      ``path`` of pi's ``ls`` and ``find`` tools, and in ``bash`` commands
      the target of ``cd``, the roots of ``find``, what ``mkdir`` creates
      and what ``ls``/``tree`` list (see :func:`_shell_directories`); the
      same for a command the user ran (a ``bashExecution`` message).

    Paths are compared without ``.``/``..`` steps and trailing slashes, as
    strings (a relative path matches only the same relative path). Never
    raises on malformed messages."""
    given = [p for p in paths if isinstance(p, str) and p.strip()]
    normalized = {p: _norm_path(p) for p in given}
    named: set[str] = set()
    calls: dict[str, tuple[str, Any]] = {}
    for message in messages:
        if not _is_map(message):
            continue
        role = message.get("role")
        if role == ASSISTANT and isinstance(message.get("content"), list):
            for block in message["content"]:
                if not _is_map(block) or block.get("type") != "toolCall":
                    continue
                name, args = block.get("name"), block.get("arguments")
                if isinstance(block.get("id"), str):
                    calls[block["id"]] = (name if isinstance(name, str) else "", args)
                if name in _DIR_TOOLS and _is_map(args) and isinstance(args.get("path"), str):
                    named.add(_norm_path(args["path"]))
        elif role == BASH_EXECUTION and isinstance(message.get("command"), str):
            output = message.get("output")
            named |= _shell_directories(message["command"], output if isinstance(output, str) else None)
        elif role == TOOL_RESULT:
            call_id = message.get("toolCallId")
            call: tuple[str, Any] = calls.get(call_id, ("", None)) if isinstance(call_id, str) else ("", None)
            name, args = call
            if not _is_map(args):
                continue
            text = _result_text(message.get("content"))
            if name == "bash" and isinstance(args.get("command"), str):
                named |= _shell_directories(args["command"], text)
            elif (
                name == "read"
                and message.get("isError") is True
                and isinstance(args.get("path"), str)
                and _DIR_RESULT_RE.search(text)
            ):
                named.add(_norm_path(args["path"]))
    ordered = sorted(set(normalized.values()))
    out: set[str] = set()
    for path, norm in normalized.items():
        under = norm.rstrip("/") + "/"
        # the first path sorting at or after "norm/" starts with it if any does
        at = bisect.bisect_left(ordered, under)
        parent = at < len(ordered) and ordered[at].startswith(under)
        if path.rstrip().endswith("/") or norm in named or parent:
            out.add(path)
    return out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if _is_map(b) and isinstance(b.get("text"), str))
    return ""


def summary_file_lists(file_ops: FileOps, messages: Iterable[Any]) -> dict[str, list[Any]]:
    """The file lists a summary carries (beyond pi): :func:`compute_file_lists`
    with the read paths that ``messages`` (the summarized conversation)
    show to be directories left out (:func:`directory_paths`). pi's own
    lists (:func:`compute_file_lists`) keep them."""
    lists = compute_file_lists(file_ops)
    paths = [*file_ops.read, *file_ops.written, *file_ops.edited]
    dirs = directory_paths(messages, paths)
    if dirs:
        lists["readFiles"] = [p for p in lists["readFiles"] if p not in dirs]
    return lists


def format_file_operations(read_files: list[Any], modified_files: list[Any]) -> str:
    """The file lists appended to a summary: ``<read-files>`` and
    ``<modified-files>`` blocks, one path per line, separated by a blank
    line and preceded by two newlines; ``""`` when both lists are empty."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(map(str, read_files)) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(map(str, modified_files)) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
