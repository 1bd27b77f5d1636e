"""ccusage, the reference for ``pi-session usage``: the pinned npm package
(``ccusage`` 20.0.24, the last version that ships its linux-x64 binary as
``@ccusage/ccusage-linux-x64``), installed with npm on first use into the
user's cache directory (``$XDG_CACHE_HOME`` as it was before the tests
changed it, else ``~/.cache``: ``ccusage-ref-20.0.24/``), once for every
test run and worker (a file lock), and run offline.

Without node or npm the tests using it are skipped with the reason, except
under CI (``CI`` set, as ``.ci/run`` does), where they fail instead.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

VERSION = "20.0.24"


def _home() -> Path:
    override = os.environ.get("CCUSAGE_REF_HOME")
    if override:
        return Path(override)
    base = os.environ.get("PI_SESSION_TEST_USER_CACHE") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / f"ccusage-ref-{VERSION}"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"ccusage reference unavailable under CI: {reason}")
    pytest.skip(reason)


def ccusage_binary() -> Path:
    """The ccusage launcher, installed on first use (see the module
    docstring); skips (fails under CI) when it cannot be."""
    home = _home()
    exe = home / "node_modules" / ".bin" / "ccusage"
    marker = home / "node_modules" / "ccusage" / "package.json"

    def ready() -> bool:
        try:
            return exe.exists() and json.loads(marker.read_text())["version"] == VERSION
        except (OSError, ValueError, KeyError):
            return False

    if ready():
        return exe
    if shutil.which("node") is None or shutil.which("npm") is None:
        _unavailable("node and npm are needed to install ccusage (the reference of pi-session usage)")
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready():
            (home / "package.json").write_text(json.dumps({"private": True, "dependencies": {"ccusage": VERSION}}))
            done = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", f"ccusage@{VERSION}", "--save-exact"],
                cwd=home, capture_output=True, text=True, timeout=600,
            )
            if done.returncode != 0 or not ready():
                _unavailable(f"npm could not install ccusage {VERSION}: {done.stderr.strip()[-500:]}")
    return exe


def run_ccusage(kind: str, sessions: Path, *, timezone: str = "UTC", extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """``ccusage pi KIND --offline --json --pi-path SESSIONS --timezone TZ``
    and its parsed JSON (``sessions`` must be a directory named
    ``sessions`` holding project directories: ccusage names a session's
    project after the directory below one named so)."""
    exe = ccusage_binary()
    env = {**os.environ, "NO_COLOR": "1", "TZ": timezone}
    done = subprocess.run(
        [str(exe), "pi", kind, "--offline", "--json", "--pi-path", str(sessions), "--timezone", timezone, *extra],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
