"""pi 0.58.3 test/session-manager/labels.test.ts, translated: label
entries, ``get_label``, labels in the tree and across
``create_branched_session``."""

from __future__ import annotations

import pytest
from pi_sm_helpers import assistant_msg, user_msg

from pi_session import SessionManager


def test_labels_set_then_read_back():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello", 1))
    assert session.get_label(msg_id) is None

    label_id = session.append_label_change(msg_id, "checkpoint")
    assert session.get_label(msg_id) == "checkpoint"

    labels = [e for e in session.get_entries() if e["type"] == "label"]
    assert len(labels) == 1
    assert labels[0]["id"] == label_id
    assert labels[0]["targetId"] == msg_id
    assert labels[0]["label"] == "checkpoint"


def test_labels_cleared_by_a_label_change_without_label():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello", 1))
    session.append_label_change(msg_id, "checkpoint")
    assert session.get_label(msg_id) == "checkpoint"
    session.append_label_change(msg_id, None)  # pi: undefined
    assert session.get_label(msg_id) is None
    # leaving the label argument out is pi's undefined too
    session.append_label_change(msg_id, "again")
    session.append_label_change(msg_id)
    assert session.get_label(msg_id) is None


def test_labels_latest_change_wins():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello", 1))
    for label in ("first", "second", "third"):
        session.append_label_change(msg_id, label)
    assert session.get_label(msg_id) == "third"


def test_labels_appear_on_tree_nodes():
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello", 1))
    msg2 = session.append_message(assistant_msg("hi", 2))
    session.append_label_change(msg1, "start")
    session.append_label_change(msg2, "response")

    tree = session.get_tree()
    node1 = next(n for n in tree if n.entry["id"] == msg1)
    assert node1.label == "start"
    node2 = next(n for n in node1.children if n.entry["id"] == msg2)
    assert node2.label == "response"


def test_labels_on_the_path_survive_create_branched_session():
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello", 1))
    msg2 = session.append_message(assistant_msg("hi", 2))
    session.append_label_change(msg1, "important")
    session.append_label_change(msg2, "also-important")

    assert session.create_branched_session(msg2) is None  # in memory: no file
    assert session.get_label(msg1) == "important"
    assert session.get_label(msg2) == "also-important"
    assert len([e for e in session.get_entries() if e["type"] == "label"]) == 2


def test_labels_off_the_path_are_dropped_by_create_branched_session():
    session = SessionManager.in_memory()
    msg1 = session.append_message(user_msg("hello", 1))
    msg2 = session.append_message(assistant_msg("hi", 2))
    msg3 = session.append_message(user_msg("followup", 3))
    session.append_label_change(msg1, "first")
    session.append_label_change(msg2, "second")
    session.append_label_change(msg3, "third")

    session.create_branched_session(msg2)
    assert session.get_label(msg1) == "first"
    assert session.get_label(msg2) == "second"
    assert session.get_label(msg3) is None


def test_labels_are_not_context_messages():
    session = SessionManager.in_memory()
    msg_id = session.append_message(user_msg("hello", 1))
    session.append_label_change(msg_id, "checkpoint")
    messages = session.build_session_context()["messages"]
    assert [m["role"] for m in messages] == ["user"]


def test_labels_unknown_target_raises():
    session = SessionManager.in_memory()
    with pytest.raises(KeyError, match="Entry non-existent not found"):
        session.append_label_change("non-existent", "label")
