"""Library API behind the CLI: SessionManager.plan_navigation / navigate
(pi's navigateTree), SessionManager.stats (``info``), tokens.usage_is_stale
(``tokens``)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pi_session import NavigationPlan, NavigationResult, SessionManager, SessionStats, plan_navigation, usage_is_stale


def user(text, ts=1):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(content, ts=2, usage=None):
    return {
        "role": "assistant", "content": content, "api": "a", "provider": "p", "model": "m",
        "usage": usage or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "stop", "timestamp": ts,
    }


def text(t):
    return [{"type": "text", "text": t}]


@pytest.fixture
def tree():
    """u1 - a1 - u2 - a2 (the leaf)."""
    sm = SessionManager.in_memory("/proj")
    ids = {}
    ids["u1"] = sm.append_message(user("first"))
    ids["a1"] = sm.append_message(assistant(text("one")))
    ids["u2"] = sm.append_message(user("second"))
    ids["a2"] = sm.append_message(assistant(text("two")))
    return sm, ids


def test_plan_user_target_moves_leaf_to_parent_with_editor_text(tree):
    sm, ids = tree
    plan = sm.plan_navigation(ids["u2"])
    assert isinstance(plan, NavigationPlan)
    assert (plan.target_id, plan.old_leaf_id, plan.new_leaf_id, plan.editor_text) == (ids["u2"], ids["a2"], ids["a1"], "second")
    # the target is on the old path, so it is the common ancestor (pi collects up to it)
    assert [e["id"] for e in plan.entries_to_summarize] == [ids["a2"]]
    assert plan.common_ancestor_id == ids["u2"]
    assert not plan.is_noop
    assert sm.get_leaf_id() == ids["a2"]  # planning writes nothing, moves nothing
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.new_leaf_id = "x"  # type: ignore[misc]


def test_plan_root_user_target_goes_before_first_entry(tree):
    sm, ids = tree
    plan = sm.plan_navigation(ids["u1"])
    assert plan.new_leaf_id is None and plan.editor_text == "first"


def test_plan_assistant_target_is_the_new_leaf(tree):
    sm, ids = tree
    plan = sm.plan_navigation(ids["a1"])
    assert plan.new_leaf_id == ids["a1"] and plan.editor_text is None
    assert [e["id"] for e in plan.entries_to_summarize] == [ids["u2"], ids["a2"]]
    assert plan.common_ancestor_id == ids["a1"]


def test_plan_custom_message_target_moves_to_parent(tree):
    sm, ids = tree
    cm = sm.append_custom_message_entry("note", [{"type": "text", "text": "remember"}], True)
    sm.branch(ids["a2"])
    plan = sm.plan_navigation(cm)
    assert plan.new_leaf_id == ids["a2"] and plan.editor_text == "remember"
    assert plan.entries_to_summarize == ()  # the old leaf is an ancestor of the target


def test_plan_noop_and_unknown_target(tree):
    sm, ids = tree
    plan = sm.plan_navigation(ids["a2"])
    assert plan.is_noop and plan.new_leaf_id == ids["a2"] and plan.editor_text is None and plan.entries_to_summarize == ()
    with pytest.raises(KeyError):
        sm.plan_navigation("nope")
    # the pure function on the tree gives the same plan
    assert plan_navigation(sm.tree, ids["a2"], ids["u2"]) == sm.plan_navigation(ids["u2"])


def test_navigate_without_summary_moves_leaf_only(tree):
    sm, ids = tree
    count = sm.get_entry_count()
    result = sm.navigate(ids["u2"])
    assert isinstance(result, NavigationResult)
    assert result == NavigationResult(ids["u2"], ids["a2"], ids["a1"], None, "second", (), ())
    assert sm.get_leaf_id() == ids["a1"] and sm.get_entry_count() == count
    result = sm.navigate(ids["u1"])
    assert result.new_leaf_id is None and sm.get_leaf_id() is None


def test_navigate_with_summary_appends_branch_summary(tree):
    sm, ids = tree
    result = sm.navigate(ids["a1"], summary="did things", details={"readFiles": []}, usage={"input": 3})
    entry = sm.get_entry(result.summary_entry_id)
    assert entry["type"] == "branch_summary" and entry["parentId"] == ids["a1"]
    assert entry["fromId"] == ids["a2"] and entry["summary"] == "did things"
    assert entry["details"] == {"readFiles": []} and entry["usage"] == {"input": 3}
    assert sm.get_leaf_id() == result.summary_entry_id
    assert result.summarized_entry_ids == (ids["u2"], ids["a2"])


def test_navigate_empty_summary_records_move_without_summarized_ids(tree):
    sm, ids = tree
    result = sm.navigate(ids["a1"], summary="")
    entry = sm.get_entry(result.summary_entry_id)
    assert entry["summary"] == "" and "details" not in entry and "usage" not in entry
    assert result.summarized_entry_ids == ()


def test_navigate_noop_writes_nothing(tree):
    sm, ids = tree
    count = sm.get_entry_count()
    result = sm.navigate(ids["a2"], summary="x")
    assert result == NavigationResult(ids["a2"], ids["a2"], ids["a2"], None, None)
    assert sm.get_entry_count() == count and sm.get_leaf_id() == ids["a2"]
    with pytest.raises(KeyError):
        sm.navigate("nope", summary="x")
    assert sm.get_entry_count() == count


def test_navigate_reports_unanswered_tool_calls():
    sm = SessionManager.in_memory("/proj")
    sm.append_message(user("go"))
    call = sm.append_message(assistant([{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {}}]))
    sm.append_message({"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                       "content": text("data"), "isError": False, "timestamp": 3})
    sm.append_message(assistant(text("done"), ts=4))
    result = sm.navigate(call)
    assert result.unanswered_tool_call_ids == ("call_1",)
    assert sm.navigate(sm.get_entries()[-1]["id"]).unanswered_tool_call_ids == ()


def test_stats_matches_info_json_shape(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    u = sm.append_message(user("hi"))
    sm.append_message(assistant(text("ok")))
    sm.append_label_change(u, "start")
    sm.append_session_info("Nice")
    stats = sm.stats()
    assert isinstance(stats, SessionStats)
    data = stats.to_json()
    assert list(data) == ["path", "id", "version", "cwd", "created", "parentSession", "name", "sizeBytes", "entries",
                          "counts", "leafId", "branchLength", "labels", "problems", "userMessages", "assistantMessages",
                          "toolCalls", "toolResults", "totalMessages", "tokens", "cost"]
    path = sm.get_session_file()
    assert data["path"] == str(path) and data["sizeBytes"] == path.stat().st_size > 0
    assert data["id"] == sm.get_session_id() and data["name"] == "Nice" and data["cwd"] == sm.get_cwd()
    assert data["counts"] == {"message:user": 1, "message:assistant": 1, "label": 1, "session_info": 1}
    assert data["entries"] == 4 and data["branchLength"] == 4 and data["leafId"] == sm.get_leaf_id()
    assert data["labels"] == {u: "start"} and data["problems"] == []
    json.dumps(data)


def test_stats_reports_problems_and_in_memory(tmp_path):
    sm = SessionManager.create("/proj", tmp_path)
    sm.append_message(user("hi"))
    path = sm.get_session_file()
    with open(path, "ab") as f:
        f.write(b"{not json\n")
    stats = SessionManager.open(path, read_only=True).stats()
    assert len(stats.problems) == 1 and stats.problems[0]["line"] == 3
    assert set(stats.problems[0]) == {"line", "kind", "message", "recovered"}
    mem = SessionManager.in_memory("/proj").stats()
    assert mem.path is None and mem.size_bytes == 0 and mem.entries == 0 and mem.leaf_id is None


def test_usage_is_stale_after_compaction():
    sm = SessionManager.in_memory("/proj")
    first = sm.append_message(user("one"))
    sm.append_message(assistant(text("a"), usage={"input": 500, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                                                     "totalTokens": 510}))
    assert not usage_is_stale(sm.build_session_projection(), sm.get_branch())
    sm.append_compaction("summary", first, 510)
    assert usage_is_stale(sm.build_session_projection(), sm.get_branch())
    sm.append_message(user("two", ts=5))
    sm.append_message(assistant(text("b"), ts=6, usage={"input": 50, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                                                          "totalTokens": 55}))
    assert not usage_is_stale(sm.build_session_projection(), sm.get_branch())


def test_usage_is_stale_false_without_usage():
    sm = SessionManager.in_memory("/proj")
    sm.append_message(user("one"))
    assert not usage_is_stale(sm.build_session_projection(), sm.get_branch())


def test_plan_across_branches_collects_the_branch_left(tree):
    sm, ids = tree
    sm.branch(ids["a1"])
    u3 = sm.append_message(user("third", ts=7))
    a3 = sm.append_message(assistant(text("three"), ts=8))
    plan = sm.plan_navigation(ids["a2"])
    assert plan.old_leaf_id == a3 and plan.new_leaf_id == ids["a2"]
    assert [e["id"] for e in plan.entries_to_summarize] == [u3, a3] and plan.common_ancestor_id == ids["a1"]
    result = sm.navigate(ids["a2"], summary="explored three")
    assert result.summarized_entry_ids == (u3, a3)
    assert sm.get_entry(result.summary_entry_id)["fromId"] == a3
    # the shape `navigate --json` prints
    summary_entry = sm.get_entry(result.summary_entry_id)
    assert result.to_json(leaf_id=sm.get_leaf_id(), summary_entry=summary_entry) == {
        "oldLeafId": a3, "newLeafId": result.summary_entry_id, "targetId": ids["a2"], "summaryEntry": summary_entry,
        "editorText": None, "summarizedEntryIds": [u3, a3], "unansweredToolCalls": [],
    }
