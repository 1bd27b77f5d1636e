"""Claude Code sessions as pi sessions (**beyond pi**).

Claude Code keeps one JSONL file per session under
``~/.claude/projects/<encoded cwd>/<session id>.jsonl`` (sub-agents in
``<session id>/subagents/agent-<id>.jsonl`` beside it, older versions put
them in the session file as ``isSidechain`` records). Each line is one
record; the conversation records (``user``, ``assistant``, ``system``,
``attachment``, ``progress``) form a tree by ``uuid``/``parentUuid``.

:func:`convert_records` is the pure conversion (records -> pi sessions),
:func:`convert_file` and :func:`session_files` the thin reader. What maps
to what (docs/import.md has the table):

- the tree -> pi ``id``/``parentId`` (ids derived from the source ids;
  branches kept; a parallel call's results, which Claude Code hangs on
  different blocks of one message, are chained one after the other);
- assistant records sharing one ``message.id`` (one record per content
  block) -> one pi assistant message: ``text``, ``thinking`` (signature in
  ``thinkingSignature``, ``redacted_thinking`` as a redacted block),
  ``tool_use`` -> ``toolCall``; ``model``, ``usage`` (input, output, cache
  read, cache creation) and ``stop_reason`` -> pi's; an API error record
  (``isApiErrorMessage``) -> ``stopReason: "error"``; a new model -> a
  ``model_change`` entry before its first message;
- ``tool_result`` blocks in user records -> ``toolResult`` messages
  (``is_error`` -> ``isError``, ``toolUseResult`` -> ``details``); text and
  images -> a user message;
- ``system`` ``compact_boundary`` + the user record marked
  ``isCompactSummary`` -> a ``compaction`` entry (summary: that text;
  ``tokensBefore``: ``compactMetadata.preTokens``; ``firstKeptEntryId``:
  its own id, pi 1.6's "keep nothing", as Claude Code keeps only the
  summary), parented on ``logicalParentUuid``;
- the user record that only marks an interrupted turn (``[Request
  interrupted by user]``) -> kept whole, as below (pi has no prompt for it);
- ``summary`` records (titles) and ``custom-title`` -> ``session_info``
  (the session name);
- sidechains and sub-agent files -> their own sessions whose header's
  ``parentSession`` is the main session;
- every field of a converted record that pi has no place for (``cwd``,
  ``gitBranch``, ``version``, ``requestId``, ...) -> its entry's
  ``imported.fields``; every other record (``progress``, ``attachment``,
  ``system`` notes, ...) -> kept whole by the next entry
  (``imported.records``), or after a pause a ``claude-code/records``
  entry of its own (:data:`~.common.LAYOUT`), so nothing is dropped.
  Layout 1 (sessions imported so before) keeps a ``custom`` entry
  ``claude-code/<record type>`` per record and a ``claude-code/fields``
  entry before each message.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.timestamps import iso_to_ms
from .claude_code_files import META_MAX_BYTES, ClaudeCodeFile, parent_cwd, read_meta, session_files
from .claude_code_tail import unfinished_tail
from .common import (
    CONVERSION_ERRORS,
    EPOCH_ISO,
    LAYOUT,
    ConvertedSession,
    DamagedLine,
    RecordError,
    SessionBuilder,
    SourceRecord,
    convert_skipping,
    ends_torn,
    first_cwd,
    first_str,
    obj,
    pi_session_id,
    pi_usage,
    read_jsonl,
    settled,
    text_of,
)

__all__ = ["FORMAT", "META_MAX_BYTES", "default_paths", "convert_records", "convert_file", "parent_cwd", "session_files", "unfinished_tail", "ClaudeCodeFile"]

FORMAT = "claude-code"
"""The ``--from`` name of this format, and the prefix of its custom types."""

_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "refusal": "stop", "tool_use": "toolUse", "max_tokens": "length"}
_CONVERTED_KEYS = ("type", "uuid", "parentUuid", "timestamp", "sessionId", "isSidechain", "message")


def default_paths() -> list[Path]:
    """Where Claude Code keeps its sessions: ``$CLAUDE_CONFIG_DIR/projects``,
    else ``~/.claude/projects``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return [Path(os.path.expanduser(base)) / "projects" if base else Path.home() / ".claude" / "projects"]


def _ms(timestamp: Any) -> int:
    value = iso_to_ms(timestamp) if isinstance(timestamp, str) else None
    return value if value is not None else 0


def _image(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        return {"type": "image", "data": source["data"], "mimeType": str(source.get("media_type") or "image/png")}
    return None


def _user_blocks(blocks: list[Any], unconverted: list[Any]) -> list[dict[str, Any]]:
    """Text and image blocks as pi's; others go to ``unconverted``."""
    out: list[dict[str, Any]] = []
    for b in blocks:
        if isinstance(b, str):
            out.append({"type": "text", "text": b})
        elif isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
            out.append({"type": "text", "text": b["text"]})
        elif isinstance(b, dict) and b.get("type") == "image" and (img := _image(b)) is not None:
            out.append(img)
        else:
            unconverted.append(b)
    return out


def _assistant_blocks(blocks: Any, unconverted: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(blocks, str):
        return [{"type": "text", "text": blocks}]
    if not isinstance(blocks, list):
        return out
    for b in blocks:
        t = b.get("type") if isinstance(b, dict) else None
        if t == "text" and isinstance(b.get("text"), str):
            out.append({"type": "text", "text": b["text"]})
        elif t == "thinking" and isinstance(b.get("thinking"), str):
            block = {"type": "thinking", "thinking": b["thinking"]}
            if isinstance(b.get("signature"), str) and b["signature"]:
                block["thinkingSignature"] = b["signature"]
            out.append(block)
        elif t == "redacted_thinking" and isinstance(b.get("data"), str):
            out.append({"type": "thinking", "thinking": "", "thinkingSignature": b["data"], "redacted": True})
        elif t == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str):
            args = b.get("input")
            out.append({"type": "toolCall", "id": b["id"], "name": b["name"], "arguments": args if isinstance(args, dict) else {}})
            if not isinstance(args, dict) and args is not None:
                unconverted.append({"tool_use_id": b["id"], "input": args})
        else:
            unconverted.append(b)
    return out


def _leftover(record: dict[str, Any], cwd: str, unconverted: list[Any], *, drop: Sequence[str] = ()) -> dict[str, Any]:
    """The fields of a converted record pi has no place for."""
    rest = {k: v for k, v in record.items() if k not in _CONVERTED_KEYS and k not in drop and not (k == "cwd" and v == cwd)}
    rest["uuid"] = record.get("uuid")
    message = record.get("message")
    if isinstance(message, dict):
        m = {k: v for k, v in message.items() if k not in ("content", "role")}
        if unconverted:
            m["content"] = unconverted
        if m:
            rest["message"] = m
    return rest


_INTERRUPTED = "[Request interrupted by user"


def _is_interruption(rec: dict[str, Any]) -> bool:
    """Whether a user record is only Claude Code's marker of an interrupted
    turn (``[Request interrupted by user]``, ``... for tool use]``): pi has
    no prompt for that (it ends the turn), so it is kept as a custom entry
    ``claude-code/interrupted`` and is not the session's first message."""
    content = obj(rec.get("message")).get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text":
        content = content[0].get("text")
    return isinstance(content, str) and content.strip().startswith(_INTERRUPTED) and content.strip().endswith("]")


@dataclass
class _Group:
    """The assistant message being assembled from records sharing one ``message.id``."""

    message_id: str
    entry: dict[str, Any]
    fields: list[Any]


class _Converter:
    """One source partition (a main conversation, a sidechain, a sub-agent
    file) -> one pi session."""

    def __init__(self, records: Sequence[SourceRecord], session_id: str, source: str, cwd: str, layout: int = LAYOUT, final: bool = True) -> None:
        self.records = records
        self.old = layout == 1
        self.final = final
        self.waiting = 0
        self.b = SessionBuilder(session_id, agent=None if self.old else "claude-code")
        self.source = source
        self.cwd = cwd
        self.group: _Group | None = None
        self.tool_names: dict[str, str] = {}
        self.model: str | None = None
        self.pending: list[SourceRecord] = []
        self.boundary: SourceRecord | None = None

    def key(self, r: SourceRecord, index: int = 0) -> str:
        uid = r.record.get("uuid")
        return f"{uid if isinstance(uid, str) else 'line:' + str(r.line)}:{index}"

    def run(self) -> SessionBuilder:
        """Convert the records.

        Raises:
            RecordError: a record of a shape the conversion cannot use.
        """
        if not self.old:  # a sub-agent's meta: kept with the first entry
            self.b.run.extend(r for r in self.pending if r.record.get("type") not in ("summary", "custom-title"))
            self.pending = [r for r in self.pending if r.record.get("type") in ("summary", "custom-title")]
        for r in self.records:
            try:
                if not self.old and self.b.paused_before(r.record.get("timestamp")):
                    self.flush_run()
                self.record(r)
            except CONVERSION_ERRORS as exc:
                raise RecordError(r.line, exc) from exc
        # A compact boundary that ends the file waits for its summary record
        # (Claude Code writes it next): the next import makes the compaction.
        self.flush_pending()
        if self.b.run and self.b.entries:
            if self.final:
                self.flush_run()
            else:  # the file is still being written: the next record may take them
                self.waiting = len(self.b.run)
        return self.b

    def flush_run(self) -> None:
        """The waiting run of records (layout 2) as one custom entry
        ``claude-code/records``, where its last record hangs."""
        run = self.b.run
        if not run:
            return
        last = run[-1]
        rec = last.record
        parent = self.b.resolve(self.b.parent_for(rec.get("parentUuid")) if "parentUuid" in rec else self.b.tail())
        entry = self.b.add("custom", {"customType": f"{FORMAT}/records", "data": {}}, key=self.key(last, 7), parent=parent, timestamp=rec.get("timestamp"), kind=f"custom:{FORMAT}/records")
        self.b.attach(entry)
        self.b.insert_after(parent, entry["id"])
        for r in run:
            self.b.map_source(r.record.get("uuid"), entry["id"])

    # -- records ---------------------------------------------------------

    def record(self, r: SourceRecord) -> None:
        rec = r.record
        t = rec.get("type")
        if t != "assistant":
            self.group = None
        if self.boundary is not None:
            boundary, self.boundary = self.boundary, None
            if t == "user" and rec.get("isCompactSummary") is True and rec.get("parentUuid") == boundary.record.get("uuid"):
                self.compaction(boundary, r)
                return
            self.compaction(boundary, None)
        if t == "user" and _is_interruption(rec):
            if self.old:
                self.note(r, None, custom_type=f"{FORMAT}/interrupted")
            else:
                self.keep(r)
        elif t == "user":
            self.user(r)
        elif t == "assistant":
            self.assistant(r)
        elif t == "system" and rec.get("subtype") == "compact_boundary":
            self.boundary = r  # made a compaction with the summary record that follows it
        elif t in ("summary", "custom-title"):
            name = rec.get("summary") if t == "summary" else rec.get("customTitle")
            if not self.b.entries:
                self.pending.append(r)
                return
            self.note(r, name if isinstance(name, str) and name.strip() else None)
        elif not self.old:
            self.keep(r)
        elif not self.b.entries and not isinstance(rec.get("uuid"), str):
            self.pending.append(r)
        else:
            self.note(r, None)
        if self.b.entries and self.pending:
            self.flush_pending()

    def flush_pending(self) -> None:
        pending, self.pending = self.pending, []
        if not self.b.entries:
            return  # nothing to hang them on: a file of metadata only is no session
        for r in pending:
            rec = r.record
            name = rec.get("summary") if rec.get("type") == "summary" else rec.get("customTitle")
            try:
                self.note(r, name if isinstance(name, str) and name.strip() else None)
            except CONVERSION_ERRORS as exc:
                raise RecordError(r.line, exc) from exc

    def keep(self, r: SourceRecord) -> None:
        """A record pi has no entry for (layout 2): it waits for the next
        entry, which keeps it whole; meanwhile its id stands for the entry
        it hangs on."""
        rec = r.record
        parent = self.b.resolve(self.b.parent_for(rec.get("parentUuid")) if "parentUuid" in rec else self.b.tail())
        self.b.run.append(r)
        if parent is not None:
            self.b.map_source(rec.get("uuid"), parent)

    def note(self, r: SourceRecord, name: str | None, *, custom_type: str | None = None) -> None:
        """A record pi has no message for: a custom entry holding it (and a
        ``session_info`` for a title), chained in where it was. In layout
        2 only titles come here: a ``session_info`` entry keeping the
        record (and the run before it)."""
        rec = r.record
        parent = self.b.parent_for(rec.get("parentUuid")) if "parentUuid" in rec else self.b.tail()
        parent = self.b.resolve(parent)
        ts = rec.get("timestamp")
        if not self.old:
            if name is None:
                self.keep(r)
                return
            self.b.run.append(r)
            info = self.b.add("session_info", {"name": name.strip()}, key=self.key(r, 1), parent=parent, timestamp=ts)
            self.b.attach(info)
            self.b.insert_after(parent, info["id"])
            self.b.map_source(rec.get("uuid"), info["id"])
            return
        entry = self.b.custom(custom_type or f"{FORMAT}/{rec.get('type')}", rec, key=self.key(r), parent=parent, timestamp=ts)
        last = entry
        if name is not None:
            last = self.b.add("session_info", {"name": name.strip()}, key=self.key(r, 1), parent=entry["id"], timestamp=ts)
        self.b.insert_after(parent, last["id"])
        self.b.map_source(rec.get("uuid"), last["id"])

    def fields(self, data: dict[str, Any], r: SourceRecord, parent: str | None) -> str | None:
        """Where the fields of a record beyond its entry go: layout 1, a
        ``claude-code/fields`` entry (returns its id, the entry's parent);
        layout 2, the next entry's :data:`~.common.IMPORTED_KEY` (returns
        ``parent``)."""
        if not self.old:
            self._stamp(data, r.record, None)
            self.b.stash.append(data)
            return parent
        return str(self.b.custom(f"{FORMAT}/fields", {"records": [data]}, key=self.key(r, 9), parent=parent, timestamp=r.record.get("timestamp"))["id"])

    def _stamp(self, data: dict[str, Any], rec: dict[str, Any], entry_timestamp: str | None) -> None:
        """Layout 2: keep a record's ``timestamp`` in ``data`` when its
        entry does not carry it (not a valid time; a later record of one
        entry). ``entry_timestamp`` None: the entry about to be made."""
        if "timestamp" not in rec:
            return
        ts = rec["timestamp"]
        if entry_timestamp is None:
            entry_timestamp = ts if isinstance(ts, str) and iso_to_ms(ts) is not None else self.b.last_timestamp
        if ts != entry_timestamp:
            data["timestamp"] = ts

    def made(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry``, given the waiting records and fields (layout 2)."""
        if not self.old:
            self.b.attach(entry)
        return entry

    def user(self, r: SourceRecord) -> None:
        rec = r.record
        message = obj(rec.get("message"))
        content = message.get("content")
        ts = rec.get("timestamp")
        unconverted: list[Any] = []
        results: list[dict[str, Any]] = []
        blocks: list[Any] = []
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                    results.append(b)
                else:
                    blocks.append(b)
        user_content: str | list[dict[str, Any]] | None
        if isinstance(content, str):
            user_content = content
        else:
            user_content = _user_blocks(blocks, unconverted) if blocks else None
        if user_content is not None and not isinstance(user_content, str) and not user_content:
            user_content = None
        if content is not None and not isinstance(content, (str, list)):
            unconverted.append(content)
        drop = ("toolUseResult",) if len(results) == 1 else ()
        rest = _leftover(rec, self.cwd, unconverted, drop=drop)
        insertion = bool(results) and user_content is None
        parent = self.b.parent_for(rec.get("parentUuid"))
        anchor = parent
        parent = self.fields(rest, r, parent)
        for i, b in enumerate(results):
            res_unconverted: list[Any] = []
            raw = b.get("content")
            if isinstance(raw, str):
                res_content = [{"type": "text", "text": raw}] if raw else []
            elif isinstance(raw, list):
                res_content = _user_blocks(raw, res_unconverted)
            else:
                res_content = []
                if raw is not None:
                    res_unconverted.append(raw)
            call_id = b["tool_use_id"]
            msg: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": self.tool_names.get(call_id, "unknown"),
                "content": res_content,
                "isError": b.get("is_error") is True,
                "timestamp": _ms(ts),
            }
            details: dict[str, Any] = {}
            if drop and "toolUseResult" in rec:
                details["toolUseResult"] = rec["toolUseResult"]
            extra = {k: v for k, v in b.items() if k not in ("type", "tool_use_id", "content", "is_error")}
            if extra:
                details["block"] = extra
            if res_unconverted:
                details["content"] = res_unconverted
            if details:
                msg["details"] = details
            parent = self.made(self.b.add("message", {"message": msg}, key=self.key(r, i + 1), parent=parent, timestamp=ts, kind="message:toolResult"))["id"]
        if user_content is not None:
            msg = {"role": "user", "content": user_content, "timestamp": _ms(ts)}
            parent = self.made(self.b.add("message", {"message": msg}, key=self.key(r, 0), parent=parent, timestamp=ts, kind="message:user"))["id"]
        if parent is None or (not self.old and not results and user_content is None):
            if not self.old:  # no entry made of it (no content pi holds): kept whole
                self.b.stash.pop()
                self.keep(r)
            return
        if insertion:
            self.b.insert_after(anchor, parent)
        self.b.map_source(rec.get("uuid"), parent)

    def assistant(self, r: SourceRecord) -> None:
        rec = r.record
        message = obj(rec.get("message"))
        mid = message.get("id")
        unconverted: list[Any] = []
        blocks = _assistant_blocks(message.get("content"), unconverted)
        for b in blocks:
            if b["type"] == "toolCall":
                self.tool_names[b["id"]] = b["name"]
        rest = _leftover(rec, self.cwd, unconverted)
        ts = rec.get("timestamp")
        g = self.group
        if g is not None and isinstance(mid, str) and mid == g.message_id:
            msg = g.entry["message"]
            msg["content"].extend(blocks)
            self._finish(msg, message, rec)
            if not self.old:
                self._stamp(rest, rec, g.entry["timestamp"])
            g.fields.append(rest)
            self.b.map_source(rec.get("uuid"), g.entry["id"])
            return
        parent = self.b.parent_for(rec.get("parentUuid"))
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>" and model != self.model:
            self.model = model
            parent = self.b.add("model_change", {"provider": "anthropic", "modelId": model}, key=self.key(r, 8), parent=parent, timestamp=ts)["id"]
        parent = self.fields(rest, r, parent)
        msg = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": model if isinstance(model, str) else "",
            "usage": {},
            "stopReason": "stop",
            "timestamp": _ms(ts),
        }
        self._finish(msg, message, rec)
        entry = self.b.add("message", {"message": msg}, key=self.key(r, 0), parent=parent, timestamp=ts, kind="message:assistant")
        if self.old:
            fields = self.b.entries[-2]["data"]["records"]
        else:
            fields = self.b.attach(entry)["fields"]  # type: ignore[index]  # the record's own fields are always there
        self.group = _Group(mid, entry, fields) if isinstance(mid, str) else None
        self.b.map_source(rec.get("uuid"), entry["id"])

    @staticmethod
    def _finish(msg: dict[str, Any], message: dict[str, Any], rec: dict[str, Any]) -> None:
        """Usage and stop reason from the group's latest record."""
        u = obj(message.get("usage"))
        msg["usage"] = pi_usage(u.get("input_tokens"), u.get("output_tokens"), u.get("cache_read_input_tokens"), u.get("cache_creation_input_tokens"))
        reason = message.get("stop_reason")
        has_calls = any(b["type"] == "toolCall" for b in msg["content"])
        msg["stopReason"] = _STOP_REASONS.get(reason, "toolUse" if has_calls else "stop") if isinstance(reason, str) else ("toolUse" if has_calls else "stop")
        if rec.get("isApiErrorMessage") is True:
            msg["stopReason"] = "error"
            msg["errorMessage"] = text_of(message.get("content")) or str(rec.get("error") or "API error")
        elif "errorMessage" in msg:
            del msg["errorMessage"]

    def compaction(self, r: SourceRecord, summary_record: SourceRecord | None) -> None:
        """A ``compact_boundary`` record and the ``isCompactSummary`` user
        record after it (None: none followed) -> one compaction entry."""
        rec = r.record
        ts = rec.get("timestamp")
        logical = rec.get("logicalParentUuid")
        parent = self.b.parent_for(logical if isinstance(logical, str) else rec.get("parentUuid"))
        records = [_leftover(rec, self.cwd, [])]
        summary = rec.get("content") if isinstance(rec.get("content"), str) else ""
        if summary_record is not None:
            sm = summary_record.record.get("message")
            unconverted: list[Any] = []
            content = sm.get("content") if isinstance(sm, dict) else None
            summary = text_of(content)
            if isinstance(content, list):
                _user_blocks([b for b in content if not (isinstance(b, dict) and b.get("type") == "text")], unconverted)
            records.append(_leftover(summary_record.record, self.cwd, unconverted))

        if not self.old:
            entry_ts = ts if isinstance(ts, str) and iso_to_ms(ts) is not None else self.b.last_timestamp
            for data, source_record in zip(records, (rec, summary_record.record if summary_record is not None else None)):
                if source_record is not None:
                    self._stamp(data, source_record, entry_ts)
        if self.old:
            parent = self.b.custom(f"{FORMAT}/fields", {"records": records}, key=self.key(r, 9), parent=parent, timestamp=ts)["id"]
        else:
            self.b.stash.extend(records)
        meta = obj(rec.get("compactMetadata"))
        pre = meta.get("preTokens")
        entry = self.b.add(
            "compaction",
            {"summary": summary, "firstKeptEntryId": "", "tokensBefore": pre if isinstance(pre, int) and not isinstance(pre, bool) and pre >= 0 else 0},
            key=self.key(r, 0),
            parent=parent,
            timestamp=ts,
        )
        entry["firstKeptEntryId"] = entry["id"]
        self.made(entry)
        self.b.map_source(rec.get("uuid"), entry["id"])
        if summary_record is not None:
            self.b.map_source(summary_record.record.get("uuid"), entry["id"])


def convert_records(
    records: Sequence[SourceRecord],
    *,
    source: str,
    file_id: str,
    agent_of: str | None = None,
    agent_meta: dict[str, Any] | None = None,
    parent_cwd: str | None = None,
    layout: int = LAYOUT,
    final: bool = True,
) -> list[ConvertedSession]:
    """Convert one Claude Code session file's records into pi sessions.

    Args:
        records: the file's records (:func:`pi_session.importers.common.read_jsonl`).
        source: the file, for results and messages.
        file_id: the file's stem (the session id when no record names it;
            ``agent-<id>`` for a sub-agent file).
        agent_of: for a sub-agent file, the id of the Claude Code session
            that spawned it.
        agent_meta: the sub-agent's ``agent-<id>.meta.json`` (kept in a
            custom entry ``claude-code/agent-meta``).
        parent_cwd: the working directory of the session that spawned this
            file's sub-agent conversations (:func:`parent_cwd`), when known.
        layout: the layout of the entries (:data:`~.common.LAYOUT`; 1 for
            a session imported in the earlier layout).
        final: whether a run of records at the end that made no entry is
            written (as a ``claude-code/records`` entry); False (the file
            was written lately): it is left out and counted in
            ``waiting``, for the next entry to take.

    Returns:
        The main session first (for a sub-agent file: the sub-agent's), then
        one session per sidechain (``parent_id`` the main session). A
        sub-agent's session (a sub-agent file, a sidechain) has the
        working directory of the session that spawned it (``parent_cwd``,
        for a sidechain the main conversation's; its own first ``cwd``
        only when that is unknown), so it lands in its parent's project;
        a record whose ``cwd`` differs keeps it in its ``claude-code/fields``
        entry. Pure: the same records always give the same sessions, and
        records appended to a file only append entries to them.

    Raises:
        RecordError: a record of a shape the conversion cannot use
            (:func:`~.common.convert_skipping` leaves it out).
    """
    source_id = first_str(records, "sessionId") or file_id
    if agent_of is not None:
        agent_id = first_str(records, "agentId") or file_id.removeprefix("agent-")
        main_key = f"{agent_of}/agent/{agent_id}"
        parent: str | None = pi_session_id(FORMAT, agent_of)
        main: list[SourceRecord] = list(records)
        sides: dict[str, list[SourceRecord]] = {}
        main_cwd = parent_cwd or None
    else:
        main_key = source_id
        parent = None
        main, sides = _partition(records)
        main_cwd = None
    out = [_convert(main, pi_session_id(FORMAT, main_key), source, parent, agent_meta, main_cwd, layout, final)]
    side_cwd = (out[0].cwd if agent_of is None else None) or parent_cwd or None
    for root, recs in sides.items():
        out.append(_convert(recs, pi_session_id(FORMAT, f"{source_id}/sidechain/{root}"), source, out[0].session_id, None, side_cwd, layout, final))
    return out


def _partition(records: Sequence[SourceRecord]) -> tuple[list[SourceRecord], dict[str, list[SourceRecord]]]:
    """Split a session file into its main conversation and its sidechains
    (``isSidechain`` records, one sidechain per root)."""
    main: list[SourceRecord] = []
    sides: dict[str, list[SourceRecord]] = {}
    root_of: dict[str, str] = {}
    for r in records:
        rec = r.record
        if rec.get("isSidechain") is not True:
            main.append(r)
            continue
        uid = rec.get("uuid")
        parent = rec.get("parentUuid")
        root = root_of.get(parent) if isinstance(parent, str) else None
        if root is None:
            root = uid if isinstance(uid, str) else f"line:{r.line}"
        if isinstance(uid, str):
            root_of[uid] = root
        sides.setdefault(root, []).append(r)
    return main, sides


def _convert(
    records: list[SourceRecord],
    session_id: str,
    source: str,
    parent: str | None,
    agent_meta: dict[str, Any] | None,
    cwd: str | None = None,
    layout: int = LAYOUT,
    final: bool = True,
) -> ConvertedSession:
    cwd = cwd or first_cwd(records) or ""
    timestamp = next((r.record["timestamp"] for r in records if isinstance(r.record.get("timestamp"), str) and iso_to_ms(r.record["timestamp"]) is not None), EPOCH_ISO)
    conv = _Converter(records, session_id, source, cwd, layout, final)
    if agent_meta is not None:
        conv.pending.append(SourceRecord(0, {"type": "agent-meta", **copy.deepcopy(agent_meta)}))
    b = conv.run()
    return ConvertedSession(session_id, source, cwd, timestamp, b.entries, b.counts, parent, waiting=conv.waiting)


def convert_file(file: ClaudeCodeFile, *, settle: bool = False, final: bool = True, layout: int = LAYOUT) -> tuple[list[ConvertedSession], list[DamagedLine]]:
    """Read and convert one session file (:func:`convert_records`); a
    sub-agent's ``.meta.json`` beside it is read too, and the session file
    that spawned its sub-agents for their working directory
    (:func:`parent_cwd`).

    Args:
        settle: leave out a last model response that may still be being
            written (:func:`unfinished_tail`, also when the file ends with
            a torn line; for a file written just now):
            a later import appends it whole, where importing half of it
            would make that import a conflict.
        final, layout: see :func:`convert_records`.

    Returns:
        The sessions and the source lines skipped: damaged lines, and
        records of a shape the conversion cannot use (each reported,
        everything else converted).

    Raises:
        OSError: the file cannot be read, or is not a regular file.
        RecordError: see :func:`~.common.convert_skipping`.
    """
    records, damaged = read_jsonl(file.path)
    records, held_back = settled(records, unfinished_tail(records, torn=ends_torn(records, damaged)) if settle else None)
    meta = read_meta(file.path.with_name(file.path.stem + ".meta.json")) if file.agent_of is not None else None
    source = str(file.path)
    cwd = parent_cwd(file, records)

    def convert(recs: list[SourceRecord]) -> list[ConvertedSession]:
        return convert_records(recs, source=source, file_id=file.path.stem, agent_of=file.agent_of, agent_meta=meta, parent_cwd=cwd, layout=layout, final=final and not held_back)

    sessions, skipped = convert_skipping(convert, records, source)
    damaged = sorted(damaged + skipped, key=lambda d: d.line)
    if sessions:
        sessions[0].held_back += held_back
    return sessions, damaged


def iter_files(paths: Sequence[str | os.PathLike[str]] | None = None) -> Iterator[ClaudeCodeFile]:
    """:func:`session_files` of ``paths`` (default :func:`default_paths`)."""
    yield from session_files(list(paths) if paths else default_paths())
