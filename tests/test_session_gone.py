"""A live writer whose session is deleted, or whose file is replaced, by
another real process between two appends: it refuses with one clear line
(:class:`pi_session.storage.SessionGoneError`) and writes nothing. It never
re-creates the file holding only its next entry (no header: no reader
would accept it), and never appends into another session's file. An
atomic rewrite of the same session (a scrub, a repair) is no replacement:
appends go on.

The other process is a plain ``python -c`` or the real ``pi-session``
console script."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_session import SessionManager
from pi_session.storage import SessionFileError, SessionGoneError, read_session_file
from pi_session.stores import open_store

SRC = Path(__file__).resolve().parents[1] / "src"

_UNLINK = "import os, sys; os.unlink(sys.argv[1])"
_RENAME = "import os, sys; os.rename(sys.argv[1], sys.argv[2])"
_DELETE_FROM_STORE = "import sys; from pi_session.stores import open_store; assert open_store(sys.argv[1]).delete(sys.argv[2])"
# an atomic rewrite of the same session, as scrub and repair make them
_REWRITE = r"""
import os, sys
path = sys.argv[1]
data = open(path, "rb").read()
with open(path + ".tmp", "wb") as f:
    f.write(data.replace(b"first question", b"FIRST QUESTION"))
os.rename(path + ".tmp", path)
"""


def _python(script: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": int(time.time() * 1000)}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-responses",
        "provider": "p", "model": "m", "stopReason": "stop", "timestamp": int(time.time() * 1000),
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
    }  # fmt: skip


def _session(tmp_path: Path, name: str = "s") -> tuple[SessionManager, Path]:
    manager = SessionManager.create(str(tmp_path / "project"), tmp_path / "sessions" / name)
    manager.append_message(_user("first question"))
    manager.append_message(_assistant("first answer"))
    path = manager.get_session_file()
    assert path is not None and path.exists()
    return manager, path


def test_an_append_after_another_process_deleted_the_file_is_refused(tmp_path: Path) -> None:
    manager, path = _session(tmp_path)
    leaf = manager.get_leaf_id()
    _python(_UNLINK, str(path))
    with pytest.raises(SessionGoneError) as info:
        manager.append_message(_user("second question"))
    assert isinstance(info.value, SessionFileError)  # what the CLI and browse report as one line
    assert info.value.gone == "deleted"
    message = str(info.value)
    assert message.startswith(f"{path}: the session file was deleted") and "nothing was written" in message
    assert "\n" not in message
    assert not path.exists()  # not re-created holding one headerless entry
    assert manager.get_leaf_id() == leaf and len(manager.get_entries()) == 2  # nothing taken in
    with pytest.raises(SessionGoneError):  # and again: still nothing
        manager.append_message(_user("third question"))
    assert not os.listdir(path.parent)
    # the id is free: opening the path starts a new session there (pi 1.6)
    again = SessionManager.open(path)
    again.append_message(_user("a new start"))
    again.append_message(_assistant("fine"))
    assert read_session_file(path).header is not None


def test_an_append_into_a_file_replaced_by_another_session_is_refused(tmp_path: Path) -> None:
    manager, path = _session(tmp_path, "a")
    other, other_path = _session(tmp_path, "b")
    _python(_RENAME, str(other_path), str(path))
    replaced = path.read_bytes()
    with pytest.raises(SessionGoneError) as info:
        manager.append_message(_user("second question"))
    assert info.value.gone == "replaced"
    assert f"its header names session {other.get_session_id()}" in str(info.value)
    assert path.read_bytes() == replaced  # the other session is left as it was


def test_an_append_into_a_file_replaced_by_a_file_that_is_no_session_is_refused(tmp_path: Path) -> None:
    manager, path = _session(tmp_path)
    junk = tmp_path / "notes.txt"
    junk.write_bytes(b"shopping list\n")
    _python(_RENAME, str(junk), str(path))
    with pytest.raises(SessionGoneError, match="replaced by another file .it holds no session header."):
        manager.append_message(_user("second question"))
    assert path.read_bytes() == b"shopping list\n"


def test_an_atomic_rewrite_of_the_same_session_is_followed(tmp_path: Path) -> None:
    manager, path = _session(tmp_path)
    _python(_REWRITE, str(path))
    assert manager.is_stale()
    manager.append_message(_user("second question"))
    sf = read_session_file(path)
    assert sf.header is not None and not sf.problems
    assert [e["message"]["content"][0]["text"] for e in sf.entries] == ["FIRST QUESTION", "first answer", "second question"]


def test_a_database_session_deleted_by_another_process_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    manager = SessionManager.create(str(tmp_path), store=url)
    manager.append_message(_user("first question"))
    _python(_DELETE_FROM_STORE, url, manager.get_session_id())
    assert manager.is_stale()
    with pytest.raises(SessionGoneError, match="was deleted"):
        manager.append_message(_user("second question"))
    assert not open_store(url).exists(manager.get_session_id())
