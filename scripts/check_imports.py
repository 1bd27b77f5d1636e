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
        such as ``mock.patch("pkg.mod._name")``): tests go through public seams;
    (d) for ``pi_session`` (the default ``--src``): the layer rule of
        ``LAYERS`` below (no import from a higher layer; every top-level
        package in a layer), and ``--docs`` (docs/architecture.md) holding the
        layer table generated from the import graph (``--write-docs``
        regenerates it);
    (e) for ``pi_session``: an entry type or message role name compared as a
        string literal (``==``, ``!=``, ``in``) outside ``pi_session.entries``,
        where the entry model names them and answers the questions
        (``pi_session.entries.questions``); ``ALLOWED_ENTRY_LITERALS`` lists the
        modules that compare other formats' names, each with its reason, and a
        line saying ``# not an entry literal`` is exempt.

Warnings (exit status 0 unless ``--strict-size``)
    only with ``--max-lines N``: modules over N lines (a module is shaped by
    one concept, not by a line count; there is no default limit).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_ALLOWED = 10
"""The most cross-module private imports the allow-list may hold."""

# (importer module, imported module, private name, reason). Matched by
# module and name, not by line, so edits elsewhere do not invalidate them.
ALLOWED_PRIVATE_IMPORTS: tuple[tuple[str, str, str, str], ...] = ()

PACKAGE = "pi_session"
"""The package whose layers are declared below (another ``--src`` is checked
for cycles and private imports only)."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("errors", "core")),
    ("entries", ("entries",)),
    ("storage", ("storage",)),
    ("session", ("session",)),
    ("features of one session", ("adapters", "check", "compaction", "llm", "prompt")),
    ("stores", ("stores",)),
    ("features across sessions", ("importers", "render", "search", "secrets", "usage", "viewer")),
    ("manager", ("manager",)),
    ("operations", ("operations",)),
    ("front ends", ("browse", "cli", "integrations", "web")),
)
"""The layers of the package, lowest first: each names the top-level packages
(and the one root module, ``errors``) it holds. A module may import from its own
layer and the layers below, never from a layer above (in-function imports
included; ``if TYPE_CHECKING:`` imports excepted). The package's ``__init__``
is the public facade and may import anything. A top-level package or module
that no layer names fails the check."""

# (importer module, imported module, reason): the only imports allowed to go
# up a layer. Matched by module, not by line.
ALLOWED_LAYER_CROSSINGS: tuple[tuple[str, str, str], ...] = ()

DOCS_BEGIN = "<!-- layers: generated by scripts/check_imports.py --write-docs -->"
DOCS_END = "<!-- layers: end -->"

DEFAULT_MAX_LINES: int | None = None
"""No size limit by default: a module is shaped by one concept, not by a line
count (``--max-lines N`` reports longer modules, for a review)."""


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
    max_lines: int | None = DEFAULT_MAX_LINES,
    strict_size: bool = False,
    display_base: Path | None = None,
    layers: Sequence[tuple[str, Sequence[str]]] | None = None,
    allowed_crossings: Iterable[tuple[str, str, str]] = ALLOWED_LAYER_CROSSINGS,
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
        if max_lines is not None and module.lines > max_lines:
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

    if layers is not None:
        report.problems.extend(
            check_layers(modules, layers, allowed_crossings, display_base=display_base)
        )
        report.problems.extend(check_entry_literals(modules, display_base=display_base))

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


# ---------------------------------------------------------------------------
# Entry questions: type and role literals compared outside ``entries/``.

ENTRY_WORDS: frozenset[str] = frozenset({
    # pi_session.entries.ENTRY_TYPES
    "message", "thinking_level_change", "model_change", "compaction", "branch_summary", "custom",
    "custom_message", "label", "session_info", "context_edit", "usage",
    # pi_session.entries.MESSAGE_ROLES
    "user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary",
    "hookMessage", "system",
})
"""The entry types and message roles pi writes (kept equal to
``pi_session.entries.ENTRY_TYPES | MESSAGE_ROLES`` by a test): a string
literal among them compared with ``==``/``!=``/``in`` outside
``pi_session.entries`` asks an entry question the entry model should answer
(a predicate or a descriptor field)."""

ENTRY_LITERAL_HOME = "pi_session.entries"
"""The package where comparing entry types and roles to literals belongs."""

# (module or package, reason): may compare entry type and role literals.
ALLOWED_ENTRY_LITERALS: tuple[tuple[str, str], ...] = (
    ("pi_session.importers", "converts other agents' records, whose own type and role names overlap pi's"),
    ("pi_session.integrations", "converts other frameworks' messages (role names of their own formats)"),
    ("pi_session.adapters.anthropic", "builds Anthropic's request, whose roles are Anthropic's"),
    ("pi_session.adapters.openai_chat", "builds OpenAI's chat request, whose roles are OpenAI's"),
    ("pi_session.adapters.openai_responses", "builds OpenAI's Responses request, whose roles are OpenAI's"),
    ("pi_session.adapters.validate", "validates provider request payloads, whose roles and item types are the providers'"),
    ("pi_session.llm", "speaks providers' wire formats, whose roles are theirs, not the session's"),
)

# Modules that still compare entry literals: each is reported as one warning
# with its count until it is cleaned; every other module fails on its first one.
ENTRY_LITERAL_BACKLOG: frozenset[str] = frozenset()


def _literal_strings(node: ast.expr) -> list[ast.Constant]:
    """The string constants of a comparison operand: the constant itself, or
    the items of a tuple/list/set literal (or ``frozenset({...})``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple") and len(node.args) == 1:
        return _literal_strings(node.args[0])
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [item for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return []


NOT_ENTRY_LITERAL = "# not an entry literal"
"""A comment that exempts its line: the word compared there is not an entry
type or role (a filter mode called ``user``, say); it says what it is."""


def entry_literals(tree: ast.AST, lines: Sequence[str] = ()) -> list[tuple[int, str]]:
    """(line, literal) for every entry type or role name (:data:`ENTRY_WORDS`)
    used as an operand of ``==``, ``!=``, ``in`` or ``not in`` in ``tree``,
    except on a line of ``lines`` (the source) carrying :data:`NOT_ENTRY_LITERAL`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        for operand in (node.left, *node.comparators):
            for constant in _literal_strings(operand):
                line = lines[constant.lineno - 1] if constant.lineno <= len(lines) else ""
                if constant.value in ENTRY_WORDS and NOT_ENTRY_LITERAL not in line:
                    found.append((constant.lineno, constant.value))
    return sorted(found)


def check_entry_literals(
    modules: dict[str, Module],
    *,
    allowed: Iterable[tuple[str, str]] = ALLOWED_ENTRY_LITERALS,
    backlog: Iterable[str] = ENTRY_LITERAL_BACKLOG,
    display_base: Path | None = None,
) -> list[Problem]:
    """Entry type and role literals compared outside :data:`ENTRY_LITERAL_HOME`:
    one fatal problem per literal, except in an allowed package (nothing) or
    a backlog module (one warning with the module's count)."""
    allowed_packages = [package for package, _ in allowed]
    backlog = set(backlog)
    problems: list[Problem] = []
    for name, module in sorted(modules.items()):
        if within(name, ENTRY_LITERAL_HOME) or any(within(name, p) for p in allowed_packages):
            continue
        found = entry_literals(module.tree, module.path.read_text(encoding="utf-8").splitlines())
        shown = _display(module.path, display_base)
        if name in backlog:
            if found:
                problems.append(Problem(
                    shown, found[0][0],
                    f"{len(found)} entry type/role literal(s) compared (backlog; ask pi_session.entries instead)",
                    fatal=False,
                ))
            else:
                problems.append(Problem(shown, 1, "entry literal backlog lists a clean module; remove it", fatal=False))
            continue
        for line, literal in found:
            problems.append(Problem(
                shown, line,
                f"entry type/role literal {literal!r} compared outside pi_session.entries (use a predicate or descriptor field)",
            ))
    return problems


def top_unit(module: str) -> str | None:
    """The top-level package or root module a module belongs to
    (``pkg.a.b`` -> ``a``; ``pkg`` itself -> None)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_index(layers: Sequence[tuple[str, Sequence[str]]]) -> dict[str, int]:
    """``{top-level unit: index of its layer}`` (0 is the lowest)."""
    return {unit: index for index, (_, units) in enumerate(layers) for unit in units}


def check_layers(
    modules: dict[str, Module],
    layers: Sequence[tuple[str, Sequence[str]]],
    allowed_crossings: Iterable[tuple[str, str, str]] = (),
    *,
    display_base: Path | None = None,
) -> list[Problem]:
    """The layer rule: every top-level unit is in a layer, and no module imports
    (at run time, in-function imports included) from a higher layer. The
    package's ``__init__`` is exempt. Returns one fatal problem per import that
    goes up, per undeclared unit, and per unused allowed crossing (a warning)."""
    problems: list[Problem] = []
    index = layer_index(layers)
    allowed = {(a, b) for a, b, _ in allowed_crossings}
    used: set[tuple[str, str]] = set()
    undeclared: dict[str, Module] = {}
    for module in modules.values():
        unit = top_unit(module.name)
        if unit is None:
            continue
        if unit not in index:
            undeclared.setdefault(unit, module)
            continue
        for item in module.imports:
            target_unit = top_unit(item.target)
            if target_unit is None or target_unit not in index:
                continue
            if index[target_unit] <= index[unit]:
                continue
            if (module.name, item.target) in allowed:
                used.add((module.name, item.target))
                continue
            problems.append(
                Problem(
                    _display(module.path, display_base),
                    item.line,
                    f"layer violation: {module.name} ({layers[index[unit]][0]}) imports "
                    f"{item.target} ({layers[index[target_unit]][0]}, a higher layer)",
                )
            )
    for unit, module in sorted(undeclared.items()):
        problems.append(
            Problem(
                _display(module.path, display_base),
                1,
                f"{unit} is in no layer: name it in LAYERS of scripts/check_imports.py",
            )
        )
    for key in sorted(allowed - used):
        problems.append(
            Problem(
                _display(Path(__file__), display_base),
                1,
                f"allowed layer crossing no longer needed: {key[0]} -> {key[1]}",
                fatal=False,
            )
        )
    return problems


def first_docstring_line(module: Module) -> str:
    """The first sentence-line of a module's docstring, Markdown-safe for a table cell."""
    doc = ast.get_docstring(module.tree) or ""
    line = " ".join(doc.strip().split("\n\n", 1)[0].split())
    sentence = re.match(r"(.+?\.)(?:\s|$)", line)
    if sentence and len(sentence.group(1)) >= 30:
        line = sentence.group(1)
    return line.replace("|", "\\|")


def layers_markdown(src: Path, layers: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The layer table of ``docs/architecture.md``, generated from the real
    import graph: one row per top-level unit, lowest layer first, with what it
    owns (its docstring's first paragraph) and the units it imports at run time."""
    modules = discover(src)
    known = set(modules)
    uses: dict[str, set[str]] = {}
    for module in modules.values():
        scanner = Scanner(known, module.name, module.is_package)
        scanner.scan(module.tree, module)
        unit = top_unit(module.name)
        if unit is None:
            continue
        for item in scanner.imports:
            target = top_unit(item.target)
            if target and target != unit:
                uses.setdefault(unit, set()).add(target)
    package = src.name
    rows = [
        "| Layer | Package | What it owns | Imports (at run time) |",
        "|---|---|---|---|",
    ]
    for name, units in layers:
        for unit in units:
            module = modules.get(f"{package}.{unit}")
            if module is None:
                continue
            kind = f"`{unit}/`" if module.is_package else f"`{unit}.py`"
            imported = ", ".join(f"`{u}`" for u in sorted(uses.get(unit, ()))) or "—"
            rows.append(f"| {name} | {kind} | {first_docstring_line(module)} | {imported} |")
    return "\n".join(rows)


def check_docs(docs: Path, table: str, *, display_base: Path | None = None) -> list[Problem]:
    """A problem when ``docs`` lacks the generated layer table or holds another one."""
    text = docs.read_text(encoding="utf-8")
    begin, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    shown = _display(docs, display_base)
    if begin < 0 or end < begin:
        return [Problem(shown, 1, "no generated layer table (run scripts/check_imports.py --write-docs)")]
    current = text[begin + len(DOCS_BEGIN) : end].strip()
    if current != table.strip():
        line = text.count("\n", 0, begin) + 1
        return [
            Problem(
                shown,
                line,
                "the layer table does not match the import graph (run scripts/check_imports.py --write-docs)",
            )
        ]
    return []


def write_docs(docs: Path, table: str) -> None:
    """Replace (or append) the generated layer table in ``docs``."""
    text = docs.read_text(encoding="utf-8") if docs.exists() else ""
    block = f"{DOCS_BEGIN}\n{table}\n{DOCS_END}"
    begin, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if begin >= 0 and end > begin:
        text = text[:begin] + block + text[end + len(DOCS_END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    docs.write_text(text, encoding="utf-8")


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
    parser.add_argument(
        "--max-lines", type=int, default=DEFAULT_MAX_LINES, help="report modules longer than this"
    )
    parser.add_argument(
        "--docs",
        type=Path,
        default=repo / "docs" / "architecture.md",
        help="the page whose generated layer table must match the import graph",
    )
    parser.add_argument(
        "--write-docs", action="store_true", help="regenerate the layer table in --docs"
    )
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
    layers = LAYERS if src.name == PACKAGE else None
    if args.write_docs:
        write_docs(args.docs, layers_markdown(src, LAYERS))
        return 0
    report = check(
        src,
        tests=tests.resolve() if tests else None,
        max_lines=args.max_lines,
        strict_size=args.strict_size,
        display_base=base,
        layers=layers,
    )
    if layers is not None and args.docs.exists():
        report.problems.extend(check_docs(args.docs, layers_markdown(src, layers), display_base=base))
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
