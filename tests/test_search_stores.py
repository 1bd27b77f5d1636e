"""Search on every store (issue 24 item 3): session files (the cache's
FTS5), SQLite (an FTS5 table inside the store) and PostgreSQL (tsvector +
GIN; a real server, tests/postgres_cluster.py) give the same hits for the
same query; the stores' index is written in the append transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from pi_session.search import forget_session, index_for, search
from pi_session.stores import open_store
from search_helpers import QUERIES, S1, S2, corpus, lines_of, write_corpus


@pytest.fixture
def store(store_url, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    s = open_store(store_url)
    for name, records in corpus():
        s.create(lines_of(records), file_name=name)
    yield s
    s.close()


def _hits(target, query: str, **kw) -> set[tuple[str, str | None]]:
    return {(h.session_id, h.entry_id) for h in search(target, query, limit=1000, **kw).hits}


@pytest.fixture(scope="module")
def file_answers(tmp_path_factory) -> dict[str, set]:
    import os

    tmp = tmp_path_factory.mktemp("files")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        write_corpus(tmp / "sessions")
        answers = {q: _hits(tmp / "sessions", q) for q in QUERIES}
        answers.update({f"{q} +edited": _hits(tmp / "sessions", q, include_edited=True, thinking=True) for q in QUERIES})
    finally:
        if old is not None:
            os.environ["XDG_CACHE_HOME"] = old
    return answers


def test_same_query_same_hits_on_every_store(store, file_answers) -> None:
    assert file_answers["resolver"]  # the reference finds something
    for q in QUERIES:
        assert _hits(store, q) == file_answers[q], q
        assert _hits(store, q, include_edited=True, thinking=True) == file_answers[f"{q} +edited"], q
    cwd_hits = {h.session_id for h in search(store, "resolver", cwd="/work/themeproject", limit=50).hits}
    assert cwd_hits == {S2}


def test_index_follows_appends_and_deletes(store) -> None:
    line = orjson.dumps({"type": "message", "id": "u9", "parentId": "k1", "timestamp": "2026-03-04T00:00:00.000Z",
                         "message": {"role": "user", "content": "zeppelin arrives", "timestamp": 1}}) + b"\n"
    store.append(S1, [line])
    assert _hits(store, "zeppelin") == {(S1, "u9")}
    (hit,) = search(store, "zeppelin").hits
    assert hit.session_name == "DNS debugging" and hit.project == "/work/dnsproject"
    store.append(S1, [orjson.dumps({"type": "context_edit", "id": "e9", "parentId": "u9", "timestamp": "2026-03-04T00:00:01.000Z",
                                    "targetId": "u9", "replacement": None}) + b"\n"])
    assert _hits(store, "zeppelin") == set()  # an omitted entry is hidden at once
    store.delete(S1)
    assert _hits(store, "dns") == set()


def _multiline_call() -> bytes:
    from search_helpers import _assistant, _msg

    call = {"type": "toolCall", "id": "c9", "name": "bash",
            "arguments": {"command": "cd build\nmake install\tquietly", "env": [{"NAME": "x\ny"}], "timeout": 30}}
    return orjson.dumps(_msg("a9", "k1", 20, _assistant([call]))) + b"\n"


def test_tool_call_arguments_are_searched_as_text(store, tmp_path, monkeypatch) -> None:
    """A word after an escaped newline or tab of a tool call's arguments is
    found (JSON text would index ``nmake`` and ``tquietly``), on every
    store, and the snippet shows the arguments unescaped."""
    store.append(S1, [_multiline_call()])
    for word in ("make", "quietly", "y", "timeout"):
        assert _hits(store, f"{word} role:assistant") == {(S1, "a9")}, word
    assert _hits(store, "nmake") == set()
    (hit,) = search(store, "install").hits
    assert "bash command: cd build make install quietly" in hit.snippet.text  # white space runs shown as one space
    # the same on session files
    root = tmp_path / "files"
    with open(write_corpus(root)[S1], "ab") as f:
        f.write(_multiline_call())
    assert _hits(root, "make role:assistant") == {(S1, "a9")}


def test_words_in_colour_are_found(store) -> None:
    """Terminal escape sequences in a tool's output are not indexed: a word
    printed in colour is found as itself, on every store."""
    from search_helpers import _msg

    result = _msg("t9", "k1", 21, {"role": "toolResult", "toolCallId": "c9", "toolName": "bash", "isError": False,
                                   "content": [{"type": "text", "text": "\x1b[1;31mcrimson\x1b[0m \x1b]0;title\x07warning"}],
                                   "timestamp": 1772359500000})
    store.append(S1, [orjson.dumps(result) + b"\n"])
    assert _hits(store, "crimson warning") == {(S1, "t9")}
    (hit,) = search(store, "crimson").hits
    assert "\x1b" not in hit.snippet.text and "crimson warning" in hit.snippet.text


def test_forget_session(store) -> None:
    assert _hits(store, "nxdomain") == {(S1, "b1")}
    assert forget_session(store, S1) is True
    assert _hits(store, "nxdomain") == {(S1, "b1")}  # a database reindexes from its lines at once


def _sqlite_store_of_the_corpus(db: Path) -> set[tuple[str, str | None]]:
    """A SQLite store at ``db`` holding the corpus; returns the hits of
    ``resolver`` in it."""
    s = open_store(f"sqlite:///{db}")
    for name, records in corpus():
        s.create(lines_of(records), file_name=name)
    expected = _hits(s, "resolver")
    s.close()
    return expected


def test_sqlite_store_keeps_fts5_inside_and_builds_it_for_an_old_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    expected = _sqlite_store_of_the_corpus(db)
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "pi_search_fts" in names
        # a store written before search existed: no search tables
        for table in ("pi_search_fts", "pi_search_docs", "pi_search_sessions", "pi_search_files", "pi_search_edits"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM pi_meta WHERE key = 'search_version'")
    s = open_store(f"sqlite:///{db}")
    assert _hits(s, "resolver") == expected  # built on first search
    s.close()


def test_sqlite_store_indexed_by_an_older_version_is_indexed_again(tmp_path: Path) -> None:
    """A store whose ``search_version`` is older than this one's (its
    documents extracted another way) is indexed again on the next search."""
    from pi_session.search.store_index import SEARCH_VERSION

    db = tmp_path / "s.db"
    expected = _sqlite_store_of_the_corpus(db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO pi_search_fts (pi_search_fts) VALUES ('delete-all')")  # an older extraction's index, gone
        conn.execute("DELETE FROM pi_search_docs")
        conn.execute("UPDATE pi_meta SET value = '1' WHERE key = 'search_version'")
    s = open_store(f"sqlite:///{db}")
    assert _hits(s, "resolver") == expected
    s.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM pi_meta WHERE key = 'search_version'").fetchone() == (SEARCH_VERSION,)


def test_cli_search_on_a_sqlite_store(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    db = tmp_path / "s.db"
    with open_store(f"sqlite:///{db}") as s:
        for name, records in corpus():
            s.create(lines_of(records), file_name=name)
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    proc = subprocess.run([str(exe), "--store", f"sqlite:///{db}", "search", "nxdomain", "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (hit,) = orjson.loads(proc.stdout)["hits"]
    assert hit["sessionId"] == S1 and hit["location"] == f"sqlite:///{db}#{S1}"
    assert hit["open"][0] == f"pi-session --store sqlite:///{db} context {S1} --leaf b1"
    assert not (tmp_path / "cache").exists()  # a store's index lives in the store


def test_cli_store_option_after_the_command(tmp_path: Path) -> None:
    # docs/secrets.md: "secrets SESSION (--store URL for a database)"; ls, check and
    # import take --store after the command: search, secrets and scrub refused it
    import os
    import subprocess
    import sys

    db = tmp_path / "s.db"
    with open_store(f"sqlite:///{db}") as s:
        for name, records in corpus():
            s.create(lines_of(records), file_name=name)
    exe = Path(sys.executable).parent / "pi-session"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(exe), *args, "--store", f"sqlite:///{db}"], capture_output=True, text=True, env=env, timeout=60)

    proc = run("search", "nxdomain", "--json")
    assert proc.returncode == 0, proc.stderr
    (hit,) = orjson.loads(proc.stdout)["hits"]
    assert hit["location"] == f"sqlite:///{db}#{S1}"
    for args in (("secrets", "--all", "--json"), ("scrub", "--all", "--mode", "edit", "--dry-run")):
        proc = run(*args)
        assert "No such option" not in proc.stderr and proc.returncode in (0, 1), proc.stderr


def _many_matches(n: int) -> list[bytes]:
    """A session whose first message is the best match for ``zebra`` (short,
    the word three times), followed by ``n`` longer, newer messages holding
    it once."""
    sid = "0192cccc-0000-7000-8000-000000000004"
    records = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-05T10:00:00.000Z", "cwd": "/work/zoo"}]
    parent = None
    for i in range(n + 1):
        text = "zebra zebra zebra" if i == 0 else f"a zebra walked past number {i} of the many long enclosures in the city zoo today"
        records.append({"type": "message", "id": f"z{i}", "parentId": parent, "timestamp": "2026-03-05T10:01:00.000Z",
                        "message": {"role": "user", "content": text, "timestamp": 1772704860000 + i}})
        parent = f"z{i}"
    return lines_of(records)


def test_many_matches_rank_only_the_newest_candidates(store_url, tmp_path, monkeypatch) -> None:
    # docs/search.md "Ranking": a query with more matches than the
    # candidate set ranks the newest max(limit, CANDIDATES) of them (FTS5
    # stops early), the same on every store; fewer matches rank them all
    from pi_session.search.fts import CANDIDATES

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = open_store(store_url)
    target.create(_many_matches(CANDIDATES + 10), file_name="2026-03-05T10-00-00-000Z_zoo.jsonl")
    try:
        hits = search(target, "zebra", limit=20).hits
        assert len(hits) == 20
        assert "z0" not in {h.entry_id for h in hits}  # the best bm25 match, but older than the newest candidates
        assert {h.entry_id for h in hits} <= {f"z{i}" for i in range(11, CANDIDATES + 11)}
        # a limit above the candidate set ranks that many: the best match is back, first
        everything = search(target, "zebra", limit=CANDIDATES + 20).hits
        assert everything[0].entry_id == "z0" and len(everything) == CANDIDATES + 11
        # fewer matches than the candidate set: all ranked, the best first
        assert search(target, '"zebra zebra"', limit=5).hits[0].entry_id == "z0"
    finally:
        target.close()


# --- project: and model: fold case alike on every store ------------------

FOLDED = "0192eeee-0000-7000-8000-00000000000"


def _folded_sessions() -> list[tuple[str, list[dict]]]:
    """Sessions whose cwds and model ids hold letters that only Unicode
    case folding matches across cases (SQLite's lower() knows ASCII only;
    PostgreSQL's lower('Straße') is 'straße', not 'strasse')."""
    from search_helpers import _assistant, _msg

    cases = [("/work/Ärger", "Modell-ÜBER"), ("/work/ΣΊΣΥΦΟΣ", "ǅemal-7"), ("/work/Straße", "gpt-ß")]
    out = []
    for n, (cwd, model) in enumerate(cases, 1):
        sid = f"{FOLDED}{n}"
        records = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-06T10:00:00.000Z", "cwd": cwd},
                   _msg("a1", None, 1, _assistant([{"type": "text", "text": "folding answer"}], model=model), day=6)]
        out.append((f"2026-03-06T10-00-0{n}-000Z_{sid}.jsonl", records))
    return out


FOLD_QUERIES = {
    "project:ärger": {1}, "project:ÄRGER": {1}, "project:Ärger": {1},
    "project:σίσυφος": {2}, "project:ΣΊΣΥΦΟΣ": {2}, "project:Σίσυφος": {2},
    "project:STRASSE": {3}, "project:strasse": {3}, "project:straße": {3}, "project:STRAẞE": {3},
    "model:modell-über": {1}, "model:MODELL-Über": {1},
    "model:ǄEMAL": {2}, "model:ǆemal": {2}, "model:ǅemal": {2},
    "model:GPT-SS": {3}, "model:gpt-ß": {3},
}


def test_project_and_model_filters_fold_case_alike_on_every_store(store_url, tmp_path, monkeypatch) -> None:
    """One case rule, Unicode case folding (str.casefold), for project: and
    model: on session files, SQLite and PostgreSQL: a non-ASCII name
    matches on all of them or on none."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = open_store(store_url)
    try:
        for name, records in _folded_sessions():
            target.create(lines_of(records), file_name=name)
        for query, wanted in FOLD_QUERIES.items():
            found = {h.session_id for h in search(target, f"folding {query}", limit=50).hits}
            assert found == {f"{FOLDED}{n}" for n in wanted}, (store_url, query)
            assert {h.session_id for h in search(target, query, limit=50).hits} == {f"{FOLDED}{n}" for n in wanted}, query
    finally:
        target.close()


def test_a_store_indexed_by_another_version_gets_the_folded_columns(tmp_path: Path) -> None:
    """A SQLite store whose search tables were made by the previous version
    (no case-folded cwd column) has them dropped and made again, and its
    project: filter folds case."""
    from pi_session.search.store_index import SEARCH_VERSION

    db = tmp_path / "s.db"
    with open_store(f"sqlite:///{db}") as s:
        index_for(s).close()  # the index, written by each create
        for name, records in _folded_sessions():
            s.create(lines_of(records), file_name=name)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE pi_search_sessions DROP COLUMN cwd_fold")
        conn.execute("UPDATE pi_meta SET value = '2' WHERE key = 'search_version'")
    with open_store(f"sqlite:///{db}") as s:
        assert {h.session_id for h in search(s, "project:STRASSE").hits} == {f"{FOLDED}3"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM pi_meta WHERE key = 'search_version'").fetchone() == (SEARCH_VERSION,)


# --- a query of file: filters only ranks the entries naming the file -----

def _one_old_mention(n: int) -> list[bytes]:
    """A session whose second entry reads ``src/ui/theme.py`` (an
    assistant's tool call), its third mentions ``theme.py`` in text, and
    ``n`` newer entries name neither."""
    from search_helpers import _assistant, _msg

    sid = "0192dddd-0000-7000-8000-000000000005"
    records: list[dict] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-06T10:00:00.000Z", "cwd": "/work/paint"},
        _msg("u0", None, 1, {"role": "user", "content": "make the colours warmer", "timestamp": 1772791260000}, day=6),
        _msg("a0", "u0", 2, _assistant([{"type": "toolCall", "id": "c0", "name": "read", "arguments": {"path": "src/ui/theme.py"}}]), day=6),
        _msg("t0", "a0", 3, {"role": "toolResult", "toolCallId": "c0", "toolName": "read", "isError": False, "timestamp": 1772791380000,
                             "content": [{"type": "text", "text": "PALETTE = {'bg': 'white'}"}]}, day=6),
        _msg("a1", "t0", 4, _assistant([{"type": "text", "text": "The palette lives in theme.py; I will change it."}]), day=6),
    ]
    parent = "a1"
    for i in range(n):
        records.append(_msg(f"x{i}", parent, 5 + i % 50, {"role": "user", "content": f"and another tweak {i}",
                                                         "timestamp": 1772791500000 + i}, day=6))
        parent = f"x{i}"
    return lines_of(records)


def test_a_file_filter_alone_ranks_the_entries_naming_the_file_first(store_url, tmp_path, monkeypatch) -> None:
    # `file:theme.py` alone: the entries that name the file (its whole
    # path first, then the base name), not the session's newest entries
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = open_store(store_url)
    target.create(_one_old_mention(30), file_name="2026-03-06T10-00-00-000Z_paint.jsonl")
    try:
        for query in ("file:theme.py", "file:theme.p", "file:ui/theme.py"):
            hits = search(target, query, limit=3).hits
            assert [h.entry_id for h in hits[:2]] == ["a0", "a1"], query
            assert hits[0].snippet.marked().count("[") == 1 and "theme.py]" in hits[0].snippet.marked(), query
            assert hits[2].entry_id == "x29", query  # then the newest, as before
        # the whole path named ranks above its base name alone
        assert [h.entry_id for h in search(target, "file:src/ui/theme.py", limit=2).hits] == ["a0", "a1"]
        # a word in the query: bm25 ranks as before, the filter only selects
        assert search(target, "tweak file:theme.py", limit=1).hits[0].entry_id == "x29"
        # a filter of no letter or digit still selects, newest first
        assert search(target, "file:/", limit=1).hits[0].entry_id == "x29"
        # without a limit (as re: searches) the same order
        assert [h.entry_id for h in search(target, "file:theme.py re:.", limit=2).hits] == ["a0", "a1"]
    finally:
        target.close()
