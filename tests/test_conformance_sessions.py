"""Conformance: context and tree at many leaves equal pi's, byte for byte.

Goldens in tests/goldens/sessions/ come from pi-oracle (regenerate with
tests/tools/make_session_goldens.py): generated sessions (gen-*), sessions pi
itself wrote through random SessionManager scripts (pi-*), and pi's v1
fixtures (fixture-*, messages only since migration ids are random).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, GOLDENS
from shared_paths import shared_missing
from pi_session import SessionManager
from pi_session.cli.render import tree_json
from pi_session.core.jsonio import dumps_pretty

SESSIONS = GOLDENS / "sessions"
NAMES = sorted(p.name[: -len(".context.json")] for p in SESSIONS.glob("*.context.json"))


def _session_path(name: str) -> Path:
    if name.startswith("fixture-"):
        return FIXTURES / f"{name[len('fixture-'):]}.jsonl"
    return SESSIONS / f"{name}.jsonl"


def _context_output(manager: SessionManager, leaf: str, with_leaf_id: bool) -> dict:
    if leaf == "null":
        manager.reset_leaf()
    elif leaf != "<leaf>":
        manager.branch(leaf)
    ctx = manager.build_session_context()
    out: dict = {"leafId": manager.get_leaf_id()} if with_leaf_id else {}
    if "thinkingLevel" in ctx:
        out["thinkingLevel"] = ctx["thinkingLevel"]
    out["model"] = ctx["model"]
    out["messages"] = ctx["messages"]
    return out


def test_goldens_present():
    assert len(NAMES) >= 18, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_context_matches_pi(name):
    path = _session_path(name)
    if not path.exists():
        pytest.skip(shared_missing(path) or "")
    goldens = json.loads((SESSIONS / f"{name}.context.json").read_text())
    assert "<leaf>" in goldens and "null" in goldens
    stable_ids = not name.startswith("fixture-")
    for leaf, expected in goldens.items():
        manager = SessionManager.open(path, read_only=True)
        ours = _context_output(manager, leaf, stable_ids)
        # same values, same key order, same number formatting
        assert dumps_pretty(ours) == dumps_pretty(expected), f"{name} at leaf {leaf}"


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("fixture-")])
def test_tree_matches_pi(name):
    manager = SessionManager.open(SESSIONS / f"{name}.jsonl", read_only=True)
    expected = (SESSIONS / f"{name}.tree.json").read_text()
    assert tree_json(manager.get_tree(), manager.get_leaf_id()) + "\n" == expected


def test_fixture_contexts_through_cli(cli, tmp_path):
    """The real console script on pi's v1 fixtures: same messages as pi, file untouched."""
    for name in ("before-compaction", "large-session"):
        src = FIXTURES / f"{name}.jsonl"
        if not src.exists():
            pytest.skip(shared_missing(src) or "")
        copy = tmp_path / src.name
        copy.write_bytes(src.read_bytes())
        result = cli("context", str(copy), "--json")
        assert result.returncode == 0, result.stderr
        expected = json.loads((SESSIONS / f"fixture-{name}.context.json").read_text())["<leaf>"]
        ours = json.loads(result.stdout)
        ours.pop("leafId")
        assert ours == expected
        assert copy.read_bytes() == src.read_bytes()


def test_pi_session_cli_context_is_byte_identical(cli):
    """`pi-session context --json` prints exactly the oracle's text."""
    name = "pi-0"
    goldens = json.loads((SESSIONS / f"{name}.context.json").read_text())
    for leaf in list(goldens)[:4]:
        args = ["context", str(SESSIONS / f"{name}.jsonl"), "--json"]
        if leaf != "<leaf>":
            args += ["--leaf", leaf]
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert result.stdout == dumps_pretty(goldens[leaf]) + "\n"


@pytest.mark.oracle
def test_live_oracle_on_a_file_pi_session_wrote(oracle, tmp_path):
    """A session written by pi-session opens in pi with the same context and entries."""
    sm = SessionManager.create("/work/project", tmp_path)
    u = sm.append_message({"role": "user", "content": "hello", "timestamp": 1})
    sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "api": "a", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": 2})
    sm.append_label_change(u, "first")
    sm.append_thinking_level_change("high")
    sm.branch(u)
    sm.append_compaction("sum", u, 10, {"readFiles": [], "modifiedFiles": ["x"]})
    sm.branch_with_summary(u, "left", {"readFiles": []}, True)
    sm.append_session_info("named")
    path = sm.get_session_file()
    theirs = json.loads(oracle("entries", str(path)))
    assert theirs["entries"] == sm.get_entries()
    assert theirs["header"] == sm.get_header()
    ctx = json.loads(oracle("context", str(path)))
    ours = sm.build_session_context()
    assert ctx["messages"] == ours["messages"] and ctx["model"] == ours["model"]
