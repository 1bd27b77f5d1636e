"""CLI on pi 1.6 records: context (with --projection), tree, edit.

In-process through typer's CliRunner (the console script itself is covered
by the end-to-end tests); JSON outputs are compared with the 1.6 oracle's
committed answers (tests/goldens/projection)."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
from typer.testing import CliRunner

from conftest import GOLDENS
from pi_session.cli.app import app
from pi_session.core.jsonio import dumps_pretty, js_stringify

PROJECTION = GOLDENS / "projection"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _agent_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("COLUMNS", "200")


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def golden(name: str) -> dict:
    return json.loads(gzip.decompress((PROJECTION / f"{name}.golden.json.gz").read_bytes()))


def copy(tmp_path, name: str):
    dst = tmp_path / f"{name}.jsonl"
    shutil.copy(PROJECTION / f"{name}.jsonl", dst)
    return dst


@pytest.mark.parametrize("name", ["case-edits", "case-compaction", "case-omit_compaction", "gen16-003", "gen16-017"])
def test_context_json_equals_pi_16(tmp_path, name):
    path = copy(tmp_path, name)
    expected = golden(name)["<leaf>"]
    result = run("context", path, "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == dumps_pretty(expected["context"]["json"]) + "\n"  # the oracle's own layout
    result = run("context", path, "--projection", "--json")
    assert result.exit_code == 0, result.output
    assert js_stringify(json.loads(result.stdout)) == js_stringify(expected["projection"]["json"])


def test_context_marks_edits_and_omissions(tmp_path):
    path = copy(tmp_path, "case-omit_compaction")
    out = run("context", path).stdout
    assert "omitted: c1 (context edit e1)" in out
    assert "omitted: a1 (context edit e3)" in out
    assert "SUM" not in out
    out = run("context", copy(tmp_path, "case-edits")).stdout
    assert "user (edited by e4)" in out and "LAST" in out and "hello" not in out


def test_tree_shows_new_entry_types(tmp_path):
    out = run("tree", copy(tmp_path, "case-edits")).stdout
    assert "context_edit u1 replaced: LAST" in out
    assert "usage cache_warm p/m" in out
    assert "system extra; sections -tools, x; tools -read" in out
    out = run("tree", copy(tmp_path, "case-omit_compaction")).stdout
    assert "context_edit c1 omitted" in out


def _user_assistant_session(tmp_path):
    lines = [
        {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0001", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(tmp_path)},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "my key is sk-SECRET", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "noted"}], "api": "x", "provider": "p", "model": "m",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}, "stopReason": "stop", "timestamp": 2}},
        {"type": "message", "id": "s1", "parentId": "a1", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "system", "content": "extra", "timestamp": 3}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_edit_replace_and_omit(tmp_path):
    path = _user_assistant_session(tmp_path)
    result = run("edit", path, "u1", "--replace", "my key is [removed]")
    assert result.exit_code == 0, result.output
    assert "the original stays in the file" in result.stdout
    ctx = json.loads(run("context", path, "--json").stdout)
    assert ctx["messages"][0]["content"] == "my key is [removed]"
    assert "sk-SECRET" in path.read_text()  # append-only: the original stays
    result = run("edit", path, "a1", "--omit", "--json")
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)
    assert entry["type"] == "context_edit" and entry["targetId"] == "a1" and entry["replacement"] is None
    ctx = json.loads(run("context", path, "--json").stdout)
    assert [m["role"] for m in ctx["messages"]] == ["user", "system"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["u1"], "exactly one of"),
        (["u1", "--omit", "--replace", "x"], "exactly one of"),
        (["nope", "--omit"], "nope"),
        (["s1", "--omit"], "s1"),
    ],
)
def test_edit_refuses_bad_requests_without_touching_the_file(tmp_path, args, message):
    path = _user_assistant_session(tmp_path)
    before = path.read_bytes()
    result = run("edit", path, *args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert path.read_bytes() == before


@pytest.mark.oracle
def test_edited_file_reads_the_same_in_pi_16(tmp_path, oracle):
    path = _user_assistant_session(tmp_path)
    assert run("edit", path, "u1", "--replace", "[removed]").exit_code == 0
    assert run("edit", path, "a1", "--replace", "ok").exit_code == 0
    ours = json.loads(run("context", path, "--projection", "--json").stdout)
    theirs = json.loads(oracle("projection", str(path)))
    assert js_stringify(ours) == js_stringify(theirs)


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_export_shows_edits_and_hides_omitted_content(tmp_path, fmt):
    path = copy(tmp_path, "case-edits")
    out = tmp_path / f"x.{fmt}"
    assert run("export", path, "--format", fmt, "-o", out).exit_code == 0
    text = out.read_text()
    assert "LAST" in text and "edited by context edit e4" in text
    assert "hello" not in text  # replaced content is shown as the model sees it
    path = copy(tmp_path, "case-omit_compaction")
    assert run("export", path, "--format", fmt, "-o", out, "--force").exit_code == 0
    text = out.read_text()
    assert "omitted from the model context by context edit e3" in text
    assert "SUM" not in text  # the omitted compaction's summary stays out


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_export_hides_text_an_edit_on_another_branch_hides(tmp_path, fmt):
    """An entry on the exported path that a context edit on *another*
    branch omits: the model on this path still sees it, but an export is
    made to be shared, so neither format writes the text (as the viewer)."""
    from pi_session import SessionManager

    m = SessionManager.create("/p", session_dir=tmp_path / "s")
    u1 = m.append_message({"role": "user", "content": "my key is TOPSECRET", "timestamp": 1})
    m.append_message({"role": "assistant", "content": [{"type": "text", "text": "noted"}], "stopReason": "stop", "timestamp": 2})
    m.append_context_edit(u1, None)  # this branch hides the key ...
    a1 = m.get_entries()[1]["id"]
    m.branch(a1)  # ... the other branch (the leaf's) does not
    m.append_message({"role": "user", "content": "go on", "timestamp": 3})
    path = m.get_session_file()
    assert "TOPSECRET" in json.dumps(SessionManager.open(path, read_only=True).build_session_context()["messages"])
    out = tmp_path / f"x.{fmt}"
    assert run("export", path, "--format", fmt, "-o", out).exit_code == 0
    text = out.read_text()
    assert "TOPSECRET" not in text and "go on" in text
    assert "omitted from the model context by context edit" in text


def test_check_warns_about_unknown_types_and_broken_edits(tmp_path):
    path = tmp_path / "s.jsonl"
    head = '{"type":"session","version":3,"id":"0192aaaa-bbbb-7ccc-8ddd-eeeeffff0000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
    body = [
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}',
        '{"type":"context_edit","id":"e1","parentId":"u1","timestamp":"2026-01-01T00:00:00.000Z","targetId":"u1"}',
        '{"type":"future_thing","id":"f1","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z"}',
        '{"type":"message","id":"s1","parentId":"f1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":"x","timestamp":1}}',
        '{"type":"usage","id":"g1","parentId":"s1","timestamp":"2026-01-01T00:00:00.000Z","kind":"cache_warm","provider":"p","model":"m","usage":{"input":1}}',
        '{"type":"context_edit","id":"e2","parentId":"g1","timestamp":"2026-01-01T00:00:00.000Z","targetId":"u1","replacement":null}',
    ]
    path.write_text(head + "\n".join(body) + "\n")
    before = path.read_bytes()
    result = run("check", path, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    kinds = {(p["line"], p["kind"]) for p in report["problems"]}
    assert kinds == {(3, "bad-context-edit")}, report  # system, usage and a null edit are fine
    # an entry type from a newer pi is read without harm: a warning, not a problem
    assert {(w["line"], w["kind"]) for w in report["warnings"]} == {(4, "unknown-type")}
    assert path.read_bytes() == before
    ctx = json.loads(run("context", path, "--json").stdout)
    assert [m["role"] for m in ctx["messages"]] == ["system"]  # e2 omits u1; e1 is ignored, not fatal


@pytest.mark.parametrize("name", ["case-edits", "case-nested", "gen16-005", "gen16-021"])
def test_tree_json_equals_pi_16(tmp_path, name):
    result = run("tree", copy(tmp_path, name), "--json", "--nested")
    assert result.exit_code == 0, result.output
    assert result.stdout == dumps_pretty(golden(name)["<file>"]["tree"]["json"]) + "\n"


def test_check_accepts_keep_nothing_compactions_and_flags_idle_edits(tmp_path):
    head = '{"type":"session","version":3,"id":"0192aaaa-bbbb-7ccc-8ddd-eeeeffff0000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
    t = '"timestamp":"2026-01-01T00:00:00.000Z"'
    body = [
        '{"type":"message","id":"u1","parentId":null,%s,"message":{"role":"user","content":"x","timestamp":1}}' % t,
        '{"type":"compaction","id":"c1","parentId":"u1",%s,"summary":"S","firstKeptEntryId":"c1","tokensBefore":5}' % t,
        '{"type":"context_edit","id":"e1","parentId":"c1",%s,"targetId":"e1","replacement":null}' % t,
        '{"type":"context_edit","id":"e2","parentId":"e1",%s,"targetId":"gone","replacement":null}' % t,
        '{"type":"context_edit","id":"e3","parentId":"e2",%s,"targetId":"c1","replacement":{"content":"x"}}' % t,
        '{"type":"context_edit","id":"e4","parentId":"e3",%s,"targetId":"u1","replacement":{"content":[1,2]}}' % t,
    ]
    path = tmp_path / "s.jsonl"
    path.write_text(head + "\n".join(body) + "\n")
    report = json.loads(run("check", path, "--json").stdout)
    assert [(p["line"], p["kind"]) for p in report["problems"]] == [(7, "bad-context-edit")]  # keep-nothing is fine (pi 1.6)
    assert [(w["line"], w["kind"]) for w in report["warnings"]] == [(4, "idle-context-edit"), (5, "idle-context-edit"), (6, "idle-context-edit")]


def test_check_on_an_empty_file_says_so_and_fails(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"")
    result = run("check", path)
    assert result.exit_code == 1 and "empty file" in result.output
    assert path.read_bytes() == b""


def test_edited_away_text_is_not_shown_by_tree_or_projection(tmp_path):
    path = _user_assistant_session(tmp_path)
    assert run("edit", path, "u1", "--replace", "my key is [removed]").exit_code == 0
    for args in (["tree"], ["context"], ["context", "--projection"], ["export", "--format", "md", "-o", "-"]):
        out = run(*args, path).stdout
        assert "sk-SECRET" not in out, args
    assert "edited by" in run("tree", path).stdout
    assert run("edit", path, "a1", "--omit").exit_code == 0
    assert "(omitted from the model's context by" in run("tree", path).stdout
