"""An open ``PiSession`` and the other writers of its session: real
processes change, delete, create and rewrite the session between its
calls, and the object answers from what is stored now.

- a chat that did not exist when the object first read it, created by
  another process afterwards, is seen (``get_items``, ``clear_session``);
- a session rewritten to the same length (an atomic rename, a real
  ``pi-session scrub --mode rewrite``) is read again;
- a session deleted by another process is started again by the next
  ``add_items``, with a header, and opens anywhere afterwards;
- a batch holding a bad item stores nothing and names the item.

Files (pi's directory layout) and SQLite.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_session import SessionManager
from pi_session.core import jsonio
from pi_session.integrations.openai_agents import InvalidItemError, PiSession, pi_session_id_for
from pi_session.session.settings import CompactionSettings
from pi_session.stores import open_store

SRC = Path(__file__).resolve().parents[1] / "src"
EXE = Path(sys.executable).parent / "pi-session"

# another process: a PiSession on the same chat (argv: cwd, kind, where,
# chat id, operation, JSON argument)
_OTHER = r"""
import asyncio, json, sys
from pi_session.integrations.openai_agents import PiSession
from pi_session.session.settings import CompactionSettings
cwd, kind, where, chat, op, arg = sys.argv[1:7]
options = {"session_dir": where} if kind == "dir" else {"store": where}
session = PiSession(chat, cwd=cwd, settings=CompactionSettings(), **options)
if op == "add":
    asyncio.run(session.add_items(json.loads(arg)))
elif op == "clear":
    asyncio.run(session.clear_session())
print(json.dumps(asyncio.run(session.get_items())))
"""

# another process deleting the session: its file, or its rows
_DELETE = r"""
import os, sys
from pi_session.stores import open_store
kind, where, pi_id, cwd = sys.argv[1:5]
if kind == "dir":
    from pi_session import SessionManager
    path = SessionManager.find_by_id(cwd, pi_id, where)
    os.unlink(path)
else:
    assert open_store(where).delete(pi_id)
"""

# another process replacing a file atomically with bytes of the same length
_SAME_LENGTH = r"""
import os, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
assert len(old) == len(new)
data = open(path, "rb").read()
assert data.count(old) == 1
tmp = path + ".tmp"
with open(tmp, "wb") as f:
    f.write(data.replace(old, new))
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, path)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}


def _python(script: str, *args: str) -> str:
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=_env(), timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _contents(items: list[Any]) -> list[Any]:
    return [i.get("content") for i in items]


class Where:
    """One place sessions live: pi's directory layout or a SQLite store."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.cwd = str(tmp_path / "project")
        os.makedirs(self.cwd, exist_ok=True)
        self.where = str(tmp_path / "sessions") if kind == "dir" else f"sqlite:///{tmp_path}/sessions.db"

    def session(self, chat: str) -> PiSession:
        options: dict[str, Any] = {"session_dir": self.where} if self.kind == "dir" else {"store": self.where}
        return PiSession(chat, cwd=self.cwd, settings=CompactionSettings(), **options)

    def other(self, chat: str, op: str, arg: Any = None) -> list[Any]:
        """Run ``op`` on a PiSession of ``chat`` in another process; its items after."""
        return json.loads(_python(_OTHER, self.cwd, self.kind, self.where, chat, op, json.dumps(arg)))

    def delete(self, chat: str) -> None:
        """Delete the session of ``chat`` from another process."""
        _python(_DELETE, self.kind, self.where, pi_session_id_for(chat), self.cwd)

    def lines(self, chat: str) -> list[dict[str, Any]]:
        """The stored records of ``chat``'s session (header first)."""
        pi_id = pi_session_id_for(chat)
        if self.kind == "dir":
            path = SessionManager.find_by_id(self.cwd, pi_id, self.where)
            assert path is not None
            raw = path.read_bytes().splitlines()
        else:
            raw = list(open_store(self.where).read_lines(pi_id))
        return [jsonio.loads(line) for line in raw if line.strip()]


@pytest.fixture(params=["dir", "sqlite"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Where:
    return Where(request.param, tmp_path)


# ---------------------------------------------------------------------------
# a chat created by another writer after this object first read it


def test_a_chat_created_by_another_process_later_is_seen(where: Where) -> None:
    session = where.session("later")
    assert run(session.get_items()) == []  # read: no such chat yet
    where.other("later", "add", [_user("from the other process")])
    assert _contents(run(session.get_items())) == ["from the other process"]
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert where.other("later", "read") == []  # the clear is stored


def test_clear_of_a_chat_another_process_created_later_is_stored(where: Where) -> None:
    session = where.session("later-clear")
    assert run(session.get_items()) == []
    where.other("later-clear", "add", [_user("one"), _user("two")])
    run(session.clear_session())
    assert where.other("later-clear", "read") == []
    assert run(session.get_items()) == []


def test_entries_not_written_yet_continue_the_session_another_process_created(where: Where) -> None:
    """A new chat holding only a tool output (not written until a user or
    assistant message, as pi does) keeps it when another process creates
    the chat meanwhile: it follows that process's items."""
    session = where.session("later-pending")
    output = {"type": "function_call_output", "call_id": "c1", "output": "42"}
    run(session.add_items([output]))
    where.other("later-pending", "add", [_user("from the other process")])
    assert run(session.get_items()) == [_user("from the other process"), output]
    assert where.other("later-pending", "read") == [_user("from the other process"), output]


# ---------------------------------------------------------------------------
# a rewrite of the same length


def test_a_same_length_atomic_rewrite_is_read_again(tmp_path: Path) -> None:
    session = Where("dir", tmp_path).session("rewritten")
    run(session.add_items([_user("the password is hunter2"), {"role": "assistant", "content": "noted"}]))
    assert _contents(run(session.get_items()))[0] == "the password is hunter2"
    path = session.session_file
    assert path is not None
    size = path.stat().st_size
    _python(_SAME_LENGTH, str(path), "hunter2", "*******")
    assert path.stat().st_size == size
    assert _contents(run(session.get_items())) == ["the password is *******", "noted"]


SLACK_TOKEN = "xoxb-1234-5678-abcdefg"
"""A secret exactly as long as its mark, ``[REDACTED:slack-token]``: the
scrub's rewrite has the length of the original."""


@pytest.mark.parametrize("kind", ["dir", "sqlite"])
def test_a_scrub_rewrite_of_the_same_length_is_read_again(tmp_path: Path, kind: str) -> None:
    """A real ``pi-session scrub --mode rewrite`` process redacts a secret
    whose mark is as long as it: the open object serves the redacted text,
    never its old record."""
    place = Where(kind, tmp_path)
    session = place.session("scrubbed")
    run(session.add_items([_user(f"my token is {SLACK_TOKEN}"), {"role": "assistant", "content": "noted"}]))
    assert SLACK_TOKEN in _contents(run(session.get_items()))[0]
    pi_id = pi_session_id_for("scrubbed")
    env = {**_env(), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    if kind == "dir":
        path = session.session_file
        assert path is not None
        size = path.stat().st_size
        args = [str(path)]
    else:
        size = open_store(place.where).handle(pi_id).size()
        args = [pi_id, "--store", place.where]
    res = subprocess.run([str(EXE), "scrub", *args, "--mode", "rewrite"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    after = session.session_file.stat().st_size if kind == "dir" else open_store(place.where).handle(pi_id).size()  # type: ignore[union-attr]
    assert after == size  # the same length: only the file's identity tells
    assert _contents(run(session.get_items())) == ["my token is [REDACTED:slack-token]", "noted"]


# ---------------------------------------------------------------------------
# a session deleted by another process


def test_a_session_deleted_by_another_process_starts_again_whole(where: Where) -> None:
    session = where.session("deleted")
    run(session.add_items([_user("one"), {"role": "assistant", "content": "two"}]))
    where.delete("deleted")
    run(session.add_items([_user("three")]))
    records = where.lines("deleted")
    assert records[0]["type"] == "session" and records[0]["id"] == pi_session_id_for("deleted")
    assert [r["message"]["content"] for r in records[1:]] == ["three"]
    assert _contents(run(session.get_items())) == ["three"]
    # not wedged: a new object, in another process, opens and writes it
    assert _contents(where.other("deleted", "add", [_user("four")])) == ["three", "four"]
    assert _contents(run(session.get_items())) == ["three", "four"]


def test_a_deleted_session_reads_as_empty(where: Where) -> None:
    session = where.session("deleted-read")
    run(session.add_items([_user("one")]))
    where.delete("deleted-read")
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None


# ---------------------------------------------------------------------------
# a batch with a bad item


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"role": "user", "content": 5}, "content must be a string or a list of content parts, not int"),
        ({"role": "user", "content": ["loose text"]}, "content part 0 must be an object, not str"),
        ({"type": "function_call", "call_id": "c", "name": "t", "arguments": {"a": 1}}, "arguments must be a string, not dict"),
        ({"type": "function_call_output", "call_id": 7, "output": "x"}, "call_id must be a string, not int"),
        ({"role": "user", "content": "x", "extra": {1, 2}}, "JSON"),
        (["not", "a", "dict"], "must be dicts"),
    ],
)
def test_a_batch_with_a_bad_item_stores_nothing(where: Where, bad: Any, said: str) -> None:
    session = where.session("batch")
    run(session.add_items([_user("kept")]))
    before = where.lines("batch")
    with pytest.raises(InvalidItemError) as info:
        run(session.add_items([_user("ok"), {"role": "assistant", "content": "fine"}, bad]))
    err = info.value
    assert isinstance(err, ValueError) and err.index == 2
    assert str(err).startswith("session item 2: ") and said in str(err) and "\n" not in str(err)
    assert where.lines("batch") == before
    assert _contents(run(session.get_items())) == ["kept"]
    run(session.add_items([_user("after")]))  # the session goes on
    assert _contents(run(session.get_items())) == ["kept", "after"]


def test_a_first_batch_with_a_bad_item_creates_no_session(tmp_path: Path) -> None:
    place = Where("dir", tmp_path)
    session = place.session("never")
    with pytest.raises(InvalidItemError, match=r"session item 1: a user message's content must be"):
        run(session.add_items([_user("ok"), {"role": "user", "content": 5}]))
    assert not list(Path(place.where).glob("*.jsonl"))
    assert run(session.get_items()) == []
