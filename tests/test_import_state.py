"""``import --from``: a source file unchanged since the last import is passed
over without being opened, as long as the store holds its sessions as that
import left them; a changed source, or a target deleted, rewritten or
appended to since, is imported the full way again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_import_helpers import CODEX_ID, SID, cc_assistant, cc_user, cx_meta, cx_msg, cx_turn, write_jsonl
from pi_session.importers import import_agent_sessions, pi_session_id
from pi_session.stores import open_store

ROOT = Path(__file__).resolve().parent.parent

# Imports every source under argv[2] into the store argv[3] with an audit hook
# that records each file opened under argv[2]; prints the statuses and opens.
_WATCHED = r"""
import json, os, sys
root = os.path.realpath(sys.argv[2])
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == root or path.startswith(root + os.sep):
            opened.append(path)
sys.addaudithook(hook)
from pi_session.importers import import_agent_sessions
from pi_session.stores import open_store
store = open_store(sys.argv[3])
statuses = [r.result.status for r in import_agent_sessions(sys.argv[1], [sys.argv[2]], store)]
store.close()
print(json.dumps({"statuses": statuses, "opened": opened}))
"""


def _watched_import(source_format: str, source: Path, url: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _WATCHED, source_format, str(source), url], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _claude_sources(tmp_path: Path, sessions: int = 3) -> Path:
    root = tmp_path / "claude" / "projects"
    for i in range(sessions):
        sid = SID[:-2] + f"{i:02d}"
        write_jsonl(
            root / f"-home-ada-p{i % 2}" / f"{sid}.jsonl",
            [cc_user("u1", None, 1, f"task {i}", sessionId=sid), cc_assistant("a1", "u1", 2, f"msg_{i}", [{"type": "text", "text": "Sure."}], sessionId=sid)],
        )
    return root


def _codex_sources(tmp_path: Path) -> Path:
    root = tmp_path / "codex" / "sessions"
    write_jsonl(
        root / "2025" / "01" / "02" / f"rollout-2025-01-02T03-04-05-{CODEX_ID}.jsonl",
        [cx_meta(), cx_turn(1), cx_msg(2, "user", "hello"), cx_msg(3, "assistant", "hi")],
    )
    return root


@pytest.mark.parametrize("backend", ["file", "sqlite"])
@pytest.mark.parametrize("source_format", ["claude-code", "codex"])
def test_re_importing_unchanged_sources_opens_no_source_file(tmp_path, backend, source_format):
    """The second import of unchanged sources is all ``unchanged`` and opens
    no file under the source directory (an audit hook watches every
    ``open``); the first one, watched the same way, does open them (the
    hook sees opens)."""
    source = _claude_sources(tmp_path) if source_format == "claude-code" else _codex_sources(tmp_path)
    url = str(tmp_path / "sessions") if backend == "file" else f"sqlite:///{tmp_path / 'sessions.db'}"
    first = _watched_import(source_format, source, url)
    assert set(first["statuses"]) == {"imported"} and first["opened"], first
    again = _watched_import(source_format, source, url)
    assert again["statuses"] == ["unchanged"] * len(first["statuses"]) and again["opened"] == [], again


def _import(tmp_path: Path, url: str):
    store = open_store(url)
    try:
        return [r.result.status for r in import_agent_sessions("claude-code", [tmp_path / "claude" / "projects"], store)]
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_a_target_rewritten_since_the_import_is_imported_again(tmp_path, backend):
    """A stored session that lost its last line since the import (rewritten
    without it: a new file, a new row) is noticed although the source did
    not change: the line is appended again (``updated``), after which the
    source is passed over again."""
    _claude_sources(tmp_path, 1)
    url = str(tmp_path / "sessions") if backend == "file" else f"sqlite:///{tmp_path / 'sessions.db'}"
    assert _import(tmp_path, url) == ["imported"]
    session_id = pi_session_id("claude-code", SID[:-2] + "00")
    store = open_store(url)
    lines = list(store.read_lines(session_id))
    assert len(lines) >= 3
    store.delete(session_id)
    store.new_handle(json.loads(lines[0])).create(lines[:-1])
    store.close()
    assert _import(tmp_path, url) == ["updated"]
    store = open_store(url)
    assert list(store.read_lines(session_id)) == lines
    store.close()
    assert _import(tmp_path, url) == ["unchanged"]


def test_a_target_appended_to_in_place_is_compared_again(tmp_path):
    """A session file that grew since the import (pi went on in it: same
    inode, larger) is compared with the source again, as a first import
    would: a name appended is an addition the source does not hold
    (``unchanged``); a message appended makes it no longer the source's
    session (a ``conflict``, nothing written); the grown file is kept as
    it is."""
    _claude_sources(tmp_path, 1)
    url = str(tmp_path / "sessions")
    assert _import(tmp_path, url) == ["imported"]
    store = open_store(url)
    path = Path(store.locator(pi_session_id("claude-code", SID[:-2] + "00")))
    named = b'{"type":"session_info","id":"0badc0de","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","name":"later"}\n'
    with open(path, "ab") as f:
        f.write(named)
    assert _import(tmp_path, url) == ["unchanged"]
    extra = b'{"type":"message","id":"0badc0df","parentId":"0badc0de","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"more","timestamp":1735689600000}}\n'
    with open(path, "ab") as f:
        f.write(extra)
    assert _import(tmp_path, url) == ["conflict"]
    assert path.read_bytes().endswith(extra)


def test_a_deleted_target_and_a_changed_source_are_imported(tmp_path):
    """A session deleted from the store is created again; a source that
    gained a line gets it appended; another one, unchanged, is passed over."""
    root = _claude_sources(tmp_path, 2)
    url = str(tmp_path / "sessions")
    assert _import(tmp_path, url) == ["imported", "imported"]
    store = open_store(url)
    store.delete(pi_session_id("claude-code", SID[:-2] + "00"))
    store.close()
    assert sorted(_import(tmp_path, url)) == ["imported", "unchanged"]
    grown = root / "-home-ada-p1" / f"{SID[:-2]}01.jsonl"
    with open(grown, "ab") as f:
        f.write(json.dumps(cc_user("u2", "a1", 3, "and then?", sessionId=SID[:-2] + "01")).encode() + b"\n")
    assert sorted(_import(tmp_path, url)) == ["unchanged", "updated"]
    assert sorted(_import(tmp_path, url)) == ["unchanged", "unchanged"]
