"""SessionManager against the live pi 1.6 oracle (marked ``oracle``; skipped
without node): random scripts of SessionManager calls give the same results,
entries, context, projection and files as pi's ``ops``, and every file we
write opens in pi 1.6 with the same context and projection as in ours.

Each test makes one ``batch`` call (node + pi 1.6 start in about two seconds).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import ORACLE, oracle_missing
from opsgen import USER, ASSISTANT, normalize, random_ops16, run_ops
from pi_session import SessionManager
from pi_session.session.context import projection_to_json

pytestmark = pytest.mark.oracle


def batch16(calls: list[list[str]], tmp: Path) -> list[dict]:
    """Run pi-oracle calls under pi 1.6 in one process."""
    path = tmp / "calls.json"
    path.write_text(json.dumps(calls))
    env = {**os.environ, "PI_ORACLE_PI": "1.6.0"}
    for _ in range(3):  # node has been seen to exit with nothing written; retry
        out = subprocess.run([str(ORACLE), "batch", str(path)], check=True, capture_output=True, text=True, env=env, timeout=600).stdout
        if out.strip():
            break
    answers = json.loads(out)
    assert len(answers) == len(calls)
    return answers


@pytest.fixture(autouse=True)
def _need_oracle():
    reason = oracle_missing()
    if reason is not None:
        pytest.skip(reason)


@settings(max_examples=1, phases=[Phase.explicit, Phase.generate], deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seeds=st.lists(st.integers(min_value=0, max_value=2**32 - 1), min_size=16, max_size=16, unique=True))
def test_random_scripts_same_as_pi(seeds):
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        specs = [random_ops16(random.Random(seed), max_ops=40) for seed in seeds]
        calls = []
        for i, spec in enumerate(specs):
            (tmp / f"{i}.json").write_text(json.dumps(spec))
            calls.append(["ops", str(tmp / f"{i}.json")])
        answers = batch16(calls, tmp)
        for i, (spec, answer) in enumerate(zip(specs, answers)):
            assert "json" in answer, answer
            work = tmp / f"run{i}"
            work.mkdir()
            ours = run_ops(spec, work)
            assert normalize(ours) == normalize(answer["json"]), f"script {i} (seed {seeds[i]}): {json.dumps(spec)}"


def test_files_we_write_open_in_pi_with_the_same_context(tmp_path):
    """Sessions written by our manager (every 1.6 entry kind) read back in
    pi 1.6 with the same entries, context and projection, at the leaf and
    at every entry."""
    files: list[Path] = []
    for seed in range(12):
        spec = random_ops16(random.Random(7000 + seed), max_ops=40)
        spec["persist"] = True
        spec["ops"].append(["appendMessage", USER])
        work = tmp_path / f"s{seed}"
        work.mkdir()
        run_ops(spec, work)
        files.extend(sorted(work.glob("*.jsonl")))
    assert len(files) >= 12
    calls: list[list[str]] = []
    expected: list[tuple[str, object]] = []
    for f in files:
        sm = SessionManager.open(f, read_only=True)
        calls.append(["entries", str(f)])
        expected.append(("entries", sm.get_entries()))
        leaves = [None] + [e["id"] for e in sm.get_entries()][-6:]
        for leaf in leaves:
            if leaf is not None:
                sm.branch(leaf)
            else:
                sm = SessionManager.open(f, read_only=True)
            args = ["--leaf", leaf] if leaf is not None else []
            ctx = sm.build_session_context()
            calls.append(["context", str(f), *args])
            expected.append(("context", {"thinkingLevel": ctx["thinkingLevel"], "model": ctx["model"], "messages": ctx["messages"]}))
            calls.append(["projection", str(f), *args])
            expected.append(("projection", projection_to_json(sm.build_session_projection())))
    answers = batch16(calls, tmp_path)
    for call, (kind, ours), answer in zip(calls, expected, answers):
        assert "json" in answer, (call, answer)
        theirs = answer["json"]
        if kind == "entries":
            assert theirs["entries"] == ours, call
        elif kind == "context":
            assert {k: theirs[k] for k in ("thinkingLevel", "model", "messages")} == ours, call
        else:
            assert theirs["entries"] == ours, call


def test_pi_refuses_what_we_refuse_and_fills_empty_files(tmp_path):
    """Opening: a non-empty file without a header is refused by both (and
    left alone); an empty file gets a header at once in both."""
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"type":"message","id":"aaaaaaaa","parentId":null}\n')
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n \n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    answers = batch16([["entries", str(junk)], ["entries", str(blank)], ["entries", str(empty)]], tmp_path)
    assert "not a valid" in answers[0]["error"] and "not a valid" in answers[1]["error"]
    assert answers[2]["json"]["onDisk"][0]["type"] == "session" and len(answers[2]["json"]["onDisk"]) == 1
    for f in (junk, blank):
        before = f.read_bytes()
        with pytest.raises(Exception, match="not a pi session"):
            SessionManager.open(f)
        assert f.read_bytes() == before
    sm = SessionManager.open(empty)
    assert [json.loads(x)["type"] for x in empty.read_text().splitlines()] == ["session"]
    sm.append_message(ASSISTANT)
    assert len(empty.read_text().splitlines()) == 2
