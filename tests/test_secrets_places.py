"""Every place a session keeps text is scanned and cleaned, and the state
is said: side files (torn and rejected lines, backups), values under
structural keys, reasoning kept in ``thinkingSignature``, records split
over two lines, what compaction and branch summaries send with
``redact_secrets=True``, the listing cache under a symlinked directory, a
cache that cannot be written, ``scrub --all`` past a session it cannot
change, hits already hidden by a context edit. Real files, the real
console script."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from secrets_corpus import field_records, write_session
from pi_session import SessionManager
from pi_session.compaction import prepare_branch_entries
from pi_session.operations import plan_compaction, scrub_session
from pi_session.secrets import find_secrets
from pi_session.session.settings import CompactionSettings

KEY = "sk-proj-" + "Qz8Lm3Vn7Bx2Kc9Wd4Rt6Yh1Jp5Fs0GaUe" + "_Tt-77"  # a fake OpenAI project key
KEY2 = "ghp_" + "Lm3Vn7Bx2Kc9Wd4Rt6Yh1Jp5Fs0GaUeQz8Xy12"  # a fake GitHub token
TS = "2026-11-30T12:00:00.000Z"
NAME = "2026-11-30T12-00-00-000Z_0b5f4e2a-0000-4000-8000-000000000000.jsonl"


def _grep(root: Path, *needles: str) -> list[str]:
    """The files under ``root`` holding any needle."""
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            data = p.read_bytes()
            if any(n.encode() in data for n in needles):
                out.append(str(p))
    return out


def _clean_session(directory: Path, text: str = "nothing to hide") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return write_session(directory / NAME, field_records(text, 0)[:3])


def test_side_files_are_scanned_cleaned_and_named(tmp_path, cli):
    path = _clean_session(tmp_path / "s")
    torn = Path(f"{path}.torn-1234")
    torn.write_bytes(b'{"type":"message","id":"zz","message":{"role":"user","content":"use ' + KEY.encode())
    rejected = Path(f"{path}.rejected-1")
    rejected.write_bytes(b"garbage " + KEY2.encode() + b"\n")
    backup = Path(f"{path}.v1.bak")
    write_session(backup, field_records("old text with " + KEY, 0)[:3])
    clean_backup = Path(f"{path}.repair.bak")
    write_session(clean_backup, field_records("nothing here", 0)[:3])
    found = cli("secrets", str(path), "--json")
    assert found.returncode == 1, found.stderr
    assert {h["session"] for h in json.loads(found.stdout)} == {str(torn), str(rejected), str(backup)}
    scrubbed = cli("scrub", str(path), "--mode", "rewrite")
    assert scrubbed.returncode == 0, scrubbed.stderr
    for side in (torn, rejected, backup):
        assert f"{side}: redacted" in scrubbed.stdout
    assert str(clean_backup) not in scrubbed.stdout + scrubbed.stderr
    assert _grep(tmp_path / "s", KEY, KEY2) == []
    assert rejected.read_text() == "garbage [REDACTED:github-token]\n"
    assert cli("secrets", str(path)).returncode == 0


def test_no_warning_about_backups_of_sessions_without_secrets(tmp_path, cli):
    sessions = tmp_path / "agent" / "sessions" / "--tmp--"
    path = _clean_session(sessions)
    write_session(Path(f"{path}.v1.bak"), field_records("nothing here either", 0)[:3])
    out = cli("scrub", "--all", "--mode", "rewrite")
    assert out.returncode == 0 and ".v1.bak" not in out.stdout + out.stderr


def test_values_under_structural_keys_are_scanned_unless_plain_ids():
    records = field_records("plain", 0)
    call = records[4]["message"]["content"][0]
    call["arguments"] = {"provider": {"token": KEY}, "model": "gpt-5", "id": "a04dca96edd22ac8c"}
    records[9]["data"] = {"api": {"type": {"key": "x", "notes": f"export GITHUB_TOKEN={KEY2}"}}, "signature": "opaque-no-blanks"}
    hits = find_secrets(records)
    assert {(h.entry_id, h.field, h.kind) for h in hits} == {
        ("c0", "message.content[0].arguments.provider.token", "openai-api-key"),
        ("d0", "data.api.type.notes", "github-token"),
    }


def test_a_secret_under_a_structural_name_or_in_a_signature_is_found_by_the_cli(tmp_path, cli):
    """Keys named like structural fields (``provider``, ``model``, ``id``,
    ``signature``) are structural only where the entry model declares them;
    nested in tool arguments, ``details`` or ``data`` their plain strings
    are text, and so is a signature that holds a token, not JSON."""
    records = field_records("plain", 0)
    records[3]["message"]["content"][0]["thinkingSignature"] = KEY
    records[4]["message"]["content"][0]["arguments"] = {"provider": KEY2, "model": {"signature": KEY}}
    records[5]["message"]["details"] = {"id": KEY2}
    records[9]["data"] = {"signature": KEY2, "thinkingSignature": KEY}
    path = write_session(tmp_path / "s.jsonl", records)
    found = cli("secrets", str(path), "--json")
    assert found.returncode == 1, found.stderr
    assert {(h["entryId"], h["field"], h["fieldKind"]) for h in json.loads(found.stdout)} == {
        ("k0", "message.content[0].thinkingSignature", "thinking"),
        ("c0", "message.content[0].arguments.provider", "tool-call arguments"),
        ("c0", "message.content[0].arguments.model.signature", "tool-call arguments"),
        ("r0", "message.details.id", "tool result"),
        ("d0", "data.signature", "custom data"),
        ("d0", "data.thinkingSignature", "custom data"),
    }
    assert cli("scrub", str(path), "--mode", "rewrite").returncode == 0
    assert KEY not in path.read_text() and KEY2 not in path.read_text()
    assert cli("secrets", str(path)).returncode == 0


def test_plain_ids_and_names_in_declared_fields_are_not_scanned():
    """A token-shaped plain string in a declared structural field (an
    entry's id, a message's model, a tool call's id) is no text; the same
    string in a declared text field is."""
    records = field_records("plain", 0)
    records[2]["message"]["model"] = KEY
    records[4]["message"]["content"][0]["id"] = KEY2
    records[7]["firstKeptEntryId"] = KEY
    assert find_secrets(records) == []
    records[7]["summary"] = KEY
    assert [(h.entry_id, h.field) for h in find_secrets(records)] == [("p0", "summary")]


def _codex_reasoning(text: str) -> dict:
    item = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": text}], "encrypted_content": "gAAAAB" + "x" * 40}
    return {"type": "thinking", "thinking": "plain thoughts", "thinkingSignature": json.dumps(item)}


def test_reasoning_kept_in_the_thinking_signature_is_scanned_and_scrubbed(tmp_path, cli):
    records = field_records("plain", 0)[:4]
    records[3]["message"]["content"] = [_codex_reasoning(f"I will call the API with {KEY} now")]
    path = write_session(tmp_path / "s.jsonl", records)
    [hit] = find_secrets(path)
    assert (hit.field, hit.field_kind, hit.value) == ("message.content[0].thinkingSignature.summary[0].text", "thinking", KEY)
    masked = SessionManager.open(path, redact_secrets=True)
    assert KEY not in json.dumps(masked.build_session_context()["messages"])
    page = tmp_path / "p.html"
    assert cli("export", str(path), "--redact", "-o", str(page)).returncode == 0
    assert KEY not in page.read_text()
    assert cli("scrub", str(path), "--mode", "rewrite").returncode == 0
    assert KEY not in path.read_text()
    block = json.loads(path.read_text().splitlines()[3])["message"]["content"][0]
    item = json.loads(block["thinkingSignature"])  # still the reasoning item, its text masked
    assert item["summary"][0]["text"] == "I will call the API with [REDACTED:openai-api-key] now" and item["encrypted_content"].startswith("gAAAAB")


def test_a_record_split_over_two_lines_is_scanned_decoded(tmp_path, cli):
    escaped = KEY.replace("-", "\\u002d")  # JSON escapes hide the key from a scan of raw lines
    head = json.dumps(field_records("x", 0)[0])
    record = ('{"type":"message","id":"u1","parentId":null,"timestamp":"' + TS + '","message":{"role":"user",'
              '"content":"first line\nthe key ' + escaped + ' end","timestamp":1}}')
    path = tmp_path / "split.jsonl"
    path.write_text(head + "\n" + record + "\n")
    [hit] = find_secrets(path)
    assert (hit.line, hit.entry_id, hit.value) == (2, "u1", KEY)
    assert cli("secrets", str(path)).returncode == 1
    assert cli("export", str(path), "-o", str(tmp_path / "p.html")).returncode != 0  # the page would hold it
    result = cli("scrub", str(path), "--mode", "rewrite")
    assert result.returncode == 0, result.stderr
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["message"]["content"] == "first line\nthe key [REDACTED:openai-api-key] end"
    assert cli("secrets", str(path)).returncode == 0


def _long_session(path: Path) -> Path:
    records = [field_records("x", 0)[0]]
    parent = None
    for n in range(12):
        text = (f"secret here {KEY} " if n in (0, 1) else f"message {n} ") + "words " * 400
        uid, aid = f"u{n}", f"a{n}"
        records.append({"type": "message", "id": uid, "parentId": parent, "timestamp": TS,
                        "message": {"role": "user", "content": text, "timestamp": 1}})
        records.append({"type": "message", "id": aid, "parentId": uid, "timestamp": TS,
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok " * 300}], "api": "x", "provider": "p",
                                    "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                                    "stopReason": "stop", "timestamp": 2}})
        parent = aid
    return write_session(path, records)


def test_redact_secrets_masks_what_compaction_and_branch_summaries_summarize(tmp_path):
    path = _long_session(tmp_path / "long.jsonl")
    settings = CompactionSettings(keep_recent_tokens=2000)
    for redact in (False, True):
        manager = SessionManager.open(path, redact_secrets=redact)
        prep = manager.prepare_compaction(settings)
        plan = plan_compaction(manager, settings)
        branch = manager.plan_navigation("u0")  # the branch left: a0, u1 (with the key), ...
        assert [e["id"] for e in branch.entries_to_summarize][:2] == ["a0", "u1"]
        for summarized in (prep.messages_to_summarize, plan.preparation.messages_to_summarize,
                           prepare_branch_entries(branch.summarizable_entries).messages):
            text = json.dumps(summarized)
            assert (KEY in text) is not redact
            assert ("[REDACTED:openai-api-key]" in text) is redact


def test_the_listing_cache_of_a_symlinked_agent_directory_is_refreshed(tmp_path, cli):
    real = tmp_path / "real-agent"
    sessions = real / "sessions" / "--tmp--"
    path = _clean_session(sessions, f"first message {KEY}")
    link = tmp_path / "agent-link"
    link.symlink_to(real, target_is_directory=True)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PI_CODING_AGENT_DIR": str(link)}
    assert cli("ls", "--all", env=env).returncode == 0
    assert _grep(tmp_path / "cache", KEY)  # the first message is cached
    result = cli("scrub", str(link / "sessions" / "--tmp--" / path.name), "--mode", "rewrite", env=env)
    assert result.returncode == 0, result.stderr
    assert _grep(tmp_path / "cache", KEY) == []


def test_a_cache_that_cannot_be_written_is_a_warning(tmp_path, cli):
    sessions = tmp_path / "agent" / "sessions" / "--tmp--"
    path = _clean_session(sessions, f"first message {KEY}")
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    assert cli("ls", "--all", env=env).returncode == 0
    broken = cache / "pi-session" / "search" / "0123456789abcdef0123456789abcdef.sqlite3"
    broken.mkdir(parents=True)  # a search index that cannot be opened
    result = cli("scrub", str(path), "--mode", "rewrite", env=env)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert f"{broken}: could not be cleaned" in result.stderr and "redacted" in result.stdout
    assert KEY not in path.read_text() and _grep(cache, KEY) == []


def _run_limited(args: list[str], env: dict, max_file_bytes: int) -> subprocess.CompletedProcess:
    """The console script with no file it writes allowed past
    ``max_file_bytes`` (RLIMIT_FSIZE: a larger write fails with EFBIG)."""
    exe = Path(sys.executable).parent / "pi-session"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run([str(exe), *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200", **env},
                          preexec_fn=limit, timeout=600)


def test_scrub_all_goes_past_a_session_it_cannot_change(tmp_path):
    sessions = tmp_path / "agent" / "sessions" / "--tmp--"
    sessions.mkdir(parents=True)
    paths = []
    for n in range(3):
        name = f"2026-11-30T12-00-0{n}-000Z_0b5f4e2a-0000-4000-8000-00000000000{n}.jsonl"
        text = f"token {KEY} " + ("padding " * 40_000 if n == 1 else "")  # the middle one too big to write again
        paths.append(write_session(sessions / name, field_records(text, n)[:3]))
    middle = paths[1].read_bytes()
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    as_json = _run_limited(["scrub", "--all", "--mode", "rewrite", "--json"], env, 200_000)
    assert as_json.returncode == 1, as_json.stderr
    outcome = json.loads(as_json.stdout)
    assert [(r["session"], "error" in r) for r in outcome] == [(str(paths[0]), False), (str(paths[1]), True), (str(paths[2]), False)]
    assert [r.get("changedLines") for r in outcome] == [3, None, 3]
    assert str(paths[1]) in as_json.stderr and "not scrubbed" in as_json.stderr
    assert KEY not in paths[0].read_text() + paths[2].read_text() and paths[1].read_bytes() == middle
    text = _run_limited(["scrub", "--all", "--mode", "rewrite"], env, 200_000)
    assert text.returncode == 1
    assert f"{paths[0]}: no secrets" in text.stdout and f"{paths[2]}: no secrets" in text.stdout
    assert f"{paths[1]}: not scrubbed" in text.stderr and "1 session not scrubbed (their secrets stay)" in text.stderr


def test_secrets_marks_hits_hidden_by_a_context_edit(tmp_path, cli):
    path = write_session(tmp_path / "s.jsonl", field_records("plain", 0)[:3])
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["message"]["content"][0]["text"] = f"my key {KEY}"
    write_session(path, records)
    before = cli("secrets", str(path), "--json")
    assert before.returncode == 1 and [h["hidden"] for h in json.loads(before.stdout)] == [False]
    assert cli("scrub", str(path), "--mode", "edit").returncode == 0
    after = cli("secrets", str(path))
    assert after.returncode == 0, after.stdout + after.stderr
    assert "hidden from the model by a context edit" in after.stdout
    result = scrub_session(path, mode="edit")
    assert result.edits == [] and result.hits == []
