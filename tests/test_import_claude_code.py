"""``pi-session import --from claude-code``: one small fixture per
conversion rule (built from Claude Code's documented record shapes), the
incremental/idempotent import, damaged lines, and a property test over
generated sessions."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_import_helpers import (
    CWD,
    SID,
    assert_claude_code_lossless,
    assert_valid_for_pi_and_providers,
    kept_fields,
    kept_records,
    cc,
    cc_assistant,
    cc_user,
    path_to_leaf,
    session_entries,
    tool_result,
    tool_use,
    ts,
    write_jsonl,
)
from pi_session.importers import import_agent_sessions, pi_session_id
from pi_session.importers.claude_code import convert_records
from pi_session.importers.common import NAMESPACE, SourceRecord
from pi_session.stores import open_store


def project(tmp_path: Path) -> Path:
    return tmp_path / "claude" / "projects" / "-home-ada-project"


def run_import(tmp_path: Path, store: str | None = None):
    target = open_store(store or str(tmp_path / "sessions"))
    return list(import_agent_sessions("claude-code", [tmp_path / "claude" / "projects"], target)), target


def imported_file(target, session_id: str) -> Path:
    return Path(target.locator(session_id))


def basic(tmp_path: Path) -> Path:
    return write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "list the files"),
            cc_assistant("a1", "u1", 2, "msg_1", [{"type": "text", "text": "Sure."}]),
        ],
    )


def test_session_id_and_entry_ids_derive_from_the_source_ids(tmp_path):
    basic(tmp_path)
    results, target = run_import(tmp_path)
    [r] = results
    assert r.result.status == "imported"
    assert r.result.session_id == str(uuid.uuid5(NAMESPACE, f"claude-code:{SID}")) == pi_session_id("claude-code", SID)
    header, entries = session_entries(imported_file(target, r.result.session_id))
    assert header["cwd"] == CWD and header["timestamp"] == "2025-06-01T10:00:01.000Z" and header["version"] == 3
    msgs = [e for e in entries if e["type"] == "message"]
    assert [m["message"]["role"] for m in msgs] == ["user", "assistant"]
    assert msgs[0]["message"]["content"] == "list the files"
    assert msgs[0]["timestamp"] == "2025-06-01T10:00:01.000Z"
    assert msgs[1]["message"]["timestamp"] == 1748772002000
    # the same records always give the same lines (ids included)
    again, _ = run_import(tmp_path, str(tmp_path / "other"))
    assert imported_file(again[0] and open_store(str(tmp_path / "other")), r.result.session_id).read_bytes() == imported_file(target, r.result.session_id).read_bytes()
    assert_valid_for_pi_and_providers(imported_file(target, r.result.session_id))


def test_an_agent_import_result_has_the_json_shape_import_prints(tmp_path):
    basic(tmp_path)
    [r] = run_import(tmp_path)[0]
    assert r.to_json() == {"source": r.result.source, "status": "imported", "id": r.result.session_id,
                           "entries": dict(sorted(r.counts.items())), "damaged": []}
    assert list(r.to_json()["entries"]) == sorted(r.counts)


def test_branches_are_kept(tmp_path):
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "first try"),
            cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "A"}]),
            cc_user("u2", "a1", 3, "left"),
            cc_user("u3", "a1", 4, "right (edited)"),
            cc_assistant("a3", "u3", 5, "m3", [{"type": "text", "text": "B"}]),
        ],
    )
    [r], target = run_import(tmp_path)
    _h, entries = session_entries(imported_file(target, r.result.session_id))
    users = {e["message"]["content"]: e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"}
    by_id = {e["id"]: e for e in entries}

    def message_parent(e):
        p = by_id[e["parentId"]]
        while p["type"] != "message":
            p = by_id[p["parentId"]]
        return p

    assert message_parent(users["left"]) is message_parent(users["right (edited)"])
    leaf_path = [e["message"].get("content") for e in path_to_leaf(entries) if e["type"] == "message" and e["message"]["role"] == "user"]
    assert leaf_path == ["first try", "right (edited)"]


def test_split_assistant_records_merge_and_parallel_results_chain(tmp_path):
    """Claude Code writes one record per content block, all with one
    message.id, and hangs each parallel result on its own block's record."""
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "look at two files"),
            cc_assistant("a1", "u1", 2, "m1", [{"type": "thinking", "thinking": "hmm", "signature": "sig=="}], stop=None),
            cc_assistant("a2", "a1", 2, "m1", [{"type": "redacted_thinking", "data": "opaque"}], stop=None),
            cc_assistant("a3", "a2", 2, "m1", [{"type": "text", "text": "Reading both."}], stop=None),
            cc_assistant("a4", "a3", 3, "m1", [tool_use("t1", "Read", file_path="a.py")], stop="tool_use"),
            cc_assistant("a5", "a4", 3, "m1", [tool_use("t2", "Read", file_path="b.py")], stop="tool_use"),
            cc_user("r2", "a5", 4, [tool_result("t2", "File does not exist.", True)], toolUseResult="Error: File does not exist."),
            cc_user("r1", "a4", 4, [tool_result("t1", [{"type": "text", "text": "print(1)"}])], toolUseResult={"file": {"filePath": "a.py"}}),
            cc_assistant("a6", "r1", 5, "m2", [{"type": "text", "text": "a.py prints 1; b.py is missing."}], model="claude-opus-4-1"),
        ],
    )
    [r], target = run_import(tmp_path)
    path = imported_file(target, r.result.session_id)
    _h, entries = session_entries(path)
    context = assert_valid_for_pi_and_providers(path)
    roles = [m["role"] for m in context["messages"]]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    a = context["messages"][1]
    assert a["content"] == [
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig=="},
        {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True},
        {"type": "text", "text": "Reading both."},
        {"type": "toolCall", "id": "t1", "name": "Read", "arguments": {"file_path": "a.py"}},
        {"type": "toolCall", "id": "t2", "name": "Read", "arguments": {"file_path": "b.py"}},
    ]
    assert a["stopReason"] == "toolUse" and a["model"] == "claude-sonnet-4-5" and a["provider"] == "anthropic"
    assert a["usage"]["input"] == 10 and a["usage"]["output"] == 5 and a["usage"]["cacheRead"] == 100 and a["usage"]["cacheWrite"] == 20
    assert a["usage"]["totalTokens"] == 135
    r2, r1 = context["messages"][2], context["messages"][3]
    assert (r2["toolCallId"], r2["toolName"], r2["isError"], r2["details"]["toolUseResult"]) == ("t2", "Read", True, "Error: File does not exist.")
    assert (r1["toolCallId"], r1["isError"], r1["content"]) == ("t1", False, [{"type": "text", "text": "print(1)"}])
    models = [e["modelId"] for e in entries if e["type"] == "model_change"]
    assert models == ["claude-sonnet-4-5", "claude-opus-4-1"]
    assert context["model"] == {"provider": "anthropic", "modelId": "claude-opus-4-1"}


def test_images_in_prompts_and_tool_results(tmp_path):
    png = "iVBORw0KGgo="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, [{"type": "text", "text": "what is this?"}, image]),
            cc_assistant("a1", "u1", 2, "m1", [tool_use("t1", "Screenshot")], stop="tool_use"),
            cc_user("r1", "a1", 3, [tool_result("t1", [image])]),
        ],
    )
    [r], target = run_import(tmp_path)
    context = assert_valid_for_pi_and_providers(imported_file(target, r.result.session_id))
    assert context["messages"][0]["content"] == [{"type": "text", "text": "what is this?"}, {"type": "image", "data": png, "mimeType": "image/png"}]
    assert context["messages"][2]["content"] == [{"type": "image", "data": png, "mimeType": "image/png"}]


def test_compaction_boundary_and_summary_become_a_compaction_entry(tmp_path):
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "old question"),
            cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "old answer"}]),
            cc("system", "b1", None, 3, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid="a1", compactMetadata={"trigger": "auto", "preTokens": 1234}),
            cc_user("s1", "b1", 4, "This session is being continued... Summary: asked and answered.", isCompactSummary=True, isVisibleInTranscriptOnly=True),
            cc_user("u2", "s1", 5, "new question"),
        ],
    )
    [r], target = run_import(tmp_path)
    path = imported_file(target, r.result.session_id)
    _h, entries = session_entries(path)
    [comp] = [e for e in entries if e["type"] == "compaction"]
    assert comp["summary"] == "This session is being continued... Summary: asked and answered."
    assert comp["firstKeptEntryId"] == comp["id"] and comp["tokensBefore"] == 1234
    ids_on_path = [e["id"] for e in path_to_leaf(entries)]
    a1 = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert ids_on_path.index(a1["id"]) < ids_on_path.index(comp["id"])  # parented on logicalParentUuid
    context = assert_valid_for_pi_and_providers(path)
    assert [m["role"] for m in context["messages"]] == ["compactionSummary", "user"]
    assert any(rec.get("isVisibleInTranscriptOnly") for rec in comp["imported"]["fields"])  # the summary record's fields, on the compaction
    assert not any(e["type"] == "custom" for e in entries)


def test_titles_name_the_session(tmp_path):
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            {"type": "summary", "summary": "Fixing the build", "leafUuid": "a1"},
            cc_user("u1", None, 1, "the build fails"),
            cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "Let me see."}]),
            {"type": "custom-title", "customTitle": "build-fix", "sessionId": SID},
        ],
    )
    [r], target = run_import(tmp_path)
    path = imported_file(target, r.result.session_id)
    _h, entries = session_entries(path)
    assert [e["name"] for e in entries if e["type"] == "session_info"] == ["Fixing the build", "build-fix"]
    assert entries[-1]["type"] in ("session_info", "custom")
    assert_valid_for_pi_and_providers(path)
    from pi_session.stores.listing import build_session_info

    info = build_session_info(path)
    assert info is not None
    assert info["name"] == "build-fix" and info["firstMessage"] == "the build fails" and info["cwd"] == CWD


def test_sidechains_and_subagent_files_become_linked_sessions(tmp_path):
    main = write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "explore"),
            cc_assistant("a1", "u1", 2, "m1", [tool_use("t1", "Task", prompt="find it")], stop="tool_use"),
            cc_user("x1", None, 3, "find it", isSidechain=True),
            cc_assistant("x2", "x1", 4, "mx", [{"type": "text", "text": "found"}], isSidechain=True),
            cc_user("r1", "a1", 5, [tool_result("t1", "found")]),
        ],
    )
    agent_dir = main.parent / SID / "subagents"
    write_jsonl(agent_dir / "agent-abc123.jsonl", [cc_user("y1", None, 6, "sub task", isSidechain=True, agentId="abc123"), cc_assistant("y2", "y1", 7, "my", [{"type": "text", "text": "done"}], isSidechain=True, agentId="abc123")])
    (agent_dir / "agent-abc123.meta.json").write_text(json.dumps({"agentType": "Explore", "description": "look around"}))
    results, target = run_import(tmp_path)
    assert [r.result.status for r in results] == ["imported"] * 3
    main_id = pi_session_id("claude-code", SID)
    side_id = pi_session_id("claude-code", f"{SID}/sidechain/x1")
    agent_id = pi_session_id("claude-code", f"{SID}/agent/abc123")
    assert [r.result.session_id for r in results] == [main_id, side_id, agent_id]
    main_path = imported_file(target, main_id)
    for sid in (side_id, agent_id):
        header, entries = session_entries(imported_file(target, sid))
        assert header["parentSession"] == str(main_path)
        assert_valid_for_pi_and_providers(imported_file(target, sid))
    _h, agent_entries = session_entries(imported_file(target, agent_id))
    assert kept_records(agent_entries)[0] == {"type": "agent-meta", "agentType": "Explore", "description": "look around"}  # with the first entry
    _h, main_entries = session_entries(main_path)
    assert not any(e["type"] == "message" and e["message"].get("content") == "find it" for e in main_entries)
    assert_valid_for_pi_and_providers(main_path)


def test_everything_without_a_pi_equivalent_is_kept_on_the_entries(tmp_path):
    progress = {"type": "progress", "uuid": "p1", "parentUuid": "a1", "timestamp": "2025-06-01T10:00:03.000Z", "data": {"type": "hook_progress"}, "toolUseID": "t1"}
    snapshot = {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False}
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            snapshot,
            cc_user("u1", None, 1, "go"),
            cc_assistant("a1", "u1", 2, "m1", [tool_use("t1"), {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}}], stop="tool_use"),
            progress,
            cc_user("r1", "p1", 4, [tool_result("t1", "done")]),
            cc("system", "sys1", "r1", 5, subtype="local_command", content="<local-command-stdout>hi</local-command-stdout>", level="info"),
        ],
    )
    [r], target = run_import(tmp_path)
    assert r.counts["custom:claude-code/records"] == 1 and r.counts["message:assistant"] == 1
    assert sum(n for kind, n in r.counts.items() if kind.startswith("custom")) == 1
    path = imported_file(target, r.result.session_id)
    _h, entries = session_entries(path)
    by_id = {e["id"]: e for e in entries}
    # kept whole on the next entry: the snapshot on the prompt, the progress note on the result it preceded
    first = entries[0]
    assert first["message"]["role"] == "user" and first["imported"]["records"] == [snapshot]
    result = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult")
    assert result["imported"]["records"] == [progress]
    assert by_id[result["parentId"]]["message"]["role"] == "assistant"  # no branch, no entry between
    kept = kept_fields(entries)
    assert len(kept) == 3 and all(rec["gitBranch"] == "main" and rec["version"] == "2.1.0" for rec in kept)
    assert any(rec.get("message", {}).get("content") == [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}}] for rec in kept)
    # the last record, with nothing after it in a file left alone: an entry of its own, where it was
    last = entries[-1]
    assert last["type"] == "custom" and last["customType"] == "claude-code/records" and last["imported"]["records"][0]["uuid"] == "sys1"
    assert last["parentId"] == result["id"]
    context = assert_valid_for_pi_and_providers(path)
    assert [m["role"] for m in context["messages"]] == ["user", "assistant", "toolResult"]


def test_damaged_lines_are_reported_with_file_and_line_and_skipped(tmp_path, cli):
    src = write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [cc_user("u1", None, 1, "hello")],
        (b'{"type": "assistant", broken\n', b"[1, 2]\n", json.dumps(cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "hi"}])).encode() + b"\n", b'{"type":"user","uu'),
    )
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0, proc.stderr
    assert f"{src}:2: not JSON" in proc.stderr
    assert f"{src}:3: not a JSON object" in proc.stderr
    assert f"{src}:5: a torn last line" in proc.stderr
    assert "Traceback" not in proc.stderr
    target = open_store(str(tmp_path / "sessions"))
    _h, entries = session_entries(imported_file(target, pi_session_id("claude-code", SID)))
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"]


def test_the_cli_says_when_a_response_waits_for_the_next_import(tmp_path, cli):
    import os

    records = [cc_user("u1", None, 1, "go"), cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "half"}], stop=None)]
    src = write_jsonl(project(tmp_path) / f"{SID}.jsonl", records)
    os.utime(src)  # written just now
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(tmp_path / "sessions"))
    assert proc.returncode == 0, proc.stderr
    assert f"{src}: the last response (1 record) may still be being written" in proc.stderr.replace("\n", " ")
    assert "--settle 0 imports it now" in proc.stderr.replace("\n", " ")
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(tmp_path / "sessions"), "--json")
    assert [r.get("heldBack") for r in json.loads(proc.stdout)] == [1]
    now = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(tmp_path / "sessions"),
              "--settle", "0", "--json")
    assert now.returncode == 0, now.stderr
    assert [(r["status"], r.get("heldBack")) for r in json.loads(now.stdout)] == [("updated", None)]
    bad = cli("import", "--from", "claude-code", "--settle", "-1", "--store", str(tmp_path / "sessions"))
    assert bad.returncode == 2 and "--settle" in bad.stderr and "Traceback" not in bad.stderr


def test_reimport_appends_what_the_source_gained_and_a_rewrite_is_a_conflict(tmp_path, cli):
    records = [cc_user("u1", None, 1, "one"), cc_assistant("a1", "u1", 2, "m1", [tool_use("t1")], stop="tool_use")]
    src = write_jsonl(project(tmp_path) / f"{SID}.jsonl", records)
    args = ("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", f"sqlite:///{tmp_path / 's.db'}")
    first = cli(*args)
    assert first.returncode == 0 and "1 imported" in first.stdout, first.stderr
    assert "1 unchanged" in cli(*args).stdout
    records += [cc_user("r1", "a1", 3, [tool_result("t1", "a b c")]), cc_assistant("a2", "r1", 4, "m2", [{"type": "text", "text": "three files"}])]
    write_jsonl(src, records)
    grown = cli(*args)
    assert grown.returncode == 0 and "1 updated" in grown.stdout and "new lines appended" in grown.stdout, grown.stdout
    target = open_store(f"sqlite:///{tmp_path / 's.db'}")
    session_id = pi_session_id("claude-code", SID)
    stored = list(target.read_lines(session_id))
    # the same as a fresh import of the whole source
    fresh, other = run_import(tmp_path, str(tmp_path / "fresh"))
    assert stored == list(other.read_lines(session_id))
    records[0] = cc_user("u1", None, 1, "one, rewritten")
    write_jsonl(src, records)
    clash = cli(*args)
    assert clash.returncode == 1 and "conflict" in clash.stderr + clash.stdout
    assert list(target.read_lines(session_id)) == stored


def test_unknown_agent_and_missing_path_are_one_line_errors(tmp_path, cli):
    proc = cli("import", "--from", "gemini", "--store", str(tmp_path / "s"))
    assert proc.returncode != 0 and "unknown agent" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("import", "--from", "claude-code", str(tmp_path / "nope"), "--store", str(tmp_path / "s"))
    assert proc.returncode != 0 and "no such file" in proc.stderr
    proc = cli("import", "--from", "codex", "--store", str(tmp_path / "s"), env={"CODEX_HOME": str(tmp_path / "no-codex")})
    assert proc.returncode != 0 and f"{tmp_path / 'no-codex' / 'sessions'}: no such file or directory (where codex keeps" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_default_source_and_target_directories(tmp_path, cli):
    basic(tmp_path)
    proc = cli("import", "--from", "claude-code", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    assert proc.returncode == 0, proc.stderr
    [path] = (tmp_path / "agent" / "sessions" / "--home-ada-project--").glob("*.jsonl")
    assert path.name.endswith(f"_{pi_session_id('claude-code', SID)}.jsonl")


# --- property test: generated sessions -----------------------------------


@st.composite
def sessions(draw):
    """A Claude Code session: prompts, split assistant messages with
    parallel tool calls and their results (in any order, hung on any block),
    progress notes, branches, compactions, titles."""
    records = []
    n = 0
    uid = 0
    last = None
    msg = 0

    def new():
        nonlocal uid
        uid += 1
        return f"id{uid}"

    for _turn in range(draw(st.integers(1, 5))):
        n += 1
        parent = last
        if records and draw(st.booleans()) and draw(st.booleans()):
            parent = draw(st.sampled_from([r["uuid"] for r in records if "uuid" in r]))
        if draw(st.integers(0, 6)) == 0 and records:
            b = new()
            records.append(cc("system", b, None, n, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=last, compactMetadata={"preTokens": 99}))
            s = new()
            records.append(cc_user(s, b, n, "summary text", isCompactSummary=True))
            parent = s
        u = new()
        records.append(cc_user(u, parent, n, draw(st.text(min_size=1, max_size=8))))
        last = u
        msg += 1
        calls = [f"call{msg}_{i}" for i in range(draw(st.integers(0, 3)))]
        blocks = [{"type": "text", "text": "ok"}] + [tool_use(c) for c in calls]
        block_ids = []
        for i, blk in enumerate(blocks):
            a = new()
            records.append(cc_assistant(a, last, n, f"m{msg}", [blk], stop="tool_use" if calls else "end_turn"))
            last = a
            block_ids.append(a)
            if draw(st.integers(0, 4)) == 0:
                p = new()
                records.append({"type": "progress", "uuid": p, "parentUuid": a, "timestamp": "2025-06-01T10:00:00.000Z", "data": {}})
        answered = draw(st.permutations(calls))
        if answered and draw(st.integers(0, 5)) == 0:
            answered = answered[:-1]  # an interrupted turn: a call left unanswered
        for c in answered:
            r = new()
            records.append(cc_user(r, block_ids[calls.index(c) + 1], n, [tool_result(c, "out", draw(st.booleans()))]))
            last = r
        if draw(st.integers(0, 5)) == 0:
            records.append({"type": "summary", "summary": draw(st.text(min_size=1, max_size=5)), "leafUuid": last})
    return records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=sessions())
def test_generated_sessions_convert_to_valid_pi_sessions(tmp_path_factory, records):
    tmp = tmp_path_factory.mktemp("gen")
    src = [SourceRecord(i + 1, r) for i, r in enumerate(records)]
    [session] = convert_records(src, source="gen.jsonl", file_id=SID)
    path = tmp / "s.jsonl"
    path.write_bytes(b"".join(session.lines()))
    assert_valid_for_pi_and_providers(path)
    by_id = {e["id"]: e for e in session.entries}
    # every source message is on the path to the last entry when it was last in its branch
    answered = {m["message"]["toolCallId"] for m in session.entries if m["type"] == "message" and m["message"]["role"] == "toolResult"}
    source_results = {b["tool_use_id"] for r in records if r.get("type") == "user" for b in (r["message"]["content"] if isinstance(r["message"]["content"], list) else [])}
    assert answered == source_results
    assert all(e["parentId"] is None or e["parentId"] in by_id for e in session.entries)
    # lossless: every field of every source record is kept (whole, or by the fields pi has no place for)
    assert_claude_code_lossless(records, [session])
    # appending records only appends lines (the incremental import relies on it),
    # wherever the file is cut between two messages
    lines = session.lines()
    for k in range(1, len(records)):
        nxt = records[k]
        before = [r for r in records[:k] if r.get("type") == "assistant"]
        if nxt.get("type") == "assistant" and before and before[-1]["message"]["id"] == nxt["message"]["id"]:
            continue  # inside one split assistant message (see docs/import.md)
        [part] = convert_records(src[:k], source="gen.jsonl", file_id=SID, final=False) or [None]  # the file is being written
        if part.messages:
            assert lines[: len(part.lines())] == part.lines()


def test_progress_on_a_terminal_only(tmp_path, cli):
    import os
    import pty
    import subprocess
    import sys

    basic(tmp_path)
    args = ["import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(tmp_path / "s")]
    piped = cli(*args)
    assert piped.returncode == 0 and "importing" not in piped.stdout and "\x1b[" not in piped.stdout
    master, slave = pty.openpty()
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm-256color", "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    proc = subprocess.Popen([str(exe), *args[:-1], str(tmp_path / "t")], stdout=slave, stderr=slave, stdin=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=60) == 0
    os.close(master)
    text = out.decode("utf-8", "replace")
    assert "importing" in text and "1 imported" in text


def test_lone_surrogates_big_integers_and_raw_line_separators_are_read(tmp_path):
    """Claude Code writes what JSON.stringify gives: a lone surrogate escape
    (an emoji cut in two), a raw U+0085 / U+2028 inside a string."""
    src = project(tmp_path) / f"{SID}.jsonl"
    src.parent.mkdir(parents=True)
    user = json.dumps(cc_user("u1", None, 1, "cut \ud83d here\u0085and\u2028there"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    user = user.replace("\ud83d".encode("utf-8", "surrogatepass"), b"\\ud83d")
    big = json.dumps(cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "ok"}], big=2**60)).encode()
    src.write_bytes(user + b"\n" + big + b"\n")
    [r], target = run_import(tmp_path)
    assert r.damaged == [] and r.result.status == "imported"
    path = imported_file(target, r.result.session_id)
    _h, entries = session_entries(path)
    [u] = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    assert u["message"]["content"] == "cut \ud83d here\u0085and\u2028there"
    assert b"\\ud83d" in path.read_bytes() and str(2**60).encode() in path.read_bytes()


def test_an_interruption_marker_is_no_prompt(tmp_path):
    write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u0", None, 1, [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
            cc_user("u1", "u0", 2, "the real question"),
            cc_assistant("a1", "u1", 3, "m1", [{"type": "text", "text": "answer"}]),
        ],
    )
    [r], target = run_import(tmp_path)
    path = imported_file(target, r.result.session_id)
    from pi_session.stores.listing import build_session_info

    info = build_session_info(path)
    assert info is not None and info["firstMessage"] == "the real question"
    _h, entries = session_entries(path)
    assert entries[0]["imported"]["records"][0]["uuid"] == "u0"  # kept on the prompt after it
    assert [m["role"] for m in assert_valid_for_pi_and_providers(path)["messages"]] == ["user", "assistant"]


def test_a_response_still_being_written_waits_for_its_end(tmp_path):
    """Claude Code writes one record per content block as they stream: an
    import while it runs leaves the unfinished response out, and the next
    one appends it whole (importing half of it would make that a conflict)."""
    import os

    records = [
        cc_user("u1", None, 1, "go"),
        cc_assistant("a1", "u1", 2, "m1", [{"type": "thinking", "thinking": "t", "signature": "s"}], stop=None),
    ]
    src = write_jsonl(project(tmp_path) / f"{SID}.jsonl", records)
    os.utime(src)  # written just now: Claude Code is running
    [first], target = run_import(tmp_path)
    _h, entries = session_entries(imported_file(target, first.result.session_id))
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user"]
    assert first.held_back == 1  # said, not silent: the CLI warns that the response waits
    records.append(cc_assistant("a2", "a1", 3, "m1", [tool_use("t1")], stop="tool_use"))
    write_jsonl(src, records)
    os.utime(src)  # still running, but the response has its stop reason
    [second], _ = run_import(tmp_path)
    assert second.result.status == "updated", second.result.message
    assert second.held_back == 0
    _h, entries = session_entries(imported_file(target, first.result.session_id))
    [a] = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [b["type"] for b in a["content"]] == ["thinking", "toolCall"] and a["stopReason"] == "toolUse"
    # a file nobody writes any more is imported whole, an unfinished response too
    records.append(cc_assistant("a3", "a2", 4, "m9", [{"type": "text", "text": "cut"}], stop=None))
    write_jsonl(src, records)
    [third], _ = run_import(tmp_path)
    assert third.result.status == "updated"


def _summary(results) -> list[tuple]:
    return [
        (r.result.source, r.result.status, r.result.session_id, r.result.message, dict(r.counts), [d.format() for d in r.damaged], r.held_back)
        for r in results
    ]


def test_an_unchanged_source_is_passed_over_with_the_results_it_gave(tmp_path):
    """A source file unchanged since the last import into that store (size,
    mtime, inode) is not read again: the results are the ones converting it
    again gives (unchanged, same entries by kind, same damaged lines);
    ``recheck`` converts it (here: finds a same-size rewrite with its mtime
    put back, a conflict)."""
    import os

    src = write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [cc_user("u1", None, 1, "list the files"), cc_assistant("a1", "u1", 2, "msg_1", [{"type": "text", "text": "Sure."}])],
        (b"not json\n",),
    )
    first, target = run_import(tmp_path)
    assert [r.result.status for r in first] == ["imported"]
    again, _ = run_import(tmp_path)
    rechecked = list(import_agent_sessions("claude-code", [tmp_path / "claude" / "projects"], target, recheck=True))
    assert [r.result.status for r in again] == ["unchanged"]
    assert _summary(again) == _summary(rechecked)
    assert again[0].damaged and again[0].counts == first[0].counts
    st = src.stat()
    src.write_bytes(src.read_bytes().replace(b"list the files", b"list the FILES"))
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _summary(run_import(tmp_path)[0]) == _summary(again)  # not read
    clash = list(import_agent_sessions("claude-code", [tmp_path / "claude" / "projects"], target, recheck=True))
    assert [r.result.status for r in clash] == ["conflict"]
    assert [r.result.status for r in run_import(tmp_path)[0]] == ["conflict"]  # forgotten: read again


def test_a_session_gone_from_the_store_is_imported_again(tmp_path):
    basic(tmp_path)
    first, target = run_import(tmp_path)
    imported_file(target, first[0].result.session_id).unlink()
    assert [r.result.status for r in run_import(tmp_path)[0]] == ["imported"]


def test_a_damaged_import_state_is_ignored_and_replaced(tmp_path):
    import re

    from pi_session.importers.state import state_path

    basic(tmp_path)
    _first, target = run_import(tmp_path)
    path = state_path("claude-code", target.url)
    version = int(re.search(r"\.v(\d+)\.json$", path.name)[1])  # the state's format version
    for garbage in (b"\x00garbage", b"[]", b'{"version":%d,"files":{"x":[1,2]}}' % version, b'{"version":%d,"files":{"x":[[1,2,3,4],[{"status":1}],[]]}}' % version):
        path.write_bytes(garbage)
        assert [r.result.status for r in run_import(tmp_path)[0]] == ["unchanged"]
        assert json.loads(path.read_bytes())["version"] == version


def test_sub_agent_sessions_land_in_their_parents_project(tmp_path, cli):
    """A sub-agent that worked in another directory (its records' ``cwd``)
    is placed in the project of the session that spawned it, a sub-agent
    file and a sidechain alike; its own ``cwd`` is kept in its records."""
    sub = CWD + "/packages/web"
    main = write_jsonl(
        project(tmp_path) / f"{SID}.jsonl",
        [
            cc_user("u1", None, 1, "explore"),
            cc_assistant("a1", "u1", 2, "m1", [tool_use("t1", "Task", prompt="find it")], stop="tool_use"),
            cc_user("x1", None, 3, "find it", isSidechain=True, cwd=sub),
            cc_assistant("x2", "x1", 4, "mx", [{"type": "text", "text": "found"}], isSidechain=True, cwd=sub),
            cc_user("r1", "a1", 5, [tool_result("t1", "found")]),
        ],
    )
    write_jsonl(
        main.parent / SID / "subagents" / "agent-abc123.jsonl",
        [cc_user("y1", None, 6, "sub task", isSidechain=True, agentId="abc123", cwd=sub), cc_assistant("y2", "y1", 7, "my", [{"type": "text", "text": "done"}], isSidechain=True, agentId="abc123", cwd=sub)],
    )
    store = tmp_path / "sessions"
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(store))
    assert proc.returncode == 0 and "3 imported" in proc.stdout, proc.stdout + proc.stderr
    target = open_store(str(store))
    main_path = imported_file(target, pi_session_id("claude-code", SID))
    for sid in (pi_session_id("claude-code", f"{SID}/sidechain/x1"), pi_session_id("claude-code", f"{SID}/agent/abc123")):
        path = imported_file(target, sid)
        header, entries = session_entries(path)
        assert header["cwd"] == CWD and path.parent == main_path.parent, path
        assert sub in [r.get("cwd") for r in kept_fields(entries)]
    listed = cli("ls", "--cwd", CWD, "--json", "--store", str(store))
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 3


def _cli_import(cli, tmp_path: Path, store: Path) -> list[dict]:
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
    return json.loads(proc.stdout)


def test_notes_at_the_end_wait_for_the_next_entry_unless_the_source_paused(tmp_path, cli):
    """The records after a turn's last message (a ``system`` note here)
    wait, while the file changed in the last ten minutes, for the entry
    Claude Code writes next, which keeps them; in a file left alone longer
    they become an entry of their own, and what the agent appends later
    (necessarily after a pause) only appends lines."""
    src = project(tmp_path) / f"{SID}.jsonl"
    records = [
        cc_user("u1", None, 1, "one"),
        cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "done"}]),
        cc("system", "s1", "a1", 3, subtype="turn_duration", durationMs=2000),
    ]
    write_jsonl(src, records)
    os.utime(src, (time.time() - 120, time.time() - 120))  # two minutes ago: the response is whole, the turn may go on
    store = tmp_path / "store"
    [r] = _cli_import(cli, tmp_path, store)
    assert r["status"] == "imported" and r["waiting"] == 1 and r["entries"] == {"message:user": 1, "message:assistant": 1, "model_change": 1}
    records.append(cc_user("u2", "s1", 40, "two"))
    write_jsonl(src, records)
    [r] = _cli_import(cli, tmp_path, store)
    assert r["status"] == "updated" and r["appended"] == 1 and "waiting" not in r
    _h, entries = session_entries(next(store.glob("*/*.jsonl")))
    assert entries[-1]["message"]["content"] == "two" and entries[-1]["imported"]["records"][0]["uuid"] == "s1"
    assert not any(e["type"] == "custom" for e in entries)
    # left alone: the note is an entry of its own; the next prompt, an hour later, appends
    paused = tmp_path / "paused"
    records = records[:3]
    write_jsonl(src, records)  # an hour old
    [r] = _cli_import(cli, tmp_path, paused)
    assert r["status"] == "imported" and r["entries"]["custom:claude-code/records"] == 1 and "waiting" not in r
    records.append({**cc_user("u2", "s1", 3, "two"), "timestamp": "2025-06-01T11:30:00.000Z"})
    write_jsonl(src, records)
    [r] = _cli_import(cli, tmp_path, paused)
    assert r["status"] == "updated" and r["appended"] == 1
    fresh = list(convert_records([SourceRecord(i + 1, rec) for i, rec in enumerate(records)], source=str(src), file_id=SID)[0].lines())
    assert next(paused.glob("*/*.jsonl")).read_bytes() == b"".join(fresh)


def test_a_session_imported_in_the_earlier_layout_keeps_it(tmp_path, cli):
    """A session an earlier import wrote with a custom entry per source
    record (layout 1) is continued in that layout, and the import says
    so: importing again only appends, as before."""
    from pi_session.importers.claude_code import ClaudeCodeFile, convert_file
    from pi_session.importers.common import write_session

    src = project(tmp_path) / f"{SID}.jsonl"
    records = [
        cc_user("u1", None, 1, "one"),
        cc_assistant("a1", "u1", 2, "m1", [tool_use("t1")], stop="tool_use"),
        {"type": "progress", "uuid": "p1", "parentUuid": "a1", "timestamp": ts(3), "data": {"type": "hook_progress"}},
    ]
    write_jsonl(src, records)
    store = tmp_path / "store"
    target = open_store(str(store))
    [old], _ = convert_file(ClaudeCodeFile(src), layout=1)
    assert write_session(target, old).status == "imported"
    records += [cc_user("r1", "p1", 4, [tool_result("t1", "ok")]), cc_assistant("a2", "r1", 5, "m2", [{"type": "text", "text": "fine"}])]
    write_jsonl(src, records)
    proc = cli("import", "--from", "claude-code", str(tmp_path / "claude" / "projects"), "--store", str(store))
    assert proc.returncode == 0 and "1 updated" in proc.stdout, proc.stdout + proc.stderr
    assert "keeps the layout of its first import" in " ".join(proc.stdout.split())
    [whole], _ = convert_file(ClaudeCodeFile(src), layout=1)
    stored = b"".join(target.read_lines(old.session_id))
    assert stored == b"".join(whole.lines())
    assert b'"imported"' not in stored and b'"claude-code/fields"' in stored
    [r] = _cli_import(cli, tmp_path, store)
    assert r["status"] == "unchanged"
    # a new import of the same source elsewhere is in the current layout
    [r] = _cli_import(cli, tmp_path, tmp_path / "new")
    assert r["status"] == "imported" and "layout" not in r and not any(k.startswith("custom") for k in r["entries"])
