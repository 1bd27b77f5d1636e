"""``pi-session usage`` tables in a real terminal (tmux at 80 and 100
columns): numbers are never cut; when the whole table does not fit, model
names wrap, then columns go as ``--compact`` leaves them out, and one dim
line says so."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_ls_widths import needs_tmux, screen_in_tmux
from usage_gen import write_tree

EXE = Path(sys.executable).parent / "pi-session"
KINDS = ["daily", "weekly", "monthly", "session", "blocks"]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 generated sessions over many days and four models (millions of
    tokens a day)."""
    root = tmp_path_factory.mktemp("usage-widths") / "sessions"
    write_tree(root, range(24))
    return root


def _report(sessions: Path, kind: str, cache: Path) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    args = [str(EXE), "usage", kind, "--store", str(sessions), "--last", "3", "--json"] + ([] if kind == "blocks" else ["--timezone", "UTC"])
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _numbers(kind: str, data: dict) -> set[str]:
    """Every token count and cost the table shows, as it writes them."""
    rows = data["blocks"] if kind == "blocks" else data[{"daily": "daily", "weekly": "weekly", "monthly": "monthly", "session": "sessions"}[kind]]
    out = set()
    for row in rows + ([] if kind == "blocks" else [data["totals"]]):
        if row.get("isGap"):
            continue
        out.add(f"{row['totalTokens']:,}")
        out.add(f"${row['costUSD' if kind == 'blocks' else 'totalCost']:,.2f}")
    return out


@needs_tmux
@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("kind", KINDS)
def test_usage_numbers_are_never_cut(tmp_path: Path, sessions: Path, kind: str, width: int) -> None:
    cache = tmp_path / "cache"
    data = _report(sessions, kind, cache)
    zone = "" if kind == "blocks" else " --timezone UTC"
    command = (f"env -u COLUMNS XDG_CACHE_HOME={shlex.quote(str(cache))} {shlex.quote(str(EXE))} usage {kind} "
               f"--store {shlex.quote(str(sessions))} --last 3{zone} 2>/dev/null")
    [screen] = screen_in_tmux(tmp_path, width, [command])
    shown = "\n".join(screen)
    assert "…" not in shown, shown
    words = set(shown.replace("│", " ").split())
    missing = _numbers(kind, data) - words
    assert not missing, (missing, shown)
    if "Models" in shown:  # every model name whole once the lines of its cell are joined
        rows = data["blocks"] if kind == "blocks" else data["sessions" if kind == "session" else kind]
        names = {m.split("] ", 1)[-1] for row in rows for m in row.get("models", row.get("modelsUsed", []))}
        header = next(line for line in screen if "Models" in line).split("┃")
        at = next(i for i, cell in enumerate(header) if "Models" in cell)
        column = "".join(line.split("│")[at].strip() for line in screen if line.count("│") == len(header) - 1)
        assert all(name in column for name in names), (names, shown)
    if width == 80 and kind != "blocks":  # the full table cannot fit: the compact columns, said in one dim line
        assert "Cache" not in shown and "Narrow terminal: model and cache columns left out" in shown, shown
    if width == 100 and kind in ("daily", "weekly", "monthly"):  # room for every column, the model names wrapping
        assert "Models" in shown and "Cache" in shown and "Narrow terminal" not in shown, shown


def test_model_names_wrap_after_a_hyphen_when_the_numbers_need_the_room(tmp_path: Path, sessions: Path) -> None:
    """At 94 columns every column of ``usage monthly`` fits if the model
    names wrap: they do, after a ``-``, each name whole once joined."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "94"}
    done = subprocess.run([str(EXE), "usage", "monthly", "--store", str(sessions), "--timezone", "UTC"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Cache" in done.stdout and "Narrow terminal" not in done.stdout and "…" not in done.stdout, done.stdout
    assert all(len(line) <= 94 for line in lines)
    pieces = [line.split("│")[1].strip() for line in lines if line.count("│") == 7]
    names, current = [], ""
    for piece in pieces:
        current += piece
        if current and not current.endswith("-"):
            names.append(current)
            current = ""
    data = json.loads(subprocess.run([str(EXE), "usage", "monthly", "--store", str(sessions), "--timezone", "UTC", "--json"],
                                     capture_output=True, text=True, env=env, timeout=600).stdout)
    expected = [m.split("] ", 1)[-1] for row in data["monthly"] for m in row["modelsUsed"]]
    assert names == expected and any(len(p) < len(n) for p in pieces for n in expected if n.startswith(p)), (names, expected)
