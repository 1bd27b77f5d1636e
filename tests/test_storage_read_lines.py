"""``read_session_lines`` (a store's lines) reads exactly as
``read_session_file`` reads the file holding them: same records, entries,
problems, migration, also for damaged, torn and split input, and for
"lines" that are not one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_session.storage import read_session_file, read_session_lines

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "pi"


def _split(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _fields(sf) -> dict:
    out = {k: v for k, v in vars(sf).items() if k not in ("path", "mtime_ns", "name")}
    out["problems"] = [(p.line, p.kind, p.message, p.recovered) for p in sf.problems]
    return out


def _variants(data: bytes) -> list[bytes]:
    return [
        data,
        data.rstrip(b"\n"),  # no final newline
        data[: len(data) * 2 // 3],  # torn tail
        data.replace(b"}\n{", b"}\n\x00\x00garbage \xff\n{", 2),  # damaged lines, bad UTF-8
        b"\n \n" + data,  # blanks before the header
        data.replace(b'"type"', b'"ty\npe"', 2),  # records split over lines
    ]


def _files() -> list[Path]:
    files = sorted(FIXTURES.glob("**/*.jsonl"))[:12] + sorted((ROOT / "tests" / "goldens").glob("**/*.jsonl"))[:12]
    if not files:
        pytest.skip("no session files to compare")
    return files


def test_lines_read_as_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    compared = 0
    for source in _files():
        for data in _variants(source.read_bytes()):
            path.write_bytes(data)
            try:
                expected: object = _fields(read_session_file(path))
            except Exception as exc:  # a refused file is refused from lines too
                expected = (type(exc).__name__, getattr(exc, "reason", None))
            try:
                got: object = _fields(read_session_lines(_split(data), name=str(path)))
            except Exception as exc:
                got = (type(exc).__name__, getattr(exc, "reason", None))
            assert got == expected, (source, _variants(source.read_bytes()).index(data))
            compared += 1
    assert compared >= 6


def test_lines_holding_several_lines_read_as_the_file() -> None:
    for source in _files():
        lines = _split(source.read_bytes())
        if len(lines) < 3:
            continue
        merged = [lines[0] + lines[1], *lines[2:-1], lines[-1] + b'{"type":"torn']
        plain = [*lines[:-1], lines[-1], b'{"type":"torn']
        assert _fields(read_session_lines(merged, name="x")) == _fields(read_session_lines(plain, name="x"))


def test_stored_line_blocks_cut_as_the_file_whatever_the_batch() -> None:
    """Batches of one-line lines and batches of other lines, mixed, give
    the lines the file holding them gives."""
    import io

    from pi_session.storage.reader import _line_blocks, _stored_line_blocks

    def flat(blocks) -> list:
        return [bytes(x) if x is not None else None for b in blocks for x in b]

    cases = [
        [b"a\n", b"b\n", b"c\n", b"d\n"],
        [b"a\n", b"b", b"c\n", b"d\n", b"e\n", b"f\n"],  # a line continued by the next
        [b"a\nb\n", b"c\n", b"d\n", b"e"],  # two lines in one; a torn tail
        [b"a\n", b"", b"\n", b"x\n", b"y\n", b"z"],
        [b"only"],
        [],
    ]
    for lines in cases:
        expected = flat(_line_blocks(io.BytesIO(b"".join(lines))))
        for block in (1, 2, 3, 4096):
            assert flat(_stored_line_blocks(lines, block)) == expected, (lines, block)
