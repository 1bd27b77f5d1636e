"""Beyond pi: a compaction never keeps a tool result whose call it summarizes.

Scenarios and pi's own cuts come from tests/goldens/adapters/cut_scenarios.json
(recorded with pi-oracle)."""

from __future__ import annotations

import json

import pytest

from conftest import GOLDENS
from pi_session import SessionManager, build_session_context, prepare_compaction
from pi_session.adapters import orphan_tool_results, to_anthropic_messages, to_openai_chat, validate_anthropic_messages, validate_openai_chat
from pi_session.compaction import find_cut_point, keep_tool_calls_with_results
from pi_session.session.settings import CompactionSettings

SCENARIOS = {s["name"]: s for s in json.loads((GOLDENS / "adapters" / "cut_scenarios.json").read_text())}


def _path_before_first_compaction(scenario):
    entries = scenario["entries"]
    first_compaction = next(i for i, e in enumerate(entries) if e["type"] == "compaction")
    return entries[:first_compaction]


@pytest.mark.parametrize("name", ["user_between_call_and_result", "bash_between_call_and_result"])
def test_pi_cut_orphans_a_result_ours_does_not(name):
    scenario = SCENARIOS[name]
    path = _path_before_first_compaction(scenario)
    keep = 100
    pi_cut = find_cut_point(path, 0, len(path), keep)
    assert path[pi_cut.first_kept_entry_index]["id"] == scenario["cuts"][0]["firstKeptEntryId"]  # pi's choice
    settings = CompactionSettings(True, 16384, keep)
    exact = prepare_compaction(path, settings, keep_tool_pairs=False)
    assert exact.first_kept_entry_id == scenario["cuts"][0]["firstKeptEntryId"]
    safe = prepare_compaction(path, settings)
    assert safe.first_kept_entry_id == "a1"  # moved back to the call

    def context_after(prep):
        sm = SessionManager.in_memory()
        ids = {}
        for entry in path:
            sm.branch(ids[entry["parentId"]]) if entry["parentId"] else sm.reset_leaf()
            ids[entry["id"]] = sm.append_message(entry["message"])
        sm.append_compaction("summary", ids[prep.first_kept_entry_id], prep.tokens_before)
        return sm.build_session_context()["messages"]

    assert orphan_tool_results(context_after(exact))  # pi's cut: an orphan
    messages = context_after(safe)
    assert orphan_tool_results(messages) == []
    assert validate_openai_chat(to_openai_chat(messages)) == []
    anthropic = to_anthropic_messages(messages)
    assert validate_anthropic_messages(anthropic) == [] and not [r for r in anthropic.repairs if "orphan" in r.kind]


def test_unchanged_when_nothing_is_orphaned():
    scenario = SCENARIOS["aborted_call_kept"]
    path = _path_before_first_compaction(scenario)
    cut = find_cut_point(path, 0, len(path), 110)
    assert keep_tool_calls_with_results(path, 0, len(path), cut) is cut


def test_calls_before_the_span_are_left_to_the_adapters():
    # u1, a1[t1], r1 (answers t1) with the span starting at r1: the call is out of reach
    entries = SCENARIOS["user_between_call_and_result"]["entries"][:5]
    cut = find_cut_point(entries, 3, len(entries), 0)
    assert keep_tool_calls_with_results(entries, 3, len(entries), cut) is cut


def test_cli_dry_run_flag(cli, tmp_path):
    scenario = SCENARIOS["user_between_call_and_result"]
    path = _path_before_first_compaction(scenario)
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    from pi_session.core.jsonio import dumps_line

    file = tmp_path / "s.jsonl"
    file.write_bytes(b"".join(dumps_line(r) for r in [header, *path]))
    safe = json.loads(cli("compact", str(file), "--dry-run", "--json", "--keep-recent-tokens", "100").stdout)
    exact = json.loads(cli("compact", str(file), "--dry-run", "--json", "--keep-recent-tokens", "100", "--pi-exact").stdout)
    assert safe["firstKeptEntryId"] == "a1" and exact["firstKeptEntryId"] == "u2"
    assert build_session_context(path)["messages"]


def test_navigate_to_an_assistant_with_answered_calls_elsewhere_warns(cli, tmp_path):
    sm = SessionManager.create("/p", tmp_path / "s")
    u = sm.append_message({"role": "user", "content": "go", "timestamp": 1})
    a = sm.append_message({"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "x"}}],
                           "api": "x", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}, "stopReason": "toolUse", "timestamp": 2})
    sm.append_message({"role": "toolResult", "toolCallId": "t1", "toolName": "read", "content": [{"type": "text", "text": "x"}], "isError": False, "timestamp": 3})
    file = sm.get_session_file()
    result = cli("navigate", str(file), a)
    assert result.returncode == 0, result.stderr
    assert "t1" in result.stderr and "no result" in result.stderr
    out = json.loads(cli("navigate", str(file), u, "--json").stdout)
    assert out["unansweredToolCalls"] == []


# --- the cut moves only when pi's cut separates a call from its result -------

from hypothesis import given, settings, strategies as st  # noqa: E402

from compaction_gen16 import crafted_sessions, tool_pairs_session  # noqa: E402
from pi_session.session.tree import SessionTree  # noqa: E402


def _separated(prep) -> set[str]:
    """Ids of kept tool results whose call (the latest call with that id
    before the result) is summarized by ``prep``: the orphans its cut leaves."""
    items = prep.projection_entries
    called: set[str] = set()
    unanswered: set[str] = set()
    for item in items[prep.first_kept_entry_index:]:
        for m in item["messages"]:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                called.update(b["id"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "toolCall")
            elif m.get("role") == "toolResult" and m.get("toolCallId") not in called:
                unanswered.add(m.get("toolCallId"))
    summarized = {
        b["id"]
        for m in prep.messages_to_summarize + prep.turn_prefix_messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "toolCall"
    }
    return unanswered & summarized


def test_a_result_answering_a_kept_call_does_not_move_the_cut():
    # a04 calls t1 and t2; t1's result, an edit, a user message; then a later
    # assistant calls t1 again and gets its result. pi 1.6 cuts at the edit
    # (keep 1000) or at the later call (keep 300): the kept result answers the
    # kept call, so nothing is separated and the cut stays pi's
    _header, entries = crafted_sessions()["crafted-reused-call-id"]
    for keep, pi_cut in ((300, "p08"), (1000, "p06")):
        settings = CompactionSettings(True, 16384, keep)
        exact = prepare_compaction(entries, settings, keep_tool_pairs=False)
        assert exact.first_kept_entry_id == pi_cut  # tests/goldens/compaction/crafted-reused-call-id
        assert _separated(exact) == set()
        assert prepare_compaction(entries, settings).first_kept_entry_id == pi_cut


def test_a_move_that_brings_back_another_orphan_moves_again():
    # pi cuts at e09: its kept result for t3 answers a05, which is summarized;
    # moving back to a05 keeps t1's result (e06), whose call a04 is summarized
    # too, so the cut moves on to a04
    from compaction_gen16 import _calls, _entry, _msg, _result

    big = "w " * 600
    entries = [
        _entry("e01", None, message=_msg("user", big)),
        _entry("e02", "e01", message=_msg("assistant", big)),
        _entry("e03", "e02", message=_msg("user", "w " * 50)),
        _entry("e04", "e03", message=_calls(["t1"], "w " * 10)),
        _entry("e05", "e04", message=_calls(["t2", "t3"], "w " * 10)),
        _entry("e06", "e05", message=_result("t1", "w " * 50)),
        _entry("e07", "e06", message=_msg("assistant", "w " * 10)),
        _entry("e08", "e07", message=_result("t2", "w " * 10)),
        _entry("e09", "e08", message=_calls(["t4"], "w " * 10)),
        _entry("e10", "e09", message=_result("t3", "w " * 10)),
    ]
    settings = CompactionSettings(True, 16384, 20)
    exact = prepare_compaction(entries, settings, keep_tool_pairs=False)
    assert exact.first_kept_entry_id == "e09" and _separated(exact) == {"t3"}
    safe = prepare_compaction(entries, settings)
    assert safe.first_kept_entry_id == "e04" and _separated(safe) == set()


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), keep=st.sampled_from([0, 20, 100, 300, 600, 1200]))
def test_pairs_rule_moves_only_a_cut_that_separates(seed, keep):
    # pi's cut is ours with keep_tool_pairs=False (the goldens and the live
    # oracle check that); the rule may change it only when it separates
    _header, entries = tool_pairs_session(seed)
    path = SessionTree(entries).branch(entries[-1]["id"])
    settings = CompactionSettings(True, 16384, keep)
    exact = prepare_compaction(path, settings, keep_tool_pairs=False)
    safe = prepare_compaction(path, settings)
    if exact is None:
        assert safe is None
        return
    if not _separated(exact):
        assert safe is not None and safe.to_json() == exact.to_json()
    # a separating cut moves back to the call; when that leaves nothing
    # before it to summarize there is no compaction (None), never an orphan
    assert safe is None or _separated(safe) == set()
