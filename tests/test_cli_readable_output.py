"""What the console script prints reads as the conversation and its numbers
agree: the Markdown export cuts long tool output (``--full-outputs`` keeps
it) and lists a summary's files as lists; ``info`` and the HTML viewer's
header name the token counts alike; the header's duration counts only the
conversation; ``compact`` (and ``--dry-run``) reports the context before
and after as estimates of one kind and labels pi's usage-based
``tokensBefore`` apart. Real console script, real files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson

HEADER = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0123", "timestamp": "2026-01-01T09:00:00.000Z", "cwd": "/work/app"}


def _usage(inp: int, out: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write, "totalTokens": inp + out + read + write,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.01}}


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [HEADER, *entries]))
    return path


def _chain(*entries: dict[str, Any]) -> list[dict[str, Any]]:
    """``entries`` with ids e0, e1, ... each the child of the one before."""
    out = []
    for i, e in enumerate(entries):
        out.append({"type": e.pop("type", "message"), "id": f"e{i:07d}", "parentId": f"e{i - 1:07d}" if i else None, **e})
    return out


def _user(text: str, ts: str) -> dict[str, Any]:
    return {"timestamp": ts, "message": {"role": "user", "content": text, "timestamp": 0}}


def _assistant(content: list[dict[str, Any]], ts: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"timestamp": ts, "message": {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                                         "model": "claude-x", "usage": usage or _usage(100, 10), "stopReason": "toolUse", "timestamp": 0}}


def _read_session(tmp_path: Path, lines: int) -> Path:
    output = "\n".join(f"line {i:04d} of the file" for i in range(1, lines + 1))
    summary = ("## Goal\nFix the parser.\n\n<read-files>\nsrc/parser.py\nsrc/lexer.py\n</read-files>\n\n"
               "<modified-files>\nsrc/parser.py\n</modified-files>")
    entries = _chain(
        _user("read the parser", "2026-01-01T09:00:01.000Z"),
        _assistant([{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/parser.py"}}], "2026-01-01T09:00:02.000Z"),
        {"timestamp": "2026-01-01T09:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "read", "content": [{"type": "text", "text": output}], "isError": False, "timestamp": 0}},
        {"type": "compaction", "timestamp": "2026-01-01T09:00:04.000Z", "summary": summary, "firstKeptEntryId": "e0000002", "tokensBefore": 5000},
        _user("thanks", "2026-01-01T09:00:05.000Z"),
    )
    return _write(tmp_path / "read.jsonl", entries)


def test_markdown_export_cuts_long_tool_output_unless_full_outputs(cli, tmp_path):
    path = _read_session(tmp_path, 1550)
    out = cli("export", str(path), "--format", "md", "-o", "-", "--allow-secrets")
    assert out.returncode == 0, out.stderr
    md = out.stdout
    assert "line 0001 of the file" in md and "line 0020 of the file" in md
    assert "line 0021 of the file" not in md and "line 1540 of the file" not in md
    assert "line 1541 of the file" in md and "line 1550 of the file" in md
    assert "… 1,520 lines omitted (--full-outputs keeps them) …" in md
    full = cli("export", str(path), "--format", "md", "-o", "-", "--allow-secrets", "--full-outputs").stdout
    assert all(f"line {i:04d} of the file" in full for i in range(1, 1551))
    assert "omitted" not in full
    short = cli("export", str(_read_session(tmp_path, 30)), "--format", "md", "-o", "-", "--allow-secrets").stdout
    assert "line 0015 of the file" in short and "omitted" not in short


def test_markdown_export_lists_a_summarys_files(cli, tmp_path):
    from markdown_it import MarkdownIt

    md = cli("export", str(_read_session(tmp_path, 3)), "--format", "md", "-o", "-", "--allow-secrets").stdout
    assert "&lt;read-files&gt;" not in md and "<read-files>" not in md
    html = MarkdownIt("commonmark").render(md)
    assert "<p><strong>Read files:</strong></p>\n<ul>\n<li><code>src/parser.py</code></li>\n<li><code>src/lexer.py</code></li>\n</ul>" in html
    assert "<p><strong>Modified files:</strong></p>\n<ul>\n<li><code>src/parser.py</code></li>\n</ul>" in html
    assert "<h4>Goal</h4>" in html  # the summary itself stays prose


def _usage_session(tmp_path: Path) -> Path:
    entries = _chain(
        _user("hello", "2025-01-01T09:00:00.000Z"),
        _assistant([{"type": "text", "text": "hi"}], "2025-01-01T09:30:00.000Z", _usage(1200, 300, 30000, 500)),
        _user("more", "2025-01-01T10:00:00.000Z"),
        _assistant([{"type": "text", "text": "done"}], "2025-01-01T11:15:00.000Z", _usage(50, 40, 31000, 0)),
        # a label and a context edit added a year later: not session time
        {"type": "label", "timestamp": "2026-01-01T12:00:00.000Z", "targetId": "e0000001", "label": "later"},
        {"type": "context_edit", "timestamp": "2026-01-01T12:00:01.000Z", "targetId": "e0000002", "replacement": {"content": "MORE"}},
    )
    return _write(tmp_path / "usage.jsonl", entries)


def test_info_and_the_page_name_tokens_alike_and_duration_counts_messages(cli, tmp_path):
    path = _usage_session(tmp_path)
    info = cli("info", str(path))
    assert info.returncode == 0, info.stderr
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in info.stdout.splitlines() if line.strip()}
    expected = "input 1,250, cache read 61,000, cache write 500, output 340, total 63,090"
    assert rows["tokens"] == expected
    page = tmp_path / "page.html"
    done = cli("export", str(path), "-o", str(page), "--allow-secrets")
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert f"<dt>tokens</dt><dd>{expected}</dd>" in html
    assert "<dt>duration</dt><dd>2h 15m</dd>" in html


def _row(stdout: str, name: str) -> str | None:
    """The value of a dry run's table row ``name`` (None: no such row)."""
    for line in stdout.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "│"):
            return line.split("│", 1)[1].strip()
    return None


def _count(text: str) -> int:
    return int(re.search(r"~([\d,]+)", text)[1].replace(",", ""))


def _big_session(tmp_path: Path, name: str, *, usage: bool) -> Path:
    big = "word " * 4000
    entries = _chain(
        _user(big, "2025-01-01T09:00:00.000Z"),
        _assistant([{"type": "text", "text": big}], "2025-01-01T09:00:01.000Z", _usage(9000, 2000, 100000, 0)),
        _user(big, "2025-01-01T09:00:02.000Z"),
        _assistant([{"type": "text", "text": big}], "2025-01-01T09:00:03.000Z", _usage(9000, 2000, 110000, 0)),
        _user("and now " + big, "2025-01-01T09:00:04.000Z"),
    )
    if not usage:
        for e in entries:
            e["message"].pop("usage", None)
    return _write(tmp_path / name, entries)


def test_compact_reports_tokens_before_and_after_of_one_kind(cli, tmp_path):
    # the replies recorded 121,000 tokens of usage, far more than their text
    # holds: "before" and "after" are both estimates of the messages' text
    # (the estimates of what is summarized and kept add up to "before");
    # pi's usage-based tokensBefore is shown apart, labelled
    path = _big_session(tmp_path, "big.jsonl", usage=True)
    recorded = 9000 + 2000 + 110000
    trailing = json.loads(cli("tokens", str(path), "--json").stdout)["projected"]["trailingTokens"]
    out = cli("compact", str(path), "--dry-run", "--keep-recent-tokens", "2000")
    assert out.returncode == 0, out.stderr
    before = _count(_row(out.stdout, "tokens before"))
    assert _row(out.stdout, "tokens before") == f"~{before:,} (estimated from the messages' text)"
    parts = [_count(_row(out.stdout, "to summarize")), _count(_row(out.stdout, "kept verbatim"))]
    if _row(out.stdout, "split turn") is not None:
        parts.append(_count(_row(out.stdout, "split turn")))
    assert before == sum(parts) < recorded
    assert re.fullmatch(rf"{recorded + trailing:,}: {recorded:,} from the last reply's recorded usage \+ ~{trailing:,} estimated "
                        r"for the messages after it \(pi's count, which the compaction entry records\)", _row(out.stdout, "pi's tokensBefore"))
    assert "tokens before and after are both such estimates" in out.stdout
    done = cli("compact", str(path), "--keep-recent-tokens", "2000", "--provider", "extractive")
    assert done.returncode == 0, done.stderr
    m = re.search(r"Context: ~([\d,]+) → ~([\d,]+) tokens, both estimated from the messages' text", done.stdout)
    assert m is not None, done.stdout
    assert int(m[1].replace(",", "")) == before > int(m[2].replace(",", ""))
    assert f"The entry records pi's count as tokensBefore, {recorded + trailing:,}: {recorded:,} from the last reply's" in done.stdout
    entry = orjson.loads(path.read_bytes().splitlines()[-1])
    assert entry["type"] == "compaction" and entry["tokensBefore"] == recorded + trailing  # pi's wire value, as pi writes it
    # --json: the estimate beside pi's tokensBefore
    again = _big_session(tmp_path, "again.jsonl", usage=True)
    data = json.loads(cli("compact", str(again), "--keep-recent-tokens", "2000", "--provider", "extractive", "--json").stdout)
    assert data["estimatedTokensBefore"] == before and data["tokensBefore"] == recorded + trailing and data["tokensAfter"] < before


def test_compact_without_recorded_usage_shows_only_estimates(cli, tmp_path):
    plain = _big_session(tmp_path, "plain.jsonl", usage=False)
    out = cli("compact", str(plain), "--dry-run", "--keep-recent-tokens", "2000")
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"~[\d,]+ \(estimated from the messages' text\)", _row(out.stdout, "tokens before"))
    assert _row(out.stdout, "pi's tokensBefore") is None
    done = cli("compact", str(plain), "--keep-recent-tokens", "2000", "--provider", "extractive")
    assert done.returncode == 0, done.stderr
    assert "Context: ~" in done.stdout and "tokensBefore" not in done.stdout


def test_compact_of_the_demo_session_reports_estimates_and_the_recorded_usage_apart(cli, tmp_path):
    # the bundled example ends with a reply whose recorded usage (36,138)
    # is pi's tokensBefore; its messages' text is about 10k tokens
    demo = Path(__file__).resolve().parents[1] / "examples" / "demo-session.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(demo.read_bytes())
    done = cli("compact", str(path), "--keep-recent-tokens", "4000", "--provider", "extractive")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    m = re.fullmatch(r"Context: ~([\d,]+) → ~([\d,]+) tokens, both estimated from the messages' text \(about 4 characters a token\)\.", lines[1])
    assert m is not None, lines
    assert int(m[1].replace(",", "")) < 36138
    assert lines[2] == "The entry records pi's count as tokensBefore, 36,138, the last reply's recorded usage."
    assert orjson.loads(path.read_bytes().splitlines()[-1])["tokensBefore"] == 36138


def test_info_and_the_page_say_when_no_cost_was_recorded(cli, tmp_path):
    """Tokens without a recorded cost (an import, a model pi did not price)
    are not "$0.0000" on the page while ``usage`` prices them: both views
    say the cost is not recorded and where a price is found."""
    entries = _chain(
        _user("hello", "2025-01-01T09:00:00.000Z"),
        _assistant([{"type": "text", "text": "hi"}], "2025-01-01T09:00:01.000Z", _usage(1000, 200, 0, 0)),
    )
    for e in entries:
        if e["message"]["role"] == "assistant":
            e["message"]["usage"]["cost"]["total"] = 0
    path = _write(tmp_path / "unpriced.jsonl", entries)
    info = cli("info", str(path))
    assert info.returncode == 0, info.stderr
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in info.stdout.splitlines() if line.strip()}
    said = "not recorded in the session (`pi-session usage session` prices it offline)"
    assert rows["cost"] == said
    page = tmp_path / "page.html"
    assert cli("export", str(path), "-o", str(page), "--allow-secrets").returncode == 0
    html = page.read_text()
    assert f"<dt>cost</dt><dd>{said}</dd>" in html and "$0.0000" not in html
    priced = cli("info", str(_usage_session(tmp_path)))
    cost = next(line for line in priced.stdout.splitlines() if line.startswith("cost "))
    assert re.fullmatch(r"cost +\$0\.0\d0", cost), cost  # a recorded cost is shown as before
