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


def _session_with_a_secret(tmp_path: Path) -> Path:
    """A session whose one message holds an AWS key: an export without
    --redact or --allow-secrets is refused by the secret scan."""
    path = tmp_path / "secret.jsonl"
    message = {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "AWS_ACCESS_KEY_ID=AKIA" + "Z7QW3RT5YU8IO2PL", "timestamp": 1}}
    path.write_text(HEADER + json.dumps(message) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["md", "jsonl"])
def test_export_checks_its_target_before_the_secret_scan(cli, tmp_path, fmt):
    """A target that would be refused (a .jsonl file, an existing file
    without --force) is the error, not the secrets the scan found: the
    target is checked first, so a refusal never waits for a long scan."""
    session = _session_with_a_secret(tmp_path)
    scanned = cli("export", str(session), "-f", fmt, "-o", str(tmp_path / "new.out"))
    assert scanned.returncode == 1 and "the export would hold 1 secret" in scanned.stderr  # the scan runs
    (tmp_path / "d4.jsonl").write_text("")
    as_session = cli("export", str(session), "-f", fmt, "-o", str(tmp_path / "d4.jsonl"))
    assert as_session.returncode == 1
    assert as_session.stderr == f"pi-session: {tmp_path / 'd4.jsonl'}: refusing to overwrite it: a .jsonl file may be a session\n"
    (tmp_path / "old.md").write_text("mine")
    existing = cli("export", str(session), "-f", fmt, "-o", str(tmp_path / "old.md"))
    assert existing.returncode == 1 and "already exists (use --force" in existing.stderr and "secret" not in existing.stderr
    assert (tmp_path / "old.md").read_text() == "mine"


@pytest.mark.parametrize("fmt", ["md", "html", "jsonl"])
def test_export_writes_to_a_device_or_a_fifo(cli_process, tmp_path, fmt):
    """``-o /dev/null``, ``-o /dev/stdout`` (a pipe here) and a named pipe
    are written to as they are, without --force: nothing is overwritten.
    A new process: ``/dev/stdout`` is its standard output's descriptor."""
    session = tmp_path / "s.jsonl"
    session.write_text(HEADER)
    to_null = cli_process("export", str(session), "-f", fmt, "-o", "/dev/null")
    assert to_null.returncode == 0, to_null.stderr
    assert to_null.stderr == "exported " + (f"{len(HEADER)} bytes" if fmt == "jsonl" else "0 entries") + " to /dev/null\n"
    to_stdout = cli_process("export", str(session), "-f", fmt, "-o", "/dev/stdout")
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == (HEADER if fmt == "jsonl" else cli_process("export", str(session), "-f", fmt, "-o", "-").stdout)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    to_fifo = cli_process("export", str(session), "-f", fmt, "-o", str(fifo))
    got, _ = reader.communicate(timeout=60)
    assert to_fifo.returncode == 0, to_fifo.stderr
    assert got.decode() == to_stdout.stdout and fifo.exists()
    assert not [p for p in tmp_path.iterdir() if p.name not in ("s.jsonl", "fifo")]  # no temp file left beside it


LONG_CWD = "/home/someone/projects/a-rather-long-project-directory-name/with/sub/dirs"
KOREAN = "할 일 목록을 정리하고 " * 6
ENGLISH = "before the match there is a fair amount of text that " * 2


def _search_home(tmp_path: Path) -> Path:
    """An agent directory with one session in a long-named project whose
    two user messages hold ``todo`` in a long English and a long Korean
    text (snippets far wider than 80 columns)."""
    agent = tmp_path / "agent"
    directory = agent / "sessions" / ("-" + LONG_CWD.strip("/").replace("/", "-") + "--")
    directory.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "5e55e55e-0000-4000-8000-000000000001",
              "timestamp": "2026-04-01T10:00:00.000Z", "cwd": LONG_CWD}
    records = [header]
    parent = None
    for n, text in enumerate([ENGLISH + "todo: fix the parser so that it " + ENGLISH, KOREAN + "todo " + KOREAN], 1):
        records.append({"type": "message", "id": f"u{n}", "parentId": parent, "timestamp": f"2026-04-01T10:00:0{n}.000Z",
                        "message": {"role": "user", "content": text, "timestamp": 1775037600000 + n * 1000}})
        parent = f"u{n}"
    records.append({"type": "session_info", "id": "i1", "parentId": parent, "timestamp": "2026-04-01T10:00:09.000Z",
                    "name": "A session name long enough to push the header of every hit past eighty columns"})
    (directory / "2026-04-01T10-00-00-000Z_5e55e55e-0000-4000-8000-000000000001.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return agent


@pytest.mark.skipif(__import__("shutil").which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")
def test_search_lines_fit_an_80_column_terminal(tmp_path):
    """In an 80-column terminal each hit's header and snippet line is one
    screen line at most 80 cells wide (cut with …, the match in view, no
    Korean syllable split); piped, the lines are whole."""
    import shlex

    from rich.cells import cell_len
    from test_cli_ls_widths import screen_in_tmux

    agent = _search_home(tmp_path)
    env = {**_env(tmp_path), "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("COLUMNS")
    piped = subprocess.run([str(EXE), "search", "todo", "--limit", "3"], capture_output=True, text=True, env=env, timeout=300)
    assert piped.returncode == 0, piped.stderr
    whole = piped.stdout.splitlines()
    assert len(whole) == 6 and all(line.endswith(LONG_CWD) for line in whole[::3])  # headers whole
    command = f"env -u COLUMNS PI_CODING_AGENT_DIR={shlex.quote(str(agent))} {shlex.quote(str(EXE))} search todo --limit 3"
    [screen] = screen_in_tmux(tmp_path, 80, [command])
    lines = [line for line in screen if line.strip()]
    assert len(lines) == 6, screen  # 2 hits x (header, snippet, open command): no line folded
    for n in (0, 3):
        header, snippet = lines[n], lines[n + 1]
        assert cell_len(header) <= 80 and header.endswith("…") and header.lstrip().startswith(f"{n // 3 + 1}.")
        assert cell_len(snippet) <= 80 and "todo" in snippet and snippet.rstrip().endswith("…")
    [korean_line] = [line for line in (lines[1], lines[4]) if "목록" in line]
    korean = korean_line.strip().strip("…").replace("todo", " ")
    assert set(korean) <= set(KOREAN), korean  # whole syllables only
