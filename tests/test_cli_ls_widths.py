"""``pi-session ls`` in a real terminal (tmux at 80 and 120 columns) and
piped. Every session is one line (the cwd of ``ls --all`` is never folded
one character per line), narrow terminals shorten the first message, then
show each id as its unique prefix (which every command opens), then ages as
pi's picker does; piped output takes the terminal's width, or none without
a terminal (no fixed 200, whole ids)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from pi_session import SessionManager
from pi_session.core.paths import encode_cwd

EXE = Path(sys.executable).parent / "pi-session"
PI_CWD = "/Users/dev/workspaces/pi-mono"
LONG_CWD = "/home/someone/projects/a-rather-long-project-directory-name/with/sub/dirs"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")


@pytest.fixture
def agent(tmp_path):
    """An agent directory holding pi's two real fixture sessions (project
    PI_CWD) and three sessions of a project with a long cwd; returns
    (agent dir, ids)."""
    agent_dir = tmp_path / "agent"
    directory = agent_dir / "sessions" / encode_cwd(PI_CWD)
    directory.mkdir(parents=True)
    for name in ("large-session.jsonl", "before-compaction.jsonl"):
        if not (FIXTURES / name).exists():
            pytest.skip(f"{FIXTURES / name} not present (../shared)")
        shutil.copy(FIXTURES / name, directory / f"2025-11-20T23-33-50-805Z_{name}")
    ids = [SessionManager.open(p, read_only=True).get_session_id() for p in directory.iterdir()]
    old = os.environ.get("PI_CODING_AGENT_DIR")
    os.environ["PI_CODING_AGENT_DIR"] = str(agent_dir)
    try:
        for i in range(3):
            sm = SessionManager.create(LONG_CWD)
            now = int(time.time() * 1000)
            sm.append_message({"role": "user", "content": f"Please fix the parser so that line numbers are right after a multi-line string literal, case {i}", "timestamp": now})
            if i == 1:
                sm.append_session_info("Parser line numbers")
            ids.append(sm.get_session_id())
    finally:
        if old is None:
            del os.environ["PI_CODING_AGENT_DIR"]
        else:
            os.environ["PI_CODING_AGENT_DIR"] = old
    return agent_dir, ids


def screen_in_tmux(tmp_path, width, commands):
    """Run ``commands`` (argument lists) one after the other in a real
    terminal ``width`` columns wide; returns each command's screen lines."""
    socket = tmp_path / f"tmux-{width}.sock"
    run = ["tmux", "-S", str(socket)]
    parts = [f"{c} ; echo END{i}" for i, c in enumerate(commands)]
    script = "clear; " + " ; ".join(parts) + " ; exec sleep 600"
    subprocess.run([*run, "-f", "/dev/null", "new-session", "-d", "-x", str(width), "-y", "60", "-s", "ls", "sh", "-c", script],
                   check=True, timeout=60)
    try:
        deadline = time.monotonic() + 60
        while True:  # polled until the last command is done (a bound, not a timing check)
            shown = subprocess.run([*run, "capture-pane", "-p", "-t", "ls"], capture_output=True, text=True, check=True, timeout=60).stdout
            if f"END{len(commands) - 1}" in shown:
                break
            assert time.monotonic() < deadline, shown
            time.sleep(0.05)
    finally:
        subprocess.run([*run, "kill-server"], capture_output=True, timeout=60)
    out, current = [], []
    for line in shown.splitlines():
        if line.startswith("END"):
            out.append(current)
            current = []
        else:
            current.append(line)
    return out


@needs_tmux
@pytest.mark.parametrize("width", [80, 120])
def test_ls_in_a_real_terminal_never_folds_lines_and_its_ids_open(tmp_path, agent, width):
    agent_dir, ids = agent
    env = f"env -u COLUMNS PI_CODING_AGENT_DIR={shlex.quote(str(agent_dir))} {shlex.quote(str(EXE))}"
    direct_all, piped_all, project = screen_in_tmux(
        tmp_path, width, [f"{env} ls --all", f"{env} ls --all | cat", f"{env} ls --cwd {PI_CWD}"]
    )
    for lines in (direct_all, piped_all):  # piped, it takes the terminal's width
        assert len(lines) == 1 + len(ids), "\n".join(lines)  # one line per session: nothing wrapped or folded
        assert all(len(line) <= width for line in lines)
        for session_id in ids:  # the whole id, or (narrow) its unique prefix of 8 or more characters, which opens it
            shown = shown_id(lines, session_id)
            assert len(shown) >= 8 and info_id(agent_dir, shown) == session_id, (session_id, shown)
        assert any(LONG_CWD[-8:] in line for line in lines)  # the cwd keeps its end
        assert any("Parser line" in line for line in lines)  # the name, shortened first at 80 columns
        assert lines[0].split()[0] == "age"  # too narrow for the full time: pi picker's ages
        assert all(re.fullmatch(r"now|[0-9]+(m|h|d|w|mo|y)", line.split()[0]) for line in lines[1:]), lines  # ages, whatever today is
    assert len(project) == 3 and all(len(line) <= width for line in project)
    if width == 120:  # room for the full time and more of the first message
        assert project[0].split()[0] == "modified" and "2025-12-09 " in project[1]
        assert "alright, read @packages/coding-agent/src/main.ts" in project[1]
    else:
        # short ids leave room for the full time
        assert project[0].split()[0] == "modified" and "msgs" in project[0]
        assert not any(session_id in line for line in project for session_id in ids)


def shown_id(lines, session_id):
    """The word of ``lines`` that starts ``session_id`` (what ``ls`` shows of it)."""
    words = [word for line in lines[1:] for word in line.split() if len(word) >= 8 and session_id.startswith(word)]
    assert len(words) == 1, (session_id, lines)
    return words[0]


def info_id(agent_dir, argument):
    """The session id ``pi-session info ARGUMENT --json`` opens."""
    import json

    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    done = subprocess.run([str(EXE), "info", argument, "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["id"]


def test_ls_piped_without_a_terminal_has_no_width(agent):
    agent_dir, ids = agent
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    result = subprocess.run([str(EXE), "ls", "--all"], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + len(ids) and lines[0].split()[0] == "modified"
    assert all(line == line.rstrip() for line in lines)  # never padded to a width
    assert any(LONG_CWD in line for line in lines)
    assert all(any(session_id in line for line in lines) for session_id in ids)  # no width: whole ids
    long_line = next(line for line in lines if "alright, read @packages" in line)
    assert len(long_line) > 200  # no fixed 200 columns: the first message's first 200 characters
    assert long_line.endswith("…")
