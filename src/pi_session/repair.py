"""Checking and repairing session files (beyond pi).

Size (over 500 lines): check and repair share one classification of problems (per line, on top of the storage package's one line scanner, :mod:`pi_session.storage.scan`; per entry; per tree).

:func:`check_session` lists every problem of a session file with its line
number: damaged lines (blank, not JSON, NUL runs, invalid UTF-8, a BOM, CRLF
line ends, a truncated record with a complete one glued after it, a record
split over several lines by raw newlines in its strings, a torn last line,
records that cannot be entries) and tree problems (duplicate ids,
parentId cycles and self-parents, orphans, labels of missing entries,
compactions whose first kept entry is not on their path).

:func:`repair_session` fixes the storage problems and nothing else:

- every valid line is written back byte for byte;
- a recoverable line (BOM, NUL runs, CRLF, invalid UTF-8, glued records, a
  complete last line without its newline) is written clean;
- a record split over several lines (``split-record``, see
  :func:`pi_session.storage.rejoin_split`) is written on one line, its
  newlines escaped; its pieces never go to the side file;
- every other line (and the truncated part of a glued line) is removed from
  the file and kept, byte for byte, in a side file ``<file>.rejected-<n>``;
- the rewrite is atomic (:func:`pi_session.storage.atomic_rewrite`) and the
  original is kept as ``<file>.repair.bak``.

A temp file left beside the session by an interrupted rewrite or creation
(``.<file>.<8 hex>.tmp``) is reported as ``leftover-temp``; repair deletes
it when that cannot lose anything: when it is a second name of the session
file itself, or when it has been untouched for 10 minutes and either starts
with a header of the same session or holds only the start of the session's
own first line (an unfinished rewrite: the session file was never replaced,
so it is whole). Any other temp file is reported and kept.

Tree problems are reported, never "fixed": deciding which of two entries
with one id is right, or where a cycle should be cut, is the user's call
(pi-session's reader already cuts cycles safely at read time).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .context import EDITABLE_ROLES
from .storage import (
    LineScanner,
    ScannedLine,
    SessionFile,
    SessionFileBuilder,
    SessionFileError,
    _is_regular,
    _loads_js,
    atomic_rewrite,
    iter_lines,
    recover_line,
    scan_session_file,
    write_side_file,
)
from .problems import ProblemKind
from .records import ENTRY_TYPES, HEADER_TYPE, UNDEFINED, StrPath, header_version, is_session_header
from .tree import SessionTree

__all__ = ["Problem", "CheckReport", "RepairResult", "STALE_TEMP_SECONDS", "check_session", "leftover_temps", "repair_session"]


@dataclass(frozen=True)
class Problem:
    """One problem of a session file.

    Attributes:
        line: 1-based line number (None for a problem of the whole file).
        kind: a :data:`pi_session.problems.ProblemKind`: storage kinds ``blank``, ``invalid-json``, ``nul-bytes``,
            ``invalid-utf8``, ``bom``, ``crlf``, ``glued``, ``split-record``
            (reported on its first line, the message names the range
            ``lines 4-6``), ``torn-tail``, ``no-newline``, ``not-object``, ``no-type``, ``no-id``,
            ``extra-header``; tree kinds ``duplicate-id``, ``cycle``,
            ``self-parent``, ``orphan``, ``label-target-missing``,
            ``compaction-first-kept-off-path``; structure warnings (never
            fixable) ``bad-header`` (cwd/timestamp not a string or missing,
            version not a number), ``unknown-version`` (newer than 3),
            ``bad-timestamp`` (not an ISO date), ``bad-message`` (a message
            entry's message is not an object), ``unknown-role``,
            ``bad-content`` (content of the wrong type for the role),
            ``bad-context-edit`` (a pi 1.6 context edit without a string
            targetId or a valid replacement), ``empty`` (a 0-byte file);
            warnings (in :attr:`CheckReport.warnings`, not problems)
            ``unknown-type`` (an entry type this tool does not know: kept,
            left out of the context), ``idle-context-edit`` (an edit whose
            target is missing, itself or not editable: it changes nothing); file
            kind ``leftover-temp`` (a temp file of an interrupted rewrite
            beside the session; ``line`` is None); warning kind
            ``lone-surrogate`` (only in :attr:`CheckReport.warnings`).
        message: one line saying what is wrong.
        fixable: True when :func:`repair_session` fixes it.
        entry_id: the entry concerned (tree problems).
    """

    line: int | None
    kind: ProblemKind
    message: str
    fixable: bool
    entry_id: str | None = None

    def format(self, path: StrPath) -> str:
        """``<path>:<line>: <message>`` (``<path>: <message>`` without a line)."""
        return f"{path}:{self.line}: {self.message}" if self.line else f"{path}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """``{"line", "kind", "message", "fixable", "entryId"}``."""
        return {"line": self.line, "kind": self.kind, "message": self.message, "fixable": self.fixable, "entryId": self.entry_id}


@dataclass
class CheckReport:
    """What :func:`check_session` found.

    Attributes:
        path: the file.
        problems: every problem, by line.
        notes: facts that are not problems (an old version, an empty file).
        warnings: things worth knowing that are not problems of the file and
            do not make it not ``ok``: ``lone-surrogate`` (a string holds
            half of a UTF-16 surrogate pair, e.g. an emoji a tool cut in
            two; pi reads and sends it, pi-session sends U+FFFD in its
            place; never changed, not even by repair), by line.
        line_count: lines in the file; entry_count: usable entries;
        version: the header's version (0 for an empty file); size: bytes.
    """

    path: Path
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    line_count: int = 0
    entry_count: int = 0
    version: int = 0
    size: int = 0

    @property
    def ok(self) -> bool:
        """True when there is no problem at all."""
        return not self.problems

    @property
    def fixable(self) -> list[Problem]:
        """The problems :func:`repair_session` fixes."""
        return [p for p in self.problems if p.fixable]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, like the rest of the CLI)."""
        return {
            "path": str(self.path),
            "ok": self.ok,
            "version": self.version,
            "lines": self.line_count,
            "entries": self.entry_count,
            "sizeBytes": self.size,
            "problems": [p.to_json() for p in self.problems],
            "warnings": [w.to_json() for w in self.warnings],
            "notes": list(self.notes),
        }


@dataclass
class RepairResult:
    """What :func:`repair_session` did.

    Attributes:
        path: the file.
        changed: False when there was nothing to fix (nothing written).
        backup: ``<file>.repair.bak`` holding the original bytes, or None.
        rejected: the side file holding removed lines and fragments, or None.
        recovered_lines: line numbers (of the original) written back clean.
        removed_lines: line numbers (of the original) removed from the file.
        before: the check before; after: the check of the repaired file
            (its problems are what repair does not fix).
        removed_temps: leftover temp files deleted (see the module docstring).
    """

    path: Path
    changed: bool
    backup: Path | None
    rejected: Path | None
    recovered_lines: list[int]
    removed_lines: list[int]
    before: CheckReport
    after: CheckReport
    removed_temps: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": str(self.path),
            "changed": self.changed,
            "backup": str(self.backup) if self.backup else None,
            "rejected": str(self.rejected) if self.rejected else None,
            "recoveredLines": self.recovered_lines,
            "removedLines": self.removed_lines,
            "removedTemps": [str(t) for t in self.removed_temps],
            "before": self.before.to_json(),
            "after": self.after.to_json(),
        }


# --------------------------------------------------------------------------
# the line scan shared by check and repair


@dataclass
class _LineAction:
    """What repair does with one line: ``out`` replaces it in the file
    (empty: removed), ``rejected`` goes to the side file."""

    out: list[bytes]
    rejected: bytes | None
    removed: bool


def _split_glued(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """All records of a line holding glued records: returns (clean record
    lines in order, unusable fragments). Iterative, so a line of thousands
    of glued records does not recurse."""
    records: list[bytes] = []
    junk: list[bytes] = []
    rest: bytes | None = data
    while rest:
        rec = recover_line(rest)
        if rec is None:
            junk.append(rest)
            break
        if isinstance(rec.record, dict):
            records.append(rec.clean)
        else:
            junk.append(rec.clean)
        rest = rec.fragment
    records.reverse()
    junk.reverse()
    return records, junk


_JSON_TYPE = {type(None): "null", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _entry_issue(record: Any, header: dict[str, Any]) -> tuple[ProblemKind, str] | None:
    """Why a record after the header cannot be an entry, or None."""
    if not isinstance(record, dict):
        return "not-object", "not an object"
    rtype = record.get("type")
    if rtype == HEADER_TYPE:
        return "extra-header", "a second session header (pi would read it as an entry)"
    if not isinstance(rtype, str):
        if "type" in record:
            return "no-type", f'record "type" is not a string (it is {_json_type(rtype)})'
        return "no-type", 'record has no "type"'
    if header_version(header) >= 2 and not isinstance(record.get("id"), str):
        if "id" in record and record["id"] is not None:
            return "no-id", f"{rtype} entry id is not a string (it is {_json_type(record['id'])})"
        return "no-id", f"{rtype} entry has no id"
    return None


def _json_type(value: Any) -> str:
    """The JSON type name of a parsed value (``object`` for dicts)."""
    return "object" if isinstance(value, dict) else _JSON_TYPE.get(type(value), "value")


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a surrogate code point: only a line holding one can
hold a lone surrogate (raw surrogate bytes are invalid UTF-8, read as U+FFFD)."""


def _surrogate_warning(line_no: int, raw: bytes, record: dict[str, Any], is_header: bool) -> Problem | None:
    """The ``lone-surrogate`` warning for one record, or None."""
    if b"\\u" not in raw or not _SURROGATE_ESCAPE.search(raw):
        return None
    from .text import find_lone_surrogates

    found = find_lone_surrogates(record)
    if not found:
        return None
    where, index, code = found[0]
    if len(where) > 200:  # a field deep inside nested data: keep the line readable
        where = where[:80] + "…" + where[-100:]
    eid = record.get("id") if isinstance(record.get("id"), str) else None
    what = "session header" if is_header else f"entry {eid}"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return Problem(
        line_no,
        "lone-surrogate",
        f"{what}: {where} holds a lone UTF-16 surrogate ({code} at character {index}, half of a character){more}; "
        "pi-session sends it to providers as U+FFFD and leaves the file as it is",
        False,
        None if is_header else eid,
    )


class _Classifier:
    """What check and repair make of each line the storage scanner
    classified (:class:`pi_session.storage.ScannedLine`): the storage
    problems (worded for check, saying what repair does), repair's action
    for every line not kept as it is, and (with ``warnings``) a
    ``lone-surrogate`` warning for every usable record that holds a lone
    UTF-16 surrogate. Feed :meth:`take` every scanned line in order."""

    def __init__(self, path: Path, warnings: list[Problem] | None = None) -> None:
        self.path = path
        self.warnings = warnings
        self.problems: list[Problem] = []
        self.actions: dict[int, _LineAction] = {}
        self.header: dict[str, Any] | None = None

    def take(self, s: ScannedLine) -> None:
        """Classify one scanned line (see the class docstring).

        Raises:
            SessionFileError: the first record is not a session header.
        """
        problems, actions = self.problems, self.actions
        line_no, raw, had_newline, joined = s.line, s.raw, s.had_newline, s.split
        if joined is not None:
            for piece_no in range(joined.first_line + 1, joined.last_line + 1):
                actions[piece_no] = _LineAction([], None, False)  # written with the first line

        def drop(kind: ProblemKind, message: str) -> None:
            problems.append(Problem(line_no, kind, f"{message}; repair moves it to a side file", True))
            actions[line_no] = _LineAction([], raw if raw else None, True)
            if joined is not None:
                for piece_no in range(joined.first_line + 1, joined.last_line + 1):
                    actions[piece_no] = _LineAction([], None, True)

        if s.status == "blank":
            problems.append(Problem(line_no, "blank", "blank line; repair removes it", True))
            actions[line_no] = _LineAction([], raw if raw.strip() else None, True)
            return
        if s.status == "damaged":
            assert s.problem is not None  # torn-tail for an unterminated last line
            drop(s.problem.kind, s.problem.message)
            return
        record = s.record
        if not isinstance(record, dict):
            drop("not-object", f"JSON {_JSON_TYPE.get(type(record), 'value')} instead of an object")
            return
        clean: list[bytes] = [raw]
        rejected: bytes | None = None
        if joined is not None:
            clean = [joined.clean]
            problems.append(Problem(line_no, "split-record", joined.problem().message + "; repair writes it on one line", True))
        elif s.problem is not None and s.problem.recovered:
            kind = s.problem.kind
            if kind == "glued":
                # the cleaned line is the fragment followed by the complete record;
                # the fragment may hold complete records of its own
                records, junk = _split_glued((s.fragment or b"") + (s.clean or b""))
                # the complete record is what the scanner read; earlier ones must be usable entries
                usable = []
                for rec_bytes in records[:-1]:
                    rec = _loads_js(rec_bytes)
                    if self.header is not None and _entry_issue(rec, self.header) is None:
                        usable.append(rec_bytes)
                    else:
                        junk.append(rec_bytes)
                records = usable + records[-1:]
                clean = records
                rejected = b"\n".join(junk) if junk else None
                extra = f" ({len(records)} records recovered)" if len(records) > 1 else ""
                problems.append(Problem(line_no, kind, s.problem.message + extra + "; repair keeps the complete record(s) and moves the rest to a side file", True))
            else:
                clean = [s.clean if s.clean is not None else raw]
                problems.append(Problem(line_no, kind, s.problem.message + "; repair writes the record clean", True))
        elif raw.endswith(b"\r"):
            clean = [raw.rstrip(b"\r")]
            problems.append(Problem(line_no, "crlf", "CRLF line end; repair writes a plain newline", True))
        # what kind of record
        is_header = self.header is None
        if self.header is None:
            if not is_session_header(record):
                raise SessionFileError(self.path, "not a pi session: the first record is not a session header", line=line_no)
            self.header = record
        else:
            issue = _entry_issue(record, self.header)
            if issue is not None:
                drop(*issue)
                return
        if self.warnings is not None:
            warning = _surrogate_warning(line_no, clean[-1] if joined is not None else raw, record, is_header)
            if warning is not None:
                self.warnings.append(warning)
        if not had_newline:
            problems.append(Problem(s.end_line, "no-newline", "last line has no newline; repair adds one", True))
            actions[line_no] = _LineAction(clean, rejected, False)
        elif clean != [raw] or rejected is not None:
            actions[line_no] = _LineAction(clean, rejected, False)


CURRENT_VERSION = 3
"""The newest session version pi-session knows (pi 0.73's ``CURRENT_SESSION_VERSION``)."""

_MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary", "hookMessage", "system"}
)
"""Roles of agent messages. ``hookMessage`` is the version-2 name of
``custom``; migration renames it, and a version-3 file still holding one is
accepted too (pi reads it without error)."""

_BLOCK_TYPES = {
    "user": ("text", "image"),
    "assistant": ("text", "thinking", "toolCall"),
    "toolResult": ("text", "image"),
    "custom": ("text", "image"),
    "hookMessage": ("text", "image"),
}
_STRING_CONTENT_OK = frozenset({"user", "custom", "hookMessage"})


def _content_issue(role: str, content: Any) -> str | None:
    """Why a message's ``content`` does not have the shape its role needs,
    or None. user/custom: a string or an array of text/image blocks;
    assistant: an array of text/thinking/toolCall blocks; toolResult: an
    array of text/image blocks. Blocks must be objects with a string
    ``type``; text blocks need a string ``text``, toolCall blocks an object
    ``arguments`` and a string ``name``. Unknown block types are accepted
    (extensions), except that they must still be objects with a type."""
    if role not in _BLOCK_TYPES:
        return None
    if isinstance(content, str):
        if role in _STRING_CONTENT_OK:
            return None
        return f"{role} message content is a string, expected an array of blocks"
    if not isinstance(content, list):
        what = "a string or an array of blocks" if role in _STRING_CONTENT_OK else "an array of blocks"
        got = "missing" if content is _ABSENT else f"{_json_type(content)}"
        return f"{role} message content is {got}, expected {what}"
    for n, block in enumerate(content):
        if not isinstance(block, dict):
            return f"{role} message content block {n} is {_json_type(block)}, not an object"
        btype = block.get("type")
        if not isinstance(btype, str):
            return f"{role} message content block {n} has no string type"
        if btype == "text" and not isinstance(block.get("text"), str):
            return f"{role} message text block {n} has a text that is not a string"
        if btype == "toolCall" and role == "assistant":
            if not isinstance(block.get("name"), str):
                return f"tool call block {n} has a name that is not a string"
            if not isinstance(block.get("arguments"), dict):
                return f"tool call block {n} has arguments that are not an object"
    return None


_ABSENT: Any = UNDEFINED


def _structure_problems(
    header: dict[str, Any], entries: list[dict[str, Any]], line_of: dict[int, int], header_line: int | None
) -> list[Problem]:
    """Warnings (never fixed) for records pi can read but that do not have
    the shape of a session: header fields, unknown versions, messages that
    are not objects or have unknown roles, content of the wrong type, and
    timestamps that do not parse as ISO dates."""
    from .timestamps import iso_to_ms

    problems: list[Problem] = []
    by_id: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("id").__class__ is str:
            by_id.setdefault(entry["id"], entry)
    for key in ("cwd", "timestamp"):
        if key in header and not isinstance(header[key], str):
            problems.append(
                Problem(header_line, "bad-header", f"session header {key} is {_json_type(header[key])}, not a string", False)
            )
        elif key not in header:
            problems.append(Problem(header_line, "bad-header", f"session header has no {key}", False))
    ts = header.get("timestamp")
    if isinstance(ts, str) and iso_to_ms(ts) is None:
        problems.append(Problem(header_line, "bad-timestamp", f"session header timestamp {ts!r} is not an ISO date", False))
    version = header.get("version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        if version > CURRENT_VERSION:
            problems.append(
                Problem(
                    header_line,
                    "unknown-version",
                    f"session version {version} is newer than this tool knows ({CURRENT_VERSION}); it is read as version {CURRENT_VERSION}",
                    False,
                )
            )
    elif version is not None:
        problems.append(Problem(header_line, "bad-header", f"session header version is {_json_type(version)}, not a number", False))
    for entry in entries:
        eid = entry.get("id")
        line = line_of.get(id(entry))
        ts = entry.get("timestamp", _ABSENT)
        if ts is _ABSENT:
            problems.append(Problem(line, "bad-timestamp", f"entry {eid} has no timestamp", False, eid))
        elif not isinstance(ts, str) or iso_to_ms(ts) is None:
            shown = ts if isinstance(ts, str) else _json_type(ts)
            problems.append(Problem(line, "bad-timestamp", f"entry {eid} timestamp {shown!r} is not an ISO date", False, eid))
        etype = entry.get("type")
        if etype == "message":
            msg = entry.get("message", _ABSENT)
            if not isinstance(msg, dict):
                got = "missing" if msg is _ABSENT else f"{_json_type(msg)}, not an object"
                problems.append(Problem(line, "bad-message", f"message entry {eid}: message is {got}", False, eid))
                continue
            role = msg.get("role", _ABSENT)
            if not (isinstance(role, str) and role in _MESSAGE_ROLES):
                got = "missing" if role is _ABSENT else repr(role) if isinstance(role, str) else _json_type(role)
                problems.append(
                    Problem(line, "unknown-role", f"message entry {eid}: role {got} is not a known message role (pi leaves it out of the context)", False, eid)
                )
                continue
            issue = _content_issue(role, msg.get("content", _ABSENT))
            if issue is None and role in ("branchSummary", "compactionSummary") and not isinstance(msg.get("summary"), str):
                issue = f"{role} message summary is not a string"
            if issue is not None:
                problems.append(Problem(line, "bad-content", f"message entry {eid}: {issue}", False, eid))
        elif etype == "custom_message":
            issue = _content_issue("custom", entry.get("content", _ABSENT))
            if issue is not None:
                problems.append(Problem(line, "bad-content", f"custom_message entry {eid}: {issue}", False, eid))
        elif etype == "context_edit":
            issue = _context_edit_issue(entry)
            if issue is not None:
                problems.append(Problem(line, "bad-context-edit", f"context_edit entry {eid}: {issue}", False, eid))
            else:
                idle = _idle_edit_reason(entry, by_id)
                if idle is not None:
                    problems.append(Problem(line, "idle-context-edit", f"context_edit entry {eid}: {idle}", False, eid))
        elif etype not in ENTRY_TYPES:
            shown = repr(etype) if isinstance(etype, str) else _json_type(etype)
            problems.append(
                Problem(
                    line,
                    "unknown-type",
                    f"entry {eid}: type {shown} is not a known entry type; it is kept in the file and left out of the context (as pi does)",
                    False,
                    eid,
                )
            )
    return problems


def _idle_edit_reason(entry: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str | None:
    """Why a well-formed context edit can never change what the model sees
    (its target is missing, itself, or an entry without editable content;
    omitting works on any entry that contributes messages), or None."""
    target_id = entry["targetId"]
    target = by_id.get(target_id)
    if target is None:
        return f"its target {target_id!r} is not in the file (the edit changes nothing)"
    if target is entry:
        return "it targets itself (the edit changes nothing)"
    ttype = target.get("type")
    if entry.get("replacement") is None:
        if ttype in ("message", "custom_message", "branch_summary", "compaction"):
            return None
        return f"its target {target_id} is a {ttype} entry, which shows the model nothing to omit (the edit changes nothing)"
    if ttype == "custom_message":
        return None
    if ttype == "message":
        msg = target.get("message")
        role = msg.get("role") if isinstance(msg, dict) else None
        if role.__class__ is str and role in EDITABLE_ROLES:
            return None
        return f"its target {target_id} is a {role!r} message, whose content an edit does not replace (the edit changes nothing)"
    return f"its target {target_id} is a {ttype} entry, whose content an edit does not replace (the edit changes nothing)"


def _context_edit_issue(entry: dict[str, Any]) -> str | None:
    """What is wrong with a context_edit entry for pi 1.6, or None."""
    if not isinstance(entry.get("targetId"), str):
        return "targetId is not a string (the edit applies to nothing)"
    if "replacement" not in entry:
        return "no replacement (pi cannot build any context with this edit; pi-session ignores it)"
    replacement = entry["replacement"]
    if replacement is None:
        return None
    if not isinstance(replacement, dict) or not isinstance(replacement.get("content"), (str, list)):
        return "replacement is neither null nor {\"content\": string or array} (the target's content is dropped)"
    content = replacement["content"]
    if isinstance(content, list) and not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content):
        return "replacement content holds items that are not content blocks (objects with a \"type\")"
    return None


def _in_index(value: Any, index: Any) -> bool:
    """Whether ``value`` is a string id held by ``index`` (arrays and objects
    never are: they are not hashable, and pi's Map never finds them)."""
    return value.__class__ is str and value in index


def _tree_problems(sf: SessionFile) -> tuple[list[Problem], int, int, list[str]]:
    """Tree problems of the (migrated) entries of ``sf``: (problems, entry
    count, version, notes)."""
    notes: list[str] = []
    if sf.header is None:
        return [], 0, 0, ["empty file: pi starts a new session in it"]
    version = sf.version
    if sf.migrated_from is not None:
        notes.append(f"version {sf.migrated_from} file (read as version 3; `pi-session migrate` rewrites it)")
    line_of = {id(r): n for r, n in zip(sf.records, sf.record_lines)}
    entries = sf.entries
    problems: list[Problem] = _structure_problems(sf.header, entries, line_of, line_of.get(id(sf.header), 1))
    seen: dict[str, int] = {}
    for entry in entries:
        eid = entry["id"]
        line = line_of.get(id(entry))
        if eid in seen:
            problems.append(
                Problem(line, "duplicate-id", f"entry id {eid} also on line {seen[eid]}; lookups by id find the later one (as in pi, whose id index keeps the last)", False, eid)
            )
        seen[eid] = line or 0
    tree = SessionTree(entries)
    by_id = tree.by_id
    for tp in tree.find_cycles():
        cycle_entry = by_id.get(tp.entry_id)
        problems.append(Problem(line_of.get(id(cycle_entry)) if cycle_entry else None, tp.kind, tp.message, False, tp.entry_id))
    for entry in entries:
        eid = entry["id"]
        line = line_of.get(id(entry))
        parent = entry.get("parentId")
        if parent is not None and not _in_index(parent, by_id) and parent != eid:
            problems.append(
                Problem(line, "orphan", f"entry {eid} has parentId {parent!r}, which is not in the file; it is read as a root", False, eid)
            )
        etype = entry.get("type")
        if etype == "label" and not _in_index(entry.get("targetId"), by_id):
            problems.append(
                Problem(line, "label-target-missing", f"label {eid} targets {entry.get('targetId')!r}, which is not in the file", False, eid)
            )
        elif etype == "compaction" and entry is by_id.get(eid):
            kept = entry.get("firstKeptEntryId")
            path_ids = {e["id"] for e in tree.branch(eid) if e is not entry}
            if kept != eid and not _in_index(kept, path_ids):  # its own id: pi 1.6's "keep nothing"
                where = "not in the file" if not _in_index(kept, by_id) else "not on its path"
                problems.append(
                    Problem(
                        line,
                        "compaction-first-kept-off-path",
                        f"compaction {eid} keeps from {kept!r}, which is {where}: only its summary and later entries reach the model",
                        False,
                        eid,
                    )
                )
    return problems, len(entries), version, notes


WARNING_KINDS: frozenset[ProblemKind] = frozenset(("unknown-type", "idle-context-edit"))
"""Kinds :func:`check_session` reports as warnings: records pi reads without
harm (an entry type from a newer pi, an edit that changes nothing)."""

STALE_TEMP_SECONDS = 600
"""A temp file untouched this long (seconds) is no rewrite in progress."""


def _first_line(path: Path, limit: int = 1 << 20) -> bytes:
    """The first line of ``path`` with its newline, at most ``limit`` bytes."""
    with open(path, "rb") as f:
        return f.readline(limit)


def _header_session_id(line: bytes) -> str | None:
    """The session id of a complete header line, else None."""
    if not line.endswith(b"\n"):
        return None
    header = _loads_js(line.strip().lstrip(b"\xef\xbb\xbf"))  # _NOT_JSON when not JSON
    return header["id"] if is_session_header(header) else None


def leftover_temps(path: StrPath, *, now: float | None = None) -> list[tuple[Path, bool, str]]:
    """Temp files an interrupted write left beside a session file.

    :func:`pi_session.storage.create_file` and
    :func:`pi_session.storage.atomic_rewrite` write ``.<name>.<8 hex>.tmp``
    beside the file (beside the real file when ``path`` is a symlink)
    first; a process killed before the rename (or the last unlink) leaves it.

    Args:
        path: the session file (a symlink is followed).
        now: the current time in seconds since the epoch (tests).

    Returns:
        ``(temp path, safe to delete, why)`` for each, sorted by name;
        anything of that name that is not a regular file is listed as kept.
        Safe means deleting it cannot lose data:

        - a second hard link to the session file (which stays), or
        - untouched for :data:`STALE_TEMP_SECONDS` (so no rewrite is still
          writing it), and either its first line is a complete header with
          the session's id (a rewrite or migration of this session whose
          rename never happened, so the session file is whole) or all it
          holds is the start of the session's own first line (a rewrite
          killed before it finished the header).

        The session file itself is never listed, even when its name looks
        like a temp file's. Never raises.
    """
    if not os.fspath(path):
        return []
    p = Path(os.path.realpath(path))
    if not p.name:
        return []
    pattern = re.compile(rf"\.{re.escape(p.name)}\.[0-9a-f]{{8}}\.tmp")
    try:
        names = sorted(n for n in os.listdir(p.parent) if pattern.fullmatch(n))
    except OSError:
        return []
    try:
        session_st: os.stat_result | None = os.stat(p)
    except OSError:
        session_st = None
    now = time.time() if now is None else now
    found: list[tuple[Path, bool, str]] = []
    for name in names:
        tmp = p.parent / name
        try:
            st = os.lstat(tmp)
            if not _is_regular(st.st_mode):
                found.append((tmp, False, "not a regular file; kept"))
                continue
            if session_st is not None and (st.st_dev, st.st_ino) == (session_st.st_dev, session_st.st_ino):
                found.append((tmp, True, "a second name of the session file (its creation was interrupted after the file appeared)"))
                continue
            age = now - st.st_mtime
            if age < STALE_TEMP_SECONDS:
                found.append((tmp, False, f"modified {age:.0f}s ago: may be a rewrite in progress; kept"))
                continue
            if session_st is not None:
                head = _first_line(tmp)
                session_head = _first_line(p)
                if not head.endswith(b"\n") and st.st_size == len(head) and session_head.startswith(head):
                    found.append((tmp, True, f"an unfinished rewrite that wrote only the start of the header ({st.st_size} bytes)"))
                    continue
                sid = _header_session_id(head)
                if sid is not None and sid == _header_session_id(session_head):
                    found.append((tmp, True, f"an unfinished rewrite ({st.st_size} bytes); the session file was never replaced and is whole"))
                    continue
            found.append((tmp, False, f"{st.st_size} bytes without this session's header; kept (inspect it)"))
        except OSError as exc:
            found.append((tmp, False, f"cannot be read ({exc.strerror or exc}); kept"))
    return found


def _temp_problems(path: Path) -> list[Problem]:
    return [
        Problem(None, "leftover-temp", f"leftover temp file {tmp.name}: {why}", safe)
        for tmp, safe, why in leftover_temps(path)
    ]


def check_session(path: StrPath) -> CheckReport:
    """Find every problem of a session file; never modifies it. The file is
    read once (:func:`pi_session.storage.scan_session_file`).

    Args:
        path: the ``.jsonl`` file.

    Returns:
        A :class:`CheckReport` (problems sorted by line; file-level ones first).

    Raises:
        SessionFileError: the file cannot be read, is not a regular file, or
            its first record is not a session header.
    """
    return _check(Path(path))[0]


def _check(p: Path) -> tuple[CheckReport, dict[int, _LineAction], SessionFile]:
    """:func:`check_session`, also returning repair's actions and the
    session as read."""
    warnings: list[Problem] = []
    classifier = _Classifier(p, warnings)
    sf = scan_session_file(p, classifier.take, migrate=True)
    return _report(p, sf, classifier, warnings), classifier.actions, sf


def _report(p: Path, sf: SessionFile, classifier: _Classifier, warnings: list[Problem]) -> CheckReport:
    """The :class:`CheckReport` of a session read (``sf``) and classified
    line by line (``classifier``), plus leftover temp files beside it."""
    tree_problems, entry_count, version, notes = _tree_problems(sf)
    # what pi reads without harm is a warning, not a problem of the file
    warnings.extend(pr for pr in tree_problems if pr.kind in WARNING_KINDS)
    warnings.sort(key=lambda pr: pr.line or 0)
    tree_problems = [pr for pr in tree_problems if pr.kind not in WARNING_KINDS]
    if sf.size == 0:
        tree_problems.append(Problem(None, "empty", "empty file (0 bytes): no session in it yet (pi would start a new one in it)", False))
        notes = [n for n in notes if not n.startswith("empty file")]
    problems = sorted(_temp_problems(p) + classifier.problems + tree_problems, key=lambda pr: (pr.line or 0))
    return CheckReport(
        path=p,
        problems=problems,
        notes=notes,
        warnings=warnings,
        line_count=sf.line_count,
        entry_count=entry_count,
        version=version,
        size=sf.size,
    )


def _free_rejected_suffix(path: Path) -> str:
    n = 1
    while os.path.lexists(path.with_name(f"{path.name}.rejected-{n}")):
        n += 1
    return f"rejected-{n}"


def repair_session(path: StrPath) -> RepairResult:
    """Fix a session file's storage problems, atomically, keeping a backup.

    Valid lines are kept byte for byte; recoverable lines are written clean;
    the bytes of every removed line (and of the truncated part of glued
    lines) go to ``<file>.rejected-<n>``, one per line, in file order; the
    original file is kept as ``<file>.repair.bak`` (a hard link, so it costs
    no space). Tree problems are left alone (see the module docstring).
    Nothing is written when there is nothing to fix.

    Returns:
        A :class:`RepairResult`.

    Raises:
        SessionFileError: unreadable or no session header (nothing written),
            or the file changed while it was being repaired (nothing
            changed; run it again).
        OSError: writing the side file or the new file failed (the original
            is untouched).
    """
    p = Path(os.path.realpath(path))  # through a symlink, the file it names is repaired
    before, actions, sf = _check(p)  # the one read of the file before the rewrite
    removed_temps: list[Path] = []
    for tmp, safe, _why in leftover_temps(p):
        if safe:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise SessionFileError(p, f"cannot delete leftover temp file {tmp.name}: {exc.strerror or exc}") from None
            removed_temps.append(tmp)
    if not actions:
        after = before
        if removed_temps:  # the file is as it was; only the temp files changed
            after = replace(before, problems=sorted(
                _temp_problems(p) + [pr for pr in before.problems if pr.kind != "leftover-temp"], key=lambda pr: (pr.line or 0)
            ))
        return RepairResult(p, False, None, None, [], [], before, after, removed_temps)
    rejected_bytes = b"".join(a.rejected + b"\n" for _n, a in sorted(actions.items()) if a.rejected is not None)
    rejected: Path | None = None
    if rejected_bytes:
        rejected = write_side_file(p, _free_rejected_suffix(p), rejected_bytes)
    # the check after the repair looks at the lines as they are written
    after_warnings: list[Problem] = []
    after_lines = _Classifier(p, after_warnings)
    after_file = SessionFileBuilder(p)
    scanner = LineScanner()
    written = [0, 0]  # lines, bytes

    def check_line(scanned: ScannedLine) -> None:
        after_file.add(scanned)
        after_lines.take(scanned)

    def lines() -> Iterator[bytes]:
        for line_no, raw, _had_newline in iter_lines(p):
            action = actions.get(line_no)
            for out in (raw,) if action is None else action.out:
                written[0] += 1
                written[1] += len(out) + 1
                for scanned in scanner.feed(written[0], out, True):
                    check_line(scanned)
                yield out + b"\n"

    try:
        backup = atomic_rewrite(p, lines(), backup_tag="repair", expect_size=sf.size, expect_mtime_ns=sf.mtime_ns)
    except BaseException:
        if rejected is not None:
            try:
                os.unlink(rejected)
            except OSError:
                pass
        raise
    for scanned in scanner.finish():
        check_line(scanned)
    after_file.sf.line_count, after_file.sf.size = written
    after = _report(p, after_file.finish(migrate=True), after_lines, after_warnings)
    return RepairResult(
        path=p,
        changed=True,
        backup=backup,
        rejected=rejected,
        recovered_lines=sorted(n for n, a in actions.items() if not a.removed),
        removed_lines=sorted(n for n, a in actions.items() if a.removed),
        before=before,
        after=after,
        removed_temps=removed_temps,
    )
