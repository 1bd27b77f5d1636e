"""A sharded files' index (issue 24's build speed: one FTS5 writer per
core). Its shards are written by real worker processes, queried in
threads and merged in rank order; it answers what a one-database index
answers, stays current, and a missing or damaged shard, a worker that
fails or cannot start are handled. Real files, real SQLite, real
processes (``tests/test_search.py`` runs every test on 3 shards too)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from pi_session.core.paths import encode_cwd
from pi_session.search import parse_query, search
from pi_session.search.files import FileIndex, file_key, index_path, key_shard
from pi_session.search.shards import rank_key
from search_helpers import QUERIES, S1, write_corpus

EXTRA = 24


def _extra_sessions(root: Path) -> None:
    """24 more sessions over 3 projects, each with its own word and one
    shared one (so files spread over every shard)."""
    for i in range(EXTRA):
        sid = f"0192cccc-0000-7000-8000-{i:012d}"
        d = root / encode_cwd(f"/work/extra{i % 3}")
        d.mkdir(parents=True, exist_ok=True)
        records = [
            {"type": "session", "version": 3, "id": sid, "timestamp": f"2026-04-{i % 28 + 1:02d}T10:00:00.000Z", "cwd": f"/work/extra{i % 3}"},
            {"type": "message", "id": "u1", "parentId": None, "timestamp": f"2026-04-{i % 28 + 1:02d}T10:01:00.000Z",
             "message": {"role": "user", "content": f"sharedword uniq{i} resolver " + "filler " * i, "timestamp": 1775037660000 + i}},
        ]
        (d / f"2026-04-01T10-00-00-000Z_{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PI_SESSION_SEARCH_SHARDS", raising=False)
    r = tmp_path / "sessions"
    write_corpus(r)
    _extra_sessions(r)
    return r


def _found(index: FileIndex, query: str, limit: int | None) -> list[tuple[str, int]]:
    cands = index.candidates(parse_query(query), p="", include_edited=False, thinking=False, sids=None, limit=limit)
    return [(c.sid, c.pos) for c in cands]


def _sources(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT path FROM sources")]


def test_workers_build_what_one_process_builds(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = FileIndex(root, path=tmp_path / "one.sqlite3", shards=1)
    one_stats = one.update()
    sharded = FileIndex(root, path=tmp_path / "three.sqlite3", shards=3, parallel_bytes=0)

    # the shards are written by worker processes: this process's
    # write_shard is broken, theirs is not
    def broken(*args: object, **kw: object) -> None:
        raise AssertionError("written in this process")

    monkeypatch.setattr(FileIndex, "write_shard", broken)
    seen: list[tuple[int, int]] = []
    stats = sharded.update(lambda done, total: seen.append((done, total)))
    monkeypatch.undo()
    files = EXTRA + 3
    assert (stats.files_read, stats.bytes_indexed) == (one_stats.files_read, one_stats.bytes_indexed) == (files, one_stats.bytes_indexed)
    assert seen[-1] == (files, files) and [d for d, _t in seen] == sorted(d for d, _t in seen)
    assert sharded.shard_count == 3

    # every file is in the shard of its key, and every shard holds some
    placed = {k: _sources(sharded.shard_path(k)) for k in range(3)}
    assert all(placed.values())
    assert sorted(p for ps in placed.values() for p in ps) == sorted(_sources(tmp_path / "one.sqlite3"))
    assert all(key_shard(file_key(p), 3) == k for k, ps in placed.items() for p in ps)
    for p in sharded.path.parent.glob("three.*"):
        assert p.stat().st_mode & 0o077 == 0

    for q in [*QUERIES, "sharedword", "uniq7", '"sharedword uniq3"', "sharedword -uniq5", "role:user", "project:extra1 resolver"]:
        assert sorted(_found(sharded, q, None)) == sorted(_found(one, q, None)), q
        ranked = list(sharded.candidates(parse_query(q), p="", include_edited=False, thinking=False, sids=None, limit=5))
        assert [rank_key(c) for c in ranked] == sorted(rank_key(c) for c in ranked), q
        assert len(ranked) >= min(5, len(_found(one, q, None))), q
    one.close()
    sharded.close()


def test_a_sharded_index_stays_current(root: Path) -> None:
    index = FileIndex(root, shards=3, parallel_bytes=0)  # where search() finds it
    index.update()
    index.close()
    assert {h.session_id for h in search(root, "sharedword", limit=100).hits} == {f"0192cccc-0000-7000-8000-{i:012d}" for i in range(EXTRA)}
    # an append: only its bytes are read, and its word is found
    grown = next(root.rglob("*_0192cccc-0000-7000-8000-000000000004.jsonl"))
    line = orjson.dumps({"type": "message", "id": "u2", "parentId": "u1", "timestamp": "2026-04-05T10:02:00.000Z",
                         "message": {"role": "user", "content": "appendedzeppelin", "timestamp": 1775037720000}}) + b"\n"
    with grown.open("ab") as f:
        f.write(line)
    result = search(root, "appendedzeppelin")
    assert result.indexed == len(line) and [h.entry_id for h in result.hits] == ["u2"]
    # a rewritten file is indexed again whole; a deleted one is dropped
    rewritten = next(root.rglob("*_0192cccc-0000-7000-8000-000000000007.jsonl"))
    rewritten.write_bytes(rewritten.read_bytes().replace(b"uniq7", b"newword7"))
    gone = next(root.rglob("*_0192cccc-0000-7000-8000-000000000008.jsonl"))
    gone.unlink()
    assert [h.entry_id for h in search(root, "newword7").hits] == ["u1"]
    assert search(root, "uniq7").hits == [] and search(root, "uniq8").hits == []
    # a project's sessions (--cwd) and forgetting a session, over shards
    assert {h.project for h in search(root, "sharedword", cwd="/work/extra1", limit=100).hits} == {"/work/extra1"}
    assert len(search(root, "sharedword", cwd="/work/extra1", limit=100).hits) == EXTRA // 3
    from pi_session.search import forget_session

    assert forget_session(root, S1) is True
    assert search(root, "nxdomain", update=False).hits == []
    assert FileIndex(root).shard_count == 3  # kept


@pytest.mark.parametrize("damage", ["missing", "garbage"])
def test_a_missing_or_damaged_shard_rebuilds_the_index(root: Path, damage: str) -> None:
    index = FileIndex(root, shards=3, parallel_bytes=0)
    index.update()
    shard = index.shard_path(2)
    index.close()
    first = {(h.session_id, h.entry_id) for h in search(root, "resolver", limit=100).hits}
    for suffix in ("-wal", "-shm"):
        Path(f"{shard}{suffix}").unlink(missing_ok=True)
    if damage == "missing":
        shard.unlink()
    else:
        shard.write_bytes(b"not a shard" * 500)
    result = search(root, "resolver", limit=100)
    assert {(h.session_id, h.entry_id) for h in result.hits} == first
    assert len(result.warnings) == 1 and "rebuilding" in result.warnings[0]
    assert ("missing" if damage == "missing" else "damaged") in result.warnings[0]
    assert search(root, "resolver").warnings == []


def _age(root: Path) -> None:
    """Set the sessions' directories an hour back, so the index's listings
    of them are not racy: a search then opens no file or shard to see that
    nothing changed."""
    for d in [root, *root.iterdir()]:
        os.utime(d, (time.time() - 3600, time.time() - 3600))


@pytest.mark.parametrize("update", [True, False])
def test_a_shard_found_damaged_is_rebuilt_and_indexed_before_the_answer(root: Path, update: bool) -> None:
    _age(root)
    index = FileIndex(root, shards=3, parallel_bytes=0)
    index.update()
    shard = index.shard_path(1)
    index.close()
    first = {(h.session_id, h.entry_id) for h in search(root, "sharedword", limit=100).hits}
    assert len(first) == EXTRA
    shard.unlink()
    result = search(root, "sharedword", limit=100, update=update)
    assert {(h.session_id, h.entry_id) for h in result.hits} == first  # not "no hits" from an emptied index
    assert len(result.warnings) == 1 and "missing" in result.warnings[0]


def test_shard_files_do_not_outlive_their_index(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = FileIndex(root, shards=3, parallel_bytes=0)
    index.update()
    main = index.path
    index.close()
    left = sorted(main.parent.glob(f"{main.stem}.shard*"))
    assert left
    # the main file alone deleted: a build from nothing with one shard deletes the old shards
    main.unlink()
    monkeypatch.setenv("PI_SESSION_SEARCH_SHARDS", "1")
    assert {h.session_id for h in search(root, "nxdomain").hits} == {S1}
    assert not [p for p in left if p.exists()]
    # orphans of a deleted index (no search since): a scrub's purge deletes them
    monkeypatch.setenv("PI_SESSION_SEARCH_SHARDS", "2")
    for p in main.parent.iterdir():
        p.unlink()
    search(root, "nxdomain")
    main.unlink()
    orphans = sorted(main.parent.glob(f"{main.stem}.shard*"))
    assert orphans
    from pi_session.secrets.purge import purge_caches

    purge_caches(next(root.rglob(f"*{S1}.jsonl")))
    assert not [p for p in orphans if p.exists()]


@pytest.mark.parametrize("value", ["0", "-1", "abc", "17", "2.5", ""])
def test_a_bad_shard_count_is_said_and_ignored(root: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PI_SESSION_SEARCH_SHARDS", value)
    result = search(root, "nxdomain")
    assert [h.session_id for h in result.hits] == [S1]
    assert result.warnings == [f"PI_SESSION_SEARCH_SHARDS={value!r} is not a number from 1 to 16; the number of shards is chosen as usual"]
    assert FileIndex(root).shard_count == 1  # a small corpus: one


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_a_failing_worker_is_one_clear_error(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = FileIndex(root, path=tmp_path / "i.sqlite3", shards=2, parallel_bytes=0)
    monkeypatch.setattr(sys, "executable", _fake_python(tmp_path, "echo 'boom: this is no python' >&2; exit 3"))
    with pytest.raises(OSError, match=r"i\.sqlite3: indexing shard [01] failed: boom: this is no python"):
        index.update()
    monkeypatch.undo()
    index.close()
    again = FileIndex(root, path=tmp_path / "i.sqlite3", parallel_bytes=0)
    assert again.update().files_read == EXTRA + 3  # the next update builds it
    assert len(_found(again, "sharedword", None)) == EXTRA
    again.close()


def test_workers_that_cannot_start_leave_the_work_to_this_process(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = FileIndex(root, path=tmp_path / "i.sqlite3", shards=2, parallel_bytes=0)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert index.update().files_read == EXTRA + 3
    assert len(_found(index, "sharedword", None)) == EXTRA
    index.close()


def test_the_cli_builds_shards_when_told(root: Path, cli) -> None:
    out = cli("search", "--store", str(root), "--json", "uniq11", env={"PI_SESSION_SEARCH_SHARDS": "2"})
    assert out.returncode == 0, out.stderr
    assert [h["sessionId"] for h in orjson.loads(out.stdout)["hits"]] == ["0192cccc-0000-7000-8000-000000000011"]
    assert FileIndex(root).shard_count == 2 and FileIndex(root).shard_path(1).exists()
    assert index_path(root).exists()


def test_automerge_left_off_in_any_shard_is_restored_by_the_next_writing_update(root: Path) -> None:
    index = FileIndex(root, shards=2, parallel_bytes=0)
    index.update()
    for conn in index.shard_connections():  # as a build killed in both shards leaves them
        conn.execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")
    grown = next(p for p in root.rglob("*.jsonl") if index.shard_of(file_key(str(p))) == 0)
    with grown.open("ab") as f:
        f.write(orjson.dumps({"type": "label", "id": "l9", "parentId": None, "timestamp": "2026-04-09T10:00:00.000Z",
                              "targetId": "u1", "label": "grownlabel"}) + b"\n")
    assert index.update().files_read == 1  # a file of shard 0 only
    assert [conn.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchone() for conn in index.shard_connections()] == [(4,), (4,)]
    index.close()


# --- workers never import from the caller's directory ----------------------

_SHADOWED = ("pickle", "json", "selectors", "sqlite3", "orjson", "msgspec", "base64", "hashlib", "sitecustomize", "usercustomize")


def _hostile_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A directory (a cloned repository, say) whose modules shadow what a
    worker imports; each writes ``marker`` when imported."""
    evil = tmp_path / "evil-repo"
    (evil / "pi_session" / "search").mkdir(parents=True)
    marker = tmp_path / "marker"
    code = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for name in _SHADOWED:
        (evil / f"{name}.py").write_text(code)
    for init in ("pi_session/__init__.py", "pi_session/search/__init__.py", "pi_session/search/shard_worker.py"):
        (evil / init).write_text(code)
    return evil, marker


def test_workers_never_import_from_the_callers_directory(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evil, marker = _hostile_dir(tmp_path)
    monkeypatch.chdir(evil)
    index = FileIndex(root, path=tmp_path / "i.sqlite3", shards=2, parallel_bytes=0)

    def broken(*args: object, **kw: object) -> None:
        raise AssertionError("written in this process")

    monkeypatch.setattr(FileIndex, "write_shard", broken)  # so the workers wrote the shards
    assert index.update().files_read == EXTRA + 3
    monkeypatch.undo()
    assert not marker.exists(), marker.read_text()
    assert len(_found(index, "sharedword", None)) == EXTRA
    index.close()


def test_the_cli_run_in_a_hostile_directory_runs_none_of_its_code(tmp_path: Path, cli) -> None:
    """``pi-session search`` run inside a repository holding a ``pickle.py``:
    a build large enough for worker processes (at least PARALLEL_BYTES)."""
    from pi_session.search.files import PARALLEL_BYTES

    evil, marker = _hostile_dir(tmp_path)
    root = tmp_path / "sessions"
    d = root / encode_cwd("/work/big")
    d.mkdir(parents=True)
    per_file = 3 << 19  # 1.5 MiB: a dozen files spread over both shards
    for i in range(PARALLEL_BYTES // per_file + 2):
        sid = f"0192dddd-0000-7000-8000-{i:012d}"
        words = " ".join(f"w{i % 10}x{j % 997:03d}" for j in range(per_file // 7))
        records = [
            {"type": "session", "version": 3, "id": sid, "timestamp": "2026-04-01T10:00:00.000Z", "cwd": "/work/big"},
            {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-04-01T10:01:00.000Z",
             "message": {"role": "user", "content": f"bigneedle{i} {words}", "timestamp": 1775037660000}},
        ]
        (d / f"2026-04-01T10-00-00-000Z_{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    env = {"PI_SESSION_SEARCH_SHARDS": "2", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = cli("search", "--store", str(root), "--json", "bigneedle3", env=env, cwd=str(evil))
    assert not marker.exists(), marker.read_text()
    assert out.returncode == 0, out.stderr
    assert [h["sessionId"] for h in orjson.loads(out.stdout)["hits"]] == ["0192dddd-0000-7000-8000-000000000003"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
        index = FileIndex(root)
        assert all(_sources(index.shard_path(k)) for k in (0, 1))  # both written (by workers: PARALLEL_BYTES read)
        assert sum(p.stat().st_size for p in root.rglob("*.jsonl")) >= PARALLEL_BYTES
        index.close()


def test_workers_run_the_pi_session_their_caller_imported(root: Path, tmp_path: Path) -> None:
    """Isolated workers ignore $PYTHONPATH: they still import pi_session
    from where their caller did (here a copy found through PYTHONPATH,
    whose worker says so)."""
    import shutil

    import pi_session

    lib = tmp_path / "lib"
    shutil.copytree(Path(pi_session.__file__).parent, lib / "pi_session", ignore=shutil.ignore_patterns("__pycache__"))
    said = tmp_path / "worker-ran-the-copy"
    worker = lib / "pi_session" / "search" / "shard_worker.py"
    worker.write_text(worker.read_text() + f"\nopen({str(said)!r}, 'a').write(__file__ + '\\n')\n")
    script = (
        "import sys; from pi_session.search.files import FileIndex; import pi_session; "
        f"assert pi_session.__file__.startswith({str(lib)!r}), pi_session.__file__; "
        f"i = FileIndex({str(root)!r}, path={str(tmp_path / 'c.sqlite3')!r}, shards=2, parallel_bytes=0); "
        "print(i.update().files_read)"
    )
    env = {**os.environ, "PYTHONPATH": str(lib)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(EXTRA + 3)]
    assert said.read_text().split() == [str(worker)] * 2  # both shards' workers
