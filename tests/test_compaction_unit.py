"""Unit tests: cut points, file operations, serialization, prepare."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.compaction import (
    FileOps,
    compute_file_lists,
    extract_file_ops_from_message,
    find_cut_point,
    find_turn_start_index,
    find_valid_cut_points,
    format_file_operations,
    prepare_compaction,
    serialize_conversation,
    truncate_for_summary,
)
from pi_session.compaction.file_ops import js_sorted
from pi_session.session.settings import CompactionSettings
from pi_session.session.tree import SessionTree

import sessiongen


def m(i, role, text="x" * 40, parent=None, **extra):
    msg = {"role": role, "timestamp": i}
    if role == "assistant":
        msg["content"] = [{"type": "text", "text": text}]
    elif role == "toolResult":
        msg.update(toolCallId="c", toolName="read", content=[{"type": "text", "text": text}], isError=False)
    elif role == "bashExecution":
        msg.update(command="ls", output=text, exitCode=0, cancelled=False, truncated=False)
    else:
        msg["content"] = text
    msg.update(extra)
    return {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", "message": msg}


def chain(*entries):
    out = []
    for i, e in enumerate(entries):
        e = dict(e)
        e["id"] = f"e{i}"
        e["parentId"] = f"e{i - 1}" if i else None
        out.append(e)
    return out


def test_valid_cut_points_exclude_tool_results():
    entries = chain(
        m(0, "user"), m(1, "assistant"), m(2, "toolResult"), m(3, "bashExecution"),
        {"type": "custom_message", "customType": "n", "content": "hi", "display": True},
        {"type": "branch_summary", "fromId": "e0", "summary": "s"},
        {"type": "label", "targetId": "e0", "label": "x"},
        {"type": "compaction", "summary": "s", "firstKeptEntryId": "e0", "tokensBefore": 1},
    )
    assert find_valid_cut_points(entries, 0, len(entries)) == [0, 1, 3, 4, 5]


def test_turn_start():
    entries = chain(m(0, "user"), m(1, "assistant"), m(2, "toolResult"), m(3, "assistant"))
    assert find_turn_start_index(entries, 3, 0) == 0
    assert find_turn_start_index(entries, 3, 1) == -1


def test_cut_keeps_recent_tokens_and_splits_turn():
    # each message is 10 tokens
    entries = chain(m(0, "user"), m(1, "assistant"), m(2, "toolResult"), m(3, "assistant"), m(4, "toolResult"), m(5, "assistant"))
    r = find_cut_point(entries, 0, len(entries), 25)
    # walking back: e5 10, e4 20, e3 30 >= 25 -> cut at e3 (assistant): split turn starting at e0
    assert (r.first_kept_entry_index, r.turn_start_index, r.is_split_turn) == (3, 0, True)
    r = find_cut_point(entries, 0, len(entries), 15)
    # e4 reaches 20 >= 15, e4 is a tool result -> next valid cut point e5
    assert r.first_kept_entry_index == 5


def test_cut_at_user_is_not_split_and_moves_over_non_messages():
    entries = chain(
        m(0, "user"), m(1, "assistant"),
        {"type": "model_change", "provider": "p", "modelId": "m"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        m(4, "user"), m(5, "assistant"),
    )
    r = find_cut_point(entries, 0, len(entries), 20)
    # e5 10, e4 20 >= 20 -> cut at e4, then moved back over the two settings
    # entries to e2; e2 is not a user message, so the turn start search from e2 finds e0
    assert (r.first_kept_entry_index, r.turn_start_index, r.is_split_turn) == (2, 0, True)


def test_cut_everything_fits_keeps_from_first_cut_point():
    entries = chain({"type": "label", "targetId": "x", "label": "l"}, m(1, "user"), m(2, "assistant"))
    r = find_cut_point(entries, 0, len(entries), 10**6)
    assert r.first_kept_entry_index == 0  # moved back over the label
    assert find_cut_point([], 0, 0, 10).first_kept_entry_index == 0


def test_file_ops_and_lists():
    ops = FileOps()
    msg = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "b.py"}},
            {"type": "toolCall", "id": "2", "name": "read", "arguments": {"path": "a.py"}},
            {"type": "toolCall", "id": "3", "name": "edit", "arguments": {"path": "a.py"}},
            {"type": "toolCall", "id": "4", "name": "write", "arguments": {"path": "c.py"}},
            {"type": "toolCall", "id": "5", "name": "bash", "arguments": {"path": "d.py"}},
            {"type": "toolCall", "id": "6", "name": "read", "arguments": {"path": ""}},
            {"type": "toolCall", "id": "7", "name": "read", "arguments": {"path": 3}},
        ],
    }
    extract_file_ops_from_message(msg, ops)
    extract_file_ops_from_message({"role": "user", "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "z"}}]}, ops)
    assert ops.to_json() == {"read": ["a.py", "b.py"], "written": ["c.py"], "edited": ["a.py"]}
    lists = compute_file_lists(ops)
    assert lists == {"readFiles": ["b.py"], "modifiedFiles": ["a.py", "c.py"]}
    text = format_file_operations(lists["readFiles"], lists["modifiedFiles"])
    assert text == "\n\n<read-files>\nb.py\n</read-files>\n\n<modified-files>\na.py\nc.py\n</modified-files>"
    assert format_file_operations([], []) == ""
    assert format_file_operations([], ["x"]) == "\n\n<modified-files>\nx\n</modified-files>"


def test_js_sort_order_is_utf16():
    # U+FF5E sorts after U+1F389 in UTF-16 (0xD83C...) but before it by code point
    assert js_sorted(["\uff5e", "🎉"]) == ["🎉", "\uff5e"]


def test_serialize_labels_and_tool_calls():
    msgs = [
        {"role": "user", "content": "hello"},
        {"role": "user", "content": [{"type": "image", "data": "x"}]},  # no text: skipped
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "f", "n": 1.0, "2": [True], "1": None}},
                {"type": "toolCall", "id": "2", "name": "ls", "arguments": {}},
            ],
        },
        {"role": "toolResult", "content": [{"type": "text", "text": "out"}, {"type": "image"}, {"type": "text", "text": "2"}]},
    ]
    assert serialize_conversation(msgs) == (
        "[User]: hello\n\n[Assistant]: a\nb\n\n"  # thinking is not serialized (pi 1.6)
        '[Assistant tool calls]: read(1=null, 2=[true], path="f", n=1); ls()\n\n[Tool result]: out2'
    )


def test_truncation_in_utf16_units():
    assert truncate_for_summary("a" * 2000) == "a" * 2000
    assert truncate_for_summary("a" * 2001) == "a" * 2000 + "\n\n[... 1 more characters truncated]"
    text = "🎉" * 1001  # 2002 units
    out = truncate_for_summary(text)
    assert out.startswith("🎉" * 1000 + "\n\n[... 2 more")
    odd = "a" + "🎉" * 1000  # 2001 units: the cut lands inside a surrogate pair
    out = truncate_for_summary(odd)
    # pi 1.6 leaves the whole character out instead of a lone high surrogate;
    # the count is still the plain difference
    assert out.split("\n\n")[0] == "a" + "🎉" * 999
    assert out.endswith("[... 1 more characters truncated]")
    # a lone high surrogate already in the text (not a split pair) is kept
    lone = "a" * 1999 + "\ud83c" + "b" * 5
    assert truncate_for_summary(lone).split("\n\n")[0] == "a" * 1999 + "\ud83c"


def test_prepare_none_cases():
    assert prepare_compaction([]) is None
    entries = chain(m(0, "user"), {"type": "compaction", "summary": "s", "firstKeptEntryId": "e0", "tokensBefore": 1})
    assert prepare_compaction(entries) is None


def test_prepare_uses_previous_compaction_and_details():
    entries = chain(
        m(0, "user"),
        m(1, "assistant", content=[{"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "old.py"}}]),
        m(2, "user"),
        {"type": "compaction", "summary": "PREV", "firstKeptEntryId": "e2", "tokensBefore": 5,
         "details": {"readFiles": ["r.py"], "modifiedFiles": ["w.py"]}},
        m(4, "assistant", "y" * 400),
        m(5, "user", "z" * 400),
        m(6, "assistant", "y" * 400),
    )
    prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=150))
    assert prep is not None
    assert prep.previous_summary == "PREV"
    assert prep.first_kept_entry_id == "e5"
    # span starts at the previous firstKeptEntryId (e2); the compaction entry is left out
    assert [msg["timestamp"] for msg in prep.messages_to_summarize] == [2, 4]
    assert prep.file_lists == {"readFiles": ["r.py"], "modifiedFiles": ["w.py"]}
    j = prep.to_json()
    assert list(j) == ["firstKeptEntryId", "messagesToSummarize", "turnPrefixMessages", "isSplitTurn",
                       "tokensBefore", "previousSummary", "fileOps", "settings", "fileLists"]
    # from a hook: details ignored
    entries[3] = {**entries[3], "fromHook": True}
    prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=150))
    assert prep.file_lists == {"readFiles": [], "modifiedFiles": []}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 3000))
def test_prepare_invariants_on_generated_sessions(seed, keep):
    _h, entries = sessiongen.generate_session(seed)
    tree = SessionTree(entries)
    path = tree.branch(entries[-1]["id"])
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep))
    if path[-1]["type"] == "compaction":
        assert prep is None
        return
    if prep is None:
        return  # pi 1.6: nothing to summarize (everything since the last compaction is kept)
    items = prep.projection_entries
    kept = prep.first_kept_entry_index
    assert items[kept]["sourceEntry"]["id"] == prep.first_kept_entry_id
    assert prep.messages_to_summarize or prep.turn_prefix_messages
    assert kept >= prep.boundary_start
    # compaction entries and system messages never become messages to summarize
    assert all(msg.get("role") not in ("compactionSummary", "system") for msg in prep.messages_to_summarize)
    if prep.is_split_turn:
        assert prep.boundary_start <= prep.turn_start_index < kept
        # the kept entry does not start a turn; the turn start does
        roles = {m.get("role") for m in items[prep.turn_start_index]["messages"]}
        assert roles & {"user", "bashExecution", "custom", "branchSummary", "compactionSummary"}
    if not prep.is_split_turn:
        assert prep.turn_prefix_messages == []
    lists = prep.file_lists
    assert set(lists["readFiles"]).isdisjoint(lists["modifiedFiles"])
    assert lists["readFiles"] == js_sorted(lists["readFiles"])


# --------------------------------------------------------------------------- pi 1.6 rules (SPEC-pi-1.6 §8, §9)

TS = "2025-01-01T00:00:00.000Z"


def custom_message(text="n" * 40):
    return {"type": "custom_message", "customType": "note", "content": text, "display": True, "timestamp": TS}


def test_new_turn_starts_and_no_split_at_a_turn_start():
    for start in (m(0, "custom", "c" * 40, customType="x", display=True), custom_message(),
                  {"type": "branch_summary", "fromId": "x", "summary": "s" * 40, "timestamp": TS},
                  m(0, "bashExecution")):
        entries = chain(m(0, "user"), m(0, "assistant"), start, m(0, "assistant", "y" * 400))
        assert find_turn_start_index(entries, 3, 0) == 2
        r = find_cut_point(entries, 0, len(entries), 100)  # the last assistant alone fills the budget
        assert (r.first_kept_entry_index, r.is_split_turn) == (3, True) and r.turn_start_index == 2
        r = find_cut_point(entries, 0, len(entries), 105)  # lands on the turn start itself: not split
        assert (r.first_kept_entry_index, r.turn_start_index, r.is_split_turn) == (2, -1, False)
    # an empty branch summary has no message: neither a cut point nor a turn start
    empty = chain(m(0, "user"), {"type": "branch_summary", "fromId": "x", "summary": "", "timestamp": TS}, m(0, "assistant"))
    assert find_valid_cut_points(empty, 0, 3) == [0, 2]
    assert find_turn_start_index(empty, 2, 0) == 0


def test_summary_entries_count_and_fallback_is_the_last_cut_point():
    # a custom_message's tokens count toward the kept budget
    entries = chain(m(0, "user"), m(0, "assistant"), custom_message("n" * 400), m(0, "toolResult", "r" * 40))
    r = find_cut_point(entries, 0, 4, 105)
    assert r.first_kept_entry_index == 2
    # trailing tool results alone exceed the budget: no cut point at or after them,
    # so the LAST cut point (their call) is kept, not the first message
    entries = chain(m(0, "user"), m(0, "assistant"), m(0, "user"), m(0, "assistant"), m(0, "toolResult", "r" * 4000))
    r = find_cut_point(entries, 0, 5, 100)
    assert r.first_kept_entry_index == 3 and r.is_split_turn and r.turn_start_index == 2


def test_move_back_stops_at_a_compaction_and_over_entries_without_messages():
    comp = {"type": "compaction", "summary": "s", "firstKeptEntryId": "e9", "tokensBefore": 1, "timestamp": TS}
    label = {"type": "label", "targetId": "e0", "label": "x", "timestamp": TS}
    entries = chain(m(0, "user"), comp, label, m(0, "user", "u" * 400))
    r = find_cut_point(entries, 0, 4, 50)
    assert r.first_kept_entry_index == 2  # back over the label, not over the compaction
    # an empty branch_summary has no messages: the cut moves back over it (0.73.1 stopped there)
    entries = chain(m(0, "user"), m(0, "assistant"), {"type": "branch_summary", "fromId": "x", "summary": "", "timestamp": TS},
                    m(0, "user", "u" * 400))
    assert find_cut_point(entries, 0, 4, 50).first_kept_entry_index == 2


def test_prepare_on_the_projection():
    sys_msg = m(0, "system", "prompt " * 100)
    edit = {"type": "context_edit", "targetId": "e1", "replacement": {"content": "EDITED"}, "timestamp": TS}
    omit = {"type": "context_edit", "targetId": "e4", "replacement": None, "timestamp": TS}
    entries = chain(sys_msg, m(0, "user", "first " * 50), m(0, "assistant", "a" * 200),
                    {"type": "branch_summary", "fromId": "x", "summary": "", "timestamp": TS},
                    m(0, "user", "dropped " * 50), m(0, "assistant", "b" * 200),
                    edit, omit, m(0, "user", "last " * 200))
    prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100))
    # the cut at e8 moves back over the two edits (no messages), not over the
    # assistant; the omitted user message e4 does not start a turn, so the turn
    # started at e1: a split turn whose prefix is everything after the system message
    assert prep.first_kept_entry_id == "e6" and prep.is_split_turn
    assert prep.turn_start_index == 1 and prep.messages_to_summarize == []  # the system message is not summarized
    roles = [x["role"] for x in prep.turn_prefix_messages]
    assert roles == ["user", "assistant", "assistant"]  # the omitted user left out, no empty branch summary
    assert prep.turn_prefix_messages[0]["content"] == "EDITED"
    # nothing to summarize: None (pi 1.6), not an empty plan
    assert prepare_compaction(entries, CompactionSettings(keep_recent_tokens=10**6)) is None
    # an omitted previous compaction is ignored: no previous summary
    comp = {"type": "compaction", "summary": "PREV", "firstKeptEntryId": "e1", "tokensBefore": 1, "timestamp": TS}
    entries = chain(m(0, "user", "u" * 400), m(0, "assistant", "a" * 400), comp,
                    {"type": "context_edit", "targetId": "e2", "replacement": None, "timestamp": TS},
                    m(0, "user", "u" * 400), m(0, "assistant", "a" * 400))
    prep = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100))
    assert prep.previous_summary is None and "previousSummary" not in prep.to_json()
    entries[3] = {**entries[3], "replacement": {"content": "x"}}  # a non-null edit leaves the summary as it is
    assert prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100)).previous_summary == "PREV"


def test_file_ops_from_nested_calls():
    ops = FileOps()
    result = {"role": "toolResult", "toolCallId": "c", "content": [], "nestedCalls": {"complete": True, "calls": [
        {"id": "1", "name": "read", "arguments": {"path": "a.py"}, "status": "ok"},
        {"id": "2", "name": "write", "arguments": {"path": "b.py"}, "status": "error"},
        {"id": "3", "name": "edit", "arguments": {"path": "c.py"}, "status": "unfinished"},
        {"id": "4", "name": "write", "argumentsBytes": 40000, "status": "ok"},
        {"id": "5", "name": "bash", "arguments": {"path": "d.py"}, "status": "ok"},
        {"id": "6", "name": "read", "arguments": {"path": 5}, "status": "ok"},
        "junk",
    ]}}
    extract_file_ops_from_message(result, ops)
    assert ops.to_json() == {"read": ["a.py"], "written": ["b.py"], "edited": ["c.py"]}
    for bad in ({"role": "toolResult", "nestedCalls": None}, {"role": "toolResult", "nestedCalls": {"calls": "x"}}):
        extract_file_ops_from_message(bad, ops)  # never raises


def test_malformed_roles_never_raise():
    # a role that is a list (unhashable) or missing is no role: neither a cut point nor a turn start
    entries = chain(m(0, "user"), {**m(0, "x"), "message": {"role": [], "content": "x"}},
                    {**m(0, "x"), "message": {"content": "x"}}, m(0, "assistant", "y" * 400))
    assert find_valid_cut_points(entries, 0, 4) == [0, 3]
    assert find_turn_start_index(entries, 2, 0) == 0
    assert find_cut_point(entries, 0, 4, 10).first_kept_entry_index == 3
    assert prepare_compaction(entries, CompactionSettings(keep_recent_tokens=10)) is not None
