"""Fixtures shared by the whole suite, and the CI rule that a skipped test is a failure."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres_server import PostgresServer
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In CI a skipped (or xfailed) test fails: every collected test must really pass."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {report.longrepr}"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One private redis-server for the session, on a free port, with its append-only file on."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fresh_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of a test's own, for tests that stop, kill or restart it."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    """One private Redis Cluster (three primaries, no replicas) for the session."""
    cluster = LocalRedisCluster(tmp_path_factory.mktemp("cluster"))
    cluster.start()
    yield cluster
    cluster.kill()


@pytest.fixture
def redis_cluster_replicas(tmp_path: Path) -> Iterator[LocalRedisCluster]:
    """A Redis Cluster of a test's own with one replica per primary, for failover tests."""
    cluster = LocalRedisCluster(tmp_path / "cluster", replicas=1)
    cluster.start()
    yield cluster
    cluster.kill()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One private PostgreSQL for the session, on a free port; each test makes its own
    database (``create_database``)."""
    server = PostgresServer(tmp_path_factory.mktemp("postgres"))
    server.start()
    yield server
    server.stop()
