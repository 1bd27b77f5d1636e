"""Session files under attack (issue 22), through the real console script:
rewrites by root keep the user's owner, group and mode (item 5)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from storage_helpers import make_session

BIN = Path(sys.executable).parent / "pi-session"
UID, GID = 12345, 12346

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=timeout, env=env)


def owned_by_user(path: Path) -> None:
    os.chown(path, UID, GID)
    os.chmod(path, 0o640)


def assert_user_file(path: Path) -> None:
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (UID, GID, 0o640), path


# ---------------------------------------------------------------- item 5


@needs_root
def test_repair_by_root_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = make_session(tmp_path / "sessions", n=4)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join([lines[0], lines[1], b"\x00not json", *lines[2:]]) + b"\n")
    owned_by_user(path)
    proc = run("check", str(path), "--repair")
    assert "Traceback" not in proc.stderr, proc.stderr
    backup = path.with_name(path.name + ".repair.bak")
    assert backup.exists(), proc.stdout + proc.stderr
    assert b"not json" not in path.read_bytes()
    assert_user_file(path)
    assert_user_file(backup)


V1 = [
    {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
     "message": {"role": "user", "content": "a", "timestamp": 1}},
]


@needs_root
def test_migrate_by_root_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "2025-01-01T00-00-00-000Z_s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in V1))
    owned_by_user(path)
    proc = run("migrate", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    backup = path.with_name(path.name + ".v1.bak")
    assert backup.exists()
    assert json.loads(path.read_text().splitlines()[0])["version"] == 3
    assert_user_file(path)
    assert_user_file(backup)


SETPRIV = shutil.which("setpriv")


@needs_root
@pytest.mark.skipif(SETPRIV is None, reason="needs setpriv (util-linux) to drop CAP_CHOWN")
def test_rewrite_that_cannot_keep_the_owner_says_so(tmp_path: Path) -> None:
    """A process that may write the file but not give it away (here root
    without CAP_CHOWN, as a user repairing a group-writable file): the
    rewrite goes on, keeps the mode, and a warning names the file and the
    owner it could not keep."""
    path = make_session(tmp_path / "sessions", n=4)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join([lines[0], b"\x00not json", *lines[1:]]) + b"\n")
    owned_by_user(path)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    assert SETPRIV is not None
    cmd = [SETPRIV, "--bounding-set", "-chown", "--inh-caps", "-chown", str(BIN), "check", str(path), "--repair"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert b"not json" not in path.read_bytes(), proc.stdout + proc.stderr
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o640)
    assert f"could not keep owner {UID}:{GID}" in proc.stderr and str(path) in proc.stderr
