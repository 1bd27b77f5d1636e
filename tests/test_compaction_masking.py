"""`compact --strategy mask|both` and `eval-compaction --strategy`: old tool
outputs and long tool-call arguments replaced through pi 1.6 context edits
by one-line notes, the session keeping every byte; pi 1.6 (the oracle) reads
the masked context as we build it."""

from __future__ import annotations

import json

from pi_session.compaction import prepare_compaction
from pi_session.compaction.masking import MASK_MIN_CHARS, masked_context, plan_masking
from pi_session.manager.session_manager import SessionManager
from pi_session.session.settings import CompactionSettings

BIG = "\n".join(f"line {n}: " + "x" * 60 for n in range(200))  # ~14,000 characters


def _msg(role, content, **extra):
    return {"role": role, "content": content, "timestamp": 1764504000000, **extra}


def build(tmp_path, turns=12):
    """A session: each turn a request, a read of a big file, a write with a
    big content argument, a short bash output and a reply."""
    sm = SessionManager.create("/work/project", tmp_path / "sessions")
    for t in range(turns):
        sm.append_message(_msg("user", [{"type": "text", "text": f"Step {t}: rework module_{t}.py"}]))
        sm.append_message(_msg("assistant", [{"type": "toolCall", "id": f"r{t}", "name": "read", "arguments": {"path": f"src/module_{t}.py"}}], stopReason="toolUse"))
        sm.append_message(_msg("toolResult", [{"type": "text", "text": BIG}], toolCallId=f"r{t}", toolName="read", isError=False))
        sm.append_message(_msg("assistant", [{"type": "text", "text": "Writing it."}, {"type": "toolCall", "id": f"w{t}", "name": "write", "arguments": {"path": f"src/module_{t}.py", "content": BIG}}], stopReason="toolUse"))
        sm.append_message(_msg("toolResult", [{"type": "text", "text": "ok"}], toolCallId=f"w{t}", toolName="write", isError=False))
        sm.append_message(_msg("assistant", [{"type": "toolCall", "id": f"b{t}", "name": "bash", "arguments": {"command": "make test"}}], stopReason="toolUse"))
        sm.append_message(_msg("toolResult", [{"type": "text", "text": "3 passed"}], toolCallId=f"b{t}", toolName="bash", isError=False))
        sm.append_message(_msg("assistant", [{"type": "text", "text": f"module_{t}.py is reworked; its tests pass."}], stopReason="stop"))
    return sm.get_session_file()


def entries_of(path):
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def test_plan_masks_big_outputs_and_arguments_outside_the_kept_window(tmp_path):
    f = build(tmp_path)
    path = SessionManager.open(f, read_only=True).get_branch()
    prep = prepare_compaction(path, CompactionSettings(True, 16384, 8000))
    edits = plan_masking(prep, path)
    kept_from = next(n for n, e in enumerate(path) if e["id"] == prep.first_kept_entry_id)
    ids = {e["id"]: n for n, e in enumerate(path)}
    assert edits and all(ids[e.target_id] < kept_from for e in edits)  # the kept window is untouched
    assert {e.role for e in edits} == {"toolResult", "assistant"}
    by_id = {e["id"]: e for e in path}
    for e in edits:
        if e.role == "toolResult":
            (block,) = e.replacement["content"]
            assert block["text"] == f"[read output masked to save context: {len(BIG):,} characters (~{e.tokens_before:,} tokens); the session keeps it whole in entry {e.target_id}]"
            assert "\n" not in block["text"]
        else:
            call = next(b for b in e.replacement["content"] if b.get("type") == "toolCall")
            assert call["arguments"]["path"].startswith("src/module_")  # the path stays
            assert call["arguments"]["content"].startswith(f"[argument masked to save context: {len(BIG):,} characters")
            assert call["id"] == next(b for b in by_id[e.target_id]["message"]["content"] if b.get("type") == "toolCall")["id"]
            assert e.replacement["content"][0] == {"type": "text", "text": "Writing it."}
        assert e.tokens_after < e.tokens_before
    # the short outputs ("ok", "3 passed") are not masked
    assert not [e for e in edits if len(str(by_id[e.target_id]["message"]["content"])) < MASK_MIN_CHARS]
    context = masked_context(path, edits)
    assert len(context) == len(SessionManager.open(f, read_only=True).build_session_context()["messages"])


def test_cli_mask_appends_context_edits_and_keeps_every_byte(cli, tmp_path, oracle):
    f = build(tmp_path)
    before = open(f, "rb").read()
    res = cli("compact", str(f), "--strategy", "mask", "--keep-recent-tokens", "8000", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["strategy"] == "mask" and data["editIds"] and data["tokensAfter"] < data["tokensBefore"] / 2
    after = open(f, "rb").read()
    assert after.startswith(before)  # append-only: every original line stays, byte for byte
    new = entries_of(f)[len(entries_of_bytes(before)) :]
    assert [e["type"] for e in new] == ["context_edit"] * len(data["editIds"])
    assert [e["id"] for e in new] == data["editIds"]
    # pi 1.6 reads the masked context exactly as we build it
    ours = SessionManager.open(f, read_only=True).build_session_context()["messages"]
    theirs = json.loads(oracle("context", str(f)))["messages"]
    assert theirs == json.loads(json.dumps(ours))
    assert sum("masked to save context" in json.dumps(m) for m in theirs) == len(data["editIds"])
    # the kept messages are verbatim, and a second run finds nothing more to mask
    text = cli("compact", str(f), "--strategy", "mask", "--keep-recent-tokens", "8000")
    assert text.returncode == 0 and "Nothing to mask" in text.stdout
    assert cli("check", str(f)).returncode == 0


def entries_of_bytes(raw):
    return [line for line in raw.decode("utf-8").splitlines() if line.strip()]


def test_cli_both_masks_then_summarizes(cli, tmp_path):
    f = build(tmp_path)
    res = cli("compact", str(f), "--strategy", "both", "--keep-recent-tokens", "8000", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["mask"]["editIds"] and data["summarizer"] == "extractive"
    types = [e["type"] for e in entries_of(f)]
    assert types[-1] == "compaction" and types[-1 - len(data["mask"]["editIds"]) : -1] == ["context_edit"] * len(data["mask"]["editIds"])
    # the summary was written from the masked messages: no 14 KB file body in it
    assert "line 199: " not in data["summary"]
    human = cli("compact", str(build(tmp_path / "two")), "--strategy", "both", "--keep-recent-tokens", "8000")
    assert human.returncode == 0 and "Masked " in human.stdout and "Compacted " in human.stdout


def test_cli_rejects_an_unknown_strategy(cli, tmp_path):
    f = build(tmp_path, turns=2)
    before = open(f, "rb").read()
    res = cli("compact", str(f), "--strategy", "trim")
    assert res.returncode != 0 and "--strategy must be one of summary, mask, both" in res.stderr
    assert "Traceback" not in res.stderr and open(f, "rb").read() == before


def test_eval_compaction_compares_the_strategies(cli, tmp_path):
    f = build(tmp_path)
    before = open(f, "rb").read()
    out = {}
    for strategy in ("summary", "mask", "both"):
        res = cli("eval-compaction", str(f), "--keep-recent-tokens", "8000", "--strategy", strategy, "--json")
        assert res.returncode == 0, res.stderr
        out[strategy] = json.loads(res.stdout)
        assert out[strategy]["strategy"] == strategy
    assert open(f, "rb").read() == before  # evaluation never writes
    assert out["mask"]["summaryTokens"] == 0 and out["mask"]["probes"]["answeredBySummary"] == 0
    # the same probes (from the unmasked zone) score every strategy
    for strategy in ("mask", "both"):
        assert [r["expected"] for r in out[strategy]["results"]] == [r["expected"] for r in out["summary"]["results"]]
    # masking keeps every message, so it keeps more tokens than a summary
    assert out["summary"]["tokensAfter"] < out["mask"]["tokensAfter"] < out["mask"]["tokensBefore"]
    assert out["mask"]["recall"]["artifact"]["recall"] == 1.0
    text = cli("eval-compaction", str(f), "--keep-recent-tokens", "8000", "--strategy", "mask")
    assert text.returncode == 0 and "Strategy: mask (no summary)" in text.stdout and "Compression: " in text.stdout
