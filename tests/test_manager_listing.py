"""Listing and session discovery as pi 1.6 does them (SPEC-pi-1.6 §5.1, §5.4):
cwd filtering outside cwd's default directory, descending file-name read
order with a stable sort by ``modified``, the progress callback,
``find_by_id``, ``continue_recent``, ``list_all`` over every project.

Golden: tests/goldens/ops/listing.json (pi 1.6's ``list`` and ``find-by-id``;
regenerate with tests/tools/make_ops_goldens.py).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import GOLDENS
from pi_session import SessionManager
from pi_session.stores.listing import index_path, list_sessions_dirs

GOLDEN = json.loads((GOLDENS / "ops" / "listing.json").read_text())


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """The golden's files in a non-default directory and in /p's default one."""
    agent = tmp_path / "agent"
    other = tmp_path / "other"
    default = agent / "sessions" / "--p--"
    for d in (other, default):
        d.mkdir(parents=True)
        for name, text in GOLDEN["files"].items():
            (d / name).write_text(text)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return {"<DIR>": other, "<DEFAULT>": default}


def _ours(args: list[str], dirs: dict[str, Path]) -> dict:
    opts = dict(zip(args[2::2], args[3::2]))
    directory = dirs[args[1]]
    if args[0] == "find-by-id":
        opts = dict(zip(args[3::2], args[4::2]))
        found = SessionManager.find_by_id(opts["--cwd"], args[2], directory)
        return {"path": str(found) if found else None}
    progress: list = []

    def on_progress(loaded, total, partial):
        progress.append([loaded, total, None if partial is None else [s["id"] for s in partial]])

    if "--cwd" in opts:
        sessions = SessionManager.list(opts["--cwd"], directory, on_progress)
    else:
        sessions = SessionManager.list_all(directory, on_progress)
    return {"sessions": sessions, "progress": progress}


def _placeholders(value, dirs):
    text = json.dumps(value)
    for key, d in dirs.items():
        text = text.replace(str(d), key)
    return json.loads(text)


@pytest.mark.parametrize("i", range(len(GOLDEN["calls"])))
def test_same_as_pi(i, dirs):
    call = GOLDEN["calls"][i]
    ours = _placeholders(_ours(call["args"], dirs), dirs)
    theirs = call["out"]
    if "sessions" not in theirs:
        assert ours == theirs
        return
    assert ours["sessions"] == theirs["sessions"]
    # pi reads 10 files at once, so which ones a partial list holds may vary;
    # when it comes, and the last one, do not
    assert [p[:2] for p in ours["progress"]] == [p[:2] for p in theirs["progress"]]
    assert [p[2] is None for p in ours["progress"]] == [p[2] is None for p in theirs["progress"]]
    assert ours["progress"][-1][2] == theirs["progress"][-1][2] == [s["id"] for s in theirs["sessions"]]


def test_golden_covers_filtering_and_ties():
    calls = {tuple(c["args"]): c["out"] for c in GOLDEN["calls"]}
    filtered = calls[("list", "<DIR>", "--cwd", "/p", "--progress")]["sessions"]
    unfiltered = calls[("list", "<DIR>", "--progress")]["sessions"]
    assert 0 < len(filtered) < len(unfiltered)
    modified = [s["modified"] for s in unfiltered]
    assert len(set(modified)) < len(modified)  # ties, ordered by file name


def test_index_is_still_used_and_gives_the_same_answer(dirs):
    first = SessionManager.list("/p", dirs["<DIR>"])
    assert index_path(dirs["<DIR>"]).exists()
    # an index entry that is current is believed: prove it by planting one
    index_file = index_path(dirs["<DIR>"])
    index = json.loads(index_file.read_text())
    name = Path(first[0]["path"]).name
    index["files"][name][3]["firstMessage"] = "from the index"
    index_file.write_text(json.dumps(index))
    again = SessionManager.list("/p", dirs["<DIR>"])
    assert again[0]["firstMessage"] == "from the index"
    assert [s["id"] for s in again] == [s["id"] for s in first]


def _session(directory: Path, cwd: str, ts: int) -> SessionManager:
    sm = SessionManager.create(cwd, directory)
    sm.append_message({"role": "user", "content": f"at {ts}", "timestamp": ts})
    return sm


def test_list_all_every_project_and_symlinked_ones(tmp_path):
    root = tmp_path / "sessions"
    a = _session(root / "--a--", "/a", 1000)
    elsewhere = tmp_path / "elsewhere" / "--b--"
    b = _session(elsewhere, "/b", 3000)
    (root / "--b--").symlink_to(elsewhere, target_is_directory=True)
    (root / "file.jsonl").write_text("not a directory\n")
    c = _session(root / "--a--", "/a", 2000)
    progress: list = []
    infos = SessionManager.list_all(agent_dir=tmp_path, on_progress=lambda *p: progress.append(p))
    assert [i["id"] for i in infos] == [b.get_session_id(), c.get_session_id(), a.get_session_id()]
    assert [(p[0], p[1], p[2] is not None) for p in progress] == [(1, 3, True), (2, 3, False), (3, 3, True)]
    assert infos == list_sessions_dirs(root)


def test_list_all_publishes_every_100th(tmp_path):
    root = tmp_path / "sessions" / "--x--"
    root.mkdir(parents=True)
    for n in range(205):
        (root / f"{n:04d}.jsonl").write_text(json.dumps({"type": "session", "id": str(n), "timestamp": "2026-01-01T00:00:00.000Z"}) + "\n")
    published = []
    SessionManager.list_all(agent_dir=tmp_path, on_progress=lambda loaded, total, partial: published.append(loaded) if partial is not None else None)
    assert published == [1, 100, 200, 205]
    published.clear()
    SessionManager.list_all(root, on_progress=lambda loaded, total, partial: published.append(loaded) if partial is not None else None)
    assert published == [1] + list(range(10, 201, 10)) + [205]


def test_list_default_dir_is_not_filtered_and_ties_go_to_the_newest_name(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    mine = _session(None, "/p", 1000)
    other = _session(mine.get_session_dir(), "/q", 1000)  # same modified time
    infos = SessionManager.list("/p")
    names = [Path(i["path"]).name for i in infos]
    assert names == sorted(names, reverse=True) and len(names) == 2
    assert {i["id"] for i in infos} == {mine.get_session_id(), other.get_session_id()}
    # outside the default directory, only /p's sessions
    assert [i["id"] for i in SessionManager.list("/p", tmp_path / "agent" / "sessions" / "--p--" / ".")] == [i["id"] for i in infos]
    moved = tmp_path / "moved"
    moved.mkdir()
    for i in infos:
        os.rename(i["path"], moved / Path(i["path"]).name)
    assert [i["id"] for i in SessionManager.list("/p", moved)] == [mine.get_session_id()]
    assert [i["id"] for i in SessionManager.list("/p/", moved)] == [mine.get_session_id()]


def test_find_by_id_and_continue_recent_filter_by_cwd(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    shared = tmp_path / "shared"
    p_old = _session(shared, "/p", 1000)
    q_new = _session(shared, "/q", 2000)
    os.utime(p_old.get_session_file(), (time.time() - 100, time.time() - 100))
    assert SessionManager.find_by_id("/p", p_old.get_session_id(), shared) == p_old.get_session_file()
    assert SessionManager.find_by_id("/p", q_new.get_session_id(), shared) is None
    assert SessionManager.find_by_id("/p", "missing", shared) is None
    assert SessionManager.find_by_id("/p", "x", tmp_path / "no-such-dir") is None
    assert SessionManager.continue_recent("/p", shared).get_session_id() == p_old.get_session_id()
    assert SessionManager.continue_recent("/q", shared).get_session_id() == q_new.get_session_id()
    # in cwd's default directory there is no filtering; another cwd's default
    # directory is filtered like any other
    default = _session(None, "/p", 1000)
    stray = _session(default.get_session_dir(), "/elsewhere", 1000)
    assert SessionManager.find_by_id("/p", default.get_session_id()) == default.get_session_file()
    assert SessionManager.find_by_id("/p", stray.get_session_id(), default.get_session_dir()) == stray.get_session_file()
    assert SessionManager.find_by_id("/q", default.get_session_id(), default.get_session_dir()) is None


def test_listing_index_is_written_even_with_a_lone_surrogate(tmp_path):
    """One session whose first message holds a lone surrogate must not keep
    the directory's index from being written (review finding F23)."""
    from pi_session.stores.listing import list_session_dir

    d = tmp_path / "sessions"
    d.mkdir()
    header = '{"type":"session","version":3,"id":"0192aaaa-bbbb-7ccc-8ddd-eeeeffff0009","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}\n'
    msg = '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"half \\ud83d emoji","timestamp":1}}\n'
    (d / "2026-01-01T00-00-00-000Z_0192aaaa-bbbb-7ccc-8ddd-eeeeffff0009.jsonl").write_text(header + msg)
    first = list_session_dir(d)
    assert index_path(d).exists()
    assert list_session_dir(d) == first
    index_path(d).write_bytes(b"garbage")
    assert list_session_dir(d) == first
    assert index_path(d).read_bytes() != b"garbage"  # a garbage index is rebuilt
