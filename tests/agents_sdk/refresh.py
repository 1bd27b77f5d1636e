#!/usr/bin/env python3
"""Vendor the OpenAI Agents SDK's own session tests from an unpacked sdist.

    pip download --no-binary :all: --no-deps openai-agents==0.24.0
    tar xzf openai_agents-0.24.0.tar.gz
    python tests/agents_sdk/refresh.py openai_agents-0.24.0

copies the test modules named in ``MODULES`` (and every ``tests.*`` module
they import, transitively, plus ``tests/conftest.py``) byte for byte into
``tests/agents_sdk/tests/``, with the SDK's LICENSE, and writes the version
to ``tests/agents_sdk/SDK_VERSION``. Nothing in the copied files is changed:
the adaptation (which session class a test constructs) lives only in
``tests/agents_sdk/conftest.py``. A later SDK version is this one command,
then ``make test-agents-sdk``; tests that then check a backend's internals
go into ``not_applicable.txt`` (and the README's list).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEST = HERE / "tests"

# The SDK's session tests: the protocol and its settings, the wrappers
# over any session (compaction, encryption), the SQL sessions' behaviour
# cases, and the Runner.run(..., session=...) tests.
MODULES = [
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/memory/test_session_persistence_sanitize.py",
    "tests/memory/test_session_context_wrapper.py",
    "tests/memory/test_openai_responses_compaction_session.py",
    "tests/memory/test_compaction_model_visibility.py",
    "tests/memory/test_compaction_suffix.py",
    "tests/extensions/memory/test_async_sqlite_session.py",
    "tests/extensions/memory/test_advanced_sqlite_session.py",
    "tests/extensions/memory/test_sqlalchemy_session.py",
    "tests/extensions/memory/test_encrypt_session.py",
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_hitl_session_scenario.py",
    "tests/test_run_state_pending_input.py",
    "tests/test_max_turns.py",
]
ALWAYS = ["tests/__init__.py", "tests/conftest.py", "LICENSE"]

_IMPORT = re.compile(r"^\s*(?:from\s+(\.+|tests\.)([\w.]*)\s+import\s+([\w, ()\n]+?)$|import\s+tests\.([\w.]+))", re.M)


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root / "tests" / Path(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(root: Path, path: Path) -> set[Path]:
    """The ``tests.*`` modules ``path`` imports (absolute or relative)."""
    found: set[Path] = set()
    package = path.parent.relative_to(root / "tests").parts
    for m in _IMPORT.finditer(path.read_text(encoding="utf-8")):
        dots, name, names, plain = m.group(1), m.group(2), m.group(3), m.group(4)
        if plain:
            parts = plain.split(".")
        elif dots == "tests.":
            parts = name.split(".") if name else []
        else:
            up = len(dots) - 1
            parts = [*package[: len(package) - up if up else len(package)], *([p for p in name.split(".") if p])]
        # the module itself, and `from tests.pkg import module`
        candidates = [".".join(parts)] if parts else []
        for n in re.split(r"[,\s()]+", names or ""):
            if n and n != "as":
                candidates.append(".".join([*parts, n]))
        for dotted in candidates:
            if not dotted:
                continue
            file = _module_file(root, dotted)
            if file is not None:
                found.add(file)
                # the packages on the way need their __init__.py
                for i in range(1, len(dotted.split("."))):
                    init = _module_file(root, ".".join(dotted.split(".")[:i]))
                    if init is not None and init.name == "__init__.py":
                        found.add(init)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    version = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    if not (root / "tests").is_dir() or version is None:
        print(f"refresh.py: {root} is not an unpacked openai-agents sdist (no tests/ or pyproject.toml)", file=sys.stderr)
        return 2
    todo = [root / m for m in MODULES + ALWAYS]
    missing = [str(p.relative_to(root)) for p in todo if not p.is_file()]
    if missing:
        print(f"refresh.py: not in this sdist: {', '.join(missing)} (update MODULES)", file=sys.stderr)
        return 1
    copy: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in copy:
            continue
        copy.add(path)
        if path.suffix == ".py":
            todo.extend(_imports(root, path) - copy)
    if DEST.exists():
        shutil.rmtree(DEST)
    for path in sorted(copy):
        rel = path.relative_to(root)
        target = HERE / ("LICENSE" if rel.name == "LICENSE" else rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (HERE / "SDK_VERSION").write_text(version.group(1) + "\n", encoding="utf-8")
    print(f"refresh.py: openai-agents {version.group(1)}: {len(copy)} files into {DEST.relative_to(HERE.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
