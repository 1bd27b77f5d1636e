"""The Makefile's installs: ``make demo`` and ``make test`` run pip only when
the venv has not been installed from the current ``pyproject.toml``.

The real ``make`` runs the real Makefile against a scratch venv directory
whose ``bin/pip`` is a stand-in script that records its arguments (and can
be told to fail), so a test neither installs anything nor needs a network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _venv(tmp_path: Path, *, pip_fails: bool = False) -> Path:
    """A scratch venv: ``bin/python`` (the real interpreter) and a ``bin/pip``
    that appends its arguments to ``pip.log``."""
    venv = tmp_path / "venv"
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    pip = bin_dir / "pip"
    pip.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{venv}/pip.log"\n'
        + ("exit 1\n" if pip_fails else "exit 0\n")
    )
    pip.chmod(0o755)
    return venv


def _make(venv: Path, *targets: str, dry: bool = False) -> subprocess.CompletedProcess[str]:
    argv = ["make", "--no-print-directory", "-C", str(ROOT), f"VENV={venv}", *targets]
    if dry:
        argv.insert(1, "-n")
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def _pip_calls(venv: Path) -> list[str]:
    log = venv / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("target", ["install", "install-test"])
def test_second_install_skips_pip(tmp_path: Path, target: str) -> None:
    venv = _venv(tmp_path)
    first = _make(venv, target)
    assert first.returncode == 0, first.stderr
    assert len(_pip_calls(venv)) == 1 and "install" in _pip_calls(venv)[0]
    second = _make(venv, target)
    assert second.returncode == 0, second.stderr
    assert len(_pip_calls(venv)) == 1, "the second install ran pip again"


def test_changed_pyproject_reinstalls(tmp_path: Path) -> None:
    venv = _venv(tmp_path)
    assert _make(venv, "install").returncode == 0
    stamp = venv / ".installed"
    assert stamp.is_file()
    # the stamp predates pyproject.toml: the dependencies may have changed
    old = (ROOT / "pyproject.toml").stat().st_mtime - 60
    os.utime(stamp, (old, old))
    assert _make(venv, "install").returncode == 0
    assert len(_pip_calls(venv)) == 2


def test_failed_install_is_retried(tmp_path: Path) -> None:
    venv = _venv(tmp_path, pip_fails=True)
    assert _make(venv, "install").returncode != 0
    assert not (venv / ".installed").exists()
    assert _make(venv, "install").returncode != 0
    assert len(_pip_calls(venv)) == 2


def test_demo_after_install_runs_no_pip(tmp_path: Path) -> None:
    venv = _venv(tmp_path)
    assert _make(venv, "install").returncode == 0
    plan = _make(venv, "demo", dry=True)
    assert plan.returncode == 0, plan.stderr
    assert "pip install" not in plan.stdout
    assert "pi-session compact" in plan.stdout


def test_fresh_clone_creates_the_venv_and_installs(tmp_path: Path) -> None:
    # what `.ci/run` (make test) does on a clean checkout: no venv yet
    venv = tmp_path / "fresh"
    plan = _make(venv, "test", dry=True)
    assert plan.returncode == 0, plan.stderr
    out = plan.stdout
    install = "pip install --quiet -c requirements/constraints.txt -e '.[test,server]'"
    assert "-m venv" in out and out.index("-m venv") < out.index(install)
    assert "pytest" in out


@pytest.mark.parametrize("target", ["install", "install-test"])
def test_installs_take_the_pinned_releases(tmp_path: Path, target: str) -> None:
    venv = _venv(tmp_path)
    assert _make(venv, target).returncode == 0
    (call,) = _pip_calls(venv)
    assert "-c requirements/constraints.txt" in call, call


def _requirement_name(line: str) -> str:
    import re

    return re.split(r"[\[<>=!~; ]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_every_test_dependency_is_pinned_within_its_bounds() -> None:
    """Each package the installs name (the test, server, models and web
    extras and the package's own dependencies) has one exact release in
    requirements/constraints.txt, and that release satisfies the upper
    bounds of requirements/bounds.txt (cryptography below 51: the Agents
    SDK's tests patch a module attribute 51 removed)."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = list(project["dependencies"])
    for extra in ("test", "server", "models", "web"):
        named += project["optional-dependencies"][extra]
    pins = {}
    for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[_requirement_name(name)] = version.strip()
    missing = sorted({_requirement_name(r) for r in named} - set(pins))
    assert not missing, f"not pinned: {missing}"
    bounds = [Requirement(line) for line in (ROOT / "requirements" / "bounds.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert any(b.name == "cryptography" for b in bounds)
    for bound in bounds:
        assert bound.specifier.contains(pins[_requirement_name(bound.name)]), (bound, pins[_requirement_name(bound.name)])
