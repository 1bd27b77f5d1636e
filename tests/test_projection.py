"""pi 1.6 projection: context entries, context edits, system messages and the
projected token estimate, against the committed answers of the 1.6 oracle
(tests/goldens/projection, regenerate with tests/tools/make_projection_goldens.py).
"""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import GOLDENS
from projection_cases import CASES
from pi_session import SessionManager
from pi_session.cli.render import tree_value
from pi_session.session.context import (
    apply_context_edit,
    build_context_entries,
    build_session_context,
    build_session_projection,
    collect_context_edits,
    get_current_system_message,
    projection_to_json,
    system_message_text,
)
from pi_session.core.jsonio import js_stringify
from pi_session.session.tokens import (
    estimate_context_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    should_compact,
)

PROJECTION = GOLDENS / "projection"
NAMES = sorted(p.name[: -len(".golden.json.gz")] for p in PROJECTION.glob("*.golden.json.gz"))
SETTINGS = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}


def test_goldens_present() -> None:
    assert len(NAMES) >= 40
    assert {f"case-{n}" for n in CASES} <= set(NAMES)


def ours(manager: SessionManager, cmd: str) -> object:
    """What the oracle command prints, computed by pi-session."""
    leaf = manager.get_leaf_id()
    if cmd == "projection":
        p = manager.build_session_projection()
        return {"leafId": leaf, "thinkingLevel": p.get("thinkingLevel"), "model": p["model"],
                "entries": projection_to_json(p), "messages": p["messages"],
                "systemMessage": get_current_system_message(p["messages"])}
    if cmd == "context-entries":
        entries = manager.build_context_entries()
        return {"leafId": leaf, "ids": [e["id"] for e in entries], "entries": entries}
    if cmd == "context":
        ctx = manager.build_session_context()
        return {"leafId": leaf, "thinkingLevel": ctx.get("thinkingLevel"), "model": ctx["model"], "messages": ctx["messages"]}
    assert cmd == "tokens"
    est = estimate_context_tokens(manager.build_session_context()["messages"])
    projected = estimate_projected_context_tokens(manager.build_session_projection(), manager.get_branch())
    return {
        "perEntry": [{"id": e["id"], "tokens": estimate_tokens(e["message"])} for e in manager.get_entries() if e["type"] == "message"],
        "context": est,
        "shouldCompact": should_compact(est["tokens"], 200000, SETTINGS),
        "projected": projected,
        "projectedShouldCompact": should_compact(projected["tokens"], 200000, SETTINGS),
    }


@pytest.mark.parametrize("name", NAMES)
def test_matches_pi_16(name: str) -> None:
    goldens = json.loads(gzip.decompress((PROJECTION / f"{name}.golden.json.gz").read_bytes()))
    checked = 0
    for leaf, by_cmd in goldens.items():
        manager = SessionManager.open(PROJECTION / f"{name}.jsonl", read_only=True)
        if leaf == "<file>":
            assert js_stringify(tree_value(manager.get_tree(), manager.get_leaf_id())) == js_stringify(by_cmd["tree"]["json"])
            continue
        if leaf == "null":
            manager.reset_leaf()
        elif leaf != "<leaf>":
            manager.branch(leaf)
        for cmd, expected in by_cmd.items():
            if "error" in expected:  # pi itself throws on this input (e.g. a replacement content of 5)
                continue
            assert js_stringify(ours(manager, cmd)) == js_stringify(expected["json"]), f"{name} --leaf {leaf}: {cmd}"
            checked += 1
    assert checked >= 8


def test_edit_applies_only_from_context_entries() -> None:
    """An edit in the summarized part of the path does nothing; one after the
    compaction reaches a kept entry; system messages in the kept range go."""
    entries = CASES["compaction"]
    ids = [e["id"] for e in build_context_entries(entries)]
    assert ids == ["c1", "a1", "u2", "e2", "s3", "u3", "e3"]
    messages = build_session_context(entries)["messages"]
    assert [m["role"] for m in messages] == ["system", "compactionSummary", "assistant", "user", "system", "user"]
    assert messages[0]["content"] == "snap"
    assert messages[2]["content"] == [{"type": "text", "text": "A-ED"}]
    assert "ED" not in json.dumps(messages).replace("ED2", "").replace("A-ED", "")


def test_omitting_the_compaction_drops_summary_and_snapshot() -> None:
    messages = build_session_context(CASES["omit_compaction"])["messages"]
    assert all(m["role"] not in ("compactionSummary",) for m in messages)
    assert all(m.get("content") != "snap" for m in messages)


def test_last_edit_wins_and_null_omits() -> None:
    entries = [
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "secret", "timestamp": 1}},
        {"type": "context_edit", "id": "e1", "parentId": "u", "timestamp": "2026-01-01T00:00:00Z", "targetId": "u", "replacement": {"content": "A"}},
        {"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:00Z", "targetId": "u", "replacement": None},
    ]
    assert build_session_context(entries)["messages"] == []
    assert collect_context_edits(entries) == {"u": None}
    assert build_session_context(entries[:2])["messages"][0]["content"] == "A"
    # the original is untouched
    assert entries[0]["message"]["content"] == "secret"


def test_edit_without_replacement_is_ignored_not_fatal() -> None:
    """pi throws on an edit with no ``replacement`` key (no context at all);
    we ignore that edit."""
    entries = [
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "x", "timestamp": 1}},
        {"type": "context_edit", "id": "e1", "parentId": "u", "timestamp": "2026-01-01T00:00:00Z", "targetId": "u"},
        {"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:00Z", "targetId": ["u"], "replacement": None},
    ]
    assert build_session_context(entries)["messages"][0]["content"] == "x"


def test_apply_context_edit_wraps_strings_for_assistant_and_tool_results() -> None:
    msgs = [{"role": "assistant", "content": []}, {"role": "toolResult", "content": []}, {"role": "user", "content": []},
            {"role": "custom", "content": []}, {"role": "bashExecution", "command": "ls"}]
    out = apply_context_edit(msgs, {"content": "S"})
    assert [m.get("content") for m in out] == [[{"type": "text", "text": "S"}]] * 2 + ["S", "S", None]
    assert out[4] is msgs[4]


def test_system_replay_and_text() -> None:
    p = build_session_projection(CASES["edits"])
    system = get_current_system_message(p["messages"])
    assert system == {"role": "system", "content": "extra", "sections": {"preamble": "P", "x": "X"}, "timestamp": 1}
    assert system_message_text(system) == "extra\n\nP\n\nX"
    assert get_current_system_message([{"role": "user", "content": "x"}]) is None


def test_projected_estimate_distrusts_usage_before_an_edit() -> None:
    """Issue: usage reported before the latest compaction or edit is never trusted."""
    entries = CASES["stale_usage"]
    p = build_session_projection(entries)
    assert estimate_context_tokens(p["messages"])["usageTokens"] == 190000
    projected = estimate_projected_context_tokens(p, entries)
    assert projected["lastUsageIndex"] is None
    assert projected["tokens"] == sum(estimate_tokens(m) for m in p["messages"])
    assert projected["tokens"] < 100


# One record of every entry type (a new type must add one here), each in the
# shapes the context fast path distinguishes.
_SAMPLES_BY_TYPE: dict[str, list[dict]] = {
    "message": [
        {"message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"message": {"role": "assistant", "content": None, "provider": "p", "model": "m", "timestamp": 2}},
        {"message": {"role": "toolResult", "toolCallId": "c", "toolName": "t", "timestamp": 3}},
        {"message": {"role": "system", "content": None, "timestamp": 4}},
        {"message": "not an object"},
    ],
    "thinking_level_change": [{"thinkingLevel": "high"}],
    "model_change": [{"provider": "p", "modelId": "m"}],
    "compaction": [{"summary": "s", "firstKeptEntryId": "missing", "tokensBefore": 5}],
    "branch_summary": [{"summary": "b", "fromId": "x"}, {"summary": "", "fromId": "x"}],
    "custom": [{"customType": "k", "data": {"a": 1}}],
    "custom_message": [{"customType": "k", "content": "shown", "display": True}, {"customType": "k", "content": None}],
    "label": [{"targetId": "e0", "label": "L"}],
    "session_info": [{"name": "n"}],
    "context_edit": [{"targetId": "e0", "replacement": {"kind": "omit"}}],
    "usage": [{"usage": {"input": 1, "output": 2}}],
}


def _sample_paths():
    for etype, samples in _SAMPLES_BY_TYPE.items():
        for k, fields in enumerate(samples):
            entry = {"type": etype, "id": f"x{k}", "parentId": "e0", "timestamp": "2025-01-01T00:00:00.000Z", **fields}
            first = {"type": "message", "id": "e0", "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z",
                     "message": {"role": "user", "content": "first", "timestamp": 0}}
            yield pytest.param([first, entry], id=f"{etype}-{k}-after")
            leading = {**entry, "parentId": None}
            yield pytest.param([leading, {**first, "parentId": leading["id"]}], id=f"{etype}-{k}-leading")


def test_context_fast_path_samples_cover_every_entry_type():
    from pi_session.entries import ENTRY_TYPES

    assert set(_SAMPLES_BY_TYPE) == set(ENTRY_TYPES)


@pytest.mark.parametrize("path", list(_sample_paths()))
def test_context_fast_path_agrees_with_descriptors(path):
    """context_from_path's one-pass messages equal the descriptors' context
    contributions (entry_messages, after edits) for every entry type."""
    from pi_session.session.context import context_from_path, projection_from_path

    assert context_from_path(path)["messages"] == projection_from_path(path)["messages"]
