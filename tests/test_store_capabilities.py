"""The capabilities every store declares (:class:`pi_session.stores.StoreCapability`),
checked against every backend: each declared capability works, and a
method of one the store does not declare raises ``CapabilityError`` (one
line naming the store and the capability) instead of answering None."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from storage_helpers import user_message_lines
from pi_session.search import index_for, search
from pi_session.stores import CapabilityError, MemoryHandle, SessionHandle, SessionStore, StoreCapability, StoreError, open_store

CWD = "/work/caps"


def _lines(session_id: str, *texts: str) -> list[bytes]:
    return user_message_lines(session_id, *texts, cwd=CWD)


def _more(session_id: str, text: str) -> bytes:
    return orjson.dumps({"type": "message", "id": "more0001", "parentId": f"{session_id[:4]}0000",
                         "timestamp": "2026-01-01T00:00:02.000Z",
                         "message": {"role": "user", "content": text, "timestamp": 1767225602000}}) + b"\n"


@pytest.fixture
def store(store_url: str) -> Iterator[SessionStore]:
    with open_store(store_url) as opened:
        yield opened


# ----------------------------------------------------------------------
# what each declared capability promises


def _files_work(store: SessionStore, sid: str) -> None:
    path = store.path_of(sid)
    assert path.is_file() and path.read_bytes() == b"".join(store.read_lines(sid))
    assert path.parent == store.session_dir(CWD) and path.is_relative_to(store.files_root)
    assert store.locator(sid) == str(path)


def _blobs_work(store: SessionStore, sid: str) -> None:
    data = b"a payload slim moved out"
    digest = hashlib.sha256(data).hexdigest()
    store.put_blobs({digest: data})
    assert store.get_blob(digest) == data
    assert store.drop_blobs([digest]) == [digest]  # no session names it
    assert store.get_blob(digest) is None


def _marks_work(store: SessionStore, sid: str) -> None:
    before = store.session_marks([sid, "0199d0e0-none"])
    assert set(before) == {sid}
    store.append(sid, [_more(sid, "a later line")])
    assert store.session_marks([sid])[sid] != before[sid]


def _sql_works(store: SessionStore, sid: str) -> None:
    seen: list[str] = []
    hook = lambda tx, event: seen.append(event.kind)  # noqa: E731
    store.add_write_hook(hook)  # type: ignore[attr-defined]
    try:
        store.append(sid, [_more(sid, "hooked")])
    finally:
        store.remove_write_hook(hook)  # type: ignore[attr-defined]
    assert seen == ["append"]
    with store.transaction() as tx:  # type: ignore[attr-defined]
        (count,) = tx.execute("SELECT count(*) FROM pi_records WHERE session_id = ?", (sid,)).fetchone()
    assert count == 3


def _search_works(store: SessionStore, sid: str) -> None:
    index_for(store).close()
    assert {h.session_id for h in search(store, "aardvark").hits} == {sid}


WORKS = {
    StoreCapability.FILES: _files_work,
    StoreCapability.BLOBS: _blobs_work,
    StoreCapability.MARKS: _marks_work,
    StoreCapability.SQL: _sql_works,
    StoreCapability.SEARCH: _search_works,
}

# what a store that does not declare the capability raises on (SQL names
# methods only SQL stores have: nothing to call on another store)
REFUSED = {
    StoreCapability.FILES: [
        lambda s, sid: s.files_root, lambda s, sid: s.path_of(sid), lambda s, sid: s.session_dir(CWD),
    ],
    StoreCapability.BLOBS: [
        lambda s, sid: s.put_blobs({"0" * 64: b"x"}), lambda s, sid: s.get_blob("0" * 64), lambda s, sid: s.drop_blobs(["0" * 64]),
    ],
    StoreCapability.MARKS: [lambda s, sid: s.session_marks([sid])],
    StoreCapability.SEARCH: [lambda s, sid: index_for(s)],
}


def test_every_capability_is_checked_here() -> None:
    assert set(WORKS) == {c for c in StoreCapability if c}


@pytest.mark.parametrize("capability", [c for c in StoreCapability if c], ids=lambda c: c.name.lower())
def test_a_declared_capability_works_and_an_undeclared_one_is_refused(store: SessionStore, capability: StoreCapability) -> None:
    sid = store.create(_lines("0199d0e0-caps", "the aardvark speaks"))
    if store.can(capability):
        WORKS[capability](store, sid)
        return
    for call in REFUSED.get(capability, []):
        with pytest.raises(CapabilityError) as info:
            call(store, sid)
        assert info.value.capability == capability and isinstance(info.value, StoreError)
        message = str(info.value)
        assert "\n" not in message and capability.name in message and message.startswith(store.url)


def test_every_backend_declares_what_it_is(store: SessionStore) -> None:
    """Files or a database: a store of files keeps its blobs as files, a
    database in its own table; every backend marks and searches."""
    caps = store.capabilities
    assert StoreCapability.MARKS in caps and StoreCapability.SEARCH in caps
    assert (StoreCapability.FILES in caps) != (StoreCapability.BLOBS in caps)
    assert (StoreCapability.FILES in caps) != (StoreCapability.SQL in caps)


class _BareStore(SessionStore):
    """A store of one in-memory session that declares only what it is told."""

    def __init__(self, capabilities: StoreCapability) -> None:
        self.url = "bare://user:secret@host/db"
        self.capabilities = capabilities
        self.session = MemoryHandle(_lines("0199d0e0-bare", "hi"))

    def handle(self, session_id: str) -> SessionHandle:
        return self.session

    def new_handle(self, header: dict[str, Any], *, file_name: str | None = None) -> SessionHandle:
        raise StoreError("read only")

    def delete(self, session_id: str) -> bool:
        return False

    def exists(self, session_id: str) -> bool:
        return session_id == "0199d0e0-bare"

    def read_lines(self, session_id: str) -> Iterator[bytes]:
        return iter(self.session.lines)

    def list(self, *, cwd: str | None = None, with_text: bool = True, on_progress: Any = None) -> list[dict[str, Any]]:
        return []

    def find(self, prefix: str, *, limit: int = 20) -> list[str]:
        return ["0199d0e0-bare"] if "0199d0e0-bare".startswith(prefix) else []

    def locator(self, session_id: str) -> str:
        return f"{self.url}#{session_id}"


def test_a_store_declaring_nothing_refuses_every_capability_in_one_line() -> None:
    bare = _BareStore(StoreCapability.NONE)
    for capability, calls in REFUSED.items():
        for call in calls:
            with pytest.raises(CapabilityError, match=capability.name) as info:
                call(bare, "0199d0e0-bare")
            assert "\n" not in str(info.value) and "secret" not in str(info.value)


def test_search_declared_without_files_or_sql_is_refused_not_guessed() -> None:
    with pytest.raises(CapabilityError, match="FILES|SQL"):
        index_for(_BareStore(StoreCapability.SEARCH))


def test_the_stores_capabilities_do_not_depend_on_what_was_imported(tmp_path: Path) -> None:
    """``index_for`` picks the index from what the store declares; nothing
    registers anything when ``pi_session.search`` is imported."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pi_session.stores import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "sid = store.create([b'{\"type\":\"session\",\"version\":3,\"id\":\"0199d0e0-late\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\\n'])\n"
        "from pi_session.search.index import index_for\n"
        "index_for(store).close()\n"
        "assert 'register_search_index' not in dir(__import__('pi_session.stores.base', fromlist=['x']))\n"
    )
    subprocess.run([sys.executable, "-c", code, f"sqlite:///{tmp_path}/s.db"], check=True, timeout=120)


def test_secrets_are_looked_for_in_a_database_store_keeping_no_blobs() -> None:
    """A store that is not files and keeps no blobs is scanned like any
    database (no blob is read from it) instead of failing on ``get_blob``."""
    from pi_session.operations.scrubbing import find_in_session

    bare = _BareStore(StoreCapability.NONE)
    note = "[pi-session slim: tool output, 80.0 KB, blob sha256:" + "0" * 64 + "; pi-session restore puts it back]"
    bare.session = MemoryHandle(_lines("0199d0e0-bare", "my key is sk-ant-api03-" + "A" * 93 + "AA", note))
    hits = find_in_session("0199d0e0-bare", store=bare)
    assert hits and all(h.session == "bare://user:secret@host/db#0199d0e0-bare" for h in hits)
