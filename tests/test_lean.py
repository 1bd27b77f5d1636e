"""Keeping sessions lean: ``slim`` / ``restore`` (payloads to content-addressed
blobs and back, byte for byte) and ``prune`` (abandoned branches to an
archive session), through the real console script, checked against pi 1.6
(the oracle) for the tree and the context at the leaf."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import orjson
import pytest

from lean_helpers import Writer, branchy_session, image_session
from pi_session.session.lean import NOTE_PATTERN, find_payloads, parse_size, value_spans


def _entries(path: Path) -> list[dict]:
    return [r for r in map(orjson.loads, path.read_bytes().splitlines()) if r.get("type") != "session"]


def _tree_shape(oracle, path: Path) -> dict:
    return json.loads(oracle("tree", str(path)))


def _context(oracle, path: Path) -> dict:
    return json.loads(oracle("context", str(path)))


# --- the pure part ---------------------------------------------------------


def test_value_spans_find_exact_bytes_in_any_layout():
    raw = b'{"a": [1, {"b" : "x\\"y", "c": {"d": [true, null]}}], "e": -1.5e3}'
    record = orjson.loads(raw)
    spans = value_spans(raw, [("a", 1, "b"), ("a", 1, "c"), ("e",), ("a", 0), ("zz",)])
    assert raw[slice(*spans[("a", 1, "b")])] == b'"x\\"y"'
    assert orjson.loads(raw[slice(*spans[("a", 1, "c")])]) == record["a"][1]["c"]
    assert raw[slice(*spans[("e",)])] == b"-1.5e3"
    assert raw[slice(*spans[("a", 0)])] == b"1"
    assert ("zz",) not in spans


def test_parse_size():
    assert parse_size("65536") == 65536
    assert parse_size("64K") == 64 * 1024
    assert parse_size("1.5mb") == 1536 * 1024
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_payloads_of_each_kind():
    msg = {"type": "message", "id": "a", "message": {"role": "toolResult", "content": [
        {"type": "text", "text": "x" * 100}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}]}}
    call = {"type": "message", "id": "b", "message": {"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": "write", "arguments": {"path": "p", "content": "y" * 100}}]}}
    bash = {"type": "message", "id": "d", "message": {"role": "bashExecution", "command": "ls", "output": "z" * 100}}
    assert [p.path for p in find_payloads(msg, images=True, outputs_over=50)] == [("message", "content", 0, "text"), ("message", "content", 1)]
    assert [p.path for p in find_payloads(msg, images=False, outputs_over=None)] == []
    assert [p.path for p in find_payloads(call, images=True, outputs_over=50)] == [("message", "content", 0, "arguments", "content")]
    assert [p.path for p in find_payloads(bash, images=True, outputs_over=50)] == [("message", "output")]
    assert find_payloads(bash, images=True, outputs_over=500) == []


# --- slim and restore ------------------------------------------------------


def _agent_env(tmp_path: Path) -> dict[str, str]:
    return {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}


def test_slim_restore_round_trip_byte_for_byte_and_pi_opens_it(cli, oracle, tmp_path):
    s = image_session(tmp_path / "s.jsonl", total_bytes=4 << 20, rounds=12)
    path = s["path"]
    original = path.read_bytes()
    mode = 0o640
    os.chmod(path, mode)
    before_tree, before_ctx = _tree_shape(oracle, path), _context(oracle, path)

    dry = cli("slim", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would move" in dry.stdout and "saves" in dry.stdout
    assert path.read_bytes() == original and not (tmp_path / ".blobs").exists()

    done = cli("slim", str(path), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["payloads"] > 0 and result["bytesAfter"] == path.stat().st_size < len(original) // 4
    assert Path(result["backup"]).read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == mode
    slimmed = path.read_bytes()
    assert NOTE_PATTERN.search(slimmed)
    # every blob is named by its sha256 and holds the exact bytes replaced
    blobs = sorted((tmp_path / ".blobs").rglob("*"))
    assert [b for b in blobs if b.is_file()]
    # pi 1.6: the same tree, the same context at the leaf
    assert _tree_shape(oracle, path) == before_tree
    assert _context(oracle, path) == before_ctx
    # nothing left to do the second time
    again = cli("slim", str(path), "--json")
    assert json.loads(again.stdout)["payloads"] == 0 and path.read_bytes() == slimmed

    back = cli("restore", str(path))
    assert back.returncode == 0, back.stderr
    assert "put back" in back.stdout
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_everywhere_slims_the_context_too_and_restore_is_exact(cli, tmp_path):
    s = image_session(tmp_path / "s.jsonl", total_bytes=1 << 20, rounds=4, branch=False)
    path = s["path"]
    original = path.read_bytes()
    outside = json.loads(cli("slim", str(path), "--json", "--dry-run").stdout)
    everywhere = json.loads(cli("slim", str(path), "--json", "--everywhere", "--no-backup").stdout)
    assert everywhere["payloads"] > outside["payloads"]
    ctx = cli("context", str(path))
    assert "pi-session slim: image/png" in ctx.stdout
    assert not list(tmp_path.glob("*.bak"))
    assert cli("restore", str(path)).returncode == 0
    assert path.read_bytes() == original


def test_outputs_over_moves_text_payloads_only(cli, tmp_path):
    w = Writer(tmp_path / "t.jsonl")
    u = w.user(None, "run it")
    a = w.assistant(u, [{"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "f", "content": "é\"\\\n" * 5000}}])
    r = w.tool_result(a, "c1", [{"type": "text", "text": "out\u2028put\t" * 5000}, {"type": "image", "data": "QUJD" * 500, "mimeType": "image/png"}])
    old = w.user(r, "old")
    w.add(old, {"type": "compaction", "summary": "s", "firstKeptEntryId": old, "tokensBefore": 1})
    path = w.write()
    original = path.read_bytes()
    out = cli("slim", str(path), "--outputs-over", "8K", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["payloads"] == 2  # the argument and the output; not the image
    text = path.read_text()
    assert "tool argument" in text and "tool output" in text and "QUJD" in text
    assert cli("restore", str(path)).returncode == 0
    assert path.read_bytes() == original


def test_bad_size_and_missing_blob_are_one_line_errors(cli, tmp_path):
    s = image_session(tmp_path / "s.jsonl", total_bytes=200_000, rounds=4, branch=False)
    bad = cli("slim", str(s["path"]), "--outputs-over", "huge")
    assert bad.returncode == 2 and "--outputs-over" in bad.stderr and "Traceback" not in bad.stderr
    assert cli("slim", str(s["path"])).returncode == 0
    slimmed = s["path"].read_bytes()
    victim = next(p for p in (tmp_path / ".blobs").rglob("*") if p.is_file())
    victim.write_bytes(b"not the bytes")
    broken = cli("restore", str(s["path"]))
    assert broken.returncode == 1 and "damaged" in broken.stderr and len(broken.stderr.strip().splitlines()) == 1
    victim.unlink()
    missing = cli("restore", str(s["path"]))
    assert missing.returncode == 1 and "cannot be read" in missing.stderr
    assert s["path"].read_bytes() == slimmed


def test_slim_refuses_a_file_changed_meanwhile(tmp_path):
    from pi_session.operations.slimming import BlobStore, blob_dir, slim_lines
    from pi_session.storage import SessionFileError, atomic_rewrite

    s = image_session(tmp_path / "s.jsonl", total_bytes=100_000, rounds=3, branch=False)
    path = s["path"]
    st = path.stat()
    lines = path.read_bytes().splitlines(keepends=True)
    new, _result = slim_lines(lines, context_ids=None, images=True, outputs_over=None, put=BlobStore(blob_dir(path)).put)
    with path.open("ab") as f:  # another writer appends meanwhile
        f.write(lines[-1])
    with pytest.raises(SessionFileError, match="changed"):
        atomic_rewrite(path, new, backup_tag=None, expect_size=st.st_size, expect_mtime_ns=st.st_mtime_ns)


def _slims_to_under_5_percent(cli, oracle, tmp_path: Path, total: int) -> None:
    s = image_session(tmp_path / "big.jsonl", total_bytes=total, rounds=40)
    path = s["path"]
    digest = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    size = path.stat().st_size
    before_tree, before_ctx = _tree_shape(oracle, path), _context(oracle, path)
    done = cli("slim", str(path), "--no-backup")
    assert done.returncode == 0, done.stderr
    assert path.stat().st_size < size * 0.05, (path.stat().st_size, size)
    assert _tree_shape(oracle, path) == before_tree
    assert _context(oracle, path) == before_ctx
    assert cli("restore", str(path)).returncode == 0
    assert __import__("hashlib").sha256(path.read_bytes()).hexdigest() == digest


def test_20mb_of_images_slims_to_under_5_percent(cli, oracle, tmp_path):
    _slims_to_under_5_percent(cli, oracle, tmp_path, 20 << 20)


@pytest.mark.slow
def test_200mb_of_images_slims_to_under_5_percent(cli, oracle, tmp_path):
    _slims_to_under_5_percent(cli, oracle, tmp_path, 200 << 20)


# --- prune -----------------------------------------------------------------


def test_prune_keeps_pi_context_and_the_union_is_the_original(cli, oracle, tmp_path):
    b = branchy_session(tmp_path / "b.jsonl")
    path = b["path"]
    original = _entries(path)
    before_ctx = _context(oracle, path)
    labels_before = {e["targetId"]: e["label"] for e in original if e["type"] == "label"}

    dry = cli("prune", str(path), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["moved"] > 0 and not Path(plan["archive"]).exists()

    done = cli("prune", str(path), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    archive = Path(result["archive"])
    pruned = _entries(path)
    archived = _entries(archive)
    assert len(pruned) < len(original)
    # the union of both files is the original set of entries
    union = {e["id"]: e for e in pruned} | {e["id"]: e for e in archived}
    assert sorted(union.values(), key=lambda e: e["id"]) == sorted(original, key=lambda e: e["id"])
    # pi 1.6: the same context at the leaf; the archive opens with its branches whole
    assert _context(oracle, path) == before_ctx
    assert json.loads(oracle("tree", str(path)))["leafId"] == b["leaf"]
    header = orjson.loads(archive.read_bytes().splitlines()[0])
    assert header["parentSession"] == str(path)
    tree = json.loads(oracle("tree", str(archive)))
    assert len(tree["roots"]) == 1  # every archived entry hangs from the one root
    # the kept labels and branch summaries are still there
    kept_ids = {e["id"] for e in pruned}
    assert {t: l for t, l in labels_before.items() if t in kept_ids} == {
        e["targetId"]: e["label"] for e in pruned if e["type"] == "label"}
    assert any(e["type"] == "branch_summary" for e in pruned)
    assert cli("prune", str(path), "--json").stdout and json.loads(cli("prune", str(path), "--json").stdout)["moved"] == 0


def test_prune_keep_branches_and_archive_path(cli, tmp_path):
    b = branchy_session(tmp_path / "b.jsonl")
    path = b["path"]
    keep = b["side_leaves"][-1]
    target = tmp_path / "old" / "archive.jsonl"
    ambiguous = cli("prune", str(path), "--keep-branches", keep[:6])
    assert ambiguous.returncode == 1 and "more than one entry" in ambiguous.stderr
    done = cli("prune", str(path), "--keep-branches", keep, "--archive", str(target), "--no-backup")
    assert done.returncode == 0, done.stderr
    assert target.exists() and not list(tmp_path.glob("*.bak"))
    assert keep in {e["id"] for e in _entries(path)}
    other = branchy_session(tmp_path / "c.jsonl")["path"]
    taken = cli("prune", str(other), "--archive", str(target))
    assert taken.returncode == 1 and "exists" in taken.stderr
    unknown = cli("prune", str(path), "--keep-branches", "zzzz")
    assert unknown.returncode == 1 and "no such entry" in unknown.stderr


# --- info, ls --sizes and check report what slim and prune would save -----


def test_info_ls_and_check_report_payload_and_abandoned_bytes(cli, tmp_path):
    sessions = tmp_path / "agent" / "sessions" / "--proj--"
    sessions.mkdir(parents=True)
    s = image_session(sessions / "2026-01-01T00-00-00-000Z_x.jsonl", total_bytes=10 << 20, rounds=10)
    path = s["path"]
    size = path.stat().st_size

    info = json.loads(cli("info", str(path), "--json").stdout)["lean"]
    assert info["bytes"] == size and info["payloadBytes"] > size * 0.9 and info["abandonedBytes"] > 0
    text = cli("info", str(path)).stdout
    assert "payload" in text and "pi-session slim" in text and "pi-session prune" in text

    listed = cli("ls", "--all", "--sizes", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["lean"] == info
    assert str(path) in cli("ls", "--all", "--sizes", "--paths").stdout

    checked = cli("check", str(path))
    assert checked.returncode == 0, checked.stderr
    assert f"pi-session slim {path}" in checked.stdout
    assert cli("slim", str(path), "--no-backup").returncode == 0
    after = json.loads(cli("info", str(path), "--json").stdout)["lean"]
    assert after["slimmedPayloads"] > 0 and after["payloadBytes"] < info["payloadBytes"] // 5
    assert "pi-session slim" not in cli("check", str(path)).stdout
    # the blobs live beside pi's sessions, where pi's listing never looks
    assert (tmp_path / "agent" / "sessions" / ".blobs").is_dir()
    assert len(json.loads(cli("ls", "--all", "--json").stdout)) == 1


# --- the secrets scan, the search index and the listing follow the blobs ---


def _output_session(path: Path, text: str) -> Path:
    """A session whose compacted (outside the context) tool output holds ``text`` among 40 KB."""
    w = Writer(path)
    u = w.user(None, "show the config")
    a = w.assistant(u, [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat .env"}}])
    r = w.tool_result(a, "c1", [{"type": "text", "text": "filler line\n" * 2000 + text + "\n" + "more filler\n" * 2000}], name="bash")
    x = w.assistant(r, [{"type": "text", "text": "done"}])
    w.add(x, {"type": "compaction", "summary": "looked at the config", "firstKeptEntryId": x, "tokensBefore": 1})
    return w.write()


def test_secrets_scan_reads_the_blobs_of_a_slimmed_session(cli, tmp_path):
    from secrets_corpus import SECRETS

    _kind, template, secret = SECRETS[0]
    path = _output_session(tmp_path / "s.jsonl", template.format(secret))
    before = cli("secrets", str(path), "--json")
    assert before.returncode == 1 and secret not in before.stdout
    assert cli("slim", str(path), "--no-backup").returncode == 0
    assert secret.encode() not in path.read_bytes()
    after = cli("secrets", str(path), "--json")
    assert after.returncode == 1, after.stderr  # still found: in the blob
    hits = json.loads(after.stdout)
    assert hits and all("/.blobs/" in h["session"] for h in hits)
    assert secret not in after.stdout


def _blob_rows(store_url: str) -> int:
    """How many blobs a database store keeps (its ``pi_blobs`` table)."""
    if store_url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as db:
            return db.execute("SELECT count(*) FROM pi_blobs").fetchone()[0]
    import psycopg

    with psycopg.connect(store_url) as db:
        return db.execute("SELECT count(*) FROM pi_blobs").fetchone()[0]


def test_scrub_rewrite_removes_a_secret_from_the_blobs_on_every_store(cli, store_url, tmp_path):
    """A secret in a payload ``slim`` moved out is not left in its blob by
    ``scrub --mode rewrite``: the payload comes back into the session,
    redacted, and the blob goes once no session names it (two sessions
    share it here: the first scrub keeps it and says why)."""
    from secrets_corpus import SECRETS

    from lean_helpers import HEADER_ID

    _kind, template, secret = SECRETS[0]
    (tmp_path / "src").mkdir()
    first = _output_session(tmp_path / "src" / "a.jsonl", template.format(secret))
    second = tmp_path / "src" / "b.jsonl"
    other = HEADER_ID[:-1] + "2"
    second.write_bytes(first.read_bytes().replace(HEADER_ID.encode(), other.encode()))
    assert cli("import", str(tmp_path / "src"), "--store", store_url).returncode == 0
    for sid in (HEADER_ID, other):
        done = cli("--store", store_url, "slim", sid, "--json", "--no-backup")
        assert done.returncode == 0 and json.loads(done.stdout)["payloads"] == 1, done.stderr

    def still_found(sid: str) -> bool:
        out = cli("--store", store_url, "secrets", sid, "--json")
        assert out.returncode in (0, 1), out.stderr
        return bool(json.loads(out.stdout))

    def stored(sid: str) -> bytes:
        out = tmp_path / f"{sid}.jsonl"
        out.unlink(missing_ok=True)
        done = cli("--store", store_url, "export", sid, "--format", "jsonl", "-o", str(out))
        assert done.returncode == 0, done.stderr
        return out.read_bytes()

    edit = cli("--store", store_url, "scrub", HEADER_ID, "--mode", "edit", "--dry-run", "--json")
    assert [(b["secrets"], b["action"]) for b in json.loads(edit.stdout)["blobs"]] == [(1, "kept")]
    dry = cli("--store", store_url, "scrub", HEADER_ID, "--mode", "rewrite", "--dry-run", "--json")
    assert dry.returncode == 0 and [b["action"] for b in json.loads(dry.stdout)["blobs"]] == ["would remove"]
    assert still_found(HEADER_ID)
    kept = cli("--store", store_url, "scrub", HEADER_ID, "--mode", "rewrite", "--json")
    assert kept.returncode == 0, kept.stderr
    blobs = json.loads(kept.stdout)["blobs"]
    assert [(b["secrets"], b["action"]) for b in blobs] == [(1, "kept")]  # the other session names it
    assert secret not in kept.stdout and "another session" in " ".join(json.loads(kept.stdout)["notes"])
    assert not still_found(HEADER_ID) and still_found(other)
    text = stored(HEADER_ID)
    assert secret.encode() not in text and b"filler line" in text and b"[REDACTED:" in text  # put back, redacted
    removed = cli("--store", store_url, "scrub", other, "--mode", "rewrite", "--json")
    assert [b["action"] for b in json.loads(removed.stdout)["blobs"]] == ["removed"]
    assert not still_found(other) and not still_found(HEADER_ID)
    if "://" not in store_url:
        assert not [p for p in Path(store_url).rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    else:
        assert secret.encode() not in stored(other)
        assert _blob_rows(store_url) == 0
    again = cli("--store", store_url, "scrub", other, "--mode", "rewrite", "--json")
    assert json.loads(again.stdout)["changedLines"] == 0 and json.loads(again.stdout)["blobs"] == []


def test_search_index_follows_a_slimmed_session(cli, tmp_path):
    sessions = tmp_path / "agent" / "sessions" / "--proj--"
    sessions.mkdir(parents=True)
    path = _output_session(sessions / "2026-01-01T00-00-00-000Z_x.jsonl", "the zanzibar quokka config")
    def hits(query: str) -> list:
        out = cli("search", query, "--json")
        assert out.returncode in (0, 1), out.stderr
        return json.loads(out.stdout)["hits"]

    assert hits("zanzibar quokka")
    assert cli("slim", str(path)).returncode == 0
    # the index is refreshed from the slimmed file: it holds the note, not the output
    assert hits("zanzibar quokka") == []
    assert hits("pi-session slim")
    assert cli("restore", str(path)).returncode == 0
    assert hits("zanzibar quokka")


# --- every store ----------------------------------------------------------


def test_slim_restore_and_prune_on_every_store(cli, store_url, tmp_path):
    (tmp_path / "src").mkdir()
    s = image_session(tmp_path / "src" / "s.jsonl", total_bytes=600_000, rounds=6)
    path = s["path"]
    original = path.read_bytes()
    sid = orjson.loads(original.splitlines()[0])["id"]
    imported = cli("import", str(path), "--store", store_url)
    assert imported.returncode == 0, imported.stderr

    def export() -> bytes:
        out = tmp_path / "out.jsonl"
        out.unlink(missing_ok=True)
        done = cli("--store", store_url, "export", sid, "--format", "jsonl", "-o", str(out))
        assert done.returncode == 0, done.stderr
        return out.read_bytes()

    def context() -> dict:
        done = cli("--store", store_url, "context", sid, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert export() == original
    before = context()
    slimmed = cli("--store", store_url, "slim", sid, "--json", "--no-backup")
    assert slimmed.returncode == 0, slimmed.stderr
    assert json.loads(slimmed.stdout)["payloads"] > 0
    assert len(export()) < len(original) // 3
    assert context() == before
    info = cli("--store", store_url, "info", sid, "--json")
    assert json.loads(info.stdout)["lean"]["slimmedPayloads"] == json.loads(slimmed.stdout)["payloads"]
    listed = cli("--store", store_url, "ls", "--all", "--sizes", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [row["lean"] for row in json.loads(listed.stdout)] == [json.loads(info.stdout)["lean"]]
    restored = cli("--store", store_url, "restore", sid)
    assert restored.returncode == 0, restored.stderr
    assert export() == original

    pruned = cli("--store", store_url, "prune", sid, "--json", "--no-backup")
    assert pruned.returncode == 0, pruned.stderr
    result = json.loads(pruned.stdout)
    assert result["moved"] > 0 and result["archive"]
    assert context() == before
    after = [orjson.loads(x) for x in export().splitlines()[1:]]
    assert len(after) == len(_entries(path)) - result["moved"]


# --- pi's real sessions --------------------------------------------------


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_pis_real_sessions_slim_and_restore_byte_for_byte(fixture_copy, name):
    """Every payload kind pi writes (its own escapes, key order, images,
    tool outputs and arguments), slimmed everywhere with a low limit, comes
    back exactly; the slimmed file opens with the same tree."""
    from pi_session.manager.session_manager import SessionManager
    from pi_session.operations.slimming import restore_session, slim_session

    path = fixture_copy(name)
    original = path.read_bytes()
    tree = [(e["id"], e.get("parentId"), e["type"]) for e in SessionManager.open(path, read_only=True).get_entries()]
    result = slim_session(path, outputs_over=200, outside_context=False, backup=False)
    assert result.payloads > 10 and not result.skipped
    slimmed = SessionManager.open(path, read_only=True)
    assert not slimmed.problems
    assert [(e["id"], e.get("parentId"), e["type"]) for e in slimmed.get_entries()] == tree
    restore_session(path)
    assert path.read_bytes() == original


def test_a_damaged_blob_is_replaced_when_the_payload_is_slimmed_again(tmp_path):
    from pi_session.operations.slimming import BlobStore

    blobs = BlobStore(tmp_path / ".blobs")
    digest = blobs.put(b'"payload"')
    blobs.path(digest).write_bytes(b'"pay1oad"')  # same size, wrong bytes
    assert blobs.put(b'"payload"') == digest
    assert blobs.get(digest) == b'"payload"'


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_default_slim_of_a_v1_session_keeps_its_context(cli, fixture_copy, name):
    """A v1 file's entries have no ids in the file (the reader gives them
    theirs on migration): a default slim leaves the entries of the model
    context alone all the same, and ``info`` counts their payload."""
    path = fixture_copy(name)
    before = cli("context", str(path), "--json")
    assert before.returncode == 0, before.stderr
    info = json.loads(cli("info", str(path), "--json").stdout)["lean"]
    assert info["payloadBytes"] > 16 * 1024
    done = cli("slim", str(path), "--json", "--no-backup")
    assert done.returncode == 0, done.stderr
    assert cli("context", str(path), "--json").stdout == before.stdout
    everywhere = json.loads(cli("slim", str(path), "--json", "--dry-run", "--everywhere").stdout)
    assert everywhere["payloads"] > 0  # there were payloads to leave alone


def test_restore_leaves_a_note_quoted_in_a_message_alone(cli, tmp_path):
    """Only a note where slim writes one (a tool output here), exactly as
    slim writes it, is put back: the same note pasted by the user into a
    message, or standing as an assistant's text, stays as it is."""
    w = Writer(tmp_path / "q.jsonl")
    u = w.user(None, "run it")
    a = w.assistant(u, [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make"}}])
    w.tool_result(a, "c1", [{"type": "text", "text": "compiling\n" * 5000}], name="bash")
    path = w.write()
    original = path.read_bytes()
    assert cli("slim", str(path), "--everywhere", "--no-backup").returncode == 0
    note = NOTE_PATTERN.search(path.read_bytes()).group().decode()
    text = json.loads(note)
    quoting = Writer(tmp_path / "unused.jsonl")
    quoting.n = w.n
    last = f"{w.n:08x}"
    last = quoting.user(last, text)
    quoting.assistant(last, [{"type": "text", "text": text}])
    quoting.add(f"{quoting.n:08x}", {"message": {"role": "user", "content": text, "timestamp": 1}})
    appended = b"".join(quoting.lines[1:])
    assert appended.count(note.encode()) == 3
    with path.open("ab") as f:
        f.write(appended)
    back = cli("restore", str(path), "--json")
    assert back.returncode == 0, back.stderr
    assert path.read_bytes() == original + appended


def test_prune_says_which_entries_off_the_path_it_keeps_and_why(cli, tmp_path):
    """A branch left only with a label (made there, on an entry of the
    path) and the session's name: nothing moves, and prune says what it
    keeps off the path and why rather than that there is no branch."""
    w = Writer(tmp_path / "p.jsonl")
    u1 = w.user(None, "start")
    a1 = w.assistant(u1, [{"type": "text", "text": "ok"}])
    side = w.user(a1, "try something else")
    label = w.add(side, {"type": "label", "targetId": a1, "label": "good start"})
    name = w.add(label, {"type": "session_info", "name": "experiments"})
    u2 = w.user(a1, "go on")
    w.assistant(u2, [{"type": "text", "text": "done"}])
    path = w.write()
    original = path.read_bytes()
    out = cli("prune", str(path))
    assert out.returncode == 0, out.stderr
    assert "3 entries off the path kept" in out.stdout, out.stdout
    assert f"label 'good start' on {a1}" in out.stdout and f"session name at {name}" in out.stdout
    assert "no abandoned branches" not in out.stdout
    result = json.loads(cli("prune", str(path), "--json").stdout)
    assert result["moved"] == 0 and result["offPathKept"] == 3
    assert path.read_bytes() == original


def _labelled_elsewhere(tmp_path: Path) -> dict:
    """A session whose user labelled entries of abandoned branches after
    coming back to the main path (pi appends a label entry at the leaf,
    whatever it labels): one label set, one set and cleared there, one set
    on its own branch and cleared from the main path, and a branch with a
    label of its own that moves whole."""
    w = Writer(tmp_path / "l.jsonl")
    u1 = w.user(None, "start")
    a1 = w.assistant(u1, [{"type": "text", "text": "ok"}])
    idea_q = w.user(a1, "try the cache idea")
    idea = w.assistant(idea_q, [{"type": "text", "text": "the cache idea works"}])
    dead_q = w.user(a1, "try the dead end")
    dead = w.assistant(dead_q, [{"type": "text", "text": "a dead end"}])
    other_q = w.user(a1, "try a third thing")
    other = w.assistant(other_q, [{"type": "text", "text": "meh"}])
    own = w.add(other, {"type": "label", "targetId": other, "label": "meh"})
    tried_q = w.user(a1, "try a fourth thing")
    tried = w.assistant(tried_q, [{"type": "text", "text": "hm"}])
    tried_label = w.add(tried, {"type": "label", "targetId": tried, "label": "first try"})
    # back on the main path: labels made there name the abandoned entries
    bookmark = w.add(a1, {"type": "label", "targetId": idea, "label": "cache idea"})
    set_dead = w.add(bookmark, {"type": "label", "targetId": dead, "label": "dead"})
    cleared = w.add(set_dead, {"type": "label", "targetId": dead})
    uncleared = w.add(cleared, {"type": "label", "targetId": tried, "label": ""})
    u2 = w.user(uncleared, "go on")
    leaf = w.assistant(u2, [{"type": "text", "text": "done"}])
    path = w.write()
    return {"path": path, "leaf": leaf, "idea": idea, "idea_q": idea_q, "dead": dead, "dead_q": dead_q,
            "other": other, "other_q": other_q, "own": own, "tried": tried, "tried_q": tried_q,
            "tried_label": tried_label, "bookmark": bookmark, "cleared": cleared}


def _label_state(entries: list[dict]) -> dict:
    """What pi shows: each entry's label (the last label entry naming it
    wins; an empty one clears), for the entries present."""
    state: dict = {}
    for e in entries:
        if e["type"] == "label":
            state[e["targetId"]] = e.get("label") or None
    ids = {e["id"] for e in entries}
    return {t: label for t, label in state.items() if t in ids and label}


def test_prune_keeps_an_entry_labelled_from_the_kept_path(cli, tmp_path):
    """A label entry on the kept path that names an entry of an abandoned
    branch keeps that entry (and the path to it) in the session, so the
    bookmark stays on its entry; an entry whose label was cleared moves
    like any other, unless the archive would show the cleared label again
    (set on the entry's own branch, cleared from the kept path): then it
    stays. Every entry shows in each file the label it had. ``--dry-run``
    says which entries stay for which label."""
    s = _labelled_elsewhere(tmp_path)
    path = s["path"]
    original = _entries(path)
    dry = cli("prune", str(path), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (f"5 entries off the path kept: label 'first try' on {s['tried']}, label 'cache idea' on {s['idea']}, "
            f"label removal on {s['tried']}") in dry.stdout.replace("\n", " "), dry.stdout
    plan = json.loads(cli("prune", str(path), "--dry-run", "--json").stdout)
    assert plan["moved"] == 5 and plan["offPathKept"] == 5
    assert f"label 'cache idea' on {s['idea']}" in plan["keptFor"]
    assert _entries(path) == original

    done = cli("prune", str(path), "--json")
    assert done.returncode == 0, done.stderr
    archive = Path(json.loads(done.stdout)["archive"])
    pruned, archived = _entries(path), _entries(archive)
    kept = {e["id"] for e in pruned}
    assert {s["idea"], s["idea_q"], s["tried"], s["tried_q"], s["tried_label"], s["bookmark"], s["cleared"]} <= kept
    assert not {s["dead"], s["dead_q"], s["other"], s["other_q"], s["own"]} & kept
    assert {e["id"] for e in archived} >= {s["dead"], s["dead_q"], s["other"], s["other_q"], s["own"]}
    before = _label_state(original)
    assert before == {s["idea"]: "cache idea", s["other"]: "meh"}
    for part in (pruned, archived):
        ids = {e["id"] for e in part}
        assert _label_state(part) == {t: label for t, label in before.items() if t in ids}
    union = {e["id"]: e for e in pruned} | {e["id"]: e for e in archived}
    assert sorted(union.values(), key=lambda e: e["id"]) == sorted(original, key=lambda e: e["id"])


@pytest.mark.oracle
def test_pi_reads_the_labels_of_a_pruned_session_and_its_archive_on_their_entries(cli, oracle, tmp_path):
    """pi 1.6 opens the pruned session and the archive with every label on
    the entry it was on before (the cleared ones nowhere), and the same
    context at the leaf."""
    s = _labelled_elsewhere(tmp_path)
    path = s["path"]

    def labels(p: Path) -> dict:
        found: dict = {}

        def walk(nodes: list) -> None:
            for n in nodes:
                if n["label"] is not None:
                    found[n["id"]] = n["label"]
                walk(n["children"])

        walk(json.loads(oracle("tree", str(p)))["roots"])
        return found

    before_labels, before_ctx = labels(path), _context(oracle, path)
    assert before_labels == {s["idea"]: "cache idea", s["other"]: "meh"}  # pi's labels: what the test above computes
    done = cli("prune", str(path), "--json")
    assert done.returncode == 0, done.stderr
    archive = Path(json.loads(done.stdout)["archive"])
    assert labels(path) == {s["idea"]: "cache idea"}
    assert labels(archive) == {s["other"]: "meh"}
    assert _context(oracle, path) == before_ctx
    assert json.loads(oracle("tree", str(path)))["leafId"] == s["leaf"]


@pytest.mark.parametrize("kind", ["sqlite", "file"])
def test_import_carries_a_slimmed_sessions_blobs_into_the_store(cli, tmp_path, kind):
    """Importing a slimmed session file brings the blobs its notes name
    along (a database's table, a store of files' ``.blobs``), so restore
    works in the store; a store-to-store import copies them too; a blob
    missing beside the file is named in one warning line."""
    w = Writer(tmp_path / "src" / "s.jsonl")
    u = w.user(None, "run it")
    a = w.assistant(u, [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make"}}])
    w.tool_result(a, "c1", [{"type": "text", "text": "compiling\n" * 5000}], name="bash")
    (tmp_path / "src").mkdir()
    path = w.write()
    original = path.read_bytes()
    assert cli("slim", str(path), "--everywhere", "--no-backup").returncode == 0
    url = f"sqlite:///{tmp_path}/a.db" if kind == "sqlite" else str(tmp_path / "store")
    imported = cli("import", str(path), "--store", url, "--json")
    assert imported.returncode == 0, imported.stderr
    (row,) = json.loads(imported.stdout)
    assert row["blobs"] == 1 and "missingBlobs" not in row
    sid = row["id"]
    again = f"sqlite:///{tmp_path}/b.db"
    copied = cli("import", url, "--store", again, "--json") if kind == "sqlite" else None
    for n, store in enumerate([url] + ([again] if copied is not None else [])):
        assert cli("--store", store, "restore", sid).returncode == 0, store
        out = tmp_path / f"out{n}.jsonl"
        assert cli("--store", store, "export", sid, "--format", "jsonl", "-o", str(out)).returncode == 0
        assert out.read_bytes() == original, store
    for blob in (tmp_path / "src" / ".blobs").rglob("*"):
        if blob.is_file():
            blob.unlink()
    lost = cli("import", str(path), "--store", f"sqlite:///{tmp_path}/c.db")
    assert lost.returncode == 0, lost.stderr
    (warning,) = [line for line in lost.stderr.splitlines() if "blob" in line]
    assert str(path) in warning and "sha256:" in warning and "not found" in warning
