"""A second front end (a web server, the browser, the Agents SDK session)
needs no code of the command line: no module outside ``pi_session/cli/``
imports ``pi_session.cli``, at module level or inside a function (imports
under ``if TYPE_CHECKING:`` never run and do not count). Session lookup,
the store in use and the results' JSON shapes are library calls."""

from __future__ import annotations

import ast
from pathlib import Path

import pi_session

PACKAGE = Path(pi_session.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The absolute module names an import statement names (for ``from X
    import a``: ``X`` and ``X.a``, which may be a submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def cli_importers() -> list[str]:
    """``file:line`` of every import of ``pi_session.cli`` outside ``cli/``."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == "pi_session.cli" or module.startswith("pi_session.cli."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _runtime_imports(tree):
            names = _imported(module, path.name == "__init__.py", node)
            if any(name == "pi_session.cli" or name.startswith("pi_session.cli.") for name in names):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return offenders


def test_no_module_outside_the_cli_imports_it() -> None:
    assert cli_importers() == []


def test_the_check_sees_relative_and_in_function_imports(tmp_path: Path) -> None:
    """The walk finds what it must forbid: a relative import inside a
    function, not one under TYPE_CHECKING."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..cli import common\n"
        "def f():\n    from ..cli.common import fail\n"
    )
    nodes = _runtime_imports(ast.parse(source))
    names = [n for node in nodes for n in _imported("pi_session.web.app", False, node)]
    assert "pi_session.cli.common" in names and sum(n.startswith("pi_session.cli") for n in names) == 2
