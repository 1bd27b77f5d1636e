"""Secrets in sessions: ``find_secrets`` / ``pi-session secrets``
over every field kind, ``scrub --mode rewrite|edit`` on every store, the
oracle reading the results, and a SIGKILL during the rewrite."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from secrets_corpus import BASH_KEYS, FIELD_KIND_COUNT, LOOKALIKES, SECRETS, bash_env_session, field_records, write_session
from pi_session.operations import scrub_session
from pi_session.search import search
from pi_session.search.query import tokens
from pi_session.secrets import AllowList, find_secrets, mask

SOME = [SECRETS[0], SECRETS[3], SECRETS[9], SECRETS[19], SECRETS[25]]  # OpenAI, Anthropic, GitHub, private key, keyword


def _needle(secret: str) -> str:
    """A piece of the secret that grep and JSON text hold as it is (a private
    key's body line, a quoted value without its quotes)."""
    if "\n" in secret:
        return secret.split("\n")[1]
    return secret.split('"')[1] if '"' in secret else secret


def _session(tmp_path: Path, planted=SOME, name="s.jsonl") -> Path:
    records = []
    for n, (_kind, ctx, secret) in enumerate(planted):
        recs = field_records(ctx.format(secret), n)
        if records:  # one session: later headers become custom data, chained to the last entry
            recs[0] = {"type": "custom", "id": f"h{n}", "parentId": records[-1]["id"], "timestamp": recs[1]["timestamp"],
                       "customType": "header-copy", "data": recs[0]}
            recs[1]["parentId"] = f"h{n}"
        records.extend(recs)
    return write_session(tmp_path / name, records)


def _grep(needles: list[str], *paths: Path) -> str:
    """What ``grep -rF`` finds of any needle under ``paths`` (empty: nothing)."""
    pattern_file = paths[0].parent / ".needles"
    pattern_file.write_text("\n".join(needles) + "\n")
    try:
        out = subprocess.run(["grep", "-rlaF", "-f", str(pattern_file), *map(str, paths)], capture_output=True, text=True)
    finally:
        pattern_file.unlink()
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def _search_words(secrets: list[tuple]) -> list[str]:
    """The longest search token of each secret's needle (what a search for
    the secret would ask the index)."""
    return [max(tokens(_needle(s)), key=len) for _k, _c, s in secrets]


def _found(target, words: list[str], *, update: bool = True) -> list[str]:
    """The words the search index still finds a hit for (``update``: bring
    a files index up to date first; False asks what it holds now)."""
    return [w for w in words if search(target, w, include_edited=True, thinking=True, update=update).hits]


def test_every_field_kind_is_scanned_and_named(tmp_path):
    path = _session(tmp_path, [SECRETS[0]])
    hits = find_secrets(path)
    assert len({h.field_kind for h in hits}) == FIELD_KIND_COUNT
    assert {h.kind for h in hits} == {"openai-api-key"}
    by_kind = {h.field_kind: h for h in hits}
    assert by_kind["thinking"].field == "message.content[0].thinking" and by_kind["thinking"].entry_id == "k0"
    assert by_kind["tool-call arguments"].field == "message.content[0].arguments.command"
    assert by_kind["custom data"].field == "data.note" and by_kind["header"].field == "cwd"
    assert by_kind["label"].line == 12 and by_kind["name"].entry_id == "i0"


def test_mask_shows_two_characters_at_each_end_only():
    assert mask("sk-proj-abcdefghijkl") == "sk…kl (20 chars)"
    assert mask("hunter2") == "… (7 chars)"


def test_lookalikes_are_not_reported_and_the_allow_list_drops_known_ones(tmp_path):
    # ids, hashes, image data, placeholders and AWS's documentation key
    assert find_secrets([r for n, t in enumerate(LOOKALIKES) for r in field_records(t, n)]) == []
    known = [r for r in field_records("our CI key AKIA" + "Z7QW3RT5YU8IO2PL")]
    assert {h.kind for h in find_secrets(known)} == {"aws-access-key"}
    allow = AllowList.from_text("# the CI key\nAKIAZ7QW3RT5YU8IO2PL\nre:never-[0-9]+\n")
    assert find_secrets(known, allow=allow) == []


def test_env_assignments_of_secret_named_variables():
    found = find_secrets(field_records("export DB_PASSWORD=Hq7vN2kX9mZ4\nAPP_SECRET_TOKEN=a1b2c3d4e5f6g7"))
    assert {h.value for h in found} == {"Hq7vN2kX9mZ4", "a1b2c3d4e5f6g7"}
    assert {h.kind for h in found} == {"secret-keyword"}
    # a more specific detector names the kind
    assert {h.kind for h in find_secrets(field_records("AWS_ACCESS_KEY_ID=AKIAZ7QW3RT5YU8IO2PL"))} == {"aws-access-key"}


def test_cli_never_prints_a_secret_and_exits_1_when_found(tmp_path, cli):
    path = _session(tmp_path)
    needles = [_needle(s) for _k, _c, s in SOME]
    for args in ([], ["--json"]):
        result = cli("secrets", str(path), *args)
        assert result.returncode == 1, result.stderr
        assert not any(n in result.stdout + result.stderr for n in needles)
    listed = json.loads(cli("secrets", str(path), "--json").stdout)
    assert len(listed) == len(SOME) * FIELD_KIND_COUNT and {"entryId", "field", "kind", "preview"} <= set(listed[0])
    clean = write_session(tmp_path / "clean.jsonl", field_records(LOOKALIKES[0]))
    result = cli("secrets", str(clean))
    assert result.returncode == 0 and result.stdout == "" and "0 secrets" in result.stderr


def test_cli_says_when_a_file_is_not_a_session(tmp_path, cli):
    """A file that is no pi session (no session header) is still scanned,
    line by line, and the scan says so; a session file gets no such word."""
    notes = tmp_path / "notes.txt"
    notes.write_text("deploy with AWS_ACCESS_KEY_ID=AKIAZ7QW3RT5YU8IO2PL\n")
    result = cli("secrets", str(notes))
    assert result.returncode == 1, result.stderr
    assert f"warning: {notes}: not a pi session file (no session header); scanned as text lines" in result.stderr
    assert result.stdout == f"{notes}:1: (a line that is not a JSON record): aws-access-key AK…PL (20 chars)\n"
    assert "AKIAZ7QW3RT5YU8IO2PL" not in result.stdout + result.stderr
    result = cli("secrets", str(_session(tmp_path)))
    assert "not a pi session file" not in result.stderr


def test_cli_all_and_allow_list_file(tmp_path, cli):
    sessions = tmp_path / "agent" / "sessions" / "--tmp--"
    sessions.mkdir(parents=True)
    write_session(sessions / "2026-11-30T12-00-00-000Z_0b5f4e2a-0000-4000-8000-000000000000.jsonl", field_records("key AKIA" + "Z7QW3RT5YU8IO2PL", 0))
    write_session(sessions / "2026-11-30T12-00-01-000Z_0b5f4e2a-0000-4000-8000-000000000001.jsonl", field_records(LOOKALIKES[0], 1))
    result = cli("secrets", "--all", "--json")
    assert result.returncode == 1 and len({h["session"] for h in json.loads(result.stdout)}) == 1
    allow = tmp_path / "allow.txt"
    allow.write_text("AKIAZ7QW3RT5YU8IO2PL\n")
    assert cli("secrets", "--all", "--allow-list", str(allow)).returncode == 0
    allow.write_text("re:(\n")
    bad = cli("secrets", "--all", "--allow-list", str(allow))
    assert bad.returncode == 2 and "line 1" in bad.stderr and "Traceback" not in bad.stderr
    scrubbed = cli("scrub", "--all", "--mode", "rewrite", "--json")
    assert scrubbed.returncode == 0 and [r["changedLines"] for r in json.loads(scrubbed.stdout)] == [13, 0]
    assert cli("secrets", "--all").returncode == 0


def _ids(path: Path) -> list[tuple]:
    return [(r.get("type"), r.get("id"), r.get("parentId"), r.get("timestamp"), r.get("targetId"))
            for r in map(json.loads, path.read_text().splitlines())]


def test_rewrite_leaves_no_planted_secret_in_the_directory_nor_an_export(tmp_path, cli):
    # ~10 s: every planted kind in every field kind, and 6 runs of the real CLI
    sessions = tmp_path / "agent" / "sessions" / "--tmp--"
    sessions.mkdir(parents=True)
    path = _session(sessions, SECRETS, "2026-11-30T12-00-00-000Z_0b5f4e2a-0000-4000-8000-000000000000.jsonl")
    damaged = "{not json " + SECRETS[9][2] + "\n"
    with path.open("a") as f:
        f.write(damaged)
    os.chmod(path, 0o640)
    needles = [_needle(s) for _k, _c, s in SECRETS]
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    legacy = sessions / ".pi-session-index"  # older pi-session versions' listing index, in the directory
    legacy.write_text(json.dumps({"first": SECRETS[0][2]}))
    assert cli("ls", "--all", env=cache).returncode == 0  # the listing index now holds first messages
    assert cli("search", "the", "--json", env=cache).returncode in (0, 1)  # and the search index all text
    assert cli("search", "the", "--json", "--cwd", "/tmp", env=cache).returncode in (0, 1)
    assert _grep(needles, sessions) and _grep(needles, tmp_path / "cache")
    ids = _ids_tolerant(path)
    words = _search_words(SECRETS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", cache["XDG_CACHE_HOME"])
        assert _found(tmp_path / "agent" / "sessions", words)
    result = cli("scrub", str(path), "--mode", "rewrite", env=cache)
    assert result.returncode == 0, result.stderr
    assert not any(n in result.stdout + result.stderr for n in needles)
    assert _grep(needles, sessions) == "" and _grep(needles, tmp_path / "cache") == ""
    assert not legacy.exists()
    with pytest.MonkeyPatch.context() as mp:  # forgotten at once; the next search indexes the rewritten file
        mp.setenv("XDG_CACHE_HOME", cache["XDG_CACHE_HOME"])
        assert _found(tmp_path / "agent" / "sessions", words, update=False) == []
        assert _found(tmp_path / "agent" / "sessions", words) == []
    assert _ids_tolerant(path) == ids and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_text().splitlines()[-1] == "{not json [REDACTED:github-token]"  # damaged line kept, redacted
    for fmt in ("html", "jsonl"):
        out = tmp_path / f"x.{fmt}"
        assert cli("export", str(path), "--format", fmt, "-o", str(out)).returncode == 0
        assert _grep(needles, out) == ""
    before = path.read_bytes()
    again = cli("scrub", str(path), "--mode", "rewrite")
    assert again.returncode == 0 and "nothing to do" in again.stdout and path.read_bytes() == before


def _ids_tolerant(path: Path) -> list[tuple]:
    out = []
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        out.append((r.get("type"), r.get("id"), r.get("parentId"), r.get("timestamp")))
    return out


def test_rewrite_backup_is_0600_and_dry_run_writes_nothing(tmp_path, cli):
    path = _session(tmp_path)
    os.chmod(path, 0o644)
    before = path.read_bytes()
    dry = cli("scrub", str(path), "--mode", "rewrite", "--dry-run")
    assert dry.returncode == 0 and "would redact" in dry.stdout and path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    result = cli("scrub", str(path), "--mode", "rewrite", "--backup")
    backup = tmp_path / "s.jsonl.secrets.bak"
    assert result.returncode == 0 and str(backup) in result.stdout
    assert ": redacted " in result.stdout and "would" not in result.stdout  # what was done, in the past tense
    assert backup.read_bytes() == before and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def _store_session(url: str, tmp_path: Path) -> str:
    from pi_session.stores import open_store

    lines = _session(tmp_path).read_bytes().splitlines(keepends=True)
    # a plain cwd: a file store names the session's directory after it
    # (test_a_secret_in_the_cwd_is_named_in_the_rewrite)
    header = {**json.loads(lines[0]), "cwd": "/tmp/project"}
    lines[0] = (json.dumps(header) + "\n").encode()
    store = open_store(url)
    try:
        store.new_handle(header).create(lines)
    finally:
        store.close()
    return header["id"]


def _store_text(url: str, session_id: str) -> str:
    """Everything the store holds of the session: its lines and listing columns."""
    from pi_session.stores import open_store

    store = open_store(url)
    try:
        lines = b"".join(store.read_lines(session_id)).decode()
        return lines + json.dumps(store.list(with_text=True))
    finally:
        store.close()


def test_rewrite_in_every_store(store_url, tmp_path, cli):
    session_id = _store_session(store_url, tmp_path)
    needles = [_needle(s) for _k, _c, s in SOME]
    assert any(n in _store_text(store_url, session_id) for n in needles)
    result = cli("--store", store_url, "scrub", session_id[:13], "--mode", "rewrite")
    assert result.returncode == 0, result.stderr
    text = _store_text(store_url, session_id)
    assert not any(n in text for n in needles) and "[REDACTED:openai-api-key]" in text
    from pi_session.stores import open_store

    store = open_store(store_url)
    try:  # the store's search tables were rewritten in the same transaction
        assert _found(store, _search_words(SOME)) == []
    finally:
        store.close()
    if store_url.startswith("sqlite:"):  # the database's bytes too: old rows overwritten, the WAL truncated
        assert _grep(needles, *tmp_path.glob("sessions.db*")) == ""
    again = cli("--store", store_url, "scrub", session_id, "--mode", "rewrite")
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert _store_text(store_url, session_id) == text


def test_a_secret_in_the_cwd_is_named_in_the_rewrite(tmp_path, cli):
    path = _session(tmp_path, [SECRETS[0]])
    result = cli("scrub", str(path), "--mode", "rewrite")
    assert result.returncode == 0 and "session directories made from it" in result.stderr
    assert SECRETS[0][2] not in result.stderr


def _read(url: str, session_id: str):
    """(context messages, entries) of a store's session, as a manager opens it."""
    from pi_session.operations import open_for_reading
    from pi_session.stores import open_store
    from pi_session.stores.file import FileStore

    store = open_store(url)
    try:
        manager = open_for_reading(store.path_of(session_id)) if isinstance(store, FileStore) else open_for_reading(session_id, store=store)
        return manager.build_session_context()["messages"], manager.get_entries()
    finally:
        store.close()


def test_edit_in_every_store_hides_from_the_model_and_keeps_history(store_url, tmp_path, cli):
    session_id = _store_session(store_url, tmp_path)
    needles = [_needle(s) for _k, _c, s in SOME]
    messages, entries = _read(store_url, session_id)
    holding = lambda items: [m for m in items if any(n in json.dumps(m) for n in needles)]  # noqa: E731
    assert {m["role"] for m in holding(messages)} > {"bashExecution"}
    result = cli("--store", store_url, "scrub", session_id, "--mode", "edit")
    # the summaries keep theirs (an edit could only drop them whole): named, exit 1
    assert result.returncode == 1, result.stderr
    assert "context edit" in result.stdout and "bash execution b4 left out of the model context" in result.stdout
    assert not any(n in result.stdout + result.stderr for n in needles)
    messages, after = _read(store_url, session_id)
    assert {m["role"] for m in holding(messages)} == {"branchSummary", "compactionSummary"}
    for kind in ("compaction summary", "branch summary"):
        assert f"({kind}): " in result.stderr and "a context edit cannot hide it" in result.stderr
    assert "--mode rewrite removes them" in result.stderr
    assert after[: len(entries)] == entries and {e["type"] for e in after[len(entries):]} == {"context_edit"}
    again = cli("--store", store_url, "scrub", session_id, "--mode", "edit")
    assert again.returncode == 1 and "appended" not in again.stdout
    assert _read(store_url, session_id)[1] == after


def _shape(nodes: list) -> list:
    return [(n["id"], n["type"], n["label"] is None, _shape(n["children"])) for n in nodes]


@pytest.mark.oracle
def test_oracle_reads_the_rewrite_with_the_same_tree_and_leaf(tmp_path, oracle, cli):
    path = _session(tmp_path)
    tree_before = json.loads(oracle("tree", str(path)))
    result = cli("scrub", str(path), "--mode", "rewrite")
    assert result.returncode == 0, result.stderr
    tree_after = json.loads(oracle("tree", str(path)))
    assert tree_after["leafId"] == tree_before["leafId"]
    assert _shape(tree_after["roots"]) == _shape(tree_before["roots"])  # same ids, types, children; labels where they were
    assert tree_after["roots"][0]["label"] == "key [REDACTED:openai-api-key]"  # a label held a secret
    context = oracle("context", str(path))
    assert not any(_needle(s) in context for _k, _c, s in SOME) and "[REDACTED:" in context


@pytest.mark.oracle
def test_oracle_reads_the_edits_with_the_secrets_masked(tmp_path, oracle, cli):
    from pi_session.core.jsonio import js_stringify

    path = _session(tmp_path, [SECRETS[0]])
    before = oracle("context", str(path))
    assert SECRETS[0][2] in before
    assert cli("scrub", str(path), "--mode", "edit").returncode == 1  # the summaries keep theirs
    assert SECRETS[0][2] in path.read_text()  # the file keeps it
    theirs = json.loads(oracle("projection", str(path)))
    seen = json.dumps(theirs["messages"])
    shown = [m["role"] for m in theirs["messages"] if SECRETS[0][2] in json.dumps(m)]
    # an edit could only drop these whole: reported, not hidden; the bash execution is left out
    assert sorted(shown) == ["branchSummary", "compactionSummary"]
    assert "bashExecution" not in [m["role"] for m in theirs["messages"]]
    masked = [m["role"] for m in theirs["messages"] if "[REDACTED:openai-api-key]" in json.dumps(m)]
    assert sorted(masked) == ["custom", "toolResult"]  # the rest of the context after the compaction
    assert "sk-proj-" not in seen.replace(SECRETS[0][2], "")
    ours = json.loads(cli("context", str(path), "--projection", "--json").stdout)
    assert js_stringify(ours) == js_stringify(theirs)


_KILLER = r"""
import os, sys
from pi_session.operations import scrub_session
point = sys.argv[2]
real_fsync, real_replace = os.fsync, os.replace
def stop():
    sys.stdout.write("at\n"); sys.stdout.flush(); sys.stdin.read()  # the parent kills us here
if point == "fsync":
    def fsync(fd):
        real_fsync(fd); stop()
    os.fsync = fsync
elif point == "before-rename":
    def replace(a, b):
        stop(); real_replace(a, b)
    os.replace = replace
elif point == "after-rename":
    def replace(a, b):
        real_replace(a, b); stop()
    os.replace = replace
scrub_session(sys.argv[1], mode="rewrite")
"""


@pytest.mark.parametrize("point", ["fsync", "before-rename", "after-rename"])
def test_sigkill_during_the_rewrite_leaves_the_old_or_the_new_file(tmp_path, point):
    path = _session(tmp_path)
    old = path.read_bytes()
    twin = tmp_path / "twin"
    twin.mkdir()
    expected = twin / "s.jsonl"
    expected.write_bytes(old)
    scrub_session(expected, mode="rewrite")
    new = expected.read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", _KILLER, str(path), point], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stdout.readline() == b"at\n"
    proc.kill()
    proc.wait()
    after = path.read_bytes()
    assert after == (new if point == "after-rename" else old)


def test_a_redacted_thinking_block_loses_its_signature():
    from pi_session.secrets import redacted_records

    changed = redacted_records(field_records(SECRETS[0][2]))[3]["message"]["content"][0]
    assert changed == {"type": "thinking", "thinking": "[REDACTED:openai-api-key]"}
    kept = field_records("nothing secret")
    assert redacted_records(kept)[3] is kept[3]


def test_a_secret_nested_deeper_than_the_recursion_limit_is_found_and_masked(tmp_path, cli):
    """Tool-call arguments nested 3,000 deep (JSON has no depth limit; pi
    reads and writes them): the scan, ``export`` and the rewrite reach the
    string at the bottom (they once died of RecursionError, an internal
    error)."""
    key = SECRETS[0][2]
    deep: object = {"command": f"use {key}"}
    for _ in range(3000):
        deep = [deep]
    records = field_records("nothing here")
    records[2]["message"]["content"] = [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"x": deep}}]
    from pi_session.core.jsonio import dumps_line

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(map(dumps_line, records)))  # json.dumps recurses
    hits = find_secrets(path)
    assert [h.kind for h in hits] == ["openai-api-key"] and hits[0].field.startswith("message.content[0].arguments.x[0][0]")
    for fmt in ("md", "html", "jsonl"):
        refused = cli("export", str(path), "--format", fmt, "-o", str(tmp_path / f"x.{fmt}"))
        assert refused.returncode == 1 and "internal error" not in refused.stderr, refused.stderr
        redacted = cli("export", str(path), "--format", fmt, "--redact", "-o", str(tmp_path / f"x.{fmt}"))
        assert redacted.returncode == 0, redacted.stderr
        assert key not in (tmp_path / f"x.{fmt}").read_text()
    rewrite = cli("scrub", str(path), "--mode", "rewrite")
    assert rewrite.returncode == 0, rewrite.stderr
    assert key not in path.read_text() and find_secrets(path) == []


# --- a key in a bash execution (``!cat .env``) --------------------------------


def _bash_session(tmp_path: Path, *, summary_key: str | None = None, name: str = "bash.jsonl") -> Path:
    return bash_env_session(tmp_path / name, summary_key=summary_key)


_BASH_KEYS = BASH_KEYS


def test_edit_hides_a_key_in_a_bash_output_from_the_context(tmp_path, cli):
    """``scrub --mode edit`` on a key that ``!cat .env`` put in the context:
    a context edit cannot replace a bash execution's output, only leave the
    execution out of the context (pi 1.6 applies such an omission to any
    message): scrub does that, says so, and exits 0 with no secret in the
    context; the file keeps the key; ``secrets`` then marks it hidden."""
    path = _bash_session(tmp_path)
    assert all(k in cli("context", str(path), "--json").stdout for k in _BASH_KEYS)
    dry = cli("scrub", str(path), "--mode", "edit", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["omitted"] == ["bash1", "bash2"]
    done = cli("scrub", str(path), "--mode", "edit")
    assert done.returncode == 0, done.stderr
    assert "bash execution bash1 left out of the model context" in done.stdout, done.stdout
    assert "cannot hide" not in done.stderr and "nothing to do" not in done.stdout
    assert not any(k in done.stdout + done.stderr for k in _BASH_KEYS)
    context = cli("context", str(path), "--json").stdout
    assert not any(k in context for k in _BASH_KEYS) and "is the key in .env set?" in context
    assert all(k in path.read_text() for k in _BASH_KEYS)  # append-only: the file keeps them
    assert cli("secrets", str(path)).returncode == 0  # found, and every one hidden from the model
    again = cli("scrub", str(path), "--mode", "edit")
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_edit_names_what_it_cannot_hide_and_exits_1(tmp_path, cli):
    """A key in a compaction summary: a context edit could only drop the
    whole summary (the history before it), so ``--mode edit`` leaves it,
    exits 1 and names the file, the entry and its kind (and hides the
    rest); ``--mode rewrite`` then leaves no secret in the context."""
    key = SECRETS[9][2]
    path = _bash_session(tmp_path, summary_key=key)
    for args in (("--dry-run",), ()):
        out = cli("scrub", str(path), "--mode", "edit", *args)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        assert f"{path}: cmp1 summary (compaction summary)" in out.stderr, out.stderr
        assert "a context edit cannot hide" in out.stderr and "--mode rewrite" in out.stderr
        assert "nothing to do" not in out.stdout and key not in out.stdout + out.stderr
    result = json.loads(cli("scrub", str(path), "--mode", "edit", "--json").stdout)
    assert [(h["entryId"], h["fieldKind"]) for h in result["notHidden"]] == [("cmp1", "compaction summary")]
    context = cli("context", str(path), "--json").stdout
    assert key in context and not any(k in context for k in _BASH_KEYS)
    rewrite = cli("scrub", str(path), "--mode", "rewrite")
    assert rewrite.returncode == 0, rewrite.stderr
    assert not any(k in cli("context", str(path), "--json").stdout for k in [key, *_BASH_KEYS])
    assert cli("scrub", str(path), "--mode", "edit").returncode == 0


@pytest.mark.oracle
def test_pi_builds_no_secret_from_a_scrubbed_bash_output(tmp_path, oracle, cli):
    """pi 1.6 (the oracle) builds its context from the scrubbed files:
    after ``--mode edit`` the bash executions holding keys are left out
    (the rest of the context as before); after ``--mode rewrite`` they are
    there with the keys redacted. Neither context holds a key."""
    edited = _bash_session(tmp_path, name="edited.jsonl")
    rewritten = _bash_session(tmp_path, name="rewritten.jsonl")
    before = json.loads(oracle("context", str(edited)))
    assert all(k in json.dumps(before) for k in _BASH_KEYS)
    assert cli("scrub", str(edited), "--mode", "edit").returncode == 0
    assert cli("scrub", str(rewritten), "--mode", "rewrite").returncode == 0
    after_edit = json.loads(oracle("context", str(edited)))
    assert not any(k in json.dumps(after_edit) for k in _BASH_KEYS)
    assert after_edit["messages"] == [m for m in before["messages"] if m["role"] != "bashExecution"]
    after_rewrite = json.loads(oracle("context", str(rewritten)))
    assert not any(k in json.dumps(after_rewrite) for k in _BASH_KEYS)
    outputs = [m["output"] for m in after_rewrite["messages"] if m["role"] == "bashExecution"]
    assert outputs == ["OPENAI_API_KEY=[REDACTED:openai-api-key]\nDEBUG=1\n", "ANTHROPIC_API_KEY=[REDACTED:anthropic-api-key]\n"]
    assert json.loads(cli("context", str(edited), "--json").stdout) == after_edit
