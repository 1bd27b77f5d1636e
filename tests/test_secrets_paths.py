"""Secrets on the way out: ``export`` refuses a page holding a
detected secret unless ``--redact`` or ``--allow-secrets``; a
``SessionManager`` / ``PiSession`` with ``redact_secrets=True`` masks them
in what is sent to a model, and the session keeps what was written."""

from __future__ import annotations

import asyncio
import json

import pytest

from secrets_corpus import SECRETS, field_records, write_session
from pi_session import SessionManager

KEY = SECRETS[0][2]  # an OpenAI project key (fake)
PEM_BODY = SECRETS[19][2].split("\n")[1]


@pytest.fixture
def session(tmp_path):
    records = field_records(f"use {KEY} now")
    records[2]["message"]["content"][0]["text"] = SECRETS[19][2]  # the assistant text: a private key
    return write_session(tmp_path / "s.jsonl", records)


@pytest.mark.parametrize("fmt", ["html", "md", "jsonl"])
def test_export_refuses_then_redacts_or_allows(tmp_path, cli, session, fmt):
    out = tmp_path / f"x.{fmt}"
    refused = cli("export", str(session), "--format", fmt, "-o", str(out))
    assert refused.returncode == 1 and "--redact" in refused.stderr and "openai-api-key" in refused.stderr
    assert KEY not in refused.stderr and not out.exists()
    assert cli("export", str(session), "--format", fmt, "-o", str(out), "--redact").returncode == 0
    text = out.read_text()
    assert KEY not in text and PEM_BODY not in text and "[REDACTED:openai-api-key]" in text
    out = tmp_path / f"y.{fmt}"
    assert cli("export", str(session), "--format", fmt, "-o", str(out), "--allow-secrets").returncode == 0
    assert KEY in out.read_text()
    assert KEY in session.read_text()  # the session is not changed


def test_export_of_a_clean_session_needs_no_flag(tmp_path, cli):
    path = write_session(tmp_path / "c.jsonl", field_records("nothing to hide here"))
    assert cli("export", str(path), "-o", str(tmp_path / "c.html")).returncode == 0


def test_manager_redact_secrets_masks_what_the_model_gets(session):
    plain = SessionManager.open(session)
    masked = SessionManager.open(session, redact_secrets=True)
    assert KEY in json.dumps(plain.build_session_context()["messages"])
    for messages in (masked.build_session_context()["messages"], masked.build_session_projection()["messages"]):
        shown = json.dumps(messages)
        assert KEY not in shown and "[REDACTED:openai-api-key]" in shown
    projection = masked.build_session_projection()
    assert [i["sourceEntry"]["id"] for i in projection["entries"]] == [i["sourceEntry"]["id"] for i in plain.build_session_projection()["entries"]]
    assert json.dumps(masked.get_entries()) == json.dumps(plain.get_entries())  # the entries keep what was written


def test_pi_session_redact_secrets(tmp_path):
    from pi_session.integrations.openai_agents import PiSession

    async def run(redact: bool):
        s = PiSession("chat-1", cwd=str(tmp_path), session_dir=str(tmp_path / "sessions"), redact_secrets=redact)
        if redact:
            await s.add_items([{"role": "user", "content": f"here: {KEY}"}])
        return await s.get_items()

    items = asyncio.run(run(True))
    assert KEY not in json.dumps(items) and "[REDACTED:openai-api-key]" in json.dumps(items)
    assert KEY in json.dumps(asyncio.run(run(False)))  # stored as written
    assert KEY in "".join(p.read_text() for p in (tmp_path / "sessions").rglob("*.jsonl"))
