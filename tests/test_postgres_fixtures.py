"""The test PostgreSQL server's fixtures (conftest ``postgres_url``): a real
server, a fresh empty database per test, dropped afterwards."""

from __future__ import annotations

import psycopg
import pytest

import postgres_cluster

_seen: list[str] = []


@pytest.mark.parametrize("round", [1, 2])
def test_each_test_gets_a_fresh_empty_database(postgres_url: str, postgres_server, round: int) -> None:
    with psycopg.connect(postgres_url) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        assert name.startswith("pi_test_") and name not in _seen
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0] == 0
        conn.execute("CREATE TABLE t (x int)")
    for old in _seen:  # the previous test's database is gone
        with psycopg.connect(postgres_server.url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (old,)).fetchone()[0] == 0
    _seen.append(name)


def test_masked_hides_the_password_only() -> None:
    assert postgres_cluster.masked("postgresql://u:s3cret@h:5/db") == "postgresql://u:***@h:5/db"
    assert postgres_cluster.masked("postgresql://u@/db?host=/tmp/x") == "postgresql://u@/db?host=/tmp/x"
    assert postgres_cluster.with_database("postgresql://u@/postgres?host=/tmp/x", "d2") == "postgresql://u@/d2?host=/tmp/x"
