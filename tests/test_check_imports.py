"""scripts/check_imports.py on small packages written to tmp_path.

The checker is a script, not part of the package: it is loaded from its path
and driven through its command line (``main``) and its ``check`` function.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_imports.py"


def _load():
    spec = importlib.util.spec_from_file_location("check_imports", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_imports"] = module
    spec.loader.exec_module(module)
    return module


ci = _load()


def write_package(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: source}`` under ``root/pkg`` and return the package directory."""
    pkg = root / "pkg"
    for relative, source in files.items():
        path = pkg / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    for directory in [pkg, *[p for p in pkg.rglob("*") if p.is_dir()]]:
        init = directory / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    return pkg


def run(pkg: Path, *extra: str, capsys) -> tuple[int, list[str]]:
    code = ci.main(["--src", str(pkg), "--no-tests", *extra])
    out = capsys.readouterr().out
    return code, [line for line in out.splitlines() if line]


def test_clean_package_passes(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from .b import helper\n",
            "b.py": "def helper():\n    return 1\n",
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert (code, lines) == (0, [])


def test_cycle_through_function_level_import_is_found(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from .b import helper\n\nVALUE = 1\n",
            "b.py": """\
                def helper():
                    from .a import VALUE
                    return VALUE
            """,
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert code == 1
    assert len(lines) == 1
    line = lines[0]
    assert "import cycle among 2 modules [pkg.a, pkg.b]" in line
    # one example path, each step naming the file and line of its import
    assert "pkg.a -> pkg.b (" in line and "a.py:1)" in line
    assert "-> pkg.a (" in line and "b.py:2)" in line
    assert line.startswith(str(pkg / "a.py") + ":1:")


def test_three_module_cycle_via_submodule_import_and_package_init(tmp_path, capsys):
    # ``from . import c`` imports the submodule c; ``import pkg.sub`` means
    # pkg/sub/__init__.py
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from . import c\n",
            "c.py": "import pkg.sub\n",
            "sub/__init__.py": "from ..a import nothing\n",
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert code == 1
    assert [l for l in lines if "import cycle among 3 modules [pkg.a, pkg.c, pkg.sub]" in l]


def test_type_checking_import_is_not_a_cycle(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from .b import helper\n",
            "b.py": """\
                from typing import TYPE_CHECKING
                import typing

                if TYPE_CHECKING:
                    from .a import Thing
                if typing.TYPE_CHECKING:
                    from . import a

                def helper(x: "Thing") -> None:
                    return None
            """,
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert (code, lines) == (0, [])


def test_else_branch_of_type_checking_counts(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from .b import helper\n",
            "b.py": """\
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    pass
                else:
                    from .a import nothing
                def helper():
                    pass
            """,
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert code == 1 and "import cycle" in lines[0]


def test_underscore_imports_are_found(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "a.py": """\
                from .b import _private, public, __version__
                from . import b as bee
                import pkg.b

                def f():
                    return bee._other() + pkg.b._third
            """,
            "b.py": "_private = public = __version__ = _other = _third = 1\n",
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert code == 1
    messages = sorted(l.split(": ", 1)[1] for l in lines)
    assert messages == [
        "private import: pkg.a uses pkg.b._other",
        "private import: pkg.a uses pkg.b._private",
        "private import: pkg.a uses pkg.b._third",
    ]
    assert [l for l in lines if l.startswith(f"{pkg / 'a.py'}:1:")]


def test_private_module_is_private_to_its_package(tmp_path, capsys):
    pkg = write_package(
        tmp_path,
        {
            "sub/_helpers.py": "def tool():\n    pass\n",
            "sub/user.py": "from ._helpers import tool\n",  # same package: fine
            "outside.py": "from .sub._helpers import tool\n",  # not fine
        },
    )
    code, lines = run(pkg, capsys=capsys)
    assert code == 1
    assert len(lines) == 1
    assert "outside.py:1: private import: pkg.outside uses pkg.sub._helpers" in lines[0]


def test_allow_list_works_and_is_bounded(tmp_path):
    pkg = write_package(
        tmp_path,
        {
            "a.py": "from .b import _one, _two\n",
            "b.py": "_one = _two = 1\n",
        },
    )
    allowed = [("pkg.a", "pkg.b", "_one", "a reason")]
    report = ci.check(pkg, allowed=allowed)
    fatal = [str(p) for p in report.problems if p.fatal]
    assert len(fatal) == 1 and fatal[0].endswith("private import: pkg.a uses pkg.b._two")
    both = [*allowed, ("pkg.a", "pkg.b", "_two", "another reason")]
    assert not ci.check(pkg, allowed=both).failed
    # a stale entry is reported (as a warning)
    stale = [*both, ("pkg.a", "pkg.b", "_gone", "was needed once")]
    report = ci.check(pkg, allowed=stale)
    assert not report.failed
    assert [p for p in report.problems if "no longer needed" in p.message and "_gone" in p.message]
    # more than MAX_ALLOWED entries fail on their own
    many = [*both, *[("pkg.x", "pkg.y", f"_n{i}", "r") for i in range(ci.MAX_ALLOWED)]]
    report = ci.check(pkg, allowed=many)
    assert report.failed
    assert [p for p in report.problems if p.fatal and "allow-list" in p.message]


def test_shipped_allow_list_is_small_and_explained():
    assert len(ci.ALLOWED_PRIVATE_IMPORTS) <= ci.MAX_ALLOWED
    for importer, target, name, reason in ci.ALLOWED_PRIVATE_IMPORTS:
        assert importer and target and name.startswith("_") and len(reason) > 10


def test_size_warns_and_fails_with_flag(tmp_path, capsys):
    pkg = write_package(tmp_path, {"big.py": "x = 1\n" * 12})
    code, lines = run(pkg, "--max-lines", "10", capsys=capsys)
    assert code == 0
    assert lines == [f"{pkg / 'big.py'}:1: warning: module has 12 lines (over 10)"]
    code, lines = run(pkg, "--max-lines", "10", "--strict-size", capsys=capsys)
    assert code == 1
    assert lines == [f"{pkg / 'big.py'}:1: module has 12 lines (over 10)"]


def test_tests_using_private_names_fail(tmp_path, capsys):
    pkg = write_package(tmp_path, {"mod.py": "_hidden = public = 1\n"})
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_ok.py").write_text("from pkg.mod import public\n", encoding="utf-8")
    (tests / "test_bad.py").write_text(
        textwrap.dedent(
            """\
            from pkg import mod
            from pkg.mod import _hidden

            def test_x(monkeypatch):
                monkeypatch.setattr(mod, "_hidden", 2)
                monkeypatch.setattr("pkg.mod._hidden", 3)
                assert mod._hidden
            """
        ),
        encoding="utf-8",
    )
    code = ci.main(["--src", str(pkg), "--tests", str(tests)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert sorted(int(l.split(":")[1]) for l in lines) == [2, 5, 6, 7]
    assert all("test_bad.py" in l and "test uses a private name: pkg.mod._hidden" in l for l in lines)


def test_command_line_exit_status(tmp_path):
    pkg = write_package(tmp_path, {"a.py": "from .b import x\n", "b.py": "from .a import y\n"})
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--src", str(pkg), "--no-tests"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "import cycle among 2 modules" in done.stdout


@pytest.mark.parametrize("bad", ["def f(:\n"])
def test_unparsable_file_is_an_error(tmp_path, bad):
    pkg = write_package(tmp_path, {"a.py": bad})
    with pytest.raises(SyntaxError):
        ci.check(pkg)


def _literal_problems(tmp_path: Path, files: dict[str, str], **kwargs) -> list[str]:
    root = tmp_path / "src"
    pkg = root / "pi_session"
    for relative, source in files.items():
        path = pkg / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    problems = ci.check_entry_literals(ci.discover(pkg), backlog=kwargs.get("backlog", ()), display_base=tmp_path)
    return [str(problem) for problem in problems]


def test_entry_literal_outside_entries_fails(tmp_path):
    problems = _literal_problems(
        tmp_path,
        {
            "entries/kinds.py": "def is_summary(e):\n    return e.get('type') in ('compaction', 'branch_summary')\n",
            "session/walk.py": (
                "def f(entry, msg):\n"
                "    if entry.get('type') == 'compaction':\n"
                "        return 1\n"
                "    return msg['role'] not in {'toolResult', 'other'}\n"
            ),
            "importers/foreign.py": "def g(r):\n    return r['type'] == 'message'\n",
            "web/clean.py": "def h(x):\n    return x == 'something else'\n",
            "web/mode.py": "def m(mode):\n    return mode == 'user'  # not an entry literal: a filter mode\n",
        },
    )
    assert len(problems) == 2, problems
    assert all(p.startswith(str(Path("src/pi_session/session/walk.py"))) for p in problems)
    assert "'compaction'" in problems[0] and ":2:" in problems[0]
    assert "'toolResult'" in problems[1] and ":4:" in problems[1]


def test_entry_literal_backlog_module_is_one_warning(tmp_path):
    files = {"session/walk.py": "def f(e):\n    return e.type == 'context_edit' or e.role == 'user'\n"}
    problems = ci.check_entry_literals(ci.discover(_write(tmp_path, files)), backlog=("pi_session.session.walk",))
    assert len(problems) == 1 and not problems[0].fatal and "2 entry" in problems[0].message


def _write(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pi_session"
    for relative, source in files.items():
        path = pkg / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return pkg


def test_entry_words_are_the_entry_model():
    from pi_session.entries import ENTRY_TYPES, MESSAGE_ROLES

    assert ci.ENTRY_WORDS == set(ENTRY_TYPES) | set(MESSAGE_ROLES)


def test_package_has_no_entry_literal_outside_backlog():
    src = SCRIPT.parent.parent / "src" / "pi_session"
    problems = ci.check_entry_literals(ci.discover(src))
    assert [str(p) for p in problems if p.fatal] == []
    assert all("clean module" not in p.message for p in problems)
