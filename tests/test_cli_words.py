"""issue 27 item 3, end to end through the real console script: counted
nouns agree with their count, ``name SESSION`` without text prints the
name, and a read-only command on an old (v1) file does not repeat the
"migrated in memory only" warning that ``info``'s version row states."""

from __future__ import annotations

import json

from pi_session import SessionManager

HEADER = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0027", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
ONE = {"type": "message", "id": "00000001", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
       "message": {"role": "user", "content": "hello", "timestamp": 1}}


def one_entry_session(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(ONE) + "\n")
    return path


def test_one_entry_is_counted_in_the_singular(cli, tmp_path):
    path = one_entry_session(tmp_path)
    result = cli("check", str(path))
    assert result.returncode == 0, result.stderr
    assert "ok (1 entry, 2 lines)" in result.stdout, result.stdout


def test_one_message_summarized_is_counted_in_the_singular(cli, tmp_path):
    path = tmp_path / "two.jsonl"
    second = {**ONE, "id": "00000002", "parentId": "00000001", "message": {"role": "user", "content": "again please", "timestamp": 2}}
    path.write_text("".join(json.dumps(r) + "\n" for r in (HEADER, ONE, second)))
    result = cli("eval-compaction", str(path), "--provider", "extractive", "--keep-recent-tokens", "1")
    assert result.returncode == 0, result.stderr
    assert "Summarized 1 message, kept 1 message;" in result.stdout, result.stdout


def test_name_without_text_prints_the_current_name(cli, tmp_path):
    path = one_entry_session(tmp_path)
    before = path.read_bytes()
    unnamed = cli("name", str(path))
    assert unnamed.returncode == 0, unnamed.stderr
    assert unnamed.stdout.strip() == "no name (give TEXT to name the session)"
    assert json.loads(cli("name", str(path), "--json").stdout) == {"name": None}
    assert path.read_bytes() == before  # asking changes nothing
    assert cli("name", str(path), "Parser work").returncode == 0
    named = cli("name", str(path))
    assert named.returncode == 0 and named.stdout.strip() == "name: Parser work"
    assert json.loads(cli("name", str(path), "--json").stdout) == {"name": "Parser work"}
    assert cli("name", str(path), "").returncode == 0  # an empty text still clears it
    assert SessionManager.open(path, read_only=True).get_session_name() is None


def test_a_v1_file_is_called_migrated_in_memory_once(cli, fixture_copy):
    path = fixture_copy("large-session.jsonl")
    info = cli("info", str(path))
    assert info.returncode == 0, info.stderr
    assert "read as version 3" in info.stdout
    assert "migrated in memory only" not in info.stderr  # the version row says it
    for command in (["tree"], ["context"], ["tokens"]):
        result = cli(*command, str(path))
        assert result.returncode == 0, result.stderr
        assert "migrated in memory only" not in result.stderr, command
    leaf = json.loads(cli("info", str(path), "--json").stdout)["leafId"]
    labelled = cli("label", str(path), leaf, "here")
    assert labelled.returncode == 0, labelled.stderr
    assert labelled.stderr.count("migrated from version 1") == 1  # a write says what it did to the file


def test_compact_and_the_viewer_count_in_the_singular(cli, tmp_path):
    """``compact --dry-run`` ("1 message"), the viewer's tree summary
    ("1 branch") on a linear session."""
    path = tmp_path / "two.jsonl"
    second = {**ONE, "id": "00000002", "parentId": "00000001", "message": {"role": "user", "content": "again please", "timestamp": 2}}
    path.write_text("".join(json.dumps(r) + "\n" for r in (HEADER, ONE, second)))
    result = cli("compact", str(path), "--dry-run", "--keep-recent-tokens", "1")
    assert result.returncode == 0, result.stderr
    assert "1 messages" not in result.stdout and "1 message (~" in result.stdout, result.stdout
    page = tmp_path / "p.html"
    assert cli("export", str(path), "-o", str(page)).returncode == 0
    html = page.read_text()
    assert "Tree: 2 entries, 1 branch<" in html
    assert "1 branches" not in html
