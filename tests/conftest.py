"""Shared fixtures: paths to goldens, pi's fixtures and the oracle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
GOLDENS = TESTS / "goldens"

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from shared_paths import FIXTURES, ORACLE, SHARED, oracle_missing, shared_missing  # noqa: E402,F401

# Property tests draw the same examples on every run ("default": CI is
# reproducible, a failure seen once is seen again). HYPOTHESIS_PROFILE=explore
# draws new random examples on every run, to look for new failures (as many
# as each test asks for; 1,000 where a test does not say).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

# pi-session's caches (listing and search indexes) go to $XDG_CACHE_HOME:
# one private directory per test run, inherited by the CLI processes the
# tests start, never the user's own ~/.cache.
import tempfile as _tempfile  # noqa: E402

import atexit as _atexit  # noqa: E402
import shutil as _shutil  # noqa: E402

# the user's own cache directory, for tools the tests install once (ccusage)
os.environ.setdefault("PI_SESSION_TEST_USER_CACHE", os.environ.get("XDG_CACHE_HOME", ""))
os.environ["XDG_CACHE_HOME"] = _tempfile.mkdtemp(prefix="pi-session-test-cache-")
_atexit.register(_shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)

_hypothesis_settings.register_profile("default", derandomize=True)
_hypothesis_settings.register_profile("explore", derandomize=False, max_examples=1000)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

def oracle_available() -> bool:
    return oracle_missing() is None


# Live oracle tests run against the current pi, 1.6.0, unless PI_ORACLE_PI
# says otherwise; set here so every test that starts the oracle inherits it.
os.environ.setdefault("PI_ORACLE_PI", "1.6.0")
ORACLE_PI = os.environ["PI_ORACLE_PI"]


def run_oracle(*args: str, pi: str | None = None) -> str:
    """Run pi-oracle (pi ``pi``, default :data:`ORACLE_PI`) and return its
    stdout (retries an empty answer)."""
    env = {**os.environ, "PI_ORACLE_PI": pi or ORACLE_PI}
    for _ in range(3):
        out = subprocess.run([str(ORACLE), *args], check=True, capture_output=True, text=True, timeout=300, env=env).stdout
        if out.strip():
            return out
    raise RuntimeError(f"pi-oracle {' '.join(args)} printed nothing")


@pytest.fixture
def oracle():
    """The oracle runner; skips the test when node or the oracle is absent."""
    reason = oracle_missing()
    if reason is not None:
        pytest.skip(reason)
    return run_oracle


@pytest.fixture
def fixture_copy(tmp_path):
    """Copy one of pi's fixture sessions into tmp_path and return the copy."""

    def copy(name: str) -> Path:
        src = FIXTURES / name
        reason = shared_missing(src)
        if reason is not None:
            pytest.skip(reason)
        dst = tmp_path / name
        dst.write_bytes(src.read_bytes())
        return dst

    return copy


def _cli_env(tmp_path: Path, env: dict | None) -> dict:
    """The environment of a ``cli``/``cli_process`` call: the test process's,
    ``PI_CODING_AGENT_DIR`` in tmp_path, ``COLUMNS=200``, no API keys, then
    the caller's ``env``."""
    full_env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "COLUMNS": "200"}
    full_env.pop("OPENAI_API_KEY", None)
    full_env.pop("ANTHROPIC_API_KEY", None)
    if env:
        full_env.update(env)
    return full_env


@pytest.fixture
def cli(tmp_path):
    """Run a ``pi-session`` command line inside the test process (its entry
    point ``pi_session.cli.main()``, see ``tests/cli_runner.py``); returns a
    ``subprocess.CompletedProcess`` (text stdout and stderr, returncode).

    ``run(*args, env=None, input=None, cwd=None)``: ``PI_CODING_AGENT_DIR``
    points into tmp_path unless ``env`` sets it. Use :func:`cli_process`
    where the process itself is what a test checks."""
    from cli_runner import run_in_process

    def run(*args: str, env: dict | None = None, input: str | None = None, cwd: str | None = None):
        return run_in_process(args, _cli_env(tmp_path, env), input=input, cwd=cwd)

    return run


@pytest.fixture
def cli_process(tmp_path):
    """Run the real ``pi-session`` console script as a new process (same
    arguments and answer as :func:`cli`): for tests of start-up, signals,
    pipes, terminals, file descriptors, concurrency or the environment a
    process inherits."""
    from cli_runner import EXE

    def run(*args: str, env: dict | None = None, input: str | None = None, cwd: str | None = None):
        return subprocess.run(
            [str(EXE), *args], capture_output=True, text=True, env=_cli_env(tmp_path, env), input=input, cwd=cwd, timeout=600
        )

    return run


# --- PostgreSQL (the store suite's "postgres" backend) -------------------
# A real server: PI_SESSION_TEST_POSTGRES (exported by .ci/run), else a private
# cluster started by scripts/pg-test-cluster for this pytest run, else skip
# (fail instead when PI_SESSION_REQUIRE_POSTGRES=1). See tests/postgres_cluster.py.


@pytest.fixture(scope="session")
def postgres_server():
    """The test PostgreSQL server (a ``postgres_cluster.Server``; ``.url``)."""
    import postgres_cluster

    try:
        server = postgres_cluster.start()
    except postgres_cluster.Unavailable as exc:
        if postgres_cluster.required():
            pytest.fail(f"PostgreSQL required ({postgres_cluster.ENV_REQUIRE}=1) but unavailable: {exc}")
        pytest.skip(str(exc))
    except RuntimeError as exc:  # given or installed, but not working: no traceback (it would show the URL)
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh empty database on the test server, as a ``postgresql://`` URL;
    dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture(params=["file", "sqlite", "postgres"])
def store_url(request, tmp_path):
    """A fresh empty session store's URL, per backend: a directory (files),
    ``sqlite:///…``, and a fresh PostgreSQL database (``postgres_url``)."""
    if request.param == "file":
        return str(tmp_path / "sessions")
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/sessions.db"
    return request.getfixturevalue("postgres_url")
