"""pi 0.58.3 test/session-manager/custom-session-id.test.ts, translated:
``new_session(id=...)``."""

from __future__ import annotations

from pi_session import SessionManager


def test_custom_session_id_is_used_as_given():
    session = SessionManager.in_memory()
    session.new_session(id="my-custom-id")
    assert session.get_session_id() == "my-custom-id"


def test_custom_session_id_absent_gives_a_random_id():
    session = SessionManager.in_memory()
    session.new_session()
    assert isinstance(session.get_session_id(), str)
    assert session.get_session_id() != ""


def test_custom_session_id_other_options_without_id_give_a_random_id():
    session = SessionManager.in_memory()
    session.new_session(parent_session="parent.jsonl")
    assert isinstance(session.get_session_id(), str)
    assert session.get_session_id() != ""


def test_custom_session_id_is_written_into_the_header():
    session = SessionManager.in_memory()
    session.new_session(id="header-test-id")
    header = session.get_header()
    assert header is not None
    assert header["id"] == "header-test-id"
