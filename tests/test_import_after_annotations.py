"""Re-importing the source of a session annotated in the store since it was
imported (a label, a name, a context edit, an extractive compaction): the
entries pi-session appended are expected additions, never a conflict; the
import goes on appending what the source gained, continuing from the last
addition on the source's path (pi appends at the leaf), so that pi 1.6
builds the context at the new leaf from the old conversation (or its
compaction summary), then the new messages. A real rewrite of the source
is still a conflict. Through the CLI, Claude Code and Codex sources, on
files, SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_import_helpers import CODEX_ID, SID, cc_assistant, cc_user, cx_meta, cx_msg, cx_turn, write_jsonl
from pi_session.importers import pi_session_id
from pi_session.stores import open_store

LONG = " ".join(f"word{n}" for n in range(400))
OLD = ["first question " + LONG, "First answer " + LONG, "second question " + LONG, "Second answer " + LONG]
NEW = ["and now the docs", "Docs built."]


def _claude(grown: bool, tmp_path: Path, rewritten: bool = False) -> Path:
    texts = OLD + (NEW if grown else [])
    records = []
    parent = None
    for n, text in enumerate(texts):
        uuid = f"r{n}"
        if n % 2 == 0:
            records.append(cc_user(uuid, parent, n + 1, ("rewritten " if rewritten and n == 0 else "") + text))
        else:
            records.append(cc_assistant(uuid, parent, n + 1, f"m{n}", [{"type": "text", "text": text}]))
        parent = uuid
    return write_jsonl(tmp_path / "claude" / "projects" / "-home-ada-project" / f"{SID}.jsonl", records)


def _codex(grown: bool, tmp_path: Path, rewritten: bool = False) -> Path:
    texts = OLD + (NEW if grown else [])
    records = [cx_meta(0), cx_turn(1)]
    for n, text in enumerate(texts):
        role = "user" if n % 2 == 0 else "assistant"
        records.append(cx_msg(n + 2, role, ("rewritten " if rewritten and n == 0 else "") + text))
    return write_jsonl(tmp_path / "codex" / "sessions" / "2025" / "06" / "01" / f"rollout-2025-06-01T10-00-00-{CODEX_ID}.jsonl", records)


SOURCES = {"claude-code": (_claude, SID), "codex": (_codex, CODEX_ID)}


def _store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "files":
        return str(tmp_path / "sessions")
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 's.db'}"
    return str(request.getfixturevalue("postgres_url"))


def _records(store: str, session_id: str) -> list[dict]:
    return [json.loads(line) for line in open_store(store).read_lines(session_id) if line.strip()]


def _annotate(cli, store: str, session_id: str, how: str) -> None:
    entries = _records(store, session_id)
    messages = [e for e in entries if e.get("type") == "message"]
    first_user = next(e for e in messages if e["message"]["role"] == "user")
    first_assistant = next(e for e in messages if e["message"]["role"] == "assistant")
    if how == "label":
        args: tuple[str, ...] = ("label", session_id, first_user["id"], "the start")
    elif how == "name":
        args = ("name", session_id, "docs work")
    elif how == "edit":
        args = ("edit", session_id, first_assistant["id"], "--replace", "an answer, hidden")
    else:
        args = ("compact", session_id, "--provider", "extractive", "--keep-recent-tokens", "50")
    done = cli("--store", store, *args)
    assert done.returncode == 0, done.stdout + done.stderr


def _import_annotate_grow(tmp_path, cli, request, source: str, how: str, backend: str):
    write, source_id = SOURCES[source]
    store = _store(backend, tmp_path, request)
    src = write(False, tmp_path)
    args = ("import", "--from", source, str(src), "--store", store)
    first = cli(*args)
    assert first.returncode == 0 and "1 imported" in first.stdout, first.stdout + first.stderr
    session_id = pi_session_id(source, source_id)
    _annotate(cli, store, session_id, how)
    annotated = list(open_store(store).read_lines(session_id))
    again = cli(*args)
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout + again.stderr
    write(True, tmp_path)
    grown = cli(*args)
    assert grown.returncode == 0 and "1 updated" in grown.stdout, grown.stdout + grown.stderr
    return store, session_id, src, args, annotated


@pytest.mark.parametrize("how", ["label", "name", "edit", "compact"])
@pytest.mark.parametrize("source", ["claude-code", "codex"])
@pytest.mark.parametrize("backend", ["files", "sqlite", "postgres"])
def test_an_annotated_session_takes_what_its_source_gained(tmp_path, cli, request, source, how, backend):
    store, session_id, src, args, annotated = _import_annotate_grow(tmp_path, cli, request, source, how, backend)
    stored = list(open_store(store).read_lines(session_id))
    assert stored[: len(annotated)] == annotated  # nothing written before is touched, the annotation kept
    entries = _records(store, session_id)
    texts = json.dumps([e["message"] for e in entries if e.get("type") == "message"])
    assert texts.count("and now the docs") == 1 and texts.count("Docs built.") == 1
    context = cli("--store", store, "context", session_id, "--json")
    assert context.returncode == 0, context.stderr
    assert context.stdout.index("and now the docs") < context.stdout.index("Docs built.")
    if how == "name":
        assert cli("--store", store, "name", session_id).stdout.strip().endswith("docs work")
    if how == "edit":
        assert "an answer, hidden" in context.stdout and "First answer" not in context.stdout
    again = cli(*args, "--recheck")
    assert again.returncode == 0 and "1 unchanged" in again.stdout, again.stdout + again.stderr
    assert list(open_store(store).read_lines(session_id)) == stored

    # a real rewrite of the source is still a conflict
    SOURCES[source][0](True, tmp_path, rewritten=True)
    clash = cli(*args)
    assert clash.returncode == 1 and "conflict" in clash.stdout + clash.stderr
    assert list(open_store(store).read_lines(session_id)) == stored


@pytest.mark.parametrize("how", ["label", "name", "edit", "compact"])
@pytest.mark.parametrize("source", ["claude-code", "codex"])
def test_pi_builds_the_context_of_the_grown_session(tmp_path, cli, request, oracle, source, how):
    """pi 1.6's context at the leaf of the re-imported session: the old
    conversation (its compaction summary, its context edit applied), then
    the new messages, once."""
    store, session_id, _src, _args, _annotated = _import_annotate_grow(tmp_path, cli, request, source, how, "files")
    path = tmp_path / "exported.jsonl"
    path.write_bytes(b"".join(open_store(store).read_lines(session_id)))
    messages = json.loads(oracle("context", str(path)))["messages"]
    text = json.dumps(messages)
    assert text.count("and now the docs") == 1 and text.count("Docs built.") == 1
    assert text.index("Second answer") < text.index("and now the docs") < text.index("Docs built.")
    if how == "compact":
        assert messages[0]["role"] == "compactionSummary"
    if how == "edit":
        assert "an answer, hidden" in text and "First answer" not in text
    ours = json.loads(cli("--store", store, "context", session_id, "--json").stdout)
    assert json.dumps(ours).count("Docs built.") == 1


def _line(**fields) -> bytes:
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def test_new_lines_continue_after_the_additions_on_their_path_only():
    """The source's next line is parented on the last addition chained
    after its parent (a label, then a compaction: pi's leaf); an addition
    on another branch (a branch summary after the leaf moved back) changes
    nothing for a line that does not continue there; a message the store
    gained is no addition."""
    from pi_session.stores.additions import continue_after_additions, store_addition

    stored = [
        _line(type="session", version=3, id="s", timestamp="t", cwd="/"),
        _line(type="message", id="m1", parentId=None, timestamp="t", message={"role": "user", "content": "a"}),
        _line(type="message", id="m2", parentId="m1", timestamp="t", message={"role": "assistant", "content": []}),
        _line(type="label", id="l1", parentId="m2", timestamp="t", targetId="m1", label="start"),
        _line(type="compaction", id="c1", parentId="l1", timestamp="t", summary="s", firstKeptEntryId="m2", tokensBefore=1),
        _line(type="branch_summary", id="b1", parentId="m1", timestamp="t", fromId="m2", summary="s"),
    ]
    source_ids = {"s", "m1", "m2"}
    new = [
        _line(type="message", id="m3", parentId="m2", timestamp="t", message={"role": "user", "content": "b"}),
        _line(type="message", id="m4", parentId="m3", timestamp="t", message={"role": "user", "content": "c"}),
    ]
    out = [json.loads(line) for line in continue_after_additions(stored, new, lambda: source_ids)]
    assert [e["parentId"] for e in out] == ["c1", "m3"]
    assert store_addition(stored[2], set()) is None  # a message
    assert store_addition(stored[3], source_ids) == ("l1", "m2")
    assert store_addition(stored[3], source_ids | {"l1"}) is None  # the source's own entry
