"""pi 0.58.3 test/session-manager/build-context.test.ts, translated:
``build_session_context`` over hand-made entry lists."""

from __future__ import annotations

from pi_sm_helpers import branch_summary_entry, compaction_entry, model_change_entry, msg_entry, thinking_entry

from pi_session import build_session_context


def _roles(ctx):
    return [m["role"] for m in ctx["messages"]]


def _text(message):
    content = message["content"]
    return content if isinstance(content, str) else content[0]["text"]


# --- trivial cases ------------------------------------------------------


def test_build_context_no_entries_gives_empty_context():
    ctx = build_session_context([])
    assert ctx["messages"] == []
    assert ctx["thinkingLevel"] == "off"
    assert ctx["model"] is None


def test_build_context_one_user_message():
    ctx = build_session_context([msg_entry("1", None, "user", "hello")])
    assert _roles(ctx) == ["user"]


def test_build_context_plain_conversation_keeps_order():
    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi there"),
        msg_entry("3", "2", "user", "how are you"),
        msg_entry("4", "3", "assistant", "great"),
    ]
    assert _roles(build_session_context(entries)) == ["user", "assistant", "user", "assistant"]


def test_build_context_thinking_level_change_is_tracked_not_a_message():
    entries = [
        msg_entry("1", None, "user", "hello"),
        thinking_entry("2", "1", "high"),
        msg_entry("3", "2", "assistant", "thinking hard"),
    ]
    ctx = build_session_context(entries)
    assert ctx["thinkingLevel"] == "high"
    assert len(ctx["messages"]) == 2


def test_build_context_model_comes_from_assistant_message():
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}


def test_build_context_later_assistant_message_overrides_model_change():
    entries = [
        msg_entry("1", None, "user", "hello"),
        model_change_entry("2", "1", "openai", "gpt-4"),
        msg_entry("3", "2", "assistant", "hi"),
    ]
    assert build_session_context(entries)["model"] == {"provider": "anthropic", "modelId": "claude-test"}


# --- with compaction ----------------------------------------------------


def test_build_context_compaction_summary_precedes_kept_messages():
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        msg_entry("3", "2", "user", "second"),
        msg_entry("4", "3", "assistant", "response2"),
        compaction_entry("5", "4", "Summary of first two turns", "3"),
        msg_entry("6", "5", "user", "third"),
        msg_entry("7", "6", "assistant", "response3"),
    ]
    messages = build_session_context(entries)["messages"]
    assert len(messages) == 5
    assert "Summary of first two turns" in messages[0]["summary"]
    assert [_text(m) for m in messages[1:]] == ["second", "response2", "third", "response3"]


def test_build_context_compaction_keeping_everything_from_the_first_message():
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response"),
        compaction_entry("3", "2", "Empty summary", "1"),
        msg_entry("4", "3", "user", "second"),
    ]
    messages = build_session_context(entries)["messages"]
    assert len(messages) == 4
    assert "Empty summary" in messages[0]["summary"]


def test_build_context_latest_of_several_compactions_wins():
    entries = [
        msg_entry("1", None, "user", "a"),
        msg_entry("2", "1", "assistant", "b"),
        compaction_entry("3", "2", "First summary", "1"),
        msg_entry("4", "3", "user", "c"),
        msg_entry("5", "4", "assistant", "d"),
        compaction_entry("6", "5", "Second summary", "4"),
        msg_entry("7", "6", "user", "e"),
    ]
    messages = build_session_context(entries)["messages"]
    assert len(messages) == 4
    assert "Second summary" in messages[0]["summary"]


# --- with branches ------------------------------------------------------


def test_build_context_follows_the_given_leaf():
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "branch A"),
        msg_entry("4", "2", "user", "branch B"),
    ]
    at_a = build_session_context(entries, "3")["messages"]
    assert len(at_a) == 3 and at_a[2]["content"] == "branch A"
    at_b = build_session_context(entries, "4")["messages"]
    assert len(at_b) == 3 and at_b[2]["content"] == "branch B"


def test_build_context_branch_summary_on_path_is_a_message():
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "abandoned path"),
        branch_summary_entry("4", "2", "Summary of abandoned work", "3"),
        msg_entry("5", "4", "user", "new direction"),
    ]
    messages = build_session_context(entries, "5")["messages"]
    assert len(messages) == 4
    assert "Summary of abandoned work" in messages[2]["summary"]
    assert messages[3]["content"] == "new direction"


def test_build_context_tree_with_branches_and_compaction():
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "r1"),
        msg_entry("3", "2", "user", "q2"),
        msg_entry("4", "3", "assistant", "r2"),
        compaction_entry("5", "4", "Compacted history", "3"),
        msg_entry("6", "5", "user", "q3"),
        msg_entry("7", "6", "assistant", "r3"),
        msg_entry("8", "3", "user", "wrong path"),
        msg_entry("9", "8", "assistant", "wrong response"),
        branch_summary_entry("10", "3", "Tried wrong approach", "9"),
        msg_entry("11", "10", "user", "better approach"),
    ]
    main = build_session_context(entries, "7")["messages"]
    assert len(main) == 5
    assert "Compacted history" in main[0]["summary"]
    assert [_text(m) for m in main[1:]] == ["q2", "r2", "q3", "r3"]

    side = build_session_context(entries, "11")["messages"]
    assert len(side) == 5
    assert [_text(m) for m in side[:3]] == ["start", "r1", "q2"]
    assert "Tried wrong approach" in side[3]["summary"]
    assert side[4]["content"] == "better approach"


# --- edge cases ---------------------------------------------------------


def test_build_context_unknown_leaf_falls_back_to_last_entry():
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    assert len(build_session_context(entries, "nonexistent")["messages"]) == 2


def test_build_context_entry_with_missing_parent_stands_alone():
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "missing", "assistant", "orphan")]
    assert len(build_session_context(entries, "2")["messages"]) == 1
