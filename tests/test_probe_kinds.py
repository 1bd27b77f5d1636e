"""The four probe kinds of ``eval-compaction`` (exact identifiers, artifact
trail, continuation, decisions), recall per kind, compression ratio, and the
spread of a model summarizer over repeated runs (fake provider server)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fake_providers import fake_provider  # noqa: F401  (fixture)
from pi_session.cli.app import app
from pi_session.compaction.probes import (
    CATEGORIES,
    PROBE_CATEGORIES,
    answer_probe,
    compute_probes,
    identifier_sample,
)
from test_probes import CONSTRAINTS, assistant, call, result, user, write_planted

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


ZONE = [
    user("Port the exporter to https://docs.example.org/v3 and keep the batch size at 512."),
    assistant("I'll use orjson instead of json because it is faster.", call("e1", "edit", path="src/export/writer.py", oldText="a", newText="b"), stop="toolUse"),
    result("e1", "edit", "ok"),
    assistant(call("w1", "write", path="src/export/batch.py", content="x"), stop="toolUse"),
    result("w1", "write", "ok"),
    assistant(call("b1", "bash", command="make export-check"), stop="toolUse"),
    result("b1", "bash", "Error: schema v3 missing field 'ts'", True),
    assistant("Next:\n1. Add the ts field to the schema in src/export/schema.py\n2. Re-run make export-check"),
]


def probes_of(kind, probes):
    return [p for p in probes if p.kind == kind]


def test_every_kind_has_a_category_and_the_four_kinds_are_reported():
    assert set(PROBE_CATEGORIES.values()) <= set(CATEGORIES)
    assert CATEGORIES[:4] == ("identifiers", "artifact", "continuation", "decision")
    probes = compute_probes(ZONE, file_lists={"readFiles": [], "modifiedFiles": ["src/export/batch.py", "src/export/writer.py"]})
    assert {PROBE_CATEGORIES[p.kind] for p in probes} >= {"identifiers", "artifact", "continuation", "decision"}


def test_identifier_probes_are_the_zones_exact_strings_only():
    wanted = identifier_sample(ZONE)
    assert {"https://docs.example.org/v3", "512", "make export-check", "Error: schema v3 missing field 'ts'",
            "src/export/writer.py", "src/export/schema.py"} <= set(wanted)
    assert not any("kept_only" in w for w in wanted)  # nothing of the kept part is asked for
    probe = next(p for p in compute_probes(ZONE) if p.kind == "identifier" and p.expected == "make export-check")
    assert answer_probe(probe, "- Ran `make export-check`").where == "summary"
    assert answer_probe(probe, "- ran the export check with make").found is False  # a paraphrase is not the string
    assert answer_probe(probe, "nothing here", "bash(make export-check)").where == "kept"


def test_identifier_sample_is_spread_evenly_over_a_long_zone():
    zone = [user(" ".join(f"src/mod_{n:04d}.py" for n in range(900)))]
    wanted = identifier_sample(zone)
    assert len(wanted) == 400 and wanted[0] == "src/mod_0000.py" and "src/mod_0897.py" in wanted


def test_artifact_probe_needs_the_change_next_to_the_path():
    probes = compute_probes(ZONE, file_lists={"readFiles": [], "modifiedFiles": ["src/export/batch.py", "src/export/writer.py"]})
    arts = probes_of("artifact", probes)
    assert [(p.paths, p.expected) for p in arts] == [
        (["src/export/writer.py"], "src/export/writer.py (edited)"),
        (["src/export/batch.py"], "src/export/batch.py (wrote)"),
    ]
    bare = "<modified-files>\nsrc/export/batch.py\nsrc/export/writer.py\n</modified-files>"
    modified = probes_of("modified_files", probes)[0]
    assert answer_probe(modified, bare).found  # the file list answers "which files"
    assert not answer_probe(arts[0], bare).found  # ... not "which files, and how"
    assert answer_probe(arts[0], "- [x] Edited `src/export/writer.py`").found
    assert answer_probe(arts[1], "- Also changed: `src/export/writer.py` (edited), `src/export/batch.py` (written)").found
    assert not answer_probe(probes_of("artifact", compute_probes([
        assistant(call("e1", "edit", path="src/edit/fix.py", oldText="a", newText="b"), stop="toolUse"),
        result("e1", "edit", "ok"),
    ]))[0], "see src/edit/fix.py").found  # the change word inside the path does not count


def test_continuation_and_decision_probes():
    probes = compute_probes(ZONE)
    assert [p.expected for p in probes_of("decision", probes)] == ["I'll use orjson instead of json because it is faster."]
    nxt = probes_of("next_step", probes)
    assert nxt and "Add the ts field" in nxt[0].expected
    assert answer_probe(nxt[0], "## Next Steps\n1. Add the ts field to the schema in src/export/schema.py").found
    assert not answer_probe(nxt[0], "## Next Steps\n1. Write the release notes").found


def test_cli_reports_recall_per_kind_tokens_and_compression(tmp_path):
    f = write_planted(tmp_path)
    res = runner.invoke(app, ["eval-compaction", str(f), "--keep-recent-tokens", "1500", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data["recall"]) >= {"identifiers", "artifact", "continuation", "decision"}
    for cat, v in data["recall"].items():
        assert 0 <= v["answered"] <= v["total"] and v["recall"] == pytest.approx(v["answered"] / v["total"], abs=1e-4)
    assert data["recall"]["identifiers"]["recall"] >= 0.8 and data["recall"]["artifact"]["recall"] == 1.0
    assert data["compressionRatio"] == pytest.approx(data["tokensBefore"] / data["tokensAfter"], rel=1e-3)
    assert data["strategy"] == "summary" and "spread" not in data  # the offline summarizer runs once
    text = runner.invoke(app, ["eval-compaction", str(f), "--keep-recent-tokens", "1500"])
    assert text.exit_code == 0
    assert "Recall: identifiers " in text.stdout and "Compression: " in text.stdout
    assert "exact strings" in text.stdout  # the identifier probes are one row


def test_cli_model_summarizer_spread_over_three_runs(tmp_path, fake_provider):  # noqa: F811
    f = write_planted(tmp_path)
    replies = [
        "## Goal\n- Update handlers\n\n## Constraints & Preferences\n" + "".join(f"- {c}\n" for c in CONSTRAINTS),
        "## Goal\n- Update handlers\n\n## Constraints & Preferences\n- (none)\n",
        "## Goal\n- Update handlers\n\n## Constraints & Preferences\n" + f"- {CONSTRAINTS[0]}\n",
    ]
    seen = []

    def rotate(_record):
        fake_provider.reply_text = replies[len(seen) % len(replies)]
        seen.append(1)

    fake_provider.on_post = rotate
    env = {"OPENAI_API_KEY": "sk-test"}
    args = ["eval-compaction", str(f), "--keep-recent-tokens", "1500", "--provider", "openai", "--model", "test-model",
            "--base-url", fake_provider.openai_base_url, "--max-retries", "0"]
    res = runner.invoke(app, [*args, "--json"], env=env)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert len(fake_provider.posts()) in (3, 6) and len(data["runs"]) == 3  # 2 requests a run for a split turn
    spread = data["spread"]
    assert spread["runs"] == 3
    ctx = spread["recall"]["context"]
    assert ctx["min"] < ctx["max"]  # the runs differ, and the report shows by how much
    assert spread["answered"]["min"] < spread["answered"]["max"]
    seen.clear()
    text = runner.invoke(app, [*args, "--runs", "4"], env=env)
    assert text.exit_code == 0 and "Spread over 4 runs:" in text.stdout and "context recall " in text.stdout


@pytest.mark.parametrize("strategy", ["summary", "mask", "both"])
def test_context_before_and_after_are_both_estimates(tmp_path, strategy):
    """The compression ratio compares like with like: a recorded usage of
    400,000 input tokens (system prompt and tools included) on the last
    assistant message does not become the context's size before."""
    from pi_session.compaction.probes import estimated_context_tokens
    from pi_session import SessionManager

    f = write_planted(tmp_path)
    lines = f.read_text().splitlines()
    for i in range(len(lines) - 1, 0, -1):
        record = json.loads(lines[i])
        if record.get("type") == "message" and record["message"]["role"] == "assistant":
            record["message"]["usage"] = {
                "input": 400_000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 400_100,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            }
            lines[i] = json.dumps(record)
            break
    f.write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["eval-compaction", str(f), "--keep-recent-tokens", "1500", "--strategy", strategy, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    path = SessionManager.open(str(f)).get_branch()
    assert data["tokensBefore"] == estimated_context_tokens(path) < 400_000
    assert data["compressionRatio"] == pytest.approx(data["tokensBefore"] / data["tokensAfter"], rel=1e-3)
