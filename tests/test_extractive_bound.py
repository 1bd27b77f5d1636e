"""The offline summary's size bound holds for every input (1,850 tokens, a
turn prefix 600; docs/eval-compaction.md), and the Goal keeps its place
before the sections that matter less.

An update carries the previous summary's items whole, within a share of the
bound: a previous "summary" that is really a whole transcript (what a Codex
compaction imports as) is fitted like new text, not kept whole on top of the
bound. Generated sessions with huge messages of every role and kind, and the
real Codex session of ../shared/fixtures/other-agents through the real
console script."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SHARED
from shared_paths import shared_missing
from pi_session.compaction.summary import SPLIT_TURN_SEPARATOR, build_summary_request
from pi_session.core.jsonio import js_len
from pi_session.llm.extractive import HISTORY_MAX_TOKENS, TURN_PREFIX_MAX_TOKENS, extractive_summary, summary_budget

GOAL = "GOALMARK Rewrite the invoice exporter so totals round once per invoice and every currency prints"
PREVIOUS_GOAL = "PREVGOAL Keep the ledger import compatible with the files of the old release"

_WORDS = ["alpha", "src/app.py", "Error:", "must", "never", "the", "invoice", "⠇", "───", "v1.2.3", "8080",
          "I'll use", "instead of", "```", "\n", "\n\n", "Traceback (most recent call last):", "    at x (a.ts:1:2)",
          "don't", "1.", "- ", "https://example.com/a", "FAILED tests/test_a.py", "é", "😀"]


@st.composite
def _huge(draw: st.DrawFn) -> str:
    """A text of up to ~100,000 characters: a drawn phrase repeated, each
    copy numbered (so its lines differ)."""
    phrase = " ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12)))
    return " ".join(f"{phrase} {n}" for n in range(draw(st.sampled_from([1, 3, 40, 400, 1500]))))


_text = st.one_of(st.text(max_size=40), _huge())
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _text),
    st.builds(
        lambda i, n, t: {"type": "toolCall", "id": f"c{i}", "name": n,
                         "arguments": {"path": t[:200], "command": t, "content": t, "oldText": t, "newText": t}},
        st.integers(0, 5), st.sampled_from(["read", "write", "edit", "bash", "grep", "custom"]), _text,
    ),
)
_message = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t, "timestamp": 1}, _text),
    st.builds(lambda t: {"role": "user", "timestamp": 1, "content": [
        {"type": "text", "text": t}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]}, _text),
    st.builds(lambda bs, sr: {"role": "assistant", "content": bs, "stopReason": sr, "timestamp": 2,
                              "errorMessage": "boom " * 500 if sr == "error" else None},
              st.lists(_block, max_size=4), st.sampled_from(["stop", "toolUse", "error", "aborted"])),
    st.builds(lambda i, n, t, e: {"role": "toolResult", "toolCallId": f"c{i}", "toolName": n,
                                  "content": [{"type": "text", "text": t}], "isError": e, "timestamp": 3},
              st.integers(0, 5), st.sampled_from(["read", "write", "edit", "bash"]), _text, st.booleans()),
    st.builds(lambda c, o, x: {"role": "bashExecution", "command": c, "output": o, "exitCode": x,
                               "cancelled": False, "truncated": False, "timestamp": 4},
              _text, _text, st.sampled_from([0, 1, 2])),
    st.builds(lambda t: {"role": "custom", "customType": "note", "content": t, "display": True, "timestamp": 5}, _text),
    st.builds(lambda t: {"role": "branchSummary", "summary": t, "fromId": "abc", "timestamp": 6}, _text),
    st.builds(lambda t: {"role": "compactionSummary", "summary": t, "tokensBefore": 100, "timestamp": 7}, _text),
)


@st.composite
def _previous(draw: st.DrawFn) -> str | None:
    """None, a huge text without headings (a transcript), or a structured
    summary whose sections hold huge items."""
    shape = draw(st.sampled_from(["none", "transcript", "structured"]))
    if shape == "none":
        return None
    if shape == "transcript":
        return "\n\n".join(draw(st.lists(_huge(), min_size=1, max_size=6)))
    body = [f"## Goal\n- {PREVIOUS_GOAL}"]
    for heading in ("## Goal", "## Constraints & Preferences", "### Done", "### Blocked", "## Key Decisions",
                    "## Critical Context"):
        items = draw(st.lists(_text, max_size=30))
        body.append(heading + "\n" + "\n".join(f"- {x}" for x in items))
    return draw(_text) + "\n\n" + "\n\n".join(body)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    messages=st.lists(_message, max_size=10),
    kind=st.sampled_from(["history", "update", "turn_prefix", "branch"]),
    max_tokens=st.one_of(st.none(), st.integers(0, 3000)),
    previous=_previous(),
    focus=st.one_of(st.none(), _text),
)
def test_the_bound_holds_for_every_input(messages, kind, max_tokens, previous, focus):
    messages = [{"role": "user", "content": GOAL, "timestamp": 0}, *messages]
    request = build_summary_request(kind, messages, max_tokens, previous_summary=previous, custom_instructions=focus)
    out = extractive_summary(request)
    budget = summary_budget(request)
    assert js_len(out) <= budget
    assert budget <= (TURN_PREFIX_MAX_TOKENS if kind == "turn_prefix" else HISTORY_MAX_TOKENS) * 4
    if max_tokens is None and kind != "turn_prefix":
        # the Goal claims its place before the sections that matter less: the
        # first goal stands whole, never cut to a few characters
        goal = out.split("## Goal\n", 1)[1].split("\n", 1)[0]
        first = PREVIOUS_GOAL if kind == "update" and previous and PREVIOUS_GOAL in previous else GOAL
        assert goal == f"- {first}", goal


# --------------------------------------------------------------------------- the real Codex session

CODEX = SHARED / "fixtures" / "other-agents" / "codex"
SESSION = "2de00295"


def test_a_codex_compaction_summary_is_fitted_not_kept_whole(cli, tmp_path):
    """The imported Codex session carries a compaction whose summary is the
    whole 72 KB replayed transcript. Compacting it again gives a summary
    within the bound: its history part at most 1,850 tokens, its turn
    prefix at most 600, the Goal whole."""
    if not CODEX.exists():
        pytest.skip(shared_missing(CODEX) or "")
    src = tmp_path / "codex"
    shutil.copytree(CODEX, src)
    store = tmp_path / "store"
    res = cli("import", "--from", "codex", str(src), "--store", str(store))
    assert res.returncode == 0, res.stderr
    res = cli("--store", str(store), "eval-compaction", SESSION, "--provider", "extractive",
              "--keep-recent-tokens", "2000", "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    summary = report["summary"]
    history, _sep, prefix = summary.partition(SPLIT_TURN_SEPARATOR)
    assert js_len(history) <= HISTORY_MAX_TOKENS * 4
    assert js_len(prefix) <= TURN_PREFIX_MAX_TOKENS * 4 + 200  # + the file lists, here none
    assert report["summaryBodyTokens"] <= HISTORY_MAX_TOKENS + TURN_PREFIX_MAX_TOKENS + 20
    assert report["tokensAfter"] < report["tokensBefore"] / 4
    goal = history.split("## Goal\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert goal[0] == "- YOU KILLED THE SPIRITS AND LEFT THE WALKING CORPSE", goal
    assert not [g for g in goal if "omitted" in g], goal
    assert report["probes"]["missed"] == 0, [r for r in report["results"] if not r["found"]]
    # the compacted session itself: the same summary, written through compact on a copy
    res = cli("--store", str(store), "compact", SESSION, "--provider", "extractive", "--keep-recent-tokens", "2000")
    assert res.returncode == 0, res.stderr
    written = [json.loads(x) for f in store.rglob(f"*{SESSION}*.jsonl") for x in f.read_text(encoding="utf-8").split("\n") if x.strip()]
    entry = [e for e in written if e.get("type") == "compaction"][-1]
    assert entry["summary"] == summary
    assert len(re.findall(r"^## Critical Context$", entry["summary"], re.M)) == 1


def test_kept_items_give_way_before_new_ones_are_cut_to_nothing(monkeypatch):
    """When what is never dropped (the previous summary's kept items, the
    artifact trail, one item a section) does not fit, the kept items give
    way like the others: the new Goal stands whole and the identifier index
    keeps its share, instead of every new item being cut to a few
    characters and the index left out. (The share is raised to the whole
    bound here to reach that case.)"""
    import pi_session.llm.extractive as extractive

    monkeypatch.setattr(extractive, "KEPT_SHARE", 1.0)
    critical = "\n".join(f"- note {n}: the staging host keeps build {n} for the audit trail" for n in range(90))
    previous = f"## Critical Context\n{critical}"
    messages = [{"role": "user", "content": GOAL, "timestamp": 0},
                {"role": "assistant", "content": [{"type": "text", "text": "The rules are at https://deploy.example.com/x"}],
                 "stopReason": "stop", "timestamp": 1}]
    for n in range(30):
        path = f"src/invoices/exporters/currency_module_number_{n:02d}.py"
        messages += [
            {"role": "assistant", "content": [{"type": "toolCall", "id": f"e{n}", "name": "edit",
                                               "arguments": {"path": path, "oldText": "a", "newText": "b"}}],
             "stopReason": "toolUse", "timestamp": 1},
            {"role": "toolResult", "toolCallId": f"e{n}", "toolName": "edit", "content": [{"type": "text", "text": "ok"}],
             "isError": False, "timestamp": 2},
        ]
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "The edits are in."}], "stopReason": "stop",
                     "timestamp": 3})
    request = build_summary_request("update", messages, None, previous_summary=previous)
    out = extractive_summary(request)
    assert js_len(out) <= summary_budget(request)
    assert f"## Goal\n- {GOAL}\n" in out
    assert "- URLs: `https://deploy.example.com/x`" in out
