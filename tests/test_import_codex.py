"""``pi-session import --from codex``: one small rollout per conversion
rule (built from the Codex CLI's documented rollout items), the
incremental import, damaged lines, and a property test over generated
rollouts."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_import_helpers import (
    CODEX_ID,
    CWD,
    assert_codex_lossless,
    assert_valid_for_pi_and_providers,
    kept_fields,
    kept_records,
    cx,
    cx_meta,
    cx_msg,
    cx_tokens,
    cx_turn,
    session_entries,
    write_jsonl,
)
from pi_session.importers import import_agent_sessions, pi_session_id
from pi_session.importers.codex import convert_records
from pi_session.importers.common import SourceRecord
from pi_session.stores import open_store

SESSION = pi_session_id("codex", CODEX_ID)


def rollout(tmp_path: Path, records, raw=()) -> Path:
    return write_jsonl(tmp_path / "codex" / "sessions" / "2025" / "06" / "01" / f"rollout-2025-06-01T10-00-00-{CODEX_ID}.jsonl", records, raw)


def run_import(tmp_path: Path, store: str | None = None):
    target = open_store(store or str(tmp_path / "sessions"))
    return list(import_agent_sessions("codex", [tmp_path / "codex" / "sessions"], target)), target


def imported(tmp_path: Path, records):
    rollout(tmp_path, records)
    [r], target = run_import(tmp_path)
    assert r.result.status == "imported", r.result.message
    path = Path(target.locator(SESSION))
    return r, path, session_entries(path)[1]


def test_meta_messages_model_and_usage(tmp_path):
    r, path, entries = imported(
        tmp_path,
        [
            cx_meta(),
            cx_msg(1, "user", "# AGENTS.md instructions for /home/ada/project\n\n<INSTRUCTIONS>be nice</INSTRUCTIONS>"),
            cx_msg(1, "user", "<environment_context>\n  <cwd>/home/ada/project</cwd>\n</environment_context>"),
            cx("response_item", 1, type="message", role="developer", content=[{"type": "input_text", "text": "<permissions instructions>..."}]),
            cx_turn(2),
            cx("event_msg", 2, type="user_message", message="fix the tests"),
            cx_msg(2, "user", "fix the tests"),
            cx("response_item", 3, type="reasoning", summary=[{"type": "summary_text", "text": "**Looking**"}], content=None, encrypted_content="gAAAA-secret"),
            cx_msg(3, "assistant", "Done."),
            cx_tokens(3, 1000, 800, 50, 20),
            cx_turn(4, "gpt-5.2"),
        ],
    )
    header, _ = session_entries(path)
    assert header["id"] == SESSION and header["cwd"] == CWD and header["timestamp"] == "2025-06-01T10:00:00.000Z"
    context = assert_valid_for_pi_and_providers(path)
    assert [m["role"] for m in context["messages"]] == ["user", "assistant"]
    assert context["messages"][0]["content"] == [{"type": "text", "text": "fix the tests"}]
    a = context["messages"][1]
    assert a["content"][0]["type"] == "thinking" and a["content"][0]["thinking"] == "**Looking**"
    assert json.loads(a["content"][0]["thinkingSignature"])["encrypted_content"] == "gAAAA-secret"
    assert a["content"][1] == {"type": "text", "text": "Done."}
    assert (a["api"], a["provider"], a["model"], a["stopReason"]) == ("openai-responses", "openai", "gpt-5.1-codex", "stop")
    assert a["usage"]["input"] == 200 and a["usage"]["cacheRead"] == 800 and a["usage"]["output"] == 50 and a["usage"]["reasoning"] == 20
    assert [e["modelId"] for e in entries if e["type"] == "model_change"] == ["gpt-5.1-codex", "gpt-5.2"]
    assert context["model"] == {"provider": "openai", "modelId": "gpt-5.2"}
    assert not any(e["type"] == "custom" for e in entries)
    kept = [r["type"] if r["type"] != "response_item" else r["payload"]["role"] for r in kept_records(entries)]
    assert kept.count("user") + kept.count("developer") == 3  # the injected context, kept, not prompts
    assert "session_meta" in kept and "event_msg" in kept and "turn_context" in kept
    assert entries[0]["type"] == "model_change" and entries[0]["imported"]["records"][0]["type"] == "session_meta"


def test_function_custom_and_shell_calls_with_results_and_errors(tmp_path):
    r, path, entries = imported(
        tmp_path,
        [
            cx_meta(),
            cx_turn(1),
            cx_msg(1, "user", "run things"),
            cx("response_item", 2, type="function_call", name="shell", arguments=json.dumps({"command": ["ls"]}), call_id="c1"),
            cx("response_item", 2, type="function_call", name="shell", arguments=json.dumps({"command": ["false"]}), call_id="c2"),
            cx("response_item", 3, type="function_call_output", call_id="c1", output=json.dumps({"output": "a\nb\n", "metadata": {"exit_code": 0}})),
            cx("response_item", 3, type="function_call_output", call_id="c2", output="Exit code: 1\nWall time: 0 seconds\nOutput:\n"),
            cx("response_item", 4, type="custom_tool_call", status="completed", call_id="c3", name="apply_patch", input="*** Begin Patch\n*** End Patch"),
            cx("response_item", 4, type="custom_tool_call_output", call_id="c3", output=json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})),
            cx("response_item", 5, type="local_shell_call", call_id="c4", status="completed", action={"type": "exec", "command": ["pwd"]}),
            cx("response_item", 5, type="function_call", name="read", arguments="not json", call_id="c5"),
        ],
    )
    context = assert_valid_for_pi_and_providers(path)  # c4, c5 unanswered: closed as pi does
    roles = [m["role"] for m in context["messages"]]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant", "toolResult", "assistant"]
    calls = [b for m in context["messages"] if m["role"] == "assistant" for b in m["content"]]
    assert [(c["id"], c["name"]) for c in calls] == [("c1", "shell"), ("c2", "shell"), ("c3", "apply_patch"), ("c4", "shell"), ("c5", "read")]
    assert calls[0]["arguments"] == {"command": ["ls"]} and calls[2]["arguments"] == {"input": "*** Begin Patch\n*** End Patch"}
    assert calls[3]["arguments"] == {"type": "exec", "command": ["pwd"]} and calls[4]["arguments"] == {"value": "not json"}
    r1, r2, r3 = (m for m in context["messages"] if m["role"] == "toolResult")
    assert (r1["toolName"], r1["isError"], r1["content"]) == ("shell", False, [{"type": "text", "text": "a\nb\n"}])
    assert r2["isError"] is True and r3["toolName"] == "apply_patch" and r3["isError"] is False
    assert context["messages"][1]["stopReason"] == "toolUse"


def test_images_in_prompts(tmp_path):
    _r, path, _entries = imported(
        tmp_path,
        [cx_meta(), cx("response_item", 1, type="message", role="user", content=[{"type": "input_text", "text": "see"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}])],
    )
    [u] = assert_valid_for_pi_and_providers(path)["messages"]
    assert u["content"] == [{"type": "text", "text": "see"}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]


def test_compacted_becomes_a_compaction_entry(tmp_path):
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first ask"}]}, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUMMARY: did things"}]}]
    _r, path, entries = imported(
        tmp_path,
        [
            cx_meta(),
            cx_turn(1),
            cx_msg(1, "user", "first ask"),
            cx_msg(2, "assistant", "worked"),
            cx_tokens(2, 5000, 0, 100),
            cx("compacted", 3, message="", replacement_history=history),
            cx("event_msg", 3, type="context_compacted"),
            cx_msg(4, "user", "go on"),
        ],
    )
    [comp] = [e for e in entries if e["type"] == "compaction"]
    assert comp["summary"] == "first ask\n\nSUMMARY: did things" and comp["firstKeptEntryId"] == comp["id"] and comp["tokensBefore"] == 5100
    assert comp["imported"]["records"][-1]["payload"]["replacement_history"] == history  # the record, kept on its entry
    context = assert_valid_for_pi_and_providers(path)
    assert [m["role"] for m in context["messages"]] == ["compactionSummary", "user"]


def test_damaged_lines_reimport_and_conflict(tmp_path, cli):
    records = [cx_meta(), cx_turn(1), cx_msg(1, "user", "hello")]
    src = rollout(tmp_path, records, (b"{oops\n",))
    args = ("import", "--from", "codex", str(tmp_path / "codex" / "sessions"), "--store", str(tmp_path / "sessions"))
    first = cli(*args)
    assert first.returncode == 0 and "1 imported" in first.stdout, first.stderr
    assert f"{src}:4: not JSON" in first.stderr
    rollout(tmp_path, records + [cx_msg(2, "assistant", "hi")])
    grown = cli(*args)
    assert "1 updated" in grown.stdout, grown.stdout + grown.stderr
    rollout(tmp_path, [cx_meta(), cx_turn(1), cx_msg(1, "user", "hello, rewritten"), cx_msg(2, "assistant", "hi")])
    clash = cli(*args)
    assert clash.returncode == 1 and "conflict" in clash.stderr


def test_default_source_directory(tmp_path, cli):
    rollout(tmp_path, [cx_meta(), cx_msg(1, "user", "hello")])
    proc = cli("import", "--from", "codex", env={"CODEX_HOME": str(tmp_path / "codex")})
    assert proc.returncode == 0, proc.stderr
    [path] = (tmp_path / "agent" / "sessions" / "--home-ada-project--").glob("*.jsonl")
    assert path.name.endswith(f"_{SESSION}.jsonl")


@st.composite
def rollouts(draw):
    records = [cx_meta()]
    n = 0
    call = 0
    for _ in range(draw(st.integers(1, 5))):
        n += 1
        records.append(cx_turn(n, draw(st.sampled_from(["gpt-5", "gpt-5.1-codex"]))))
        records.append(cx_msg(n, "user", draw(st.text(min_size=1, max_size=6))))
        for _step in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                records.append(cx("response_item", n, type="reasoning", summary=[{"type": "summary_text", "text": "t"}], encrypted_content="e"))
            calls = []
            for _c in range(draw(st.integers(0, 2))):
                call += 1
                calls.append(f"c{call}")
                records.append(cx("response_item", n, type="function_call", name="shell", arguments="{}", call_id=f"c{call}"))
            if not calls:
                records.append(cx_msg(n, "assistant", "ok"))
            records.append(cx_tokens(n, 100, 10, 5))
            for c in draw(st.permutations(calls)):
                if draw(st.integers(0, 6)):
                    records.append(cx("response_item", n, type="function_call_output", call_id=c, output="out"))
        if draw(st.integers(0, 5)) == 0:
            records.append(cx("compacted", n, message="summary"))
    return records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=rollouts())
def test_generated_rollouts_convert_to_valid_pi_sessions(tmp_path_factory, records):
    tmp = tmp_path_factory.mktemp("gen")
    src = [SourceRecord(i + 1, r) for i, r in enumerate(records)]
    [session] = convert_records(src, source="gen.jsonl", file_id="rollout-x")
    path = tmp / "s.jsonl"
    path.write_bytes(b"".join(session.lines()))
    assert_valid_for_pi_and_providers(path)
    assert_codex_lossless(records, [session])
    outputs = {r["payload"]["call_id"] for r in records if r["payload"].get("type") == "function_call_output"}
    assert {e["message"]["toolCallId"] for e in session.entries if e["type"] == "message" and e["message"]["role"] == "toolResult"} == outputs
    lines = session.lines()
    assistant_items = ("reasoning", "function_call", "message")
    for k in range(1, len(records)):
        nxt = records[k]["payload"]
        if nxt.get("type") in assistant_items and nxt.get("role", "assistant") == "assistant":
            continue  # inside one model response (see docs/import.md)
        if nxt.get("type") == "token_count":
            continue  # the usage of the response before it
        [part] = convert_records(src[:k], source="gen.jsonl", file_id="rollout-x", final=False)  # the file is being written
        if part.messages:
            assert lines[: len(part.lines())] == part.lines()


def test_a_response_still_being_written_waits_for_its_token_count(tmp_path):
    import os

    records = [cx_meta(), cx_turn(1), cx_msg(1, "user", "go"), cx("response_item", 2, type="reasoning", summary=[{"type": "summary_text", "text": "t"}], encrypted_content="e")]
    src = rollout(tmp_path, records)
    os.utime(src)  # written just now: Codex is running
    [first], target = run_import(tmp_path)
    path = Path(target.locator(SESSION))
    assert [e["message"]["role"] for e in session_entries(path)[1] if e["type"] == "message"] == ["user"]
    records += [cx_msg(2, "assistant", "done"), cx_tokens(2, 100, 0, 10)]
    rollout(tmp_path, records)
    os.utime(src)
    [second], _ = run_import(tmp_path)
    assert second.result.status == "updated"
    [a] = [e["message"] for e in session_entries(path)[1] if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [b["type"] for b in a["content"]] == ["thinking", "text"] and a["usage"]["input"] == 100


def test_usage_when_the_count_comes_before_the_items_as_in_0_58(tmp_path):
    """Codex 0.58 writes the token count just before the response's items
    and repeats it (same totals) after the next turn context."""
    _r, path, entries = imported(
        tmp_path,
        [
            cx_meta(),
            cx_turn(1),
            cx_msg(1, "user", "go"),
            cx("event_msg", 1, type="token_count", info=None),
            cx_tokens(2, 300, 100, 30),
            cx("response_item", 2, type="reasoning", summary=[], encrypted_content="e"),
            cx("response_item", 2, type="function_call", name="shell", arguments="{}", call_id="c1"),
            cx("response_item", 2, type="function_call_output", call_id="c1", output="ok"),
            cx_turn(3),
            cx_tokens(3, 300, 100, 30),  # the same totals again
            cx_tokens(4, 500, 0, 7),
            cx_msg(4, "assistant", "done"),
        ],
    )
    first, second = (e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert (first["usage"]["input"], first["usage"]["cacheRead"], first["usage"]["output"]) == (200, 100, 30)
    assert (second["usage"]["input"], second["usage"]["output"]) == (500, 7)
    assert_valid_for_pi_and_providers(path)


def test_a_command_the_user_ran_is_a_bash_execution(tmp_path):
    shell = "<user_shell_command>\n<command>\nls -a\n</command>\n<result>\nExit code: 2\nDuration: 0.0100 seconds\nOutput:\nls: cannot access\n</result>\n</user_shell_command>"
    _r, path, entries = imported(tmp_path, [cx_meta(), cx_msg(1, "user", shell), cx_msg(2, "user", "why did it fail?")])
    [bash] = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "bashExecution"]
    assert (bash["command"], bash["output"], bash["exitCode"], bash["cancelled"]) == ("ls -a", "ls: cannot access", 2, False)
    context = assert_valid_for_pi_and_providers(path)
    assert [m["role"] for m in context["messages"]] == ["bashExecution", "user"]
    from pi_session.stores.listing import build_session_info

    info = build_session_info(path)
    assert info is not None and info["firstMessage"] == "why did it fail?"


def test_a_file_that_is_no_codex_session_is_reported_as_skipped_with_its_reason(tmp_path, cli):
    # a pi session given to --from codex: "1 skipped" with no word of which file or why
    not_codex = tmp_path / "pi.jsonl"
    not_codex.write_text('{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n')
    proc = cli("import", "--from", "codex", str(not_codex), "--store", str(tmp_path / "sessions"))
    assert "1 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert f"skipped: {not_codex}: no conversation in it" in proc.stderr


def test_a_session_imported_in_the_earlier_layout_keeps_it(tmp_path, cli):
    """A rollout imported before with a custom entry per record (layout 1)
    goes on in that layout when it grows; a new import is in the current
    one."""
    from pi_session.importers.codex import CodexFile, convert_file
    from pi_session.importers.common import write_session

    records = [cx_meta(), cx_turn(1), cx_msg(1, "user", "fix it"), cx_msg(2, "assistant", "done"), cx_tokens(2, 100, 0, 5)]
    src = rollout(tmp_path, records)
    store = tmp_path / "store"
    target = open_store(str(store))
    [old], _ = convert_file(CodexFile(src), layout=1)
    assert write_session(target, old).status == "imported"
    rollout(tmp_path, records + [cx("event_msg", 3, type="task_complete"), cx_msg(4, "user", "more")])
    proc = cli("import", "--from", "codex", str(tmp_path / "codex" / "sessions"), "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stderr
    [r] = json.loads(proc.stdout)
    assert r["status"] == "updated" and r["layout"] == 1
    [whole], _ = convert_file(CodexFile(src), layout=1)
    assert b"".join(target.read_lines(SESSION)) == b"".join(whole.lines())
    fresh = cli("import", "--from", "codex", str(tmp_path / "codex" / "sessions"), "--store", str(tmp_path / "new"), "--json")
    [r] = json.loads(fresh.stdout)
    assert r["status"] == "imported" and "layout" not in r and not any(k.startswith("custom") for k in r["entries"])
