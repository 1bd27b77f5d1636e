"""Re-importing the source of a session that ``scrub`` changed since it was
imported (``--mode rewrite`` redacted its lines, ``--mode edit`` appended
context edits): the import recognises the lines it wrote, exactly, and
appends what the source gained after them, the context edits still on
the path to the new leaf; a real rewrite of the source is still a
conflict. Through the real console script, on files and SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_import_helpers import SID, cc_assistant, cc_user, write_jsonl
from pi_session.importers import pi_session_id
from pi_session.stores import open_store
from pi_session.stores.scrubbed import REDACTION_MARK
from secrets_corpus import SECRETS

KIND, AROUND, SECRET = next(s for s in SECRETS if s[0] == "anthropic-api-key")


def _records(grown: bool) -> list[dict]:
    records = [
        cc_user("u1", None, 1, "deploy with " + AROUND.format(SECRET)),
        cc_assistant(
            "a1", "u1", 2, "m1",
            [{"type": "thinking", "thinking": "the key " + SECRET + " is in the prompt", "signature": "c2lnbmF0dXJl"}, {"type": "text", "text": "Deploying."}],
        ),
    ]
    if grown:
        records += [cc_user("u2", "a1", 3, "and now the docs"), cc_assistant("a2", "u2", 4, "m2", [{"type": "text", "text": "Docs built."}])]
    return records


@pytest.mark.parametrize("mode", ["rewrite", "edit"])
@pytest.mark.parametrize("backend", ["files", "sqlite"])
def test_a_scrubbed_session_takes_what_its_source_gained(tmp_path, cli, mode, backend):
    store = str(tmp_path / "sessions") if backend == "files" else f"sqlite:///{tmp_path / 's.db'}"
    src = write_jsonl(tmp_path / "claude" / "projects" / "-home-ada-project" / f"{SID}.jsonl", _records(False))
    args = ("import", "--from", "claude-code", str(src), "--store", store)
    assert "1 imported" in cli(*args).stdout
    session_id = pi_session_id("claude-code", SID)
    scrub = cli("scrub", session_id, "--mode", mode, "--store", store)
    assert scrub.returncode == 0, scrub.stdout + scrub.stderr
    target = open_store(store)
    scrubbed = list(target.read_lines(session_id))
    if mode == "rewrite":
        assert not any(SECRET.encode() in line for line in scrubbed)
    else:
        assert any(b'"context_edit"' in line for line in scrubbed)
    assert "1 unchanged" in cli(*args, "--recheck").stdout

    write_jsonl(src, _records(True))
    grown = cli(*args)
    assert grown.returncode == 0 and "1 updated" in grown.stdout, grown.stdout + grown.stderr
    stored = list(target.read_lines(session_id))
    assert stored[: len(scrubbed)] == scrubbed  # nothing written before is touched
    context = cli("--store", store, "context", session_id, "--json")
    assert context.returncode == 0, context.stderr
    text = context.stdout
    assert "Docs built." in text and "and now the docs" in text and "Deploying." in text
    assert SECRET not in text and REDACTION_MARK.search(text)
    again = cli(*args, "--recheck")
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout + again.stderr

    # a real rewrite of the source is still a conflict: only the marks may differ
    rewritten = _records(True)
    rewritten[0]["message"]["content"] = "deploy to prod with " + AROUND.format(SECRET)
    write_jsonl(src, rewritten)
    clash = cli(*args)
    assert clash.returncode == 1 and "conflict" in clash.stdout + clash.stderr
    assert list(target.read_lines(session_id)) == stored


def test_the_redaction_mark_is_the_one_scrub_writes():
    from pi_session.secrets.scanner import REDACTED_RE, redaction

    assert REDACTION_MARK.pattern == REDACTED_RE.pattern
    assert REDACTION_MARK.fullmatch(redaction(KIND))


def test_edit_counts_the_secrets_an_import_keeps_beside_the_context(tmp_path, cli):
    """A secret in a source record kept on a message entry (its
    ``imported`` key, which the model never sees) is not hidden by a
    context edit: ``scrub --mode edit`` says it stays in the file."""
    progress = {"type": "progress", "uuid": "p1", "parentUuid": "u1", "timestamp": "2025-06-01T10:00:01.500Z", "data": {"output": "export KEY=" + SECRET}}
    records = [cc_user("u1", None, 1, "deploy"), progress, cc_assistant("a1", "p1", 2, "m1", [{"type": "text", "text": "Deploying."}])]
    src = write_jsonl(tmp_path / "claude" / "projects" / "-home-ada-project" / f"{SID}.jsonl", records)
    store = str(tmp_path / "sessions")
    assert "1 imported" in cli("import", "--from", "claude-code", str(src), "--store", store).stdout
    scrub = cli("scrub", pi_session_id("claude-code", SID), "--mode", "edit", "--store", store)
    assert scrub.returncode == 0, scrub.stdout + scrub.stderr
    assert "1 secret outside the model context" in " ".join(scrub.stderr.split()), scrub.stderr
