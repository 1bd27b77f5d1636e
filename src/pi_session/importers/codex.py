"""Codex CLI sessions as pi sessions (**beyond pi**).

The Codex CLI writes one ``rollout-<time>-<id>.jsonl`` per session under
``~/.codex/sessions/YYYY/MM/DD/``; each line is ``{timestamp, type,
payload}``. :func:`convert_records` is the pure conversion, :func:`convert_file`
and :func:`session_files` the thin reader. What maps to what (docs/import.md
has the table):

- ``session_meta`` -> the header (id derived from the Codex session id,
  ``cwd``, ``timestamp``), the record itself kept in a custom entry;
- ``turn_context`` -> a ``model_change`` entry when the model changes
  (provider: ``session_meta.model_provider``);
- ``response_item`` ``message``: ``user`` -> a user message (text and
  images), ``assistant`` -> assistant text; the context Codex injects as
  user or developer messages (``AGENTS.md`` instructions, the environment
  context, permissions, the ``<turn_aborted>`` marker) is kept in custom
  entries, not as prompts; a ``<user_shell_command>`` (the user ran a
  command) -> a ``bashExecution`` message (command, output, exit code),
  the record kept too;
- ``reasoning`` -> a thinking block (the summary text; the whole item, its
  ``encrypted_content`` included, in ``thinkingSignature`` as pi keeps
  OpenAI reasoning items); ``function_call``, ``custom_tool_call``,
  ``local_shell_call`` -> ``toolCall``; their ``*_output`` -> ``toolResult``
  (an exit code other than 0 -> ``isError``); the items of one model
  response make one assistant message;
- ``event_msg`` ``token_count`` -> the ``usage`` of the assistant message
  it counts (``last_token_usage``: cached input as cache reads; the
  response before it, or, in older rollouts that write the count first,
  the one after it);
- ``compacted`` -> a ``compaction`` entry (summary: its ``message``, else
  the text of its ``replacement_history``; pi 1.6's "keep nothing");
- every record pi has no entry for (``session_meta``, ``turn_context``,
  ``event_msg``, the injected context, ...) kept whole by the next entry
  (``imported.records``; after a pause a ``codex/records`` entry of its
  own), and every field of an item pi has no place for in its entry's
  ``imported.fields`` (:data:`~.common.LAYOUT`). Layout 1 (sessions
  imported so before): a ``custom`` entry ``codex/<type>`` per record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..core.jsonio import dumps as js_dumps
from ..core.timestamps import iso_to_ms
from .common import (
    CONVERSION_ERRORS,
    EPOCH_ISO,
    IMPORTED_KEY,
    LAYOUT,
    ConvertedSession,
    DamagedLine,
    RecordError,
    SessionBuilder,
    SourceRecord,
    convert_skipping,
    count,
    obj,
    pi_session_id,
    pi_usage,
    read_jsonl,
    settled,
    text_of,
    usable_cwd,
)

__all__ = ["FORMAT", "default_paths", "convert_records", "convert_file", "session_files", "unfinished_tail", "CodexFile"]

FORMAT = "codex"
"""The ``--from`` name of this format, and the prefix of its custom types."""

_CONTEXT_PREFIXES = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<permissions instructions>", "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>")
_SHELL = re.compile(
    r"<user_shell_command>\s*<command>\n?(?P<command>.*?)\n?</command>\s*<result>\n?"
    r"(?:Exit code: (?P<code>-?\d+)\n)?(?:Duration: [^\n]*\n)?(?:Output:\n)?(?P<output>.*?)\n?</result>\s*</user_shell_command>",
    re.S,
)
"""A command the user ran in Codex (``!cmd``), as Codex records it."""
_CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
_TURN_ENDS = {"user_message", "task_complete", "turn_aborted", "task_started"}


def default_paths() -> list[Path]:
    """Where the Codex CLI keeps its sessions: ``$CODEX_HOME/sessions``,
    else ``~/.codex/sessions``."""
    base = os.environ.get("CODEX_HOME")
    return [Path(os.path.expanduser(base)) / "sessions" if base else Path.home() / ".codex" / "sessions"]


@dataclass
class CodexFile:
    """A rollout file found by :func:`session_files`."""

    path: Path


def session_files(paths: Sequence[str | os.PathLike[str]]) -> list[CodexFile]:
    """The rollout files under ``paths`` (files as they are; directories
    searched at any depth for ``rollout-*.jsonl``), sorted."""
    from ..stores.transfer import session_files as walk

    found: list[CodexFile] = []
    for item in paths:
        if Path(item).is_dir():
            found.extend(CodexFile(p) for p in walk([item]) if p.name.startswith("rollout-"))
        else:
            found.append(CodexFile(Path(item)))
    return sorted(found, key=lambda f: str(f.path))


def _ms(timestamp: Any) -> int:
    value = iso_to_ms(timestamp) if isinstance(timestamp, str) else None
    return value if value is not None else 0


def _image(url: Any) -> dict[str, Any] | None:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, data = url[5:].split(";base64,", 1)
        return {"type": "image", "data": data, "mimeType": mime or "image/png"}
    return None


def _content(blocks: Any, unconverted: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in blocks if isinstance(blocks, list) else []:
        t = b.get("type") if isinstance(b, dict) else None
        if t in ("input_text", "output_text", "text") and isinstance(b.get("text"), str):
            out.append({"type": "text", "text": b["text"]})
        elif t == "input_image" and (img := _image(b.get("image_url"))) is not None:
            out.append(img)
        else:
            unconverted.append(b)
    return out


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"value": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {} if raw is None else {"value": raw}


def _json_text(value: Any) -> str:
    """``value`` as compact JSON text: orjson's, or for what orjson refuses
    (a lone surrogate, an integer wider than 64 bits) ``JSON.stringify``'s."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return js_dumps(value)


def _type(payload: dict[str, Any]) -> str | None:
    """A payload's ``type`` when it is a string (an array or object there
    is a type no rule knows: the record is kept as it is)."""
    t = payload.get("type")
    return t if isinstance(t, str) else None


def _output(payload: dict[str, Any]) -> tuple[str, bool]:
    """A tool output's text and whether it failed (an exit code other than 0)."""
    out = payload.get("output")
    if isinstance(out, dict):  # older rollouts: {content, success}
        return str(out.get("content", "")), out.get("success") is False
    text = out if isinstance(out, str) else ("" if out is None else _json_text(out))
    failed = False
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
            code = value["metadata"].get("exit_code")
            failed = isinstance(code, int) and code != 0
            if isinstance(value.get("output"), str):
                text = value["output"]
    elif text.startswith("Exit code: "):
        code_text = text[len("Exit code: ") :].split("\n", 1)[0].strip()
        failed = code_text.isdigit() and code_text != "0"
    return text, failed


class _Converter:
    def __init__(self, session_id: str, provider: str, layout: int = LAYOUT) -> None:
        self.b = SessionBuilder(session_id, agent=None if layout == 1 else "codex")
        self.old = layout == 1
        self.provider = provider
        self.model = ""
        self.changed_model: str | None = None
        self.group: dict[str, Any] | None = None
        self.last_assistant: dict[str, Any] | None = None
        self.tool_names: dict[str, str] = {}
        self.tokens_before = 0
        self.last_total: Any = None
        self.pending_usage: dict[str, Any] | None = None

    def key(self, r: SourceRecord, index: int = 0) -> str:
        return f"line:{r.line}:{index}"

    def add(self, entry_type: str, fields: dict[str, Any], r: SourceRecord, *, index: int = 0, kind: str | None = None) -> dict[str, Any]:
        entry = self.b.add(entry_type, fields, key=self.key(r, index), parent=self.b.tail(), timestamp=r.record.get("timestamp"), kind=kind)
        if not self.old:
            self.b.attach(entry)
        return entry

    def keep(self, r: SourceRecord, data: Any | None = None, *, index: int = 9) -> None:
        """A record pi has no entry for (``data`` None), or what a record
        holds beyond its entry (``data``): layout 1, a ``codex/<type>``
        custom entry; layout 2, kept by the next entry (the whole record,
        or ``data`` among its fields)."""
        rec = r.record
        if not self.old:
            if data is None:
                self.b.run.append(r)
            else:
                self.b.stash.append(data)
            return
        self.b.custom(f"{FORMAT}/{rec.get('type')}", rec if data is None else data, key=self.key(r, index), parent=self.b.tail(), timestamp=rec.get("timestamp"))

    def flush_run(self) -> None:
        """The waiting run of records (layout 2) as one custom entry
        ``codex/records``."""
        if self.b.run:
            last = self.b.run[-1]
            entry = self.b.custom(f"{FORMAT}/records", {}, key=self.key(last, 7), parent=self.b.tail(), timestamp=last.record.get("timestamp"))
            self.b.attach(entry)

    def record(self, r: SourceRecord) -> None:
        rec = r.record
        t = rec.get("type")
        payload = obj(rec.get("payload"))
        pt = _type(payload)
        if t == "response_item":
            self.item(r, payload)
            return
        if t == "event_msg":
            if pt == "token_count":
                self.token_count(obj(payload.get("info")))
            elif pt in _TURN_ENDS:
                self.group = None
            self.keep(r)
            return
        self.group = None
        if t == "turn_context":
            model = payload.get("model")
            self.keep(r)
            if isinstance(model, str) and model and model != self.model:
                self.model = model
                self.add("model_change", {"provider": self.provider, "modelId": model}, r, index=1)
            return
        if t == "compacted":
            self.keep(r)
            message = payload.get("message")
            summary = message if isinstance(message, str) and message.strip() else ""
            if not summary:
                history = payload.get("replacement_history")
                parts = [text_of(_content(i.get("content"), [])) for i in history if isinstance(i, dict)] if isinstance(history, list) else []
                summary = "\n\n".join(p for p in parts if p)
            entry = self.add("compaction", {"summary": summary, "firstKeptEntryId": "", "tokensBefore": self.tokens_before}, r, index=1)
            entry["firstKeptEntryId"] = entry["id"]
            return
        self.keep(r)  # session_meta and anything newer

    def token_count(self, info: dict[str, Any]) -> None:
        """A token count ends a model response and holds its usage
        (``last_token_usage``). Newer rollouts write it after the
        response's items, older ones (0.58) just before them: it goes to
        the response written since the last count, else to the next one.
        A count repeating the last totals (a rate-limit update) is passed
        over."""
        self.group = None
        last = info.get("last_token_usage")
        total = obj(info.get("total_token_usage")).get("total_tokens")
        if not isinstance(last, dict) or (total is not None and total == self.last_total):
            return
        self.last_total = total
        cached = count(last.get("cached_input_tokens"))
        usage = pi_usage(max(count(last.get("input_tokens")) - cached, 0), last.get("output_tokens"), cached, 0, reasoning=last.get("reasoning_output_tokens"))
        self.tokens_before = count(last.get("input_tokens")) + count(last.get("output_tokens"))
        if self.last_assistant is not None:
            self.last_assistant["message"]["usage"] = usage
            self.last_assistant = None
        else:
            self.pending_usage = usage

    def item(self, r: SourceRecord, p: dict[str, Any]) -> None:
        pt = _type(p)
        ts = r.record.get("timestamp")
        if pt == "message" and p.get("role") == "assistant":
            unconverted: list[Any] = []
            blocks = _content(p.get("content"), unconverted)
            self.assistant(r, blocks, {k: v for k, v in p.items() if k not in ("type", "role", "content")} | ({"content": unconverted} if unconverted else {}))
            return
        if pt == "reasoning":
            summary = p.get("summary")
            text = "\n\n".join(s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)) if isinstance(summary, list) else ""
            block = {"type": "thinking", "thinking": text, "thinkingSignature": _json_text(p)}
            self.assistant(r, [block], {})
            return
        if pt in _CALLS:
            call_id = p.get("call_id") if isinstance(p.get("call_id"), str) else p.get("id")
            name = p.get("name") if isinstance(p.get("name"), str) else ("shell" if pt == "local_shell_call" else pt)
            if pt == "custom_tool_call":
                args = {"input": p.get("input")}
            elif pt == "local_shell_call":
                args = _arguments(p.get("action"))
            else:
                args = _arguments(p.get("arguments"))
            if not isinstance(call_id, str):
                call_id = f"call_line_{r.line}"
            self.tool_names[call_id] = str(name)
            rest = {k: v for k, v in p.items() if k not in ("type", "call_id", "name", "arguments", "input")}
            self.assistant(r, [{"type": "toolCall", "id": call_id, "name": str(name), "arguments": args}], rest)
            return
        self.group = None
        if pt == "message" and p.get("role") == "user":
            unconverted = []
            blocks = _content(p.get("content"), unconverted)
            text = text_of(blocks).lstrip()
            if not blocks or text.startswith(_CONTEXT_PREFIXES):
                self.keep(r)
                shell = _SHELL.fullmatch(text.strip())
                if shell is not None:  # the user ran a command: pi's bashExecution
                    code = shell["code"]
                    msg = {
                        "role": "bashExecution",
                        "command": shell["command"],
                        "output": shell["output"],
                        "exitCode": int(code) if code is not None else None,
                        "cancelled": False,
                        "truncated": False,
                        "timestamp": _ms(ts),
                    }
                    self.add("message", {"message": msg}, r, index=1, kind="message:bashExecution")
                return
            if unconverted:
                self.keep(r, {"unconverted": unconverted, "timestamp": ts})
            self._fields(r, p, ("type", "role", "content"))
            self.add("message", {"message": {"role": "user", "content": blocks, "timestamp": _ms(ts)}}, r, kind="message:user")
            return
        if pt in _OUTPUTS:
            call_id = p.get("call_id")
            text, failed = _output(p)
            msg = {
                "role": "toolResult",
                "toolCallId": call_id if isinstance(call_id, str) else "",
                "toolName": self.tool_names.get(call_id, "unknown") if isinstance(call_id, str) else "unknown",
                "content": [{"type": "text", "text": text}] if text else [],
                "isError": failed,
                "timestamp": _ms(ts),
                "details": {"output": p.get("output")},
            }
            self._fields(r, p, ("type", "call_id", "output"))
            self.add("message", {"message": msg}, r, kind="message:toolResult")
            return
        self.keep(r)  # developer/system messages, ghost snapshots, web searches, newer items

    def _fields(self, r: SourceRecord, payload: dict[str, Any], converted: tuple[str, ...]) -> None:
        """Layout 2: the fields of an item beyond those its entry holds,
        kept by that entry (layout 1 did not keep them)."""
        rest = {k: v for k, v in payload.items() if k not in converted}
        extra = {k: v for k, v in r.record.items() if k not in ("timestamp", "type", "payload")}
        if not self.old and (rest or extra):
            self.keep(r, {"item": rest, "timestamp": r.record.get("timestamp"), **({"record": extra} if extra else {})})

    def assistant(self, r: SourceRecord, blocks: list[dict[str, Any]], rest: dict[str, Any]) -> None:
        ts = r.record.get("timestamp")
        extra = {k: v for k, v in r.record.items() if k not in ("timestamp", "type", "payload")}
        if rest and self.old:
            self.keep(r, {"item": rest, "timestamp": ts}, index=8)
        g = self.group
        created = None
        if g is None:
            msg = {
                "role": "assistant",
                "content": [],
                "api": "openai-responses",
                "provider": self.provider,
                "model": self.model,
                "usage": pi_usage(0, 0),
                "stopReason": "stop",
                "timestamp": _ms(ts),
            }
            g = created = self.add("message", {"message": msg}, r, kind="message:assistant")
            self.group = g
            if self.pending_usage is not None:  # counted before its items were written
                msg["usage"], self.pending_usage = self.pending_usage, None
                self.last_assistant = None
            else:
                self.last_assistant = g
        if (rest or extra or (g is not created and ts != g["timestamp"])) and not self.old:
            kept = self.b.imported_of(g).setdefault("fields", [])
            kept.append({"item": rest, "timestamp": ts, **({"record": extra} if extra else {})})
        msg = g["message"]
        msg["content"].extend(blocks)
        if any(b["type"] == "toolCall" for b in msg["content"]):
            msg["stopReason"] = "toolUse"


def convert_records(records: Sequence[SourceRecord], *, source: str, file_id: str, layout: int = LAYOUT, final: bool = True) -> list[ConvertedSession]:
    """Convert one rollout file's records into a pi session.

    Args:
        records: the file's records (:func:`pi_session.importers.common.read_jsonl`).
        source: the file, for results.
        file_id: the file's stem (its id is used when no ``session_meta``
            names one).
        layout: the layout of the entries (:data:`~.common.LAYOUT`; 1 for
            a session imported in the earlier layout).
        final: whether a run of records at the end that made no entry is
            written (as a ``codex/records`` entry); False (the file was
            written lately): it is left out and counted in ``waiting``,
            for the next entry to take.

    Returns:
        One session. Pure: the same records give the same lines, and
        records appended only append entries (but for the usage and the
        blocks of a model response still being written).
    """
    meta: dict[str, Any] = {}
    for r in records:
        if r.record.get("type") == "session_meta" and isinstance(r.record.get("payload"), dict):
            meta = r.record["payload"]
            break
    meta_id = meta.get("id")
    source_id = meta_id if isinstance(meta_id, str) else file_id.removeprefix("rollout-")
    session_id = pi_session_id(FORMAT, source_id)
    meta_provider = meta.get("model_provider")
    provider = meta_provider if isinstance(meta_provider, str) else "openai"
    cwd = meta.get("cwd") if usable_cwd(meta.get("cwd")) else ""
    if not cwd:
        cwd = next((r.record["payload"]["cwd"] for r in records if r.record.get("type") == "turn_context" and isinstance(r.record.get("payload"), dict) and usable_cwd(r.record["payload"].get("cwd"))), "")
    timestamp = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) and iso_to_ms(meta.get("timestamp")) is not None else None
    if timestamp is None:
        timestamp = next((r.record["timestamp"] for r in records if isinstance(r.record.get("timestamp"), str) and iso_to_ms(r.record["timestamp"]) is not None), EPOCH_ISO)
    conv = _Converter(session_id, provider, layout)
    for r in records:
        try:
            if not conv.old and conv.b.paused_before(r.record.get("timestamp")):
                conv.flush_run()
            conv.record(r)
        except CONVERSION_ERRORS as exc:
            raise RecordError(r.line, exc) from exc
    waiting = 0
    if conv.b.run and conv.b.entries:
        if final:
            conv.flush_run()
        else:
            waiting = len(conv.b.run)
    return [ConvertedSession(session_id, source, cwd, timestamp, conv.b.entries, conv.b.counts, waiting=waiting)]


_RESPONSE_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}


def unfinished_tail(records: Sequence[SourceRecord]) -> int | None:
    """Where a model response that may still be being written starts: the
    index of the first of the file's last response items (reasoning,
    assistant text, tool calls) when no token count, tool output, prompt or
    turn end follows them (Codex writes the token count after each
    response); else None."""
    start: int | None = None
    for i in range(len(records) - 1, -1, -1):
        rec = records[i].record
        payload = obj(rec.get("payload"))
        t, pt = rec.get("type"), _type(payload)
        if t == "response_item" and (pt in _RESPONSE_ITEMS or (pt == "message" and payload.get("role") == "assistant")):
            start = i
        elif t == "event_msg" and pt not in ("token_count", "task_complete", "turn_aborted", "user_message"):
            continue
        else:
            break
    return start


def convert_file(file: CodexFile, *, settle: bool = False, final: bool = True, layout: int = LAYOUT) -> tuple[list[ConvertedSession], list[DamagedLine]]:
    """Read and convert one rollout file (:func:`convert_records`).

    Args:
        settle: leave out a last model response that may still be being
            written (:func:`unfinished_tail`; for a file written just now).
        final, layout: see :func:`convert_records`.

    Returns:
        The session and the source lines skipped: damaged lines, and
        records of a shape the conversion cannot use (each reported,
        everything else converted).

    Raises:
        OSError: the file cannot be read, or is not a regular file.
        RecordError: see :func:`~.common.convert_skipping`.
    """
    records, damaged = read_jsonl(file.path)
    records, held_back = settled(records, unfinished_tail(records) if settle else None)
    source = str(file.path)
    final = final and not held_back
    sessions, skipped = convert_skipping(lambda recs: convert_records(recs, source=source, file_id=file.path.stem, layout=layout, final=final), records, source)
    damaged = sorted(damaged + skipped, key=lambda d: d.line)
    if sessions:
        sessions[0].held_back = held_back
    return sessions, damaged
