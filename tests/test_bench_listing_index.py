"""The per-directory listing index (``.pi-session-index``): same result as
reading every file, never stale (size / mtime / inode changes re-read the
file), corrupt or foreign index files ignored and rebuilt, removed files
dropped, unwritable directories still listed."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import orjson
import pytest

from pi_session.stores.listing import (
    INDEX_NAME,
    build_session_info,
    index_path,
    list_session_dir,
    list_sessions_dirs,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import gen  # noqa: E402


def _reference(d: Path) -> list[dict]:
    infos = [build_session_info(d / n) for n in os.listdir(d) if n.endswith(".jsonl")]
    from pi_session.core.timestamps import iso_to_ms

    out = [i for i in infos if i is not None]
    out.sort(key=lambda i: iso_to_ms(i["modified"]) or 0, reverse=True)
    return out


@pytest.fixture()
def session_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sessions" / "--proj--"
    gen.generate_session_dir(d, 12, seed=3)
    (d / "notes.txt").write_text("not a session")
    (d / "empty.jsonl").write_bytes(b"")
    return d


def test_index_written_and_reused(session_dir: Path) -> None:
    first = list_session_dir(session_dir)
    assert first == _reference(session_dir)
    index = index_path(session_dir)
    assert index.exists()
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
    mtime = index.stat().st_mtime_ns
    second = list_session_dir(session_dir)
    assert second == first
    assert index.stat().st_mtime_ns == mtime  # nothing changed: not rewritten
    assert len(orjson.loads(index.read_bytes())["files"]) == 13  # 12 sessions + the empty file


def test_index_never_stale(session_dir: Path) -> None:
    list_session_dir(session_dir)
    files = sorted(session_dir.glob("*_*.jsonl"))
    # append a session_info entry: size and mtime change
    with open(files[0], "ab") as f:
        f.write(b'{"type":"session_info","id":"abcdef01","parentId":null,"timestamp":"2030-01-01T00:00:00.000Z","name":"  Renamed  "}\n')
    # same size, different content, mtime put back to the old value: the inode changes
    data = files[1].read_bytes()
    st = files[1].stat()
    before = build_session_info(files[1])["firstMessage"]
    at = data.index(b'"role":"user","content":') + len(b'"role":"user","content":')
    at = data.index(b'"', at + (0 if data[at:at + 1] == b'"' else data.index(b'"text":"', at) - at + 7)) + 1
    flipped = data[:at] + (b"Q" if data[at:at + 1] != b"Q" else b"R") + data[at + 1 :]
    assert len(flipped) == len(data)
    tmp = files[1].with_name("tmp")
    tmp.write_bytes(flipped)
    os.replace(tmp, files[1])
    os.utime(files[1], ns=(st.st_atime_ns, st.st_mtime_ns))
    after = build_session_info(files[1])["firstMessage"]
    assert after != before
    # a file removed, one added
    files[2].unlink()
    gen.generate_session_file(session_dir / "2031-01-01T00-00-00-000Z_new.jsonl", 30, seed=99)
    listed = list_session_dir(session_dir)
    assert listed == _reference(session_dir)
    assert any(i.get("name") == "Renamed" for i in listed)
    assert any(i["firstMessage"] == after for i in listed)
    names = orjson.loads((index_path(session_dir)).read_bytes())["files"]
    assert files[2].name not in names and "2031-01-01T00-00-00-000Z_new.jsonl" in names


@pytest.mark.parametrize(
    "content",
    [b"garbage", b"", b"[1,2]", b'{"version":1,"files":{"x.jsonl":[1,2]}}', b'{"version":99,"files":{}}'],
)
def test_corrupt_index_is_ignored_and_rebuilt(session_dir: Path, content: bytes) -> None:
    expected = _reference(session_dir)
    index = index_path(session_dir)
    index.parent.mkdir(parents=True, exist_ok=True)  # the first listing of this process may be this one
    index.write_bytes(content)
    assert list_session_dir(session_dir) == expected
    assert orjson.loads((index_path(session_dir)).read_bytes())["version"] == 1


def test_lying_index_entry_is_not_trusted(session_dir: Path) -> None:
    list_session_dir(session_dir)
    index = index_path(session_dir)
    data = orjson.loads(index.read_bytes())
    name = next(n for n in data["files"] if "_" in n)
    data["files"][name][1] += 1  # mtime does not match the file any more
    data["files"][name][3]["firstMessage"] = "from the index"
    index.write_bytes(orjson.dumps(data))
    assert all(i["firstMessage"] != "from the index" for i in list_session_dir(session_dir))


def test_unwritable_directory_still_listed(session_dir: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    expected = _reference(session_dir)
    session_dir.chmod(0o500)
    try:
        assert list_session_dir(session_dir) == expected
    finally:
        session_dir.chmod(0o700)


def test_list_all_uses_every_directory(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    gen.generate_session_dir(root / "--a--", 3, seed=1)
    gen.generate_session_dir(root / "--b--", 2, seed=2)
    first = list_sessions_dirs(root)
    assert len(first) == 5
    assert index_path(root / "--a--").exists() and index_path(root / "--b--").exists()
    assert list_sessions_dirs(root) == first


def test_listing_writes_nothing_into_the_session_directory(session_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing index lives in $XDG_CACHE_HOME (0600 in
    a 0700 directory), never in pi's sessions directories."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    before = sorted(p.name for p in session_dir.iterdir())
    dir_mtime = session_dir.stat().st_mtime_ns
    list_session_dir(session_dir)
    assert sorted(p.name for p in session_dir.iterdir()) == before
    assert session_dir.stat().st_mtime_ns == dir_mtime
    assert not (session_dir / INDEX_NAME).exists()
    index = index_path(session_dir)
    assert index.is_relative_to(cache / "pi-session")
    assert stat.S_IMODE(index.stat().st_mode) == 0o600
    assert stat.S_IMODE(index.parent.stat().st_mode) == 0o700
