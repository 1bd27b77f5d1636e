"""``pi-session info`` and ``ls --sizes`` in a real terminal (tmux at 80
and 100 columns): values wrap at word boundaries inside their column
(never folded mid-word by the terminal), and ``ls --sizes`` shows each
session's id and title as ``ls`` does, its path only when asked, when
there is room, or without a terminal."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_session import SessionManager
from pi_session.core.paths import encode_cwd
from pi_session.render.terminal import cells, wrap_cells
from test_cli_ls_widths import needs_tmux, screen_in_tmux

EXE = Path(sys.executable).parent / "pi-session"
CWD = "/home/someone/projects/a-rather-long-project-directory-name/with/sub/dirs"
CJK_LABEL = "检查点标签很长的中文标签名称用于测试换行"


@pytest.fixture
def agent(tmp_path):
    """An agent directory with two sessions of a project with a long cwd:
    one named, with model and thinking-level changes and a CJK label;
    returns (agent dir, [(id, path, title)])."""
    agent_dir = tmp_path / "agent"
    directory = agent_dir / "sessions" / encode_cwd(CWD)
    out = []
    for i in range(2):
        sm = SessionManager.create(CWD, directory)
        now = int(time.time() * 1000)
        first = sm.append_message({"role": "user", "content": f"Please fix the parser so that line numbers are right, case {i}", "timestamp": now})
        sm.append_model_change("anthropic", "claude-sonnet-4-5")
        sm.append_thinking_level_change("high")
        sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "Done."}], "provider": "anthropic",
                           "model": "claude-sonnet-4-5", "timestamp": now,
                           "usage": {"input": 1234567, "output": 23456, "cacheRead": 3456789, "cacheWrite": 45678, "totalTokens": 4760490,
                                     "cost": {"input": 1, "output": 1, "cacheRead": 1, "cacheWrite": 1, "total": 4}}})
        title = f"Please fix the parser so that line numbers are right, case {i}"
        if i == 0:
            sm.append_label_change(first, CJK_LABEL)
            sm.append_session_info("Parser line numbers")
            title = "Parser line numbers"
        out.append((sm.get_session_id(), str(sm.get_session_file()), title))
    return agent_dir, out


def _run(agent_dir: Path, *args: str) -> str:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    env.pop("COLUMNS", None)
    done = subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_tmux
@pytest.mark.parametrize("width", [80, 100])
def test_info_wraps_values_at_word_boundaries(tmp_path, agent, width):
    agent_dir, sessions = agent
    _sid, path, _title = sessions[0]
    plain = _run(agent_dir, "info", path).splitlines()  # no terminal: a line per field
    pad = plain[0].index("/")
    env = f"env -u COLUMNS PI_CODING_AGENT_DIR={shlex.quote(str(agent_dir))} {shlex.quote(str(EXE))}"
    [screen] = screen_in_tmux(tmp_path, width, [f"{env} info {shlex.quote(path)}"])
    assert any(CJK_LABEL in line for line in plain) and any("model_change" in line for line in plain)
    fields, current = [], None
    for line in screen:
        if line[:pad].strip():  # a field's first line
            current = [line[:pad].strip(), [line[pad:].strip()]]
            fields.append(current)
        else:  # its value continued, in the value column
            assert current is not None and line[pad:].strip(), line
            current[1].append(line[pad:].strip())
    assert [key for key, _lines in fields] == [line.split()[0] for line in plain], screen  # nothing folded into a field of its own
    for (key, lines), whole in zip(fields, plain):
        value = " ".join(whole[pad:].split())
        assert "".join(lines).replace(" ", "") == value.replace(" ", ""), (lines, value)  # nothing lost
        for before, after in zip(lines, lines[1:]):  # each break at a space, after a / - _ ., or between wide characters
            assert f"{before} {after}" in value or before[-1] in "/-_.,:;" or cells(before[-1]) == 2, (before, after)
    shown = "\n".join(screen)
    for word in ("model_change", "thinking_level_change", "entry's"):
        assert word in shown, (word, shown)
    assert CJK_LABEL[:6] in shown


def test_wrap_cells_breaks_at_spaces_then_after_separators_then_between_characters():
    assert wrap_cells("a bb ccc", 4) == ["a bb", "ccc"]
    assert wrap_cells("/home/someone/projects/file.jsonl", 14) == ["/home/someone/", "projects/file.", "jsonl"]
    assert wrap_cells("claude-sonnet-4-5", 10) == ["claude-", "sonnet-4-5"]
    assert wrap_cells("检查点标签", 4) == ["检查", "点标", "签"]  # two cells each, never split
    assert wrap_cells("abcdefgh", 3) == ["abc", "def", "gh"]
    assert wrap_cells("one\ntwo", None) == ["one", "two"] and wrap_cells("", 5) == [""]


@needs_tmux
@pytest.mark.parametrize("width", [80, 100])
def test_ls_sizes_is_one_line_per_session_with_id_and_title(tmp_path, agent, width):
    agent_dir, sessions = agent
    env = f"env -u COLUMNS PI_CODING_AGENT_DIR={shlex.quote(str(agent_dir))} {shlex.quote(str(EXE))}"
    shown, with_paths = screen_in_tmux(tmp_path, width, [f"{env} ls --all --sizes", f"{env} ls --all --sizes --paths"])
    assert len(shown) == 1 + len(sessions), "\n".join(shown)  # a line each: nothing folded
    assert shown[0].split()[:3] == ["size", "payload", "abandoned"]
    for sid, path, title in sessions:
        [line] = [line for line in shown[1:] if any(len(w) >= 8 and sid.startswith(w) for w in line.split())]
        assert title[:12] in line and path not in line, line
    for sid, path, _title in sessions:  # --paths: each path whole
        assert any(path in line for line in with_paths) or path in "".join(with_paths), with_paths
    piped = _run(agent_dir, "ls", "--all", "--sizes").splitlines()  # no terminal: everything, whole
    for sid, path, title in sessions:
        assert any(sid in line and path in line and title in line for line in piped), piped
