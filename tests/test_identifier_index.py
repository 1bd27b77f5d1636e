"""The identifier index (pi_session.compaction.identifiers) in extractive
summaries and in the model prompt: exact paths, commands, unresolved errors,
URLs, ids, versions and numbers of the summarized zone, ranked and cut to the
size bound, inside Critical Context with pi's headings untouched."""

from __future__ import annotations

import asyncio
import re

from pi_session.compaction.identifiers import (
    extract_identifiers,
    format_identifier_index,
    identifiers_in_text,
    parse_index_line,
)
from pi_session.compaction.summary import HISTORY_INSTRUCTIONS, UPDATE_INSTRUCTIONS
from pi_session.compaction.summary_format import SUMMARY_SECTIONS, parse_summary_sections
from pi_session.llm.base import SummaryRequest
from pi_session.llm.extractive import ExtractiveSummarizer, HISTORY_MAX_TOKENS


def user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(*blocks, stop="stop"):
    content = [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks]
    return {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 2}


def call(cid, name, **args):
    return {"type": "toolCall", "id": cid, "name": name, "arguments": args}


def result(cid, name, text, error=False):
    return {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": [{"type": "text", "text": text}], "isError": error, "timestamp": 3}


def summarize(messages, kind="history", max_tokens=None, **kw):
    return asyncio.run(ExtractiveSummarizer().summarize(SummaryRequest(kind, "sys", "prompt", max_tokens, messages=messages, **kw)))


ZONE = [
    user("The API at https://api.example.com/v2/orders returns 502 after upgrading httpx to 0.27.2; "
         "keep the timeout at 250ms and the port at 8443. See ticket PAY-4312."),
    assistant("I'll look at `src/shop/client.py` first.", call("r1", "read", path="src/shop/client.py"), stop="toolUse"),
    result("r1", "read", "import httpx\nTIMEOUT = 0.25\n"),
    assistant(call("b1", "bash", command="pytest tests/test_client.py -q"), stop="toolUse"),
    result("b1", "bash", "FAILED tests/test_client.py::test_retry - httpx.ReadTimeout: timed out\n1 failed", True),
    assistant(call("b2", "bash", command="git log --oneline -3"), stop="toolUse"),
    result("b2", "bash", "3f2a9c1e fix retries\n0a1b2c3d bump httpx"),
    assistant("Commit 3f2a9c1e introduced the retry loop; see /etc/shop/config.toml too.",
              call("e1", "edit", path="src/shop/client.py", oldText="a", newText="b"), stop="toolUse"),
    result("e1", "edit", "ok"),
    assistant(call("b3", "bash", command="npm run build"), stop="toolUse"),
    result("b3", "bash", "Error: Cannot find module './dist/index.js'", True),
    assistant("The build still fails."),
]


def test_identifiers_in_text_finds_each_kind():
    found = identifiers_in_text(
        "see https://x.dev/a?b=1, src/app/main.py and ~/.config/pi.json; v1.6.0 / pkg@2.3.4; "
        "commit 3f2a9c1e, JIRA-12, #4312; 70% of 8080 in 250ms (not 7)",
        numbers=True,
    )
    assert ("url", "https://x.dev/a?b=1") in found
    assert ("file", "src/app/main.py") in found and ("file", "~/.config/pi.json") in found
    assert ("id", "v1.6.0") in found and ("id", "pkg@2.3.4") in found
    assert ("id", "3f2a9c1e") in found and ("id", "JIRA-12") in found and ("id", "#4312") in found
    assert ("number", "70%") in found and ("number", "8080") in found and ("number", "250ms") in found
    assert not any(text == "7" for _k, text in found)
    assert not any(text == "and/or" for _k, text in identifiers_in_text("use and/or here"))


def test_extract_ranks_and_keeps_only_unresolved_errors_and_changing_commands():
    ids = extract_identifiers(ZONE)
    by = {(i.kind, i.text): i for i in ids}
    assert ("error", "Error: Cannot find module './dist/index.js'") in by
    assert ("error", "FAILED tests/test_client.py::test_retry - httpx.ReadTimeout: timed out") in by  # never passed
    assert ("command", "npm run build") in by and ("command", "pytest tests/test_client.py -q") in by
    assert ("command", "git log --oneline -3") not in by  # a look-up
    assert by[("file", "src/shop/client.py")].listed  # the file lists name it
    assert not by[("file", "/etc/shop/config.toml")].listed
    assert ("number", "8443") in by and ("number", "250ms") in by and ("id", "PAY-4312") in by
    assert ("id", "0.27.2") in by and ("url", "https://api.example.com/v2/orders") in by
    # what the user wrote outranks what the assistant said
    assert ids.index(by[("number", "8443")]) < ids.index(by[("file", "/etc/shop/config.toml")])


def test_resolved_failure_is_not_in_the_index():
    zone = [
        user("fix the tax rounding"),
        assistant(call("b1", "bash", command="pytest tests/test_tax.py"), stop="toolUse"),
        result("b1", "bash", "FAILED tests/test_tax.py::test_round - AssertionError", True),
        assistant(call("b2", "bash", command="pytest tests/test_tax.py"), stop="toolUse"),
        result("b2", "bash", "3 passed"),
    ]
    assert not [i for i in extract_identifiers(zone) if i.kind == "error"]


def test_summary_carries_the_index_inside_critical_context():
    text = summarize(ZONE)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == list(SUMMARY_SECTIONS)  # pi's headings, exactly, nothing added
    critical = text.split("## Critical Context\n", 1)[1].splitlines()
    index = [line[2:] for line in critical if parse_index_line(line[2:])]
    assert [line.split(":", 1)[0] for line in index] == ["Exact paths", "Ids and versions"]  # the rest is quoted above
    for exact in ("npm run build", "Error: Cannot find module './dist/index.js'", "https://api.example.com/v2/orders",
                  "0.27.2", "PAY-4312", "8443", "250ms", "`/etc/shop/config.toml`", "`3f2a9c1e`",
                  "FAILED tests/test_client.py::test_retry - httpx.ReadTimeout: timed out"):
        assert exact in text, exact
    # what the sections quote already (the command under Done, the errors under Blocked,
    # the request's URL) and what the file lists name is not repeated
    assert "`src/shop/client.py`, " not in text.split("## Critical Context")[1]
    assert "npm run build" not in "\n".join(index) and "https://api.example.com" not in "\n".join(index)
    assert text.count("npm run build") == 1
    assert len(text) <= HISTORY_MAX_TOKENS * 4


def test_index_is_cut_to_the_bound_best_first():
    zone = [user("start")] + [
        m
        for n in range(300)
        for m in (
            assistant(call(f"b{n}", "bash", command=f"make target-{n:03d} OUT=build/artifact-{n:03d}.bin"), stop="toolUse"),
            result(f"b{n}", "bash", "ok"),
        )
    ]
    text = summarize(zone)
    assert len(text) <= HISTORY_MAX_TOKENS * 4
    commands = [t for line in text.splitlines() for k, t in parse_index_line(line[2:]) if k == "command"]
    assert 20 < len(commands) < 300
    assert "make target-296 OUT=build/artifact-296.bin" in commands  # the latest rank first
    assert "make target-299 OUT=build/artifact-299.bin" not in commands  # Done quotes it
    assert "Ran `make target-299 OUT=build/artifact-299.bin`" in text
    assert "make target-000 OUT=build/artifact-000.bin" not in text
    small = format_identifier_index(extract_identifiers(zone), 200)
    assert sum(len(line) + 3 for line in small) <= 200


def test_update_rebuilds_the_index_from_the_previous_one():
    first = summarize(ZONE)
    later = [user("now document it in docs/client.md"), assistant("Done.")]
    second = summarize(later, kind="update", previous_summary=first)
    critical = parse_summary_sections(second)["critical"]
    index = [x for x in critical if parse_index_line(x)]
    assert len([x for x in index if x.startswith("Exact paths:")]) == 1  # one index, not two
    for exact in ("npm run build", "docs/client.md", "8443", "`/etc/shop/config.toml`", "PAY-4312"):
        assert exact in second, exact


def test_turn_prefix_gets_an_index_and_branch_summary_does_not():
    prefix = summarize(ZONE, kind="turn_prefix")
    assert re.search(r"## Context Needed to Continue\n(?:.*\n)*- Exact paths: `/etc/shop/config.toml`", prefix)
    branch = summarize(ZONE, kind="branch")
    assert "Exact commands:" not in branch


def test_model_prompts_ask_for_the_index():
    for prompt in (HISTORY_INSTRUCTIONS, UPDATE_INSTRUCTIONS):
        assert "index of exact identifiers" in prompt
        for label in ("Exact paths:", "Exact commands:", "Exact errors:", "URLs:", "Ids and versions:", "Numbers:"):
            assert label in prompt


def test_slash_commands_product_names_and_calls_are_not_paths():
    text = ("/mode\nNode.js has `fs.watch()` built in, and Node.js v23.4.0 printed it; "
            'console.log("x") twice, console.log(theme.fg("accent")). Files: /tmp, /var/log/app.log, '
            "/srv/, src/app.js, App.js, README.md, ~/.pi/agent/themes/test.json, ../theme/theme.js, settings.json")
    files = [t for kind, t in identifiers_in_text(text) if kind == "file"]
    assert files == ["/tmp", "/var/log/app.log", "/srv/", "src/app.js", "App.js", "README.md",
                     "~/.pi/agent/themes/test.json", "../theme/theme.js", "settings.json"]


def test_large_session_exact_paths_are_paths():
    """pi's large-session.jsonl: the index's paths are paths (no `/mode`,
    `Node.js` or `console.log`), and the real ones are all still there."""
    from conftest import FIXTURES
    from shared_paths import shared_missing
    import pytest
    from pi_session.compaction import compact, prepare_compaction
    from pi_session.manager.session_manager import SessionManager

    src = FIXTURES / "large-session.jsonl"
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    path = SessionManager.open(src, read_only=True).get_branch()
    prep = prepare_compaction(path, {"keepRecentTokens": 20000})
    assert prep is not None
    summary = asyncio.run(compact(prep, ExtractiveSummarizer())).summary
    lines = [x for x in summary.splitlines() if x.startswith("- Exact paths: ")]
    assert len(lines) == 2  # the history's index and the turn prefix's
    paths = [p for line in lines for p in re.findall(r"`([^`]+)`", line)]
    for word in ("/mode", "Node.js", "console.log"):
        assert word not in paths, (word, paths)
    for real in ("packages/coding-agent/src/cli.ts", "~/.pi/agent/themes/test.json", "../theme/theme.js",
                 "/Users/dev/workspaces/pi-mono/packages/tui/src/tui.ts"):
        assert real in paths, (real, paths)
