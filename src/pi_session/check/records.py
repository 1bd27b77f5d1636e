"""What ``check`` reports about the records of a session it could read
(beyond pi): records pi reads but that do not have the shape of a session
(header fields, versions, messages, content, timestamps, context edits) and
problems of the parentId tree (duplicate ids, cycles, orphans, labels of
missing entries, compactions keeping entries off their path). Pure: works
on a :class:`pi_session.storage.SessionFile` already read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .lines import json_type
from ..session.context_edits import EDITABLE_ROLES
from ..storage.problems import CheckProblem
from ..entries import ENTRY_TYPES, MESSAGE_ROLES
from ..entries.questions import (
    ASSISTANT, BASH_EXECUTION, COMPACTION, CONTEXT_EDIT, CUSTOM_MESSAGE, LABEL, MESSAGE, SUMMARY_ROLES, may_contribute,
)
from ..entries.records import CURRENT_SESSION_VERSION, UNDEFINED
from ..storage import SessionFile
from ..core.timestamps import iso_to_ms
from ..session.tree import SessionTree, find_orphans

__all__ = ["record_problems"]


_MESSAGE_ROLES = MESSAGE_ROLES
"""Roles of agent messages (the entry model's). ``hookMessage`` is the
version-2 name of ``custom``; migration renames it, and a version-3 file
still holding one is accepted too (pi reads it without error)."""


_BLOCK_TYPES = {
    "user": ("text", "image"),
    "assistant": ("text", "thinking", "toolCall"),
    "toolResult": ("text", "image"),
    "custom": ("text", "image"),
    "hookMessage": ("text", "image"),
}


_STRING_CONTENT_OK = frozenset({"user", "custom", "hookMessage"})


_TEXT_FIELDS: dict[str, tuple[tuple[str, bool], ...]] = {
    # entry type (or message role) -> (field, required): fields pi writes
    # as strings; absent is fine where not required, null never
    "compaction": (("summary", True), ("firstKeptEntryId", True)),
    "branch_summary": (("summary", True), ("fromId", False)),
    "label": (("targetId", True),),
    "session_info": (("name", False),),
    "model_change": (("provider", True), ("modelId", True)),
    "thinking_level_change": (("thinkingLevel", True),),
    "custom": (("customType", True),),
    "custom_message": (("customType", True),),
    "bashExecution": (("command", True), ("output", False)),
    "toolResult": (("toolCallId", False), ("toolName", False)),
}
"""What :func:`_field_issues` checks: the string fields of each kind of
record, as pi writes them (a ``label`` entry's ``label`` may also be
absent or empty: that clears the label)."""


def _field_issues(kind: str, record: dict[str, Any]) -> list[str]:
    """Why some of ``record``'s fields (an entry of type ``kind``, or a
    message of role ``kind``) do not hold what pi writes there: a string
    field of :data:`_TEXT_FIELDS` holding another JSON type (or missing
    when required), a label that is neither a string nor absent, a
    thinking block's text that is not a string, an exit code that is
    neither a number nor null. Exports and views show such a value as
    JSON; pi may show it as ``[object Object]`` or fail on it."""
    issues = []
    for field, required in _TEXT_FIELDS.get(kind, ()):
        value = record.get(field, UNDEFINED)
        if value is UNDEFINED:
            if required:
                issues.append(f"has no {field}")
        elif not isinstance(value, str):
            issues.append(f"{field} is {json_type(value)}, not a string")
    if kind == LABEL and record.get("label") is not None and not isinstance(record["label"], str):
        issues.append(f"label is {json_type(record['label'])}, not a string")
    if kind == BASH_EXECUTION:
        code = record.get("exitCode")
        if code is not None and (isinstance(code, bool) or not isinstance(code, (int, float))):
            issues.append(f"exitCode is {json_type(code)}, not a number")
    if kind == ASSISTANT and isinstance(record.get("content"), list):
        for n, block in enumerate(record["content"]):
            if isinstance(block, dict) and block.get("type") == "thinking" and not isinstance(block.get("thinking"), str):
                issues.append(f"thinking block {n} has a thinking that is not a string")
    return issues


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
        got = "missing" if content is UNDEFINED else f"{json_type(content)}"
        return f"{role} message content is {got}, expected {what}"
    for n, block in enumerate(content):
        if not isinstance(block, dict):
            return f"{role} message content block {n} is {json_type(block)}, not an object"
        btype = block.get("type")
        if not isinstance(btype, str):
            return f"{role} message content block {n} has no string type"
        if btype == "text" and not isinstance(block.get("text"), str):
            return f"{role} message text block {n} has a text that is not a string"
        if btype == "toolCall" and role == ASSISTANT:
            if not isinstance(block.get("name"), str):
                return f"tool call block {n} has a name that is not a string"
            if not isinstance(block.get("arguments"), dict):
                return f"tool call block {n} has arguments that are not an object"
    return None


def _structure_problems(
    header: dict[str, Any], entries: Sequence[dict[str, Any]], line_of: dict[int, int], header_line: int | None
) -> list[CheckProblem]:
    """Warnings (never fixed) for records pi can read but that do not have
    the shape of a session: header fields, unknown versions, messages that
    are not objects or have unknown roles, content of the wrong type, and
    timestamps that do not parse as ISO dates."""

    problems: list[CheckProblem] = []
    by_id: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("id").__class__ is str:
            by_id.setdefault(entry["id"], entry)
    for key in ("cwd", "timestamp"):
        if key in header and not isinstance(header[key], str):
            problems.append(
                CheckProblem(header_line, "bad-header", f"session header {key} is {json_type(header[key])}, not a string", False)
            )
        elif key not in header:
            problems.append(CheckProblem(header_line, "bad-header", f"session header has no {key}", False))
    ts = header.get("timestamp")
    if isinstance(ts, str) and iso_to_ms(ts) is None:
        problems.append(CheckProblem(header_line, "bad-timestamp", f"session header timestamp {ts!r} is not an ISO date", False))
    version = header.get("version")
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        if version > CURRENT_SESSION_VERSION:
            problems.append(
                CheckProblem(
                    header_line,
                    "unknown-version",
                    f"session version {version} is newer than this tool knows ({CURRENT_SESSION_VERSION}); it is read as version {CURRENT_SESSION_VERSION}",
                    False,
                )
            )
    elif version is not None:
        problems.append(CheckProblem(header_line, "bad-header", f"session header version is {json_type(version)}, not a number", False))
    for entry in entries:
        eid = entry.get("id")
        line = line_of.get(id(entry))
        ts = entry.get("timestamp", UNDEFINED)
        if ts is UNDEFINED:
            problems.append(CheckProblem(line, "bad-timestamp", f"entry {eid} has no timestamp", False, eid))
        elif not isinstance(ts, str) or iso_to_ms(ts) is None:
            shown = ts if isinstance(ts, str) else json_type(ts)
            problems.append(CheckProblem(line, "bad-timestamp", f"entry {eid} timestamp {shown!r} is not an ISO date", False, eid))
        etype = entry.get("type")
        if etype == MESSAGE:
            msg = entry.get("message", UNDEFINED)
            if not isinstance(msg, dict):
                got = "missing" if msg is UNDEFINED else f"{json_type(msg)}, not an object"
                problems.append(CheckProblem(line, "bad-message", f"message entry {eid}: message is {got}", False, eid))
                continue
            role = msg.get("role", UNDEFINED)
            if not (isinstance(role, str) and role in _MESSAGE_ROLES):
                got = "missing" if role is UNDEFINED else repr(role) if isinstance(role, str) else json_type(role)
                problems.append(
                    CheckProblem(line, "unknown-role", f"message entry {eid}: role {got} is not a known message role (pi leaves it out of the context)", False, eid)
                )
                continue
            issue = _content_issue(role, msg.get("content", UNDEFINED))
            if issue is None and role in SUMMARY_ROLES and not isinstance(msg.get("summary"), str):
                issue = f"{role} message summary is not a string"
            if issue is not None:
                problems.append(CheckProblem(line, "bad-content", f"message entry {eid}: {issue}", False, eid))
            for why in _field_issues(role, msg):
                problems.append(CheckProblem(line, "bad-field", f"message entry {eid}: {role} message {why}", False, eid))
            continue
        for why in _field_issues(str(etype), entry):
            problems.append(CheckProblem(line, "bad-field", f"{etype} entry {eid}: {why}", False, eid))
        if etype == CUSTOM_MESSAGE:
            issue = _content_issue("custom", entry.get("content", UNDEFINED))
            if issue is not None:
                problems.append(CheckProblem(line, "bad-content", f"custom_message entry {eid}: {issue}", False, eid))
        elif etype == CONTEXT_EDIT:
            issue = _context_edit_issue(entry)
            if issue is not None:
                problems.append(CheckProblem(line, "bad-context-edit", f"context_edit entry {eid}: {issue}", False, eid))
            else:
                idle = _idle_edit_reason(entry, by_id)
                if idle is not None:
                    problems.append(CheckProblem(line, "idle-context-edit", f"context_edit entry {eid}: {idle}", False, eid))
        elif etype not in ENTRY_TYPES:
            shown = repr(etype) if isinstance(etype, str) else json_type(etype)
            problems.append(
                CheckProblem(
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
        if may_contribute(target):
            return None
        return f"its target {target_id} is a {ttype} entry, which shows the model nothing to omit (the edit changes nothing)"
    if ttype == CUSTOM_MESSAGE:
        return None
    if ttype == MESSAGE:
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


def record_problems(sf: SessionFile) -> tuple[list[CheckProblem], int, int, list[str]]:
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
    problems: list[CheckProblem] = _structure_problems(sf.header, entries, line_of, line_of.get(id(sf.header), 1))
    seen: dict[str, int] = {}
    for entry in entries:
        eid = entry["id"]
        line = line_of.get(id(entry))
        if eid in seen:
            problems.append(
                CheckProblem(line, "duplicate-id", f"entry id {eid} also on line {seen[eid]}; lookups by id find the later one (as in pi, whose id index keeps the last)", False, eid)
            )
        seen[eid] = line or 0
    tree = SessionTree(entries)
    by_id = tree.by_id
    for tp in tree.find_cycles():
        cycle_entry = by_id.get(tp.entry_id)
        problems.append(CheckProblem(line_of.get(id(cycle_entry)) if cycle_entry else None, tp.kind, tp.message, False, tp.entry_id))
    lines = [line_of.get(id(entry)) for entry in entries]
    problems.extend(
        CheckProblem(tp.line, tp.kind, tp.message, False, tp.entry_id) for tp in find_orphans(entries, by_id, lines=lines)
    )
    for entry, line in zip(entries, lines):
        eid = entry["id"]
        etype = entry.get("type")
        if etype == LABEL and not _in_index(entry.get("targetId"), by_id):
            problems.append(
                CheckProblem(line, "label-target-missing", f"label {eid} targets {entry.get('targetId')!r}, which is not in the file", False, eid)
            )
        elif etype == COMPACTION and entry is by_id.get(eid):
            kept = entry.get("firstKeptEntryId")
            path_ids = {e["id"] for e in tree.branch(eid) if e is not entry}
            if kept != eid and not _in_index(kept, path_ids):  # its own id: pi 1.6's "keep nothing"
                where = "not in the file" if not _in_index(kept, by_id) else "not on its path"
                problems.append(
                    CheckProblem(
                        line,
                        "compaction-first-kept-off-path",
                        f"compaction {eid} keeps from {kept!r}, which is {where}: only its summary and later entries reach the model",
                        False,
                        eid,
                    )
                )
    return problems, len(entries), version, notes
