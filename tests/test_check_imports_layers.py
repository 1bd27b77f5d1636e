"""The layer rule of scripts/check_imports.py, on small packages written to tmp_path,
and the layer table of docs/architecture.md generated from the real import graph."""

from __future__ import annotations

from pathlib import Path

from test_check_imports import ci, write_package

LAYERS = (("low", ("base",)), ("middle", ("model",)), ("high", ("front",)))
REPO = Path(__file__).resolve().parent.parent


def problems(pkg: Path, **kwargs) -> list[str]:
    return [str(p) for p in ci.check(pkg, layers=LAYERS, **kwargs).problems]


def test_imports_down_and_sideways_pass(tmp_path):
    pkg = write_package(
        tmp_path,
        {
            "base/util.py": "X = 1\n",
            "model/tree.py": "from ..base.util import X\n",
            "front/app.py": "from ..model import tree\nfrom ..base import util\n",
        },
    )
    assert problems(pkg) == []


def test_an_import_up_a_layer_fails_even_inside_a_function(tmp_path):
    pkg = write_package(
        tmp_path,
        {
            "base/util.py": "def f():\n    from ..front import app\n    return app\n",
            "model/tree.py": "from ..front.app import run\n",
            "front/app.py": "def run():\n    return 1\n",
        },
    )
    found = problems(pkg)
    assert len(found) == 2
    assert any("pkg.base.util (low) imports pkg.front.app (high, a higher layer)" in p and p.endswith("") for p in found)
    assert any("util.py:2:" in p for p in found)
    assert any("pkg.model.tree (middle) imports pkg.front.app" in p and "tree.py:1:" in p for p in found)


def test_type_checking_imports_are_exempt_and_an_allowed_crossing_passes(tmp_path):
    pkg = write_package(
        tmp_path,
        {
            "base/util.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..front.app import run\n",
            "model/tree.py": "from ..front.app import run\n",
            "front/app.py": "def run():\n    return 1\n",
        },
    )
    assert problems(pkg, allowed_crossings=[("pkg.model.tree", "pkg.front.app", "a reason")]) == []
    unused = problems(pkg, allowed_crossings=[("pkg.model.tree", "pkg.front.app", "r"), ("pkg.base.util", "pkg.model.tree", "r")])
    assert len(unused) == 1 and "no longer needed: pkg.base.util -> pkg.model.tree" in unused[0]


def test_a_package_in_no_layer_fails(tmp_path):
    pkg = write_package(tmp_path, {"base/util.py": "", "stray.py": "from .base import util\n"})
    found = problems(pkg)
    assert len(found) == 1 and "stray is in no layer" in found[0]


def test_the_docs_table_must_match_the_graph(tmp_path):
    pkg = write_package(
        tmp_path,
        {"base/__init__.py": '"""The bottom of it all, imported by the rest."""\n', "model/tree.py": "from ..base import X\n"},
    )
    (pkg / "base" / "__init__.py").write_text('"""The bottom of it all, imported by the rest."""\nX = 1\n')
    docs = tmp_path / "architecture.md"
    docs.write_text("# Map\n")
    table = ci.layers_markdown(pkg, LAYERS)
    assert "| low | `base/` | The bottom of it all, imported by the rest. | — |" in table
    assert "| middle | `model/` |" in table and "`base`" in table.split("| middle |")[1]
    assert ci.check_docs(docs, table) and "no generated layer table" in str(ci.check_docs(docs, table)[0])
    ci.write_docs(docs, table)
    assert ci.check_docs(docs, table) == []
    assert docs.read_text().startswith("# Map\n")
    ci.write_docs(docs, table)  # idempotent
    assert docs.read_text().count(ci.DOCS_BEGIN) == 1
    assert ci.check_docs(docs, table.replace("— |", "`model` |")) != []


def test_the_package_follows_its_declared_layers_and_docs():
    """The real package: every top-level package is in a layer, none imports
    upwards, and docs/architecture.md holds the table of today's graph."""
    src = REPO / "src" / "pi_session"
    report = ci.check(src, layers=ci.LAYERS)
    layer_problems = [str(p) for p in report.problems if "layer" in p.message]
    assert layer_problems == []
    docs = REPO / "docs" / "architecture.md"
    assert ci.check_docs(docs, ci.layers_markdown(src, ci.LAYERS)) == []
    root_modules = sorted(p.stem for p in src.glob("*.py") if p.stem != "__init__")
    assert root_modules == ["errors"], "a new module at the package root belongs in a layer package"
