"""Regenerate tests/goldens/ops/: SessionManager scripts run by pi 1.6's
pi-oracle ``ops`` (``PI_ORACLE_PI=1.6.0``), all in one ``batch`` call.

    python tests/tools/make_ops_goldens.py

Each ``<name>.spec.json`` is a script of SessionManager calls (see
tests/opsgen.py); ``<name>.out.json`` is what pi printed (results, leaf,
header, entries, context, projection, files written). A spec with ``"open"``
names a session file stored next to it as ``<name>.session.jsonl``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(TESTS))
from make_session_goldens import ORACLE, random_ops  # noqa: E402
from opsgen import (  # noqa: E402
    PROCESS_CWD,
    ASSISTANT,
    BASH,
    CUSTOM_ROLE,
    SYSTEM,
    SYSTEM_PATCH,
    SYSTEM_TOOLS_ONLY,
    TOOL_ASSISTANT,
    TOOL_RESULT,
    USAGE,
    USER,
    compactions_on_path,
    random_ops16,
)

OUT = TESTS / "goldens" / "ops"
TS = "2026-11-30T12:00:00.000Z"


def _e(etype: str, eid: str, parent: str | None, **fields) -> dict:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": TS, **fields}


# a session file as pi 1.6 writes them: system message first, an edit, usage,
# a compaction with a systemMessage snapshot
OPEN_16 = [
    {"type": "session", "version": 3, "id": "0195e0e0-0000-7000-8000-000000000001", "timestamp": TS, "cwd": "/w"},
    _e("message", "a0000001", None, message=SYSTEM),
    _e("message", "a0000002", "a0000001", message=USER),
    _e("message", "a0000003", "a0000002", message=TOOL_ASSISTANT),
    _e("message", "a0000004", "a0000003", message=TOOL_RESULT),
    _e("context_edit", "a0000005", "a0000004", targetId="a0000004", replacement={"content": [{"type": "text", "text": "short"}]}),
    _e("usage", "a0000006", "a0000005", kind="cache_warm", provider="anthropic", model="m", usage=USAGE),
    _e("message", "a0000007", "a0000006", message=ASSISTANT),
    _e("compaction", "a0000008", "a0000007", summary="so far", firstKeptEntryId="a0000003", tokensBefore=500,
       systemMessage={**SYSTEM, "timestamp": 1764504000000}),
    _e("message", "a0000009", "a0000008", message={**USER, "content": "next"}),
]
OPEN_V2 = [
    {"type": "session", "version": 2, "id": "0195e0e0-0000-7000-8000-000000000002", "timestamp": TS, "cwd": "/w"},
    _e("message", "b0000001", None, message=USER),
    _e("message", "b0000002", "b0000001", message={"role": "hookMessage", "customType": "h", "content": "hook", "display": True, "timestamp": 3}),
]
SESSION_FILES = {
    "open-16": "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in OPEN_16),
    "open-v2": "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in OPEN_V2),
    "open-empty": "",
    "open-not-session": '{"type":"message","id":"c0000001","parentId":null}\n',
    "open-blank-lines": "\n\n",
}

HANDWRITTEN: dict[str, dict] = {
    # 0.73-era scripts, now answered by pi 1.6
    "no-assistant": {"cwd": "/w", "persist": True, "ops": [["appendMessage", USER], ["appendModelChange", "p", "m"]]},
    "first-assistant": {"cwd": "/w", "persist": True, "ops": [["appendMessage", USER], ["appendThinkingLevelChange", "high"], ["appendMessage", ASSISTANT], ["appendSessionInfo", " x "]]},
    "errors": {"cwd": "/w", "persist": False, "ops": [["appendMessage", USER], ["branch", "nope"], ["appendLabelChange", "nope", "x"], ["branchWithSummary", "nope", "s"]]},
    "branched": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendLabelChange", "@0", "L0"],
        ["appendMessage", USER], ["appendLabelChange", "@3", "L3"], ["appendLabelChange", "@0", ""],
        ["appendLabelChange", "@1", "L1"], ["createBranchedSession", "@3"], ["appendMessage", USER]]},
    "branched-no-assistant": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["resetLeaf"], ["appendMessage", USER],
        ["createBranchedSession", "@3"], ["appendMessage", USER], ["appendMessage", ASSISTANT]]},
    "in-memory-branched": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", USER], ["appendLabelChange", "@0", "L"], ["appendMessage", ASSISTANT], ["createBranchedSession", "@2"]]},
    "reset-and-summary": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["resetLeaf"], ["appendMessage", USER],
        ["branchWithSummary", None, "from root"], ["appendCustomMessageEntry", "t", "c", False, {"d": 1}],
        ["appendCustomEntry", "t"], ["appendCompaction", "s", "@5", 9, None, True]]},
    # a compaction keeping an entry of another branch: pi writes it (the
    # context is the summary alone); pi-session refuses it (beyond pi)
    "compaction-off-path": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["resetLeaf"], ["appendMessage", USER],
        ["branchWithSummary", None, "from root"], ["appendCustomMessageEntry", "t", "c", False, {"d": 1}],
        ["appendCustomEntry", "t"], ["appendCompaction", "s", "@0", 9, None, True]]},
    # pi 1.6: the file appears at the first user (or assistant) message; setup entries alone leave none
    "first-user": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", SYSTEM], ["appendModelChange", "p", "m"], ["appendThinkingLevelChange", "low"], ["getEntryCount"],
        ["usesDefaultSessionDir"], ["appendMessage", USER], ["appendUsage", "cache_warm", "anthropic", "m", USAGE]]},
    "system-only": {"cwd": "/w", "persist": True, "ops": [["appendMessage", SYSTEM], ["appendModelChange", "p", "m"], ["appendMessage", SYSTEM_PATCH]]},
    # appendContextEdit: every kind of target, string normalization, pi's check order
    "context-edit": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", SYSTEM], ["appendMessage", USER], ["appendMessage", TOOL_ASSISTANT], ["appendMessage", TOOL_RESULT],
        ["appendCustomMessageEntry", "note", "cm", True], ["appendMessage", BASH], ["appendMessage", CUSTOM_ROLE],
        ["appendContextEdit", "@1", {"content": "NEW USER"}],
        ["appendContextEdit", "@2", {"content": "NEW ASSISTANT"}],
        ["appendContextEdit", "@3", {"content": "tool out"}],
        ["appendContextEdit", "@4", {"content": [{"type": "text", "text": "cm blocks"}]}],
        ["appendContextEdit", "@4", {"content": "cm string"}],
        ["appendContextEdit", "@1", {"content": "kept extra", "extra": 1}],
        ["appendContextEdit", "@2", {"content": "drops extra", "extra": 1}],
        ["appendContextEdit", "@3", None],
        ["appendContextEdit", "@0", {"content": "x"}],
        ["appendContextEdit", "@5", {"content": "x"}],
        ["appendContextEdit", "@6", {"content": "x"}],
        ["appendContextEdit", "@7", {"content": "x"}],
        ["appendContextEdit", "nope", {"content": "x"}],
        ["appendContextEdit", "@1", {"content": 5}],
        ["appendContextEdit", "@1", {"text": "x"}],
        ["appendContextEdit", "@1", "x"],
        ["appendContextEdit", "@1", [1]],
        ["appendContextEdit", "nope", {"content": None}],
        ["getEntryCount"], ["buildContextEntries"], ["buildSessionProjection"]]},
    "context-edit-branches": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendMessage", USER],
        ["branchWithSummary", "@0", "went back"], ["appendCompaction", "c", "@0", 10],
        ["appendUsage", "k", "p", "m", USAGE], ["appendLabelChange", "@0", "L"],
        ["appendContextEdit", "@3", {"content": "x"}],
        ["appendContextEdit", "@4", {"content": "x"}],
        ["appendContextEdit", "@5", {"content": "x"}],
        ["appendContextEdit", "@6", {"content": "x"}],
        ["appendContextEdit", "@1", {"content": "x"}],
        ["appendContextEdit", "@2", None],
        ["branch", "@1"], ["appendContextEdit", "@1", None], ["appendContextEdit", "@2", {"content": "x"}],
        ["resetLeaf"], ["appendContextEdit", "@0", {"content": "x"}],
        ["buildSessionProjection"]]},
    # appendUsage returns the entry; "@N" of it is its id; a note only when non-empty
    "usage": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendUsage", "cache_warm", "anthropic", "m", USAGE, "note here"],
        ["appendUsage", "cache_warm", "anthropic", "m", USAGE, ""], ["appendUsage", "other", "openai", "g", USAGE],
        ["appendLabelChange", "@1", "on usage"], ["branch", "@2"], ["appendMessage", ASSISTANT], ["getEntryCount"]]},
    # appendCompaction: null first-kept, usage, the systemMessage snapshot and its absence
    "compaction-system": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", SYSTEM], ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendMessage", SYSTEM_PATCH],
        ["appendMessage", USER], ["appendCompaction", "first", None, 100],
        ["appendMessage", ASSISTANT], ["appendCompaction", "second", "@6", 200, {"readFiles": [], "modifiedFiles": []}, False, USAGE],
        ["appendMessage", USER], ["buildContextEntries"], ["buildSessionProjection"]]},
    "compaction-plain": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendCompaction", "s", "@0", 5, None, True, USAGE],
        ["appendCompaction", "t", None, 6, {"readFiles": ["a"], "modifiedFiles": ["b"]}], ["appendMessage", USER]]},
    "compaction-tools-only": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", SYSTEM_TOOLS_ONLY], ["appendMessage", USER], ["appendCompaction", "s", "@1", 5],
        ["appendMessage", {"role": "system", "content": "", "timestamp": 9}], ["appendCompaction", "t", None, 6]]},
    "compaction-edited-system": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", SYSTEM], ["appendMessage", USER], ["appendCompaction", "s", None, 5],
        ["appendContextEdit", "@2", None], ["appendMessage", USER], ["appendCompaction", "t", None, 6]]},
    # branchWithSummary: fromId is the leaf left behind ("root" when none); usage stored
    "branch-summary": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendMessage", USER],
        ["branchWithSummary", "@0", "s", {"readFiles": [], "modifiedFiles": []}, False, USAGE],
        ["resetLeaf"], ["branchWithSummary", None, "from nothing"], ["branchWithSummary", "@1", "again"],
        ["branchWithSummary", None, "", None, None, USAGE]]},
    "session-info": {"cwd": "/w", "persist": False, "ops": [
        ["appendSessionInfo", "a\r\n\nb \n c "], ["appendSessionInfo", "\n\r\n"], ["appendSessionInfo", " \u00a0x\u2028\ufeff"],
        ["appendSessionInfo", "tab\tkept"]]},
    # explicit session ids
    "explicit-id": {"cwd": "/w", "persist": True, "id": "my-session.1", "ops": [
        ["appendMessage", USER], ["newSession", {"id": "bad id"}], ["newSession", {"id": "-x"}], ["newSession", {"id": "x."}],
        ["newSession", {"id": ""}], ["newSession", {"id": "ok_2", "parentSession": "/p.jsonl"}], ["appendMessage", USER],
        ["newSession", {"id": "A"}], ["appendMessage", ASSISTANT]]},
    "explicit-id-in-memory": {"cwd": "/w", "persist": False, "id": "mem1", "ops": [["appendMessage", USER]]},
    # in-memory sessions from records
    "entries-with-header": {"cwd": "/w", "persist": False, "entries": OPEN_16, "ops": [
        ["appendContextEdit", "a0000009", {"content": "edited next"}], ["getEntryCount"], ["buildSessionProjection"]]},
    "entries-without-header": {"cwd": "/w", "persist": False, "id": "given", "entries": OPEN_16[1:4], "ops": [
        ["appendMessage", ASSISTANT], ["buildContextEntries"]]},
    "entries-v2": {"cwd": "/w", "persist": False, "entries": OPEN_V2, "ops": [["appendMessage", ASSISTANT]]},
    # opened files
    "open-16": {"persist": True, "open": "open-16.session.jsonl", "ops": [
        ["getEntryCount"], ["appendContextEdit", "a0000009", None], ["appendContextEdit", "a0000003", {"content": "x"}],
        ["appendCompaction", "again", None, 50], ["appendMessage", USER], ["buildSessionProjection"],
        ["createBranchedSession", "a0000009"], ["appendMessage", ASSISTANT]]},
    "open-v2": {"persist": True, "open": "open-v2.session.jsonl", "ops": [["appendMessage", ASSISTANT]]},
    "open-empty": {"persist": True, "open": "open-empty.session.jsonl", "ops": [["appendModelChange", "p", "m"], ["appendMessage", SYSTEM]]},
    "open-not-session": {"persist": True, "open": "open-not-session.session.jsonl", "ops": [["appendMessage", USER]]},
    "open-blank-lines": {"persist": True, "open": "open-blank-lines.session.jsonl", "ops": [["appendMessage", USER]]},
    # createBranchedSession: re-chaining past labels, first-kept ids that named a label, when the file is written
    "branched-relink": {"cwd": "/w", "persist": True, "ops": [
        ["appendMessage", USER], ["appendMessage", ASSISTANT], ["appendLabelChange", "@0", "L0"], ["appendMessage", USER],
        ["appendCompaction", "s", "@2", 10], ["appendMessage", ASSISTANT], ["appendLabelChange", "@3", "L3"],
        ["appendLabelChange", "@1", "L1"], ["appendCompaction", "t", "@7", 10],
        ["createBranchedSession", "@8"], ["appendMessage", USER]]},
    "branched-relink-in-memory": {"cwd": "/w", "persist": False, "ops": [
        ["appendMessage", USER], ["appendLabelChange", "@0", "L"], ["appendLabelChange", "@0", "M"], ["appendMessage", ASSISTANT],
        ["appendCompaction", "s", "@1", 10], ["createBranchedSession", "@4"]]},
    "branched-user-only": {"cwd": "/w", "persist": True, "ops": [
        ["appendModelChange", "p", "m"], ["appendMessage", USER], ["createBranchedSession", "@1"], ["appendModelChange", "p", "n"]]},
    "branched-setup-only": {"cwd": "/w", "persist": True, "ops": [
        ["appendModelChange", "p", "m"], ["appendMessage", SYSTEM], ["appendMessage", USER], ["createBranchedSession", "@1"],
        ["appendThinkingLevelChange", "high"], ["appendMessage", USER]]},
}


def _listing_files() -> dict[str, str]:
    """Session files for the listing golden: matching and other cwds, ties
    in ``modified``, names, a non-session and an empty file."""
    r = random.Random(16)
    cwds = ["/p", "/p", "/p/", "/p/sub/..", "/q", "", None, "/p"]
    files: dict[str, str] = {}
    for n in range(23):
        sid = f"0195e0e0-0000-7000-8000-{n:012d}"
        name = f"2026-01-{1 + n % 28:02d}T00-00-00-000Z_{sid}.jsonl"
        header = {"type": "session", "version": 3, "id": sid, "timestamp": f"2026-01-{1 + n % 28:02d}T00:00:00.000Z"}
        cwd = cwds[n % len(cwds)]
        if cwd is not None:
            header["cwd"] = cwd
        records = [header]
        parent = None
        for i in range(r.randint(0, 3)):
            role = r.choice(["user", "assistant", "toolResult"])
            ts = r.choice([1_767_000_000_000, 1_767_000_500_000, 1_767_001_000_000])  # ties on purpose
            eid = f"{n:02x}{i:06x}"
            records.append({"type": "message", "id": eid, "parentId": parent, "timestamp": TS,
                            "message": {"role": role, "content": f"text {n} {i}", "timestamp": ts}})
            parent = eid
        if n % 5 == 0:
            records.append({"type": "session_info", "id": f"{n:02x}ffffff", "parentId": parent, "timestamp": TS, "name": f" name {n} "})
        files[name] = "".join(json.dumps(x) + "\n" for x in records)
    files["zz-not-a-session.jsonl"] = '{"type":"message","id":"x"}\n'
    files["empty.jsonl"] = ""
    files["notes.txt"] = "not listed\n"
    return files


def make_listing_golden() -> None:
    """tests/goldens/ops/listing.json: pi 1.6's ``list`` (with and without a
    cwd, in a non-default and in cwd's default directory, with progress) and
    ``find-by-id`` over the files of :func:`_listing_files`."""
    files = _listing_files()
    some_id = "0195e0e0-0000-7000-8000-000000000003"
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "agent"
        other = Path(tmp) / "other"
        default = agent / "sessions" / "--p--"
        for d in (other, default):
            d.mkdir(parents=True)
            for name, text in files.items():
                (d / name).write_text(text)
        calls = [
            ["list", "<DIR>", "--cwd", "/p", "--progress"],
            ["list", "<DIR>", "--cwd", "/q", "--progress"],
            ["list", "<DIR>", "--progress"],
            ["list", "<DEFAULT>", "--cwd", "/p", "--progress"],
            ["find-by-id", "<DIR>", some_id, "--cwd", "/p"],
            ["find-by-id", "<DIR>", some_id, "--cwd", "/q"],
            ["find-by-id", "<DEFAULT>", some_id, "--cwd", "/p"],
            ["find-by-id", "<DIR>", "0195e0e0-0000-7000-8000-000000000004", "--cwd", "/q"],
            ["find-by-id", "<DIR>", "nope", "--cwd", "/p"],
        ]

        def fill(args: list[str]) -> list[str]:
            return [a.replace("<DIR>", str(other)).replace("<DEFAULT>", str(default)) for a in args]

        batch = Path(tmp) / "calls.json"
        batch.write_text(json.dumps([fill(c) for c in calls]))
        raw = oracle16("batch", str(batch), env={"PI_CODING_AGENT_DIR": str(agent)})
        raw = raw.replace(str(other), "<DIR>").replace(str(default), "<DEFAULT>")
        answers = json.loads(raw)
    golden = {"files": files, "calls": [{"args": c, "out": a["json"]} for c, a in zip(calls, answers)]}
    (OUT / "listing.json").write_text(json.dumps(golden, indent=1) + "\n")


def oracle16(*args: str, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "PI_ORACLE_PI": "1.6.0", **(env or {})}
    for _ in range(3):  # node has been seen to exit with nothing written; retry
        out = subprocess.run([str(ORACLE), *args], check=True, capture_output=True, text=True, env=env).stdout
        if out.strip():
            return out
    raise RuntimeError(f"pi-oracle {' '.join(args)} printed nothing")


def run_batch(specs: dict[str, dict], base: Path) -> dict[str, dict]:
    """Run every spec through pi 1.6's ``ops`` in one ``batch`` call;
    relative ``open`` paths are taken from ``base``. Returns name →
    output (``{"error": ...}`` where pi threw)."""
    with tempfile.TemporaryDirectory() as tmp:
        calls = []
        for name, spec in specs.items():
            spec = dict(spec)
            if spec.get("open") is not None:
                spec["open"] = str((base / spec["open"]).resolve())
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(spec))
            calls.append(["ops", str(path)])
        batch = Path(tmp) / "calls.json"
        batch.write_text(json.dumps(calls))
        answers = json.loads(oracle16("batch", str(batch)))
    return {name: (a["json"] if "json" in a else {"error": a.get("error")}) for name, a in zip(specs, answers)}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*"):
        old.unlink()
    for name, text in SESSION_FILES.items():
        (OUT / f"{name}.session.jsonl").write_text(text)
    specs = dict(HANDWRITTEN)
    for seed in range(6):
        specs[f"random-{seed}"] = compactions_on_path(random_ops(100 + seed))
    for seed in range(10):
        specs[f"random16-{seed}"] = random_ops16(random.Random(1600 + seed), max_ops=40)
    outs = run_batch(specs, OUT)
    for name, spec in specs.items():
        (OUT / f"{name}.spec.json").write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
        # an empty file's new header takes the oracle process's cwd: store it
        # as a placeholder (tests/opsgen.py maps the test process's cwd to it)
        text = json.dumps(outs[name], indent=1, ensure_ascii=False).replace(json.dumps(os.getcwd())[1:-1], PROCESS_CWD)
        (OUT / f"{name}.out.json").write_text(text + "\n")
    make_listing_golden()


if __name__ == "__main__":
    main()
