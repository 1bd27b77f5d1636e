"""The ``search`` command as a new user meets it, through the real console
script: a filter with a space after its colon, a query starting with
``-``, short commands under each hit that still open it, and ``--open N``
piped printing the hit's neighbourhood."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from search_helpers import S1, S2, lines_of, write_corpus

ALONE = "7f3a9c21-5b6d-7e8f-9a0b-1c2d3e4f5a6b"  # shares no prefix with the corpus's ids


def _msg(eid: str, parent: str | None, second: int, role: str, text: str) -> dict:
    ts = f"2026-04-01T10:{second // 60:02d}:{second % 60:02d}.000Z"
    if role == "user":
        message = {"role": "user", "content": text, "timestamp": 1775037600000 + second * 1000}
    else:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                   "provider": "anthropic", "model": "claude-sonnet-4",
                   "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                   "stopReason": "stop", "timestamp": 1775037600000 + second * 1000}
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}


def _long_session(root: Path) -> Path:
    """A 40-message chain (u1, a1, ... u20, a20) in its own project; u10
    holds ``needle``, u11 a secret that a later context edit replaced."""
    records: list[dict] = [{"type": "session", "version": 3, "id": ALONE, "timestamp": "2026-04-01T10:00:00.000Z", "cwd": "/work/long"}]
    parent = None
    for n in range(1, 21):
        user = "the needle is here" if n == 10 else ("my token is secretneighbour" if n == 11 else f"user message number {n}")
        records.append(_msg(f"u{n}", parent, 2 * n, "user", user))
        records.append(_msg(f"a{n}", f"u{n}", 2 * n + 1, "assistant", f"assistant reply number {n}"))
        parent = f"a{n}"
    records.append({"type": "context_edit", "id": "e1", "parentId": parent, "timestamp": "2026-04-01T10:59:00.000Z",
                    "targetId": "u11", "replacement": {"content": "[token removed]"}})
    d = root / "--work-long--"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"2026-04-01T10-00-00-000Z_{ALONE}.jsonl"
    path.write_bytes(b"".join(lines_of(records)))
    return path


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The corpus and the long session in pi's sessions directory of the
    ``cli`` fixture (``$PI_CODING_AGENT_DIR/sessions``); the environment
    to run with."""
    sessions = tmp_path / "agent" / "sessions"
    write_corpus(sessions)
    _long_session(sessions)
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"), "PI_SESSION_STORE": ""}


def _json_hits(proc: subprocess.CompletedProcess[str]) -> set[tuple[str, str | None]]:
    assert proc.returncode in (0, 1), proc.stderr
    return {(h["sessionId"], h["entryId"]) for h in orjson.loads(proc.stdout)["hits"]}


def test_a_filter_with_a_space_after_its_colon_is_kept(cli, home) -> None:
    spaced = _json_hits(cli("search", "file: theme", "--json", env=home))
    assert spaced and spaced == _json_hits(cli("search", "file:theme", "--json", env=home))
    assert {s for s, _ in spaced} == {S2}
    proc = cli("search", "file: role:user", env=home)
    assert proc.returncode == 1 and "query error at column 6: file: needs a value" in proc.stderr and "Traceback" not in proc.stderr


def test_a_query_starting_with_a_dash_is_the_query(cli, home) -> None:
    assert _json_hits(cli("search", "-theme palette", "--json", env=home)) == {(S2, "x1")}
    assert _json_hits(cli("search", "--json", "-theme palette", env=home)) == {(S2, "x1")}
    assert _json_hits(cli("search", "--json", "--", "-theme palette", env=home)) == {(S2, "x1")}  # -- as before
    # negated words alone: every entry without them, newest first
    proc = cli("search", "-theme", "-n", "100", "--json", env=home)
    assert proc.returncode == 0, proc.stderr
    found = _json_hits(proc)
    assert (S2, "u1") not in found and (S2, "x1") in found and (S1, "b1") in found
    # options keep working around it: -n N, -nN, --limit=N
    for limit in (["-n", "1"], ["-n1"], ["--limit=1"]):
        proc = cli("search", *limit, "-theme", "--json", env=home)
        assert proc.returncode == 0 and len(orjson.loads(proc.stdout)["hits"]) == 1, (limit, proc.stderr)
    proc = cli("search", "-theme", "--limt", "1", env=home)  # an unknown long option stays click's error
    assert proc.returncode == 2 and "No such option: --limt" in proc.stderr


def _printed_commands(stdout: str) -> list[str]:
    return [line.strip() for line in stdout.splitlines() if line.strip().startswith("pi-session ")]


def _run_printed(command: str, cli, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command.replace("~/", env["HOME"] + "/", 1) if command.count("~/") else command)
    assert words[0] == "pi-session"
    return cli(*words[1:], env=env, cwd=str(cwd))


def test_hit_commands_are_short_and_open_the_hit(cli, home, tmp_path: Path) -> None:
    """Under each hit: ``pi-session context <id prefix> --leaf <entry>``,
    the shortest unique prefix of at least 8 characters, which opens that
    entry from any directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cli("search", "needle", env=home, cwd=str(elsewhere))
    assert proc.returncode == 0, proc.stderr
    (command,) = _printed_commands(proc.stdout)
    assert command == f"pi-session context {ALONE[:8]} --leaf u10"
    opened = _run_printed(command, cli, home, elsewhere)
    assert opened.returncode == 0 and opened.stdout.startswith("leaf u10"), opened.stderr
    # the corpus's ids differ only in their last character: the whole id, still no path
    proc = cli("search", "nxdomain", env=home, cwd=str(elsewhere))
    (command,) = _printed_commands(proc.stdout)
    assert command == f"pi-session context {S1} --leaf b1" and str(tmp_path) not in proc.stdout
    # a file in the current directory named as the prefix: a longer prefix, which names no file
    (elsewhere / ALONE[:8]).write_text("not a session")
    (command,) = _printed_commands(cli("search", "needle", env=home, cwd=str(elsewhere)).stdout)
    assert command == f"pi-session context {ALONE[:9]} --leaf u10"
    assert _run_printed(command, cli, home, elsewhere).stdout.startswith("leaf u10")


def test_hit_commands_of_a_sessions_directory_given_as_store_are_relative(cli, home, tmp_path: Path) -> None:
    """``--store DIR``: the file's path from the current directory when it
    lies inside it, else from ``~/``; both open the hit."""
    root = Path(home["HOME"]) / "team-sessions"
    _long_session(root)
    env = {**home, "PI_SESSION_STORE": str(root)}
    proc = cli("search", "needle", env=env, cwd=str(root))
    (command,) = _printed_commands(proc.stdout)
    assert command == f"pi-session context ./--work-long--/2026-04-01T10-00-00-000Z_{ALONE}.jsonl --leaf u10"
    assert _run_printed(command, cli, env, root).stdout.startswith("leaf u10")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (command,) = _printed_commands(cli("search", "needle", env=env, cwd=str(elsewhere)).stdout)
    assert command == f"pi-session context ~/team-sessions/--work-long--/2026-04-01T10-00-00-000Z_{ALONE}.jsonl --leaf u10"
    assert _run_printed(command, cli, env, elsewhere).stdout.startswith("leaf u10")
    # as a shell reads it: ~ expanded
    exe_dir = Path(sys.executable).parent
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=elsewhere, timeout=120,
                          env={**os.environ, **env, "PATH": f"{exe_dir}:{os.environ.get('PATH', '')}",
                               "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert proc.returncode == 0 and proc.stdout.startswith("leaf u10"), proc.stderr


def test_hit_commands_of_a_database_store_use_an_id_prefix(cli, home, tmp_path: Path) -> None:
    from pi_session.stores import open_store

    db = tmp_path / "team.db"
    with open_store(f"sqlite:///{db}") as store:
        _long_session(tmp_path / "import")
        store.create(list(lines_of([orjson.loads(line) for line in next((tmp_path / "import").rglob("*.jsonl")).read_bytes().splitlines()])),
                     file_name=f"2026-04-01T10-00-00-000Z_{ALONE}.jsonl")
    env = {**home, "PI_SESSION_STORE": ""}
    proc = cli("--store", f"sqlite:///{db}", "search", "needle", env=env)
    assert proc.returncode == 0, proc.stderr
    (command,) = _printed_commands(proc.stdout)
    assert command == f"pi-session --store sqlite:///{db} context {ALONE[:8]} --leaf u10"
    assert _run_printed(command, cli, env, tmp_path).stdout.startswith("leaf u10")


def test_open_piped_prints_the_hits_neighbourhood(cli, home) -> None:
    """``--open N`` not on a terminal: the 3 context entries on each side
    of the hit, the hit marked, a later context edit applied (the secret it
    replaced is not shown), and how to see the whole context."""
    proc = cli("search", "needle", "--open", "1", env=home)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "── u10 user  ◀ hit" in out and "the needle is here" in out
    for shown in ("assistant reply number 8", "user message number 9", "assistant reply number 9", "assistant reply number 10",
                  "[token removed]", "assistant reply number 11"):
        assert shown in out, shown
    for hidden in ("user message number 8", "user message number 1\n", "user message number 12", "secretneighbour"):
        assert hidden not in out, hidden
    assert "── u11 user (edited by context edit e1)" in out
    assert out.splitlines()[-1] == (
        f"7 entries shown, 15 before and 19 after left out; the whole context at the hit: pi-session context {ALONE[:8]} --leaf u10"
    )


def test_filter_values_with_undecodable_bytes_are_no_internal_error(cli, home) -> None:
    """A filter value holding a byte that is not UTF-8 (a lone surrogate
    once decoded) is matched as the index keeps such text (U+FFFD): no
    hits, exit 1, no internal error."""
    for query in ("project:\udcff", "resolver model:\udcff", "file:\udcff", "session:\udcff", "tool:\udcff"):
        proc = cli("search", query, env=home)
        assert proc.returncode == 1 and "no hits" in proc.stderr and "internal error" not in proc.stderr, (query, proc.stderr)


def test_a_file_filter_alone_finds_where_a_real_session_named_the_file(cli, fixture_copy, tmp_path) -> None:
    """``file:custom-editor.ts`` on pi's real ``large-session.jsonl``: the
    file is named by three tool calls early in the session (a read, two
    greps) and never in its last 900 lines; those three come first, the
    read (whose path argument is the file) and each snippet showing the
    file's name marked, not the session's newest entries."""
    src = fixture_copy("large-session.jsonl")
    sessions = tmp_path / "sessions"
    (sessions / "--Users-dev-workspaces-pi-mono--").mkdir(parents=True)
    src.rename(sessions / "--Users-dev-workspaces-pi-mono--" / "2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PI_SESSION_STORE": ""}
    proc = cli("--store", str(sessions), "search", "file:custom-editor.ts", "-n", "4", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    hits = orjson.loads(proc.stdout)["hits"]
    assert [h["tool"] for h in hits[:3]] == ["read", "bash", "bash"]
    for hit in hits[:3]:
        assert hit["timestamp"] < "2025-11-21T00:00", hit
        (start, end), = hit["marks"]
        assert hit["snippet"][start:end] == "custom-editor.ts" and "packages/coding-agent/src/tui/custom-editor.ts" in hit["snippet"]
    assert "custom-editor" not in hits[3]["snippet"] and hits[3]["timestamp"] > "2025-11-21T02:00"
