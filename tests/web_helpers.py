"""The web app's test helpers: a real ``pi-session serve`` (the console
script, uvicorn on 127.0.0.1, a free port) and a store of the viewer's
test sessions.

- ``Server(args, env=…)``: starts the server, reads the URL it prints
  (``.printed``: that line): ``.url`` (without the access token),
  ``.token`` (the one the URL carries, or given in ``PI_SESSION_SERVE_TOKEN``),
  ``.login_url(path)`` (a page's address with ``?token=``: opening it sets
  the login cookie), ``.client(**httpx options)`` (an ``httpx.Client`` on
  ``.url`` sending the token), ``.close()`` (context manager too);
- ``csrf_of(client, url)``: the CSRF token of a page;
- ``file_store(root)``: a session-file store with the showcase, hostile and
  long sessions (``SHOWCASE``, ``HOSTILE``, ``LONG``: their ids).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from viewer_pages import hostile_session, long_session, showcase_session

EXE = Path(sys.executable).parent / "pi-session"
SHOWCASE = "0196a000-0000-7000-8000-00000000c0de"
HOSTILE = "0196a000-0000-7000-8000-0000000e0e0e"
LONG = "0196a000-0000-7000-8000-0000000010ng"


class Server:
    """``pi-session [--store STORE] serve LISTEN ARGS…`` as a subprocess
    (``listen``: ``--port 0`` unless given, e.g. ``("--unix-socket", path)``)."""

    def __init__(self, store: str | None, *args: str, env: dict[str, str] | None = None, agent_dir: Path | None = None,
                 listen: tuple[str, ...] = ("--port", "0")) -> None:
        full_env = {**os.environ, "COLUMNS": "200"}
        full_env.pop("PI_SESSION_SERVE_TOKEN", None)
        full_env.pop("OPENAI_API_KEY", None)
        full_env.pop("ANTHROPIC_API_KEY", None)
        if agent_dir is not None:
            full_env["PI_CODING_AGENT_DIR"] = str(agent_dir)
        full_env.update(env or {})
        cmd = [str(EXE)] + (["--store", store] if store else []) + ["serve", *listen, *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.printed = line
        found = re.search(r"(http://[^/\s]+)/?(\S*)", line)
        if found is None:
            self.close()
            raise AssertionError(f"no URL from the server: {line!r} {self.proc.stderr.read() if self.proc.stderr else ''}")
        self.url = found[1]
        self.host = self.url.split("//", 1)[1]
        query = parse_qs(urlsplit(found[2]).query)
        self.token: str | None = query["token"][0] if "token" in query else full_env.get("PI_SESSION_SERVE_TOKEN")

    def login_url(self, path: str = "/") -> str:
        """The address of ``path`` (on :attr:`url`) with the access token:
        the server answers it with its login cookie and a redirect to
        ``path``."""
        if self.token is None:
            return self.url + path
        return self.url + path + ("&" if "?" in path else "?") + urlencode({"token": self.token})

    def client(self, **options: Any) -> Any:
        """An ``httpx.Client`` on :attr:`url` sending the access token
        (``Authorization: Bearer``) with every request."""
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        headers.update(options.pop("headers", {}))
        return httpx.Client(base_url=self.url, headers=headers, **options)

    def close(self) -> str:
        """Stop the server; returns what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stderr.read() if self.proc.stderr else ""

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def csrf_of(client: Any, url: str) -> str:
    """The CSRF token in a page's ``<meta name="csrf-token">``."""
    page = client.get(url).text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
    assert found, page[:500]
    return found[1]


def file_store(root: Path, *, long_entries: int = 40) -> Path:
    """A session-file store at ``root`` with the showcase, hostile and
    long sessions of :mod:`viewer_pages`."""
    d = root / "--w--"
    d.mkdir(parents=True, exist_ok=True)
    showcase_session(d / f"2026-11-30T10-00-00-000Z_{SHOWCASE}.jsonl")
    hostile_session(d / f"2026-11-30T10-00-00-000Z_{HOSTILE}.jsonl")
    long_session(d / f"2026-11-30T10-00-00-000Z_{LONG}.jsonl", long_entries)
    return root


def wait_for(predicate: Any, timeout: float = 10.0) -> Any:
    """Poll ``predicate`` until it returns a true value (returned) or
    ``timeout`` seconds pass (AssertionError)."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.05)


def many_sessions(root: Path, count: int) -> list[str]:
    """``count`` small session files (a question and an answer each) in
    four project directories under ``root``; session ``n`` is the
    ``n``-th newest from the oldest (its messages ``n`` minutes after the
    first's) and its question holds the word ``topic<n>x``. Returns their
    ids, newest first."""
    import json

    ids = []
    for n in range(count):
        project = root / f"--many{n % 4}--"
        project.mkdir(parents=True, exist_ok=True)
        sid = f"0196c000-0000-7000-8000-{n:012x}"
        stamp = f"2026-10-{1 + n // 1440:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00.000Z"
        ms = 1_790_000_000_000 + n * 60_000
        records = [
            {"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": f"/many{n % 4}"},
            {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
             "message": {"role": "user", "content": f"question {n} about topic{n}x", "timestamp": ms}},
            {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp,
             "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}], "provider": "p", "model": "m",
                         "stopReason": "stop", "timestamp": ms + 1}},
        ]
        (project / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        ids.append(sid)
    return ids[::-1]
