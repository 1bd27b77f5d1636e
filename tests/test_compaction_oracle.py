"""Differential tests against the live pi oracle (pi 1.6.0 unless
PI_ORACLE_PI says otherwise; skipped without node).

Each example generates a session (half of them with the pi 1.6 entries of
``compaction_gen16.enrich``) and runs every compaction command on it in one
``pi-oracle batch`` process."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sessiongen
from compaction_gen16 import enrich
from compaction_golden_util import as_oracle_json, js_output_text, ours
from conftest import run_oracle
from shared_paths import needs_oracle
from pi_session.compaction import serialize_conversation

pytestmark = [
    pytest.mark.oracle,
    needs_oracle,
]

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _argv(cmd, file, opts):
    argv = [cmd, str(file)]
    for key, value in opts.items():
        argv += [f"--{key}", str(value)]
    return argv


def _batch(tmp, calls):
    spec = tmp / "calls.json"
    spec.write_text(json.dumps([_argv(*c) for c in calls]))
    results = json.loads(run_oracle("batch", str(spec)))
    out = []
    for res in results:
        assert "error" not in res, res
        out.append(res["text"] if "text" in res else res["json"])
    return out


@SLOW
@given(
    seed=st.integers(0, 2**32 - 1),
    pi16=st.booleans(),
    keep=st.integers(0, 6000),
    reserve=st.integers(0, 40000),
    window=st.integers(0, 100000),
    data=st.data(),
)
def test_compaction_commands_match_oracle(tmp_path_factory, seed, pi16, keep, reserve, window, data):
    header, entries = sessiongen.generate_session(seed)
    if pi16:
        header, entries = enrich(seed, header, entries)
    tmp = tmp_path_factory.mktemp("s")
    f = sessiongen.write_session(tmp / "s.jsonl", header, entries)
    ids = [e["id"] for e in entries]
    calls = [
        ("prepare", f, {"keep": keep, "reserve": reserve}),
        ("cut", f, {"keep": keep}),
        ("tokens", f, {"window": window, "reserve": 16384}),
        ("convert", f, {}),
        ("serialize", f, {}),
        ("branch-summary-prep", f, {"to": data.draw(st.sampled_from(ids)), "from": data.draw(st.sampled_from(ids)),
                                    "budget": data.draw(st.integers(0, 3000))}),
    ]
    answers = _batch(tmp, calls)
    for (cmd, _f, opts), expected in zip(calls, answers):
        if cmd == "convert":
            continue
        if cmd == "serialize":
            converted = answers[3]
            assert js_output_text(serialize_conversation(converted)) == expected, (seed, pi16)
            continue
        assert as_oracle_json(ours(cmd, opts, entries)) == expected, (seed, pi16, cmd, opts)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_cut_around_tool_calls_matches_oracle(tmp_path_factory, seed):
    # small sessions of tool work (ids reused, results late or missing,
    # context edits): pi's plan is ours with keep_tool_pairs=False, and with
    # the rule on ours differs only where pi's cut separates a kept result
    # from its summarized call (tests/test_compaction_tool_pairs.py)
    from compaction_gen16 import tool_pairs_session
    from pi_session.compaction import prepare_compaction
    from pi_session.session.settings import CompactionSettings
    from pi_session.session.tree import SessionTree

    tmp = tmp_path_factory.mktemp("p")
    calls = []
    sessions = []
    for n in range(8):
        header, entries = tool_pairs_session(seed + n)
        f = sessiongen.write_session(tmp / f"s{n}.jsonl", header, entries)
        sessions.append(entries)
        calls += [("prepare", f, {"keep": keep, "reserve": 16384}) for keep in (20, 300, 1200)]
    answers = _batch(tmp, calls)
    for (_cmd, f, opts), expected in zip(calls, answers):
        entries = sessions[int(f.stem[1:])]
        path = SessionTree(entries).branch(entries[-1]["id"])
        exact = prepare_compaction(path, CompactionSettings(True, 16384, opts["keep"]), keep_tool_pairs=False)
        assert as_oracle_json(exact.to_json() if exact else None) == expected, (seed, f.stem, opts)
