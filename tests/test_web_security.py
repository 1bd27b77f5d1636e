"""Who can reach ``pi-session serve``: on 127.0.0.1 another local user (uid
65534, ``nobody``) gets 401 for every read and write without the access
token the server prints in its URL; a Unix socket is the owner's alone
(mode 0600: another user cannot connect); each server keeps its own login
cookie. A real server (the console script under uvicorn), the other user a
real process (``setpriv``). The other user's tests need root."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from web_helpers import EXE, LONG, Server, file_store

httpx = pytest.importorskip("httpx")

UID = GID = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="acting as another user needs root")

_AS_OTHER_USER = r"""
import json, re, sys, urllib.error, urllib.request
base, sid, path = sys.argv[1], sys.argv[2], sys.argv[3]

def call(method, url, body=None, headers=None):
    request = urllib.request.Request(base + url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()

out = {}
try:
    open(path, "rb").read()
    out["file"] = "read"
except PermissionError:
    out["file"] = "denied"
out["page"], page = call("GET", "/")
found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page)
csrf = found[1] if found else "none"
out["scraped"] = found is not None
out["login"] = call("GET", "/?token=guessed-guessed-guessed")[0]
out["session"] = call("GET", "/api/v1/sessions/" + sid)[0]
out["events"] = call("GET", "/api/v1/sessions/" + sid + "/events?x=1")[0] if out["session"] != 200 else 200
out["rename"] = call("POST", "/api/v1/sessions/" + sid + "/name", json.dumps({"name": "renamed by another user"}).encode(),
                     {"Content-Type": "application/json", "Origin": base, "X-CSRF-Token": csrf})[0]
print(json.dumps(out))
"""


def _as_other_user(*argv: str) -> subprocess.CompletedProcess:
    """``/usr/bin/python3 -c`` as uid/gid 65534 with no supplementary groups."""
    return subprocess.run(
        ["setpriv", f"--reuid={UID}", f"--regid={GID}", "--clear-groups", "/usr/bin/python3", "-I", *argv],
        capture_output=True, text=True, timeout=120, cwd="/", env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )


@needs_root
def test_another_local_user_gets_401_without_the_token(tmp_path):
    root = file_store(tmp_path / "sessions")
    path = next(root.glob(f"*/*{LONG}.jsonl"))
    path.chmod(0o600)
    before = path.read_bytes()
    with Server(str(root), agent_dir=tmp_path / "agent") as server:
        run = _as_other_user("-c", _AS_OTHER_USER, server.url, LONG, str(path))
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout)
        # the owner, with the printed URL's token, reads the session
        with server.client(timeout=30) as client:
            assert client.get(f"/api/v1/sessions/{LONG}").status_code == 200
    assert seen == {"file": "denied", "page": 401, "scraped": False, "login": 401, "session": 401, "events": 401, "rename": 401}
    assert path.read_bytes() == before


def test_the_token_is_in_the_printed_url_only(tmp_path):
    root = file_store(tmp_path / "sessions")
    with Server(str(root), agent_dir=tmp_path / "agent") as server:
        assert server.token and len(server.token) >= 32
        assert server.token in server.printed and "?token=" in server.printed
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        assert server.token.encode() not in cmdline
        with httpx.Client(base_url=server.url, timeout=30) as client:
            refused = client.get("/api/v1/sessions")
            assert refused.status_code == 401 and server.token not in refused.text
            # the printed URL logs in: a cookie, then the page without the token
            login = client.get(server.login_url("/"), follow_redirects=False)
            assert login.status_code == 303 and login.headers["location"] == "/"
            assert client.get("/").status_code == 200
            assert server.token not in client.get("/").text
        stderr = server.close()
    assert server.token not in stderr


def test_two_servers_keep_their_own_login_cookies(tmp_path):
    root = file_store(tmp_path / "sessions")
    tokens = ("token-of-server-one-0123456789", "token-of-server-two-0123456789")
    with Server(str(root), agent_dir=tmp_path / "a", env={"PI_SESSION_SERVE_TOKEN": tokens[0]}) as one, \
            Server(str(root), agent_dir=tmp_path / "b", env={"PI_SESSION_SERVE_TOKEN": tokens[1]}) as two:
        # one browser (one cookie jar: cookies do not tell ports apart) logged in to both
        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            assert browser.get(one.login_url("/")).status_code == 200
            assert browser.get(two.login_url("/")).status_code == 200
            assert browser.get(one.url + "/api/v1/sessions").status_code == 200
            assert browser.get(two.url + "/api/v1/sessions").status_code == 200


_CONNECT = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    print("connected")
except OSError as exc:
    print(os.strerror(exc.errno))
"""


@needs_root
def test_a_unix_socket_is_the_owners_alone(tmp_path):
    root = file_store(tmp_path / "sessions")
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)  # another user may reach the directory, not the socket
    sock = run_dir / "pi.sock"
    with Server(str(root), listen=("--unix-socket", str(sock)), agent_dir=tmp_path / "agent") as server:
        assert server.token is None and "unix socket" in server.printed and str(sock) in server.printed
        mode = os.stat(sock).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        other = _as_other_user("-c", _CONNECT, str(sock))
        assert other.returncode == 0, other.stderr
        assert other.stdout.strip() == os.strerror(13)  # EACCES: Permission denied
        # the owner needs no token
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://localhost", timeout=30) as client:
            listing = client.get("/api/v1/sessions")
            assert listing.status_code == 200 and LONG in listing.text
    assert not sock.exists()  # removed when the server stops


def test_a_unix_socket_in_a_directory_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # writable by everyone, no sticky bit: another user could swap the socket
    run = subprocess.run([str(EXE), "--store", str(file_store(tmp_path / "sessions")), "serve", "--unix-socket", str(shared / "pi.sock")],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "writable" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (shared / "pi.sock").exists()
