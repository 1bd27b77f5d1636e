"""What a new user meets first on the command line: an empty session's tree
says so, a closed pipe (``| head``) is not a failure, ``export`` checks its
target before the slow secret scan and writes to ``/dev/null`` or a FIFO, a
store URL whose directory does not exist is an error naming it, and
``search`` fits its lines to the terminal. All through the real console
script (and tmux for the terminal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES

EXE = Path(sys.executable).parent / "pi-session"
LARGE = FIXTURES / "large-session.jsonl"


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200"}


@pytest.mark.skipif(not LARGE.exists(), reason="pi's fixtures not present (../shared)")
@pytest.mark.parametrize("command", ["tree", "context"])
def test_a_reader_that_stops_early_is_not_a_failure(tmp_path, command):
    """``pi-session tree big.jsonl | head -1``: the reader closes the pipe
    after one line; the command stops quietly with exit status 0."""
    proc = subprocess.Popen([str(EXE), command, str(LARGE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(tmp_path))
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert first and err == b""


HEADER = '{"type":"session","version":3,"id":"0c0ffee0-0000-4000-8000-000000000001","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/proj"}\n'


@pytest.mark.parametrize("body", ["", "{broken\n"], ids=["header-only", "damaged-lines"])
def test_tree_of_a_session_without_entries_says_so(cli, tmp_path, body):
    """A session with a header and nothing else (or only damaged lines,
    each reported on stderr) prints a line saying it has no entries, on a
    file and on a SQLite store; --json stays valid JSON with no entries."""
    path = tmp_path / "empty.jsonl"
    path.write_text(HEADER + body)
    shown = cli("tree", str(path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "session 0c0ffee0-0000-4000-8000-000000000001 has no entries"
    assert (":2:" in shown.stderr) == bool(body)
    as_json = cli("tree", "--json", str(path))
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == {"leafId": None, "entries": []}
    store = f"sqlite:///{tmp_path / 'x.db'}"
    imported = cli("--store", store, "import", str(path))
    assert imported.returncode == 0, imported.stderr
    in_store = cli("--store", store, "tree", "0c0ffee0")
    assert in_store.returncode == 0, in_store.stderr
    assert in_store.stdout.strip() == "session 0c0ffee0-0000-4000-8000-000000000001 has no entries"


@pytest.mark.parametrize("where", ["global", "option"])
def test_import_into_a_sqlite_store_in_a_missing_directory_is_an_error(cli, tmp_path, where):
    """A typo in a store URL's directory is one line naming the directory,
    exit 1, and nothing created; the database file itself is created by
    ``import`` when its directory exists."""
    session = tmp_path / "s.jsonl"
    session.write_text(HEADER)
    url = f"sqlite:///{tmp_path / 'nonexistent' / 'x.db'}"
    args = ["--store", url, "import", str(session)] if where == "global" else ["import", str(session), "--store", url]
    res = cli(*args)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == f"pi-session: {url}: no such directory ({tmp_path / 'nonexistent'}); import creates the database file, not its directory\n"
    assert not (tmp_path / "nonexistent").exists()
    made = cli("import", str(session), "--store", f"sqlite:///{tmp_path / 'x.db'}")
    assert made.returncode == 0 and (tmp_path / "x.db").is_file(), made.stderr

