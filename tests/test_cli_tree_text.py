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
