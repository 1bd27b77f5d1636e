"""check_session / repair_session, and a hypothesis fuzz of damaged files."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_session.manager.session_manager import SessionManager
from pi_session.storage.problems import PROBLEM_KINDS
from pi_session.check.repair import check_session, repair_session
from pi_session.storage import SessionFileError, read_session_file, scan_session_file
from storage_helpers import make_session

ENTRY = b'{"type":"custom","customType":"t","id":"%s","parentId":%s,"timestamp":"2025-01-01T00:00:0%d.000Z"}'
HEADER = b'{"type":"session","version":3,"id":"0192aaaa-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}'


def entry(eid: str, parent: str | None, i: int = 1) -> bytes:
    return ENTRY % (eid.encode(), (b'"%s"' % parent.encode()) if parent else b"null", i)


def kinds(report) -> set[tuple[int | None, str]]:
    return {(p.line, p.kind) for p in report.problems}


def test_clean_file_is_ok_and_repair_writes_nothing(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    report = check_session(path)
    assert report.ok, report.problems
    result = repair_session(path)
    assert not result.changed and result.backup is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_tree_problems_are_reported_not_fixed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    compaction = b'{"type":"compaction","id":"cccccccc","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"dddddddd","tokensBefore":1}'
    label = b'{"type":"label","id":"llllllll","parentId":"cccccccc","timestamp":"2025-01-01T00:00:06.000Z","targetId":"zzzzzzzz","label":"x"}'
    lines = [
        HEADER,
        entry("aaaaaaaa", None),
        entry("bbbbbbbb", "bbbbbbbb"),  # self-parent
        entry("c1c1c1c1", "c2c2c2c2"),  # cycle
        entry("c2c2c2c2", "c1c1c1c1"),
        entry("aaaaaaaa", None, 2),  # duplicate id
        entry("eeeeeeee", "99999999"),  # orphan
        compaction,
        label,
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = path.read_bytes()
    report = check_session(path)
    got = kinds(report)
    assert (3, "self-parent") in got
    assert any(k == "cycle" and line in (4, 5) for line, k in got)
    assert (6, "duplicate-id") in got
    assert (7, "orphan") in got
    assert (8, "compaction-first-kept-off-path") in got
    assert (9, "label-target-missing") in got
    assert not any(p.fixable for p in report.problems)
    result = repair_session(path)
    assert not result.changed and path.read_bytes() == before


def test_compaction_keeping_an_entry_on_its_path_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    compaction = b'{"type":"compaction","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"2025-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"bbbbbbbb","tokensBefore":1}'
    path.write_bytes(b"\n".join([HEADER, entry("aaaaaaaa", None), entry("bbbbbbbb", "aaaaaaaa"), compaction]) + b"\n")
    assert check_session(path).ok


def test_repair_keeps_valid_lines_byte_identical(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    damaged = [
        b"\xef\xbb\xbf" + lines[0],
        lines[1] + b"\r",
        b"\x00" * 8 + lines[2],
        b"garbage line",
        b"",
        lines[3][:30] + lines[4],
        b"[1,2]",
        HEADER,
        b'{"id":"x"}',
        b'{"type":"custom"}',
    ] + lines[5:]
    original = b"\n".join(damaged) + b"\n" + b'{"type":"message","id":"to'
    path.write_bytes(original)
    report = check_session(path)
    assert path.read_bytes() == original  # check never writes
    assert {(1, "bom"), (2, "crlf"), (3, "nul-bytes"), (4, "invalid-json"), (5, "blank"), (6, "glued"), (7, "not-object"),
            (8, "extra-header"), (9, "no-type"), (10, "no-id"), (len(damaged) + 1, "torn-tail")} <= kinds(report)
    result = repair_session(path)
    assert result.changed
    assert result.backup == path.with_name(path.name + ".repair.bak")
    assert result.backup.read_bytes() == original
    assert result.rejected == path.with_name(path.name + ".rejected-1")
    rejected = result.rejected.read_bytes().split(b"\n")
    for removed in (b"garbage line", lines[3][:30], b"[1,2]", HEADER, b'{"id":"x"}', b'{"type":"custom"}', b'{"type":"message","id":"to'):
        assert removed in rejected
    repaired = path.read_bytes()
    assert repaired == b"\n".join(lines[:3] + lines[4:]) + b"\n"  # lines[3] was truncated: gone
    # the entry after the lost one is now an orphan: reported, not "fixed"
    assert [p.kind for p in result.after.problems] == ["orphan"]
    assert [p.kind for p in check_session(path).problems] == ["orphan"]
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)
    assert not repair_session(path).changed


def test_glued_complete_records_both_recovered(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    a, b = entry("aaaaaaaa", None), entry("bbbbbbbb", "aaaaaaaa")
    path.write_bytes(HEADER + b"\n" + a + b + b"\n")
    result = repair_session(path)
    assert path.read_bytes() == HEADER + b"\n" + a + b"\n" + b + b"\n"
    assert result.rejected is None


def test_unreadable_files_raise(tmp_path: Path) -> None:
    for name, data in (("nohdr.jsonl", entry("aaaaaaaa", None) + b"\n"), ("junk.jsonl", b"\x00\x01garbage\n")):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(SessionFileError):
            check_session(p)
        with pytest.raises(SessionFileError):
            repair_session(p)
        assert p.read_bytes() == data
    with pytest.raises(SessionFileError):
        check_session(tmp_path / "missing.jsonl")
    with pytest.raises(SessionFileError):
        check_session(tmp_path)


def test_v1_file_records_without_ids_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    data = (b'{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
            b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n')
    path.write_bytes(data + b"oops\n")
    report = check_session(path)
    assert kinds(report) == {(3, "invalid-json")} and report.notes
    repair_session(path)
    assert path.read_bytes() == data


# --------------------------------------------------------------------------
# fuzz

_TEMPLATE_DIR = Path(tempfile.mkdtemp(prefix="pi-fuzz-template-"))
_TEMPLATE = make_session(_TEMPLATE_DIR, n=8).read_bytes()

damage_op = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0.3, 1.0)),
    st.tuples(st.just("nul"), st.floats(0, 1), st.integers(1, 200)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
    st.tuples(st.just("badutf8"), st.floats(0, 1), st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f"])),
    st.tuples(st.just("glue"), st.integers(0, 20)),
    st.tuples(st.just("crlf"), st.integers(0, 20)),
    st.tuples(st.just("bom"), st.just(0)),
    st.tuples(st.just("blank"), st.integers(0, 20)),
    st.tuples(st.just("delnl"), st.integers(0, 20)),
    st.tuples(st.just("cut"), st.integers(0, 20), st.floats(0, 1)),
)


def apply_damage(data: bytes, ops: list[tuple]) -> bytes:
    for op in ops:
        kind = op[0]
        if kind == "truncate":
            data = data[: int(len(data) * op[1])]
        elif kind == "nul":
            at = int(len(data) * op[1])
            data = data[:at] + b"\x00" * op[2] + data[at:]
        elif kind == "flip" and data:
            at = min(len(data) - 1, int(len(data) * op[1]))
            data = data[:at] + bytes([op[2]]) + data[at + 1 :]
        elif kind == "badutf8":
            at = int(len(data) * op[1])
            data = data[:at] + op[2] + data[at:]
        else:
            lines = data.split(b"\n")
            i = op[1] % max(1, len(lines))
            if kind == "glue" and i + 1 < len(lines):
                lines[i : i + 2] = [lines[i][: len(lines[i]) // 2] + lines[i + 1]]
            elif kind == "crlf":
                lines[i] += b"\r"
            elif kind == "bom":
                lines[0] = b"\xef\xbb\xbf" + lines[0]
            elif kind == "blank":
                lines.insert(i, b"   ")
            elif kind == "delnl" and i + 1 < len(lines):
                lines[i : i + 2] = [lines[i] + lines[i + 1]]
            elif kind == "cut":
                lines[i] = lines[i][: int(len(lines[i]) * op[2])]
            data = b"\n".join(lines)
    return data


def valid_entry_lines(data: bytes) -> list[bytes]:
    """Lines that are, as they stand, a valid JSON entry object."""
    out = []
    for raw in data.split(b"\n"):
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("type"), str) and record["type"] != "session" and isinstance(record.get("id"), str):
            out.append(raw)
    return out


@settings(max_examples=int(os.environ.get("PI_FUZZ_EXAMPLES", "150")), deadline=3000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(damage_op, min_size=1, max_size=6))
def test_fuzz_damaged_files(ops: list[tuple]) -> None:
    damaged = apply_damage(_TEMPLATE, ops)
    directory = Path(tempfile.mkdtemp(prefix="pi-fuzz-"))
    try:
        path = directory / "s.jsonl"
        path.write_bytes(damaged)
        readable = True
        try:
            read_session_file(path)
        except SessionFileError:
            readable = False
        try:
            SessionManager.open(path, read_only=True)
        except SessionFileError:
            assert not readable
        try:
            report = check_session(path)
        except SessionFileError:
            assert not readable
            report = None
        assert path.read_bytes() == damaged  # reading and checking never change the file
        assert sorted(p.name for p in directory.iterdir()) == ["s.jsonl"]
        if report is None:
            with pytest.raises(SessionFileError):
                repair_session(path)
            assert path.read_bytes() == damaged
            return
        # one read: the session as check sees it is the session as the reader reads it
        fast, scanned = read_session_file(path), scan_session_file(path)
        for name in ("header", "records", "record_lines", "fragments", "spans", "entries", "problems", "line_count", "ends_with_newline", "migrated_from"):
            assert getattr(scanned, name) == getattr(fast, name), name
        assert {p.kind for p in report.problems + report.warnings} <= PROBLEM_KINDS
        result = repair_session(path)
        repaired = path.read_bytes()
        kept = set(repaired.split(b"\n"))
        for line in valid_entry_lines(damaged):
            # byte for byte; only a CRLF line loses its carriage return(s)
            assert line in kept or (line.endswith(b"\r") and line.rstrip(b"\r") in kept), line[:80]
        if result.changed:
            assert result.backup is not None and result.backup.read_bytes() == damaged
        after = check_session(path)
        assert not after.fixable, after.problems
        # repair checks the lines as it writes them: the same report as reading them back
        assert result.after.to_json() == after.to_json()
        assert not repair_session(path).changed
        SessionManager.open(path, read_only=True)
    finally:
        shutil.rmtree(directory)


# --------------------------------------------------------------------------
# pi opens what repair writes (goldens from pi-oracle)

GOLDENS = Path(__file__).parent / "goldens" / "storage"


def _repaired_copy(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(GOLDENS / "damaged.jsonl", path)
    repair_session(path)
    return path


def test_repaired_file_reads_like_pi_reads_it(tmp_path: Path) -> None:
    """The damaged golden crashes pi (a ``null`` line); after repair pi reads
    it (committed ``pi-oracle entries`` output) exactly as we do."""
    path = _repaired_copy(tmp_path)
    golden = orjson.loads((GOLDENS / "damaged.repaired.oracle-entries.json").read_bytes())
    m = SessionManager.open(path, read_only=True)
    # the entry whose parent line was destroyed stays an orphan (reported, not changed)
    assert [p.kind for p in m.problems] == ["orphan"]
    assert m.get_header() == golden["header"]
    assert m.get_entries() == golden["entries"]
    assert m.get_leaf_id() == golden["leafId"]


@pytest.mark.oracle
def test_repaired_file_opens_in_pi_live(tmp_path: Path, oracle) -> None:
    path = _repaired_copy(tmp_path)
    live = orjson.loads(oracle("entries", str(path)))
    assert live == orjson.loads((GOLDENS / "damaged.repaired.oracle-entries.json").read_bytes())


def test_check_reads_the_file_once_and_repair_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check reads the session file once (one scan for the lines and the
    tree); repair reads it once more, to write the repaired copy (whose
    check is made from the lines as they are written)."""
    import builtins

    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\n".join([HEADER, entry("aaaaaaaa", None), b"", b'{"type":"mess', entry("bbbbbbbb", "aaaaaaaa") + b"\r"]) + b"\n"
    )
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.path.realpath(file) == os.path.realpath(path):
            opened.append(args[0] if args else kwargs.get("mode", "r"))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    report = check_session(path)
    assert {p.kind for p in report.problems} == {"blank", "invalid-json", "crlf"}
    assert opened == ["rb"]
    opened.clear()
    result = repair_session(path)
    assert result.changed and result.after.ok
    assert opened == ["rb", "rb"]
    monkeypatch.undo()
    assert result.after.to_json() == check_session(path).to_json()
