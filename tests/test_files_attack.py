"""Session files under attack, through the real console script:
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
    warning = [line for line in proc.stderr.splitlines() if "could not keep owner" in line]
    assert len(warning) == 1 and f"could not keep owner {UID}:{GID}" in warning[0] and str(path) in warning[0], proc.stderr
    # one line of its own, not Python's "file:line: OwnershipWarning" and source line
    assert warning[0].startswith("pi-session: warning: ") and "OwnershipWarning" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------- item 8


def _bounded(*cmd: str) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` with a 60 s timeout and 2 GiB of address space, so a
    listing that blocks on a FIFO or reads /dev/zero for ever fails the
    test instead of hanging it (or eating the machine's memory)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, env=env, preexec_fn=limit)


@pytest.fixture
def hostile_dir(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    """A sessions root whose /proj directory holds two real sessions, a
    FIFO ``x.jsonl`` (newest mtime), a FIFO named like a session file and
    a symlink ``zero.jsonl`` to /dev/zero."""
    from pi_session.core.paths import encode_cwd

    root = tmp_path / "root"
    directory = root / encode_cwd("/proj")
    real = [make_session(directory, n=2), make_session(directory, n=4)]
    os.mkfifo(directory / "x.jsonl")
    os.mkfifo(directory / "2030-01-01T00-00-00-000Z_fifo-session.jsonl")
    os.symlink("/dev/zero", directory / "zero.jsonl")
    future = 4_000_000_000
    os.utime(directory / "x.jsonl", (future, future))
    return root, directory, real


@pytest.mark.parametrize("scope", [["--cwd", "/proj"], ["--all"]])
def test_ls_skips_fifos_and_devices(hostile_dir: tuple[Path, Path, list[Path]], scope: list[str]) -> None:
    root, _directory, real = hostile_dir
    proc = _bounded(str(BIN), "--store", str(root), "ls", "--json", *scope)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = json.loads(proc.stdout)
    assert sorted(s["path"] for s in listed) == sorted(str(p) for p in real)


def test_continue_recent_skips_fifos_and_devices(hostile_dir: tuple[Path, Path, list[Path]]) -> None:
    root, directory, real = hostile_dir
    script = (
        "import sys; from pi_session import SessionManager; "
        "m = SessionManager.continue_recent('/proj', session_dir=sys.argv[1]); print(m.get_session_file())"
    )
    proc = _bounded(sys.executable, "-c", script, str(directory))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in {str(p) for p in real}
    store_script = (
        "import sys; from pi_session.stores import FileStore; s = FileStore(sys.argv[1]); "
        "print(s.most_recent('/proj')); print(sorted(s.find('')))"
    )
    proc = _bounded(sys.executable, "-c", store_script, str(root))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] != "None" and "fifo-session" not in proc.stdout


# ---------------------------------------------------------------- item 9

LIBRARY_IDS = ["user_123", "chat.v2", "Support-42"]


@pytest.fixture
def id_sessions(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """An agent dir whose sessions have ids the library accepts but that
    are not UUIDs (``SessionManager.create(id=...)``)."""
    from pi_session import SessionManager
    from storage_helpers import user

    agent = tmp_path / "agent"
    files: dict[str, Path] = {}
    for sid in LIBRARY_IDS:
        m = SessionManager.create("/proj", agent / "sessions" / "--proj--", id=sid)
        m.append_message(user(f"hello from {sid}"))
        path = m.get_session_file()
        assert path is not None
        files[sid] = path
    return agent, files


def _info(agent: Path, arg: str, *store: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PI_SESSION_STORE", None)
    return subprocess.run([str(BIN), *store, "info", "--json", arg], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("with_store", [False, True], ids=["agent-dir", "store"])
@pytest.mark.parametrize(
    ("arg", "sid"),
    [("user_123", "user_123"), ("user", "user_123"), ("user_", "user_123"), ("chat.v2", "chat.v2"), ("chat.", "chat.v2"),
     ("Support-42", "Support-42"), ("Supp", "Support-42"), ("USER_1", "user_123")],
)
def test_cli_opens_every_id_the_library_accepts(id_sessions: tuple[Path, dict[str, Path]], arg: str, sid: str,
                                                with_store: bool) -> None:
    agent, files = id_sessions
    store = ["--store", str(agent / "sessions")] if with_store else []
    proc = _info(agent, arg, *store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["id"] == sid
    assert str(files[sid]) in proc.stdout


@pytest.mark.parametrize("with_store", [False, True], ids=["agent-dir", "store"])
@pytest.mark.parametrize("arg", ["123", "v2", "42", "_123", "Z_user", "support", "user_1234"])
def test_cli_never_matches_the_end_of_an_id(id_sessions: tuple[Path, dict[str, Path]], arg: str, with_store: bool) -> None:
    agent, _files = id_sessions
    store = ["--store", str(agent / "sessions")] if with_store else []
    proc = _info(agent, arg, *store)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
