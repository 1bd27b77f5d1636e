"""``pi-session import --from claude-code|codex`` end to end over the real
sessions in ../shared/fixtures/other-agents (read from there, never
copied), with the real console script: every imported session opens in
pi 1.6 (the oracle), pi's listing shows it under the source's cwd with its
first message and name, ``check`` finds nothing, and the context pi builds
converts to OpenAI and Anthropic requests the validators accept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_import_helpers import assert_claude_code_lossless, assert_codex_lossless, assert_messages_valid, assert_valid_for_pi_and_providers, session_entries
from conftest import ORACLE, SHARED, oracle_missing
from pi_session import build_session_context
from pi_session.entries.agent_messages import text_content

AGENTS = SHARED / "fixtures" / "other-agents"
SOURCES = {"claude-code": AGENTS / "claude-code" / "projects", "codex": AGENTS / "codex" / "sessions"}


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"needs {path} (the ../shared checkout beside this repository)")


def _import(cli, fmt: str, *extra: str):
    proc = cli("import", "--from", fmt, str(SOURCES[fmt]), "--json", *extra)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def _first_user_text(entries):
    for e in entries:
        if e["type"] == "message" and e["message"]["role"] == "user":
            return text_content(e["message"]["content"], " ")
    return None


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_real_sessions_import_and_open_in_pi(tmp_path, cli, fmt):
    """(About 6 s: three imports by the console script and pi 1.6 opening
    every session in one node process.)"""
    _need(SOURCES[fmt])
    results = _import(cli, fmt)
    assert results and all(r["status"] == "imported" for r in results), [(r["source"], r["status"], r.get("message")) for r in results]
    assert not any(r["damaged"] for r in results)
    sessions_root = tmp_path / "agent" / "sessions"  # pi's sessions dir: the default target
    files = sorted(sessions_root.glob("*/*.jsonl"))
    assert len(files) == len(results)
    expected = {}
    for path in files:
        assert_valid_for_pi_and_providers(path)
        header, entries = session_entries(path)
        names = [e["name"] for e in entries if e["type"] == "session_info"]
        expected[header["id"]] = (header["cwd"], _first_user_text(entries), names[-1] if names else None, path)
    # again: nothing to do
    again = _import(cli, fmt)
    assert {r["status"] for r in again} == {"unchanged"}
    if oracle_missing() is not None:
        pytest.skip(oracle_missing())
    import subprocess

    calls = [["list", str(d)] for d in sorted({p.parent for p in files})] + [["context", str(p)] for p in files]
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    out = subprocess.run([str(ORACLE), "batch", str(tmp_path / "calls.json")], check=True, capture_output=True, text=True, timeout=600).stdout
    answers = json.loads(out)
    listed = {}
    for answer in answers[: len(calls) - len(files)]:
        for info in answer["json"]:
            listed[info["id"]] = info
    assert set(listed) == set(expected)
    for sid, (cwd, first, name, _path) in expected.items():
        info = listed[sid]
        assert info["cwd"] == cwd
        assert info.get("name") == name
        if first is not None:
            assert info["firstMessage"].split() == first.split()
    # independent of the conversion: what the source tools show as the session's start
    by_source = {}
    for r in results:  # a file's first session is its main one (then its sidechains)
        by_source.setdefault(r["source"], listed[r["id"]])
    if fmt == "codex":
        for source, info in by_source.items():
            records = [json.loads(line) for line in Path(source).read_bytes().split(b"\n") if line.strip()]
            prompt = next(r["payload"]["message"] for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "user_message")
            meta = next(r["payload"] for r in records if r["type"] == "session_meta")
            assert info["firstMessage"].split() == prompt.split() and info["cwd"] == meta["cwd"]
    else:
        titled = next(i for s, i in by_source.items() if s.endswith("d45db2bf-d60b-4801-a95b-f5f61f4bda64.jsonl"))
        assert titled["name"] == "context7-mcp-global-registration" and titled["cwd"] == "/Users/marklin/workspace"
        assert titled["firstMessage"].startswith("Implement the following plan:")
        summarized = next(i for s, i in by_source.items() if s.endswith("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
        assert summarized["name"] == "Empty Repo Setup: CLAUDE.md Foundation Created"
        windows = next(i for s, i in by_source.items() if s.endswith("5c04fe06-649f-4946-8625-2a3482121664.jsonl"))
        assert windows["cwd"] == "C:\\Users\\loganf\\Documents\\IDAHO-VAULT"
    for answer, path in zip(answers[len(calls) - len(files) :], files):
        assert "json" in answer, answer
        pi_messages = answer["json"]["messages"]
        assert pi_messages, path
        assert_messages_valid(pi_messages)
        _header, entries = session_entries(path)
        assert pi_messages == build_session_context(entries)["messages"]  # pi builds the context we do


def test_real_claude_code_sessions_keep_their_shapes(tmp_path, cli):
    _need(SOURCES["claude-code"])
    results = _import(cli, "claude-code", "--store", f"sqlite:///{tmp_path / 'team.db'}")
    totals: dict[str, int] = {}
    for r in results:
        for kind, n in r["entries"].items():
            totals[kind] = totals.get(kind, 0) + n
    # the README of the fixtures names these shapes
    assert totals["compaction"] == 7
    assert totals["session_info"] >= 2
    assert totals["message:toolResult"] > 100
    assert not any(kind.startswith("custom:") and kind != "custom:claude-code/records" for kind in totals)  # the records ride on the entries
    subagent = [r for r in results if "/subagents/" in r["source"]]
    sidechains = [r for r in results if r["source"].endswith("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")]
    assert len(subagent) == 1 and len(sidechains) == 6


def test_concurrent_imports_into_every_store_write_each_session_once(tmp_path, cli, store_url):
    """Two imports of the same real sessions at once into one store (files,
    SQLite, PostgreSQL): both succeed, every session is stored once with the
    lines a lone import writes, and a third import finds nothing to do.
    (About 6 s per store on a loaded machine: three imports of 11 sessions
    by the console script.)"""
    import os
    import subprocess
    import sys

    from pi_session.importers import import_agent_sessions
    from pi_session.stores import open_store

    _need(SOURCES["claude-code"])
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    procs = [
        subprocess.Popen([str(exe), "import", "--from", "claude-code", str(SOURCES["claude-code"]), "--store", store_url, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-1000:] for _out, err in outs]
    again = _import(cli, "claude-code", "--store", store_url)
    assert {r["status"] for r in again} == {"unchanged"}
    reference = open_store(str(tmp_path / "lone"))
    expected = {r.result.session_id: r for r in import_agent_sessions("claude-code", [SOURCES["claude-code"]], reference)}
    store = open_store(store_url)
    try:
        assert {i["id"] for i in store.list(with_text=False)} == set(expected)
        for sid in expected:
            stored, lone_lines = list(store.read_lines(sid)), list(reference.read_lines(sid))
            assert stored[1:] == lone_lines[1:]
            header, lone_header = json.loads(stored[0]), json.loads(lone_lines[0])
            parent = header.pop("parentSession", None)
            assert (parent is None) == (lone_header.pop("parentSession", None) is None) and header == lone_header
            if parent is not None:  # the main session's place in this store
                assert parent in {store.locator(other) for other in expected}
    finally:
        store.close()


def test_a_real_session_imported_while_it_is_written_never_conflicts(tmp_path, cli):
    """A real Claude Code session (the newer way of writing: the stop
    reason on every block of a response) grows the way Claude Code writes
    it, one line at a time, each line first written in part; the console
    script imports it after every write (the file just modified, as while
    Claude Code runs). A torn last line is skipped and the response it may
    continue is left for the next import, so no import is a conflict, and
    the last one, once the file is old, gives the session a single import
    of the whole file gives."""
    import os

    source = SOURCES["claude-code"] / "c--Users-loganf-Documents-IDAHO-VAULT" / "5c04fe06-649f-4946-8625-2a3482121664.jsonl"
    _need(source)
    lines = source.read_bytes().splitlines(keepends=True)[:18]  # lines 13-16: one response's four blocks, each with stop_reason tool_use
    growing = tmp_path / "grow" / "projects" / "c--Users-loganf-Documents-IDAHO-VAULT" / source.name
    whole = tmp_path / "whole" / "projects" / "c--Users-loganf-Documents-IDAHO-VAULT" / source.name
    for path in (growing, whole):
        path.parent.mkdir(parents=True)
    whole.write_bytes(b"".join(lines))
    os.utime(whole, (0, 0))
    store = tmp_path / "store"

    def run(root: Path, target: Path) -> list[dict]:
        proc = cli("import", "--from", "claude-code", str(root), "--store", str(target), "--json")
        assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
        return json.loads(proc.stdout)

    written = b"".join(lines[:12])
    for line in lines[12:]:
        for part in (line[: len(line) // 2], line):  # torn, then whole
            growing.write_bytes(written + part)
            results = run(tmp_path / "grow", store)
            assert all(r["status"] in ("imported", "updated", "unchanged", "skipped") for r in results), results
        written += line
    os.utime(growing, (0, 0))  # Claude Code has stopped: nothing is held back
    run(tmp_path / "grow", store)
    run(tmp_path / "whole", tmp_path / "store-whole")
    [grown] = sorted(store.glob("*/*.jsonl"))
    [at_once] = sorted((tmp_path / "store-whole").glob("*/*.jsonl"))
    assert grown.read_bytes() == at_once.read_bytes()


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_real_sessions_convert_losslessly_with_few_custom_entries(fmt):
    """Every field of every record of the real sessions is in the pi
    sessions made of them (kept on the entries, not one custom entry per
    record), and at most a tenth of each session's entries are ``custom``."""
    from pi_session.importers import claude_code, codex, source_files
    from pi_session.importers.common import read_jsonl

    _need(SOURCES[fmt])
    module = claude_code if fmt == "claude-code" else codex
    for file in source_files(fmt, [SOURCES[fmt]]):
        sessions, damaged = module.convert_file(file)
        assert not damaged
        for s in sessions:
            customs = sum(1 for e in s.entries if e["type"] == "custom")
            assert customs <= 0.1 * len(s.entries), (file.path.name, customs, len(s.entries))
        records = [r.record for r in read_jsonl(file.path)[0]]
        (assert_claude_code_lossless if fmt == "claude-code" else assert_codex_lossless)(records, sessions)


@pytest.mark.oracle
@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_pi_builds_the_same_context_from_both_layouts(tmp_path, fmt):
    """pi 1.6 (the oracle) builds, from every real session imported in the
    layout that keeps the source on the entries, the context it builds
    from the same session in the layout of earlier imports (a custom entry
    per source record, byte for byte what those imports wrote), and lists
    it the same."""
    import subprocess

    from pi_session.importers import claude_code, codex, source_files

    _need(SOURCES[fmt])
    if oracle_missing() is not None:
        pytest.skip(oracle_missing())
    module = claude_code if fmt == "claude-code" else codex
    pairs = []
    for file in source_files(fmt, [SOURCES[fmt]]):
        for layout in (1, 2):
            sessions, _damaged = module.convert_file(file, layout=layout)
            for s in sessions:
                path = tmp_path / f"layout{layout}" / s.cwd.replace("/", "-").replace("\\", "-").replace(":", "") / f"{s.session_id}.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"".join(s.lines()))
                if layout == 2:
                    pairs.append((path, tmp_path / "layout1" / path.parent.name / path.name))
    assert pairs
    calls = [["context", str(p)] for pair in pairs for p in pair] + [["list", str(d)] for d in sorted({p.parent for pair in pairs for p in pair})]
    (tmp_path / "calls.json").write_text(json.dumps(calls))
    out = subprocess.run([str(ORACLE), "batch", str(tmp_path / "calls.json")], check=True, capture_output=True, text=True, timeout=600).stdout
    answers = json.loads(out)
    contexts = answers[: 2 * len(pairs)]
    for i, (new, old) in enumerate(pairs):
        new_ctx, old_ctx = contexts[2 * i]["json"], contexts[2 * i + 1]["json"]
        assert new_ctx["messages"], new
        new_ctx.pop("leafId"), old_ctx.pop("leafId")  # the last entry differs: the layouts make different entries
        assert new_ctx == old_ctx, new.name
    listed: dict[str, dict[str, dict]] = {"layout1": {}, "layout2": {}}
    for answer, call in zip(answers[2 * len(pairs) :], calls[2 * len(pairs) :]):
        for info in answer["json"]:
            listed[Path(call[1]).parent.name][info["id"]] = {k: info.get(k) for k in ("cwd", "name", "firstMessage", "messageCount", "created")}
    assert listed["layout1"] == listed["layout2"] and len(listed["layout2"]) == len(pairs)
