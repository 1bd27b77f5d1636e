"""One JSON encoder for every ``--json`` output.

Each command's ``--json`` runs on a session holding a lone surrogate
(``\\ud800``), an integer of 2**60 and nesting deeper than Python's recursion
limit. Every run exits 0 and prints strict UTF-8 that parses as JSON, with
JavaScript's rules: the lone surrogate as the escape ``\\ud800``, the big
integer as ``JSON.stringify`` writes it, the nesting kept.
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from test_compaction_providers_cli import EXE, Builder, cli_env
from pi_session.core import jsonio

DEPTH = 3000  # > sys.getrecursionlimit()
BIG = 2**60
BIG_JS = "1152921504606847000"  # JSON.stringify(JSON.parse("1152921504606846976"))


def _deep(leaf: Any) -> Any:
    for _ in range(DEPTH):
        leaf = [leaf]
    return leaf


def _depth(value: Any) -> int:
    n = 0
    while isinstance(value, list) and value:
        value, n = value[0], n + 1
    return n


def nasty_session(path: Path) -> tuple[Path, dict[str, str]]:
    b = Builder()
    first = b._entry(
        "message",
        message={"role": "user", "content": [{"type": "text", "text": "first \ud800 message"}], "timestamp": 1,
                 "big": BIG, "deep": _deep("bottom \ud800")},
    )
    b.assistant({"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a\ud800", "n": BIG, "deep": _deep(1)}},
                stop="toolUse")
    b.result("c1", "read", "half \ud800 emoji")
    b.say("answer \ud800")
    b._entry("label", targetId=first, label="tag \ud800")
    b._entry("session_info", name="name \ud800")
    second = b.user("second question \ud800 " + "with enough words to be kept. " * 4)
    b.say("second answer")
    return b.write(path), {"first": first, "second": second}


def run_json(tmp_path: Path, *args: Any) -> Any:
    proc = subprocess.run([str(EXE), *map(str, args)], capture_output=True, env=cli_env(tmp_path), timeout=120)
    assert proc.returncode == 0, (args, proc.stderr.decode("utf-8", "replace"))
    assert b"Traceback" not in proc.stderr
    text = proc.stdout.decode("utf-8")  # strict: raises on invalid UTF-8
    return text, jsonio.loads(text)  # stdlib json.loads stops at ~1000 levels


@pytest.fixture
def nasty(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return nasty_session(tmp_path / "s.jsonl")


def test_read_only_commands(tmp_path, nasty):
    f, ids = nasty
    before = f.read_bytes()

    text, ctx = run_json(tmp_path, "context", f, "--json")
    user = ctx["messages"][0]
    assert user["content"][0]["text"] == "first \ud800 message"
    assert "\\ud800" in text and BIG_JS in text
    assert _depth(user["deep"]) == DEPTH
    assert ctx["messages"][1]["content"][0]["arguments"]["n"] == int(BIG_JS)
    assert text == jsonio.dumps_pretty(ctx) + "\n"  # the one encoder, byte for byte

    text, plan = run_json(tmp_path, "compact", f, "--dry-run", "--json", "--keep-recent-tokens", 20)
    first = (plan["messagesToSummarize"] + plan["turnPrefixMessages"])[0]
    assert first["content"][0]["text"] == "first \ud800 message"
    assert _depth(first["deep"]) == DEPTH and BIG_JS in text

    _, info = run_json(tmp_path, "info", f, "--json")
    assert info["name"] == "name \ud800" and info["labels"] == {ids["first"]: "tag \ud800"}

    text, tree = run_json(tmp_path, "tree", f, "--json", "--nested")
    assert "\\ud800" in text and tree["roots"][0]["label"] == "tag \ud800"
    text, tree = run_json(tmp_path, "tree", f, "--json")
    assert "\\ud800" in text and tree["entries"][0]["label"] == "tag \ud800"

    _, tokens = run_json(tmp_path, "tokens", f, "--json")
    assert tokens["perEntry"][1]["tokens"] > 1000  # the deep arguments count

    _, report = run_json(tmp_path, "check", f, "--json")
    assert report["ok"] and len(report["warnings"]) == 7  # every line holding \\ud800

    assert f.read_bytes() == before


def test_writing_commands(tmp_path, nasty):
    f, ids = nasty
    # (a command line cannot carry a lone surrogate: the file already does)
    _, lab = run_json(tmp_path, "label", f, ids["second"], "new label \U0001f600", "--json")
    assert lab["label"] == "new label \U0001f600"
    _, info = run_json(tmp_path, "info", f, "--json")
    assert info["name"] == "name \ud800"
    project = tmp_path / "project"
    project.mkdir()
    _, forked = run_json(tmp_path, "fork", f, "--cwd", project, "--json")
    assert Path(forked["path"]).is_file()
    _, listed = run_json(tmp_path, "ls", "--cwd", project, "--json")
    assert [s["name"] for s in listed] == ["name \ud800"]
    assert listed[0]["firstMessage"].startswith("first \ud800 message")
    _, cloned = run_json(tmp_path, "clone", f, "--json")
    assert Path(cloned["path"]).is_file()
    run_json(tmp_path, "migrate", f, "--json")

    text, compacted = run_json(tmp_path, "compact", f, "--json", "--provider", "extractive", "--keep-recent-tokens", 20)
    assert compacted["summarizer"] == "extractive" and compacted["summary"]
    _, moved = run_json(tmp_path, "navigate", f, ids["first"], "--summarize", "--provider", "extractive", "--json")
    assert moved["targetId"] == ids["first"] and moved["editorText"] == "first \ud800 message"
    # the file still holds what it held, escapes included
    assert b"first \\ud800 message" in f.read_bytes() and str(BIG).encode() in f.read_bytes()


def test_system_prompt_json(tmp_path):
    (tmp_path / "AGENTS.md").write_text("rules \U0001f600\n")
    _, out = run_json(tmp_path, "system-prompt", "--cwd", tmp_path, "--json")
    assert "rules \U0001f600" in out["text"]


def test_write_pretty_is_dumps_pretty_for_awkward_values():
    values = [
        {"s": "a\ud800b", "k\udc00": [BIG, -BIG, 2**53, 10**21, 1.5, 1e-7], "pair": "\ud83d\ude00"},
        _deep({"x": "\ud800"}),
        {"10": 1, "2": 2, "a": 3},
    ]
    for value in values:
        out = io.StringIO()
        jsonio.write_pretty(value, out, chunk_chars=7)
        text = out.getvalue()
        text.encode("utf-8")
        assert text == jsonio.dumps_pretty(value) + "\n"
        assert jsonio.js_stringify(jsonio.loads(text)) == jsonio.js_stringify(value)  # (== on deep lists recurses)
    assert jsonio.dumps_pretty({"s": "a\ud800", "n": BIG}) == '{\n "s": "a\\ud800",\n "n": ' + BIG_JS + "\n}"
    assert jsonio.dumps_pretty("\ud83d\ude00") == '"\U0001f600"'


@pytest.mark.oracle
def test_same_bytes_as_pi(tmp_path, oracle):
    """``context --json`` and ``compact --dry-run --json`` print exactly what
    pi's JSON.stringify prints for the same awkward session (live oracle)."""
    f, _ = nasty_session(tmp_path / "s.jsonl")
    ours, _ = run_json(tmp_path, "context", f, "--json")
    assert ours == oracle("context", str(f))
    ours, _ = run_json(tmp_path, "compact", f, "--dry-run", "--json", "--keep-recent-tokens", 20)
    assert ours == oracle("prepare", str(f), "--keep", "20")
