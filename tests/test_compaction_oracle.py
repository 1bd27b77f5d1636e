"""Differential tests against the live pi oracle (skipped without node)."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sessiongen
from compaction_golden_util import ORACLE, as_oracle_json, js_output_text, oracle_available, ours
from pi_session.compaction import serialize_conversation

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(not oracle_available(), reason="pi-oracle or node not available"),
]


def run_oracle(cmd, file, opts):
    argv = [str(ORACLE), cmd, str(file)]
    for key, value in opts.items():
        argv += [f"--{key}", str(value)]
    proc = subprocess.run(argv, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    text = proc.stdout.decode("utf-8", "replace")
    return text if cmd == "serialize" else json.loads(text)


SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SLOW
@given(seed=st.integers(0, 2**32 - 1), keep=st.integers(0, 6000), reserve=st.integers(0, 40000))
def test_prepare_and_cut_match_oracle(tmp_path_factory, seed, keep, reserve):
    header, entries = sessiongen.generate_session(seed)
    f = sessiongen.write_session(tmp_path_factory.mktemp("s") / "s.jsonl", header, entries)
    for cmd, opts in (("prepare", {"keep": keep, "reserve": reserve}), ("cut", {"keep": keep})):
        assert as_oracle_json(ours(cmd, opts, entries)) == run_oracle(cmd, f, opts), (seed, cmd, opts)


@SLOW
@given(seed=st.integers(0, 2**32 - 1), window=st.integers(0, 100000))
def test_tokens_and_serialize_match_oracle(tmp_path_factory, seed, window):
    header, entries = sessiongen.generate_session(seed)
    f = sessiongen.write_session(tmp_path_factory.mktemp("s") / "s.jsonl", header, entries)
    opts = {"window": window, "reserve": 16384}
    assert as_oracle_json(ours("tokens", opts, entries)) == run_oracle("tokens", f, opts)
    converted = run_oracle("convert", f, {})
    assert js_output_text(serialize_conversation(converted)) == run_oracle("serialize", f, {})


@SLOW
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_branch_summary_prep_matches_oracle(tmp_path_factory, seed, data):
    header, entries = sessiongen.generate_session(seed)
    f = sessiongen.write_session(tmp_path_factory.mktemp("s") / "s.jsonl", header, entries)
    ids = [e["id"] for e in entries]
    opts = {
        "to": data.draw(st.sampled_from(ids)),
        "from": data.draw(st.sampled_from(ids)),
        "budget": data.draw(st.integers(0, 3000)),
    }
    assert as_oracle_json(ours("branch-summary-prep", opts, entries)) == run_oracle("branch-summary-prep", f, opts)
