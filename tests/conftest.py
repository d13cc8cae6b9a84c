"""Fixtures shared by the whole suite, the CI rule that a skipped test is a failure, and the
``e2e`` marker: a test that starts a process (a Redis, a server, a client in a pseudo-terminal,
a browser) is marked, so ``bash scripts/test --fast`` runs every other test in under a minute."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.postgres_server import PostgresServer
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.schedule import long_first

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CHEAP_PASSWORDS = {
    "ARENA_PASSWORD_TIME_COST": "1",
    "ARENA_PASSWORD_MEMORY_KIB": "8192",
    "ARENA_PASSWORD_PARALLELISM": "1",
}


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment, which every
    child inherits: a client spawned in a 40x12 pseudo-terminal would then lay itself out for
    80x24 (``shutil.get_terminal_size`` reads them first). Children measure their terminal."""
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    # Every server a test starts hashes passwords at Argon2id's cheapest cost, as the
    # in-process account tests do: a hash at the product's default (64 MiB, three passes) is a
    # third of a second of CPU, and the suite registers and logs in hundreds of accounts.
    for name, value in CHEAP_PASSWORDS.items():
        os.environ.setdefault(name, value)


E2E_FIXTURES = frozenset(
    {
        "redis_server",
        "fresh_redis",
        "redis_cluster",
        "redis_cluster_replicas",
        "postgres_server",
        "browser",
        "arena",
    }
)
"""Fixtures that start a process: a test using one is end to end."""

E2E_BACKENDS = frozenset({"redis", "cluster", "postgres"})
"""The backends of the contract suites (``backend``, ``archive``) that are a real server."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        uses = set(getattr(item, "fixturenames", ()))
        backends = {params.get("backend"), params.get("archive")}
        if uses & E2E_FIXTURES or backends & E2E_BACKENDS:
            item.add_marker(pytest.mark.e2e)
    # Under pytest-xdist the long tests go first, spread over the workers (tests/support/schedule).
    items[:] = long_first(
        items,
        int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")),
        is_long=lambda item: item.get_closest_marker("long") is not None,
        unit_of=lambda item: item.nodeid.split("::")[0],
    )


@pytest.fixture(autouse=True)
def _a_test_that_starts_a_process_is_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unmarked test that starts a process fails, naming the marker: the fast run then
    stays fast and never needs a server, and nothing is left out of it by mistake."""
    if request.node.get_closest_marker("e2e") is not None:
        return

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{request.node.nodeid} starts a process: mark it end to end "
            "(pytestmark = pytest.mark.e2e, or use a fixture of tests/conftest.py's E2E_FIXTURES)"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(pexpect.spawn, "__init__", refuse)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In CI a skipped (or xfailed) test fails: every collected test must really pass."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {report.longrepr}"


@pytest.fixture(scope="session", autouse=True)
def data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """XDG_DATA_HOME in a temporary directory for the whole session: a server started without
    --data-dir or --store (scripts/serve, a test's own process) keeps its SQLite store there,
    never in the real ~/.local/share."""
    home = tmp_path_factory.mktemp("xdg-data")
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(home)
    yield home
    if before is None:
        del os.environ["XDG_DATA_HOME"]
    else:
        os.environ["XDG_DATA_HOME"] = before


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
