"""The offline summarizer claims nothing that did not happen and does not
contradict itself, on small cases and on pi's real
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
from pi_session.manager.session_manager import SessionManager
from pi_session.session.settings import CompactionSettings


def test_a_branch_summary_counts_tool_calls_as_done_work():
    """Pi leaves tool results out of a branch summary's input: four edits
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
    from pi_session.session.context import convert_to_llm

    prep = prepare_compaction(path, CompactionSettings(True, 16384, 4000))
    assert prep is not None
    found = analyze_history(convert_to_llm(prep.messages_to_summarize)).constraints
    for expected in ("invalid themes must NEVER explode", "no conosle logs!", "make sure toolText is also used.",
                     "setTheme should return an error"):
        assert any(expected in c for c in found), (expected, found)


# --- directories, pasted output and failures a later reply says pass --------
# Through the real console script, on the bundled demo (the steps `make demo`
# runs) and on synthetic sessions written with SessionManager.

import json  # noqa: E402
import shutil  # noqa: E402

from conftest import ROOT  # noqa: E402


def _compact_summary(cli, file, *extra):
    res = cli("compact", str(file), "--provider", "extractive", *extra)
    assert res.returncode == 0, res.stderr
    entries = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    entry = next(e for e in reversed(entries) if e.get("type") == "compaction")
    return entry["summary"], entry.get("details")


def _session(tmp_path, messages):
    sm = SessionManager.create("/work/project", tmp_path / "sessions")
    for n, msg in enumerate(messages):
        sm.append_message({**msg, "timestamp": 1764504000000 + n})
    return sm.get_session_file()


_BIG = " and keep the rest of the invoice pipeline as it is" * 40


def test_demo_summary_never_calls_passing_tests_blocked(cli, tmp_path):
    # the steps of `make demo`: the tax tests fail, the fix follows, the
    # reply says they pass; the summary must not also list them as blocked
    demo = tmp_path / "demo-session.jsonl"
    shutil.copy(ROOT / "examples" / "demo-session.jsonl", demo)
    summary, _details = _compact_summary(cli, demo, "--keep-recent-tokens", "4000")
    assert "its tests pass" in summary  # what the reply says is quoted ...
    assert section(summary, "### Blocked") == ["- (none)"]  # ... so nothing is blocked
    # the index may quote the test command that ran, never the failure it fixed
    sections = [line for line in summary.split("<read-files>")[0].splitlines() if not line.startswith("- Exact commands:")]
    assert "test_tax" not in "\n".join(sections)
    assert "Last error" not in summary
    context = cli("context", str(demo))
    assert context.returncode == 0 and "Blocked" in context.stdout


def test_a_later_reply_saying_it_passes_resolves_a_failed_run(cli, tmp_path):
    def run(reply):
        msgs = [
            user("The export rounds totals wrong; fix src/export.py and make its tests pass." + _BIG),
            assistant(call("t1", "bash", command="cd /work/project && pytest tests/test_export.py -q"), stop="toolUse"),
            result("t1", "bash", "FAILED tests/test_export.py::test_total - AssertionError: 10.004 != 10.0", error=True),
            assistant(call("e1", "edit", path="src/export.py", oldText="a", newText="b"), stop="toolUse"),
            result("e1", "edit", "Successfully replaced text in src/export.py."),
            assistant(reply),
            user("Good. Now document the rounding rule in the README." + _BIG),
            assistant("Sure, writing it up." + _BIG),
        ]
        summary, _ = _compact_summary(cli, _session(tmp_path / reply[:12].replace(" ", "_"), msgs), "--keep-recent-tokens", "300")
        return section(summary, "### Blocked")

    assert run("src/export.py rounds once now; its tests pass.") == ["- (none)"]
    assert run("Fixed: the export tests are green.") == ["- (none)"]
    # not a report that it passes: still blocked
    for reply in ("The export tests still fail on the total.", "The export tests should pass once the rate is fixed.",
                  "Edited src/export.py; tests/test_export.py is not passing yet."):
        blocked = run(reply)
        assert len(blocked) == 1 and "pytest tests/test_export.py -q" in blocked[0], (reply, blocked)


def test_a_pasted_traceback_is_not_a_goal(cli, tmp_path):
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/work/project/app/cli.py", line 41, in <module>\n'
        "    main()\n"
        '  File "/work/project/app/cli.py", line 37, in main\n'
        "    total = compute(items, rate)\n"
        "ValueError: invalid literal for int() with base 10: 'x'\n"
    )
    msgs = [
        user(traceback),
        assistant("The rate is parsed as an int; I'll parse it as a Decimal instead." + _BIG),
        user("Now add a --currency option to the export command so totals print in EUR or USD." + _BIG),
        assistant("Added the option." + _BIG),
        user("I get this when I run it:\n" + traceback),
        assistant("Fixed the parsing." + _BIG),
        user("Thanks, next make the currency default come from the settings file." + _BIG),
        assistant("Done, it reads settings.json now." + _BIG),
    ]
    summary, _ = _compact_summary(cli, _session(tmp_path, msgs), "--keep-recent-tokens", "300")
    goals = section(summary, "## Goal")
    assert goals[0].startswith("- Now add a --currency option to the export command")
    assert not [g for g in goals if "Traceback" in g or "ValueError" in g or "I get this" in g], goals
    # the goal rules themselves: the prose around a paste counts, when it says something
    facts = analyze_history([user("While exporting the March invoices the CLI crashes, please fix it:\n" + traceback)])
    assert facts.goals == [(0, "While exporting the March invoices the CLI crashes, please fix it:")]
    assert facts.requests and analyze_history([user(traceback)]).goals == []


def test_directories_are_not_listed_as_files_read(cli, tmp_path):
    msgs = [
        user("Look through the project and fix the failing import in the exporter." + _BIG),
        assistant(
            call("r1", "read", path="/Users/dev"),  # a read cut short mid-path (pi keeps it)
            call("r2", "read", path="/Users/dev/project/src/export.py"),
            call("l1", "ls", path="/Users/dev/project/lib"),
            call("b1", "bash", command="cd /Users/dev/project/tools && find ./scripts -name '*.sh'"),
            call("b2", "bash", command="ls -la docs/guide.md config"),
            stop="toolUse",
        ),
        result("r1", "read", "EISDIR: illegal operation on a directory, read", error=True),
        result("r2", "read", "import os\n"),
        result("l1", "ls", "a.py\nb.py\n"),
        result("b1", "bash", "./scripts/run.sh\n"),
        result("b2", "bash", "-rw-r--r-- 1 dev dev 12 Jan 1 00:00 docs/guide.md\n\nconfig:\nsettings.json\n"),
        assistant(
            call("r3", "read", path="/Users/dev/project/lib"),
            call("r4", "read", path="/Users/dev/project/tools"),
            call("r5", "read", path="./scripts/"),
            call("r6", "read", path="docs/guide.md"),
            call("r7", "read", path="config"),
            call("r8", "read", path="notes.txt"),
            stop="toolUse",
        ),
        *[result(f"r{n}", "read", "x") for n in range(3, 9)],
        assistant("Read them all." + _BIG),
        user("Now fix it." + _BIG),
        assistant("Fixing." + _BIG),
    ]
    file = _session(tmp_path, msgs)
    plan = json.loads(cli("compact", str(file), "--dry-run", "--json", "--keep-recent-tokens", "300").stdout)
    # pi's own lists (the oracle's prepare) keep every read path
    assert "/Users/dev" in plan["fileLists"]["readFiles"] and "config" in plan["fileLists"]["readFiles"]
    summary, details = _compact_summary(cli, file, "--keep-recent-tokens", "300")
    listed = summary.split("<read-files>\n", 1)[1].split("\n</read-files>", 1)[0].splitlines()
    assert listed == ["/Users/dev/project/src/export.py", "docs/guide.md", "notes.txt"]
    assert details["readFiles"] == listed


def test_a_directory_in_pis_own_session_is_not_a_file_read():
    # pi's real session: an aborted read of "/Users/dev" next to reads of files under it
    src = FIXTURES / "before-compaction.jsonl"
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    path = list(SessionManager.open(src, read_only=True).get_branch())
    second_compaction = [n for n, e in enumerate(path) if e["type"] == "compaction"][1]
    prep = prepare_compaction(path[:second_compaction], CompactionSettings(True, 16384, 2000))
    assert "/Users/dev" in prep.file_lists["readFiles"]  # pi lists it
    assert "/Users/dev" not in prep.summary_file_lists["readFiles"]
    res = asyncio.run(compact(prep, ExtractiveSummarizer()))
    assert "\n/Users/dev\n" not in res.summary and "/Users/dev" not in res.details["readFiles"]
    assert set(prep.summary_file_lists["readFiles"]) == set(prep.file_lists["readFiles"]) - {"/Users/dev"}


def test_directory_rules():
    from pi_session.compaction.file_ops import directory_paths

    msgs = [assistant(call("b", "bash", command="ls src/app.py"), stop="toolUse"), result("b", "bash", "src/app.py\n")]
    assert directory_paths(msgs, ["src/app.py"]) == set()  # ls of a file lists the file
    assert directory_paths([], ["src", "src/app.py", "lib/", "/"]) == {"src", "lib/", "/"}
    assert directory_paths([], ["src/app", "src/application.py"]) == set()  # a prefix is not a parent
    # a file that only mentions directories is still a file; malformed ids are skipped
    text = [assistant(call("r", "read", path="notes.md"), stop="toolUse"), result("r", "read", "EISDIR: x is a directory")]
    assert directory_paths(text, ["notes.md"]) == set()
    assert directory_paths([{**text[1], "toolCallId": ["r"]}], ["notes.md"]) == set()


# --- pasted terminal output is no next step ----------------------------------

_SPINNER_SCREEN = (
    "hm, i selected the theme while you were working and got a crash, that should never happen.\n\n"
    " ⠇ Working... (esc to interrupt)                                              \n\n"
    + "─" * 80 + "\n  dark                            (current)\n→ light\n  nord\n" + "─" * 80 + "\n"
    "Error: Variable reference not found: dimGray\n"
    "    at resolveVarRefs (/work/project/src/theme/theme.ts:213:9)\n"
    "    at loadTheme (/work/project/src/theme/theme.ts:393:9)\n"
)


def test_a_pasted_terminal_screen_is_not_a_next_step():
    """The request waiting at the cut counts by what the user wrote around
    the paste (the Goal's rule), in the history summary and in a turn
    prefix alike."""
    msgs = [user("Add a theme selector to the settings screen."), assistant("Added the selector."), user(_SPINNER_SCREEN)]
    facts = analyze_history(msgs)
    assert facts.plan == "hm, i selected the theme while you were working and got a crash, that should never happen."
    assert "Working..." not in facts.plan and "esc to interrupt" not in facts.plan and "─" not in facts.plan
    steps = "\n".join(section(summarize(messages=msgs), "## Next Steps"))
    assert "got a crash" in steps and "esc to interrupt" not in steps and "─" not in steps
    prefix = summarize("turn_prefix", messages=[user(_SPINNER_SCREEN), assistant(call("r", "read", path="src/theme/theme.ts"), stop="toolUse")])
    context = "\n".join(section(prefix, "## Context Needed to Continue"))
    assert "esc to interrupt" not in context and "Working..." not in context and "─" not in context
    # a paste with next to nothing written around it gives no step at all
    assert analyze_history([user("I get this:\n" + _SPINNER_SCREEN.split("dimGray\n", 1)[1] * 3)]).plan == ""


def test_large_session_split_turn_next_step_is_no_terminal_screen():
    src = FIXTURES / "large-session.jsonl"
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    path = SessionManager.open(src, read_only=True).get_branch()
    prep = prepare_compaction(path, CompactionSettings(True, 16384, 20000))
    assert prep is not None and prep.is_split_turn
    summary = asyncio.run(compact(prep, ExtractiveSummarizer())).summary
    turn = summary.split("**Turn Context (split turn):**", 1)[1].split("<read-files>")[0]
    assert "got a crash" in "\n".join(section(turn, "## Original Request"))
    # the request is the next step; the spinner screen pasted with it is not part of it
    for bad in ("esc to interrupt", "Working...", "───"):
        assert bad not in turn, bad


def test_a_pasted_screen_gives_only_what_the_user_wrote():
    """The menu lines of a pasted terminal screen and the debugger's notes
    are part of the paste; a sentence written between two pastes is not."""
    from pi_session.compaction.keywords import written_prose

    screen = _SPINNER_SCREEN + "Node.js v23.4.0\nWaiting for the debugger to disconnect...\n"
    assert written_prose(screen) == (
        "hm, i selected the theme while you were working and got a crash, that should never happen.")
    two = ("The export crashes:\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
           "ValueError: bad\nand then the retry says:\nFAILED tests/test_a.py::test_b - boom\nPlease fix both.")
    assert written_prose(two) == "The export crashes: and then the retry says: Please fix both."
