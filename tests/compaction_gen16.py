"""pi 1.6 session shapes for the compaction conformance goldens.

:func:`enrich` takes a session from ``sessiongen.generate_session`` and adds,
deterministically from a seed, what pi 1.6 writes and what the 1.6
compaction code must handle (SPEC-pi-1.6 §2, §8, §9):

- a leading ``system`` message (sections + tools) and later patches;
- ``usage`` entries after assistant messages;
- ``context_edit`` entries (``null`` and content replacements, string and
  array content) targeting user / assistant / toolResult / custom_message /
  role-``custom`` / compaction / branch_summary entries above them — so some
  edit summarized entries and, on branched sessions, some lie off the
  leaf's path;
- ``nestedCalls`` on tool results (with path, with only ``argumentsBytes``);
- compactions with a ``systemMessage`` snapshot and compactions whose
  ``firstKeptEntryId`` is their own id ("keep nothing");
- role-``custom`` message entries (they now start a turn).

:func:`crafted_sessions` returns small hand-made sessions for shapes random
generation rarely hits (the recovery-omission cut of §8.3, a cut at a
custom_message / branch_summary / bashExecution turn start, a split turn
with nothing before it after a compaction, context edits right after a
split turn's tool results, an assistant's two calls with one result and a
context edit before a user message, a reused tool-call id);
:func:`tool_pairs_session` draws small sessions of tool work for the
differential check of the cut around tool calls.
"""

from __future__ import annotations

import copy
import random
from typing import Any

_TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "bash", "description": "Run a command", "parameters": {"type": "object"}},
]


def _system(r: random.Random, ms: int, first: bool) -> dict[str, Any]:
    if first:
        return {
            "role": "system",
            "content": "",
            "sections": {"preamble": "You are a coding agent. " * r.randint(1, 20), "tools": "<tools>\nread, bash\n</tools>"},
            "toolsAdded": copy.deepcopy(_TOOLS),
            "timestamp": ms,
        }
    msg: dict[str, Any] = {"role": "system", "content": r.choice(["", "Be brief from now on."]), "timestamp": ms}
    roll = r.random()
    if roll < 0.4:
        msg["sections"] = {"tools": None}
    elif roll < 0.8:
        msg["sections"] = {"skills": "<skills>\nskill list " * r.randint(1, 5) + "\n</skills>"}
    if r.random() < 0.5:
        msg["toolsAdded"] = [{"name": "edit", "description": "Edit a file", "parameters": {}}]
    if r.random() < 0.3:
        msg["toolsRemoved"] = [{"name": "bash"}]
    return msg


def _ms(entry: dict[str, Any]) -> int:
    import datetime as _dt

    ts = entry.get("timestamp", "2026-01-01T00:00:00.000Z")
    dt = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.timezone.utc)
    return int(dt.timestamp() * 1000)


class _Doc:
    """Entries with insert-between support (keeps parents before children)."""

    def __init__(self, entries: list[dict[str, Any]], r: random.Random) -> None:
        self.entries = entries
        self.r = r
        self.ids = {e["id"] for e in entries}

    def new_id(self) -> str:
        while True:
            value = f"{self.r.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in self.entries}

    def ancestors(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        by = self.by_id()
        out = []
        seen = set()
        cur = entry.get("parentId")
        while isinstance(cur, str) and cur in by and cur not in seen:
            seen.add(cur)
            out.append(by[cur])
            cur = by[cur].get("parentId")
        return out

    def insert_before(self, child: dict[str, Any], etype: str, **fields: Any) -> dict[str, Any]:
        """A new entry between ``child`` and its parent."""
        new = {"type": etype, "id": self.new_id(), "parentId": child.get("parentId"), "timestamp": child["timestamp"], **fields}
        child["parentId"] = new["id"]
        self.entries.insert(self.entries.index(child), new)
        return new

    def append_after_leaf(self, etype: str, **fields: Any) -> dict[str, Any]:
        last = self.entries[-1]
        new = {"type": etype, "id": self.new_id(), "parentId": last["id"], "timestamp": last["timestamp"], **fields}
        self.entries.append(new)
        return new


_EDITABLE = ("user", "assistant", "toolResult", "custom")


def _replacement(r: random.Random, target: dict[str, Any]) -> Any:
    roll = r.random()
    if roll < 0.4:
        return None
    role = target.get("message", {}).get("role") if target["type"] == "message" else None
    if role == "assistant" and r.random() < 0.5:
        return {"content": [{"type": "text", "text": "edited reply " * r.randint(1, 40)},
                            {"type": "toolCall", "id": "call_edit", "name": "edit", "arguments": {"path": "src/edited.py"}}]}
    if roll < 0.7:
        return {"content": "edited " * r.randint(1, 60)}
    return {"content": [{"type": "text", "text": "edited block " * r.randint(1, 60)}]}


def enrich(seed: int, header: dict[str, Any], entries: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Add pi 1.6 entries and fields to a generated session (see module docs).

    Returns ``(header, entries)``: new lists, the input is not changed; the
    last entry stays the file's last entry unless an edit or usage entry is
    appended after it.
    """
    r = random.Random(f"gen16-{seed}")
    doc = _Doc(copy.deepcopy(entries), r)
    es = doc.entries
    if not es:
        return header, es
    # leading system message (pi 1.6 writes one before the first request)
    if r.random() < 0.85:
        first = es[0]
        sys_entry = {"type": "message", "id": doc.new_id(), "parentId": None, "timestamp": first["timestamp"],
                     "message": _system(r, _ms(first) - 1, True)}
        es.insert(0, sys_entry)
        for e in es[1:]:
            if e.get("parentId") is None:
                e["parentId"] = sys_entry["id"]
    for e in list(es):
        if e["type"] != "message":
            continue
        msg = e["message"]
        role = msg.get("role")
        if role == "user" and r.random() < 0.08:
            doc.insert_before(e, "message", message=_system(r, _ms(e) - 1, False))
        elif role == "user" and r.random() < 0.05:
            doc.insert_before(e, "message", message={"role": "custom", "customType": "steer", "content": "steering " * r.randint(1, 30),
                                                      "display": True, "timestamp": _ms(e) - 1})
        elif role == "toolResult" and r.random() < 0.15:
            calls = [{"id": "n1", "name": r.choice(["read", "write", "edit", "bash"]), "arguments": {"path": f"nested/{r.randint(1, 5)}.py"},
                      "status": r.choice(["ok", "error", "unfinished"]), "durationMs": 3}]
            if r.random() < 0.5:
                calls.append({"id": "n2", "name": "write", "argumentsBytes": 40000, "status": "ok"})
            if r.random() < 0.3:
                calls.append({"id": "n3", "name": "edit", "arguments": {"path": 7}, "status": "error", "error": "bad"})
            msg["nestedCalls"] = {"calls": calls, "complete": r.random() < 0.8}
    # usage entries after some assistant messages (children of them)
    for e in list(es):
        if e["type"] == "message" and e["message"].get("role") == "assistant" and r.random() < 0.1:
            children = [c for c in es if c.get("parentId") == e["id"]]
            if children:
                doc.insert_before(children[0], "usage", kind="cache_warm", provider="anthropic", model="m",
                                  usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    # compaction fields
    for e in es:
        if e["type"] != "compaction":
            continue
        roll = r.random()
        if roll < 0.3:
            e["systemMessage"] = _system(r, _ms(e), True)
        elif roll < 0.45:
            e["firstKeptEntryId"] = e["id"]
        if r.random() < 0.2:
            e["usage"] = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    # context edits, placed between an entry and its parent, targeting an ancestor
    n_edits = r.choice([0, 1, 2, 3, 5, 8])
    for _ in range(n_edits):
        at = r.choice(es)
        if r.random() < 0.3:
            at = es[-1]
        anc = [a for a in ([at] + doc.ancestors(at)) if a["type"] in ("message", "custom_message", "compaction", "branch_summary")]
        targets = [a for a in anc if a["type"] != "message" or a["message"].get("role") in _EDITABLE] or anc
        if not targets:
            continue
        target = r.choice(targets)
        fields = {"targetId": target["id"], "replacement": _replacement(r, target)}
        if at is es[-1] and r.random() < 0.5:
            doc.append_after_leaf("context_edit", **fields)
        else:
            children = [c for c in es if c.get("parentId") == at["id"]]
            if children:
                doc.insert_before(children[0], "context_edit", **fields)
            elif at is es[-1]:
                doc.append_after_leaf("context_edit", **fields)
    return header, es


def _entry(eid: str, parent: str | None, etype: str = "message", **fields: Any) -> dict[str, Any]:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": "2026-11-30T12:00:00.000Z", **fields}


def _msg(role: str, text: str, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "timestamp": 1764504000000}
    if role == "assistant":
        m.update(content=[{"type": "text", "text": text}], api="anthropic-messages", provider="anthropic", model="m",
                 usage={"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                 stopReason="stop")
    else:
        m["content"] = text
    m.update(extra)
    return m


def crafted_sessions() -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Small hand-made sessions, by name (see module docs)."""
    header = {"type": "session", "version": 3, "id": "01900000-0000-7000-8000-000000000001",
              "timestamp": "2026-11-30T12:00:00.000Z", "cwd": "/work/project"}
    big = "word " * 800  # 1000 tokens
    out: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    # §8.3 example: user, assistant, user, assistant(error, omitted), context_edit(null)
    out["crafted-recovery"] = (header, [
        _entry("a01", None, message=_msg("user", big)),
        _entry("a02", "a01", message=_msg("assistant", "ok")),
        _entry("a03", "a02", message=_msg("user", big)),
        _entry("a04", "a03", message={**_msg("assistant", ""), "stopReason": "error", "errorMessage": "context overflow"}),
        _entry("a05", "a04", "context_edit", targetId="a04", replacement=None),
    ])
    # turn starts of the new kinds, with tokens
    out["crafted-turn-starts"] = (header, [
        _entry("b01", None, message=_msg("system", "base prompt " * 50)),
        _entry("b02", "b01", message=_msg("user", big)),
        _entry("b03", "b02", message=_msg("assistant", "answer " * 200)),
        _entry("b04", "b03", "custom_message", customType="note", content="note " * 300, display=True),
        _entry("b05", "b04", message=_msg("assistant", "more " * 300)),
        _entry("b06", "b05", "branch_summary", fromId="b03", summary="Explored: " + "x " * 300),
        _entry("b07", "b06", message=_msg("assistant", "after branch " * 100)),
        _entry("b08", "b07", message={"role": "bashExecution", "command": "ls", "output": "out " * 300, "exitCode": 0,
                                      "cancelled": False, "truncated": False, "timestamp": 1764504000000}),
        _entry("b09", "b08", message=_msg("assistant", "bash seen " * 100)),
        _entry("b10", "b09", message=_msg("custom", "custom role " * 200, customType="steer", display=True)),
        _entry("b11", "b10", message=_msg("assistant", "tail " * 300)),
    ])
    # a compaction, then one long turn: a split turn with nothing new before it
    out["crafted-split-after-compaction"] = (header, [
        _entry("c01", None, message=_msg("user", "old task " * 100)),
        _entry("c02", "c01", message=_msg("assistant", "old answer " * 100)),
        _entry("c03", "c02", "compaction", summary="## Goal\nShip the exporter (FACT-PREVIOUS-42)", firstKeptEntryId="c03",
               tokensBefore=5000, details={"readFiles": ["a.py"], "modifiedFiles": ["b.py"]},
               systemMessage={"role": "system", "content": "snap", "timestamp": 1}),
        _entry("c04", "c03", message=_msg("user", "new long task " * 100)),
        _entry("c05", "c04", message=_msg("assistant", "step one " * 300)),
        _entry("c06", "c05", message=_msg("assistant", "step two " * 300)),
        _entry("c07", "c06", message=_msg("assistant", "step three " * 300)),
    ])
    # edits of summarized and kept entries around a compaction, and one off the path
    out["crafted-edits"] = (header, [
        _entry("d01", None, message=_msg("user", "first " * 200)),
        _entry("d02", "d01", message=_msg("assistant", "reply " * 200)),
        _entry("d03", "d02", "context_edit", targetId="d01", replacement={"content": "short first"}),
        _entry("d04", "d03", message=_msg("user", "second " * 200)),
        _entry("d05", "d04", message=_msg("assistant", "reply two " * 200)),
        _entry("d06", "d05", "compaction", summary="## Goal\nsummary one", firstKeptEntryId="d04", tokensBefore=900),
        _entry("d07", "d06", "context_edit", targetId="d05", replacement={"content": "edited kept reply"}),
        _entry("d08", "d07", "context_edit", targetId="d02", replacement=None),
        _entry("d09", "d08", message=_msg("user", "third " * 200)),
        _entry("d10", "d09", message=_msg("assistant", "reply three " * 200)),
        _entry("x01", "d05", "context_edit", targetId="d04", replacement=None),
        _entry("d11", "d10", "context_edit", targetId="d09", replacement={"content": [{"type": "text", "text": "edited third"}]}),
    ])
    # a split turn whose tool results are followed by context edits (issue 27,
    # item 17): pi 1.6 moves the cut back over the edits (they carry no
    # messages), so the first kept entry is an edit and the calls and results
    # go to the turn prefix; then a new turn starting right after an edit
    out["crafted-split-edit-after-result"] = (header, [
        _entry("s01", None, message=_msg("user", "old task " * 300)),
        _entry("s02", "s01", message=_msg("assistant", "old answer " * 100)),
        _entry("s03", "s02", message=_msg("user", "read both files " * 100)),
        _entry("s04", "s03", message=_calls(["t1", "t2"], "reading " * 50)),
        _entry("s05", "s04", message=_result("t1", "first file " * 200)),
        _entry("s06", "s05", message=_result("t2", "second file " * 200)),
        _entry("s07", "s06", "context_edit", targetId="s05", replacement={"content": [{"type": "text", "text": "first file, shortened"}]}),
        _entry("s08", "s07", "context_edit", targetId="s06", replacement=None),
        _entry("s09", "s08", message=_msg("assistant", "both read " * 400)),
        _entry("s10", "s09", message=_calls(["t3"], "one more " * 20)),
        _entry("s11", "s10", message=_result("t3", "third file " * 300)),
        _entry("s12", "s11", "context_edit", targetId="s11", replacement={"content": "third file, shortened"}),
        _entry("s13", "s12", message=_msg("user", "next task " * 500)),
        _entry("s14", "s13", message=_msg("assistant", "done " * 300)),
    ])
    # an assistant with two calls, one result, a context edit, then a user
    # message: pi 1.6 cuts at the edit, a split turn whose prefix is the
    # custom message, the assistant and its result; the unanswered call
    # separates no result from its call, so ours cuts there too
    out["crafted-two-calls-one-result-edit"] = (header, [
        _entry("p01", None, message=_msg("user", big)),
        _entry("p02", "p01", message=_msg("assistant", "ok " * 200)),
        _entry("p03", "p02", "custom_message", customType="note", content="note " * 300, display=True),
        _entry("p04", "p03", message=_calls(["t1", "t2"], "reading " * 50)),
        _entry("p05", "p04", message=_result("t1", "first file " * 200)),
        _entry("p06", "p05", "context_edit", targetId="p05", replacement={"content": "first file, shortened"}),
        _entry("p07", "p06", message=_msg("user", "next task " * 300)),
    ])
    # the same, then a later call reusing the id t1 and its result: that
    # result answers the later call (kept with it), not the summarized one
    out["crafted-reused-call-id"] = (header, [
        *out["crafted-two-calls-one-result-edit"][1],
        _entry("p08", "p07", message=_calls(["t1"], "again " * 20)),
        _entry("p09", "p08", message=_result("t1", "again file " * 100)),
    ])
    return out


def tool_pairs_session(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A small linear session of tool work, drawn from ``seed``: user and
    custom messages, assistants making 0-3 calls (ids sometimes reused),
    results answering pending calls (sometimes out of order, some never),
    plain replies, and context edits (null, string and array content) of
    earlier entries. For checking where compaction cuts around tool calls."""
    r = random.Random(seed)
    header = {"type": "session", "version": 3, "id": f"01900000-0000-7000-8000-{seed:012d}",
              "timestamp": "2026-11-30T12:00:00.000Z", "cwd": "/work/project"}
    entries: list[dict[str, Any]] = []
    pending: list[str] = []
    made = 0

    def add(etype: str = "message", **fields: Any) -> None:
        eid = f"e{len(entries) + 1:02d}"
        entries.append(_entry(eid, entries[-1]["id"] if entries else None, etype, **fields))

    def words() -> str:
        return "w " * r.choice([10, 50, 200, 600])

    add(message=_msg("user", words()))
    for _ in range(r.randint(4, 12)):
        roll = r.random()
        if roll < 0.15:
            add(message=_msg("user", words()))
        elif roll < 0.22:
            add("custom_message", customType="note", content=words(), display=True)
        elif roll < 0.45:
            ids = []
            for _n in range(r.choice([0, 1, 2, 2, 3])):
                made += 1
                ids.append(f"t{r.randint(1, made)}" if r.random() < 0.3 else f"t{made}")
            add(message=_calls(ids, words()) if ids else _msg("assistant", words()))
            pending += ids
        elif roll < 0.7 and pending:
            add(message=_result(pending.pop(r.randrange(len(pending)) if r.random() < 0.3 else 0), words()))
        elif roll < 0.85:
            target = r.choice(entries)
            if target["type"] != "context_edit":
                replacement = r.choice([None, {"content": "short"}, {"content": [{"type": "text", "text": "short"}]}])
                add("context_edit", targetId=target["id"], replacement=replacement)
        else:
            add(message=_msg("assistant", words()))
    return header, entries


def _calls(ids: list[str], text: str) -> dict[str, Any]:
    m = _msg("assistant", text)
    m["content"] += [{"type": "toolCall", "id": i, "name": "read", "arguments": {"path": f"src/{i}.py"}} for i in ids]
    m["stopReason"] = "toolUse"
    return m


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "read", "content": [{"type": "text", "text": text}],
            "isError": False, "timestamp": 1764504000000}
