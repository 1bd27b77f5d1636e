"""ExtractiveSummarizer: sections, merge with a previous summary, kinds,
the size bound, the rules shared with the compaction probes, and
determinism."""

from __future__ import annotations

import asyncio
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_session.llm import EXTRACTIVE_NOTE, ExtractiveSummarizer, SummaryRequest, make_summarizer
from pi_session.llm.extractive import extractive_summary, parse_summary_sections

MAIN_HEADINGS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
]


def user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(*blocks, stop="stop"):
    content = [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks]
    return {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 2}


def call(cid, name, **args):
    return {"type": "toolCall", "id": cid, "name": name, "arguments": args}


def result(cid, name, text, error=False):
    return {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": [{"type": "text", "text": text}], "isError": error, "timestamp": 3}


CONVO = [
    user("Please fix the failing parser test in src/parser.py. Don't change the public API."),
    assistant("I'll use a regex instead of manual splitting.", call("c1", "read", path="src/parser.py"), stop="toolUse"),
    result("c1", "read", "def parse(): ..."),
    assistant(call("c2", "edit", path="src/parser.py", oldText="a", newText="b"), call("c3", "bash", command="pytest -q"), stop="toolUse"),
    result("c2", "edit", "ok"),
    result("c3", "bash", "FAILED tests/test_p.py::test_x - AssertionError: 1 != 2\nmore", error=True),
    assistant("The test still fails.\n\n1. Check the tokenizer in src/lexer.py\n2. Re-run pytest -q"),
]


def summarize(kind="history", messages=CONVO, max_tokens=4000, **kw):
    return asyncio.run(ExtractiveSummarizer().summarize(SummaryRequest(kind, "sys", "prompt", max_tokens, messages=messages, **kw)))


def section(text, heading):
    """Lines under ``heading`` up to the next heading."""
    lines = text.splitlines()
    i = lines.index(heading)
    out = []
    for line in lines[i + 1 :]:
        if line.startswith("#"):
            break
        if line.strip():
            out.append(line)
    return out


def test_history_sections_filled():
    s = summarize()
    assert s.splitlines()[0] == EXTRACTIVE_NOTE and "Extractive" in s
    positions = [s.splitlines().index(h) for h in MAIN_HEADINGS]
    assert positions == sorted(positions)
    assert section(s, "## Goal") == ["- Please fix the failing parser test in src/parser.py. Don't change the public API."]
    assert section(s, "## Constraints & Preferences") == ["- Don't change the public API."]
    assert section(s, "### Done") == ["- [x] Edited `src/parser.py`"]  # reads are not progress
    assert section(s, "### Blocked") == ["- bash `pytest -q` failed: FAILED tests/test_p.py::test_x - AssertionError: 1 != 2"]
    assert section(s, "## Key Decisions") == ["- I'll use a regex instead of manual splitting."]
    assert section(s, "## Next Steps") == ["1. Check the tokenizer in src/lexer.py", "2. Re-run pytest -q"]
    crit = section(s, "## Critical Context")
    assert crit[0] == "- Last error: FAILED tests/test_p.py::test_x - AssertionError: 1 != 2"
    assert crit[1] == "- Latest request: Please fix the failing parser test in src/parser.py. Don't change the public API."
    assert any(c.startswith("- Latest assistant reply: The test still fails.") for c in crit)


def test_error_fixed_later_is_not_blocked():
    msgs = CONVO[:-1] + [
        assistant(call("c4", "bash", command="pytest -q"), stop="toolUse"),
        result("c4", "bash", "1 passed"),
        assistant("All green now."),
    ]
    s = summarize(messages=msgs)
    assert section(s, "### Blocked") == ["- (none)"]
    assert "- [x] Ran `pytest -q`" in section(s, "### Done")


def test_in_progress_states():
    s = summarize(messages=CONVO + [user("now also update the README.md file")])
    assert section(s, "### In Progress") == ["- [ ] Pending request: now also update the README.md file"]
    assert section(s, "## Next Steps") == ["1. now also update the README.md file"]
    s = summarize(messages=CONVO[:4])  # tool calls c2/c3 without results
    assert section(s, "### In Progress") == ["- [ ] Waiting on tool calls: Edited `src/parser.py`; Ran `pytest -q`"]
    s = summarize(messages=CONVO[:3])
    assert section(s, "### In Progress") == ["- [ ] Tool work was still going on when the conversation was cut"]


def test_acknowledgements_are_not_goals():
    s = summarize(messages=[user("Refactor the CLI module"), assistant("Done."), user("ok"), assistant("Anything else?")])
    assert section(s, "## Goal") == ["- Refactor the CLI module"]


def test_update_merges_previous_and_moves_done():
    previous = (
        "## Goal\nBuild the exporter\n\n## Constraints & Preferences\n- Use only the standard library\n\n"
        "## Progress\n### Done\n- [x] Wrote `exporter.py`\n\n### In Progress\n- [ ] Edited `src/parser.py`\n\n"
        "### Blocked\n- (none)\n\n## Key Decisions\n- **JSON output**: simpler\n\n## Next Steps\n1. Add tests\n\n"
        "## Critical Context\n- Port 8080 is taken\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\nWire the exporter into the CLI\n\n## Early Progress\n- Looked at cli.py\n\n"
        "## Context for Suffix\n- cli.py uses typer\n\n<read-files>\ncli.py\n</read-files>\n\n<modified-files>\nexporter.py\n</modified-files>"
    )
    s = summarize("update", previous_summary=previous)
    goal = section(s, "## Goal")
    assert goal[:2] == ["- Build the exporter", "- Wire the exporter into the CLI"]
    assert goal[2].startswith("- Please fix the failing parser test")
    assert section(s, "## Constraints & Preferences") == ["- Use only the standard library", "- Don't change the public API."]
    assert section(s, "### Done") == ["- [x] Wrote `exporter.py`", "- [x] Looked at cli.py", "- [x] Edited `src/parser.py`"]
    assert section(s, "### In Progress") == ["- (none found)"]  # moved to Done
    assert section(s, "## Key Decisions")[0] == "- **JSON output**: simpler"
    # Next Steps are rewritten for where the work stands now
    assert section(s, "## Next Steps") == ["1. Check the tokenizer in src/lexer.py", "2. Re-run pytest -q"]
    crit = section(s, "## Critical Context")
    assert crit[:2] == ["- Port 8080 is taken", "- cli.py uses typer"]
    assert "<read-files>" not in s and "\ncli.py\n" not in s
    assert s.count(EXTRACTIVE_NOTE) == 1


def test_update_of_own_output_is_stable():
    first = summarize()
    again = summarize("update", messages=[user("Please also add type hints everywhere")], previous_summary=first)
    assert section(again, "## Goal") == section(first, "## Goal")  # a follow-up, not a new direction
    assert "- [x] Edited `src/parser.py`" in section(again, "### Done")
    # transient state lines of the old summary are replaced by the new ones
    assert not any("The test still fails" in c for c in section(again, "## Critical Context"))
    assert section(again, "### In Progress") == ["- [ ] Pending request: Please also add type hints everywhere"]
    assert section(again, "## Constraints & Preferences") == section(first, "## Constraints & Preferences")
    assert section(again, "## Key Decisions") == section(first, "## Key Decisions")
    # merging the same summary twice adds nothing
    twice = summarize("update", messages=[user("Please also add type hints everywhere")], previous_summary=again)
    assert twice == again


def test_embedded_summary_in_messages_is_merged():
    branch_msg = user("Returned from a branch.\n\n<summary>\n## Goal\n- Try the C extension\n\n## Progress\n### Done\n- [x] Benchmarked\n</summary>")
    s = summarize(messages=[branch_msg] + CONVO)
    assert section(s, "## Goal")[0] == "- Try the C extension"
    assert section(s, "### Done")[0] == "- [x] Benchmarked"


def test_a_summary_entry_in_the_history_is_carried_over():
    """A branch left again (its only entry the summary of the first time)
    or a compaction after a detour summarizes a branchSummary /
    compactionSummary message: its items are kept (the summary said
    "(none found)" everywhere, losing the earlier summary's content)."""
    earlier = "## Goal\n- Try the C extension\n\n## Progress\n### Done\n- [x] Benchmarked\n"
    for role in ("branchSummary", "compactionSummary"):
        s = summarize("branch", messages=[{"role": role, "summary": earlier, "fromId": "a1", "timestamp": 1}])
        assert section(s, "## Goal") == ["- Try the C extension"], (role, s)
        assert section(s, "### Done") == ["- [x] Benchmarked"], (role, s)


def test_turn_prefix_sections():
    s = summarize("turn_prefix", messages=CONVO[:4])
    headings = [l for l in s.splitlines() if l.startswith("#")]
    assert headings == ["## Original Request", "## Progress So Far", "## Context Needed to Continue"]
    assert section(s, "## Original Request")[0].startswith("- Please fix the failing parser test")
    assert "- I'll use a regex instead of manual splitting." in section(s, "## Progress So Far")
    assert any("Waiting on tool calls" in c for c in section(s, "## Context Needed to Continue"))


def test_branch_has_no_critical_context():
    s = summarize("branch")
    assert "## Critical Context" not in s and "## Next Steps" in s and s.startswith(EXTRACTIVE_NOTE)


def test_custom_instructions_shown():
    s = summarize(custom_instructions="focus on the lexer")
    assert "- Requested focus: focus on the lexer" in section(s, "## Critical Context")


def test_budget_drops_items_with_marker():
    msgs = []
    for i in range(200):
        msgs += [assistant(call(f"w{i}", "write", path=f"src/file_{i:03d}.py", content="x"), stop="toolUse"), result(f"w{i}", "write", "ok")]
    full = summarize(messages=[user("Generate the modules")] + msgs, max_tokens=100000)
    done = section(full, "### Done")  # the latest files; all of them are in the file lists compact appends
    older = done[0].count("(written)")  # the artifact trail: the latest older files that fit, with their change
    assert 10 < older < 190
    assert done[0] == "- [x] Also changed: " + ", ".join(f"`src/file_{i:03d}.py` (written)" for i in range(190 - older, 190))
    assert done[1:] == [f"- [x] Wrote `src/file_{i:03d}.py`" for i in range(190, 200)]
    small = summarize(messages=[user("Generate the modules")] + msgs, max_tokens=120)
    assert len(small) <= 120 * 4
    done = section(small, "### Done")
    assert re.fullmatch(r"- \(\d+ earlier items omitted to fit the size limit\)", done[0])
    assert done[-1] == "- [x] Wrote `src/file_199.py`"
    assert all(h in small for h in MAIN_HEADINGS)


def _long_history(turns):
    msgs = []
    for t in range(turns):
        msgs += [
            user(f"Update handler_{t} in module m{t % 17} so it copes with case {t}. Never rename handler_{t} in module m{t % 17}."),
            assistant(f"I'll use approach {t} instead of the old loop for handler_{t}.", call(f"e{t}", "edit", path=f"src/m{t}.py"), stop="toolUse"),
            result(f"e{t}", "edit", "ok"),
            assistant(call(f"b{t}", "bash", command=f"make check-{t}"), stop="toolUse"),
            result(f"b{t}", "bash", f"Error: check {t} failed", True),
            assistant(f"Handler {t} updated."),
        ]
    return msgs


def test_size_is_bounded_however_long_the_history():
    from pi_session.compaction.identifiers import is_index_line
    from pi_session.llm.extractive import HISTORY_MAX_TOKENS, TURN_PREFIX_MAX_TOKENS

    assert HISTORY_MAX_TOKENS + TURN_PREFIX_MAX_TOKENS + 20 <= 2500
    sizes = []
    for turns in (50, 400):
        s = summarize(messages=_long_history(turns), max_tokens=13107)  # compact's default budget
        # the identifier index fills what the sections leave; the sections do not grow
        sizes.append(len("\n".join(x for x in s.splitlines() if not is_index_line(x[2:]))))
        assert len(s) <= HISTORY_MAX_TOKENS * 4
        assert len(section(s, "## Constraints & Preferences")) == 8
        assert len(section(s, "### Blocked")) == 5 and len(section(s, "## Key Decisions")) == 5
        p = summarize("turn_prefix", messages=_long_history(turns), max_tokens=8192)
        assert len(p) <= TURN_PREFIX_MAX_TOKENS * 4
    assert sizes[1] <= sizes[0] * 1.2  # does not grow with the history


def test_goal_is_the_first_request_and_changes_of_direction():
    msgs = []
    for text in [
        "Port the user message selector to the new theme system, following the other selectors",
        "ok",
        "dude sleep 5 seconds via bash",
        "make muted a little brighter",
        "no, the block should stay as is",
        "why does the footer not update after switching themes?",
        "Now write a section about custom themes in the README, with a short example and the VS Code caveat",
    ]:
        msgs += [user(text), assistant("Done.")]
    s = summarize(messages=msgs)
    assert section(s, "## Goal") == [
        "- Port the user message selector to the new theme system, following the other selectors",
        "- Now write a section about custom themes in the README, with a short example and the VS Code caveat",
    ]
    # a rule said of a thing is a preference
    assert section(s, "## Constraints & Preferences") == ["- no, the block should stay as is"]


def test_constraints_only_from_imperatives_deduplicated():
    msgs = [
        user("Refactor the loader. Never load the whole table into memory. I think only one file is left."),
        assistant("Ok."),
        user("and never load the whole table into memory! Prefer generators over lists. Do we only have one loader?"),
    ]
    s = summarize(messages=msgs)
    assert section(s, "## Constraints & Preferences") == [
        "- and never load the whole table into memory!",
        "- Prefer generators over lists.",
    ]


def test_lookups_and_aborts_are_not_blocked():
    msgs = [
        user("Find where the config is parsed"),
        assistant(call("g", "bash", command="grep -rn parse_config src/"), stop="toolUse"),
        result("g", "bash", "Command exited with code 1", True),
        assistant(call("r", "read", path="nope.py"), stop="toolUse"),
        result("r", "read", "ENOENT: no such file", True),
        assistant(call("s", "bash", command="sleep 5"), stop="toolUse"),
        result("s", "bash", "Command aborted", True),
        assistant("Nothing found yet."),
    ]
    s = summarize(messages=msgs)
    assert section(s, "### Blocked") == ["- (none)"] and "Last error" not in s


def test_factory_and_protocol():
    from pi_session.llm import Summarizer

    s = make_summarizer("extractive")
    assert isinstance(s, Summarizer) and s.name == "extractive"


def test_parse_summary_sections_ignores_noise():
    parsed = parse_summary_sections("Intro text\n## Goal\n- (none)\n- real goal\n**Label:**\n## Weird Heading\nstuff")
    assert parsed["goal"] == ["real goal"] and parsed["critical"] == ["stuff"]


# --------------------------------------------------------------------------- properties

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _text),
    st.builds(
        lambda i, n, p: {"type": "toolCall", "id": f"c{i}", "name": n, "arguments": {"path": p}},
        st.integers(0, 5),
        st.sampled_from(["read", "write", "edit", "bash", "custom"]),
        _text,
    ),
)
_message = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, _text),
    st.builds(lambda bs, sr: {"role": "assistant", "content": bs, "stopReason": sr}, st.lists(_block, max_size=4), st.sampled_from(["stop", "toolUse", "error"])),
    st.builds(
        lambda i, t, e: {"role": "toolResult", "toolCallId": f"c{i}", "toolName": "bash", "content": [{"type": "text", "text": t}], "isError": e},
        st.integers(0, 5),
        _text,
        st.booleans(),
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    messages=st.lists(_message, max_size=12),
    kind=st.sampled_from(["history", "update", "turn_prefix", "branch"]),
    max_tokens=st.integers(0, 3000),
    previous=st.one_of(st.none(), _text),
)
def test_property_budget_and_determinism(messages, kind, max_tokens, previous):
    req = SummaryRequest(kind, "s", "p", max_tokens, messages=messages, previous_summary=previous)
    out = extractive_summary(req)
    assert len(out) <= max_tokens * 4
    assert out == extractive_summary(req)
    if max_tokens >= 2000:  # room for everything short: the skeleton is complete
        assert out.startswith(EXTRACTIVE_NOTE)
        expected = ["## Original Request"] if kind == "turn_prefix" else ["## Goal", "### Done", "## Next Steps"]
        assert all(h in out.splitlines() for h in expected)


def test_user_shell_commands_and_pasted_paths():
    from pi_session.session.context import convert_to_llm

    bash = convert_to_llm([{"role": "bashExecution", "command": "make test", "output": "ok", "exitCode": 0, "timestamp": 1}])
    failed = convert_to_llm([{"role": "bashExecution", "command": "make lint", "output": "E501 line too long", "exitCode": 2, "timestamp": 1}])
    msgs = [user("Set up the build"), *bash, *failed, user("'/tmp/Screenshot 2025-01-01 at 10.00.00.png'"), user("- never touch vendor/")]
    s = summarize(messages=msgs)
    assert section(s, "## Goal") == ["- Set up the build"]
    assert section(s, "## Constraints & Preferences") == ["- never touch vendor/"]
    assert section(s, "### Blocked") == ["- user shell `make lint` failed: exit code 2"]
    assert section(s, "### In Progress") == ["- [ ] Pending request: - never touch vendor/"]
