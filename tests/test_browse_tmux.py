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
