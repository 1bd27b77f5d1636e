"""pi-session's caches (the listing index, the search index and its
shards, the import state) on a machine shared with someone hostile: a
symbolic link, a FIFO or a forged index planted at a cache path, a cache
directory another user can write into or owns, and two installed versions
sharing one cache directory. Real console-script processes, real files,
real SQLite; the foreign-owner tests need root (``.ci/run`` runs as root)
and are skipped otherwise."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agent_import_helpers import cc_assistant, cc_user, write_jsonl
from pi_session.storage.cache import dir_problem, other_versions, read_cache_file, versioned_name
from pi_session.importers.state import state_path
from pi_session.stores.listing import index_path as listing_path
from pi_session.core.paths import encode_cwd
from pi_session.search.files import INDEX_VERSION, FileIndex
from pi_session.search.files import index_path as search_path
from pi_session.stores import open_store

CWD = "/work/proj"
SID = "0192eeee-0000-7000-8000-000000000001"
NOBODY = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$XDG_CACHE_HOME of this test (and of the processes it starts)."""
    c = tmp_path / "cache"
    c.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(c))
    return c


@pytest.fixture()
def sessions(tmp_path: Path) -> Path:
    """The sessions root ``cli`` uses (``$PI_CODING_AGENT_DIR/sessions``),
    one session whose first message says ``zebracorn``."""
    d = tmp_path / "agent" / "sessions" / encode_cwd(CWD)
    d.mkdir(parents=True)
    records = [
        {"type": "session", "version": 3, "id": SID, "timestamp": "2026-04-01T10:00:00.000Z", "cwd": CWD},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-04-01T10:01:00.000Z",
         "message": {"role": "user", "content": "zebracorn stampede", "timestamp": 1775037660000}},
    ]
    (d / f"2026-04-01T10-00-00-000Z_{SID}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return tmp_path / "agent" / "sessions"


def _project(sessions: Path) -> Path:
    return sessions / encode_cwd(CWD)


def run(tmp_path: Path, *args: str, cwd: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real console script, with this test's cache and agent dir;
    a hang fails the test instead of stopping the run."""
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200"}
    try:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pi-session {' '.join(args)} still running after {timeout} s")


def _search(tmp_path: Path, sessions: Path) -> subprocess.CompletedProcess[str]:
    out = run(tmp_path, "search", "--store", str(sessions), "--json", "zebracorn")
    assert out.returncode == 0, out.stderr
    assert [h["sessionId"] for h in orjson.loads(out.stdout)["hits"]] == [SID]
    return out


def _ls(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    out = run(tmp_path, "ls", "--all", "--json")
    assert out.returncode == 0, out.stderr
    return out


def _claude_source(tmp_path: Path) -> Path:
    src = tmp_path / "claude" / "projects"
    write_jsonl(src / "-home-ada-project" / "11111111-2222-4333-8444-555555555555.jsonl", [
        cc_user("u1", None, 1, "list the files"),
        cc_assistant("a1", "u1", 2, "msg_1", [{"type": "text", "text": "Sure."}]),
    ])
    return src


def _import(tmp_path: Path, src: Path) -> subprocess.CompletedProcess[str]:
    out = run(tmp_path, "import", "--from", "claude-code", str(src), "--store", str(tmp_path / "imported"), "--json")
    assert out.returncode == 0, out.stderr
    return out


def _warnings(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in out.stderr.splitlines() if "warning" in line]


# --- symbolic links and FIFOs at cache paths ---------------------------------


@pytest.mark.parametrize("side", ["", "-wal", "-shm", "-journal"])
def test_a_dangling_link_at_the_search_index_path_creates_nothing(tmp_path: Path, cache: Path, sessions: Path, side: str) -> None:
    victim = tmp_path / "victim"
    planted = Path(f"{search_path(sessions)}{side}")
    planted.parent.mkdir(parents=True, mode=0o700)
    os.chmod(planted.parent.parent, 0o700)
    planted.symlink_to(victim)
    out = _search(tmp_path, sessions)
    assert not victim.exists() and not victim.is_symlink()
    assert any("symbolic link" in w for w in _warnings(out)), out.stderr
    assert stat.S_ISREG(os.lstat(search_path(sessions)).st_mode)
    assert not planted.is_symlink()
    _search(tmp_path, sessions)  # and it is used from then on
    assert not victim.exists()


def test_a_link_at_a_shard_path_creates_nothing(tmp_path: Path, cache: Path, sessions: Path) -> None:
    index = FileIndex(sessions, shards=2, parallel_bytes=0)
    index.update()
    shard = index.shard_path(1)
    index.close()
    victim = tmp_path / "victim"
    shard.unlink()
    shard.symlink_to(victim)
    for side in ("-wal", "-shm"):
        Path(f"{shard}{side}").unlink(missing_ok=True)
        Path(f"{shard}{side}").symlink_to(f"{victim}{side}")
    out = _search(tmp_path, sessions)
    assert not any(p.name.startswith("victim") for p in tmp_path.iterdir())
    assert any("symbolic link" in w for w in _warnings(out)), out.stderr


def test_a_forged_listing_index_behind_a_link_is_not_read(tmp_path: Path, cache: Path, sessions: Path) -> None:
    session_file = next(_project(sessions).iterdir())
    st = session_file.stat()
    forged = tmp_path / "forged.json"
    info = {"id": SID, "cwd": CWD, "created": "2026-04-01T10:00:00.000Z", "modified": "2026-04-01T10:01:00.000Z",
            "messageCount": 1, "firstMessage": "PLANTED BY SOMEONE ELSE", "allMessagesText": "PLANTED"}
    forged_bytes = orjson.dumps({"version": 1, "files": {session_file.name: [st.st_size, st.st_mtime_ns, st.st_ino, info]}})
    forged.write_bytes(forged_bytes)
    link = listing_path(_project(sessions))
    link.parent.mkdir(parents=True, mode=0o700)
    os.chmod(link.parent.parent, 0o700)
    link.symlink_to(forged)
    out = _ls(tmp_path)
    assert "PLANTED" not in out.stdout and "zebracorn" in out.stdout
    assert forged.read_bytes() == forged_bytes  # the link's target is not written either
    assert stat.S_ISREG(os.lstat(link).st_mode)  # the index is the user's own file now


def test_a_fifo_at_the_listing_index_path_does_not_hang_ls(tmp_path: Path, cache: Path, sessions: Path) -> None:
    fifo = listing_path(_project(sessions))
    fifo.parent.mkdir(parents=True, mode=0o700)
    os.chmod(fifo.parent.parent, 0o700)
    os.mkfifo(fifo, 0o600)
    out = _ls(tmp_path)
    assert "zebracorn" in out.stdout
    assert stat.S_ISREG(os.lstat(fifo).st_mode)  # replaced by the index


def test_a_fifo_at_the_import_state_path_does_not_hang_import(tmp_path: Path, cache: Path) -> None:
    src = _claude_source(tmp_path)
    fifo = state_path("claude-code", open_store(str(tmp_path / "imported")).url)
    fifo.parent.mkdir(parents=True, mode=0o700)
    os.chmod(fifo.parent.parent, 0o700)
    os.mkfifo(fifo, 0o600)
    out = _import(tmp_path, src)
    assert [r["status"] for r in orjson.loads(out.stdout)] == ["imported"]
    assert stat.S_ISREG(os.lstat(fifo).st_mode)
    again = _import(tmp_path, src)
    assert [r["status"] for r in orjson.loads(again.stdout)] == ["unchanged"]  # the state is used


def test_a_cache_file_is_read_only_as_a_bounded_regular_file(tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.write_bytes(b"x" * 10)
    (tmp_path / "link").symlink_to(good)
    os.mkfifo(tmp_path / "fifo")
    assert read_cache_file(good, 10) == b"x" * 10
    assert read_cache_file(good, 9) is None  # larger than the bound
    assert read_cache_file(tmp_path / "link", 10) is None
    assert read_cache_file(tmp_path / "fifo", 10) is None  # returns at once
    assert read_cache_file("/dev/zero", 10) is None
    assert read_cache_file(tmp_path / "missing", 10) is None


# --- a cache directory someone else can change -------------------------------


@pytest.mark.parametrize(("where", "mode"), [("cache", 0o777), ("pi-session", 0o777), ("pi-session", 0o770), ("part", 0o707)])
def test_a_cache_directory_others_can_write_into_is_not_used(tmp_path: Path, cache: Path, sessions: Path, where: str, mode: int) -> None:
    src = _claude_source(tmp_path)
    parts = [cache / "pi-session" / p for p in ("listing", "search", "imports")]
    for p in parts:
        p.mkdir(parents=True, mode=0o700)
    targets = {"cache": [cache], "pi-session": [cache / "pi-session"], "part": parts}[where]
    for t in targets:
        os.chmod(t, mode)
    before = sorted(cache.rglob("*"))
    for out in (_ls(tmp_path), _search(tmp_path, sessions), _import(tmp_path, src)):
        said = _warnings(out)
        assert len(said) == 1 and "is not used" in said[0] and "writable by other users" in said[0], out.stderr
    assert sorted(cache.rglob("*")) == before  # nothing written into it


def test_a_sticky_shared_directory_above_the_cache_is_fine(tmp_path: Path, cache: Path, sessions: Path) -> None:
    os.chmod(cache, 0o1777)  # as $XDG_CACHE_HOME=/tmp/... would be
    assert dir_problem(cache / "pi-session" / "search") is None
    out = _search(tmp_path, sessions)
    assert _warnings(out) == [] and search_path(sessions).exists()


def test_a_search_without_its_cache_leaves_no_temporary_index(tmp_path: Path, cache: Path, sessions: Path) -> None:
    os.chmod(cache, 0o777)
    temp = tmp_path / "tmp"
    temp.mkdir(mode=0o700)
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "TMPDIR": str(temp)}
    out = subprocess.run([str(exe), "search", "--store", str(sessions), "zebracorn"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "zebracorn" in out.stdout, out.stderr
    assert "searching with a temporary index" in out.stderr
    assert list(temp.iterdir()) == []


@root_only
@pytest.mark.parametrize("where", ["cache", "pi-session", "search"])
def test_a_cache_directory_of_another_user_is_not_used(tmp_path: Path, cache: Path, sessions: Path, where: str) -> None:
    d = {"cache": cache, "pi-session": cache / "pi-session", "search": cache / "pi-session" / "search"}[where]
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chown(d, NOBODY, NOBODY)
    out = _search(tmp_path, sessions)
    assert any("belongs to another user" in w for w in _warnings(out)), out.stderr
    assert not search_path(sessions).exists()


@root_only
def test_a_search_index_of_another_user_is_not_opened(tmp_path: Path, cache: Path, sessions: Path) -> None:
    _search(tmp_path, sessions)
    path = search_path(sessions)
    with sqlite3.connect(path) as conn:  # as someone else's index would: planted rows
        conn.execute("UPDATE meta SET value = 'planted' WHERE key = 'shards'")
    os.chown(path, NOBODY, NOBODY)
    out = _search(tmp_path, sessions)
    assert any("owned by another user" in w for w in _warnings(out)), out.stderr
    assert os.lstat(path).st_uid == os.geteuid()


@root_only
def test_a_listing_index_of_another_user_is_not_read(tmp_path: Path, cache: Path, sessions: Path) -> None:
    _ls(tmp_path)
    path = listing_path(_project(sessions))
    path.write_bytes(path.read_bytes().replace(b"zebracorn", b"PLANTEDX!"))
    os.chown(path, NOBODY, NOBODY)
    out = _ls(tmp_path)
    assert "PLANTED" not in out.stdout and "zebracorn" in out.stdout
    assert os.lstat(path).st_uid == os.geteuid()


# --- two installed versions share one cache directory ------------------------


def test_two_versions_of_the_search_index_live_side_by_side(tmp_path: Path, cache: Path, sessions: Path) -> None:
    from pi_session.search import files

    def update(version: str) -> tuple[int, list[str]]:
        with pytest.MonkeyPatch.context() as mp:  # this process as another installed version
            mp.setattr(files, "INDEX_VERSION", version)
            index = FileIndex(sessions)
            try:
                return index.update().bytes_indexed, index.warnings
            finally:
                index.close()

    first = update(INDEX_VERSION)
    other = update("99")  # another installed version, its own file
    assert first[0] > 0 and other[0] > 0 and first[1] == other[1] == []
    assert update(INDEX_VERSION) == (0, []) and update("99") == (0, [])  # neither rebuilt the other's
    names = sorted(p.name for p in search_path(sessions).parent.glob("*.sqlite3"))
    assert names == sorted([search_path(sessions).name, search_path(sessions).name.replace(f".v{INDEX_VERSION}.", ".v99.")])


def test_caches_are_named_by_their_format_version(tmp_path: Path, cache: Path, sessions: Path) -> None:
    assert search_path(sessions).name.endswith(f".v{INDEX_VERSION}.sqlite3")
    assert listing_path(_project(sessions)).name.endswith(".v1.json")
    assert re.fullmatch(r"[0-9a-f]{32}\.v[0-9]+\.json", state_path("codex", "x").name)
    # files an older version wrote (its names had no version) are left alone
    old_search = search_path(sessions).with_name(search_path(sessions).name.replace(f".v{INDEX_VERSION}", ""))
    old_listing = listing_path(_project(sessions)).with_name(listing_path(_project(sessions)).name.replace(".v1", ""))
    for p in (old_search, old_listing):
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        p.write_bytes(b"another version's cache")
    _ls(tmp_path)
    out = _search(tmp_path, sessions)
    assert _warnings(out) == []
    assert old_search.read_bytes() == old_listing.read_bytes() == b"another version's cache"
    assert other_versions(search_path(sessions)) == [old_search]
    assert other_versions(listing_path(_project(sessions))) == [old_listing]
    assert versioned_name("k", 3, ".json") == "k.v3.json"


def test_scrub_deletes_what_other_versions_cached_of_the_session(tmp_path: Path, cache: Path, sessions: Path) -> None:
    from pi_session.secrets.purge import purge_caches

    _ls(tmp_path)
    _search(tmp_path, sessions)
    listing = listing_path(_project(sessions))
    other_listing = listing.with_name(listing.name.replace(".v1", ".v7"))
    old_listing = listing.with_name(listing.name.replace(".v1", ""))
    index = search_path(sessions)
    other_index = index.with_name(index.name.replace(f".v{INDEX_VERSION}", ".v99"))
    other_shard = index.with_name(index.name.replace(f".v{INDEX_VERSION}.sqlite3", ".shard1.db"))
    for p in (other_listing, old_listing, other_index, other_shard):
        p.write_bytes(b"zebracorn, as another version keeps it")
    session_file = next(_project(sessions).iterdir())
    purge_caches(session_file)
    assert not any(p.exists() for p in (other_listing, old_listing, other_index, other_shard))
    assert listing.exists() and index.exists()  # this version's own: refreshed, not deleted


def test_scrub_deletes_caches_in_a_directory_it_no_longer_uses(tmp_path: Path, cache: Path, sessions: Path) -> None:
    from pi_session.secrets.purge import purge_caches

    _ls(tmp_path)
    _search(tmp_path, sessions)
    listing, index = listing_path(_project(sessions)), search_path(sessions)
    assert listing.exists() and index.exists()
    os.chmod(cache / "pi-session", 0o777)  # made shared since: its files are never opened again
    purge_caches(next(_project(sessions).iterdir()))
    assert not listing.exists() and not index.exists()


@root_only
def test_a_link_someone_else_owns_in_a_sticky_directory_is_not_trusted(tmp_path: Path, sessions: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    link = shared / "cache"
    link.symlink_to(mine)  # its owner could point it elsewhere at any time
    os.lchown(link, NOBODY, NOBODY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(link))
    problem = dir_problem(link / "pi-session" / "search")
    assert problem is not None and "belongs to another user" in problem
    out = _search(tmp_path, sessions)
    assert any("is not used" in w for w in _warnings(out)), out.stderr
    os.lchown(link, os.geteuid(), os.getegid())
    assert dir_problem(link / "pi-session" / "search") is None
