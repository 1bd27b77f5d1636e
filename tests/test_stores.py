"""Session stores: one suite over every backend (files, SQLite,
PostgreSQL via the ``postgres_url`` fixture), real databases, real
processes.

The ``store_url`` fixture gives a fresh, empty store per test; the
``postgres`` parameter asks for ``postgres_url`` (tests/conftest.py: a
fresh database on the private PostgreSQL cluster) and is skipped where that
fixture does not exist.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from conftest import FIXTURES, GOLDENS
from shared_paths import shared_missing
from pi_session import SessionManager, read_session_file
from pi_session.cli.render import tree_json
from pi_session.core.jsonio import dumps_line, dumps_pretty
from pi_session.storage import ConcurrentAppendError, read_session_lines, rewritten_lines
from pi_session.stores import (
    AmbiguousSessionError,
    SessionExistsError,
    SessionNotFoundError,
    StoreError,
    mask_url,
    open_store,
)
from pi_session.stores.file import FileStore
from pi_session.stores.sqlite import SQLiteStore
from pi_session.stores.transfer import export_file, import_file, import_paths
from sessiongen import generate_session, session_text

SESSIONS = GOLDENS / "sessions"
GOLDEN_GEN = sorted(p.stem for p in SESSIONS.glob("gen-*.jsonl"))[:6]
FIXTURE_FILES = sorted(FIXTURES.glob("*.jsonl"))


@pytest.fixture
def store(store_url):
    s = open_store(store_url)
    yield s
    s.close()


def _header(sid: str, cwd: str = "/work/p", ts: str = "2025-01-01T00:00:00.000Z") -> bytes:
    return dumps_line({"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": cwd})


def _message(eid: str, parent: str | None, text: str, role: str = "user", ms: int = 1735689600000) -> bytes:
    return dumps_line(
        {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": role, "content": text, "timestamp": ms},
        }
    )


# ----------------------------------------------------------------------
# the interface


def test_create_read_append_list_find_delete(store):
    lines = [_header("s-one"), _message("a1", None, "hello")]
    assert store.create(lines) == "s-one"
    with pytest.raises(SessionExistsError):
        store.create(lines)
    sf = store.read("s-one")
    assert sf.header["id"] == "s-one" and [e["id"] for e in sf.entries] == ["a1"]
    assert sf.size == sum(len(line) for line in lines)
    result = store.append("s-one", [_message("a2", "a1", "again", ms=1735689700000)], expected_size=sf.size, on_grown=lambda f: pytest.fail("no other writer"))
    assert result.foreign == [] and result.size == sf.size + len(_message("a2", "a1", "again", ms=1735689700000))
    assert b"".join(store.read_lines("s-one")) == b"".join(lines) + _message("a2", "a1", "again", ms=1735689700000)

    store.create([_header("s-two", cwd="/work/q"), _message("b1", None, "other")])
    infos = store.list()
    assert [i["id"] for i in infos] == ["s-one", "s-two"]  # newest activity first
    one = infos[0]
    assert one["cwd"] == "/work/p" and one["messageCount"] == 2 and one["firstMessage"] == "hello"
    assert one["allMessagesText"] == "hello again" and one["created"] == "2025-01-01T00:00:00.000Z"
    assert [i["id"] for i in store.list(cwd="/work/q")] == ["s-two"]
    assert store.find("s-") == ["s-one", "s-two"] and store.find("s-t") == ["s-two"] and store.find("S-") == []
    assert store.resolve("s-o") == "s-one" and store.resolve("S-O") == "s-one"
    with pytest.raises(AmbiguousSessionError):
        store.resolve("s-")
    with pytest.raises(SessionNotFoundError):
        store.resolve("zzz")
    assert store.delete("s-one") is True and store.delete("s-one") is False
    assert [i["id"] for i in store.list()] == ["s-two"]
    with pytest.raises(SessionNotFoundError):
        store.read("s-one")
    with pytest.raises(SessionNotFoundError):
        store.append("s-one", [_message("x", None, "x")])


def test_create_refuses_lines_without_header(store):
    with pytest.raises(StoreError):
        store.create([_message("a1", None, "no header")])


def test_listing_infos_equal_the_file_listing(store, tmp_path):
    """Every key of ``ls`` as the file listing computes it (the database
    keeps them up to date on append)."""
    header, entries = generate_session(7, pi16=True)
    src = tmp_path / "src" / "g.jsonl"
    src.parent.mkdir()
    src.write_bytes(session_text(header, entries[:10]))
    import_file(store, src)
    store.append(header["id"], [dumps_line(e) for e in entries[10:]])
    full = tmp_path / "full.jsonl"
    full.write_bytes(session_text(header, entries))
    from pi_session.stores.listing import build_session_info

    expected = build_session_info(full)
    ours = next(i for i in store.list() if i["id"] == header["id"])
    for key in ("id", "cwd", "name", "parentSessionPath", "created", "modified", "messageCount", "firstMessage", "allMessagesText"):
        assert ours.get(key) == expected.get(key), key


# ----------------------------------------------------------------------
# import / export


@pytest.mark.parametrize("fixture", [p.name for p in FIXTURE_FILES] or ["absent"])
def test_import_export_pi_fixtures(store, tmp_path, fixture):
    src = FIXTURES / fixture
    if not src.exists():
        pytest.skip(shared_missing(src) or "")
    before = src.read_bytes()
    result = import_file(store, src)
    assert result.status == "imported", result.message
    out = export_file(store, result.session_id, tmp_path / "out.jsonl")
    sf = read_session_file(src)
    expected = b"".join(rewritten_lines(sf)) if sf.migrated_from is not None else before
    assert out.read_bytes() == expected
    assert src.read_bytes() == before  # the source is never changed
    if sf.migrated_from is None:
        assert result.migrated_from is None


def test_import_export_generated_sessions_byte_identical(store, tmp_path):
    for seed in range(4):
        header, entries = generate_session(seed, pi16=bool(seed % 2))
        src = tmp_path / f"gen-{seed}.jsonl"
        src.write_bytes(session_text(header, entries))
        assert import_file(store, src).status == "imported"
        assert b"".join(store.read_lines(header["id"])) == src.read_bytes()


def test_damaged_lines_are_kept_and_reported(store, tmp_path):
    good = [_header("dmg"), _message("a1", None, "one"), _message("a2", "a1", "two")]
    data = good[0] + b"\n" + good[1] + b'{"type":"message","id":"cut\n' + b"\x00\x00" + good[2][:-1] + b"\n" + b"not json at all\n" + b'{"torn":'
    src = tmp_path / "damaged.jsonl"
    src.write_bytes(data)
    result = import_file(store, src)
    assert result.status == "imported"
    file_read = read_session_file(src)
    assert [(p.line, p.kind) for p in result.problems] == [(p.line, p.kind) for p in file_read.problems]
    assert {"blank", "invalid-json", "torn-tail"} <= {p.kind for p in result.problems}
    assert b"".join(store.read_lines("dmg")) == data  # every byte, damage included
    stored = store.read("dmg")
    assert [(p.line, p.kind, p.message) for p in stored.problems] == [(p.line, p.kind, p.message) for p in file_read.problems]
    assert stored.entries == file_read.entries
    # an append after the torn line starts on a line of its own
    manager = SessionManager.open("dmg", store=store)
    manager.append_message({"role": "user", "content": "three", "timestamp": 3})
    again = store.read("dmg")
    assert [e["message"]["content"] for e in again.entries] == ["one", "two", "three"]
    after = b"".join(store.read_lines("dmg"))
    complete = data[: data.rindex(b"\n") + 1]
    assert after.startswith(complete)
    if isinstance(store, FileStore):  # files move a torn last line to a side file: kept there
        side = list(store.path_of("dmg").parent.glob("*.torn-*"))
        assert [f.read_bytes() for f in side] == [b'{"torn":']
    else:  # a database keeps it where it was, terminated
        assert after.startswith(data + b"\n")


V1 = [
    {"type": "session", "id": "old-v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "user", "content": "a", "timestamp": 1}},
    {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z", "message": {"role": "hookMessage", "customType": "x", "content": "h", "display": True, "timestamp": 2}},
    {"type": "compaction", "timestamp": "2025-01-01T00:00:03.000Z", "summary": "s", "firstKeptEntryIndex": 2, "tokensBefore": 5},
]
V2 = [
    {"type": "session", "version": 2, "id": "old-v2", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"},
    {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "hookMessage", "content": "h", "timestamp": 1}},
]


@pytest.mark.parametrize("records", [V1, V2], ids=["v1", "v2"])
def test_old_versions_are_migrated_at_import(store, tmp_path, records):
    src = tmp_path / "old.jsonl"
    src.write_bytes(b"".join(dumps_line(r) for r in records))
    before = src.read_bytes()
    result = import_file(store, src)
    assert result.status == "imported" and result.migrated_from == records[0].get("version", 1)
    stored = store.read(records[0]["id"])
    assert stored.header["version"] == 3 and stored.migrated_from is None
    assert all(isinstance(e["id"], str) for e in stored.entries)
    assert "hookMessage" not in b"".join(store.read_lines(records[0]["id"])).decode()
    assert src.read_bytes() == before and not list(tmp_path.glob("*.bak"))


def test_import_is_idempotent_and_reports_conflicts(store, tmp_path):
    tmp_path = tmp_path / "src"  # apart from a file store's own directory
    tmp_path.mkdir()
    src = tmp_path / "s.jsonl"
    src.write_bytes(_header("idem") + _message("a1", None, "one"))
    assert import_file(store, src).status == "imported"
    assert import_file(store, src).status == "unchanged"
    assert [r.status for r in import_paths(store, [tmp_path])] == ["unchanged"]
    src.write_bytes(_header("idem") + _message("a1", None, "changed"))
    result = import_file(store, src)
    assert result.status == "conflict" and "differ" in result.message
    assert b"one" in b"".join(store.read_lines("idem"))  # left alone
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "junk.jsonl").write_bytes(b"junk\n")
    statuses = {Path(r.source).name: r.status for r in import_paths(store, [tmp_path])}
    assert statuses == {"s.jsonl": "conflict", "empty.jsonl": "skipped", "junk.jsonl": "failed"}


def test_reimport_appends_what_pi_wrote_since(store, tmp_path):
    """Pi goes on writing a session file after it was imported: importing
    it again appends the new lines (``updated``), the store's copy equals
    the file byte for byte, and a store copy that was itself continued in
    the meantime is a conflict, never overwritten or interleaved."""
    tmp_path = tmp_path / "src"
    tmp_path.mkdir()
    src = tmp_path / "s.jsonl"
    first = _header("grow") + _message("a1", None, "one")
    src.write_bytes(first)
    assert import_file(store, src).status == "imported"
    more = _message("a2", "a1", "two", ms=1735689700000) + _message("a3", "a2", "three", ms=1735689800000)
    src.write_bytes(first + more)
    result = import_file(store, src)
    assert (result.status, result.appended) == ("updated", 2)
    assert b"".join(store.read_lines("grow")) == src.read_bytes()
    assert [e["id"] for e in store.read("grow").entries] == ["a1", "a2", "a3"]
    assert import_file(store, src).status == "unchanged"
    # the stored session went on elsewhere (another worker appended): the
    # file's new lines do not continue it any more
    sf = store.read("grow")
    store.append("grow", [_message("w1", "a3", "worker", ms=1735689900000)], expected_size=sf.size)
    src.write_bytes(src.read_bytes() + _message("a4", "a3", "four", ms=1735690000000))
    assert import_file(store, src).status == "conflict"
    assert [e["id"] for e in store.read("grow").entries] == ["a1", "a2", "a3", "w1"]


# ----------------------------------------------------------------------
# SessionManager on a store


def _context(manager: SessionManager, leaf: str) -> dict:
    if leaf == "null":
        manager.reset_leaf()
    elif leaf != "<leaf>":
        manager.branch(leaf)
    ctx = manager.build_session_context()
    out: dict = {"leafId": manager.get_leaf_id()}
    if "thinkingLevel" in ctx:
        out["thinkingLevel"] = ctx["thinkingLevel"]
    out["model"] = ctx["model"]
    out["messages"] = ctx["messages"]
    return out


@pytest.mark.parametrize("name", GOLDEN_GEN)
def test_manager_on_store_matches_pi_goldens(store, name):
    """Context at every golden leaf and the tree, read from the store, equal
    pi's (the oracle goldens)."""
    result = import_file(store, SESSIONS / f"{name}.jsonl")
    goldens = json.loads((SESSIONS / f"{name}.context.json").read_text())
    for leaf, expected in goldens.items():
        manager = SessionManager.open(result.session_id, store=store, read_only=True)
        assert dumps_pretty(_context(manager, leaf)) == dumps_pretty(expected), f"{name} at {leaf}"
    manager = SessionManager.open(result.session_id[:12], store=store, read_only=True)
    assert tree_json(manager.get_tree(), manager.get_leaf_id()) + "\n" == (SESSIONS / f"{name}.tree.json").read_text()


def test_manager_on_store_matches_file_on_fixtures(store):
    for src in FIXTURE_FILES:
        result = import_file(store, src)
        on_store = SessionManager.open(result.session_id, store=store, read_only=True)
        sf = read_session_file(src)
        # the stored session is the (migrated) file: compare with that file's reading
        on_file = SessionManager.in_memory(entries=[sf.header, *sf.entries]) if sf.migrated_from is not None else SessionManager.open(src, read_only=True)
        if sf.migrated_from is not None:
            assert [e["type"] for e in on_store.get_entries()] == [e["type"] for e in on_file.get_entries()]
            assert [m.get("role") for m in on_store.build_session_context()["messages"]] == [
                m.get("role") for m in on_file.build_session_context()["messages"]
            ]
        else:
            assert on_store.get_entries() == on_file.get_entries()
            assert dumps_pretty(on_store.build_session_context()) == dumps_pretty(on_file.build_session_context())
            assert tree_json(on_store.get_tree(), on_store.get_leaf_id()) == tree_json(on_file.get_tree(), on_file.get_leaf_id())


def test_manager_create_write_reopen_continue_fork_branch(store_url, tmp_path):
    manager = SessionManager.create("/work/proj", store=store_url)
    manager.append_model_change("p", "m")
    sid = manager.get_session_id()
    assert not open_store(store_url).exists(sid)  # nothing written before the first message (pi 1.6)
    first = manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    manager.append_message({"role": "assistant", "content": [{"type": "text", "text": "hello"}], "timestamp": 2})
    reopened = SessionManager.open(sid[:13], store=store_url)
    assert reopened.get_entries() == manager.get_entries() and reopened.get_cwd() == "/work/proj"
    recent = SessionManager.continue_recent("/work/proj", store=store_url)
    assert recent.get_session_id() == sid
    assert SessionManager.continue_recent("/work/elsewhere", store=store_url).get_session_id() != sid
    assert [i["id"] for i in SessionManager.list("/work/proj", store=store_url)] == [sid]
    fork = SessionManager.fork_from(sid, "/work/other", store=store_url)
    assert fork.get_entries() == manager.get_entries() and fork.get_header()["cwd"] == "/work/other"
    assert sid in fork.get_header()["parentSession"]
    reopened.create_branched_session(first)
    branched = reopened.get_session_id()
    assert branched not in (sid, fork.get_session_id())
    assert [e["id"] for e in SessionManager.open(branched, store=store_url).get_entries()] == [
        e["id"] for e in manager.get_branch(first)
    ]
    assert {i["id"] for i in SessionManager.list_all(store=store_url)} == {sid, fork.get_session_id(), branched}


def test_stale_leaf_follow_and_strict(store_url):
    a = SessionManager.create("/work/proj", store=store_url)
    a.append_message({"role": "user", "content": "start", "timestamp": 1})
    sid = a.get_session_id()
    b = SessionManager.open(sid, store=store_url)
    strict = SessionManager.open(sid, store=store_url, concurrent="strict")
    other = a.append_message({"role": "assistant", "content": [{"type": "text", "text": "from a"}], "timestamp": 2})
    mine = b.append_message({"role": "user", "content": "from b", "timestamp": 3})
    assert b.get_entry(mine)["parentId"] == other  # chained onto the real last entry
    assert any("another writer" in n for n in b.notes)
    size = open_store(store_url).read(sid).size
    with pytest.raises(ConcurrentAppendError):
        strict.append_message({"role": "user", "content": "stale", "timestamp": 4})
    assert open_store(store_url).read(sid).size == size  # nothing written
    final = SessionManager.open(sid, store=store_url)
    assert [e["id"] for e in final.get_branch()] == [e["id"] for e in final.get_entries()]


# ----------------------------------------------------------------------
# many processes


def _writer(url: str, session_id: str | None, cwd: str, barrier, count: int, tag: str, queue) -> None:
    try:
        if session_id is None:
            manager = SessionManager.create(cwd, store=url, id=f"own-{tag}")
            manager.append_message({"role": "user", "content": f"{tag} start", "timestamp": 1})
        else:
            manager = SessionManager.open(session_id, store=url)
        barrier.wait(timeout=120)
        for i in range(count):
            manager.append_message({"role": "user", "content": f"{tag}-{i}", "timestamp": 10 + i})
        queue.put((tag, None))
    except BaseException as exc:  # reported to the test
        queue.put((tag, repr(exc)))


def _run_writers(url: str, session_id: str | None, processes: int = 8, count: int = 12) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(url, session_id, "/work/many", barrier, count, f"w{n}", queue)) for n in range(processes)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=120)
    assert [err for _tag, err in results if err] == []


def _assert_connected_chain(manager: SessionManager) -> None:
    entries = manager.get_entries()
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    assert sum(1 for e in entries if e.get("parentId") is None) == 1
    assert all(e.get("parentId") is None or e["parentId"] in set(ids) for e in entries)
    assert [e["id"] for e in manager.get_branch()] == ids  # one chain: no turn forked off


def test_eight_processes_append_to_one_session(store_url):
    first = SessionManager.create("/work/many", store=store_url)
    first.append_message({"role": "user", "content": "start", "timestamp": 1})
    sid = first.get_session_id()
    _run_writers(store_url, sid)
    final = SessionManager.open(sid, store=store_url)
    texts = [e["message"]["content"] for e in final.get_entries()]
    assert sorted(texts) == sorted(["start", *(f"w{n}-{i}" for n in range(8) for i in range(12))])
    _assert_connected_chain(final)
    assert final.problems == []


def test_eight_processes_append_to_their_own_sessions(store_url):
    _run_writers(store_url, None)
    store = open_store(store_url)
    assert sorted(i["id"] for i in store.list()) == [f"own-w{n}" for n in range(8)]
    for n in range(8):
        manager = SessionManager.open(f"own-w{n}", store=store_url)
        assert [e["message"]["content"] for e in manager.get_entries()] == [f"w{n} start", *(f"w{n}-{i}" for i in range(12))]
        _assert_connected_chain(manager)


# ----------------------------------------------------------------------
# backend specifics


def test_open_store_by_url(tmp_path):
    assert isinstance(open_store(str(tmp_path / "dir")), FileStore)
    db = open_store(f"sqlite:///{tmp_path}/x.db")
    assert isinstance(db, SQLiteStore) and db.path == tmp_path / "x.db"
    assert (tmp_path / "x.db").stat().st_mode & 0o777 == 0o600
    with pytest.raises(StoreError, match="unknown store URL scheme"):
        open_store("redis://h/0")
    with pytest.raises(StoreError):
        open_store("sqlite://")


def test_password_is_masked():
    assert mask_url("postgresql://bob:s3cret@db:5432/pi") == "postgresql://bob:***@db:5432/pi"
    assert "s3cret" not in mask_url("postgresql://db/pi?user=bob&password=s3cret")
    assert mask_url("postgresql://bob@db/pi") == "postgresql://bob@db/pi"


def test_sqlite_ls_reads_only_the_sessions_table(tmp_path):
    """``ls`` without the message text is one query on the indexed
    sessions table, whatever the sessions hold."""
    store = SQLiteStore(tmp_path / "s.db")
    for n in range(30):
        store.create([_header(f"s{n:02d}", ts=f"2025-01-01T00:00:{n:02d}.000Z"), _message("a", None, f"m{n}", ms=1735689600000 + n)])
    seen: list[str] = []
    store._connection().set_trace_callback(seen.append)
    infos = store.list(with_text=False)
    assert [i["id"] for i in infos] == [f"s{n:02d}" for n in reversed(range(30))]
    assert seen and not any("pi_records" in q for q in seen)
    plan = store._connection().execute("EXPLAIN QUERY PLAN SELECT id FROM pi_sessions ORDER BY modified_ms DESC, id DESC").fetchall()
    assert any("pi_sessions_modified" in str(row) for row in plan)


def test_file_store_is_the_file_layout(tmp_path):
    """FileStore writes what SessionManager writes without a store."""
    root = tmp_path / "sessions"
    manager = SessionManager.create("/work/proj", store=str(root))
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    path = manager.get_session_file()
    assert path is not None and path.parent == root / "--work-proj--"
    assert FileStore(root).path_of(manager.get_session_id()) == path
    assert read_session_lines(FileStore(root).read_lines(manager.get_session_id())).entries == read_session_file(path).entries


def test_read_session_lines_names_the_session():
    with pytest.raises(Exception, match=r"^db#x:1: not a pi session"):
        read_session_lines([b"junk\n"], name="db#x")
    sf = read_session_lines([_header("x"), b"oops\n"], name="db#x")
    assert sf.path is None and sf.warnings() == ["db#x:2: " + sf.problems[0].message]


# ----------------------------------------------------------------------
# the command line


def test_cli_import_export_ls_with_store_option_and_env(cli, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for seed in range(3):
        header, entries = generate_session(seed, cwd="/work/cli")
        (src / f"gen-{seed}.jsonl").write_bytes(session_text(header, entries))
    (src / "broken.jsonl").write_bytes(_header("brk", cwd="/work/cli") + b"not json\n" + _message("a", None, "ok"))
    url = f"sqlite:///{tmp_path}/s.db"
    result = cli("import", str(src), "--store", url)
    assert result.returncode == 0, result.stderr
    assert "4 imported" in result.stdout and "broken.jsonl:2:" in result.stdout  # damage reported as check does
    again = cli("import", str(src), "--store", url, "--json")
    assert again.returncode == 0 and {r["status"] for r in json.loads(again.stdout)} == {"unchanged"}

    listed = cli("ls", "--all", "--json", "--store", url)
    assert listed.returncode == 0, listed.stderr
    ids = {i["id"] for i in json.loads(listed.stdout)}
    assert "brk" in ids and len(ids) == 4
    env = {"PI_SESSION_STORE": url}
    table = cli("ls", "--cwd", "/work/cli", env=env)
    assert table.returncode == 0 and "brk" in table.stdout

    out = tmp_path / "out.jsonl"
    exported = cli("export", "brk", "--format", "jsonl", "--store", url, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert out.read_bytes() == (src / "broken.jsonl").read_bytes()
    header0 = json.loads((src / "gen-0.jsonl").read_text().split("\n", 1)[0])
    stdout_export = cli("--store", url, "export", header0["id"][:13], "--format", "jsonl", "-o", "-")
    assert stdout_export.stdout.encode() == (src / "gen-0.jsonl").read_bytes()

    # session commands on the database: by id prefix, through the env or the global option
    info = cli("info", header0["id"][:13], "--json", env=env)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["id"] == header0["id"]
    named = cli("--store", url, "name", "brk", "renamed")
    assert named.returncode == 0, named.stderr
    assert any(i.get("name") == "renamed" for i in json.loads(cli("ls", "--all", "--json", env=env).stdout))
    refused = cli("check", "brk", env=env)
    assert refused.returncode != 0 and "database" in refused.stderr and "Traceback" not in refused.stderr

    # and back into a directory of files, byte for byte
    back = tmp_path / "back"
    moved = cli("import", url, "--store", str(back))
    assert moved.returncode == 0, moved.stderr
    restored = {p.name: p.read_bytes() for p in back.rglob("*.jsonl")}
    assert restored["gen-1.jsonl"] == (src / "gen-1.jsonl").read_bytes()


def test_cli_store_errors_are_one_line(cli, tmp_path):
    bad = cli("ls", "--store", "postgresql://bob:s3cret@127.0.0.1:1/none")
    assert bad.returncode != 0 and "s3cret" not in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
    open_store(f"sqlite:///{tmp_path}/s.db").close()
    missing = cli("--store", f"sqlite:///{tmp_path}/s.db", "info", "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr and "Traceback" not in missing.stderr
    no_store = cli("import", str(tmp_path))
    assert no_store.returncode == 1 and "--store" in no_store.stderr


def test_a_files_store_that_is_a_file_is_refused(cli, tmp_path):
    """A sessions root that exists as a regular file is an error naming it,
    not an empty store (``ls``: "No sessions") or a misleading "the file
    exists already" for each imported session."""
    not_dir = tmp_path / "sessions.txt"
    not_dir.write_text("x")
    with pytest.raises(StoreError, match="not a directory"):
        open_store(str(not_dir))
    src = tmp_path / "in"
    src.mkdir()
    (src / "s.jsonl").write_bytes(_header("s1") + _message("a", None, "hi"))
    for args in (("ls", "--all", "--store", str(not_dir)), ("import", str(src), "--store", str(not_dir))):
        result = cli(*args)
        assert result.returncode == 1, result
        assert result.stderr.strip() == f"pi-session: {not_dir}: not a directory", result.stderr
    assert not_dir.read_text() == "x"


def test_import_names_why_a_source_cannot_be_read(cli, tmp_path):
    """A symlink loop is not "no such file or directory"."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    url = f"sqlite:///{tmp_path}/s.db"
    result = cli("import", str(tmp_path / "loop1"), str(tmp_path / "missing.jsonl"), "--store", url)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert f"warning: {tmp_path / 'loop1'}: too many levels of symbolic links" in lines, lines
    assert f"warning: {tmp_path / 'missing.jsonl'}: no such file or directory" in lines, lines


def test_a_file_path_with_a_database_store_says_why_it_is_not_opened(cli, tmp_path):
    """With PI_SESSION_STORE naming a database (as the README sets it), a
    session file's path is not an id; the error says the store is why,
    instead of "no session id starts with 'dir/file.jsonl'"."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(_header("s1") + _message("a", None, "hi"))
    env = {"PI_SESSION_STORE": f"sqlite:///{tmp_path}/db.sqlite"}
    open_store(env["PI_SESSION_STORE"]).close()
    for args in (("tree", str(session)), ("check", str(session))):
        result = cli(*args, env=env)
        assert result.returncode != 0 and "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"pi-session: {session}: "), lines
        assert "a file, and the store is the database" in lines[0] and "PI_SESSION_STORE" in lines[0], lines
    assert session.read_bytes() == _header("s1") + _message("a", None, "hi")


def test_only_import_creates_a_sqlite_database(cli, tmp_path):
    """A mistyped (or relative, from another directory) sqlite URL is an
    error for commands that read, and leaves no empty database behind;
    ``import`` into a new database creates it (in an existing directory:
    a missing one is named, never created)."""
    url = f"sqlite:///{tmp_path}/typo/sesions.db"
    for args in (("--store", url, "ls"), ("ls", "--all", "--store", url), ("--store", url, "tree", "abc"),
                 ("import", url, "--store", str(tmp_path / "out")), ("import", url, "--store", f"sqlite:///{tmp_path}/out.db")):
        result = cli(*args)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result
        assert result.stderr.strip() == f"pi-session: {url}: no such database file ({tmp_path}/typo/sesions.db)", result.stderr
    assert not (tmp_path / "typo").exists() and not (tmp_path / "out").exists() and not (tmp_path / "out.db").exists()
    src = tmp_path / "in.jsonl"
    src.write_bytes(_header("s1") + _message("a", None, "hi"))
    no_directory = cli("import", str(src), "--store", url)
    assert no_directory.returncode == 1 and f"no such directory ({tmp_path}/typo)" in no_directory.stderr
    assert not (tmp_path / "typo").exists()
    (tmp_path / "typo").mkdir()
    assert cli("import", str(src), "--store", url).returncode == 0
    assert "s1" in cli("--store", url, "ls", "--all").stdout


def test_browse_refuses_a_database_store_in_one_line(cli, tmp_path):
    """Browse reads files only: with a database store its picker must not
    show the default sessions directory instead, as if the store were empty."""
    url = f"sqlite:///{tmp_path}/s.db"
    open_store(url).close()
    for args in (("--store", url, "browse"), ("--store", url, "browse", "abc")):
        result = cli(*args)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith(f"pi-session: browse works on session files, and the store is the database sqlite:///{tmp_path}/s.db"), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_import_walks_each_directory_once_through_symlink_loops(tmp_path):
    """Two links to ``.`` make 2**40 paths before the OS says ELOOP: each
    directory is walked once, so each file is found once (followed links
    to other directories are still walked)."""
    from pi_session.stores.transfer import session_files

    root = tmp_path / "sessions"
    (root / "p").mkdir(parents=True)
    (root / "p" / "s.jsonl").write_bytes(_header("s1") + _message("a", None, "hi"))
    (root / "p" / "a").symlink_to(".")
    (root / "p" / "b").symlink_to("..")
    other = tmp_path / "other"
    other.mkdir()
    (other / "t.jsonl").write_bytes(_header("t1") + _message("a", None, "hi"))
    (root / "linked").symlink_to(other)
    found = list(session_files([root]))
    assert sorted(p.name for p in found) == ["s.jsonl", "t.jsonl"], found


def test_ids_that_cannot_name_a_file_fail_that_session_only(cli, tmp_path):
    """A database session without a stored file name is written to files as
    ``<timestamp>_<id>.jsonl``; an id holding ``/``, ``\\`` or NUL (a
    hand-made or shared database) fails that session with one line, never
    a path outside the store or an internal error, and the others go on."""
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as db:
        for sid in ("ok-1", "../../up", "a/b", "x\x00y", "back\\slash"):
            db.create([_header(sid), _message("a", None, "hi")])
        db._connection().execute("UPDATE pi_sessions SET file_name = NULL")
    out = tmp_path / "out"
    with pytest.raises(StoreError, match="cannot name a file"):
        FileStore(out).create([_header("a/b"), _message("a", None, "hi")])
    result = cli("import", url, "--store", str(out))
    assert result.returncode == 1 and "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if "cannot name a file" in line]) == 4, result.stderr
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert [p.name.endswith("_ok-1.jsonl") for p in written] == [True], written
    assert not (tmp_path / "up").exists()
    with pytest.raises(StoreError, match="cannot name a directory"):
        FileStore(out).create([_header("nul-cwd", cwd="/w\x00x")])
    with pytest.raises(StoreError, match="file name too long"):
        FileStore(out).create([_header("long-cwd", cwd="/" + "x" * 300)])


def test_import_of_a_sqlite_file_path_names_the_url_to_use(cli, tmp_path):
    """A database file given as a path (not a sqlite:/// URL) is not read
    as a damaged session: the warning says which URL imports from it."""
    db_path = tmp_path / "old.db"
    with open_store(f"sqlite:///{db_path}") as db:
        db.create([_header("s1"), _message("a", None, "hi")])
    result = cli("import", str(db_path), "--store", str(tmp_path / "out"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"warning: {db_path}: a SQLite database, not a session file: import from it as sqlite:///{db_path}" in result.stderr.splitlines(), result.stderr


def test_cli_session_commands_write_into_the_database(cli, tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    manager = SessionManager.create("/work/cli", store=url)
    first = manager.append_message({"role": "user", "content": "one", "timestamp": 1})
    manager.append_message({"role": "assistant", "content": [{"type": "text", "text": "two"}], "timestamp": 2})
    sid = manager.get_session_id()
    env = {"PI_SESSION_STORE": url}
    labelled = cli("label", sid[:13], first, "start", env=env)
    assert labelled.returncode == 0, labelled.stderr
    assert SessionManager.open(sid, store=url).get_label(first) == "start"
    cloned = cli("clone", sid[:13], "--leaf", first, "--json", env=env)
    assert cloned.returncode == 0, cloned.stderr
    clone = json.loads(cloned.stdout)
    assert clone["path"].startswith("sqlite:///") and clone["entries"] >= 1
    assert [e["id"] for e in SessionManager.open(clone["id"], store=url).get_entries()][0] == first
    forked = cli("fork", sid[:13], "--cwd", str(tmp_path), "--json", env=env)
    assert forked.returncode == 0, forked.stderr
    fork = json.loads(forked.stdout)
    assert SessionManager.open(fork["id"], store=url).get_cwd() == str(tmp_path)
    ids = {i["id"] for i in json.loads(cli("ls", "--all", "--json", env=env).stdout)}
    assert ids == {sid, clone["id"], fork["id"]}


def test_store_argument_checks(tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    with pytest.raises(ValueError):
        SessionManager.create("/w", tmp_path / "dir", store=url)
    from pi_session.stores import shared_store

    assert shared_store(url) is shared_store(url)
    assert SessionManager.create("/w", store=url).get_store() is shared_store(url)
    assert SessionManager.create("/w").get_store() is None


def test_file_store_import_refuses_a_taken_file_name(tmp_path):
    store = FileStore(tmp_path / "sessions")
    a = tmp_path / "a" / "same.jsonl"
    b = tmp_path / "b" / "same.jsonl"
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_bytes(_header("first"))
    b.write_bytes(_header("second"))
    assert import_file(store, a).status == "imported"
    result = import_file(store, b)
    assert result.status == "failed" and "exists" in result.message
    assert b"first" in store.path_of("first").read_bytes()


def test_open_by_locator(tmp_path):
    url = f"sqlite:///{tmp_path}/s.db"
    manager = SessionManager.create("/w", store=url)
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    fork = SessionManager.fork_from(manager.get_session_id(), "/w2", store=url)
    parent = SessionManager.open(fork.get_header()["parentSession"], read_only=True)
    assert parent.get_session_id() == manager.get_session_id()
    assert SessionManager.open(manager.get_session_location()).get_entries() == manager.get_entries()


def test_an_old_session_put_in_a_database_directly_opens_read_only(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    store.create([dumps_line(r) for r in V1])  # not through import, which migrates
    manager = SessionManager.open("old-v1", store=store)
    assert manager.file_version == 1 and any("read-only" in n for n in manager.notes)
    assert [e["type"] for e in manager.get_entries()] == ["message", "message", "compaction"]
    with pytest.raises(PermissionError):
        manager.append_message({"role": "user", "content": "new", "timestamp": 5})


def test_file_store_lists_a_directory_again_only_when_it_changed(tmp_path, monkeypatch):
    """Creating N sessions in one project directory lists it O(1) times per
    create, not once per session already there (an import was quadratic),
    and a file another writer adds, or removes, is still seen."""
    import os as _os

    from pi_session.stores import file as file_store

    store = FileStore(tmp_path / "root")
    listings: list[str] = []
    real_listdir = _os.listdir
    monkeypatch.setattr(file_store.os, "listdir", lambda p: (listings.append(str(p)), real_listdir(p))[1])
    for i in range(60):
        store.create([_header(f"s-{i:03d}", ts=f"2025-01-01T00:00:{i:02d}.000Z"), _message(f"e{i}", None, "hi")])
    assert len(listings) <= 2, len(listings)  # the first listing (and a directory made by the first create)
    assert store.exists("s-000") and store.exists("s-059") and not store.exists("s-999")
    # another writer adds a session file (a new directory mtime): seen
    other = FileStore(tmp_path / "root")
    other.create([_header("zz-other", ts="2025-01-02T00:00:00.000Z"), _message("o1", None, "other")])
    assert store.exists("zz-other") and store.resolve("zz") == "zz-other"
    # ... and deletes one: gone
    assert other.delete("s-001") and not store.exists("s-001")
    assert len(store.find("s-")) == 20  # find's limit


def test_a_sqlite_database_that_cannot_be_written_is_read_only(tmp_path):
    """A database on read-only media or without write permission (here by
    its mode, which even root respects) is read, listed and exported; every
    write fails with one line, and the file never changes."""
    import os as _os

    directory = tmp_path / "ro"
    url = f"sqlite:///{directory}/s.db"
    store = open_store(url)
    store.create([_header("ro-one"), _message("a1", None, "hello")])
    store.close()
    db = directory / "s.db"
    before = db.read_bytes()
    _os.chmod(db, 0o444)
    _os.chmod(directory, 0o555)
    try:
        ro = SQLiteStore(db)
        assert ro.read_only
        assert [i["id"] for i in ro.list()] == ["ro-one"] and ro.resolve("ro") == "ro-one"
        assert [e["id"] for e in ro.read("ro-one").entries] == ["a1"]
        with pytest.raises(StoreError, match="read-only"):
            ro.create([_header("ro-two")])
        with pytest.raises(StoreError, match="read-only"):
            ro.append("ro-one", [_message("a2", "a1", "more")])
        ro.close()
        manager = SessionManager.open("ro-one", store=url, read_only=True)
        assert manager.build_session_context()["messages"][0]["content"] == "hello"
        assert db.read_bytes() == before
    finally:
        _os.chmod(directory, 0o755)
        _os.chmod(db, 0o644)


@pytest.mark.parametrize("cwd, directory", [
    ("C:\\Users\\ada\\app", "--C--Users-ada-app--"),
    ("D:/work/app", "--D--work-app--"),
    ("\\\\server\\share\\app", "---server-share-app--"),
])
def test_file_store_names_a_windows_cwd_as_pi_on_windows_wherever_it_runs(tmp_path, monkeypatch, cwd, directory):
    # an imported Claude Code / Codex session from Windows: its directory must not
    # depend on the process cwd (it was resolved as a relative path: --tmp-x-C--Users-…)
    monkeypatch.chdir(tmp_path)
    store = FileStore(tmp_path / "sessions")
    header = {"type": "session", "version": 3, "id": "0228199c-7485-5298-bdc0-a04907cc858f",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}
    handle = store.new_handle(header)
    assert handle.path.parent == tmp_path / "sessions" / directory
