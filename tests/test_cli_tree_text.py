"""``pi-session tree`` in text mode: the rows are written byte for byte as
the renderer that printed one rich ``Text`` per row wrote them.

The goldens (tests/goldens/tree_text/, made by
tests/tools/make_tree_text_goldens.py with that renderer) cover generated
sessions with branches, labels and context edits and a hostile one
(control characters, bidi marks, tabs and newlines in labels and ids, wide
characters), piped at several widths and on a forced terminal with colour.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import GOLDENS

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from make_tree_text_goldens import MODES, tree_output  # noqa: E402

TREE_GOLDENS = GOLDENS / "tree_text"
SESSION_FILES = sorted(p.name for p in TREE_GOLDENS.glob("*.jsonl"))


def test_the_goldens_cover_branches_labels_colour_and_hostile_text():
    assert len(SESSION_FILES) >= 3 and "hostile.jsonl" in SESSION_FILES
    for name in SESSION_FILES:
        stem = name.removesuffix(".jsonl")
        piped = (TREE_GOLDENS / f"{stem}.piped.txt").read_text()
        assert "├─" in piped and "← leaf" in piped and " [" in piped  # branches, the leaf, labels
        assert "\x1b[" in (TREE_GOLDENS / f"{stem}.color-60.txt").read_text()  # colour on a terminal
        assert "\x1b[" not in piped
    assert "…" in (TREE_GOLDENS / "hostile.piped-60.txt").read_text()  # rows cut at the width


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", SESSION_FILES)
def test_tree_text_output_is_byte_identical_to_the_golden(name, mode, tmp_path):
    exe = Path(sys.executable).parent / "pi-session"
    session = tmp_path / name
    session.write_bytes((TREE_GOLDENS / name).read_bytes())
    got = tree_output(exe, session, mode, tmp_path)
    expected = (TREE_GOLDENS / f"{name.removesuffix('.jsonl')}.{mode}.txt").read_bytes()
    assert got == expected


# --- print_rows against rich itself, in-process: one console.print per row ---

import io  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from rich.console import Console  # noqa: E402

from pi_session import SessionManager  # noqa: E402
from pi_session.session.context import applied_context_edits  # noqa: E402
from pi_session.render.styled_rows import print_rows  # noqa: E402
from pi_session.render.terminal import TREE_ROW_STYLE, iter_tree_row_parts, text_of  # noqa: E402

CONSOLES = {
    "piped": {"width": 100_000},
    "piped-40": {"width": 40},
    "piped-3": {"width": 3},
    "piped-1": {"width": 1},
    "standard-60": {"width": 60, "force_terminal": True, "color_system": "standard"},
    "256-25": {"width": 25, "force_terminal": True, "color_system": "256"},
    "truecolor-90": {"width": 90, "force_terminal": True, "color_system": "truecolor"},
    "no-color-term-30": {"width": 30, "force_terminal": True, "color_system": "standard", "no_color": True},
}


def make_console(name):
    return Console(file=io.StringIO(), highlight=False, emoji=False, **CONSOLES[name])


def rich_per_row(name, rows, base):
    console = make_console(name)
    for parts in rows:
        console.print(text_of(parts, base), overflow="ellipsis", no_wrap=True, crop=True)
    return console.file.getvalue()


def fast(name, rows, base):
    console = make_console(name)
    print_rows(console, rows, base)
    return console.file.getvalue()


STYLES = st.sampled_from(["", "green", "dim", "bold magenta", "bold green", "bold yellow", "bold cyan", "yellow", "bold blue", "bold red"])
# ASCII, the tree's glyphs, wide, zero-width, combining and the characters rich treats specially
CHARS = st.sampled_from(list("ab Z09-_[]=") + list("├└│─•←…✗") + ["日", "本", "🎉", "é", "e\u0301", "\u200b", "\xad", "\t", "\n", "\r", "\x07", "\u200d", "\ufe0f", "\x1b", "ß"])
TEXTS = st.lists(CHARS, max_size=30).map("".join)
ROWS = st.lists(st.lists(st.tuples(TEXTS, STYLES), min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, name=st.sampled_from(sorted(CONSOLES)), base=st.sampled_from(["dim", ""]))
def test_print_rows_writes_what_rich_writes_for_any_text(rows, name, base):
    assert fast(name, rows, base) == rich_per_row(name, rows, base)


def test_print_rows_matches_rich_on_generated_sessions_with_branches_and_labels():
    from sessiongen import generate_session, write_session
    import tempfile

    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in (3, 5, 11, 13):
            header, entries = generate_session(seed, turns=25, pi16=True)
            manager = SessionManager.open(write_session(Path(tmp) / f"{seed}.jsonl", header, entries))
            branch = manager.get_branch()
            rows = list(iter_tree_row_parts(manager.get_tree(), manager.get_leaf_id(), {e["id"] for e in branch}, 70, edits=applied_context_edits(branch)))
            seen.update(p[:2] for parts in rows for p, _s in parts[:1])
            seen.update(style for parts in rows for _p, style in parts)
            for name in CONSOLES:
                assert fast(name, rows, TREE_ROW_STYLE) == rich_per_row(name, rows, TREE_ROW_STYLE), (seed, name)
    assert {"├─", "bold magenta", "bold green"} <= seen  # branches, labels, the leaf


WORDS = st.lists(st.sampled_from(["a", "bc", " ", "  ", "\n", "\t", "\x1b", "\u202e", "日本", "\ud800", "\x85", "é"]), max_size=400).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=WORDS, width=st.integers(min_value=-2, max_value=80))
def test_one_line_reads_only_the_start_of_a_long_text_and_gives_the_same(text, width):
    from rich.cells import cell_len

    from pi_session.render.terminal import fit_cells, one_line, sanitize

    flat = " ".join(sanitize(text).split())
    got = one_line(text, width)
    assert got == fit_cells(flat, width)  # the whole text, cut to the width in terminal cells
    if cell_len(flat) <= width:
        assert got == flat
    else:
        assert got.endswith("…") and cell_len(got) <= max(width, 1) and flat.startswith(got[:-1])
