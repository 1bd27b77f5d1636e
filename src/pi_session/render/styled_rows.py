"""Styled one-line rows written to a rich console fast: byte for byte what
one ``console.print`` of a rich ``Text`` per row writes, at a fraction of
its cost (``pi-session tree`` on long sessions; :func:`print_rows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.text import Text

from .terminal import Part, text_of

__all__ = ["print_rows"]


_SLOW_CHARACTERS = frozenset("\t\n\r\x07\x08\x0b\x0c\u200d\ufe0f")
"""Characters rich treats specially in a ``Text`` (tabs expanded, lines
split, a few controls stripped, zero-width joiner and emoji presentation
selector widening what comes before): a row holding one is printed by rich
itself (:func:`print_rows`)."""

_ELLIPSIS = "…"


def _single_cells() -> frozenset[str]:
    """Characters rich measures as one cell each: printable ASCII, Latin-1
    and Latin Extended letters, and the tree's own guides, bullet, arrow
    and marks (checked against rich's table)."""
    from rich.cells import get_character_cell_size

    candidates = [chr(c) for c in range(0x20, 0x7F)] + [chr(c) for c in range(0xA0, 0x250)] + list("├└│─•←…✗")
    return frozenset(c for c in candidates if c not in _SLOW_CHARACTERS and get_character_cell_size(c) == 1)


def print_rows(console: Any, rows: Iterable[Sequence[Part]], base_style: str = "", *, batch: int = 256) -> None:
    """Write each row (styled parts over ``base_style``, e.g. from
    :func:`pi_session.render.terminal.iter_tree_row_parts`) to the rich ``console``
    as one line, cut to
    the console's width with an ellipsis: byte for byte what
    ``console.print(text_of(parts, base_style), overflow="ellipsis",
    no_wrap=True, crop=True)`` writes for each row (colours and styles on a
    terminal, plain text when piped), without building a rich ``Text`` or
    rendering through the console per row (that costs about 0.4 ms a row,
    40 s for a 100,000-entry tree).

    How: each distinct style is rendered once through the console (its
    escape codes before and after a text), a row's width is measured with
    rich's own cell widths and cut where rich cuts it, and rows are written
    ``batch`` at a time to ``console.file``. A row holding a character rich
    treats specially (tab, newline, a control it strips, a zero-width
    joiner or emoji selector: :data:`_SLOW_CHARACTERS`) is printed through
    the console itself, so its output is rich's too."""
    from rich.cells import cell_len, set_cell_size

    width = console.width
    single = _single_cells()
    wraps: dict[str, tuple[str, str] | None] = {}
    bare: dict[str, bool] = {}  # style -> the console writes no codes for it (all of them when piped)

    def is_bare(style: str) -> bool:
        if style not in bare:
            wrap = wraps[style] = _style_wrap(console, base_style, style)
            bare[style] = wrap == ("", "")
        return bare[style]

    out: list[str] = []

    def flush() -> None:
        if out:
            console.file.write("".join(out))
            out.clear()

    for parts in rows:
        plain = "".join([piece for piece, _style in parts])
        if width < 2 or not _SLOW_CHARACTERS.isdisjoint(plain):
            line = None
        else:
            if is_bare("") and all(bare[style] if style in bare else is_bare(style) for _piece, style in parts):
                cut = _cut(plain, width, single, cell_len, set_cell_size)  # no codes at all: the (cut) text itself
                if cut is not None:
                    out.append(cut + "\n")
                    if len(out) >= batch:
                        flush()
                    continue
            line = _fast_row(parts, plain, width, single, wraps, base_style, console, cell_len, set_cell_size)
        if line is None:
            flush()
            console.print(text_of(parts, base_style), overflow="ellipsis", no_wrap=True, crop=True)
            continue
        out.append(line)
        if len(out) >= batch:
            flush()
    flush()
    console.file.flush()


def _cut(plain: str, width: int, single: frozenset[str], cell_len: Callable[[str], int], set_cell_size: Callable[[str, int], str]) -> str | None:
    """``plain`` as rich cuts it to ``width`` cells (``width - 1`` cells and
    an ellipsis when wider), or None when the cut is longer than ``plain``
    (see :func:`_fast_row`)."""
    if single.issuperset(plain):
        return plain if len(plain) <= width else plain[: width - 1] + _ELLIPSIS
    if cell_len(plain) <= width:
        return plain
    cut = set_cell_size(plain, width - 1) + _ELLIPSIS
    return cut if len(cut) <= len(plain) else None


def _fast_row(
    parts: Sequence[Part],
    plain: str,
    width: int,
    single: frozenset[str],
    wraps: dict[str, tuple[str, str] | None],
    base_style: str,
    console: Any,
    cell_len: Callable[[str], int],
    set_cell_size: Callable[[str, int], str],
) -> str | None:
    """One row of :func:`print_rows` with its newline, or None to let rich
    print it. Rich's way: the row's text is cut to ``width - 1`` cells plus
    an ellipsis when wider than ``width`` (:func:`_cut`); styles stay on the
    same character offsets (the ellipsis takes the style of the character
    it replaces); consecutive parts without a style of their own are one
    run, each styled part is a run of its own (its own escape codes)."""
    cut = _cut(plain, width, single, cell_len, set_cell_size)
    if cut is None:
        return None
    end = len(cut)
    pieces: list[str] = []
    start = offset = 0
    run_style: str | None = None  # the style of the run that starts at ``start``
    for piece, style in parts:
        if not piece:
            continue
        if run_style is not None and (style or run_style):
            if start < end:
                wrap = wraps[run_style] if run_style in wraps else wraps.setdefault(run_style, _style_wrap(console, base_style, run_style))
                if wrap is None:
                    return None
                pieces.append(wrap[0] + cut[start : min(offset, end)] + wrap[1])
            start = offset
        run_style = style
        offset += len(piece)
    if run_style is not None and start < end:
        wrap = wraps[run_style] if run_style in wraps else wraps.setdefault(run_style, _style_wrap(console, base_style, run_style))
        if wrap is None:
            return None
        pieces.append(wrap[0] + cut[start : min(offset, end)] + wrap[1])
    pieces.append("\n")
    return "".join(pieces)


def _style_wrap(console: Any, base_style: str, style: str) -> tuple[str, str] | None:
    """What ``console`` writes before and after a text drawn in ``style``
    over ``base_style`` (escape codes on a terminal, nothing when piped):
    a one-character probe printed through the console, or None when its
    output is not ``before + probe + after``."""
    probe = Text("X", style=base_style)
    if style:
        probe.stylize(style)
    with console.capture() as capture:
        console.print(probe, end="", overflow="ellipsis", no_wrap=True, crop=True)
    before, found, after = capture.get().partition("X")
    return (before, after) if found and "X" not in after else None
