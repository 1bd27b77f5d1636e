"""One error tree: every exception class the package defines for bad input
or state derives from :class:`pi_session.PiSessionError`, keeping its
builtin kind where it has one; the leaf-moved event is one class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pi_session
from pi_session import PiSessionError

# exceptions that are not errors of input or state: control flow inside one
# operation, never seen by a caller of the public API
NOT_ERRORS = {
    "pi_session.compaction.summary.CompactionCancelled",  # the user cancelled (Ctrl-C in a dialog)
    "pi_session.search.damage.IndexDamaged",  # caught inside search: the cache is rebuilt
    "pi_session.search.shards.WorkersUnavailable",  # caught inside search: shards written in-process
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(pi_session.__path__, "pi_session."):
        if ".browse" in info.name or info.name.endswith("shard_worker"):
            continue  # Textual app (imports a terminal UI); a worker's entry point
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and not issubclass(obj, Warning) and obj.__module__ == info.name and not name.startswith("_"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_error_of_the_package_derives_from_the_root() -> None:
    classes = _exception_classes()
    assert len(classes) >= 15, sorted(classes)  # the walk found the package's errors
    strays = sorted(name for name, cls in classes.items() if name not in NOT_ERRORS and not issubclass(cls, PiSessionError))
    assert strays == []


def test_builtin_kinds_are_kept() -> None:
    from pi_session.search.query import QueryError
    from pi_session.storage import AppendError
    from pi_session.stores import SessionExistsError, SessionNotFoundError

    assert issubclass(SessionExistsError, FileExistsError)
    assert issubclass(SessionNotFoundError, LookupError)
    assert issubclass(QueryError, ValueError)
    assert issubclass(AppendError, OSError)
    error = AppendError(pi_session.__path__[0], 2, OSError(28, "No space left on device"))  # type: ignore[arg-type]
    assert isinstance(error, PiSessionError) and error.errno == 28 and "after 2 line(s)" in str(error)


def test_the_leaf_moved_event_is_one_class() -> None:
    from pi_session.operations import LeafMoved
    from pi_session.manager.stale_leaf import FirstKeptOffPathError
    from pi_session.storage import LeafMovedError

    assert LeafMoved is LeafMovedError
    assert issubclass(FirstKeptOffPathError, LeafMovedError)
    planned = LeafMoved("s.jsonl", "aaaa", "bbbb", by_other_writer=True, what="branch summary")
    assert str(planned).startswith("s.jsonl: the leaf moved from aaaa to bbbb") and "branch summary" in str(planned)
    assert planned.by_other_writer is True and planned.count == 0
    appended = LeafMovedError("s.jsonl", "aaaa", None, 3)
    assert appended.by_other_writer is None and appended.count == 3 and "nothing was written" in str(appended)
