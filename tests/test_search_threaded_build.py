"""The files' search index built with its parsing thread (a large update:
``FileIndex.thread_bytes``) holds exactly what the one-thread build does
(every table's rows, the same hits and ranks), for a build from nothing and
for an update of grown, rewritten and deleted files; an exception on either
side surfaces in the caller and leaves no thread behind. Real files, real
SQLite."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_session.search import parse_query
from pi_session.search.files import FileIndex
from pi_session.search.fts import fts_candidates

QUERIES = ["resolver", "theme palette", '"stale cache"', "res*", "resolver -theme", "role:assistant resolver",
           "tool:read", "file:auth1.py", "model:gpt", "zebra", "caf\u00e9", "nul", "escape"]


def _session(n: int) -> list[dict[str, Any]]:
    """A session of about 60 documents of every kind, with hostile text."""
    sid = f"0192cccc-0000-7000-8000-{n:012d}"
    ts = f"2026-04-{1 + n % 28:02d}T10:00:00.000Z"
    recs: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": f"/work/proj-{n % 3}"}]
    parent = None
    words = ["resolver", "theme", "palette", "stale", "cache", "zebra", "caf\u00e9", "\u65e5\u672c", "\U0001f600"]
    for i in range(30):
        text = " ".join(words[(n + i + k) % len(words)] for k in range(12))
        if i == 3:  # hostile text; U+0000 (and a backslash-u0000) in two sessions only: the writer's JSON batches take neither
            text += (" nul\u0000after \\u0000" if n in (0, 25) else " nul after") + " escape \x1b[31mred\x1b[0m end"
        user = {"type": "message", "id": f"u{i}", "parentId": parent, "timestamp": ts,
                "message": {"role": "user", "content": text, "timestamp": 1775000000000 + i}}
        asst = {"type": "message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": ts,
                "message": {"role": "assistant", "model": "gpt-5-mini" if i % 2 else "claude-sonnet-4", "provider": "x",
                            "api": "x", "stopReason": "stop", "timestamp": 1775000000000 + i,
                            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                            "content": [{"type": "thinking", "thinking": f"pondering {text}"},
                                        {"type": "text", "text": f"answer {i} {text}"},
                                        {"type": "toolCall", "id": f"c{i}", "name": "read",
                                         "arguments": {"path": f"src/auth{i % 4}.py"}}]}}
        recs += [user, asst]
        parent = f"a{i}"
    recs.append({"type": "session_info", "id": "n1", "parentId": parent, "timestamp": ts, "name": f"session {n} name"})
    recs.append({"type": "context_edit", "id": "e1", "parentId": "n1", "timestamp": ts, "targetId": "u5",
                 "replacement": {"content": "[redacted]"}})
    return recs


def _write(root: Path, sessions: range) -> None:
    for n in sessions:
        d = root / f"--work-proj-{n % 3}--"
        d.mkdir(parents=True, exist_ok=True)
        lines = [orjson.dumps(r) for r in _session(n)]
        lines[5] = lines[5].replace(b'"content":"', b'"content":"\\ud800 ', 1)  # a lone surrogate escaped in JSON
        (d / f"2026-04-01T10-00-00-000Z_{n:04d}.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def _tables(index: FileIndex) -> dict[str, list[Any]]:
    conn = index.connection()
    out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in ("docs", "sessions", "files", "edits", "sources")}
    out["fts_docsize"] = conn.execute("SELECT * FROM fts_docsize ORDER BY id").fetchall()
    out["automerge"] = conn.execute("SELECT v FROM fts_config WHERE k = 'automerge'").fetchall()
    for q in QUERIES:
        parsed = parse_query(q)
        cands = index.with_texts(fts_candidates(conn, parsed, p="", texts=False, limit=50), thinking=False)
        out[q] = [(c.sid, c.pos, c.entry_id, round(c.rank, 9), c.body, c.edited) for c in cands]
        out[q + " (thinking)"] = [(c.sid, c.pos, c.rank) for c in fts_candidates(conn, parsed, p="", texts=False, thinking=True)]
    return out


def _build(root: Path, path: Path, threaded: bool, **kw: Any) -> tuple[FileIndex, Any]:
    index = FileIndex(root, path=path)
    index.thread_bytes = 0 if threaded else None
    return index, index.update(**kw)


def _reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "pi-session-index-reader"]


def test_threaded_build_and_update_give_the_same_index(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _write(root, range(70))  # about 4,400 documents: several chunks of the parsing thread
    states = []
    for threaded in (False, True):
        index, stats = _build(root, tmp_path / f"i-{threaded}.sqlite3", threaded)
        built = _tables(index)
        assert stats.files_read == 70 and len(built["docs"]) > 4000
        assert built["automerge"] == [(4,)]  # restored after the build
        states.append((built, stats))
        index.close()
    assert states[0] == states[1]
    assert states[0][0]["nul"] and states[0][0]["escape"] and states[0][0]["file:auth1.py"]

    # an update: grown files, a rewritten one, a deleted one, new ones
    work = tmp_path / "work"
    shutil.copytree(root, work)
    paths = sorted(work.rglob("*.jsonl"))
    for index_name in ("a", "b"):
        index, _ = _build(work, tmp_path / f"u-{index_name}.sqlite3", False)
        index.close()
    with paths[0].open("ab") as f:
        f.write(orjson.dumps({"type": "label", "id": "l9", "parentId": "e1", "timestamp": "2026-05-01T00:00:00.000Z",
                              "targetId": "u1", "label": "grown zebra"}) + b"\n")
    paths[1].write_bytes(paths[2].read_bytes())  # rewritten (another session's text)
    paths[3].unlink()
    _write(work, range(70, 80))
    updated = []
    for index_name, threaded in (("a", False), ("b", True)):
        index, stats = _build(work, tmp_path / f"u-{index_name}.sqlite3", threaded)
        updated.append((_tables(index), stats))
        index.close()
    assert updated[0] == updated[1]
    assert updated[1][1].reindexed == 1 and updated[1][1].dropped == 1 and updated[1][1].files_read == 12


def test_writer_error_surfaces_and_the_thread_ends(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _write(root, range(70))
    seen: list[int] = []

    def boom(done: int, total: int) -> None:
        seen.append(done)
        if done == 40:
            raise RuntimeError("progress display failed")

    index = FileIndex(root, path=tmp_path / "i.sqlite3")
    index.thread_bytes = 0
    with pytest.raises(RuntimeError, match="progress display failed"):
        index.update(boom)
    assert seen == list(range(1, 41))
    assert not _reader_threads()
    conn = index.connection()
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 0  # the batch was rolled back
    index.close()
    # the next update completes the index, as the one-thread build would
    index, _ = _build(root, tmp_path / "i.sqlite3", True)
    again, _ = _build(root, tmp_path / "j.sqlite3", False)
    a, b = _tables(index), _tables(again)
    a.pop("automerge"), b.pop("automerge")
    assert a == b
    index.close()
    again.close()


@pytest.mark.parametrize("threaded", [False, True])
def test_parsing_error_surfaces_as_in_one_thread(tmp_path: Path, threaded: bool) -> None:
    # a sources row damaged by hand (its line count is text) for a
    # file that then grows: parsing it fails, in the parsing thread too
    root = tmp_path / "sessions"
    _write(root, range(70))
    path = sorted(root.rglob("*.jsonl"))[40]
    _build(root, tmp_path / "i.sqlite3", False)[0].close()
    db = sqlite3.connect(tmp_path / "i.sqlite3")
    db.execute("UPDATE sources SET lines = 'x' WHERE path = ?", (str(path),))
    db.commit()
    db.close()
    for p in root.rglob("*.jsonl"):
        with p.open("ab") as f:
            f.write(orjson.dumps({"type": "label", "id": "l9", "parentId": "e1", "timestamp": "2026-05-01T00:00:00.000Z",
                                  "targetId": "u1", "label": "grown"}) + b"\n")
    index = FileIndex(root, path=tmp_path / "i.sqlite3")
    index.thread_bytes = 0 if threaded else None
    with pytest.raises(TypeError):
        index.update()
    assert not _reader_threads()
    assert not index.connection().in_transaction
    index.close()


def test_only_large_updates_parse_in_a_thread(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _write(root, range(70))
    size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
    for limit, threaded in ((size, False), (size - 1, True)):
        index = FileIndex(root, path=tmp_path / f"i-{threaded}.sqlite3")
        assert index.thread_bytes is not None and index.thread_bytes > size  # the default: this corpus is small
        index.thread_bytes = limit
        alive: list[bool] = []
        index.update(lambda done, total: alive.append(bool(_reader_threads())))
        # the thread parses ahead: while the first files are written it is
        # at the third chunk
        assert len(alive) == 70 and alive[0] is threaded and not any(alive[1:] if not threaded else [])
        assert not _reader_threads()
        index.close()
