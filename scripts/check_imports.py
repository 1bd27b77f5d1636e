#!/usr/bin/env python3
"""Check the layout of the ``pi_session`` package: import cycles, private imports, sizes.

Run from anywhere (standard library only)::

    python3 scripts/check_imports.py            # src/pi_session and tests/ of this checkout
    python3 scripts/check_imports.py --strict-size
    python3 scripts/check_imports.py --src path/to/pkg --tests path/to/tests

What it reads
    Every ``*.py`` file under ``--src`` (a package directory; its name is the
    package name). A module ``pkg/a/b.py`` is ``pkg.a.b``; ``pkg/a/__init__.py``
    is ``pkg.a``.

What counts as an import (an edge ``importer -> imported`` of the graph)
    * ``import pkg.a.b`` and ``from pkg.a import b`` at module level *and*
      inside functions, methods and class bodies (an import inside a function
      still has to be importable without a circle when it runs);
    * not an import under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``):
      those never run (their ``else:`` branch does count);
    * relative imports are resolved against the importing module;
    * ``from pkg.a import name``: when ``pkg/a/name.py`` (or ``pkg/a/name/``)
      exists the edge goes to that submodule, otherwise to ``pkg.a``;
    * importing a package means its ``__init__``; the parent packages that
      Python runs first are not edges (every module would be in a circle with
      the top-level ``__init__`` that re-exports it).

What fails (exit status 1, one line per problem, ``file:line: message``)
    (a) import cycles: each strongly connected component of more than one
        module (or a module importing itself), with one example cycle whose
        every step names the file and line of the import;
    (b) private imports: ``from .x import _y`` and attribute access ``x._y``
        on an imported module, where ``_y`` is an underscore (not dunder) name
        of *another* module, and importing a private module ``pkg._m`` from
        outside ``pkg``. At most ``MAX_ALLOWED`` of them may be listed in
        ``ALLOWED_PRIVATE_IMPORTS`` below, each with a reason; any other one,
        and a list longer than ``MAX_ALLOWED``, fails;
    (c) with ``--tests DIR`` (default: ``tests/`` next to ``src/``): a test file
        that imports or reaches a private name of the package (the same rules,
        plus ``monkeypatch.setattr(module, "_name", ...)`` and string targets
        such as ``mock.patch("pkg.mod._name")``): tests go through public seams.

Warnings (exit status 0 unless ``--strict-size``)
    modules over ``--max-lines`` lines (600).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_ALLOWED = 10
"""The most cross-module private imports the allow-list may hold."""

# (importer module, imported module, private name, reason). Matched by
# module and name, not by line, so edits elsewhere do not invalidate them.
ALLOWED_PRIVATE_IMPORTS: tuple[tuple[str, str, str, str], ...] = ()

DEFAULT_MAX_LINES = 600


@dataclass(frozen=True)
class Import:
    """One import statement's effect: ``importer`` imports module ``target``.

    ``names`` are the names taken from ``target`` (``from target import a, b``),
    empty for ``import target``; ``line`` is 1-based.
    """

    importer: str
    target: str
    line: int
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Problem:
    """One line of the report: ``path:line: message``."""

    path: str
    line: int
    message: str
    fatal: bool = True

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{self.path}:{self.line}: {kind}{self.message}"


@dataclass
class Module:
    """A module of the checked package: its dotted name, file, parsed tree."""

    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int
    imports: list[Import] = field(default_factory=list)


def is_private(name: str) -> bool:
    """True for ``_name`` and ``__name`` (mangled), False for dunders ``__x__``."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_module_owner(module: str) -> str | None:
    """The package a private module is private to (``pkg.a._m`` -> ``pkg.a``), else None.

    The first private component decides: ``pkg._a.b`` is private to ``pkg``.
    """
    parts = module.split(".")
    for index, part in enumerate(parts):
        if index and is_private(part):
            return ".".join(parts[:index])
    return None


def within(module: str, package: str) -> bool:
    """True when ``module`` is ``package`` or one of its submodules."""
    return module == package or module.startswith(package + ".")


def discover(src: Path) -> dict[str, Module]:
    """Parse every ``*.py`` under the package directory ``src`` into ``Module`` objects.

    Raises ``SyntaxError`` for a file Python cannot parse.
    """
    package = src.name
    modules: dict[str, Module] = {}
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(src).with_suffix("")
        parts = [package, *relative.parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        modules[name] = Module(name, path, is_package, tree, len(text.splitlines()))
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


def runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` that can run: skips the bodies of ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(reversed(node.orelse))
            stack.append(node.test)
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def resolve_from(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <node.module> import ...`` inside ``module``."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    if node.module:
        base = [*base, *node.module.split(".")]
    return ".".join(base)


class Scanner:
    """Finds the imports and private accesses of one file against a set of known modules.

    ``known`` is the set of module names of the checked package; imports of
    anything else (the standard library, third parties) are ignored.
    """

    def __init__(self, known: set[str], importer: str, is_package: bool) -> None:
        self.known = known
        self.importer = importer
        self.is_package = is_package
        self.imports: list[Import] = []
        # local name -> module it is bound to (for ``x._y`` access)
        self.bound: dict[str, str] = {}
        self.private: list[tuple[int, str, str]] = []  # (line, module, name)

    def _owner(self, name: str) -> str | None:
        """``name`` if it is a known module, else None."""
        return name if name in self.known else None

    def _note_private_module(self, line: int, target: str) -> None:
        owner = private_module_owner(target)
        if owner is not None and not within(self.importer, owner):
            parent, _, leaf = target.rpartition(".")
            self.private.append((line, parent, leaf))

    def visit_import(self, node: ast.Import) -> None:
        for alias in node.names:
            name = alias.name
            # the longest known prefix is the module the statement runs
            parts = name.split(".")
            target = None
            for end in range(len(parts), 0, -1):
                candidate = ".".join(parts[:end])
                if candidate in self.known:
                    target = candidate
                    break
            if target is None:
                continue
            self.imports.append(Import(self.importer, target, node.lineno))
            self._note_private_module(node.lineno, target)
            if alias.asname:
                self.bound[alias.asname] = target
            else:
                self.bound[parts[0]] = parts[0]

    def visit_import_from(self, module: Module | None, node: ast.ImportFrom) -> None:
        if module is None:
            base = node.module or ""
        else:
            base = resolve_from(module, node)
        if base not in self.known:
            return
        plain: list[str] = []
        for alias in node.names:
            if alias.name == "*":
                plain.append("*")
                continue
            sub = f"{base}.{alias.name}"
            local = alias.asname or alias.name
            if sub in self.known:
                self.imports.append(Import(self.importer, sub, node.lineno))
                self._note_private_module(node.lineno, sub)
                self.bound[local] = sub
            else:
                plain.append(alias.name)
                if is_private(alias.name) and base != self.importer:
                    self.private.append((node.lineno, base, alias.name))
        if plain:
            self.imports.append(Import(self.importer, base, node.lineno, tuple(plain)))
            self._note_private_module(node.lineno, base)

    def dotted(self, node: ast.expr) -> list[str] | None:
        """``a.b.c`` as ``["a", "b", "c"]`` when it starts at a bound name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.bound:
            parts.append(node.id)
            return parts[::-1]
        return None

    def module_of(self, parts: list[str]) -> tuple[str, list[str]] | None:
        """Split ``parts`` into (the longest known module it names, the rest)."""
        root = self.bound[parts[0]]
        best: tuple[str, list[str]] | None = None
        current = root
        if current in self.known:
            best = (current, parts[1:])
        for index in range(1, len(parts)):
            current = f"{current}.{parts[index]}"
            if current in self.known:
                best = (current, parts[index + 1 :])
        return best

    def visit_attribute(self, node: ast.Attribute) -> None:
        parts = self.dotted(node)
        if parts is None or len(parts) < 2:
            return
        found = self.module_of(parts)
        if found is None:
            return
        module, rest = found
        if rest and is_private(rest[0]) and module != self.importer:
            self.private.append((node.lineno, module, rest[0]))

    def visit_call(self, node: ast.Call) -> None:
        """``setattr(mod, "_x", ...)``-style calls and ``patch("pkg.mod._x")`` strings."""
        func = node.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname not in {"setattr", "delattr", "getattr", "patch", "object"}:
            return
        args = node.args
        if (
            len(args) >= 2
            and isinstance(args[1], ast.Constant)
            and isinstance(args[1].value, str)
            and is_private(args[1].value)
        ):
            parts = self.dotted(args[0]) if isinstance(args[0], ast.Attribute) else None
            if isinstance(args[0], ast.Name) and args[0].id in self.bound:
                parts = [args[0].id]
            if parts:
                found = self.module_of(parts)
                if found and not found[1]:
                    self.private.append((node.lineno, found[0], args[1].value))
                    return
        if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            self.check_string_target(node.lineno, args[0].value)

    def check_string_target(self, line: int, text: str) -> None:
        """A dotted string ``pkg.mod._name`` (``monkeypatch.setattr``/``mock.patch`` target)."""
        parts = text.split(".")
        if len(parts) < 2:
            return
        best: tuple[str, list[str]] | None = None
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            if candidate in self.known:
                best = (candidate, parts[end:])
        if best and best[1] and is_private(best[1][0]) and best[0] != self.importer:
            self.private.append((line, best[0], best[1][0]))

    def scan(self, tree: ast.AST, module: Module | None) -> None:
        nodes = list(runtime_nodes(tree))
        # imports first, so that attribute access after a function-level import
        # (or before a module-level one, in a function) resolves either way
        for node in nodes:
            if isinstance(node, ast.Import):
                self.visit_import(node)
            elif isinstance(node, ast.ImportFrom):
                self.visit_import_from(module, node)
        for node in nodes:
            if isinstance(node, ast.Attribute):
                self.visit_attribute(node)
            elif isinstance(node, ast.Call):
                self.visit_call(node)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(sorted(component))
    return result


def example_cycle(graph: dict[str, set[str]], component: Sequence[str]) -> list[str]:
    """A shortest cycle through the first module of ``component``, staying inside it."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*path[::-1], start]
                if child not in seen:
                    seen.add(child)
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start, start]


@dataclass
class Report:
    """The checker's findings; ``failed`` when any problem is fatal."""

    problems: list[Problem] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(problem.fatal for problem in self.problems)


def _display(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return str(path)


def check(
    src: Path,
    *,
    tests: Path | None = None,
    allowed: Iterable[tuple[str, str, str, str]] = ALLOWED_PRIVATE_IMPORTS,
    max_lines: int = DEFAULT_MAX_LINES,
    strict_size: bool = False,
    display_base: Path | None = None,
) -> Report:
    """Check the package directory ``src`` (and test files under ``tests``).

    ``allowed`` holds (importer, imported module, name, reason) entries; at most
    ``MAX_ALLOWED``. Paths in the report are relative to ``display_base`` when
    given. Returns a ``Report``; raises ``SyntaxError`` on an unparsable file.
    """
    report = Report()
    modules = discover(src)
    known = set(modules)
    allowed = list(allowed)
    allowed_keys = {(a, b, c) for a, b, c, _ in allowed}
    used_allowed: set[tuple[str, str, str]] = set()
    here = Path(__file__)
    if len(allowed) > MAX_ALLOWED:
        report.problems.append(
            Problem(
                _display(here, display_base),
                1,
                f"allow-list of private imports has {len(allowed)} entries (at most {MAX_ALLOWED})",
            )
        )

    graph: dict[str, set[str]] = {name: set() for name in modules}
    where: dict[tuple[str, str], int] = {}
    for module in modules.values():
        scanner = Scanner(known, module.name, module.is_package)
        scanner.scan(module.tree, module)
        module.imports = scanner.imports
        shown = _display(module.path, display_base)
        for item in scanner.imports:
            graph[module.name].add(item.target)
            where.setdefault((module.name, item.target), item.line)
        for line, target, name in sorted(set(scanner.private)):
            key = (module.name, target, name)
            if key in allowed_keys:
                used_allowed.add(key)
                continue
            report.problems.append(
                Problem(shown, line, f"private import: {module.name} uses {target}.{name}")
            )
        if module.lines > max_lines:
            report.problems.append(
                Problem(
                    shown,
                    1,
                    f"module has {module.lines} lines (over {max_lines})",
                    fatal=strict_size,
                )
            )

    for component in strongly_connected(graph):
        first = component[0]
        if len(component) == 1 and first not in graph[first]:
            continue
        cycle = example_cycle(graph, component)
        steps = " -> ".join(
            f"{cycle[i + 1]} ({_display(modules[cycle[i]].path, display_base)}:"
            f"{where[(cycle[i], cycle[i + 1])]})"
            for i in range(len(cycle) - 1)
        )
        report.problems.append(
            Problem(
                _display(modules[first].path, display_base),
                where[(cycle[0], cycle[1])],
                f"import cycle among {len(component)} modules [{', '.join(component)}]; "
                f"e.g. {first} -> {steps}",
            )
        )

    for key in sorted(allowed_keys - used_allowed):
        report.problems.append(
            Problem(
                _display(here, display_base),
                1,
                f"allow-list entry no longer needed: {key[0]} uses {key[1]}.{key[2]}",
                fatal=False,
            )
        )

    if tests is not None and tests.is_dir():
        for path in sorted(tests.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            scanner = Scanner(known, "<tests>", False)
            scanner.scan(tree, None)
            shown = _display(path, display_base)
            for line, target, name in sorted(set(scanner.private)):
                report.problems.append(
                    Problem(shown, line, f"test uses a private name: {target}.{name}")
                )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print one line per problem; 1 when any is fatal, else 0."""
    repo = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--src", type=Path, default=repo / "src" / "pi_session")
    parser.add_argument(
        "--tests",
        type=Path,
        default=None,
        help="test directory to check for private imports (default: tests/ beside src/)",
    )
    parser.add_argument("--no-tests", action="store_true", help="do not check test files")
    parser.add_argument("--max-lines", type=int, default=DEFAULT_MAX_LINES)
    parser.add_argument(
        "--strict-size", action="store_true", help="fail (not warn) on modules over --max-lines"
    )
    args = parser.parse_args(argv)
    src = args.src.resolve()
    tests = args.tests
    if tests is None and not args.no_tests:
        candidate = src.parent.parent / "tests"
        tests = candidate if candidate.is_dir() else None
    if args.no_tests:
        tests = None
    base = Path.cwd()
    report = check(
        src,
        tests=tests.resolve() if tests else None,
        max_lines=args.max_lines,
        strict_size=args.strict_size,
        display_base=base,
    )
    for problem in report.problems:
        print(problem)
    fatal = sum(problem.fatal for problem in report.problems)
    warnings = len(report.problems) - fatal
    print(
        f"check_imports: {fatal} problem(s), {warnings} warning(s)",
        file=sys.stderr,
    )
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
