"""``slim``'s blob store on a machine shared with someone hostile, through
the real console script: a session in a directory every user may write
into (as ``/tmp``), a ``.blobs`` directory or subdirectory another user
made or owns, a FIFO, a symbolic link to ``/dev/zero`` or a subdirectory
replaced by a link planted where a blob is, and ``scrub`` deleting blobs.
Each command runs with a safety timeout and a memory cap, so a hang or an
endless read fails the test instead of the run. The tests that give a
file to another user (uid 65534) need root (``.ci/run`` runs as root) and
are skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lean_helpers import Writer
from pi_session.storage.guarded import UnsafePathError, open_private_dir, read_regular

NOBODY = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


def run(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real console script with 2 GiB of address space; a command
    still running after ``timeout`` seconds fails the test."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200", "NO_COLOR": "1"}
    try:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pi-session {' '.join(args)} still running after {timeout} s")


def one_line(out: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line a refused command prints (exit status not 0, no traceback), holding ``words``."""
    assert out.returncode != 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for word in words:
        assert word in lines[0], out.stderr
    return lines[0]


SECRET = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ7" + "90"


def session(path: Path, *, secret: bool = False) -> Path:
    """A session whose one tool output (40 KB, compacted away: outside the
    model context) is what ``slim`` moves to one blob; it holds a GitHub
    token when ``secret``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    w = Writer(path)
    u = w.user(None, "show the config")
    a = w.assistant(u, [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat .env"}}])
    text = "filler line\n" * 2000 + (f"token {SECRET}\n" if secret else "") + "more filler\n" * 2000
    r = w.tool_result(a, "c1", [{"type": "text", "text": text}], name="bash")
    x = w.assistant(r, [{"type": "text", "text": "done"}])
    w.add(x, {"type": "compaction", "summary": "looked at the config", "firstKeptEntryId": x, "tokensBefore": 1})
    return w.write()


def shared_dir(tmp_path: Path) -> Path:
    """A directory every user may write into, with the sticky bit (as ``/tmp``)."""
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o1777)
    return d


def blob_files(blobs: Path) -> list[Path]:
    return sorted(p for p in blobs.rglob("*") if p.is_file() or p.is_symlink() or stat.S_ISFIFO(p.lstat().st_mode))


def slimmed(tmp_path: Path, path: Path) -> Path:
    """Slim ``path`` (no backup) and return its one blob."""
    out = run(tmp_path, "slim", str(path), "--no-backup", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["payloads"] == 1, out.stdout + out.stderr
    (blob,) = blob_files(path.parent / ".blobs")
    return blob


def probe_subdir(tmp_path: Path, secret: bool = False) -> str:
    """The ``ab`` subdirectory the blob of :func:`session` goes to (slimmed
    once in a directory of its own)."""
    return slimmed(tmp_path, session(tmp_path / "probe" / "s.jsonl", secret=secret)).parent.name


# --- the blob directory must be the session owner's, closed to others ------


@pytest.mark.parametrize("who", [
    pytest.param("another user's", marks=root_only),
    "open to every user",
    pytest.param("root's, the session another user's", marks=root_only),
])
def test_slim_refuses_a_blob_directory_the_session_owner_does_not_keep_private(tmp_path: Path, who: str) -> None:
    path = session(shared_dir(tmp_path) / "s.jsonl")
    os.chmod(path, 0o600)
    planted = path.parent / ".blobs"
    planted.mkdir(mode=0o700)
    if who == "another user's":
        os.chown(planted, NOBODY, NOBODY)
        reason = f"belongs to another user (uid {NOBODY})"
    elif who == "open to every user":
        os.chmod(planted, 0o777)
        reason = "is writable by other users (mode 0777)"
    else:
        os.chown(path, NOBODY, NOBODY)
        reason = "belongs to another user (uid 0)"
    before = path.read_bytes()
    for args in (["--dry-run"], ["--no-backup"]):
        line = one_line(run(tmp_path, "slim", str(path), *args), str(planted), reason, str(path))
        assert "not used for the blobs" in line
    assert path.read_bytes() == before and blob_files(planted) == []
    assert not list(path.parent.glob("*.bak"))


@root_only
def test_slim_refuses_a_blob_subdirectory_another_user_made(tmp_path: Path) -> None:
    sub = probe_subdir(tmp_path)
    path = session(shared_dir(tmp_path) / "s.jsonl")
    blobs = path.parent / ".blobs"
    blobs.mkdir(mode=0o700)
    (blobs / sub).mkdir(mode=0o755)
    os.chown(blobs / sub, NOBODY, NOBODY)
    before = path.read_bytes()
    one_line(run(tmp_path, "slim", str(path), "--no-backup"), str(blobs / sub), f"belongs to another user (uid {NOBODY})")
    assert path.read_bytes() == before and blob_files(blobs) == []


@root_only
def test_blobs_root_makes_for_a_users_session_are_the_users_and_as_private_as_the_session(tmp_path: Path) -> None:
    path = session(shared_dir(tmp_path) / "s.jsonl")
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o640)
    blob = slimmed(tmp_path, path)
    for d in (blob.parent.parent, blob.parent):
        st = d.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o700), d
    st = blob.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert run(tmp_path, "restore", str(path)).returncode == 0
    assert path.stat().st_uid == NOBODY


def test_a_blob_is_never_more_readable_than_its_session(tmp_path: Path) -> None:
    """A 0600 session's blob is 0600, also when the same payload's blob
    was there already with wider permissions; a 0640 session gets 0640."""
    path = session(shared_dir(tmp_path) / "s.jsonl")
    os.chmod(path, 0o640)
    blob = slimmed(tmp_path, path)
    assert stat.S_IMODE(blob.stat().st_mode) == 0o640
    assert stat.S_IMODE(blob.parent.stat().st_mode) == 0o700
    assert run(tmp_path, "restore", str(path)).returncode == 0
    os.chmod(blob, 0o644)
    os.chmod(path, 0o600)
    assert slimmed(tmp_path, path) == blob
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600


def test_a_sticky_shared_directory_holds_a_private_blob_directory(tmp_path: Path) -> None:
    path = session(shared_dir(tmp_path) / "s.jsonl")
    original = path.read_bytes()
    blob = slimmed(tmp_path, path)
    st = blob.parent.parent.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o700)
    assert run(tmp_path, "restore", str(path)).returncode == 0 and path.read_bytes() == original


# --- nothing planted at a blob's path is waited on, followed or read whole --


@pytest.mark.parametrize("command", ["restore", "secrets", "scrub", "slim"])
def test_a_fifo_at_a_blob_path_ends_the_command_with_one_line(tmp_path: Path, command: str) -> None:
    path = session(tmp_path / "s.jsonl", secret=True)
    blob = slimmed(tmp_path, path)
    if command == "slim":  # the payload back in the session: slim finds the FIFO where it writes
        assert run(tmp_path, "restore", str(path)).returncode == 0
    before = path.read_bytes()
    blob.unlink()
    os.mkfifo(blob, 0o600)
    args = {"restore": [], "secrets": [], "scrub": ["--mode", "rewrite"], "slim": ["--no-backup"]}[command]
    one_line(run(tmp_path, command, str(path), *args), str(blob), str(path), "not a regular file (a FIFO)")
    assert path.read_bytes() == before and stat.S_ISFIFO(blob.lstat().st_mode)


@pytest.mark.parametrize("command", ["restore", "secrets", "scrub", "slim"])
def test_a_link_to_dev_zero_at_a_blob_path_is_refused(tmp_path: Path, command: str) -> None:
    path = session(tmp_path / "s.jsonl", secret=True)
    blob = slimmed(tmp_path, path)
    if command == "slim":
        assert run(tmp_path, "restore", str(path)).returncode == 0
    before = path.read_bytes()
    blob.unlink()
    blob.symlink_to("/dev/zero")
    args = {"restore": [], "secrets": [], "scrub": ["--mode", "rewrite"], "slim": ["--no-backup"]}[command]
    one_line(run(tmp_path, command, str(path), *args), str(blob), str(path), "a symbolic link")
    assert path.read_bytes() == before and blob.is_symlink()


# --- a subdirectory replaced by a link, and scrub's deletions ----------------


def test_a_blob_subdirectory_replaced_by_a_link_is_not_written_through(tmp_path: Path) -> None:
    sub = probe_subdir(tmp_path)
    path = session(tmp_path / "work" / "s.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    blobs = path.parent / ".blobs"
    blobs.mkdir(mode=0o700)
    (blobs / sub).symlink_to(elsewhere)
    before = path.read_bytes()
    one_line(run(tmp_path, "slim", str(path), "--no-backup"), str(blobs / sub), "is a symbolic link")
    assert path.read_bytes() == before and list(elsewhere.iterdir()) == []


def _slimmed_with_its_blob_subdirectory_behind_a_link(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A slimmed session whose blob's subdirectory (``.blobs/ab``) was moved
    to ``tmp_path/elsewhere`` and replaced by a symbolic link to it:
    (session, blob path through the link, the directory the link names)."""
    path = session(tmp_path / "work" / "s.jsonl", secret=True)
    blob = slimmed(tmp_path, path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(blob.parent, elsewhere / blob.parent.name)
    blob.parent.symlink_to(elsewhere / blob.parent.name)
    return path, blob, elsewhere


@pytest.mark.parametrize("command", ["restore", "secrets"])
def test_a_blob_subdirectory_replaced_by_a_link_is_not_read_through(tmp_path: Path, command: str) -> None:
    path, blob, elsewhere = _slimmed_with_its_blob_subdirectory_behind_a_link(tmp_path)
    before = path.read_bytes()
    one_line(run(tmp_path, command, str(path)), str(blob.parent), "is a symbolic link")
    assert path.read_bytes() == before


def test_scrub_never_deletes_a_blob_outside_the_blob_directory(tmp_path: Path) -> None:
    """``.blobs/ab`` replaced by a link to a directory holding a file of
    the blob's name: scrub refuses it, and that file stays."""
    path, blob, elsewhere = _slimmed_with_its_blob_subdirectory_behind_a_link(tmp_path)
    before = path.read_bytes()
    one_line(run(tmp_path, "scrub", str(path), "--mode", "rewrite"), str(blob.parent), "is a symbolic link")
    assert (elsewhere / blob.parent.name / blob.name).is_file()
    assert path.read_bytes() == before


def test_scrub_never_follows_a_link_at_a_blob_path(tmp_path: Path) -> None:
    """A blob replaced by a link to a file holding its bytes: scrub
    refuses it; neither the link nor the file it names is touched."""
    path = session(tmp_path / "work" / "s.jsonl", secret=True)
    blob = slimmed(tmp_path, path)
    target = tmp_path / "elsewhere.json"
    shutil.move(blob, target)
    blob.symlink_to(target)
    before = path.read_bytes()
    one_line(run(tmp_path, "scrub", str(path), "--mode", "rewrite"), str(blob), "a symbolic link")
    assert blob.is_symlink() and target.is_file() and SECRET.encode() in target.read_bytes()
    assert path.read_bytes() == before


def test_scrub_deletes_a_blob_without_waiting_on_a_fifo_beside_the_session(tmp_path: Path) -> None:
    """Before deleting a blob, scrub looks for sessions still naming it in
    the directory holding ``.blobs``: a FIFO named like a session there is
    skipped, not opened for reading (which would wait for a writer)."""
    path = session(tmp_path / "work" / "s.jsonl", secret=True)
    blob = slimmed(tmp_path, path)
    os.mkfifo(path.parent / "planted.jsonl")
    (path.parent / "elsewhere.jsonl").symlink_to(tmp_path / "missing.jsonl")
    out = run(tmp_path, "scrub", str(path), "--mode", "rewrite", "--json")
    assert out.returncode == 0, out.stderr
    assert [b["action"] for b in json.loads(out.stdout)["blobs"]] == ["removed"]
    assert not blob.exists() and SECRET.encode() not in path.read_bytes()


# --- the opening rules themselves ---------------------------------------------


def test_guarded_reads_take_only_bounded_regular_files(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    assert read_regular(tmp_path / "f", 5)[0] == b"12345"
    with pytest.raises(UnsafePathError, match="larger than 4 bytes"):
        read_regular(tmp_path / "f", 4)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafePathError, match="a FIFO"):
        read_regular(tmp_path / "fifo", 5)
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(UnsafePathError, match="a symbolic link"):
        read_regular(tmp_path / "zero", 5)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 5)


def test_guarded_directories_are_private_and_never_links(tmp_path: Path) -> None:
    fd, created = open_private_dir(tmp_path / "d", owner=os.geteuid(), create=True)  # type: ignore[misc]
    os.close(fd)
    assert created and stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o700
    assert open_private_dir(tmp_path / "none", owner=os.geteuid()) is None
    (tmp_path / "link").symlink_to(tmp_path / "d")
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        open_private_dir(tmp_path / "link", owner=os.geteuid())
    os.chmod(tmp_path / "d", 0o770)
    with pytest.raises(UnsafePathError, match="writable by other users"):
        open_private_dir(tmp_path / "d", owner=os.geteuid())
    with pytest.raises(UnsafePathError, match="belongs to another user"):
        open_private_dir(tmp_path / "d", owner=os.geteuid() + 1)
