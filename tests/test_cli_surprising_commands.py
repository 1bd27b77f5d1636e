"""Commands that did something surprising (issue 27, items 5-8), through the
real ``pi-session`` console script: a move to where the leaf already is,
a summary of a branch that holds nothing, a ``compact`` refusal that names
its numbers, and edits or clones that bring back what was hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import oracle_available, run_oracle
from pi_session import SessionManager
from pi_session.session.tokens import estimate_tokens

HEADER = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0027", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/proj"}
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def user(text: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(content: list[dict[str, Any]], ts: int) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": "openai-completions", "provider": "p", "model": "m",
            "usage": USAGE, "stopReason": "toolUse" if any(c["type"] == "toolCall" for c in content) else "stop", "timestamp": ts}


def text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def write_session(path: Path, messages: list[dict[str, Any]]) -> list[str]:
    """A linear session; entry ids 00000001, 00000002, ...; returns them."""
    lines = [json.dumps(HEADER)]
    parent = None
    ids = []
    for i, message in enumerate(messages):
        eid = f"{i + 1:08x}"
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                 "timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "message": message}))
        parent = eid
        ids.append(eid)
    path.write_text("\n".join(lines) + "\n")
    return ids


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def four(tmp_path):
    """u1 - a1 - u2 - a2 (the leaf)."""
    path = tmp_path / "s.jsonl"
    ids = write_session(path, [user("fix the bug", 0), assistant(text("I looked at it."), 1),
                               user("now run the tests", 2), assistant(text("Tests pass."), 3)])
    return path, ids


# ---------------------------------------------------------------------------
# item 5: a move to where the leaf already is


def test_navigating_twice_to_the_same_entry_writes_one_record(cli, four):
    path, (u1, a1, u2, a2) = four
    first = cli("navigate", str(path), a1)
    assert first.returncode == 0, first.stderr
    after_first = path.read_bytes()
    marker = records(path)[-1]
    assert marker["type"] == "branch_summary" and marker["summary"] == "" and marker["parentId"] == a1
    second = cli("navigate", str(path), a1)
    assert second.returncode == 0, second.stderr
    assert path.read_bytes() == after_first  # nothing appended
    assert "Already at" in second.stdout and "nothing written" in second.stdout
    assert second.stderr == ""
    # --json and --summarize say the same and write nothing either
    res = cli("navigate", str(path), a1, "--summarize", "--provider", "extractive", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["summaryEntry"] is None and out["newLeafId"] == out["oldLeafId"] == marker["id"]
    assert path.read_bytes() == after_first
    # a user message whose parent is the position: the text is handed back, nothing written
    res = cli("navigate", str(path), u2)
    assert res.returncode == 0 and "Already at" in res.stdout and "now run the tests" in res.stdout
    assert path.read_bytes() == after_first
    # a real move still records itself
    count = len(records(path))
    assert cli("navigate", str(path), a2).returncode == 0
    assert len(records(path)) == count + 1 and records(path)[-1]["parentId"] == a2


@pytest.mark.oracle
def test_a_repeated_move_ends_where_pi_ends(cli, four):
    """pi 1.6's ``navigateTree`` without a summary only calls
    ``SessionManager.branch`` (no write), and a second move to the leaf is
    its no-op: replayed with the oracle's scripted operations on the same
    entries, pi writes nothing and its context is the one pi reads from our
    file after two moves, which hold a single empty record."""
    if not oracle_available():
        pytest.skip("pi-oracle (node + npm) not available")
    path, (u1, a1, u2, a2) = four
    start = records(path)
    spec = {"cwd": "/proj", "persist": False, "entries": start,
            "ops": [["branch", a1], ["getLeafId"], ["getEntryCount"]]}
    spec_path = path.parent / "ops.json"
    spec_path.write_text(json.dumps(spec))
    pi = json.loads(run_oracle("ops", str(spec_path)))
    assert pi["results"][1:] == [a1, 4]  # pi: the leaf is a1, no entry written
    assert cli("navigate", str(path), a1).returncode == 0
    assert cli("navigate", str(path), a1).returncode == 0
    assert [r["type"] for r in records(path)[len(start):]] == ["branch_summary"]
    ours = json.loads(run_oracle("context", str(path)))
    assert ours["messages"] == pi["context"]["messages"]


# ---------------------------------------------------------------------------
# item 6: a branch with nothing to summarize


def test_summarizing_a_branch_of_only_an_empty_record_stores_nothing(cli, four):
    path, (u1, a1, u2, a2) = four
    assert cli("navigate", str(path), a1).returncode == 0  # leaf: an empty record below a1
    marker = records(path)[-1]
    res = cli("navigate", str(path), a2, "--summarize", "--provider", "extractive")
    assert res.returncode == 0, res.stderr
    assert "Nothing to summarize" in res.stdout and "no summary is stored" in res.stdout
    assert "(none found)" not in res.stdout
    written = records(path)[-1]
    assert written["type"] == "branch_summary" and written["parentId"] == a2 and written["fromId"] == marker["id"]
    assert written["summary"] == "" and "details" not in written
    # --json: no summary entry, nothing summarized
    assert cli("navigate", str(path), a1).returncode == 0
    res = cli("navigate", str(path), a2, "--summarize", "--provider", "extractive", "--json")
    out = json.loads(res.stdout)
    assert out["summaryEntry"] is None and out["summarizedEntryIds"] == []
    assert records(path)[-1]["summary"] == ""


@pytest.mark.oracle
def test_pi_prepares_only_an_empty_summary_message_for_such_a_branch(cli, four):
    """What pi 1.6's branch-summary preparation makes of a branch holding
    only an empty record: one ``branchSummary`` message with no text and 0
    tokens, nothing a summary could say (pi itself never writes an empty
    record, so it never meets this branch)."""
    if not oracle_available():
        pytest.skip("pi-oracle (node + npm) not available")
    path, (u1, a1, u2, a2) = four
    assert cli("navigate", str(path), a1).returncode == 0
    prep = json.loads(run_oracle("branch-summary-prep", str(path), "--to", a2))
    assert prep["entryIds"] == [records(path)[-1]["id"]]
    assert [(m["role"], m["summary"]) for m in prep["messages"]] == [("branchSummary", "")]
    assert prep["totalTokens"] == 0


# ---------------------------------------------------------------------------
# item 7: "Nothing to compact" names both estimates and the setting's source

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl"


def test_nothing_to_compact_names_both_estimates_and_where_the_budget_comes_from(cli, tmp_path):
    session = tmp_path / "demo.jsonl"
    session.write_bytes(DEMO.read_bytes())
    tokens = json.loads(cli("tokens", str(session), "--json").stdout)
    context = tokens["projected"]["tokens"]
    messages = SessionManager.open(session, read_only=True).build_session_context()["messages"]
    kept = sum(estimate_tokens(m) for m in messages)  # no compaction: the cut counts every message in context
    assert kept < 20000 < context  # what made the old line look wrong
    res = cli("compact", str(session), "--dry-run")
    assert res.returncode == 0, res.stderr
    line = res.stdout.strip()
    assert line.count("\n") == 0 and line.startswith("Nothing to compact")
    assert f"~{kept:,} tokens" in line and f"{context:,} context tokens" in line
    assert "20,000 tokens (the default; set --keep-recent-tokens or compaction.keepRecentTokens in settings.json)" in line
    # the flag
    line = cli("compact", str(session), "--dry-run", "--keep-recent-tokens", "30000").stdout
    assert "30,000 tokens (--keep-recent-tokens)" in line
    # a settings file
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 25000}}))
    line = cli("compact", str(session), "--dry-run").stdout
    assert f"25,000 tokens (compaction.keepRecentTokens in {agent / 'settings.json'})" in line
    # a budget the messages reach, where the cut still finds nothing before the first kept message
    line = cli("compact", str(session), "--dry-run", "--keep-recent-tokens", str(kept)).stdout
    assert f"~{kept:,} tokens, reaching the kept-recent budget of {kept:,} tokens" in line
    assert "nothing would be summarized" in line
    # the JSON shape stays pi's: null
    assert json.loads(cli("compact", str(session), "--dry-run", "--json").stdout) is None


# ---------------------------------------------------------------------------
# item 8: edits and clones that leave a call unanswered or bring hidden text back


@pytest.fixture
def tool_session(tmp_path):
    """u1 - a1 (read call_1) - t1 (its result, a secret) - a2 (the leaf)."""
    path = tmp_path / "tool.jsonl"
    ids = write_session(path, [
        user("read the config", 0),
        assistant([{"type": "text", "text": "Reading."},
                   {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": ".env"}}], 1),
        {"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
         "content": [{"type": "text", "text": "API_KEY=sk-secret"}], "isError": False, "timestamp": 2},
        assistant(text("Done."), 3),
    ])
    return path, ids


def test_omitting_a_tool_result_warns_that_its_call_is_left_unanswered(cli, tool_session):
    path, (u1, a1, t1, a2) = tool_session
    res = cli("edit", str(path), t1, "--omit")
    assert res.returncode == 0, res.stderr
    assert "omitted from the model context" in res.stdout
    warning = res.stderr.strip()
    assert warning.count("\n") == 0 and warning.startswith("warning: tool call call_1 (read) now has no result")
    assert "--replace" in warning
    # replacing the result instead keeps the pair: no warning
    other = path.parent / "other.jsonl"
    write_session(other, [r["message"] for r in records(path)[1:5]])
    res = cli("edit", str(other), t1, "--replace", "[redacted]")
    assert res.returncode == 0 and res.stderr == ""
    # omitting the call leaves its result without a call: said too
    res = cli("edit", str(other), a1, "--omit")
    assert res.returncode == 0 and "1 tool result (call_1) now has no call" in res.stderr


def test_cloning_up_to_before_a_redaction_warns_that_the_text_comes_back(cli, tool_session):
    path, (u1, a1, t1, a2) = tool_session
    res = cli("edit", str(path), t1, "--replace", "[redacted]")
    assert res.returncode == 0, res.stderr
    edit_id = records(path)[-1]["id"]
    res = cli("clone", str(path), "--leaf", a2)  # a2 comes before the edit entry
    assert res.returncode == 0, res.stderr
    warning = res.stderr.strip()
    assert warning.count("\n") == 0 and f"leaves out 1 context edit ({edit_id}) that replaced 1 entry it keeps ({t1})" in warning
    assert "original content again" in warning
    clone = Path(res.stdout.split(" to ", 1)[1].strip())
    assert "sk-secret" in json.dumps(SessionManager.open(clone, read_only=True).build_session_context()["messages"])
    # the whole branch (with the edit) or a point before the target: no warning
    res = cli("clone", str(path))
    assert res.returncode == 0 and res.stderr == ""
    res = cli("clone", str(path), "--leaf", a1)
    assert res.returncode == 0 and res.stderr == ""


def test_ls_of_a_folder_holding_session_files_directly_says_how_to_open_them(cli, tmp_path):
    """A folder of loose session files is read by ``search`` and ``usage``
    but is no store of project directories: ``ls`` says so and names the
    commands that open them, instead of a bare "No sessions"."""
    folder = tmp_path / "loose"
    folder.mkdir()
    write_session(folder / "demo.jsonl", [user("hello there", 1)])
    listed = cli("--store", str(folder), "ls", "--all")
    assert listed.returncode == 0, listed.stderr
    assert "holds 1 session file directly" in listed.stdout
    assert f"pi-session info {folder / 'demo.jsonl'}" in listed.stdout.replace("\n", "")
    opened = cli("info", str(folder / "demo.jsonl"), "--json")
    assert opened.returncode == 0, opened.stderr


def test_context_marks_signed_thinking_without_text_and_small_argument_errors(cli, tmp_path):
    """Signed thinking with no text (a provider that hides it) is
    "(redacted thinking)" on a line of its own, not "(thinking) " glued to
    the reply; ``secrets`` without SESSION or --all, and ``clone --leaf ''``,
    say what is missing."""
    path = tmp_path / "s.jsonl"
    write_session(path, [
        user("why?", 1),
        assistant([{"type": "thinking", "thinking": "", "thinkingSignature": "sig"}, {"type": "text", "text": "Because."}], 2),
    ])
    shown = cli("context", str(path))
    assert shown.returncode == 0, shown.stderr
    assert "(redacted thinking)\nBecause." in shown.stdout and "(thinking) " not in shown.stdout
    neither = cli("secrets")
    assert neither.returncode == 2 and "give a SESSION, or --all" in neither.stderr
    empty = cli("clone", str(path), "--leaf", "")
    assert empty.returncode == 2 and "--leaf: give an entry id" in empty.stderr
