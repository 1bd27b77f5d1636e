"""One error tree: every exception class the package defines for bad input
or state derives from :class:`pi_session.PiSessionError`, keeping its
builtin kind where it has one; the leaf-moved event is one class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pi_session
from pi_session import PiSessionError

_TREE_LINE = re.compile(r"^(?P<indent> *)(?P<name>\w+) \((?P<module>pi_session[\w.]*)(?:; (?P<kinds>[\w, ]+))?\) - \S")


def _modules() -> list[ModuleType]:
    found = []
    for info in pkgutil.walk_packages(pi_session.__path__, "pi_session."):
        if ".browse" in info.name or info.name.endswith("shard_worker"):
            continue  # Textual app (imports a terminal UI); a worker's entry point
        found.append(importlib.import_module(info.name))
    return found


def _is_package_exception(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith("pi_session.")


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every public exception class (warnings too) the package defines, by
    dotted name."""
    found: dict[str, type[BaseException]] = {}
    for module in _modules():
        for name, obj in vars(module).items():
            if _is_package_exception(obj) and obj.__module__ == module.__name__ and not name.startswith("_"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _documented_tree() -> dict[str, tuple[str, str | None, list[str]]]:
    """The tree of :mod:`pi_session.errors`' docstring: dotted name ->
    (class name, dotted name of the entry it is indented under, builtin kinds)."""
    import pi_session.errors

    tree: dict[str, tuple[str, str | None, list[str]]] = {}
    stack: list[tuple[int, str]] = []
    for line in (pi_session.errors.__doc__ or "").splitlines():
        match = _TREE_LINE.match(line)
        if match is None:
            stack = [] if not line.strip() or not line.startswith(" ") else stack
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        dotted = f"{match['module']}.{match['name']}"
        kinds = [k.strip() for k in (match["kinds"] or "").split(",") if k.strip()]
        tree[dotted] = (match["name"], stack[-1][1] if stack else None, kinds)
        stack.append((indent, dotted))
    return tree


def test_every_error_of_the_package_derives_from_the_root() -> None:
    classes = _exception_classes()
    assert len(classes) >= 30, sorted(classes)  # the walk found the package's errors
    strays = sorted(name for name, cls in classes.items() if not issubclass(cls, (PiSessionError, Warning)))
    assert strays == []


def test_the_errors_module_documents_the_whole_tree() -> None:
    classes = _exception_classes()
    tree = _documented_tree()
    assert sorted(tree) == sorted(classes)  # every public exception listed once, nothing listed that is not one
    for dotted, (name, parent, kinds) in tree.items():
        cls = classes[dotted]
        assert cls.__name__ == name
        if parent is None:
            assert cls is PiSessionError or issubclass(cls, Warning), dotted
        else:
            assert cls.__bases__[0] is classes[parent], f"{dotted} is listed under {parent}"
        builtins_kinds = sorted(b.__name__ for b in cls.__bases__ if b.__module__ == "builtins" and b is not Exception)
        assert builtins_kinds == sorted(kinds), dotted


def test_no_exception_class_has_a_second_name() -> None:
    aliases = sorted(
        f"{module.__name__}.{name} is {obj.__module__}.{obj.__qualname__}"
        for module in _modules()
        for name, obj in vars(module).items()
        if _is_package_exception(obj) and not name.startswith("_") and name != obj.__name__
    )
    assert aliases == []


def test_compaction_cancelled_is_one_line_for_the_user() -> None:
    from pi_session.compaction import CompactionCancelled

    assert isinstance(CompactionCancelled(), PiSessionError)
    assert str(CompactionCancelled()) == "compaction cancelled"
    assert str(CompactionCancelled("the hook said no")) == "the hook said no"


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
    from pi_session import operations
    from pi_session.manager.stale_leaf import FirstKeptOffPathError
    from pi_session.storage import LeafMovedError

    assert operations.LeafMovedError is LeafMovedError  # re-exported, not a second class
    assert issubclass(FirstKeptOffPathError, LeafMovedError)
    planned = LeafMovedError("s.jsonl", "aaaa", "bbbb", by_other_writer=True, what="branch summary")
    assert str(planned).startswith("s.jsonl: the leaf moved from aaaa to bbbb") and "branch summary" in str(planned)
    assert planned.by_other_writer is True and planned.count == 0
    appended = LeafMovedError("s.jsonl", "aaaa", None, 3)
    assert appended.by_other_writer is None and appended.count == 3 and "nothing was written" in str(appended)
