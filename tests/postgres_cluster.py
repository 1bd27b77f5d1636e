"""A real PostgreSQL server for the tests (used by conftest's ``postgres_server``
and ``postgres_url`` fixtures, and by ``bench/stores.py``).

Where the server comes from, in order:

1. ``PI_SESSION_TEST_POSTGRES``: a ``postgresql://`` URL of a running server
   whose user may create databases (``.ci/run`` starts one with
   ``scripts/pg-test-cluster`` and exports it);
2. otherwise a private cluster started here with ``scripts/pg-test-cluster``
   (when PostgreSQL's server binaries are installed) and stopped at exit;
3. otherwise none: tests skip, unless ``PI_SESSION_REQUIRE_POSTGRES=1``
   (set by ``.ci/run``), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "pg-test-cluster"
ENV_URL = "PI_SESSION_TEST_POSTGRES"
ENV_REQUIRE = "PI_SESSION_REQUIRE_POSTGRES"


class Unavailable(Exception):
    """No PostgreSQL server can be had here (the message says why)."""


def required() -> bool:
    """True when a missing server must fail the tests instead of skipping them."""
    return os.environ.get(ENV_REQUIRE, "") not in ("", "0")


def with_database(url: str, dbname: str) -> str:
    """``url`` (a ``postgresql://`` URL) with its database replaced by ``dbname``."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"{ENV_URL} must be a postgresql:// URL")
    return urlunsplit(parts._replace(path="/" + dbname))


def masked(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass
class Server:
    """A reachable server: ``url`` connects as a user allowed to CREATE DATABASE;
    ``cluster_dir`` is set when we started it ourselves (then :meth:`stop` stops it)."""

    url: str
    cluster_dir: str | None = None
    databases: list[str] = field(default_factory=list)

    def create_database(self) -> str:
        """Create a new empty database with a unique name; return its URL."""
        import psycopg
        from psycopg import sql

        name = f"pi_test_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.databases.append(name)
        return with_database(self.url, name)

    def drop_database(self, db_url: str) -> None:
        """Drop the database of ``db_url`` (closing any connection still open to it)."""
        import psycopg
        from psycopg import sql

        name = urlsplit(db_url).path.lstrip("/")
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if name in self.databases:
            self.databases.remove(name)

    def stop(self) -> None:
        """Stop the cluster if we started it (a no-op for a server given by URL)."""
        if self.cluster_dir is not None:
            subprocess.run([str(SCRIPT), "stop", self.cluster_dir], check=True, timeout=120)
            self.cluster_dir = None


def _check_connects(url: str) -> None:
    try:
        import psycopg
    except ImportError as exc:
        raise Unavailable("psycopg is not installed (pip install -e '.[test]')") from exc
    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        raise RuntimeError(f"cannot connect to {masked(url)}: {exc}") from None


def start() -> Server:
    """Find or start a server (see the module docstring).

    Raises :class:`Unavailable` when PostgreSQL is neither given nor installed;
    ``RuntimeError`` when it is but does not work (a real failure)."""
    url = os.environ.get(ENV_URL, "")
    if url:
        _check_connects(url)
        return Server(url)
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise Unavailable("psycopg is not installed (pip install -e '.[test]')") from exc
    proc = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, timeout=300)
    if proc.returncode == 3:
        raise Unavailable(
            f"no PostgreSQL: {ENV_URL} is unset and initdb/pg_ctl are not installed "
            "(apt-get install postgresql, or export a postgresql:// URL)"
        )
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/pg-test-cluster start failed: {proc.stderr.strip()}")
    url = proc.stdout.strip().splitlines()[-1]
    server = Server(url, cluster_dir=urlsplit(url).query.split("host=", 1)[1].split("&", 1)[0])
    try:
        _check_connects(url)
    except BaseException:
        server.stop()
        raise
    return server
