"""issue 27 item 4: ``pi-session info`` shows what pi's ``/session`` shows
(messages, tool calls and results, tokens, cost), on a real pi session,
through the real console script."""

from __future__ import annotations

import json

from pi_session import read_session_file


def pi_session_stats(path):
    """pi 1.6's ``AgentSession.getSessionStats`` over the file's entries,
    written out here as the expectation (every entry, all branches)."""
    out = {"userMessages": 0, "assistantMessages": 0, "toolCalls": 0, "toolResults": 0, "totalMessages": 0}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0

    def add(usage):
        nonlocal cost
        for key in tokens:
            tokens[key] += usage[key]
        cost += usage["cost"]["total"]

    for entry in read_session_file(path).entries:
        if entry["type"] == "usage" or (entry["type"] in ("branch_summary", "compaction") and entry.get("usage")):
            add(entry["usage"])
        if entry["type"] != "message":
            continue
        out["totalMessages"] += 1
        message = entry["message"]
        if message["role"] == "user":
            out["userMessages"] += 1
        elif message["role"] == "toolResult":
            out["toolResults"] += 1
            if message.get("usage"):
                add(message["usage"])
        elif message["role"] == "assistant":
            out["assistantMessages"] += 1
            out["toolCalls"] += sum(1 for block in message["content"] if block["type"] == "toolCall")
            add(message["usage"])
    return {**out, "tokens": {**tokens, "total": sum(tokens.values())}, "cost": cost}


def test_info_shows_tokens_cost_and_tool_calls_as_pi_session_does(cli, fixture_copy):
    path = fixture_copy("large-session.jsonl")
    expected = pi_session_stats(path)
    assert expected["toolCalls"] > 100 and expected["cost"] > 0 and expected["tokens"]["cacheRead"] > 0
    data = json.loads(cli("info", str(path), "--json").stdout)
    for key in ("userMessages", "assistantMessages", "toolCalls", "toolResults", "totalMessages", "tokens"):
        assert data[key] == expected[key], key
    assert abs(data["cost"] - expected["cost"]) < 1e-9
    result = cli("info", str(path))
    assert result.returncode == 0, result.stderr
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in result.stdout.splitlines() if line.strip()}
    e, t = expected, expected["tokens"]
    assert rows["messages"] == f"{e['totalMessages']:,} (user {e['userMessages']:,}, assistant {e['assistantMessages']:,})"
    assert rows["tools"] == f"{e['toolCalls']:,} calls, {e['toolResults']:,} results"
    # pi's usage fields, in the words the HTML viewer's header uses too
    assert rows["tokens"] == (f"input {t['input']:,}, cache read {t['cacheRead']:,}, cache write {t['cacheWrite']:,}, "
                              f"output {t['output']:,}, total {t['total']:,}")
    assert rows["cost"] == f"${e['cost']:.3f}"


def test_info_lists_ten_labels_and_says_how_many_more(cli, tmp_path):
    """A session with many labels: ``info`` shows the first ten and the
    count of the rest on its line (it once printed hundreds on one line);
    ``--json`` has them all."""
    import orjson

    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0002", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    lines = [header, {"type": "message", "id": "m0", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": "hi", "timestamp": 1}}]
    for i in range(25):
        lines.append({"type": "label", "id": f"l{i:02d}", "parentId": lines[-1]["id"], "timestamp": "2026-01-01T00:00:02.000Z",
                      "targetId": "m0" if i == 0 else f"l{i - 1:02d}", "label": f"mark{i}"})
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    out = cli("info", str(path)).stdout
    (row,) = [line for line in out.splitlines() if line.startswith("labels")]
    assert row.count("=") == 10 and "… 15 more (--json lists all)" in row
    assert len(json.loads(cli("info", str(path), "--json").stdout)["labels"]) == 25
