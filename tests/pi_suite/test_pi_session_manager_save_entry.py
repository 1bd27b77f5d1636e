"""pi 0.58.3 test/session-manager/save-entry.test.ts, translated: a
``custom`` entry between two messages."""

from __future__ import annotations

from pi_sm_helpers import assistant_msg, user_msg

from pi_session import SessionManager


def test_save_entry_custom_entry_joins_the_tree_but_not_the_context():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello", 1))
    custom_id = session.append_custom_entry("my_data", {"foo": "bar"})
    msg2_id = session.append_message(assistant_msg("hi", 2))

    entries = session.get_entries()
    assert len(entries) == 3
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["customType"] == "my_data"
    assert custom["data"] == {"foo": "bar"}
    assert custom["id"] == custom_id
    assert custom["parentId"] == msg_id

    assert [e["id"] for e in session.get_branch()] == [msg_id, custom_id, msg2_id]
    assert len(session.build_session_context()["messages"]) == 2
