"""Fixtures of the in-process server tests: a memory store, every store backend in turn, a
clock moved by hand, and an archive (SQLite) in the test's directory."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.archive import SqliteArchive
from server.runtime.clock import FakeClock
from server.store import EventStore, MemoryEventStore, RedisEventStore, SqliteEventStore
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer


@pytest.fixture
async def store() -> AsyncIterator[MemoryEventStore]:
    s = MemoryEventStore()
    yield s
    await s.aclose()


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    """Each store backend in turn, Redis's under a prefix of the test's own (the store's own
    contract suite, tests/server/store, has a ``backend`` of its own with raw access)."""
    store: EventStore
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    if request.param == "memory":
        store = MemoryEventStore()
    elif request.param == "sqlite":
        store = SqliteEventStore(tmp_path / "data")
    elif request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        store = RedisEventStore(server.url, prefix=prefix)
    else:
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
    yield store
    await store.aclose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[SqliteArchive]:
    made = SqliteArchive(tmp_path / "archive.sqlite3")
    yield made
    await made.aclose()
