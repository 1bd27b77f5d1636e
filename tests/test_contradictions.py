"""The contradiction checker of eval-compaction
(pi_session.compaction.contradictions): Done vs a later failure, Blocked vs a
later pass, "(none)" where the zone has something; silent on pi's real
sessions and the demo, and run by eval-compaction without any flag."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, ROOT
from shared_paths import shared_missing
from fake_providers import fake_provider  # noqa: F401  (fixture)
from pi_session.compaction.contradictions import find_contradictions
from test_probes import assistant, call, result, user, write_planted


def bash(cid, command, output, error=False):
    return [assistant(call(cid, "bash", command=command), stop="toolUse"), result(cid, "bash", output, error)]


ZONE_PASS_THEN_FAIL = [
    user("make the tax tests pass"),
    *bash("b1", "pytest tests/test_tax.py -q", "3 passed"),
    assistant("Now the rounding."),
    *bash("b2", "pytest tests/test_tax.py -q", "FAILED tests/test_tax.py::test_round - AssertionError", True),
]


def test_done_for_work_that_failed_later():
    summary = "## Progress\n### Done\n- [x] Ran `pytest tests/test_tax.py -q`\n\n### Blocked\n- (none)"
    found = find_contradictions(summary, ZONE_PASS_THEN_FAIL)
    assert [c.kind for c in found] == ["done_failed_later", "empty_but_found"]
    assert found[0].evidence.startswith("bash `pytest tests/test_tax.py -q` failed: FAILED")
    assert found[1].section == "blocked"
    # the failure resolved in the kept messages: nothing is contradicted
    kept = bash("b3", "pytest tests/test_tax.py -q", "4 passed")
    assert find_contradictions(summary, ZONE_PASS_THEN_FAIL, kept) == []


def test_done_claiming_tests_pass_while_they_fail():
    summary = "### Done\n- [x] tax tests pass now\n\n### Blocked\n- bash `pytest tests/test_tax.py -q` failed: FAILED"
    assert [c.kind for c in find_contradictions(summary, ZONE_PASS_THEN_FAIL)] == ["done_failed_later"]


def test_blocked_for_what_passed_later():
    zone = [
        user("fix the build"),
        *bash("b1", "npm run build", "Error: Cannot find module 'left-pad'", True),
        assistant("Installing it."),
    ]
    kept = bash("b2", "npm run build", "built in 2s")
    summary = "### Blocked\n- bash `npm run build` failed: Error: Cannot find module 'left-pad'"
    assert find_contradictions(summary, zone) == []  # in the zone alone it is still failing
    found = find_contradictions(summary, zone, kept)
    assert [c.kind for c in found] == ["blocked_passed_later"] and "npm run build" in found[0].evidence


def test_none_where_there_is_something():
    zone = [
        user("Never touch the public API. Port the parser to the new tokenizer."),
        assistant("I'll use the streaming tokenizer instead of the regex one.", call("e1", "edit", path="src/parse.py", oldText="a", newText="b"), stop="toolUse"),
        result("e1", "edit", "ok"),
        assistant("Next:\n1. Run the parser tests\n2. Update docs/parser.md"),
    ]
    summary = (
        "## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n- (none found)\n\n"
        "## Key Decisions\n- (none found)\n\n## Next Steps\n- (none found)"
    )
    found = find_contradictions(summary, zone)
    assert sorted(c.section for c in found) == ["constraints", "decisions", "done", "next"]
    assert all(c.kind == "empty_but_found" for c in found)
    honest = (
        "## Constraints & Preferences\n- Never touch the public API.\n\n## Progress\n### Done\n- [x] Edited `src/parse.py`\n\n"
        "## Key Decisions\n- I'll use the streaming tokenizer instead of the regex one.\n\n## Next Steps\n1. Run the parser tests"
    )
    assert find_contradictions(honest, zone) == []


@pytest.mark.parametrize(
    "name,keep",
    [("large-session.jsonl", None), ("before-compaction.jsonl", None), ("large-session.jsonl", "8000"),
     ("before-compaction.jsonl", "8000"), ("demo", "4000"), ("demo", "1000")],
)
def test_no_contradiction_on_the_shared_sessions(cli, name, keep):
    src = ROOT / "examples" / "demo-session.jsonl" if name == "demo" else FIXTURES / name
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    args = ["eval-compaction", str(src)] + (["--keep-recent-tokens", keep] if keep else [])
    res = cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["contradictions"] == []
    text = cli(*args)
    assert "Contradictions: none" in text.stdout


def test_eval_flags_a_model_summary_that_contradicts_the_history(tmp_path, fake_provider, monkeypatch):  # noqa: F811
    from typer.testing import CliRunner

    from pi_session.cli.app import app

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    f = write_planted(tmp_path)  # npm run build fails and is never fixed
    fake_provider.reply_text = (
        "## Goal\n- Update handlers\n\n## Constraints & Preferences\n- (none)\n\n## Progress\n### Done\n"
        "- [x] Ran `npm run build`\n\n### In Progress\n- (none)\n\n### Blocked\n- (none)\n"
    )
    args = ["eval-compaction", str(f), "--keep-recent-tokens", "1500", "--provider", "openai", "--model", "test-model",
            "--base-url", fake_provider.openai_base_url, "--max-retries", "0", "--runs", "1", "--json"]
    res = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "sk-test"})
    assert res.exit_code == 0, res.output
    kinds = {(c["kind"], c["section"]) for c in json.loads(res.stdout)["contradictions"]}
    # (Blocked "(none)" is not flagged here: the kept messages still show the failure)
    assert ("done_failed_later", "done") in kinds and ("empty_but_found", "constraints") in kinds
