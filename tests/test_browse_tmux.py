"""The real ``pi-session browse`` console script in a real terminal (tmux,
80x24): read the screen, label an entry, quit with Ctrl-C, and check that
the terminal is left as it was (no alternate screen, cursor shown, mouse
reporting off, line editing and echo on).

tmux is installed by ``.ci/run``; locally the test is skipped without it.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browse_helpers import make_session, records

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")

EXE = Path(sys.executable).parent / "pi-session"


class Tmux:
    """A private tmux server (its own socket) holding one 80x24 pane."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args], check=True, capture_output=True, text=True, timeout=60
        ).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "browse")

    def wait_for(self, text: str, limit: float = 60.0) -> str:
        """The screen once it shows ``text`` (polled; ``limit`` seconds is a
        generous bound, not a timing check)."""
        deadline = time.monotonic() + limit
        while True:
            shown = self.screen()
            if text in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{shown}")
            time.sleep(0.05)


def test_browse_in_a_real_terminal(tmp_path):
    path, ids = make_session(tmp_path)
    socket = tmp_path / "tmux.sock"
    tmux = Tmux(socket)
    env = f"PI_CODING_AGENT_DIR={shlex.quote(str(tmp_path / 'agent'))}"
    # after browse ends, the shell reports the exit status and the terminal
    # modes, then waits (so the pane and its screen stay readable)
    script = (
        f"env {env} {shlex.quote(str(EXE))} browse {shlex.quote(str(path))}; "
        "echo EXIT=$?; stty -a | tr -s ' ;\\n' '\\n' | grep -E '^-?(icanon|echo|isig)$' | tr '\\n' ' '; echo; echo END; "
        "exec sleep 600"
    )
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", "sh", "-c", script)
    try:
        tmux.wait_for("[task]")  # the tree, with the label on the first message
        shown = tmux.wait_for("Fix the parser")
        lines = shown.splitlines()
        assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
        assert "← leaf" in shown and "├─" in shown and "l Label" in shown  # the leaf, a branch point, the footer
        tmux("send-keys", "-t", "browse", "Up")
        tmux.wait_for("Shipped the tokenizer rewrite.")
        tmux("send-keys", "-t", "browse", "l")
        tmux.wait_for("Label entry")
        tmux("send-keys", "-t", "browse", "-l", "from tmux")
        tmux("send-keys", "-t", "browse", "Enter")
        tmux.wait_for("[from tmux]")
        tmux("send-keys", "-t", "browse", "C-c")
        after = tmux.wait_for("END")
        assert "EXIT=0" in after
        modes = set(after.split("EXIT=0", 1)[1].split())
        assert {"icanon", "echo", "isig"} <= modes, after  # not -icanon / -echo: the terminal is cooked again
        flags = tmux("display-message", "-p", "-t", "browse", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}").split()
        assert flags == ["0", "1", "0"], flags  # main screen, cursor shown, no mouse reporting
        assert "Traceback" not in after
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, timeout=60)
    labels = [r for r in records(path) if r.get("type") == "label" and r.get("label") == "from tmux"]
    assert len(labels) == 1 and labels[0]["targetId"] == ids["b2"]


def test_browse_at_takes_a_unique_entry_id_prefix(tmp_path):
    """``--at`` takes what ``label`` and ``--leaf`` take: the cursor starts
    on the entry a unique id prefix names (a label made there lands on it);
    an ambiguous or unknown prefix is one line and exit status 1."""
    path, ids = make_session(tmp_path)
    every = [str(r["id"]) for r in records(path) if "id" in r and r.get("type") != "session"]
    target = ids["a2"]
    prefix = next(target[:n] for n in range(4, 9) if sum(e.startswith(target[:n]) for e in every) == 1)
    socket = tmp_path / "tmux.sock"
    tmux = Tmux(socket)
    env = f"PI_CODING_AGENT_DIR={shlex.quote(str(tmp_path / 'agent'))}"
    exe, session = shlex.quote(str(EXE)), shlex.quote(str(path))
    script = (
        f"env {env} {exe} browse {session} --at zzzz; echo EXIT=$?; "
        f"env {env} {exe} browse {session} --at {prefix}; echo EXIT=$?; echo END; exec sleep 600"
    )
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", "sh", "-c", script)
    try:
        tmux.wait_for("l Label")
        tmux("send-keys", "-t", "browse", "l")
        tmux.wait_for("Label entry")
        tmux("send-keys", "-t", "browse", "-l", "at prefix")
        tmux("send-keys", "-t", "browse", "Enter")
        tmux.wait_for("[at prefix]")
        tmux("send-keys", "-t", "browse", "C-c")
        after = tmux.wait_for("END")
        joined = after.replace("\n", "")  # the error line wraps at 80 columns
        assert "no entry with id zzzz" in joined and after.count("EXIT=1") == 1 and "EXIT=0" in after
        assert "Traceback" not in after
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, timeout=60)
    labels = [r for r in records(path) if r.get("type") == "label" and r.get("label") == "at prefix"]
    assert len(labels) == 1 and labels[0]["targetId"] == target


def test_picker_at_80_columns_uses_the_short_forms_of_ls(tmp_path):
    """The picker of ``browse --all`` at 80 columns: ids as their unique
    prefix and times as ages (as ``ls`` shortens them), leaving a title
    column of about 30 cells; a cut title, and the column's header, end in
    ``…``."""
    from pi_session import SessionManager
    from pi_session.core.paths import encode_cwd
    from pi_session.render.terminal import unique_prefixes

    cwd = "/home/someone/projects/a-rather-long-project-directory-name/with/sub/dirs"
    ids = []
    for i in range(3):
        sm = SessionManager.create(cwd, tmp_path / "agent" / "sessions" / encode_cwd(cwd))
        sm.append_message({"role": "user", "content": f"Error ID: 3f2a when running the parser over a multi-line string, case {i}",
                           "timestamp": int(time.time() * 1000)})
        ids.append(sm.get_session_id())
    socket = tmp_path / "tmux.sock"
    tmux = Tmux(socket)
    env = f"PI_CODING_AGENT_DIR={shlex.quote(str(tmp_path / 'agent'))}"
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", "sh", "-c",
         f"env {env} {shlex.quote(str(EXE))} browse --all; exec sleep 600")
    try:
        shown = tmux.wait_for("Error ID")
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, timeout=60)
    lines = shown.splitlines()
    [header] = [line for line in lines if " id " in line]
    assert header.split()[0] == "age" and "name / first message" in header, shown
    rows = [line for line in lines if "Error ID" in line]
    assert len(rows) == 3
    short = unique_prefixes(ids)
    for line in rows:
        assert line.split()[0] == "now"
        assert line.split()[1] in short.values(), (line, short)
        assert "Error ID: 3f2a when running" in line and line.rstrip().endswith("…"), line


def test_picker_title_bar_keeps_the_end_of_a_long_directory(tmp_path):
    """The picker's title bar at 80 columns in a deep directory: one line,
    the directory's end after ``…``, the key hint still there."""
    deep = tmp_path.joinpath("a-rather-long-project-directory-name", "with", "many", "sub", "directories", "below", "it", "here")
    deep.mkdir(parents=True)
    socket = tmp_path / "tmux.sock"
    tmux = Tmux(socket)
    env = f"PI_CODING_AGENT_DIR={shlex.quote(str(tmp_path / 'agent'))}"
    tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", "-c", str(deep), "sh", "-c",
         f"env {env} {shlex.quote(str(EXE))} browse; exec sleep 600")
    try:
        shown = tmux.wait_for("a: all projects")
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, timeout=60)
    title = shown.splitlines()[0]
    assert title.split()[:3] == ["0", "sessions", "·"] and "…" in title and "/below/it/here · a: all projects" in title, shown
