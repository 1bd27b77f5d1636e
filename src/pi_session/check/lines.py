"""The line-by-line classification ``check`` and ``repair`` share (beyond
pi): what :func:`pi_session.check.repair.check_session` reports about each line
the storage scanner classified (:class:`pi_session.storage.ScannedLine`),
worded to say what repair does, and what
:func:`pi_session.check.repair.repair_session` does with it
(:class:`LineAction`). Also the ``lone-surrogate`` warning of a record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..storage.problems import CheckProblem, ProblemKind
from ..entries.records import HEADER_TYPE, header_version, is_session_header
from ..storage import ScannedLine, SessionFileError, loads_js, recover_line
from ..core.text import find_lone_surrogates

__all__ = ["LineAction", "LineClassifier", "entry_issue", "json_type", "split_glued"]


@dataclass
class LineAction:
    """What repair does with one line: ``out`` replaces it in the file
    (empty: removed), ``rejected`` goes to the side file."""

    out: list[bytes]
    rejected: bytes | None
    removed: bool


def split_glued(data: bytes) -> tuple[list[bytes], list[bytes]]:
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


def entry_issue(record: Any, header: dict[str, Any]) -> tuple[ProblemKind, str] | None:
    """Why a record after the header cannot be an entry, or None."""
    if not isinstance(record, dict):
        return "not-object", "not an object"
    rtype = record.get("type")
    if rtype == HEADER_TYPE:
        return "extra-header", "a second session header (pi would read it as an entry)"
    if not isinstance(rtype, str):
        if "type" in record:
            return "no-type", f'record "type" is not a string (it is {json_type(rtype)})'
        return "no-type", 'record has no "type"'
    if header_version(header) >= 2 and not isinstance(record.get("id"), str):
        if "id" in record and record["id"] is not None:
            return "no-id", f"{rtype} entry id is not a string (it is {json_type(record['id'])})"
        return "no-id", f"{rtype} entry has no id"
    return None


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value (``object`` for dicts)."""
    return "object" if isinstance(value, dict) else _JSON_TYPE.get(type(value), "value")


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a surrogate code point: only a line holding one can
hold a lone surrogate (raw surrogate bytes are invalid UTF-8, read as U+FFFD)."""


def _surrogate_warning(line_no: int, raw: bytes, record: dict[str, Any], is_header: bool) -> CheckProblem | None:
    """The ``lone-surrogate`` warning for one record, or None."""
    if b"\\u" not in raw or not _SURROGATE_ESCAPE.search(raw):
        return None

    found = find_lone_surrogates(record)
    if not found:
        return None
    where, index, code = found[0]
    if len(where) > 200:  # a field deep inside nested data: keep the line readable
        where = where[:80] + "…" + where[-100:]
    eid = record.get("id") if isinstance(record.get("id"), str) else None
    what = "session header" if is_header else f"entry {eid}"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return CheckProblem(
        line_no,
        "lone-surrogate",
        f"{what}: {where} holds a lone UTF-16 surrogate ({code} at character {index}, half of a character){more}; "
        "pi-session sends it to providers as U+FFFD and leaves the file as it is",
        False,
        None if is_header else eid,
    )


class LineClassifier:
    """What check and repair make of each line the storage scanner
    classified (:class:`pi_session.storage.ScannedLine`): the storage
    problems (worded for check, saying what repair does), repair's action
    for every line not kept as it is, and (with ``warnings``) a
    ``lone-surrogate`` warning for every usable record that holds a lone
    UTF-16 surrogate. Feed :meth:`take` every scanned line in order."""

    def __init__(self, path: Path, warnings: list[CheckProblem] | None = None) -> None:
        self.path = path
        self.warnings = warnings
        self.problems: list[CheckProblem] = []
        self.actions: dict[int, LineAction] = {}
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
                actions[piece_no] = LineAction([], None, False)  # written with the first line

        def drop(kind: ProblemKind, message: str) -> None:
            problems.append(CheckProblem(line_no, kind, f"{message}; repair moves it to a side file", True))
            actions[line_no] = LineAction([], raw if raw else None, True)
            if joined is not None:
                for piece_no in range(joined.first_line + 1, joined.last_line + 1):
                    actions[piece_no] = LineAction([], None, True)

        if s.status == "blank":
            problems.append(CheckProblem(line_no, "blank", "blank line; repair removes it", True))
            actions[line_no] = LineAction([], raw if raw.strip() else None, True)
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
            problems.append(CheckProblem(line_no, "split-record", joined.problem().message + "; repair writes it on one line", True))
        elif s.problem is not None and s.problem.recovered:
            kind = s.problem.kind
            if kind == "glued":
                # the cleaned line is the fragment followed by the complete record;
                # the fragment may hold complete records of its own
                records, junk = split_glued((s.fragment or b"") + (s.clean or b""))
                # the complete record is what the scanner read; earlier ones must be usable entries
                usable = []
                for rec_bytes in records[:-1]:
                    rec = loads_js(rec_bytes)
                    if self.header is not None and entry_issue(rec, self.header) is None:
                        usable.append(rec_bytes)
                    else:
                        junk.append(rec_bytes)
                records = usable + records[-1:]
                clean = records
                rejected = b"\n".join(junk) if junk else None
                extra = f" ({len(records)} records recovered)" if len(records) > 1 else ""
                problems.append(CheckProblem(line_no, kind, s.problem.message + extra + "; repair keeps the complete record(s) and moves the rest to a side file", True))
            else:
                clean = [s.clean if s.clean is not None else raw]
                problems.append(CheckProblem(line_no, kind, s.problem.message + "; repair writes the record clean", True))
        elif raw.endswith(b"\r"):
            clean = [raw.rstrip(b"\r")]
            problems.append(CheckProblem(line_no, "crlf", "CRLF line end; repair writes a plain newline", True))
        # what kind of record
        is_header = self.header is None
        if self.header is None:
            if not is_session_header(record):
                raise SessionFileError(self.path, "not a pi session: the first record is not a session header", line=line_no)
            self.header = record
        else:
            issue = entry_issue(record, self.header)
            if issue is not None:
                drop(*issue)
                return
        if self.warnings is not None:
            warning = _surrogate_warning(line_no, clean[-1] if joined is not None else raw, record, is_header)
            if warning is not None:
                self.warnings.append(warning)
        if not had_newline:
            problems.append(CheckProblem(s.end_line, "no-newline", "last line has no newline; repair adds one", True))
            actions[line_no] = LineAction(clean, rejected, False)
        elif clean != [raw] or rejected is not None:
            actions[line_no] = LineAction(clean, rejected, False)
