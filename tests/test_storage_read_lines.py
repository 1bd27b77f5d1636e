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
        pytest.skip(f"no session files to compare (needs {FIXTURES} from the ../shared checkout beside this repository)")
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


def test_stored_lines_cut_as_the_file_holding_them(tmp_path) -> None:
    """Stored lines, however they are cut (a line continued by the next,
    two lines in one, empty items, a torn tail), read as the file holding
    their bytes reads."""
    h = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}'
    e1 = b'{"type":"custom","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"t"}'
    e2 = b'{"type":"custom","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","customType":"t"}'
    cases = [
        [h + b"\n", e1 + b"\n", e2 + b"\n"],
        [h + b"\n", e1[:20], e1[20:] + b"\n", e2 + b"\n"],  # a line continued by the next
        [h + b"\n" + e1 + b"\n", e2 + b"\n", b"{\"type\":\"torn"],  # two lines in one; a torn tail
        [h + b"\n", b"", b"\n", e1 + b"\n", b"not json\n", e2],
        [h],
    ]
    for n, lines in enumerate(cases):
        path = tmp_path / f"case{n}.jsonl"
        path.write_bytes(b"".join(lines))
        assert _fields(read_session_lines(lines, name="x")) == _fields(read_session_file(path)), lines


@pytest.mark.parametrize("block_size", [1, 2, 7, 64, 1 << 20])
def test_newline_blocks_cut_as_line_blocks_do_keeping_each_newline(block_size: int) -> None:
    """The read loop's line cutter (``BytesIO.readlines``) gives the lines
    ``bytes.split`` gives, each with its ``\\n``, at any block size: lines
    longer than a block, blank lines, ``\\r\\n`` and a lone ``\\r``, and an
    unterminated last line (alone, as ``[tail, None]``, without newline)."""
    import io

    from pi_session.storage.blocks import line_blocks, newline_blocks

    texts = [
        b"", b"\n", b"\n\n\n", b"a", b"a\n", b"a\nbb\n", b"a\nbb", b"x" * 100 + b"\n" + b"y" * 50,
        b'{"a":1}\r\n{"b":2}\r\n', b"one\rtwo\nthree\n\nfour", b"\xff\xfe\n\x00\n",
    ]
    for text in texts:
        def flat(blocks):
            out = []
            for lines in blocks:
                assert lines, text
                if lines[-1] is None:
                    out.append(("tail", lines[0]))
                else:
                    out.extend(lines)
            return out

        plain = [line + b"\n" if not isinstance(line, tuple) else line for line in flat(line_blocks(io.BytesIO(text), block_size))]
        assert flat(newline_blocks(io.BytesIO(text), block_size)) == plain, (text, block_size)


def test_a_line_of_invalid_utf8_says_where() -> None:
    """orjson calls any invalid byte "surrogates not allowed"; the problem
    names the first bad byte instead (1-based, in the line)."""
    from pi_session.storage import parse_line

    parsed = parse_line(b"ab\xff\xfecd", 7)
    assert parsed.problem is not None and parsed.problem.line == 7
    assert parsed.problem.message == "not valid JSON (invalid UTF-8 at byte 3 of the line, 0xff)"
    assert "surrogates" not in parse_line(b'{"a": "\xc3"', 1).problem.message
