"""Full-text search (issue 24) on session files: the query language, what
is searched, context edits, the index in the cache directory (incremental,
rewritten files, a deleted or damaged index), and the CLI with hostile
text. Real files, real SQLite, the real console script."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from pi_session.search import OpenTarget, QueryError, forget_session, open_target, parse_query, search, update_index
from pi_session.search.files import FileIndex, index_path
from search_helpers import S1, S2, S3, write_corpus


@pytest.fixture(params=["one-index", "3-shards"])
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    # every test runs on a one-database index and on a sharded one (the
    # corpus spreads over the 3 shards: test_a_sharded_index_spreads_files)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PI_SESSION_SEARCH_SHARDS", "3" if request.param == "3-shards" else "1")
    r = tmp_path / "sessions"
    write_corpus(r)
    return r


def hits(root: Path, query: str, **kw) -> set[tuple[str, str | None]]:
    return {(h.session_id, h.entry_id) for h in search(root, query, limit=100, **kw).hits}


# --- the query language -------------------------------------------------


@pytest.mark.parametrize(
    ("query", "column", "words"),
    [
        ('dns "open', 5, "unclosed quote"),
        ("rol:user x", 1, "unknown filter rol:"),
        ("x role:bot", 8, "role: one of"),
        ("x re:a(?R)?b", 7, "re: recursion and group calls"),
        ("x re:(?<n>a)(?&n)", 13, "re: recursion and group calls"),
        ("x re:" + "a" * 2001, 2006, "re: the pattern is longer than 2,000 characters"),
        ("x after:soon", 9, "after: expects a date"),
        ("", 1, "nothing to search for"),
        ("  ", 1, "nothing to search for"),
        ("x file: role:user", 8, "file: needs a value"),
        ("x file:  ", 8, "file: needs a value"),
        ("x ---", 3, "no letter or digit"),
        ("x tool:", 8, "needs a value"),
        ("x -role:user", 3, "cannot be negated"),
    ],
)
def test_query_errors_say_where(query: str, column: int, words: str) -> None:
    with pytest.raises(QueryError) as info:
        parse_query(query)
    assert f"column {column}:" in str(info.value) and words in str(info.value)


@pytest.mark.parametrize(
    ("query", "column", "words"),
    [
        ("x re:(a", 8, "re: missing )"),  # where the ")" is missing
        ("x re:*a", 6, "re: nothing to repeat"),
        ("x re:" + "(" * 500 + "a" + ")" * 500, 6, "re: the pattern is nested too deeply"),
        ("x re:(?:a{1000}){1000}", 6, "re: the pattern needs more than 256 MB to compile"),
    ],
)
def test_re_errors_say_where_before_anything_is_read(
    tmp_path: Path, query: str, column: int, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``re:`` pattern is compiled by the search's worker process before
    the store is opened (here there is none): a syntax error, a pattern
    nested too deeply or one whose compiled form would not fit in the
    worker's memory is a QueryError naming the column. (A long time budget:
    on a loaded machine the memory bound still ends the compilation first.)"""
    monkeypatch.setattr("pi_session.search.regex_run.REGEX_SECONDS", 120.0)
    with pytest.raises(QueryError) as info:
        search(tmp_path / "no-such-store", query)
    assert f"column {column}:" in str(info.value) and words in str(info.value)


def test_a_backtracking_re_filter_is_stopped_with_a_query_error() -> None:
    """``re:`` runs within a time budget (``RegexRun``): a pattern that
    backtracks for ages on a text ends in a QueryError naming the filter,
    not in a search that never returns."""
    from pi_session.search.regex_run import RegexRun

    query = parse_query("x re:(a|aa)+$")
    run = RegexRun(query, seconds=0.3)
    assert run.matches("a" * 20) and not run.matches("b")
    with pytest.raises(QueryError) as info:
        run.matches("a" * 60 + "!")
    assert "column 6:" in str(info.value) and "took more than 0.3 s; simplify the pattern" in str(info.value)
    with pytest.raises(QueryError):
        RegexRun(query, seconds=0.3).spans("a" * 60 + "!")


def test_a_plain_re_filter_over_too_many_entries_says_to_add_a_word() -> None:
    from pi_session.search.regex_run import RegexRun

    run = RegexRun(parse_query("re:dus.x"), seconds=0.2)
    with pytest.raises(QueryError) as info:
        while True:
            run.filter(["no such word here " * 50] * 200)
    assert run.texts > 1000
    assert "took more than 0.2 s over " in str(info.value) and "entries; add a word" in str(info.value)


def test_a_filter_value_after_a_space_is_the_value() -> None:
    """``file: theme`` is ``file:theme``: the filter is not dropped (and
    ``theme`` is not a word to search for); a word ending in a colon that
    names no filter stays a word."""
    spaced = parse_query("file: theme  project:\tx model:  gpt")
    assert spaced.files == ["theme"] and spaced.projects == ["x"] and spaced.models == ["gpt"] and spaced.terms == []
    assert parse_query('file: "my dir/x.py"').files == ["my dir/x.py"]
    note = parse_query("note: later")
    assert [t.tokens for t in note.terms] == [["note"], ["later"]] and not note.has_filters


def test_a_query_of_negated_words_alone_is_a_query() -> None:
    q = parse_query("-theme -\"dark palette\"")
    assert [(t.tokens, t.negated) for t in q.terms] == [(["theme"], True), (["dark", "palette"], True)]
    assert q.positive == [] and not q.has_filters


def test_query_parts() -> None:
    q = parse_query('dns "fix that" auth.py pre* -noise role:user|tool tool:bash,read after:2026-01-02 file:"a b.py"')
    assert [(t.tokens, t.prefix, t.negated) for t in q.terms] == [
        (["dns"], False, False), (["fix", "that"], False, False), (["auth", "py"], False, False),
        (["pre"], True, False), (["noise"], False, True),
    ]
    assert q.roles == ["user", "tool"] and q.tools == ["bash", "read"] and q.files == ["a b.py"]
    assert q.after_ms == 1767312000000



def test_a_query_of_file_filters_alone_ranks_by_the_files_terms() -> None:
    """The terms an entry naming a ``file:`` filter's file holds: the
    whole value, then its base name, the last token a prefix; none when
    the query has a word (bm25 ranks it) or the value no letter."""
    q = parse_query('file:src/ui/theme.py file:"C:\\app\\x.py" -draft role:assistant')
    assert [[(t.tokens, t.prefix) for t in tier] for tier in q.mention_tiers] == [
        [(["src", "ui", "theme", "py"], True), (["c", "app", "x", "py"], True)],
        [(["theme", "py"], True), (["x", "py"], True)],
    ]
    assert [[t.tokens for t in tier] for tier in parse_query("file:theme.py").mention_tiers] == [[["theme", "py"]], [["theme", "py"]]]
    assert [[t.tokens for t in tier] for tier in parse_query("file:src/").mention_tiers] == [[["src"]], [["src"]]]
    assert parse_query("palette file:theme.py").mention_tiers == []
    assert parse_query("file:/ role:user").mention_tiers == []

# --- what is searched ---------------------------------------------------


def test_every_kind_of_text_is_found(root: Path) -> None:
    assert hits(root, "dns") >= {(S1, "u1"), (S1, "n1")}  # user text, the session name
    assert (S1, "a1") in hits(root, "auth.py")  # a tool call's arguments
    assert (S1, "t1") in hits(root, "authenticate")  # a tool result
    assert hits(root, "nxdomain") == {(S1, "b1")}  # a bash execution
    assert (S1, "k1") in hits(root, "stale")  # a compaction summary
    assert hits(root, "loader") == {(S2, "bs1")}  # a branch summary
    assert hits(root, "reminder") == {(S2, "x1")}  # a custom message
    assert hits(root, "extension") == {(S3, "cm1")}  # a custom_message entry
    assert hits(root, "bookmark") == {(S1, "l1")}  # a label
    assert hits(root, "dnsproject") == {(S1, None), (S3, None)}  # the cwd
    assert (S2, "m1") in hits(root, "gpt")  # a model change


def test_words_phrases_prefixes_negation(root: Path) -> None:
    assert hits(root, "resolver configuration") == {(S1, "a1")}
    assert hits(root, '"configuration resolver"') == set()
    assert hits(root, '"resolver configuration"') == {(S1, "a1")}
    assert (S1, "a1") in hits(root, "configur*")
    assert (S1, "k1") not in hits(root, "resolver -stale") and (S1, "k1") in hits(root, "resolver")
    # negated words without a positive one: every entry but theirs (with filters too)
    assert hits(root, "role:user -resolver") == {(S2, "u1")}
    assert (S2, "x1") in hits(root, "role:custom")
    assert hits(root, "-palette role:custom") == hits(root, "role:custom") - {(S2, "x1")}
    everything = hits(root, "-zzzabsent")
    assert (S2, "u1") in everything and (S1, "b1") in everything
    assert (S2, "u1") in hits(root, "theme") and hits(root, "-theme") == everything - hits(root, "theme")


def test_filters(root: Path) -> None:
    assert hits(root, "resolver role:user") == {(S1, "u1"), (S3, "u1")}
    assert hits(root, "role:tool") == {(S1, "t1"), (S1, "b1")}
    assert hits(root, "tool:bash") == {(S1, "b1")}
    assert hits(root, "file:cache.py") == hits(root, "session:" + S1) != set()
    assert hits(root, "theme file:auth.py") == set()
    assert {s for s, _ in hits(root, "project:DNSPROJECT")} == {S1, S3}
    assert {s for s, _ in hits(root, "model:GPT-5")} == {S2}
    assert {s for s, _ in hits(root, "resolver after:2026-03-02")} == {S2, S3}
    assert {s for s, _ in hits(root, "resolver before:2026-03-02")} == {S1}
    assert hits(root, "resolver re:cache\\b") == {(S1, "k1")}
    assert {h.session_id for h in search(root, "resolver", cwd="/work/themeproject", limit=50).hits} == {S2}


def test_thinking_only_on_request(root: Path) -> None:
    assert hits(root, "pondering") == set()
    assert hits(root, "pondering", thinking=True) == {(S1, "a1")}
    hit = search(root, "pondering", thinking=True).hits[0]
    assert "pondering" in hit.snippet.text
    assert hit.in_thinking and hit.to_json()["inThinking"] is True  # said, not passed off as the reply
    assert not any(h.in_thinking for h in search(root, "resolver", thinking=True).hits)


def test_context_edited_text_is_hidden_unless_asked(root: Path) -> None:
    assert hits(root, "hunter2swordfish") == set()
    found = search(root, "hunter2swordfish", include_edited=True).hits
    assert [(h.entry_id, h.edited) for h in found] == [("u2", True)]
    # the edit hides nothing else
    assert all(not h.edited for h in search(root, "resolver", include_edited=True, limit=50).hits)


def test_hit_fields_and_snippet(root: Path) -> None:
    (hit,) = search(root, "nxdomain").hits
    assert (hit.session_id, hit.entry_id, hit.role, hit.kind, hit.tool) == (S1, "b1", "tool", "bashExecution", "bash")
    assert hit.project == "/work/dnsproject" and hit.session_name == "DNS debugging"
    assert hit.timestamp == "2026-03-01T10:04:00.000Z"
    assert hit.snippet.marked() == "dig example.org status: [NXDOMAIN] flaky"
    assert Path(hit.location).name.endswith(f"{S1}.jsonl")


def test_a_hit_opens_at_a_target_of_plain_data(root: Path) -> None:
    (hit,) = search(root, "nxdomain").hits
    assert open_target(hit) == OpenTarget(hit.location, "b1", None)
    assert open_target(hit, store_url="sqlite:////x.db") == OpenTarget(S1, "b1", "sqlite:////x.db")
    assert open_target(hit, session=S1[:8]) == OpenTarget(S1[:8], "b1", None)


# --- the index: a cache in the cache directory --------------------------


def test_index_lives_in_the_cache_dir_private(root: Path, tmp_path: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    search(root, "dns")
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before  # nothing written into pi's dirs
    path = index_path(root)
    assert path.is_relative_to(tmp_path / "cache" / "pi-session")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_incremental_update_reads_only_appended_bytes(root: Path) -> None:
    files = write_corpus(root)
    assert update_index(root).files_read == 3
    again = update_index(root)
    assert (again.files_read, again.bytes_indexed, again.unchanged) == (0, 0, 3)
    line = orjson.dumps({"type": "message", "id": "u9", "parentId": "k1", "timestamp": "2026-03-04T00:00:00.000Z",
                         "message": {"role": "user", "content": "zeppelin arrives", "timestamp": 1}}) + b"\n"
    with open(files[S1], "ab") as f:
        f.write(line + b'{"type":"message","id":"u10"')  # and a torn line: waits for its newline
    stats = update_index(root)
    assert (stats.files_read, stats.bytes_indexed, stats.reindexed) == (1, len(line), 0)
    assert hits(root, "zeppelin") == {(S1, "u9")}
    assert hits(root, "dns") >= {(S1, "u1")}  # the older text is still there, once
    assert len([h for h in search(root, "dns", limit=50).hits if h.entry_id == "u1"]) == 1


def test_the_freshness_check_lists_only_changed_directories(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an unchanged directory's files are only stat-ed against its recorded
    # listing; yet an append, a new, deleted or renamed file, a new or removed
    # directory, and an entry made without changing the directory's mtime
    # are all seen
    from pi_session.search import freshness as search_freshness

    monkeypatch.setattr(search_freshness, "RACY_NS", 0)  # listings just made count as settled
    files = write_corpus(root)
    update_index(root)
    update_index(root)  # the listings are recorded after a build
    quiet = update_index(root)
    assert (quiet.dirs_listed, quiet.unchanged, quiet.files_read) == (0, 3, 0)

    def line(eid: str, text: str) -> bytes:
        return orjson.dumps({"type": "message", "id": eid, "parentId": None, "timestamp": "2026-03-04T00:00:00.000Z",
                             "message": {"role": "user", "content": text, "timestamp": 1}}) + b"\n"

    with open(files[S1], "ab") as f:  # an append changes no directory
        f.write(line("u9", "zeppelin arrives"))
    appended = update_index(root)
    assert (appended.dirs_listed, appended.files_read) == (0, 1)
    again = update_index(root)  # the directory's listing follows what was indexed
    assert (again.dirs_listed, again.unchanged, again.files_read) == (0, 3, 0)
    assert hits(root, "zeppelin", update=False) == {(S1, "u9")}

    d = files[S1].parent
    header = files[S3].read_bytes().splitlines(keepends=True)[0].replace(S3.encode(), b"0192dddd-0000-7000-8000-000000000005")
    (d / "2026-03-05T00-00-00-000Z_new.jsonl").write_bytes(header + line("n1", "a brand new walrus"))
    assert hits(root, "walrus") == {("0192dddd-0000-7000-8000-000000000005", "n1")}

    files[S3].unlink()
    assert hits(root, "extension") == set()

    tmp = d / "rewrite.tmp"  # an atomic rewrite: a new inode renamed over the file
    tmp.write_bytes(files[S1].read_bytes().replace(b"NXDOMAIN flaky", b"SERVFAIL happy"))
    os.replace(tmp, files[S1])
    assert hits(root, "servfail") == {(S1, "b1")} and hits(root, "nxdomain") == set()

    st = d.stat()  # an entry made while the directory keeps its mtime (its ctime changes)
    (d / "2026-03-06T00-00-00-000Z_same.jsonl").write_bytes(header.replace(b"0192dddd", b"0192eeee") + line("m1", "sneaky narwhal"))
    os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert hits(root, "narwhal") == {("0192eeee-0000-7000-8000-000000000005", "m1")}

    other = root / "--work-newproject--"  # a new project directory
    other.mkdir()
    (other / "2026-03-07T00-00-00-000Z_p.jsonl").write_bytes(header.replace(b"0192dddd", b"0192ffff") + line("p1", "platypus"))
    assert hits(root, "platypus") == {("0192ffff-0000-7000-8000-000000000005", "p1")}
    for f in other.iterdir():
        f.unlink()
    other.rmdir()
    assert hits(root, "platypus") == set()
    assert update_index(root).dirs_listed == 0  # settled again


def test_snippets_are_read_back_from_a_grown_file(root: Path) -> None:
    files = write_corpus(root)
    update_index(root)
    with open(files[S1], "ab") as f:  # the file gains lines the index has not seen
        f.write(orjson.dumps({"type": "message", "id": "u9", "parentId": "k1", "timestamp": "2026-03-04T00:00:00.000Z",
                              "message": {"role": "user", "content": "NXDOMAIN again", "timestamp": 1}}) + b"\n")
    (hit,) = search(root, "nxdomain", update=False).hits  # the index's offsets, the file's current bytes
    assert hit.entry_id == "b1" and hit.snippet.marked() == "dig example.org status: [NXDOMAIN] flaky"
    assert hits(root, "nxdomain") == {(S1, "b1"), (S1, "u9")}


def test_a_file_rewritten_under_the_index_never_shows_its_old_text(root: Path) -> None:
    files = write_corpus(root)
    update_index(root)
    # the same length, the same offsets, other words: what the index holds no longer is in the file
    old = files[S1].read_bytes()
    new = old.replace(b"NXDOMAIN flaky", b"SERVFAIL happy")
    assert len(new) == len(old) and new != old
    files[S1].write_bytes(new)
    assert search(root, "nxdomain", update=False).hits == []  # not shown with text that is not there
    assert hits(root, "nxdomain") == set()  # reindexed whole
    (hit,) = search(root, "servfail").hits
    assert hit.snippet.marked() == "dig example.org status: [SERVFAIL] happy"


def test_rewritten_files_orphans_are_refilled_away(root: Path) -> None:
    files = write_corpus(root)
    update_index(root)
    path = index_path(root)

    def fts_rows() -> int:
        with sqlite3.connect(path) as conn:
            return int(conn.execute("SELECT count(*) FROM fts_docsize").fetchone()[0])

    base = fts_rows()
    for i in range(1, 300):  # every rewrite leaves the old documents' FTS5 rows behind as orphans
        data = files[S2].read_bytes().replace(b"dark palette" if i % 2 else b"dim palette", b"dim palette" if i % 2 else b"dark palette")
        files[S2].write_bytes(data)
        assert update_index(root).reindexed == 1
    assert fts_rows() < base + 1000 + base // 4 + 20  # refilled when orphans passed the threshold
    assert hits(root, '"dim palette"') == {(S2, "u1")} and hits(root, '"dark palette"') == set()


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``pi-session ARGS`` in the test process (``tests/cli_runner.py``)."""
    from cli_runner import run_in_process

    return run_in_process(args, env)


def _env(root: Path, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PI_CODING_AGENT_DIR": str(root.parent / "agent"), "PI_SESSION_STORE": str(root),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "200"}


def test_session_rewritten_by_repair_and_migrate_is_reindexed(root: Path, tmp_path: Path) -> None:
    files = write_corpus(root)
    # repair: a damaged line in the middle goes, the file is rewritten
    data = files[S3].read_bytes().split(b"\n")
    data.insert(2, b'{"type":"message","id":"bad", "message": {"role":"user","content":"quixotic damaged')
    files[S3].write_bytes(b"\n".join(data))
    # migrate: an old (v1) session whose entries get ids when rewritten
    old = root / "--work-old--" / "2026-01-01T00-00-00-000Z_0192cccc-0000-7000-8000-000000000004.jsonl"
    old.parent.mkdir()
    old.write_bytes(
        b'{"type":"session","id":"0192cccc-0000-7000-8000-000000000004","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/old"}\n'
        b'{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"ancient xylophone","timestamp":1}}\n'
    )
    from pi_session import read_session_file

    migrated_id = read_session_file(old).entries[0]["id"]  # what reading (migrating in memory) gives it
    # a v1 entry has no id: the hit names the one the migration gives it
    assert hits(root, "xylophone") == {("0192cccc-0000-7000-8000-000000000004", migrated_id)}
    assert hits(root, "extension") == {(S3, "cm1")}
    env = _env(root, tmp_path)
    proc = _run("check", str(files[S3]), "--repair", env=env)
    assert proc.returncode == 0, proc.stderr
    proc = _run("migrate", str(old), env=env)
    assert proc.returncode == 0, proc.stderr
    stats = update_index(root)
    assert stats.reindexed == 2
    (hit,) = search(root, "xylophone").hits
    assert hit.entry_id == migrated_id  # the migrated file's ids are those (stable)
    assert hits(root, "extension") == {(S3, "cm1")} and hits(root, "resolver works") == {(S3, "u1")}


def test_deleted_index_is_rebuilt(root: Path) -> None:
    first = hits(root, "resolver")
    for p in index_path(root).parent.iterdir():
        p.unlink()
    result = search(root, "resolver", limit=100)
    assert {(h.session_id, h.entry_id) for h in result.hits} == first and result.warnings == []


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign"])
def test_damaged_index_is_rebuilt_with_one_warning(root: Path, damage: str) -> None:
    first = hits(root, "resolver")
    path = index_path(root)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if damage == "garbage":
        path.write_bytes(b"this is not an index" * 100)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[:4096] + b"\x00" * 4096 + data[8192:])
    else:
        path.unlink()
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("INSERT INTO meta VALUES ('version', '0')")
    result = search(root, "resolver", limit=100)
    assert {(h.session_id, h.entry_id) for h in result.hits} == first
    assert len(result.warnings) == 1 and "rebuilding" in result.warnings[0]
    assert ("another version" if damage == "foreign" else "damaged") in result.warnings[0]
    assert search(root, "resolver").warnings == []  # rebuilt: said once


def test_forget_session_purges_its_tokens(root: Path) -> None:
    search(root, "x")  # indexed
    path = index_path(root)

    def terms() -> set[str]:  # of every database of the index (its shards too)
        found: set[str] = set()
        for db in [path, *path.parent.glob(f"{path.stem}.shard*.db")]:
            with sqlite3.connect(db) as conn:
                conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, row)")
                found |= {r[0] for r in conn.execute("SELECT term FROM temp.v")}
        return found

    assert "hunter2swordfish" in terms()
    assert forget_session(root, S1) is True
    assert "hunter2swordfish" not in terms() and "nxdomain" not in terms() and "palette" in terms()
    assert search(root, "nxdomain", update=False).hits == []
    assert forget_session(root, S1) is False
    assert hits(root, "nxdomain") == {(S1, "b1")}  # the next search indexes the file again


# --- concurrency: real processes ----------------------------------------

APPENDER = r"""
import sys
from pi_session.manager.session_manager import SessionManager
from storage_helpers import user
m = SessionManager.open(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
for i in range(int(sys.argv[2])):
    m.append_message(user(f"concurrentmarker number{i}"))
print("done", flush=True)
"""

SEARCHER = r"""
import sys
from pi_session.search import search
print("ready", flush=True)
sys.stdin.readline()
seen = 0
while True:
    done = sys.stdin.readline()  # one line per round from the test: "more" or "stop"
    result = search(sys.argv[1], "concurrentmarker", limit=100000)
    seen = max(seen, len(result.hits))
    assert not result.warnings, result.warnings
    print(len(result.hits), flush=True)
    if done.strip() == "stop":
        break
"""


def test_search_during_concurrent_appends_and_indexing(root: Path, tmp_path: Path) -> None:
    from process_barrier import release_together

    files = write_corpus(root)
    tests_dir = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""), tests_dir]),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    n = 150
    appenders = [subprocess.Popen([sys.executable, "-c", APPENDER, str(files[s]), str(n)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for s in (S1, S2)]
    searcher = subprocess.Popen([sys.executable, "-c", SEARCHER, str(root)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    release_together([*appenders, searcher])
    counts = []
    mine = []
    # search (here and in the other process) while the appenders write,
    # until both are done; every count seen only grows
    while any(p.poll() is None for p in appenders):
        searcher.stdin.write("more\n")
        searcher.stdin.flush()
        counts.append(int(searcher.stdout.readline()))
        mine.append(len(search(root, "concurrentmarker", limit=100000).hits))
    for p in appenders:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and "done" in out, err
    searcher.stdin.write("stop\n")
    searcher.stdin.flush()
    counts.append(int(searcher.stdout.readline()))
    searcher.communicate(timeout=60)
    assert searcher.returncode == 0
    assert counts == sorted(counts) and mine == sorted(mine)
    assert counts[-1] == 2 * n
    assert len(search(root, "concurrentmarker", limit=100000).hits) == 2 * n
    assert len(search(root, "concurrentmarker number7", limit=100000).hits) == 2


# --- the CLI ------------------------------------------------------------


def test_cli_search_json_and_commands(root: Path, tmp_path: Path) -> None:
    env = _env(root, tmp_path)
    proc = _run("search", "nxdomain", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    (hit,) = orjson.loads(proc.stdout)["hits"]
    assert hit["sessionId"] == S1 and hit["entryId"] == "b1" and hit["marks"] == [[24, 32]]
    assert hit["open"][0].endswith(f"{S1}.jsonl --leaf b1") and "browse" in hit["open"][1] and "--at b1" in hit["open"][1]
    proc = _run("search", "resolver role:user", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "DNS debugging" in proc.stdout and "--leaf u1" in proc.stdout
    # --open N (not a terminal): the entries around the hit
    proc = _run("search", "nxdomain", "--open", "1", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "b1 bashExecution  ◀ hit" in proc.stdout and "--leaf b1" in proc.stdout.splitlines()[-1]
    proc = _run("search", "nxdomain", "--open", "0", env=env)  # was "there are 1 hits"
    assert proc.returncode == 1 and "--open 0: 1 hit (--open counts from 1)" in proc.stderr
    proc = _run("search", "zzznothing", env=env)
    assert proc.returncode == 1 and "no hits" in proc.stderr
    proc = _run("search", "zzznothing", "--json", env=env)  # as grep and rg: 1 when nothing matched, JSON too
    assert proc.returncode == 1 and orjson.loads(proc.stdout)["hits"] == []
    proc = _run("search", "nxdomain", env={**env, "PI_SESSION_STORE": str(tmp_path / "nowhere")})
    assert proc.returncode == 1 and f"{tmp_path / 'nowhere'}: no such sessions directory" in proc.stderr
    assert not (tmp_path / "nowhere").exists()
    proc = _run("search", 'x "open', env=env)
    assert proc.returncode == 1 and "column 3" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == "    ^"


def test_cli_damaged_index_warns_once(root: Path, tmp_path: Path) -> None:
    env = _env(root, tmp_path)
    assert _run("search", "resolver", env=env).returncode == 0
    index_path(root).write_bytes(b"\x00garbage" * 512)
    for suffix in ("-wal", "-shm"):
        Path(f"{index_path(root)}{suffix}").unlink(missing_ok=True)
    proc = _run("search", "resolver", env=env)
    assert proc.returncode == 0 and proc.stderr.count("warning:") == 1 and "damaged" in proc.stderr
    proc = _run("search", "resolver", env=env)
    assert proc.returncode == 0 and "warning" not in proc.stderr


def test_cli_hostile_text_is_rendered_safely(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    d = root / "--evil--"
    d.mkdir(parents=True)
    sid = "0192dddd-0000-7000-8000-000000000005"
    evil = "hostileword \x1b]0;pwned\x07 \x1b[2J\x1b[31mred \u202eoverride \x08\x00 bell\x07 " + "x" * 2_000_000 + " hostileword"
    records = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-01T00:00:00.000Z", "cwd": "/evil\x1b[1m"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-03-01T00:00:01.000Z",
         "message": {"role": "user", "content": evil, "timestamp": 1}},
        {"type": "session_info", "id": "n1", "parentId": "u1", "timestamp": "2026-03-01T00:00:02.000Z", "name": "\x1b[5mblink"},
    ]
    (d / f"2026-03-01T00-00-00-000Z_{sid}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    env = _env(root, tmp_path)
    proc = _run("search", "hostileword", env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for raw in ("\x1b", "\x07", "\x08", "\x00", "\u202e"):
        assert raw not in out
    # escape sequences are not indexed (nor shown); other controls are shown as visible escapes
    assert "pwned" not in out and "hostileword red \\u202eoverride \\x08\\x00 bell\\x07" in out
    assert max(len(line) for line in out.splitlines()) < 1000  # a 2 MB line gives a short snippet
    proc = _run("search", "hostileword", "--json", env=env)
    hit = orjson.loads(proc.stdout)["hits"][0]
    assert "\x1b" not in hit["snippet"] and "red \u202eoverride \x08" in hit["snippet"]  # JSON keeps the other controls


def test_cli_a_backtracking_re_filter_is_a_query_error(tmp_path: Path) -> None:
    """~2 s (the re: budget): the CLI says which filter ran out of time and
    exits 1, no internal error."""
    root = tmp_path / "sessions"
    d = root / "--x--"
    d.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "0192aaaa-bbbb-7ccc-8ddd-eeeeffff0001", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    msg = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
           "message": {"role": "user", "content": "a" * 60 + "! backtrack", "timestamp": 1}}
    (d / "2026-01-01T00-00-00-000Z_0192aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl").write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(msg) + b"\n")
    proc = _run("search", "backtrack re:(a|aa)+$", env=_env(root, tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "query error at column 14: re: matching took more than 2 s" in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("args, says", [
    (["--cwd", ""], "--cwd: the directory is empty"),
    (["--cwd", "  "], "--cwd: the directory is empty"),
    (["--json", "--open", "1"], "--open shows one hit and --json prints the hits"),
])
def test_cli_options_that_make_no_sense_are_refused(tmp_path: Path, args: list[str], says: str) -> None:
    """An empty --cwd searched every project without a word; --open with
    --json printed a context, not JSON."""
    root = tmp_path / "sessions"
    root.mkdir()
    proc = _run("search", "word", *args, env=_env(root, tmp_path))
    assert proc.returncode == 1 and f"pi-session: {says}" in proc.stderr, proc.stderr


def test_cli_query_error_caret_under_wide_characters(tmp_path: Path) -> None:
    """The caret under a query error counts terminal cells, not characters:
    after two CJK words (two cells a character) and a tab it stands under
    the quote that is not closed."""
    root = tmp_path / "sessions"
    root.mkdir()
    query = '\u65e5\u672c \u8a9e\t"open'
    proc = _run("search", query, env=_env(root, tmp_path))
    assert proc.returncode == 1, proc.stderr
    from rich.cells import cell_len

    lines = proc.stderr.splitlines()
    assert "query error at column 6: unclosed quote" in lines[0]
    shown, caret = lines[1].expandtabs(), lines[2].expandtabs()  # (the console may expand tabs itself)
    assert shown.replace(" ", "").startswith("\u65e5\u672c\u8a9e")
    assert caret.strip() == "^"
    # the caret's cell is the quote's: 3 wide characters are 6 cells, not 3
    assert cell_len(caret[: caret.index("^")]) == cell_len(shown[: shown.index('"')])
    # a control character is echoed as a visible escape (\x07, 4 cells): the caret counts those
    proc = _run("search", "ab\x07\u202e bogus:x", env=_env(root, tmp_path))
    shown, caret = proc.stderr.splitlines()[1:3]
    assert shown == "  ab\\x07\\u202e bogus:x" and caret.index("^") == shown.index("bogus")
    # a 15,000-character query shows a window around the error, cut ends marked
    proc = _run("search", "word " * 2000 + "bogus:x " + "more " * 1000, env=_env(root, tmp_path))
    shown, caret = proc.stderr.splitlines()[1:3]
    assert len(shown) < 200 and shown.startswith("  …word") and shown.endswith("…")
    assert caret.index("^") == shown.index("bogus")


def test_a_damaged_v1_file_gives_hits_without_entry_ids(root: Path) -> None:
    """The migration's ids count records: a v1 file with a damaged line
    (which another way of reading could count differently) gets no ids
    rather than perhaps wrong ones."""
    old = root / "--work-old--" / "2026-01-01T00-00-00-000Z_0192cccc-0000-7000-8000-000000000005.jsonl"
    old.parent.mkdir()
    old.write_bytes(
        b'{"type":"session","id":"0192cccc-0000-7000-8000-000000000005","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/old"}\n'
        b'{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"ancient marimba","timestamp":1}}\n'
        b'{"type":"message", damaged\n'
        b'{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"later marimba","timestamp":2}}\n'
    )
    assert hits(root, "marimba") == {("0192cccc-0000-7000-8000-000000000005", None)}


def test_damaged_lines_are_reported_when_indexed(root: Path) -> None:
    """Lines holding no record are not searchable: the update that meets
    them says so, once, naming the file and the lines."""
    files = write_corpus(root)
    update_index(root)
    with files[S2].open("ab") as f:
        f.write(b'{"type":"message", torn\n\x00\x00 garbage\n')
    result = search(root, "palette")
    lines = sum(1 for _ in files[S2].open("rb"))
    assert result.warnings == [f"{files[S2]}: 2 damaged lines not searched (lines {lines - 1}, {lines}; pi-session check shows them)"]
    assert search(root, "palette").warnings == []  # said once, when indexed


def test_tool_call_arguments_text() -> None:
    """``args_text``: every leaf of the arguments on its own line with its
    nearest key, strings as they are, in order; deep nesting, huge numbers
    and odd scalars do not raise."""
    from pi_session.search.extract import args_text

    assert args_text("raw text") == "raw text"
    assert args_text({"command": "a\nb", "n": 2**80, "ok": True, "none": None, "x": 1.5}) == (
        f"command: a\nb\nn: {2**80}\nok: true\nnone: null\nx: 1.5"
    )
    assert args_text({"edits": [{"oldText": "old", "newText": "new"}, "bare"]}) == "oldText: old\nnewText: new\nedits: bare"
    assert args_text([1, [2, {"k": "v"}]]) == "1\n2\nk: v"
    deep: object = "bottom"
    for _ in range(3000):
        deep = {"d": [deep]}
    assert args_text(deep) == "d: bottom"
    assert args_text({}) == "" and args_text([]) == ""
