"""A build of the files' search index from nothing (issue 24's build
speed): FTS5's automerge is off while it runs and restored after it, also
after a build that was cut short; the index answers as before. Real
files, real SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from pi_session.search.files import FileIndex
from search_helpers import write_corpus


def _automerge(path: Path) -> list[tuple[int]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchall()


def test_build_turns_automerge_off_and_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "sessions"
    write_corpus(root)
    index = FileIndex(root, path=tmp_path / "i.sqlite3")
    seen: list[list[tuple[int]]] = []
    index.update(lambda done, total: seen.append(_automerge(tmp_path / "i.sqlite3")))
    index.close()
    assert seen and all(s == [(0,)] for s in seen)  # off while the build runs
    assert _automerge(tmp_path / "i.sqlite3") == [(4,)]  # FTS5's default, after it

    # a build cut short (an exception while indexing) restores it too
    cut = FileIndex(root, path=tmp_path / "cut.sqlite3")

    def boom(done: int, total: int) -> None:
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        cut.update(boom)
    cut.close()
    assert _automerge(tmp_path / "cut.sqlite3") == [(4,)]


def test_automerge_left_off_by_a_killed_build_is_restored(tmp_path: Path) -> None:
    # a process killed after some batches of a build committed leaves
    # automerge off: the next update that writes turns it on again
    root = tmp_path / "sessions"
    write_corpus(root)
    path = tmp_path / "i.sqlite3"
    index = FileIndex(root, path=path)
    index.update()
    index.connection().execute("INSERT INTO fts (fts, rank) VALUES ('automerge', 0)")
    index.update()  # nothing changed: nothing written
    assert _automerge(path) == [(0,)]
    one = sorted(root.rglob("*.jsonl"))[0]
    with one.open("ab") as f:
        f.write(orjson.dumps({"type": "label", "id": "l9", "parentId": "k1", "timestamp": "2026-03-01T11:00:00.000Z",
                              "targetId": "u1", "label": "grownlabel"}) + b"\n")
    index.update()
    index.close()
    assert _automerge(path) == [(4,)]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM docs d JOIN fts ON fts.rowid = d.doc WHERE fts MATCH 'grownlabel'").fetchone() == (1,)
