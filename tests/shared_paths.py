"""Where the tests find what lives beside this repository in ``../shared``
(pi's fixture sessions, the pi-oracle), and why a test that needs one of
them is skipped: the reason names the missing path or program, so a skip
on a machine without ``../shared`` does not blame node or npm."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures" / "pi"
ORACLE = Path(os.environ.get("PI_ORACLE", str(SHARED / "pi-oracle" / "pi-oracle")))


def oracle_missing() -> str | None:
    """Why the oracle cannot run here (None: it can)."""
    if not ORACLE.exists():
        return f"needs the pi-oracle at {ORACLE} (the ../shared checkout beside this repository, or PI_ORACLE)"
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            return f"needs {program} on PATH for the pi-oracle"
    return None


def shared_missing(path: Path) -> str | None:
    """Why a file from ``../shared`` cannot be used (None: it exists)."""
    return None if path.exists() else f"needs {path} (from the ../shared checkout beside this repository)"


needs_oracle = pytest.mark.skipif(oracle_missing() is not None, reason=oracle_missing() or "")
"""Mark for a test that runs the pi-oracle."""
