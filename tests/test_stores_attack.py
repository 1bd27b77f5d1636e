"""Stores under attack (issue 22): passwords with the characters libpq reads
as part of them never shown (real PostgreSQL, the real console script),
read-only commands that never write to another program's SQLite database,
SQLite write failures (a full database) reported as themselves, and a new
SQLite store opened by several threads at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from pi_session import jsonio
from pi_session.stores import StoreError, open_store
from pi_session.stores.postgres import PostgresStore

PI_SESSION = Path(sys.executable).with_name("pi-session")
SECRET_HEAD, SECRET_TAIL = "Sekr", "Et9xq"


def _session(session_id: str, text: str = "hello") -> list[bytes]:
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "2025-01-02T03:04:05.000Z", "cwd": "/work/p"}
    user = {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": "2025-01-02T03:04:06.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1735787046000},
    }
    return [jsonio.dumps_line(header), jsonio.dumps_line(user)]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_SESSION_STORE")}
    return subprocess.run([str(PI_SESSION), *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


# --- item 1: passwords libpq accepts are masked in every form ---------------

CHARS = ["#", "?", "@", "/", ":", "%40", " ", "'"]


def _forms(postgres_url: str, char: str, dbname: str) -> list[str]:
    """The URL-userinfo, query-parameter and (the last two) conninfo forms
    of a login with the password ``SECRET_HEAD + char + SECRET_TAIL`` to
    ``dbname``."""
    parts = urlsplit(postgres_url)
    host = parse_qs(parts.query)["host"][0]
    user = parts.username or ""
    password = SECRET_HEAD + char + SECRET_TAIL
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    query_value = password.replace("&", "%26").replace(" ", "%20")
    return [
        f"postgresql://{user}:{password}@/{dbname}?host={host}",
        f"postgresql://{user}@/{dbname}?host={host}&password={query_value}",
        f"host={host} user={user} password='{quoted}' dbname={dbname}",
        f"host={host} user={user} password = '{quoted}' dbname={dbname}",
    ]


def _assert_no_secret(text: str) -> None:
    assert SECRET_HEAD not in text and SECRET_TAIL not in text, text


@pytest.mark.parametrize("char", CHARS)
def test_password_with_any_character_is_masked_in_connection_errors(postgres_url: str, char: str) -> None:
    """A database that does not exist makes libpq fail (the test server
    trusts any password); the error and its URL never show the password."""
    for url in _forms(postgres_url, char, "pi_no_such_database"):
        with pytest.raises(StoreError) as info:
            PostgresStore(url)
        message = str(info.value)
        _assert_no_secret(message)
        assert "\n" not in message and "***" in message, message


@pytest.mark.parametrize("char", CHARS)
def test_password_with_any_character_is_masked_by_ls(postgres_url: str, char: str, tmp_path: Path) -> None:
    """``pi-session --store URL ls`` (the real console script), on a
    database that exists and one that does not: the paths it lists and
    whatever it reports never show the password."""
    with open_store(postgres_url) as store:
        store.create(_session("s-1"))
    dbname = urlsplit(postgres_url).path.lstrip("/")
    for url in _forms(postgres_url, char, dbname)[:2] + _forms(postgres_url, char, "pi_no_such_database")[:2]:
        for args in (["--store", url, "ls", "--all"], ["--store", url, "ls", "--all", "--json"]):
            done = _run(*args, cwd=tmp_path)
            _assert_no_secret(done.stdout + done.stderr)
            if done.returncode == 0:
                assert "s-1" in done.stdout
            else:
                assert len(done.stderr.strip().splitlines()) == 1, done.stderr
