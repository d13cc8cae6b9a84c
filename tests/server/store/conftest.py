"""The backends every contract suite runs on: memory, SQLite in a temporary data directory, a
real Redis, and a real Redis Cluster (three primaries). ``store`` is the whole store;
``streams`` and ``indexes`` the same object seen as the one capability a suite checks (the
wake-ups suite needs appends too)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from server.store import (
    EventStore,
    EventStreams,
    Indexes,
    MemoryEventStore,
    RedisEventStore,
    SqliteEventStore,
    sqlite_sql,
)
from server.store.memory import _Stream
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer


class FakeClock:
    """Monotonic seconds that only move when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Backend:
    """What a test needs beside the store: a way to plant a raw entry, as corruption would."""

    def __init__(
        self,
        store: EventStore,
        raw: aioredis.Redis | RedisCluster | None,
        clock: FakeClock,
        twin: Callable[[], EventStore] | None = None,
    ) -> None:
        self.store = store
        self.raw = raw
        self.clock = clock
        self._twin = twin

    def twin(self) -> EventStore:
        """Another store object on the same data, as another server process would have; the
        memory store lives in one process, and one process owns a SQLite data directory, so
        their twin is the store itself."""
        return self._twin() if self._twin is not None else self.store

    async def plant(self, stream: str, payload: bytes) -> str:
        """Write ``payload`` as the stream's next entry, bypassing the codec; returns its id."""
        version = await self.store.last_version(stream) + 1
        if isinstance(self.store, MemoryEventStore):
            self.store._streams.setdefault(stream, _Stream()).entries.append(payload)
            return f"{version}-0"
        if isinstance(self.store, SqliteEventStore):
            now = self.clock()
            await self.store._thread.write(
                lambda db: sqlite_sql.append(db, stream, [payload], version - 1, now)
            )
            return f"{version}-0"
        assert isinstance(self.store, RedisEventStore)
        assert self.raw is not None
        entry = await self.raw.xadd(self.store.key(stream), {b"d": payload}, id=f"{version}-0")
        return entry.decode()


def unique_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}:"


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    clock = FakeClock()
    if request.param in ("memory", "sqlite"):
        store: EventStore = (
            MemoryEventStore(clock=clock)
            if request.param == "memory"
            else SqliteEventStore(tmp_path / "data", clock=clock)
        )
        yield Backend(store, None, clock)
        await store.aclose()
        return
    prefix = unique_prefix()
    if request.param == "cluster":
        cluster: LocalRedisCluster = request.getfixturevalue("redis_cluster")
        store = RedisEventStore(cluster.url, cluster=True, prefix=prefix)
        raw_cluster = RedisCluster.from_url(cluster.url, protocol=2)
        yield Backend(
            store,
            raw_cluster,
            clock,
            lambda: RedisEventStore(cluster.url, cluster=True, prefix=prefix),
        )
        await store.aclose()
        await raw_cluster.aclose()
        return
    redis_server: RedisServer = request.getfixturevalue("redis_server")
    store = RedisEventStore(redis_server.url, prefix=prefix)
    raw = aioredis.Redis.from_url(redis_server.url, protocol=2)
    yield Backend(store, raw, clock, lambda: RedisEventStore(redis_server.url, prefix=prefix))
    await store.aclose()
    await raw.aclose()


@pytest.fixture
def store(backend: Backend) -> EventStore:
    return backend.store


@pytest.fixture
def streams(backend: Backend) -> EventStreams:
    return backend.store


@pytest.fixture
def indexes(backend: Backend) -> Indexes:
    return backend.store
