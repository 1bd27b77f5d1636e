"""Cutting a session file, or a store's lines, into blocks of lines: what
the read loop of :mod:`.reader` reads (:func:`newline_blocks`,
:func:`stored_line_blocks`) and :func:`iter_lines`, which streams a file's
lines (without holding the whole file) for rewrites and scans. Parsing one
line is :mod:`.lines`."""

from __future__ import annotations

import io
from collections.abc import Iterator
from itertools import repeat
from typing import Any

from ..entries.records import StrPath

__all__ = ["BLOCK_SIZE", "line_blocks", "newline_blocks", "stored_line_blocks", "iter_lines"]

BLOCK_SIZE = 1 << 17  # bytes read at a time (128 KiB)


def line_blocks(f: Any, block_size: int = BLOCK_SIZE) -> Iterator[list[bytes]]:
    """Lists of the complete lines (without ``\\n``) of a binary file, one
    list per block read; an unterminated last line comes last, alone, as
    ``[tail, None]``."""
    pending: list[bytes] = []  # the start of a line that continues in the next block
    while True:
        block = f.read(block_size)
        if not block:
            break
        lines = block.split(b"\n")
        if len(lines) == 1:
            pending.append(block)  # a line longer than a block
            continue
        if pending:
            pending.append(lines[0])
            lines[0] = b"".join(pending)
            pending = []
        tail = lines.pop()  # after the block's last newline (often empty)
        yield lines
        if tail:
            pending.append(tail)
    if pending:
        yield [b"".join(pending), None]  # type: ignore[list-item]


def newline_blocks(f: Any, block_size: int = BLOCK_SIZE) -> Iterator[list[bytes]]:
    """What :func:`line_blocks` gives, except that each complete line keeps
    its ``\n`` (the unterminated last line, alone as ``[tail, None]``, has
    none). The read loop of :mod:`.reader` uses it: ``BytesIO.readlines``
    finds the newlines with ``memchr`` where ``bytes.split`` compares byte
    by byte (a fifth of opening a session lazily), and JSON decoders take
    the newline as trailing whitespace."""
    pending: list[bytes] = []  # the start of a line that continues in the next block
    newline = b"\n"
    while True:
        block = f.read(block_size)
        if not block:
            break
        lines = io.BytesIO(block).readlines()
        # the lines are copies: freeing the block before the next read
        # lets the allocator reuse its memory (fresh pages fault, about a
        # tenth of a lazy open of a cold process)
        del block
        if pending:
            pending.append(lines[0])
            if not lines[0].endswith(newline):
                continue  # a line longer than a block: no newline in this one
            lines[0] = b"".join(pending)
            pending = []
        if not lines[-1].endswith(newline):
            pending.append(lines.pop())
        if lines:
            yield lines
    if pending:
        yield [b"".join(pending), None]  # type: ignore[list-item]


def stored_line_blocks(lines: list[bytes], block: int = 4096) -> Iterator[list[Any]]:
    """What :func:`newline_blocks` gives for a file holding ``lines``
    concatenated, without concatenating them: lists of lines with their
    ``\n``, and an unterminated last line alone as ``[tail, None]``. A
    batch of lines that are one line each (a single ``\n``, at the end:
    what stores hold) is given as it is, without copying; any other batch
    is cut as the file would be."""
    newline = b"\n"
    pending = b""  # the start of a line that continues in the next batch
    for start in range(0, len(lines), block):
        batch = lines[start : start + block]
        # each line's first newline is at most its last byte: the sums are
        # equal only when every line's one newline is its last byte
        if (
            not pending
            and all(map(bytes.endswith, batch, repeat(newline)))
            and sum(map(bytes.find, batch, repeat(newline))) == sum(map(len, batch)) - len(batch)
        ):
            yield batch
            continue
        cut = io.BytesIO(pending + b"".join(batch)).readlines()
        pending = cut.pop() if cut and not cut[-1].endswith(newline) else b""
        if cut:
            yield cut
    if pending:
        yield [pending, None]


def iter_lines(path: StrPath) -> Iterator[tuple[int, bytes, bool]]:
    """Stream a file's lines without holding the whole file (it is read in
    :data:`BLOCK_SIZE` blocks): yields ``(line_no, raw_without_newline, had_newline)``;
    ``had_newline`` is False only for an unterminated last line."""
    line_no = 0
    with open(path, "rb") as f:
        for lines in line_blocks(f):
            if len(lines) == 2 and lines[1] is None:
                line_no += 1
                yield line_no, lines[0], False
                return
            for raw in lines:
                line_no += 1
                yield line_no, raw, True
