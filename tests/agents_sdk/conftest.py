"""The adaptation layer: the SDK's session tests (vendored unchanged in
``tests/``) construct a :class:`PiSession` wherever they construct one of
the SDK's sessions.

Only construction changes. ``SQLiteSession``, ``AsyncSQLiteSession``,
``AdvancedSQLiteSession``, ``SQLAlchemySession`` (and its ``from_url``) and
the tests' in-memory ``SimpleListSession`` are replaced, before any test
module imports them, by subclasses of ``PiSession`` whose ``__init__``
takes the replaced class's arguments and opens
``PiSession(session_id, session_settings=..., <location>)`` on the store
chosen by ``--pi-store``:

- ``files``: plain session files, ``session_dir=<dir>``;
- ``filestore``: a file store, ``store=<dir>``;
- ``sqlite``: ``store="sqlite:///<file>"``;
- ``postgres``: ``store=<a new database on $PI_SESSION_TEST_POSTGRES>``
  (or a private cluster, tests/postgres_cluster.py).

Where the replaced session keeps its data (``db_path``, an engine, a URL)
chooses the location: the same database path (engine, URL) in one test is
the same location, so two sessions on it share it as they do in SQLite;
``":memory:"`` (and an in-memory URL) is a new location per session, as an
in-memory SQLite database is. Every test gets fresh locations. The classes
keep the backend's ``close()`` (closing the store), which the tests call to
release it. Arguments that configure a backend's internals (table names,
``create_tables``, a logger, ``ensure_ascii``) are accepted and ignored.

Tests that check a backend's internals are skipped with their reason
(``NOT_APPLICABLE``; README.md lists them). In the Runner modules, only the
tests that use a session run (the others do not involve one).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/postgres_cluster.py

STORES = ("files", "filestore", "sqlite", "postgres")

from pi_session.integrations.openai_agents import PiSession  # noqa: E402
from pi_session.stores import SessionStore  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--pi-store",
        choices=STORES,
        default=os.environ.get("PI_SDK_STORE", "files"),
        help="where the PiSession under test lives (default: files; env PI_SDK_STORE)",
    )


# ---------------------------------------------------------------------------
# locations

class _Locations:
    """Where this test's sessions live: one location per key (a database
    path, an engine, a URL), fresh for every test."""

    def __init__(self) -> None:
        self.store = "files"
        self.base: Path | None = None
        self.fallback: Path | None = None
        self.by_key: dict[Any, dict[str, Any]] = {}
        self.sessions: list[PiSession] = []
        self.databases: list[str] = []
        self.server: Any = None
        self.counter = itertools.count()
        self.lock = threading.Lock()

    def kwargs(self, key: Any) -> dict[str, Any]:
        with self.lock:
            if key is None or key not in self.by_key:
                where = self._new()
                if key is None:
                    return where
                self.by_key[key] = where
            return self.by_key[key]

    def _new(self) -> dict[str, Any]:
        base = self.base or self.fallback
        assert base is not None
        n = next(self.counter)
        if self.store == "files":
            path = base / f"sessions-{n}"
            path.mkdir(parents=True)
            return {"session_dir": str(path)}
        if self.store == "filestore":
            path = base / f"store-{n}"
            path.mkdir(parents=True)
            return {"store": str(path)}
        if self.store == "sqlite":
            return {"store": f"sqlite:///{base / f'sessions-{n}.db'}"}
        url = self.server.create_database()
        self.databases.append(url)
        return {"store": url}

    def finish(self) -> None:
        for session in self.sessions:
            store = getattr(session, "store", None)
            if isinstance(store, SessionStore):
                store.close()
        self.sessions.clear()
        self.by_key.clear()
        for url in self.databases:
            self.server.drop_database(url)
        self.databases.clear()


LOCATIONS = _Locations()


def _path_key(db_path: Any) -> Any:
    text = os.fspath(db_path)
    if text == ":memory:" or text.startswith("file::memory:"):
        return None
    return ("path", os.path.abspath(text))


def _open(self: PiSession, session_id: str, key: Any, session_settings: Any) -> None:
    where = LOCATIONS.kwargs(key)
    PiSession.__init__(self, session_id, cwd=str(LOCATIONS.base or LOCATIONS.fallback), session_settings=session_settings, **where)
    LOCATIONS.sessions.append(self)


def _close_store(self: PiSession) -> None:
    store = getattr(self, "store", None)
    if isinstance(store, SessionStore):
        store.close()


# ---------------------------------------------------------------------------
# the replaced classes (each takes the replaced class's arguments)

class SQLiteSession(PiSession):
    def __init__(self, session_id: str, db_path: Any = ":memory:", sessions_table: str = "agent_sessions",
                 messages_table: str = "agent_messages", session_settings: Any = None) -> None:
        _open(self, session_id, _path_key(db_path), session_settings)

    def close(self) -> None:
        _close_store(self)


class AsyncSQLiteSession(PiSession):
    def __init__(self, session_id: str, db_path: Any = ":memory:", sessions_table: str = "agent_sessions",
                 messages_table: str = "agent_messages", session_settings: Any = None) -> None:
        _open(self, session_id, _path_key(db_path), session_settings)

    async def close(self) -> None:
        _close_store(self)


class AdvancedSQLiteSession(PiSession):
    def __init__(self, *, session_id: str, db_path: Any = ":memory:", create_tables: bool = False,
                 logger: Any = None, session_settings: Any = None, **kwargs: Any) -> None:
        _open(self, session_id, _path_key(db_path), session_settings)

    def close(self) -> None:
        _close_store(self)


class SQLAlchemySession(PiSession):
    def __init__(self, session_id: str, *, engine: Any, create_tables: bool = False,
                 sessions_table: str = "agent_sessions", messages_table: str = "agent_messages",
                 session_settings: Any = None, ensure_ascii: bool = True) -> None:
        url = str(getattr(engine, "url", ""))
        key = None if ":memory:" in url or url.endswith("://") else ("engine", id(engine))
        _engines.append(engine)  # the key's id stays this engine's for the test
        _open(self, session_id, key, session_settings)

    @classmethod
    def from_url(cls, session_id: str, *, url: str, engine_kwargs: Any = None,
                 session_settings: Any = None, **kwargs: Any) -> SQLAlchemySession:
        self = cls.__new__(cls)
        key = None if ":memory:" in url or url.endswith("://") else ("url", url)
        _open(self, session_id, key, session_settings)
        return self


_engines: list[Any] = []


class SimpleListSession(PiSession):
    """The tests' in-memory session (tests/utils/simple_session.py), with
    its ``history`` added as the first items."""

    session_settings = None

    def __init__(self, session_id: str = "test", history: list[Any] | None = None) -> None:
        _open(self, session_id, None, None)
        if history:
            done: list[BaseException] = []

            def add() -> None:
                try:
                    # as SimpleListSession stores it: not through a subclass's add_items
                    asyncio.run(PiSession.add_items(self, list(history)))
                except BaseException as exc:  # pragma: no cover - reported below
                    done.append(exc)

            thread = threading.Thread(target=add)  # the constructor may run inside an event loop
            thread.start()
            thread.join()
            if done:
                raise done[0]


REPLACED = {
    "agents": ["SQLiteSession", "AdvancedSQLiteSession"],
    "agents.memory": ["SQLiteSession"],
    "agents.memory.sqlite_session": ["SQLiteSession"],
    "agents.extensions.memory": ["AsyncSQLiteSession", "AdvancedSQLiteSession", "SQLAlchemySession"],
    "agents.extensions.memory.async_sqlite_session": ["AsyncSQLiteSession"],
    "agents.extensions.memory.advanced_sqlite_session": ["AdvancedSQLiteSession"],
    "agents.extensions.memory.sqlalchemy_session": ["SQLAlchemySession"],
    "tests.utils.simple_session": ["SimpleListSession"],
}


def _replace_classes() -> None:
    import importlib

    ours = globals()
    for module_name, names in REPLACED.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an optional extra (aiosqlite, sqlalchemy) is missing
            continue
        for name in names:
            if name in getattr(module, "__all__", ()) or hasattr(module, name) or module_name.startswith("agents.extensions.memory") and module_name.count(".") == 2:
                setattr(module, name, ours[name])


_replace_classes()


# ---------------------------------------------------------------------------
# per-test locations

@pytest.fixture(scope="session")
def _pi_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    LOCATIONS.store = request.config.getoption("--pi-store")
    LOCATIONS.fallback = tmp_path_factory.mktemp("pi-module-level")
    if LOCATIONS.store != "postgres":
        yield None
        return
    import postgres_cluster

    try:
        server = postgres_cluster.start()
    except postgres_cluster.Unavailable as exc:
        if postgres_cluster.required():
            pytest.fail(f"PostgreSQL required ({postgres_cluster.ENV_REQUIRE}=1) but unavailable: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    LOCATIONS.server = server
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _pi_locations(_pi_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    LOCATIONS.base = tmp_path_factory.mktemp("pi")
    yield
    LOCATIONS.finish()
    LOCATIONS.base = None
    _engines.clear()


# ---------------------------------------------------------------------------
# what runs

RUNNER_MODULES = (
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_hitl_session_scenario.py",
    "tests/test_run_state_pending_input.py",
    "tests/test_max_turns.py",
)

# Why a test does not apply to PiSession (not_applicable.txt: "<code> <test id>",
# the id without parameters for all of them, with them for one).
REASONS = {
    "A": "AdvancedSQLiteSession's own API beyond the session protocol (conversation turns, branches, usage statistics)",
    "B": "checks the SQL backend's internals (its tables, connections, locks, transactions, private methods, constructor arguments)",
    "C": "checks the SQLite session's close() lifecycle (a closed session refuses calls); PiSession holds no connection",
    "D": "inspects SimpleListSession's in-memory list (saved_items, _items), the test double's internals",
    "F": "relies on the SDK's SQL sessions' private compaction hooks (_get_compaction_snapshot, _atomic_replace_items, "
    "_read_compaction_items: suffix snapshots, TTL-expired rows), which OpenAIResponsesCompactionSession uses only where "
    "a backend has them; other sessions take its generic path",
    "E": "runs sessions in child processes (multiprocessing), which construct the SDK's own class: the constructor cannot be replaced there",
}


def _not_applicable() -> dict[str, str]:
    table = {}
    for line in (HERE / "not_applicable.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            code, test_id = line.split(" ", 1)
            table[test_id.strip()] = REASONS[code]
    return table


# test id (without parameters) -> why it does not apply to PiSession
NOT_APPLICABLE: dict[str, str] = _not_applicable()


def _uses_session(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    if function is None:
        return True
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return True
    return re.search(r"[Ss]ession", source) is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in RUNNER_MODULES and not _uses_session(item):
            drop.append(item)
            continue
        keep.append(item)
        base_id = item.nodeid.split("[", 1)[0]
        reason = NOT_APPLICABLE.get(item.nodeid) or NOT_APPLICABLE.get(base_id)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"not applicable: {reason}"))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
