"""pi 0.58.3 test/session-manager/tree-traversal.test.ts, translated:
appends, ``get_branch``, ``get_tree``, ``branch``,
``branch_with_summary``, the leaf and entry accessors, and
``create_branched_session``."""

from __future__ import annotations

import json

import pytest
from pi_sm_helpers import assistant_msg, user_msg

from pi_session import SessionManager

# --- append operations --------------------------------------------------


def test_tree_append_message_chains_parent_ids():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("first"))
    id2 = session.append_message(assistant_msg("second"))
    id3 = session.append_message(user_msg("third"))

    entries = session.get_entries()
    assert [(e["id"], e["parentId"]) for e in entries] == [(id1, None), (id2, id1), (id3, id2)]
    assert entries[0]["type"] == "message"


def test_tree_thinking_level_change_is_a_tree_entry():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    thinking_id = session.append_thinking_level_change("high")
    session.append_message(assistant_msg("response"))

    entries = session.get_entries()
    assert len(entries) == 3
    thinking = next(e for e in entries if e["type"] == "thinking_level_change")
    assert thinking["id"] == thinking_id
    assert thinking["parentId"] == msg_id
    assert entries[2]["parentId"] == thinking_id


def test_tree_model_change_is_a_tree_entry():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    model_id = session.append_model_change("openai", "gpt-4")
    session.append_message(assistant_msg("response"))

    entries = session.get_entries()
    change = next(e for e in entries if e["type"] == "model_change")
    assert change["id"] == model_id
    assert change["parentId"] == msg_id
    assert (change["provider"], change["modelId"]) == ("openai", "gpt-4")
    assert entries[2]["parentId"] == model_id


def test_tree_compaction_is_a_tree_entry():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    compaction_id = session.append_compaction("summary", id1, 1000)
    session.append_message(user_msg("3"))

    entries = session.get_entries()
    compaction = next(e for e in entries if e["type"] == "compaction")
    assert compaction["id"] == compaction_id
    assert compaction["parentId"] == id2
    assert compaction["summary"] == "summary"
    assert compaction["firstKeptEntryId"] == id1
    assert compaction["tokensBefore"] == 1000
    assert entries[3]["parentId"] == compaction_id


def test_tree_custom_entry_is_a_tree_entry():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello"))
    custom_id = session.append_custom_entry("my_data", {"key": "value"})
    session.append_message(assistant_msg("response"))

    entries = session.get_entries()
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["id"] == custom_id
    assert custom["parentId"] == msg_id
    assert custom["customType"] == "my_data"
    assert custom["data"] == {"key": "value"}
    assert entries[2]["parentId"] == custom_id


def test_tree_leaf_moves_to_each_appended_entry():
    session = SessionManager.in_memory()
    assert session.get_leaf_id() is None
    id1 = session.append_message(user_msg("1"))
    assert session.get_leaf_id() == id1
    id2 = session.append_message(assistant_msg("2"))
    assert session.get_leaf_id() == id2
    id3 = session.append_thinking_level_change("high")
    assert session.get_leaf_id() == id3


# --- getPath (get_branch) -----------------------------------------------


def test_tree_branch_of_empty_session_is_empty():
    assert SessionManager.in_memory().get_branch() == []


def test_tree_branch_of_one_entry():
    session = SessionManager.in_memory()
    entry_id = session.append_message(user_msg("hello"))
    assert [e["id"] for e in session.get_branch()] == [entry_id]


def test_tree_branch_runs_root_to_leaf():
    session = SessionManager.in_memory()
    ids = [
        session.append_message(user_msg("1")),
        session.append_message(assistant_msg("2")),
        session.append_thinking_level_change("high"),
        session.append_message(user_msg("3")),
    ]
    assert [e["id"] for e in session.get_branch()] == ids


def test_tree_branch_from_a_given_entry():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    assert [e["id"] for e in session.get_branch(id2)] == [id1, id2]


# --- getTree ------------------------------------------------------------


def test_tree_of_empty_session_is_empty():
    assert SessionManager.in_memory().get_tree() == []


def test_tree_linear_session_is_one_chain():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))

    tree = session.get_tree()
    assert len(tree) == 1
    root = tree[0]
    assert root.entry["id"] == id1
    assert [c.entry["id"] for c in root.children] == [id2]
    assert [c.entry["id"] for c in root.children[0].children] == [id3]
    assert root.children[0].children[0].children == []


def test_tree_branching_makes_siblings():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.branch(id2)
    id4 = session.append_message(user_msg("4-branch"))

    tree = session.get_tree()
    assert len(tree) == 1
    assert tree[0].entry["id"] == id1
    assert len(tree[0].children) == 1
    node2 = tree[0].children[0]
    assert node2.entry["id"] == id2
    assert sorted(c.entry["id"] for c in node2.children) == sorted([id3, id4])


def test_tree_three_branches_from_one_entry():
    session = SessionManager.in_memory()
    session.append_message(user_msg("root"))
    id2 = session.append_message(assistant_msg("response"))
    branch_ids = []
    for name in ("branch-A", "branch-B", "branch-C"):
        session.branch(id2)
        branch_ids.append(session.append_message(user_msg(name)))

    node2 = session.get_tree()[0].children[0]
    assert node2.entry["id"] == id2
    assert sorted(c.entry["id"] for c in node2.children) == sorted(branch_ids)


def test_tree_branches_within_branches():
    session = SessionManager.in_memory()
    session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    session.branch(id2)
    id5 = session.append_message(user_msg("5"))
    session.append_message(assistant_msg("6"))
    session.branch(id5)
    session.append_message(user_msg("7"))

    node2 = session.get_tree()[0].children[0]
    assert len(node2.children) == 2
    node5 = next(c for c in node2.children if c.entry["id"] == id5)
    assert len(node5.children) == 2
    node3 = next(c for c in node2.children if c.entry["id"] == id3)
    assert len(node3.children) == 1


# --- branch -------------------------------------------------------------


def test_tree_branch_moves_the_leaf():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    assert session.get_leaf_id() == id3
    session.branch(id1)
    assert session.get_leaf_id() == id1


def test_tree_branch_to_unknown_entry_raises():
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(KeyError, match="Entry nonexistent not found"):
        session.branch("nonexistent")


def test_tree_append_after_branch_hangs_under_branch_point():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    session.branch(id1)
    id3 = session.append_message(user_msg("branched"))
    assert session.get_entry(id3)["parentId"] == id1


# --- branchWithSummary --------------------------------------------------


def test_tree_branch_with_summary_appends_summary_as_leaf():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))

    summary_id = session.branch_with_summary(id1, "Summary of abandoned work")
    assert session.get_leaf_id() == summary_id
    summary = next(e for e in session.get_entries() if e["type"] == "branch_summary")
    assert summary["parentId"] == id1
    assert summary["summary"] == "Summary of abandoned work"


def test_tree_branch_with_summary_to_unknown_entry_raises():
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(KeyError, match="Entry nonexistent not found"):
        session.branch_with_summary("nonexistent", "summary")


# --- getLeafEntry -------------------------------------------------------


def test_tree_leaf_entry_of_empty_session_is_none():
    assert SessionManager.in_memory().get_leaf_entry() is None


def test_tree_leaf_entry_is_the_last_append():
    session = SessionManager.in_memory()
    session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    leaf = session.get_leaf_entry()
    assert leaf is not None and leaf["id"] == id2


# --- getEntry -----------------------------------------------------------


def test_tree_get_entry_of_unknown_id_is_none():
    assert SessionManager.in_memory().get_entry("nonexistent") is None


def test_tree_get_entry_by_id():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("first"))
    id2 = session.append_message(assistant_msg("second"))
    entry1 = session.get_entry(id1)
    assert entry1 is not None and entry1["type"] == "message"
    assert entry1["message"]["content"] == "first"
    entry2 = session.get_entry(id2)
    assert entry2 is not None
    assert entry2["message"]["content"][0]["text"] == "second"


# --- buildSessionContext with branches ----------------------------------


def test_tree_context_holds_only_the_current_branch():
    session = SessionManager.in_memory()
    session.append_message(user_msg("msg1"))
    id2 = session.append_message(assistant_msg("msg2"))
    session.append_message(user_msg("msg3"))
    session.branch(id2)
    session.append_message(assistant_msg("msg4-branch"))

    messages = session.build_session_context()["messages"]
    assert len(messages) == 3
    assert messages[0]["content"] == "msg1"
    assert messages[1]["content"][0]["text"] == "msg2"
    assert messages[2]["content"][0]["text"] == "msg4-branch"


# --- createBranchedSession ----------------------------------------------


def test_branched_session_of_unknown_entry_raises():
    session = SessionManager.in_memory()
    session.append_message(user_msg("hello"))
    with pytest.raises(KeyError, match="Entry nonexistent not found"):
        session.create_branched_session("nonexistent")


def test_branched_session_in_memory_keeps_only_the_path():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    id3 = session.append_message(user_msg("3"))
    session.append_message(assistant_msg("4"))
    session.branch(id3)
    session.append_message(user_msg("5"))

    assert session.create_branched_session(id2) is None  # in memory: no file
    assert [e["id"] for e in session.get_entries()] == [id1, id2]


def test_branched_session_takes_the_path_through_a_side_branch():
    session = SessionManager.in_memory()
    id1 = session.append_message(user_msg("1"))
    id2 = session.append_message(assistant_msg("2"))
    session.append_message(user_msg("3"))
    session.branch(id2)
    id4 = session.append_message(user_msg("4"))
    id5 = session.append_message(assistant_msg("5"))

    session.create_branched_session(id5)
    assert [e["id"] for e in session.get_entries()] == [id1, id2, id4, id5]


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_branched_session_from_first_user_message_writes_no_duplicates(tmp_path):
    """pi 0.58.3 expected the new file to be absent until the first
    assistant message; pi 1.6 (like us) writes a session once it holds a
    user *or* assistant message, so the branched file, whose path is one
    user message, is written at once (checked with the pi 1.6 oracle)."""
    session = SessionManager.create(str(tmp_path), tmp_path)
    id1 = session.append_message(user_msg("first question"))
    session.append_message(assistant_msg("first answer"))
    session.append_message(user_msg("second question"))
    session.append_message(assistant_msg("second answer"))

    new_file = session.create_branched_session(id1)
    assert new_file is not None
    assert new_file.exists()  # pi 0.58.3: not yet; pi 1.6: yes

    session.append_custom_entry("preset-state", {"name": "plan"})
    session.append_message(assistant_msg("new answer"))

    records = _records(new_file)
    assert len([r for r in records if r["type"] == "session"]) == 1
    ids = [r["id"] for r in records if r["type"] != "session" and isinstance(r.get("id"), str)]
    assert len(set(ids)) == len(ids)


def test_branched_session_with_an_assistant_message_is_written_at_once(tmp_path):
    session = SessionManager.create(str(tmp_path), tmp_path)
    session.append_message(user_msg("first question"))
    id2 = session.append_message(assistant_msg("first answer"))
    session.append_message(user_msg("second question"))
    session.append_message(assistant_msg("second answer"))

    new_file = session.create_branched_session(id2)
    assert new_file is not None and new_file.exists()
    assert len([r for r in _records(new_file) if r["type"] == "session"]) == 1
