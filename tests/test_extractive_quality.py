"""The offline summarizer claims nothing that did not happen and does not
contradict itself (issue 27, item 19), on small cases and on pi's real
sessions (../shared/fixtures/pi)."""

from __future__ import annotations

import asyncio
import re

import pytest

from conftest import FIXTURES
from shared_paths import shared_missing
from test_llm_extractive import assistant, call, result, section, summarize, user
from pi_session.compaction import compact, prepare_compaction
from pi_session.compaction.facts import analyze_history, error_line, is_constraint, is_decision
from pi_session.llm import ExtractiveSummarizer
from pi_session.manager import SessionManager
from pi_session.settings import CompactionSettings


def test_a_branch_summary_counts_tool_calls_as_done_work():
    """pi leaves tool results out of a branch summary's input: four edits
    and a test run are Done, not calls waiting for results."""
    msgs = [user("Fix the rounding in the tax module and add tests.")]
    for n, path in enumerate(["src/tax.py", "src/money.py", "tests/test_tax.py", "README.md"]):
        msgs.append(assistant(call(f"c{n}", "edit", path=path, oldText="a", newText="b"), stop="toolUse"))
    msgs += [assistant(call("t", "bash", command="pytest -q"), stop="toolUse"), assistant("All four tests pass.")]
    s = summarize("branch", messages=msgs)
    assert section(s, "### Done") == [
        "- [x] Edited `src/tax.py`", "- [x] Edited `src/money.py`", "- [x] Edited `tests/test_tax.py`",
        "- [x] Edited `README.md`", "- [x] Ran `pytest -q`",
    ]
    assert section(s, "### In Progress") == ["- (none found)"]
    # an answered request is not a next step
    assert section(s, "## Next Steps") == ["- (none found)"]


def test_a_warning_printed_around_the_output_is_never_the_error():
    out = ("Debugger attached.\nWaiting for the debugger to disconnect...\n"
           "cp: /opt/x/dark.json: No such file or directory\n\n\nCommand exited with code 1")
    assert error_line(out) == "cp: /opt/x/dark.json: No such file or directory"
    assert error_line("Debugger attached.\nWaiting for the debugger to disconnect...\n") == ""
    assert error_line("Debugger attached.\nbuild step two broke\nCommand exited with code 2") == "build step two broke"
    # a passing command that printed a debugger line is no failure at all
    msgs = [user("Build the package please."), assistant(call("b", "bash", command="npm run build"), stop="toolUse"),
            result("b", "bash", "Debugger attached.\n\n> pkg@1.0 build\n> tsc\n\nWaiting for the debugger to disconnect...\n"),
            assistant("Built.")]
    facts = analyze_history(msgs)
    assert facts.errors == [] and facts.commands == ["npm run build"]


def test_a_command_aborted_at_the_end_of_its_output_is_not_a_failure():
    msgs = [user("Run the tests."), assistant(call("t", "bash", command="npm test"), stop="toolUse"),
            result("t", "bash", "Debugger attached.\n\n> pkg test\n> node --test\n\nError in the js-debug bootloader\n\n\nCommand aborted", error=True)]
    assert analyze_history(msgs).errors == []


@pytest.mark.parametrize("sentence", [
    "Let me fix the test by passing a background function instead of RGB:",
    "Now let me update the `executeBash` method to queue instead of append when streaming:",
    "I'll switch to the new API instead of the old one:",
])
def test_narration_before_a_tool_call_is_not_a_decision(sentence):
    assert not is_decision(sentence)


@pytest.mark.parametrize("sentence", ["I'll use orjson instead of json for speed.", "We decided to keep the old API."])
def test_stated_choices_are_decisions(sentence):
    assert is_decision(sentence)


@pytest.mark.parametrize("sentence", [
    "in the system prompt make sure you know to read the README.md also when the user asks you to create a new theme",
    "setTheme should return an error that the caller can display however they want",
    "no conosle logs!",
    "omfg use rgb values in the themes, no rgb indices!",
    "avoid global state in the parser",
    "don't modify the theme",
    "Only touch files under src/.",
    "I prefer small commits.",
])
def test_imperatives_are_constraints(sentence):
    assert is_constraint(sentence)


@pytest.mark.parametrize("sentence", [
    "i don't think the component invalidate works correctly.",
    "propose where each of these files should go.",
    "ok, let me try the light theme real quick, then we should be good to go",
    "No worries!",
    "those event listeners should still be there, no?",
    "i think it should be toolTitle and toolOutput?",
])
def test_statements_and_questions_are_not_constraints(sentence):
    assert not is_constraint(sentence)


def test_a_pasted_terminal_screen_is_not_the_original_request():
    paste = "┌──────────────┐\n│ $ npm test   │\n│ 3 failing    │\n└──────────────┘"
    msgs = [user(paste), assistant("I see three failures."), user("Fix those three failing tests in the parser, keep the API."),
            assistant("Fixed.")]
    s = summarize(messages=msgs)
    assert section(s, "## Goal")[0] == "- Fix those three failing tests in the parser, keep the API."
    p = summarize("turn_prefix", messages=msgs[:3] + [assistant(call("r", "read", path="a.py"), stop="toolUse")])
    assert section(p, "## Original Request") == ["- Fix those three failing tests in the parser, keep the API."]


def test_next_steps_never_repeat_an_answered_request_or_done_work():
    msgs = [user("Edit src/app.py to add logging, then run the tests."),
            assistant(call("e", "edit", path="src/app.py", oldText="a", newText="b"), stop="toolUse"),
            result("e", "edit", "ok"), assistant("Logging is in. Should I also add it to src/cli.py?")]
    s = summarize(messages=msgs)
    assert section(s, "## Next Steps") == ["1. Waiting for the user's answer: Should I also add it to src/cli.py?"]
    msgs[-1] = assistant("Logging is in.\n\n1. Edit `src/app.py`\n2. Add logging to src/cli.py")
    steps = section(summarize(messages=msgs), "## Next Steps")
    assert steps == ["1. Add logging to src/cli.py"]  # the first step is Done already
    pending = msgs[:-1] + [assistant("Logging is in."), user("Now add a --verbose flag to the CLI parser.")]
    assert section(summarize(messages=pending), "## Next Steps") == ["1. Now add a --verbose flag to the CLI parser."]


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_real_sessions_summaries_do_not_contradict_themselves(name):
    src = FIXTURES / name
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    manager = SessionManager.open(src, read_only=True)
    path = manager.get_branch()
    prep = prepare_compaction(path, CompactionSettings(True, 16384, 4000))
    assert prep is not None
    res = asyncio.run(compact(prep, ExtractiveSummarizer()))
    text = res.summary
    body = text.split("<read-files>")[0].split("<modified-files>")[0]
    assert len(body) / 4 <= 2500
    assert "Debugger attached" not in body and "Waiting for the debugger" not in body
    decisions = section(text, "## Key Decisions")
    assert not [d for d in decisions if re.match(r"- (?:now )?let me\b", d, re.I)], decisions
    assert section(text, "### Done") != ["- (none found)"]
    latest = next((line for line in section(text, "## Critical Context") if line.startswith("- Latest request: ")), None)
    if latest is not None:  # answered: not restated as the next step
        assert latest.removeprefix("- Latest request: ") not in "\n".join(section(text, "## Next Steps"))
    # every imperative the user wrote that fits the bound is a constraint, without duplicates
    constraints = section(text, "## Constraints & Preferences")
    assert len(constraints) == len({c.lower() for c in constraints})


def test_large_session_constraints_hold_the_users_imperatives():
    src = FIXTURES / "large-session.jsonl"
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    path = SessionManager.open(src, read_only=True).get_branch()
    from pi_session.context import convert_to_llm

    prep = prepare_compaction(path, CompactionSettings(True, 16384, 4000))
    assert prep is not None
    found = analyze_history(convert_to_llm(prep.messages_to_summarize)).constraints
    for expected in ("invalid themes must NEVER explode", "no conosle logs!", "make sure toolText is also used.",
                     "setTheme should return an error"):
        assert any(expected in c for c in found), (expected, found)
