"""The store protocol: backends opened by URL scheme from one table,
capabilities declared on :class:`~pi_session.stores.SessionStore` and
:class:`~pi_session.stores.SessionHandle` (``capabilities``: ``files_root``,
``path_of``, ``replace_lines``; tests/test_store_capabilities.py checks
each against every backend), the SQL store's write hooks and the
search index that subscribes to them (its rows in the write's transaction;
what a process without it wrote is caught up before the next query)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from storage_helpers import user_message_lines
from pi_session.search import index_for, search
from pi_session.storage import SessionFileError
from pi_session.stores import (
    BACKENDS,
    CapabilityError,
    MemoryHandle,
    SessionNotFoundError,
    StoreCapability,
    StoreError,
    open_store,
    register_backend,
)
from pi_session.stores.sql import SQLExecutor, WriteEvent
from pi_session.stores.sqlite import SQLiteStore

SRC = Path(__file__).resolve().parents[1] / "src" / "pi_session"


def _message(session_id: str, entry_id: str, parent: str, text: str) -> bytes:
    return orjson.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:02.000Z",
                         "message": {"role": "user", "content": text, "timestamp": 1767225602000}}) + b"\n"


# ----------------------------------------------------------------------
# the table of backends


def test_a_backend_registered_by_scheme_is_opened_by_open_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "demo_store_backend.py").write_text(
        "from pi_session.stores.sqlite import SQLiteStore\n"
        "def open_demo(url, **options):\n"
        "    return SQLiteStore(url.split('://', 1)[1], **options)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    register_backend("demo", "demo_store_backend", "open_demo", label="Demo")
    try:
        with open_store(f"demo://{tmp_path}/demo.db", busy_timeout=5.0) as store:
            assert isinstance(store, SQLiteStore) and store.busy_timeout == 5.0
            store.create(user_message_lines("0199d0e0-demo", "hello"))
            assert store.exists("0199d0e0-demo")
    finally:
        BACKENDS.pop("demo")
    with pytest.raises(StoreError, match="unknown store URL scheme 'demo'"):
        open_store("demo://x")


def test_a_backend_whose_module_is_missing_fails_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    register_backend("gone", "no_such_backend_module_of_pi_session", "open_gone", label="Gone", needs="the gone package")
    try:
        with pytest.raises(StoreError) as info:
            open_store("gone://user:secret@host/db")
    finally:
        BACKENDS.pop("gone")
    message = str(info.value)
    assert "\n" not in message and "Gone stores need the gone package" in message
    assert "secret" not in message and "gone://user:***@host/db" in message


# ----------------------------------------------------------------------
# capabilities on the protocol


@pytest.fixture(params=["files", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path):
    url = str(tmp_path / "sessions") if request.param == "files" else f"sqlite:///{tmp_path}/s.db"
    store = open_store(url)
    yield store
    store.close()


def test_files_root_and_path_of_say_whether_sessions_are_files(any_store, tmp_path: Path) -> None:
    sid = any_store.create(user_message_lines("0199d0e0-caps", "hello"))
    if any_store.url.startswith("sqlite:"):
        assert not any_store.can(StoreCapability.FILES)
        with pytest.raises(CapabilityError):
            any_store.path_of(sid)
        with pytest.raises(CapabilityError):
            any_store.files_root
        return
    assert any_store.files_root == tmp_path / "sessions"
    path = any_store.path_of(sid)
    assert path.parent.parent == tmp_path / "sessions" and path.read_bytes().startswith(b'{"type":"session"')
    with pytest.raises(SessionNotFoundError):
        any_store.path_of("0199d0e0-none")


def test_replace_lines_rewrites_a_session_in_every_store(any_store) -> None:
    sid = any_store.create(user_message_lines("0199d0e0-repl", "my token is hunter2", "bye"))
    old = list(any_store.read_lines(sid))
    new = [line.replace(b"hunter2", b"[REDACTED]") for line in old]
    any_store.replace_lines(sid, old, new)
    assert list(any_store.read_lines(sid)) == new
    # a session that changed since it was read is left as it is
    any_store.append(sid, [_message(sid, "late0001", "0199" + "0001", "appended meanwhile")])
    grown = list(any_store.read_lines(sid))
    with pytest.raises((SessionFileError, StoreError), match="changed while it was being rewritten"):
        any_store.replace_lines(sid, new, old)
    assert list(any_store.read_lines(sid)) == grown


def test_replace_lines_of_a_memory_handle() -> None:
    lines = user_message_lines("0199d0e0-mem", "a")
    handle = MemoryHandle(lines)
    new = [line.replace(b'"a"', b'"b"') for line in lines]
    handle.replace_lines(lines, new)
    assert handle.lines == new
    with pytest.raises(SessionFileError):
        handle.replace_lines(lines, new)


# ----------------------------------------------------------------------
# write hooks and the search index


def test_a_write_hook_runs_inside_the_writes_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    sid = store.create(user_message_lines("0199d0e0-hook", "hello"))
    seen: list[tuple[str, str, list[int], int]] = []

    def hook(tx: SQLExecutor, event: WriteEvent) -> None:
        (count,) = tx.execute("SELECT count(*) FROM pi_records WHERE session_id = ?", (event.session_id,)).fetchone()
        seen.append((event.kind, event.session_id, [seq for seq, _record in event.records], count))
        if any(record and record.get("id") == "boom0001" for _seq, record in event.records):
            raise RuntimeError("hook refused")

    store.add_write_hook(hook)
    store.add_write_hook(hook)  # once
    store.append(sid, [_message(sid, "next0001", "0199" + "0000", "more")])
    assert seen == [("append", sid, [2], 3)]  # the hook sees the rows the append wrote
    before = list(store.read_lines(sid))
    with pytest.raises(RuntimeError, match="hook refused"):
        store.append(sid, [_message(sid, "boom0001", "next0001", "never stored")])
    assert list(store.read_lines(sid)) == before  # rolled back with the append
    store.delete(sid)
    assert seen[-1][:2] == ("delete", sid)
    store.remove_write_hook(hook)
    store.create(user_message_lines("0199d0e0-quiet", "x"))
    assert seen[-1][:2] == ("delete", sid)
    store.close()


_WRITER = """
import sys, orjson
from pi_session.stores import open_store
url, action, sid, text = sys.argv[1:5]
store = open_store(url)
if action == "append":
    line = {"type": "message", "id": "proc0001", "parentId": sid[:4] + "0000", "timestamp": "2026-01-01T00:00:03.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1767225603000}}
    store.append(sid, [orjson.dumps(line) + b"\\n"])
elif action == "delete":
    store.delete(sid)
store.close()
assert not any(name.startswith("pi_session.search") for name in sys.modules), "the writer imported search"
"""


def _write_elsewhere(url: str, action: str, sid: str, text: str = "") -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", _WRITER, url, action, sid, text], check=True, env=env, timeout=120)


def test_search_finds_what_a_process_without_the_index_wrote(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with open_store(url) as store:
        index_for(store).close()
        kept = store.create(user_message_lines("0199d0e0-kept", "the aardvark speaks"))
        gone = store.create(user_message_lines("0199d0e0-gone", "the quokkafish swims"))
        assert {h.session_id for h in search(store, "aardvark").hits} == {kept}
        assert {h.session_id for h in search(store, "quokkafish").hits} == {gone}
        _write_elsewhere(url, "append", kept, "a zebracorn appears")
        _write_elsewhere(url, "delete", gone)
        assert {(h.session_id, h.entry_id) for h in search(store, "zebracorn").hits} == {(kept, "proc0001")}
        assert search(store, "quokkafish").hits == []
        assert {h.session_id for h in search(store, "aardvark").hits} == {kept}


def test_a_read_only_store_is_searched_as_indexed_with_a_warning(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    with open_store(url) as store:
        index_for(store).close()
        kept = store.create(user_message_lines("0199d0e0-kept", "the aardvark speaks"))
    _write_elsewhere(url, "append", kept, "a zebracorn appears")  # not indexed yet
    db.chmod(0o444)
    try:
        with open_store(url) as store:
            assert store.read_only
            result = search(store, "aardvark")
            assert {h.session_id for h in result.hits} == {kept}
            assert len(result.warnings) == 1 and "hits may miss them" in result.warnings[0]
            assert "\n" not in result.warnings[0]
    finally:
        db.chmod(0o644)


# ----------------------------------------------------------------------
# the layering the protocol allows


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a module, in functions too,
    except those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), str(path))
    package = "pi_session." + ".".join(path.relative_to(SRC).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_stores_never_import_search() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line}: {module}"
        for path in sorted((SRC / "stores").glob("*.py"))
        for line, module in _imports(path)
        if module == "pi_session.search" or module.startswith("pi_session.search.")
    ]
    assert offenders == []


def test_stores_name_nothing_of_search_even_for_type_checking() -> None:
    """The stores know no search index type at all: ``index_for`` in
    search picks the index from what a store declares."""
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted((SRC / "stores").glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.match(r"\s*(from|import)\s+(\.\.search|pi_session\.search)\b", line)
    ]
    assert offenders == []


def _lines_matching(pattern: str) -> list[str]:
    return [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted(SRC.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(pattern, line)
    ]


def test_code_asks_the_protocol_not_the_file_store_class() -> None:
    """Whether a store keeps files (or blobs, marks, SQL, search) is what it
    declares (:attr:`SessionStore.capabilities`), not its class nor a
    method answering None: no ``isinstance`` of a backend class, no
    ``files_root is None``, no ``holds_files``, no capability found by
    ``getattr``/``hasattr`` on a store."""
    assert _lines_matching(r"isinstance\([^)]*(FileStore|SQLStore|SQLiteStore|PostgresStore)\b") == []
    assert _lines_matching(r"files_root\)? is (not )?None|files_root else|files_root\)? or\b") == []
    assert _lines_matching(r"holds_files|(getattr|hasattr)\((self\.)?store\b") == []
