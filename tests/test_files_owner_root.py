"""Run as root on a user's directory, everything pi-session creates there
(imported sessions and their directories, ``.torn-*`` and ``.rejected-*``
side files, backups) takes the owner and group of the directory it is
created in, through the real console script. Root only (``.ci/run`` runs
the suite as root); skipped otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_import_helpers import SID, cc_assistant, cc_user, cx_meta, cx_msg, write_jsonl
from storage_helpers import make_session

UID, GID = 65534, 65534

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")


def _user_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    os.chown(path, UID, GID)
    return path


def _owners(top: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``top`` (itself included) -> (uid, gid)."""
    out = {str(top): (os.lstat(top).st_uid, os.lstat(top).st_gid)}
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            st = os.lstat(os.path.join(root, name))
            out[os.path.join(root, name)] = (st.st_uid, st.st_gid)
    return out


@needs_root
@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_import_by_root_into_a_users_directory_leaves_everything_the_users(tmp_path, cli, fmt):
    if fmt == "claude-code":
        src = write_jsonl(tmp_path / "src" / f"{SID}.jsonl", [cc_user("u1", None, 1, "hi"), cc_assistant("a1", "u1", 2, "m1", [{"type": "text", "text": "hello"}])])
    else:
        src = write_jsonl(tmp_path / "src" / "rollout-x.jsonl", [cx_meta(0), cx_msg(1, "user", "hi"), cx_msg(2, "assistant", "hello")])
    home = _user_dir(tmp_path / "home")
    proc = cli("import", "--from", fmt, str(src), "--store", str(home / "sessions" / "imported"))
    assert proc.returncode == 0 and "1 imported" in proc.stdout, proc.stdout + proc.stderr
    owners = _owners(home)
    assert len(owners) >= 5, owners  # home, sessions, imported, the project directory, the session file
    assert set(owners.values()) == {(UID, GID)}, owners


@needs_root
def test_side_files_and_backups_made_by_root_are_the_users(tmp_path, cli):
    directory = _user_dir(tmp_path / "sessions")
    path = make_session(directory, n=4)
    for p in (path.parent, path):
        os.chown(p, UID, GID)
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"torn')  # a crash mid-append
    proc = cli("name", str(path), "renamed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(path.parent.glob("*.torn-*")), proc.stderr
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0], lines[1], b"\x00not json", *lines[2:]]))
    proc = cli("check", str(path), "--repair")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert list(path.parent.glob("*.rejected-*")) and list(path.parent.glob("*.bak*")), proc.stdout + proc.stderr
    owners = _owners(directory)
    assert set(owners.values()) == {(UID, GID)}, owners
